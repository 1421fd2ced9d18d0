"""The optional reranker (CITEBOT_RERANKER): the ranked chunks ordered again by a cross-encoder
or the chat model, or left as they are when there is none or it fails."""
from __future__ import annotations

import logging

from langgraph.runtime import Runtime

from ...answer.rerank import RerankUnavailable
from ..deps import Deps
from ..state import State

log = logging.getLogger(__name__)


def rerank_candidates(state: State, runtime: Runtime[Deps]) -> dict:
    """Without a reranker nothing changes. A reranker that cannot order this question's chunks
    leaves the ranking as it was, and the run says so (`reranker_unavailable`, a note); a later
    pass of the same question (after a rewrite) does not try it again: one wait per question."""
    reranker, ranked = runtime.context.reranker, state["ranked_chunks"]
    if reranker is None or len(ranked) < 2 or state.get("reranker_unavailable"):
        return {}
    try:
        reordered = reranker.rerank(state["retrieval_query"], ranked, runtime.context.tuning)
    except RerankUnavailable as error:
        log.warning("reranker unavailable, keeping the ranking: %s", error)
        return {"reranker_unavailable": str(error)}
    return {"ranked_chunks": reordered, "reranker_unavailable": ""}
