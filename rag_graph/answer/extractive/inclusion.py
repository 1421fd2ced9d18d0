"""One more sentence when the answer has room: what the writer could add, measured, not added.

After the best sentence, its passage and the runner-up chunk's sentence are picked, the answer
often still misses what was asked while the sentence that holds it sits in the writer's pool
(another chunk's, or two sentences away in the same one). `additions` offers each pool sentence
that could join (room, no copy, not an example or pointer, no word of the question that no shown
chunk holds) with the signals the flow already has about it; `rag_graph.tools.tune_inclusion`
fits "does it answer?" on sentences judged by a person from each dev question's reference answer
(eval/judged/, `rag_graph.tools.judged_inclusion`). Judged, the pool's best candidates are mostly
distractors (the other plan's figure, the next rule, another group's case: 47 answer, 102 are
context and 363 distractors of 512 dev sentences offered), and no threshold of the fitted model
adds more answering sentences than distractors to the replies, so none is added.
`inclusion.json` beside `rag_graph/scoring/learned.py` holds the model, its command and its
held-out figures; a file fitted on other features than FEATURES is refused."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ...language.markdown import LIST_ITEM, is_code
from ...language.words import weighted_coverage
from ...scoring import learned
from ...tuning import Tuning
from ..passage_view import Closeness
from ..passages import ABOUT_THE_PAGE, EXAMPLE, POINTER, Candidate, is_prose

MODEL_FILE = Path(learned.__file__).with_name("inclusion.json")

# What the model weighs per pool sentence: its score as a share of the best's, its closeness in
# meaning (cosine and late interaction, and how far behind the pool's closest), where it stands
# (the chunk of a picked sentence, how many sentences from one, the best's chunk, the chunk's
# rank), whether it and the best hold the kind of answer asked for, the question's weight it adds
# to what is picked and holds at all, its length and the answer's, and what kind of text it is;
# and how it stands to the question and to the answer's first sentence (judge40's structural
# signals: words shared with the lead, words neither the question nor the lead holds, words of the
# question, the question's words in its heading): a continuation of the lead shares its words
# (AUC .67 alone, judged answers against distractors), a sibling brings words of its own (.37).
FEATURES = ("share", "similarity", "similarity_gap", "late", "same_chunk", "near", "best_chunk", "typed",
            "best_typed", "adds", "coverage", "chars", "answer_chars", "prose", "list_item", "tabular", "code",
            "chunk_rank", "lead_overlap", "unasked", "asked_share", "heading_asked")


@dataclass(frozen=True)
class Addition:
    candidate: Candidate
    row: list[float]  # in the order of FEATURES
    answer: str  # the answer with it
    closer: float = 0.0  # how much closer in meaning to the question the answer is with it


def additions(pool: list[Candidate], picked: list[Candidate], weights: dict[str, float],
              asked_held: dict[int, set[str]], closeness: dict[int, tuple[float, float]],
              write: Callable[[list[Candidate]], str], tuning: Tuning,
              near_question: Closeness | None = None) -> tuple[str, list[Addition]]:
    """The answer as picked, and each pool sentence that may join it with its feature row.
    Never one that answers nothing (an example, a pointer, the page describing itself), one the
    answer would not show (no room, or a copy), one that makes the answer longer than
    inclusion_chars, or one of a chunk that holds a word of the question no shown chunk holds
    (`asked_held`: per chunk rank, the question's words its text holds): citing that chunk would
    make the word seem answered, and grounding reads the whole cited chunk ("how many of those
    shifts per year?" answered by the support-shifts paragraph was declined because the
    question's "year" was left behind; an unrelated sentence of a chunk holding "year" would lift
    that)."""
    answer = write(picked)
    if not pool or pool[0].score <= 0:
        return answer, []
    best = pool[0]
    shown = {c.rank for c in picked}
    held = set().union(*(asked_held.get(rank, set()) for rank in shown))
    covered = set().union(*(c.terms | c.heading for c in picked))
    closest = max(close for close, _ in closeness.values()) if closeness else 0.0
    out = []
    for candidate in pool:
        if (any(p is candidate or p.overlaps(candidate) or p.text == candidate.text for p in picked)
                or EXAMPLE.match(candidate.text) or POINTER.match(candidate.text) or ABOUT_THE_PAGE.match(candidate.text)
                or asked_held.get(candidate.rank, set()) - held):
            continue
        trial = write(picked + [candidate])
        if trial == answer or len(trial) > tuning.inclusion_chars:
            continue
        close, late = closeness.get(id(candidate), (0.0, 0.0))
        near = min((abs(candidate.position - p.position) for p in picked if p.rank == candidate.rank), default=5)
        out.append(Addition(candidate, [
            candidate.score / best.score, close, closest - close, late, float(candidate.rank in shown), min(near, 5),
            float(candidate.rank == best.rank), float(candidate.typed), float(best.typed),
            weighted_coverage(weights, (candidate.terms | candidate.heading) - covered),
            weighted_coverage(weights, candidate.terms), len(candidate.text) / 300, len(answer) / 300,
            float(is_prose(candidate)), float(bool(LIST_ITEM.match(candidate.text))), float(candidate.tabular),
            float(is_code(candidate.text)), float(candidate.rank), *_standing(candidate, picked[0], set(weights))],
            trial))
    return answer, _closer(answer, out, near_question)


def _standing(candidate: Candidate, lead: Candidate, asked: set[str]) -> tuple[float, ...]:
    """Its words shared with the lead sentence (of all either holds), its words neither the
    question nor the lead holds and its words the question holds (of its own), and the question's
    words in its heading (of the heading's)."""
    own = candidate.terms or {""}
    return (len(own & lead.terms) / len(own | lead.terms), len(own - asked - lead.terms) / len(own),
            len(own & asked) / len(own), len(candidate.heading & asked) / (len(candidate.heading) or 1))


def _closer(answer: str, found: list[Addition], near_question: Closeness | None) -> list[Addition]:
    """Each addition with how much closer (cosine) to the question the answer is with it than
    without; one call of the model for all. Recorded, not a signal of the model: against judged
    sentences it does not tell the one that answers from a sibling (AUC .47)."""
    if not found or near_question is None:
        return found
    before, *after = near_question([answer, *(a.answer for a in found)])
    return [replace(a, closer=then - before) for a, then in zip(found, after)]


@lru_cache(maxsize=2)
def _cached(path: str, stamp: float) -> learned.Linear:
    return learned.linear(learned.read(path), FEATURES, path)


def load(path: str | Path) -> learned.Linear:
    """The model a file holds, read once per file version; a `learned.ModelError` naming the
    file when it cannot be read or was fitted on other features than FEATURES."""
    try:
        stamp = Path(path).stat().st_mtime
    except OSError as error:
        raise learned.ModelError(f"cannot read the model file {path}: {error.strerror}") from None
    return _cached(str(path), stamp)


def shipped() -> learned.Linear:
    return load(MODEL_FILE)
