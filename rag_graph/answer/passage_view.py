"""The passage view: the best sentence is shown with the sentences around it in its chunk when
they bring the answer closer in meaning to the question. The sentence that holds the answer is
often next to the best one and shares no word of the question ("Navigate to the Employment Data
2 tab" after "…in HR Links"), so the word score cannot see it; the embedding of the passage can.
A neighbour that is about something else (a table's other row, a list's other item, the
section's next topic) moves the passage away from the question and stays out."""
from __future__ import annotations

from typing import Callable

from ..tuning import Tuning
from .passages import EXAMPLE, Candidate, candidate_at

Closeness = Callable[[list[str]], list[float]]  # each text's closeness in meaning to the question


def unclear(pool: list[Candidate], tuning: Tuning) -> bool:
    """The runner-up (a sentence other than the best's) scores within passage_margin of the best."""
    if tuning.passage_chars <= 0 or len(pool) < 2:
        return False
    best = pool[0]
    rival = next((c for c in pool[1:] if not c.overlaps(best)), None)
    return rival is not None and best.score > 0 and rival.score >= tuning.passage_margin * best.score


def around(best: Candidate, candidates: list[Candidate], picked: list[Candidate], tuning: Tuning,
           closeness: Closeness | None) -> list[Candidate]:
    """The sentences of the best one's chunk next to it, the one after and the one before in
    turn, each kept when the passage with it is closer to the question (by passage_closer) than the
    passage without it, while the passage stays within passage_chars (what follows first: it finishes the
    thought). Sentences already picked count toward the length and are not repeated; an example is
    passed over. One call of the model per step measures the passage and both ways it may grow.
    Without an embedding model nothing is added: no measure, no passage."""
    if closeness is None:
        return []
    shown = [c for c in picked if c.rank == best.rank]
    length = sum(len(c.text) for c in shown)
    added: list[Candidate] = []
    for _ in range(tuning.max_sentences):
        passage = shown + added
        nears = []
        for position in (max(c.last for c in passage) + 1, min(c.position for c in passage) - 1):
            near = candidate_at(candidates, best.rank, position)
            if (near is not None and not EXAMPLE.match(near.text) and not any(c.overlaps(near) for c in picked + added)
                    and length + sum(len(n.text) for n in nears) + len(near.text) <= tuning.passage_chars):
                nears.append(near)
        if not nears:
            break
        now, *grown = closeness([_passage(passage), *(_passage([*passage, near]) for near in nears)])
        joining = [near for near, then in zip(nears, grown) if then >= now + tuning.passage_closer]
        if not joining:
            break
        added.extend(joining)
        length += sum(len(near.text) for near in joining)
    return added


def _passage(sentences: list[Candidate]) -> str:
    return " ".join(c.text for c in sorted(sentences, key=lambda c: c.position))
