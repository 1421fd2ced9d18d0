"""Every weight and threshold that decides an answer, in one place, each with where it came
from: the question set that set it (a file in eval/) and the commit that did (`git show <sha>`).

One frozen `Tuning` travels with the graph's dependencies (`Deps.tuning`), so `citebot eval` can
try other values without editing code: `Engine(settings, tuning=Tuning(candidates=40))`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    # --- retrieval ---
    # Rows fetched for re-ranking: cheap, and the right chunk is often 10th–30th by fused rank.
    # corpus + handbook sets, 2873cba (BM25 as a third signal over 30 candidates).
    candidates: int = 30
    # Chunks the answer may draw on; more dilutes the extractive pick. corpus set, dedf69f.
    context_size: int = 5

    # --- judging the evidence ---
    # A chunk below the similarity threshold survives if it holds half the query. corpus set, dedf69f.
    min_coverage: float = 0.5
    # Term overlap (Jaccard) of two sentences that state the same rule: two sources disagree only
    # about sentences this alike, and an answer adds a second sentence only when it is less alike
    # than this. corpus set, dedf69f.
    same_topic: float = 0.4


DEFAULT = Tuning()
