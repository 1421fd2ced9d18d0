"""A second reading of a short follow-up pointing back, chosen by the evidence.

"it" in "is it open on weekends?" may stand for the subject of the last question ("How can I
report harassment anonymously?") or for a thing only the last answer named ("Use the ethics
line, run by an independent provider"). The thread resolution reads the last question. When the
evidence for that reading is too weak to answer from, the turn is searched with the last
answer's rarest words instead of the first reading's rewrite; the bot answers from that reading
when its evidence answers, and otherwise declines as the first reading did. The evidence
chooses one reading; nothing is averaged.

Why only then: searched with the answer's words on every such turn, the dev halves of the thread
sets gained (corpus-threads MRR .807 -> .825) but a test half lost .15 where "it" was the last
question's subject; and neither the flow's confidence signals (top relevance, similarity,
coverage, answered or not) nor a logistic choice over them told the two readings apart on a
held-out corpus. Evidence too weak to answer from is the one sign a reading gives of being the
wrong one."""
from __future__ import annotations

from langgraph.runtime import Runtime

from ..deps import Deps
from ..state import State
from ...answer.kinds import holds_answer, wanted_answer
from ...language.question import Question


def has_other_reading(state: State) -> bool:
    """The turn has a reading not yet tried (set by prepare_query, spent by `reread`)."""
    return state.get("other_reading") is not None


# What the first reading's decline is made of: restored when the other reading cannot answer either.
_FIRST = ("question", "retrieval_query", "query_rewrites", "retrieval_config", "retrieval_attempts",
          "retrieved_chunks", "ranked_chunks", "related_chunks", "context", "context_quality",
          "knowledge_gap", "contradictions", "draft_answer", "citations", "grounding_status")


def reread(state: State, runtime: Runtime[Deps]) -> dict:
    """Search the other reading as soon as the first one's evidence is weak, in place of the
    first reading's rewrite: the other reading runs as a question does (its own rewrite too), so
    a turn costs at most one search more than before. The first reading's outcome is kept aside
    (`keep_first_reading`)."""
    other: Question = state["other_reading"]
    return {"first_reading": {key: state.get(key) for key in _FIRST}, "other_reading": None,
            "question": other, "retrieval_query": other.text, "query_rewrites": [], "retrieved_chunks": [],
            "ranked_chunks": [], "related_chunks": [], "knowledge_gap": None, "retrieval_attempts": 0}


def gives_what_was_asked(state: State) -> bool:
    """After the other reading, a reply counts only if a sentence of it gives the kind of value
    the asker's own words ask for (an amount for "what's the most I can put in it each year?",
    someone for "who…?"; a yes/no question asks for none). The answer's borrowed words make
    evidence look stronger than it is: on the 18F thread set's dev half, "what's the most I can
    put in it each year?" (no document gives an FSA limit) was answered with the enrolment
    deadline the last answer had named. The first reading is judged as before."""
    if not state.get("first_reading"):
        return True
    wanted = wanted_answer(state.get("normalized_query") or "")
    sentences = (state.get("draft_answer") or {}).get("sentences") or []
    return not wanted or any(holds_answer(sentence.get("text", ""), wanted) for sentence in sentences)


def keep_first_reading(state: State, runtime: Runtime[Deps]) -> dict:
    """Neither reading's evidence answers: the turn is declined as its first reading was (its
    ranking, its gap, its closest section). The other reading counts only when it answers."""
    first = state.get("first_reading")
    return {**first, "first_reading": None} if first else {}
