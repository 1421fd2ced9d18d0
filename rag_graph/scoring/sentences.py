"""Which sentence of the context answers the question: the signals the offline answer writer
measures about each sentence of its pool (`answer.choice.measure`; the pool is the best
`semantic_pool` sentences by word score) as one row of numbers per sentence, the rows
`citebot tune` fits a sentence scorer on and measures it with against the writer's hand score.

The hand score (word score + semantic_weight x similarity + sentence_late_weight x late
interaction, tuning.py) is one of the features, so a fit starts from what the hand weights
know. No fit has beaten it held out (on the test halves by less than 0.02, and it loses on the
bundled corpus), so the writer orders its pool by the hand score."""
from __future__ import annotations

import math

import numpy as np

from .learned import Linear

# The order of the columns a scorer's coefficients are fitted on.
FEATURES = (
    "hand", "hand_gap", "lexical", "coverage", "own_coverage", "coverage_gap", "heading", "similarity",
    "similarity_gap", "late", "late_gap", "chunk_rank", "relevance_place", "standing", "first_in_chunk",
    "position", "log_chars", "typed", "titled", "list_item", "tabular", "code", "with_list", "lead_in",
    "pointer", "example", "leans_back", "pool_place",
)

_FLAGS = ("typed", "titled", "list_item", "tabular", "code", "with_list", "lead_in", "pointer", "example", "leans_back")


def rows(measured: list[dict]) -> list[list[float]]:
    """One feature row per sentence of a pool (in pool order), in the order of FEATURES; gaps
    are to the best of the pool (the scale of cosine and of word scores differs between corpora
    and questions, a lead over the other sentences less so)."""
    if not measured:
        return []
    best = {name: max(m[name] for m in measured) for name in ("hand", "coverage", "similarity", "late")}
    return [[
        m["hand"], m["hand"] - best["hand"], m["lexical"], m["coverage"], m["own_coverage"],
        m["coverage"] - best["coverage"], m["heading"], m["similarity"], m["similarity"] - best["similarity"],
        m["late"], m["late"] - best["late"], min(m["chunk_rank"], 5) / 5, min(m["relevance_place"], 5) / 5,
        m["standing"], float(m["position"] == 0), math.log1p(m["position"]) / 3, math.log1p(m["chars"]) / 6,
        *(float(bool(m[name])) for name in _FLAGS), place / len(measured),
    ] for place, m in enumerate(measured)]


def order(measured: list[dict], model: Linear | None) -> list[int]:
    """The pool's places, best first: by a scorer's score, or by the hand score without one
    (ties keep the pool's order, as the writer's sort does)."""
    keys = np.array([-m["hand"] for m in measured]) if model is None else -model.scores(rows(measured))
    return np.argsort(keys, kind="stable").tolist()
