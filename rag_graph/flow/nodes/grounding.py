"""Every answer sentence must cite selected chunks, and those chunks must support it and hold
what the question is about."""
from __future__ import annotations

import logging

import numpy as np
from langgraph.runtime import Runtime

from ..deps import Deps
from ...tuning import DEFAULT, Tuning
from ..output import cite
from ..state import State
from ...language.words import term_set
from ...scoring.missing import foreign_terms, uncovered_terms
from ...scoring.relevance import by_relevance
from ..gap import describe_gap

log = logging.getLogger(__name__)



def sentence_support(sentence: str, cited: list[dict], embedder, tuning: Tuning = DEFAULT) -> bool:
    """Most of its words are the source's (tuning.lexical_support), or it is a paraphrase: close
    in meaning (semantic_support) with enough of its words still the source's (paraphrase_floor)."""
    own = term_set(sentence)
    if not own:
        return False
    source = set().union(*(term_set(c["text"]) for c in cited))
    lexical = len(own & source) / len(own)
    if lexical >= tuning.lexical_support:
        return True
    if lexical < tuning.paraphrase_floor:
        return False
    sources = embedder.encode_passages([c["text"] for c in cited])  # vectors stored at index time
    return float(np.max(sources @ embedder.encode([sentence])[0])) >= tuning.semantic_support


def validate_grounding(state: State, runtime: Runtime[Deps]) -> dict:
    if state["errors"]:
        return {"grounding_status": "not_checked"}
    selected = {c["chunk_id"]: c for c in state["context"]}
    draft = state["draft_answer"]
    supported, fabricated = [], []
    for sentence in draft.get("sentences", []):
        ids = sentence.get("chunk_ids") or []
        unknown = [chunk_id for chunk_id in ids if chunk_id not in selected]
        if unknown:
            fabricated += unknown
            continue
        if ids and sentence_support(sentence["text"], [selected[i] for i in ids], runtime.context.embedder,
                                    runtime.context.tuning):
            supported.append(sentence)
    if fabricated:
        log.warning("draft cited chunks that were not selected: %s", fabricated)
    total = len(draft.get("sentences", []))
    cited = [selected[chunk_id] for chunk_id in dict.fromkeys(i for s in supported for i in s["chunk_ids"])]
    missing = unheld_subject(state, cited, runtime) if cited else []
    if missing:
        status = "unsupported"  # true sentences, but not about what was asked
    elif total and len(supported) == total and not fabricated:
        status = "grounded"
    elif supported:
        status = "partially_supported"
    else:
        status = "unsupported"
    citations = [cite(chunk, runtime.context.source_url) for chunk in cited]
    update = {"grounding_status": status, "citations": citations if status == "grounded" else []}
    if missing:
        update["knowledge_gap"] = describe_gap(state, missing, runtime.context.tuning)
    return update


def unheld_subject(state: State, cited: list[dict], runtime: Runtime[Deps]) -> list[str]:
    """The question's subject, when the evidence holds it only in chunks the answer does not
    cite: "can I bring my dog to the office?" found a case study about returning to the office
    and, among the top chunks, a glossary entry that says "eat your own dog food"; the answer
    quoted the case study. Words the top chunks lack were judged before the answer was drafted
    (`assess_context_quality`); only the ones the answer left behind are judged here, by the
    same test: a weighty word whose absence the cited evidence does not explain by a synonym."""
    vocabulary, tuning = runtime.context.retriever.vocabulary(), runtime.context.tuning
    question = state["normalized_query"]
    judged = by_relevance(state["ranked_chunks"])[: tuning.judged_chunks]
    left_behind = set(uncovered_terms(question, cited, vocabulary, tuning)) - set(uncovered_terms(question, judged, vocabulary, tuning))
    if not left_behind:
        return []
    searched = (state.get("query_rewrites") or [state["retrieval_query"]])[-1]
    return [word for word in foreign_terms(question, searched, cited, vocabulary, runtime.context.embedder, tuning)
            if word in left_behind]
