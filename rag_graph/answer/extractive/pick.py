"""Which sentences answer: the best one, and those that belong with it (the next sentence that
finishes its thought, the steps before a numbered step, a runner-up as good as the best, a
sentence that answers another side of the question, the rule the best one elaborates)."""
from __future__ import annotations

from itertools import takewhile

from ...language.markdown import LIST_ITEM, is_code
from ...language.words import weighted_coverage
from ...tuning import Tuning
from ..passages import (
    EXAMPLE,
    LEANS_BACK,
    NUMBERED_STEP,
    Candidate,
    candidate_at,
    is_prose,
)


def pick(pool: list[Candidate], candidates: list[Candidate], weights: dict[str, float], tuning: Tuning,
         others: bool, asked: set[str], procedure: bool = False) -> list[Candidate]:
    t = tuning
    # An example ("For example: you went on FMLA for 4 weeks…") illustrates a rule; it is not one.
    best = next((c for c in pool if not EXAMPLE.match(c.text)), pool[0])
    if is_code(best.text):  # a command comes with the sentence that leads in to it, if one does
        best = next((c for c in candidates if c.rank == best.rank and c.last == best.position
                     and c.position == best.position - 1), best)
    picked, covered = [best], set(best.terms)
    total = sum(weights.values()) or 1.0
    follower = _follower(best, candidates, t)
    if procedure and NUMBERED_STEP.match(best.text) and not best.tabular:
        for step in _earlier_steps(best, candidates, t):
            picked.append(step)
            covered |= step.terms
        if len(picked) >= t.max_sentences:
            follower = None
    if follower is not None:
        picked.append(follower)
        covered |= follower.terms
    rival = next((c for c in pool if c is not best and not EXAMPLE.match(c.text)), None)
    if others and rival is not None and _ties(rival, best, picked, t):
        picked.append(rival)
        covered |= rival.terms
    # A sentence from elsewhere must answer another part of the question.
    for candidate in [c for c in pool if c is not best] if others else []:
        if len(picked) >= t.max_sentences:
            break
        adds = sum(weights[term] for term in candidate.terms if term in weights and term not in covered)
        if (not any(c.overlaps(candidate) for c in picked)
                and adds >= t.adds_share * total and candidate.score >= t.adds_score * best.score):
            picked.append(candidate)
            covered |= candidate.terms
    if _before(best, candidates, picked, weights, t, others, asked):
        return picked[: t.max_sentences]
    # With room left, a passage that answers sentence after sentence is shown on ("…may receive
    # GSA provided computers. If the contractor needs the GSA network, they must use one. If
    # they can complete their work using VDI, they … may use their company computer.").
    third = candidate_at(candidates, best.rank, follower.last + 1) if follower in picked else None
    if (third is not None and len(picked) < t.max_sentences and is_prose(follower)
            and is_prose(third) and not EXAMPLE.match(third.text) and third.score >= t.continues * best.score
            and not any(c.overlaps(third) for c in picked)):
        picked.append(third)
    return picked


def _before(best: Candidate, candidates: list[Candidate], picked: list[Candidate], weights: dict[str, float],
            t: Tuning, others: bool, asked: set[str]) -> bool:
    """Adds the sentence before the best to `picked` when it belongs there; True when it leads
    the answer (right after the best), so nothing else may join.

    The sentence before may state the rule that the best one only elaborates ("Users are
    prohibited from deleting messages." before "Do not abuse the edit command…"): it must hold
    at least half as much of the asker's own words as the best one (a borrowed subject does not
    count: the day shift before the night shift asked about is a sibling; a scene-setting line
    that shares one common word is no rule), and it is no preamble to the date or number asked
    for. It comes last: a sentence answering another side of the question has the better claim
    to the room."""
    before = next((c for c in candidates if c.rank == best.rank and c.position == best.position - 1
                   and not c.overlaps(best)), None)  # a lead-in that holds its list holds the best already
    if (before is not None and before not in picked and not best.tabular
            and (LEANS_BACK.match(best.text) and not before.text.rstrip().endswith(":") or is_code(best.text))):
        # "However, term appointments need to be renewed" says nothing without the sentence
        # it answers, nor a command without the one that says what it does: that one comes
        # right after the best, ahead of every other.
        picked.insert(1, before)
        return True
    own = {term: w for term, w in weights.items() if term in asked}
    if (others and len(picked) < t.max_sentences and before is not None and before not in picked and not best.tabular
            and before.score >= t.before_score * best.score and own
            and weighted_coverage(own, before.terms) >= t.before_coverage * weighted_coverage(own, best.terms)
            and (before.typed or not best.typed) and not before.text.rstrip().endswith(":")):
        picked.append(before)
    return False


def _follower(best: Candidate, candidates: list[Candidate], t: Tuning) -> Candidate | None:
    """The next sentence of the same passage, which often finishes the thought."""
    after = sorted((c for c in candidates if c.rank == best.rank and c.position > best.last),
                   key=lambda c: c.position)
    follower = after[0] if after and after[0].position == best.last + 1 and not best.tabular else None
    if best.text.rstrip().endswith(":"):
        # A lead-in ("…a payroll deduction for medical insurance:") means nothing without what
        # follows it: of a list, the item that answers the question.
        items = list(takewhile(lambda c: LIST_ITEM.match(c.text), after))
        return max(items, key=lambda c: c.score) if items else follower
    if follower is not None and (follower.score < t.follower_share * best.score
                                 or LIST_ITEM.match(best.text) or EXAMPLE.match(follower.text)):
        # However long the best sentence, the next one may say how ("…can apply for and become
        # a triager. Open a PR on the README.md with…"). A list's next item is an alternative to
        # the best, not its continuation, and an example only illustrates it.
        return None
    return follower


def _earlier_steps(best: Candidate, candidates: list[Candidate], t: Tuning) -> list[Candidate]:
    """A numbered step is done after the steps before it: "Under Security Clearance, click
    the plus icon" answers "how can I check my clearance?" only after step 1 ("On your HR
    Links homepage… click View/Update Personal Info"). The nearest earlier steps come first."""
    earlier = list(takewhile(lambda c: c is not None and NUMBERED_STEP.match(c.text) and c.lead_in == best.lead_in,
                             (candidate_at(candidates, best.rank, p) for p in range(best.position - 1, -1, -1))))
    return earlier[: t.max_sentences - 1]


def _ties(rival: Candidate, best: Candidate, picked: list[Candidate], t: Tuning) -> bool:
    """The scorer's runner-up, from the same passage's running text and within a hair of the
    best, answers as well as the best does: both are shown, since the score cannot tell them
    apart ("…offers 20 days of vacation…" beside "…rolls over… with a maximum bank of 27 days").
    Not a restatement of the best, not one of a list's or table's alternatives ("Five to ten
    days in advance for: online courses…" is not "Three to five weeks…: conferences…"); the
    caller asks only outside a multi-part answer, whose room belongs to the parts."""
    return (rival.rank == best.rank and rival.score >= t.tie * best.score
            and is_prose(best) and is_prose(rival)
            and rival.typed >= best.typed and not any(c.overlaps(rival) for c in picked)
            and len(rival.terms & best.terms) < t.same_topic * len(rival.terms | best.terms))
