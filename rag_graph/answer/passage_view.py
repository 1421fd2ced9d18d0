"""The passage view: when the writer's best sentence does not win clearly, the answer shows the
passage around it (the sentences before and after it in its chunk, up to `passage_chars`)
instead of staking everything on one sentence. A close runner-up means the scores cannot tell
which sentence answers; the answering one is most often next to the best (of the answers the
best sentence missed, about a third hold their keyword within two sentences of it)."""
from __future__ import annotations

from ..tuning import Tuning
from .passages import EXAMPLE, Candidate, candidate_at


def unclear(pool: list[Candidate], tuning: Tuning) -> bool:
    """The runner-up (a sentence other than the best's) scores within passage_margin of the best."""
    if tuning.passage_chars <= 0 or len(pool) < 2:
        return False
    best = pool[0]
    rival = next((c for c in pool[1:] if not c.overlaps(best)), None)
    return rival is not None and best.score > 0 and rival.score >= tuning.passage_margin * best.score


def around(best: Candidate, candidates: list[Candidate], picked: list[Candidate], tuning: Tuning) -> list[Candidate]:
    """The sentences of the best one's chunk next to it, after and before in turn (what follows
    first: it finishes the thought), while the passage stays within passage_chars. Sentences
    already picked count toward the length and are not repeated; an example is passed over."""
    shown = [c for c in picked if c.rank == best.rank]
    length = sum(len(c.text) for c in shown)
    first, last = min(c.position for c in shown), max(c.last for c in shown)
    added = []
    for _ in range(2 * tuning.max_sentences):
        grown = False
        for position in (last + 1, first - 1):
            near = candidate_at(candidates, best.rank, position)
            if (near is None or EXAMPLE.match(near.text) or any(c.overlaps(near) for c in picked + added)
                    or length + len(near.text) > tuning.passage_chars):
                continue
            added.append(near)
            length += len(near.text)
            first, last, grown = min(first, near.position), max(last, near.last), True
        if not grown:
            break
    return added
