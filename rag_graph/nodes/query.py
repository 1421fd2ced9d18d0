"""Question handling: validate and normalise the input, resolve follow-ups, rewrite weak queries."""
from __future__ import annotations

import html
import re
import unicodedata

from langgraph.runtime import Runtime

from ..config import MAX_QUESTION_CHARS, RetrievalConfig
from ..context import Deps
from ..state import State
from ..text import STOPWORDS, words
from .finalize import final_output

_MENTION = re.compile(r"<[@!](?:[A-Z0-9]+|subteam\^[A-Z0-9]+|here|channel|everyone)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+(?:\|([^>]*))?>")
_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")
_EMOJI_CODE = re.compile(r":[a-z0-9_+\-']+:")
_FOLLOW_UP_OPENERS = ("and ", "what about", "how about", "what if", "same for", "also ", "or ",
                      "but ", "then ", "so ")
_REFERRING = frozenset("he she him her his hers they them their it its this that these those there "
                       "one ones same".split())
_QUESTION_WORDS = frozenset("who what when where why how which whose can could do does is are "
                            "was were will would should".split())


def normalize(raw: str) -> str:
    """Slack markup to plain text, control characters out, whitespace collapsed."""
    text = _MENTION.sub(" ", raw)
    text = _CHANNEL.sub(lambda m: f"#{m.group(1) or 'channel'}", text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = html.unescape(text)  # Slack escapes &, < and > in message text
    text = _EMOJI_CODE.sub(" ", text)
    text = text.replace("```", " ").replace("`", "")
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    return re.sub(r"\s+", " ", text).strip()


def problem_with(raw: str, normalized: str) -> str | None:
    """Why this input cannot be a question, in words for the asker; None when it can."""
    if len(raw) > MAX_QUESTION_CHARS:
        return (f"the message is {len(raw):,} characters long; please ask the question itself "
                f"in under {MAX_QUESTION_CHARS:,} characters")
    if not raw.strip():
        return "the message is empty; please type a question"
    if not any(unicodedata.category(ch)[0] in "LN" for ch in normalized):
        return "there is no question in the message, only a mention, emoji or punctuation"
    return None


def resolve_follow_up(question: str, history: list[dict]) -> str:
    """Offline follow-up resolution: an underspecified question ("what about contractors?",
    "when did she join?") borrows the subject terms of the previous turns, so retrieval sees
    the missing subject written out."""
    if not history:
        return question
    lowered = question.lower()
    own = [w for w in words(question) if w not in STOPWORDS and w not in _QUESTION_WORDS]
    referring = any(w in _REFERRING for w in words(question))
    if len(own) > 3 and not lowered.startswith(_FOLLOW_UP_OPENERS) and not referring:
        return question
    # "what about Team?" after a question on Enterprise swaps the entity: the new question's
    # own name replaces the old one instead of joining it.
    asked_before = " ".join(t["content"] for t in history if t["role"] == "user")
    swapped = set(_capitalised(asked_before)) if _capitalised(question) else set()
    carried: list[str] = []
    for turn in reversed(history):
        if turn["role"] == "user":
            carried += [w for w in words(turn["content"])
                        if w not in STOPWORDS and w not in _QUESTION_WORDS and w not in own and w not in swapped]
        elif referring and not carried:
            carried += _names(turn["content"])
        if len(carried) >= 3:
            break
    carried = list(dict.fromkeys(carried))
    return f"{question} ({' '.join(carried)})" if carried else question


_CARRIED = re.compile(r"\s\(([^()]*)\)$")


def split_follow_up(query: str) -> tuple[str, str]:
    """(the asker's own words, the subject carried over from earlier turns) of a resolved query."""
    match = _CARRIED.search(query)
    return (query[: match.start()], match.group(1)) if match else (query, "")


def _capitalised(text: str) -> list[str]:
    """Capitalised words that do not start a sentence ("Team" in "what about Team?"); acronyms
    such as SLA are vocabulary, not names."""
    return [w.lower() for w in re.findall(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z][\w-]*)", text.strip())
            if w.lower() not in STOPWORDS]


def _names(text: str) -> list[str]:
    """Runs of capitalised words ("Ines Castellano"): the people and things a pronoun in the
    next question most likely points at."""
    names = re.findall(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)", text)
    return [w.lower() for name in names for w in name.split() if w.lower() not in STOPWORDS]


def prepare_query(state: State, runtime: Runtime[Deps]) -> dict:
    raw = state.get("input") or ""
    config = {**RetrievalConfig().as_dict(), **(state.get("retrieval_config") or {})}
    history = [
        {"role": t.get("role"), "content": normalize(str(t.get("content") or ""))[:MAX_QUESTION_CHARS]}
        for t in (state.get("history") or [])
        if isinstance(t, dict) and t.get("role") in ("user", "assistant")
    ]
    update = {
        "normalized_query": "", "retrieval_query": "", "query_rewrites": [], "history": history,
        "documents": [], "chunks": [], "retrieval_strategy": state.get("retrieval_strategy") or "hybrid",
        "retrieval_config": config, "retrieval_attempts": 0, "retrieved_chunks": [],
        "ranked_chunks": [], "related_chunks": [], "context": [], "source_metadata": {},
        "contradictions": [], "knowledge_gap": None, "augmented_prompt": "", "draft_answer": {},
        "citations": [], "grounding_status": "not_checked", "confidence": 0.0, "errors": [],
    }
    normalized = normalize(raw)
    problem = problem_with(raw, normalized)
    if problem:
        update["errors"] = [f"invalid_input: {problem}"]
        update["final_output"] = final_output(
            {**state, **update}, "failed", f"I couldn't read a question there: {problem}.")
        return update
    update["normalized_query"] = normalized
    update["retrieval_query"] = resolve_follow_up(normalized, history)
    return update


def rewrite_query(state: State, runtime: Runtime[Deps]) -> dict:
    """Reformulate from the question and the near-miss evidence (never from model memory):
    keep the question's content words and add the section headings of the closest chunks that
    share a word with it, so the next pass searches the vocabulary the documents actually use."""
    query = state["retrieval_query"]
    own = [w for w in words(query) if w not in STOPWORDS and w not in _QUESTION_WORDS]
    own_set = set(own)
    additions: list[str] = []
    for chunk in state.get("retrieved_chunks", [])[:3]:
        heading = words(f"{chunk.get('title', '')} {chunk.get('section', '')}")
        if own_set & set(heading):
            additions += [w for w in heading if w not in STOPWORDS and w not in own_set]
    rewritten = " ".join(dict.fromkeys(own + additions)) or query
    config = dict(state["retrieval_config"])
    config["top_k"] = config["top_k"] * 2  # look wider on the second pass
    return {
        "retrieval_query": rewritten,
        "query_rewrites": [*state.get("query_rewrites", []), rewritten],
        "retrieval_config": config,
    }
