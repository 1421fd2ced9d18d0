"""Question handling: validate and normalise the input, resolve follow-ups, rewrite weak queries."""
from __future__ import annotations

import logging
import re
import unicodedata
from typing import Callable

from langgraph.runtime import Runtime

from ...config import MAX_QUESTION_CHARS, RetrievalConfig
from ..deps import Deps
from ...tuning import DEFAULT, Tuning
from ...retrieval.entities import Entity, Gazetteer
from ...language.markdown import own_heading
from ...language.message import normalize
from ...language.spelling import correct_spelling
from ..output import final_output
from ..reads import corpus_gazetteer, corpus_vocabulary
from ..state import State
from ...language.question import Question
from ...language.lexicon import QUESTION_WORDS
from ...language.words import STOPWORDS, stem, words
from ...language.amounts import values
from ...language.lexicon import REFERRING
from ...language.asks import ASKING_WORDS
from ...scoring import followup
from ...scoring.followup import FOLLOW_UP_OPENERS, PERSONAL

log = logging.getLogger(__name__)

Continues = Callable[[str, list[dict]], bool]


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


def resolve_follow_up(question: str, history: list[dict], gazetteer: Gazetteer | None = None,
                      section_of: Callable[[str], str] | None = None, tuning: Tuning = DEFAULT,
                      continues: Continues | None = None) -> Question:
    """Offline follow-up resolution: an underspecified question ("what is her salary?", "and the
    Standard tier?") carries the conversation's subject, an entity of the corpus's gazetteer
    that the thread is about, plus, when it asks nothing of its own, what the previous question
    asked. When no entity names the subject and the question points back ("how long does each
    one run?" after "how often does the whole company get together?"), the subject is the
    heading of the section the previous question finds (`section_of`: "Meet-ups"). The carried
    words are the Question's `carried`, so retrieval sees the subject written out. Whether the turn
    continues the thread at all is for `continues` to say (the learned reading of
    `thread_reader`); without it, the turn is taken to continue."""
    if not history or (continues is not None and not continues(question, history)):
        return Question(question)
    lowered = question.lower()
    own = followup.own_words(question)
    referring = any(w in REFERRING for w in words(question))
    opener = lowered.startswith(FOLLOW_UP_OPENERS)
    gazetteer = gazetteer or Gazetteer([])
    asked = gazetteer.mentions(question)
    named = {w for m in asked for w in m.entity.key}
    personal = bool(PERSONAL.search(question))
    previous = previous_question(history, gazetteer, section_of, tuning, continues)
    subject = thread_subject(history, previous.text, gazetteer, personal=personal)
    if subject is not None and any(m.entity.kind == subject.kind for m in asked):
        subject = None  # "what about Team?" after Enterprise: a new subject of the same kind replaces the old
    replaced = _replaced(own, previous.text) if opener else set()
    if subject is not None and replaced & set(subject.key):
        subject = None  # "and my vacation days?" after "sick days": not about sick leave any more
    carried = [w for w in (subject.key if subject else ()) if w not in own and w not in STOPWORDS]
    if subject is None and section_of is not None and referring and not asked and previous.text:
        carried += [w for w in dict.fromkeys(words(section_of(previous.text))) if w not in own and w not in STOPWORDS]
    # "it", "that" or "they" may be any noun of the last question ("live captions", not just the
    # "deaf colleague" the gazetteer knows); only "she" or "his" is surely the person named.
    if subject is None or opener or not set(own) - named or not personal:
        # "what about health insurance?" names a subject of its own: what the previous question
        # asked comes along, not the subject that question had carried (the 401k match).
        carried += _predicate(previous, gazetteer, exclude=set(own) | set(carried) | replaced,
                              with_carried=not (asked and not referring), most=tuning.max_carried)
    if _THAN_THAT.search(question):  # "and if I need more than that?": more than the amount last named
        carried = [*words(last_amount(history)), *carried]
    asked_for = ASKING_WORDS.search(previous.own) if carried and not ASKING_WORDS.search(question) else None
    if asked_for:  # what the previous question asked for comes too: "who" of "who do I cc…?"
        carried = [*asked_for.group(0).lower().split(), *carried]
    carried = list(dict.fromkeys(carried))
    return Question(question, " ".join(carried))


# A comparison with "that" ("more than that", "over that", "longer than that") measures against
# an amount the thread named, often only in the bot's answer ("For 80 hours or less you need…").
_THAN_THAT = re.compile(r"\b(?:more|less|fewer|longer|shorter|over|under|above|below|beyond|higher|lower|"
                        r"bigger|greater|earlier|later)\s+(?:than\s+)?(?:that|this|it)\b", re.I)


def last_amount(history: list[dict]) -> str:
    """The amount, percentage or duration named last in the thread ("80 hours"), "" if none."""
    for turn in reversed(history):
        found = list(values(turn["content"]).values())
        if found:
            return found[-1]
    return ""


def previous_question(history: list[dict], gazetteer: Gazetteer,
                      section_of: Callable[[str], str] | None = None, tuning: Tuning = DEFAULT,
                      continues: Continues | None = None) -> Question:
    """The asker's last question as it was searched: a follow-up with what it carried ("how is
    it paid?" with "wellness allowance"), so that a third question still knows the thread's subject."""
    for at in range(len(history) - 1, -1, -1):
        if history[at]["role"] == "user":
            # read in the light of the few turns before it, however long the thread
            return resolve_follow_up(history[at]["content"], history[max(0, at - tuning.resolved_turns):at], gazetteer,
                                     section_of, tuning, continues)
    return Question("")


def thread_subject(history: list[dict], previous: str, gazetteer: Gazetteer, personal: bool) -> Entity | None:
    """The entity the thread is about: for "she" or "his", the person last named (often in the
    answer); otherwise the longest entity of the asker's previous question (as searched, with
    what it carried) or, when that names none ("what turns depot data into dashboards?"), the
    longest entity of more than one word in the answer to it ("Skyline Analytics …"). An answer
    quotes the document that holds the subject; a single word of it is too often incidental
    ("supervisor", "GSA", "September")."""
    turns = list(reversed(history))
    if personal:
        people = [m.entity for t in turns for m in gazetteer.mentions(t["content"], where=lambda e: e.person)]
        names = [m.entity for t in turns
                 for m in gazetteer.mentions(t["content"], where=lambda e: e.kind == "name" and len(e.key) > 1)]
        return (people or names or [None])[0]
    mentions = gazetteer.mentions(previous)
    if not mentions:
        mentions = gazetteer.mentions(last_turn(history, "assistant"), where=lambda e: len(e.key) > 1)
    return max(mentions, key=lambda m: len(m.entity.key)).entity if mentions else None


def _replaced(own: list[str], previous: str) -> set[str]:
    """The words of the previous question that the follow-up's own phrase replaces: "and my
    vacation days?" after "do I lose my unused sick days?" ends in the same word ("days"), so
    its "vacation" takes the place of "sick", which is not carried over."""
    if len(own) < 2:
        return set()  # a bare "and days?" names nothing to replace with
    said, head = words(previous), stem(own[-1])
    return {before for before, word in zip(said, said[1:])
            if stem(word) == head and before not in own and before not in STOPWORDS}


def _predicate(previous: Question, gazetteer: Gazetteer, exclude: set[str], with_carried: bool, most: int) -> list[str]:
    """What the previous question asked, without the subject it asked it about; when it was a
    follow-up itself, what it carried comes too ("who needs to okay that?" after "can I swap it
    for a newer one? (pick own work laptop)" is about swapping a laptop)."""
    subject = {w for m in gazetteer.mentions(previous.text) for w in m.entity.key}
    out = []
    for part in (previous.own, previous.carried) if with_carried else (previous.own,):
        kept = [w for w in words(part) if w not in STOPWORDS and w not in QUESTION_WORDS
                and w not in exclude and w not in subject]
        out += kept[:most]
    return out


def last_turn(history: list[dict], role: str) -> str:
    """What the asker ("user") or the bot ("assistant") said last in the thread; "" if nothing."""
    return next((t["content"] for t in reversed(history) if t["role"] == role), "")


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
        "sub_questions": [], "parts": [],
    }
    normalized = normalize(raw)
    problem = problem_with(raw, normalized)
    if problem:
        update["errors"] = [f"invalid_input: {problem}"]
        update["final_output"] = final_output(
            {**state, **update}, "failed", f"I couldn't read a question there: {problem}.")
        return update
    normalized = correct_spelling(normalized, corpus_vocabulary(runtime))
    update["normalized_query"] = normalized
    mode, threshold = update["retrieval_strategy"], config["score_threshold"]
    gazetteer = corpus_gazetteer(runtime) if history else None
    question = resolve_follow_up(normalized, history, gazetteer,
                                 lambda previous: section_found(runtime, previous, mode, threshold),
                                 runtime.context.tuning, thread_reader(runtime, gazetteer, mode) if history else None)
    update["question"] = question  # read once: the asker's words apart from what the thread lent
    update["retrieval_query"] = question.text
    return update


def thread_reader(runtime: Runtime[Deps], gazetteer: Gazetteer | None, mode: str) -> Continues:
    """Whether a turn continues its thread, as the learned model (`scoring.followup`) reads it
    from the turn's words, its closeness to the last question and answer, and how well it is
    answered alone (one search for the best chunk)."""
    def search(question: str) -> list[dict]:
        try:
            return runtime.context.retriever.search(question, mode=mode, top_k=1)
        except Exception:  # no index yet: nothing is answered alone
            log.debug("no search for the turn asked alone", exc_info=True)
            return []

    try:
        vocabulary = runtime.context.retriever.vocabulary()
    except Exception:  # no index yet: no word is known to be rare
        vocabulary = ({}, 0)

    def continues(question: str, history: list[dict]) -> bool:
        if followup.points_back(question):  # the gate decides: the three searches would be thrown away
            return True
        measured = followup.measure(question, history, gazetteer, runtime.context.embedder, search, vocabulary)
        return followup.continues(followup.row(measured))

    return continues


def section_found(runtime: Runtime[Deps], question: str, mode: str, threshold: float) -> str:
    """The heading of the section a question finds first (the document's title when it has none):
    a thread's subject when no entity of the gazetteer names it. "" when the search fails or
    finds nothing close enough to be evidence: a question the bot could not answer ("How is
    severance pay calculated?" where no document covers severance) set no subject."""
    try:
        rows = runtime.context.retriever.search(question, mode=mode, top_k=1)
    except Exception:  # no index yet: the follow-up is resolved without it
        log.debug("no search for the previous question's section", exc_info=True)
        return ""
    if not rows or rows[0]["similarity"] < threshold:
        return ""
    return own_heading(rows[0].get("section") or "") or rows[0].get("title", "")


def rewrite_query(state: State, runtime: Runtime[Deps]) -> dict:
    """Reformulate from the question and the near-miss evidence (never from model memory):
    keep the question's content words and add the section headings of the closest chunks that
    share a word with it, so the next pass searches the vocabulary the documents actually use.
    The rewrite only searches (`query_rewrites`); `retrieval_query` stays the asker's question,
    which the evidence of both passes is judged against (see retrieve_candidates)."""
    query, tuning = state["retrieval_query"], runtime.context.tuning
    own = [w for w in words(query) if w not in STOPWORDS and w not in QUESTION_WORDS]
    own_set = set(own)
    additions: list[str] = []
    for chunk in state.get("retrieved_chunks", [])[: tuning.rewrite_from]:
        heading = words(f"{chunk.get('title', '')} {chunk.get('section', '')}")
        if own_set & set(heading):
            additions += [w for w in heading if w not in STOPWORDS and w not in own_set]
    rewritten = " ".join(dict.fromkeys(own + additions)) or query
    config = dict(state["retrieval_config"])
    config["top_k"] = config["top_k"] * tuning.rewrite_widening  # look wider on the second pass
    return {
        "query_rewrites": [*state.get("query_rewrites", []), rewritten],
        "retrieval_config": config,
    }
