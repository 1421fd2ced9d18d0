"""Late interaction: each query token meets its best match in a chunk, and a chunk's standing
in the ranking combines it with relevance."""
from __future__ import annotations

import numpy as np

from ..tuning import DEFAULT, Tuning

# Late interaction (ColBERT's MaxSim over the embedding model's own token vectors): each query
# token meets its best match in the chunk, word by word, where one pooled vector per text blurs
# them. How many chunks it re-ranks, and its weight, are tuning.late_candidates and late_weight.


def late_interaction(query: str, chunks: list[dict], embedder) -> list[float]:
    """For each chunk, the mean over the query's tokens of the best cosine to any of the
    chunk's tokens (stored at index time)."""
    asked = embedder.query_tokens(query)
    return [float(best_matches(asked, tokens).mean())
            for tokens in embedder.passage_tokens([c["text"] for c in chunks])]


def best_matches(asked: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """For each question token, its best cosine to one of the text's tokens (MaxSim)."""
    return (asked @ tokens.T).max(axis=1)


def rerank_late(query: str, ranked: list[dict], embedder, tuning: Tuning = DEFAULT) -> list[dict]:
    """The top candidates re-ordered by their `standing`, each with its `late` score."""
    head = ranked[:tuning.late_candidates]
    if len(head) < 2:
        return ranked
    scored = [{**c, "late": round(late, 4)} for c, late in zip(head, late_interaction(query, head, embedder))]
    return sorted(scored, key=lambda c: -standing(c, tuning)) + ranked[tuning.late_candidates:]


def standing(chunk: dict, tuning: Tuning = DEFAULT) -> float:
    """Where a chunk ranks: its relevance, with its late-interaction score once it has one,
    on relevance's scale."""
    relevance = float(chunk.get("relevance") or 0.0)
    if chunk.get("late") is None:
        return relevance
    return (relevance + tuning.late_weight * chunk["late"]) / (1 + tuning.late_weight)
