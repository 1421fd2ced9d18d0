"""The runner-up chunk's answer: when the best sentence of another chunk scores almost as well as
the best sentence of all, the scores cannot say which chunk answers, so both are quoted."""
from __future__ import annotations

from ...tuning import Tuning
from ..passages import ABOUT_THE_PAGE, EXAMPLE, POINTER, Candidate


def runner_up(pool: list[Candidate], picked: list[Candidate], candidates: list[Candidate],
              asked: set[str], tuning: Tuning) -> Candidate | None:
    """The best sentence of the pool (best first) from a chunk none of the picked sentences
    comes from, when it scores runner_up_share of the best; None otherwise. It answers what the
    chunks shown already speak of: one that brings a word of the question (`asked`) none of them
    holds would let that word seem answered ("can I bring my dog?" answered by a case study, its
    "dog" brought by a glossary's "eat your own dog food"), so it stays out."""
    best = pool[0] if pool else None
    if best is None or best.score <= 0:
        return None
    shown = {c.rank for c in picked}
    other = next((c for c in pool if c.rank not in shown and not _answers_nothing(c)), None)
    if other is not None and other.typed < best.typed:  # the kind of answer asked for decides
        return None
    if other is None or other.score < tuning.runner_up_share * best.score:
        return None
    held = set().union(*(c.terms | c.heading for c in candidates if c.rank in shown))
    return other if not ((other.terms | other.heading) & asked) - held else None


def _answers_nothing(candidate: Candidate) -> bool:
    """An example illustrates, a pointer sends elsewhere, a page describes itself: none answers."""
    return bool(EXAMPLE.match(candidate.text) or POINTER.match(candidate.text) or ABOUT_THE_PAGE.match(candidate.text))
