"""Reading the prepared index: metadata, candidate search, and related-context expansion."""
from __future__ import annotations

import logging

from langgraph.runtime import Runtime

from ..deps import Deps
from ..state import State
from ...scoring.relevance import relevance_scores
from ..reads import text_key, well_formed

log = logging.getLogger(__name__)


def prepare_corpus_index(state: State, runtime: Runtime[Deps]) -> dict:
    """Open the already built index (a question never triggers embedding of the corpus)."""
    try:
        metadata = runtime.context.retriever.metadata()
        if not isinstance(metadata, dict):
            raise TypeError(f"index metadata is a {type(metadata).__name__}, not a dict")
    except Exception as error:  # the index is missing or unreadable
        log.warning("index unavailable: %s", error)
        return {"errors": [*state.get("errors", []), "index_unavailable"]}
    if not metadata.get("chunks"):
        return {"index_metadata": metadata, "errors": [*state.get("errors", []), "index_empty"]}
    return {"index_metadata": metadata, "corpus_name": str(metadata.get("uri", ""))}


def retrieve_candidates(state: State, runtime: Runtime[Deps]) -> dict:
    """The first pass searches the question. A rewrite's pass searches the rewrite and adds what
    it finds to the first pass's candidates, each scored against the question: a rewrite is a
    bag of the documents' words, good at finding but a poor judge (measured: ranking the
    rewrite's results by the rewrite lowered MRR on all six eval halves)."""
    config = state["retrieval_config"]
    attempts = state.get("retrieval_attempts", 0) + 1
    rewrites = state.get("query_rewrites") or []
    query, mode = rewrites[-1] if rewrites else state["retrieval_query"], state["retrieval_strategy"]
    tuning = runtime.context.tuning
    wanted = max(tuning.candidates, config["top_k"] * tuning.candidates_per_top_k)
    try:
        rows = runtime.context.retriever.search(query, mode=mode, top_k=wanted)
        copies = _copies(rows)
        if copies:  # copies of one section (the ranking keeps one) took places: fetch as many more
            rows = runtime.context.retriever.search(query, mode=mode, top_k=wanted + copies)
    except Exception:
        log.exception("retriever failed for attempt %d", attempts)
        return {"retrieval_attempts": attempts, "errors": [*state.get("errors", []), "retrieval_failed"]}
    if not isinstance(rows, list):
        log.warning("retriever returned a %s instead of a list of rows", type(rows).__name__)
        return {"retrieval_attempts": attempts, "errors": [*state.get("errors", []), "retrieval_failed"]}
    good = [row for row in rows if well_formed(row)]
    if len(good) < len(rows):
        log.warning("dropped %d malformed retriever rows", len(rows) - len(good))
    if rewrites:  # a model fault here is an evidence-check fault (EmbeddingError), not a search fault
        good = _with_earlier(state, good, runtime.context.embedder)
    return {"retrieval_attempts": attempts, "retrieved_chunks": good}


def _copies(rows) -> int:
    """How many rows repeat the text of a row before them (npm's docs repeat a config option's
    section on every command page that takes it: of 30 candidates, as few as 11 were distinct)."""
    if not isinstance(rows, list):
        return 0
    texts = [text_key(row) for row in rows if isinstance(row, dict) and isinstance(row.get("body"), str)]
    return len(texts) - len(set(texts))


def _with_earlier(state: State, rows: list, embedder) -> list[dict]:
    """The earlier pass's candidates, then the rewrite's new ones with their similarity to the
    question (the chunk vectors were stored at index time: a lookup, not a model call). After a
    draft its evidence did not support, the chunks it cited are not offered again: the same
    evidence would make the same draft."""
    failed = set()
    if state.get("grounding_status") in ("unsupported", "partially_supported"):
        failed = {i for s in (state.get("draft_answer") or {}).get("sentences", []) for i in s.get("chunk_ids") or []}
    earlier = [row for row in state.get("retrieved_chunks") or [] if row["chunk_id"] not in failed]
    seen = {row["chunk_id"] for row in earlier} | failed
    new = [row for row in rows if row["chunk_id"] not in seen]
    if new:
        question = embedder.encode_query(state["retrieval_query"])
        for row, vector in zip(new, embedder.encode_passages([row["text"] for row in new])):
            row["similarity"] = round(float(vector @ question), 4)
    return earlier + new


def expand_related_context(state: State, runtime: Runtime[Deps]) -> dict:
    """Evidence spread over several chunks: pull the rest of their sections and the documents
    they link to, keeping only what speaks to the question."""
    ranked, tuning = state["ranked_chunks"], runtime.context.tuning
    try:
        related = runtime.context.retriever.related(ranked[: tuning.related_from])
    except Exception:
        log.exception("related-context lookup failed; answering from the ranked chunks")
        related = []
    vocabulary = runtime.context.retriever.vocabulary()
    scored = relevance_scores(state["retrieval_query"], related, vocabulary, tuning)
    useful = [chunk for chunk in scored if chunk["coverage"] >= tuning.related_coverage and chunk.get("status") == "current"]
    return {"related_chunks": useful}
