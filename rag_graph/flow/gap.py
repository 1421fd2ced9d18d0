"""What a decline says: the missing words that name a subject, or the closest document that
does not answer. Shared by the nodes that judge the evidence and the ending that declines."""
from __future__ import annotations

import re

from ..language.lexicon import VAGUE
from ..language.question import holds_role, role_asked
from ..language.subject import kind_named, names_a_subject
from ..scoring.relevance import by_relevance
from ..tuning import DEFAULT, Tuning
from .reads import is_outdated
from .state import State


def as_written(term: str, question: str) -> str:
    found = re.search(rf"\b{re.escape(term)}\b", question, re.I)
    return found[0] if found else term


def near_chunks(state: State, tuning: Tuning = DEFAULT) -> list[dict]:
    """The chunks close to the question, most relevant first (the order the evidence is judged
    in), then the search's own order, which puts keyword hits first."""
    candidates = [*by_relevance(state.get("ranked_chunks", [])), *state.get("retrieved_chunks", [])]
    return [c for c in candidates if c.get("similarity", 0) >= tuning.near]


def closest_chunk(state: State, tuning: Tuning = DEFAULT) -> dict | None:
    """The current chunk a decline names as the place closest to the question."""
    return next((c for c in near_chunks(state, tuning) if not is_outdated(c)), None)


def _place(chunk: dict | None) -> str:
    """"Employee Handbook 2025 › Remote Work": the document and its section."""
    if not chunk:
        return ""
    topic = chunk.get("section") or chunk["title"]
    return chunk["title"] + (f" › {topic}" if topic != chunk["title"] else "")


def writer_unconfirmed(state: State) -> bool:
    """The decline comes from the check of a chat model's draft, not from the documents: the
    last draft was written and none of it was confirmed (a draft of true sentences about
    something else names what is missing instead, as `knowledge_gap`)."""
    return bool((state.get("draft_answer") or {}).get("written")) and not state.get("knowledge_gap") \
        and state.get("grounding_status") in ("unsupported", "partially_supported")


def describe_unconfirmed(state: State, tuning: Tuning = DEFAULT) -> str:
    """What a decline says when the writer failed, not the documents: the closest document may
    well answer, so it is named as the place to read, not as one that "does not answer"."""
    nearest = closest_chunk(state, tuning)
    where = f" by the closest document ({_place(nearest)})" if nearest else " by the documents"
    return f"The answer the writer drafted was not confirmed{where}, so it is not shown."


def describe_gap(state: State, missing: list[str], tuning: Tuning = DEFAULT) -> str:
    """What was missing, in a sentence a person understands: the missing words that name a
    subject, or else the closest document that does not answer."""
    question = state.get("normalized_query", "")
    missing = [kind_named(word, question) or word for word in missing
               if names_a_subject(word, question) and word not in VAGUE]
    # "upcoming election" already says "election"; each is named as the asker wrote it ("HSA").
    missing = [as_written(term, question) for term in dict.fromkeys(missing)
               if not any(term != other and term in other.split() for other in missing)]
    near = near_chunks(state, tuning)
    nearest = closest_chunk(state, tuning)
    topic = (nearest.get("section") or nearest["title"]) if nearest else ""
    place = _place(nearest)
    if "›" not in topic and len(topic.split()) <= 2:
        topic = place  # "OK" or "Access" alone says nothing of where
    if missing:
        subject = ", ".join(f"“{term}”" for term in missing)
        where = f" in connection with {topic}" if topic else ""
        # A heading may be a question of its own ("Do all employees have access to Slack?")
        return f"Nothing in the knowledge base covers {subject}{where}" + ("" if where.endswith(("?", "!", ".")) else ".")
    if near and not nearest:
        return f"Only an outdated document ({near[0]['title']}) mentions this; no current document covers it."
    role = role_asked(question)
    if nearest and role and holds_role(nearest["text"], role):
        return f"The closest document ({place}) mentions the {role} but does not say who that is."
    if nearest:
        return f"The closest document ({place}) does not answer this question."
    return "Nothing in the knowledge base is about this question."
