"""The three endings of the flow, and the one place `final_output` is shaped."""
from __future__ import annotations

import logging

from langgraph.runtime import Runtime

from ..deps import Deps
from ...language.message import normalize
from ...language.spelling import reading_note
from ...scoring import doubt
from ..gap import closest_chunk, describe_gap, describe_unconfirmed, writer_unconfirmed
from ..output import FAILURE_MESSAGES, GENERIC_FAILURE, cite, cited_ids, final_output
from ..state import State

log = logging.getLogger(__name__)
WRITER_NOTE = "the answer writer was unavailable, so this answer quotes the documents directly"
RERANKER_NOTE = "the reranker was unavailable, so the sources were read in their usual order"

def _conflict_note(state: State, cited: set[str]) -> str:
    for record in state.get("contradictions", []):
        if record["winner"]["chunk_id"] in cited:
            loser, winner = record["loser"], record["winner"]
            year = (loser.get("effective_date") or "")[:4]
            when = f" ({year})" if year and year not in loser["title"] else ""  # "Handbook 2023" has its year
            if loser.get("status") and loser["status"] != "current":
                kind = f"an {loser['status']}"
            elif (loser.get("effective_date") or "") < (winner.get("effective_date") or ""):
                kind = "an older"
            else:  # a newer source that lost on authority
                kind = "a less authoritative"
            return (f"{kind} source, “{loser['title']}”{when}, said {loser['value']}; "
                    f"“{winner['title']}” supersedes it.")
    return ""


def _reading(state: State) -> str:
    return reading_note(normalize(state.get("input") or ""), state.get("normalized_query", ""))


def finalize_answer(state: State, runtime: Runtime[Deps]) -> dict:
    citations = state["citations"]
    cited = set(cited_ids(citations))
    best = max((c for c in state["context"] if c["chunk_id"] in cited), key=lambda c: c.get("relevance", 0))
    tuning = runtime.context.tuning
    confidence = (tuning.confidence_similarity_weight * min(1.0, best.get("similarity", 0.0) / tuning.confidence_similarity_scale)
                  + tuning.confidence_coverage_weight * best.get("coverage", 0.0) + tuning.confidence_base
                  - (tuning.confidence_conflict_penalty if state.get("contradictions") else 0.0))
    # Notes are said apart from the answer (the chat adapters show them under it).
    writer = WRITER_NOTE if state.get("writer_unavailable") else ""
    reranker = RERANKER_NOTE if state.get("reranker_unavailable") else ""
    notes = [note for note in (_reading(state), _conflict_note(state, cited), writer, reranker) if note]
    output = final_output(state, "answered", state["draft_answer"]["answer"], citations,
                          max(0.0, min(confidence, tuning.confidence_cap)), trusted=runtime.context.link_hosts,
                          notes=notes)
    return _doubted(state, runtime, output) or {"confidence": output["confidence"], "final_output": output}


def _doubted(state: State, runtime: Runtime[Deps], output: dict) -> dict | None:
    """An answer the doubt model expects to be wrong is still given, marked `hedged`: the chat
    adapters say first that the bot is not sure. A decline cost right answers too often (held out
    per corpus the model flags a third of the wrong answers and one right answer in twenty); a
    hedge costs a right answer one line."""
    measured = doubt.measure(state, output, runtime.context.retriever.vocabulary(), runtime.context.embedder)
    if not doubt.shipped().doubts(measured):
        return None
    hedged = {**output, "hedged": True}
    return {"confidence": hedged["confidence"], "final_output": hedged}


def finalize_insufficient_context(state: State, runtime: Runtime[Deps]) -> dict:
    unconfirmed = writer_unconfirmed(state)  # the writer failed, not the documents: say so
    gap = (describe_unconfirmed(state, runtime.context.tuning) if unconfirmed
           else state.get("knowledge_gap") or describe_gap(state, [], runtime.context.tuning))
    reading = _reading(state)
    gap += f" ({reading}.)" if reading else ""
    lead = "I couldn't confirm an answer in the knowledge base." if unconfirmed else "I couldn't find this in the knowledge base."
    # The section the gap names comes with its link: the asker can read what came closest.
    closest = closest_chunk(state, runtime.context.tuning)
    output = final_output(state, "insufficient_context",
                          f"I don't know: {lead} {gap}", knowledge_gap=gap,
                          closest=cite(closest, runtime.context.source_url) if closest else None)
    return {"knowledge_gap": output["knowledge_gap"], "confidence": 0.0, "citations": [], "final_output": output}


def finalize_failure(state: State, runtime: Runtime[Deps]) -> dict:
    codes = [error.split(":")[0] for error in state.get("errors", [])]
    message = next((FAILURE_MESSAGES[code] for code in codes if code in FAILURE_MESSAGES), GENERIC_FAILURE)
    log.warning("question ended in failure: %s", codes)
    return {"citations": [], "confidence": 0.0, "final_output": final_output(state, "failed", message)}
