"""Where in a chunk a written sentence's facts come from: the chunk cut into units (a clause of
a sentence, a list item, a table cell with its row's name) and each part of the sentence aligned
to the unit that says most nearly the same thing.

A chunk supports "the secondary is paid $350 per week" only if one unit says so: "$350" in "the
primary receives a stipend of $350 per week, and the secondary receives $150" belongs to the
primary. So the numbers of each part of a sentence must stand in the unit that part is aligned
to, and a part aligned to one unit must not take the subject of a parallel unit (another clause
of its sentence, another item of its list, another cell of its table row) that states another
value (answer/support.py uses both tests).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..language.markdown import sentences, table_sentences
from ..language.words import term_set

# Coordinated clauses state parallel facts: "…$350 per week, and the secondary receives $150…";
# "…not count as downtime; we limit it to 4 hours…". A plain comma joins a condition or an
# aside to its clause and does not cut.
_COORDINATED = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|or|whilst)\s)")
_DIGIT = re.compile(r"\d")
_NUMBER_WORD = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
                          r"sixty|hundred|twice|dozen)\b", re.I)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


@dataclass(frozen=True)
class Unit:
    text: str
    sentence: str  # the sentence it belongs to
    group: int  # units of one group are parallel: clauses of a sentence, items of a list, cells of a row

    @property
    def terms(self) -> frozenset[str]:
        return term_set(self.text)

    @property
    def states_number(self) -> bool:
        """Whether the unit states a number."""
        return bool(_DIGIT.search(self.text)) or bool(_NUMBER_WORD.search(self.text))


def clauses(sentence: str) -> list[str]:
    """A sentence cut at its coordinated clauses; a part under three words stays with the one
    before it ("…, and helps" is no clause of its own)."""
    out: list[str] = []
    for part in _COORDINATED.split(sentence):
        if out and len(part.split()) < 3:
            out[-1] = f"{out[-1]}, {part}"
        elif part.strip():
            out.append(part.strip())
    return out or [sentence]


def _cells(row: str) -> list[str]:
    """A table row as `sentences` writes it ("Priority: P1; Starter: 1 business day; …" or
    "Storage — Starter: 10 GB; …"): one unit per cell, each with the row's name."""
    name, _, rest = row.partition(" — ")
    if not rest:
        name, _, rest = row.partition("; ")
    parts = [p for p in rest.split("; ") if p.strip()]
    return [f"{name}; {part}" for part in parts] or [row]


def units(body: str) -> list[Unit]:
    """The chunk body's units, in order. The units of one sentence, and the items of one list,
    form one group. (Cutting the chunk's clauses at their numbers too, as a claim's are, caught
    one more wrong number on eval/grounding/fresh.jsonl and dropped 8 more paraphrases over the
    three sets: "call 911 first and then…", "24/7 at 1-800-…".)"""
    rows = table_sentences(body)
    found: list[Unit] = []
    group, in_list = 0, False
    for sentence in sentences(body) or (body,):
        item = bool(_ITEM.match(sentence))
        if not (item and in_list):
            group += 1
        in_list = item
        parts = _cells(sentence) if sentence in rows else clauses(sentence)
        found.extend(Unit(part, sentence, group) for part in parts)
    return found


def siblings(unit: Unit, within: list[Unit]) -> list[Unit]:
    return [other for other in within if other.group == unit.group and other.text != unit.text]


def windows(clause: str, number_spans: list[tuple[int, int]], least_words: int) -> list[str]:
    """A claim's clause cut so that each number keeps the words that lead to it: "keepAliveTimeout
    defaults to 4 seconds and keepAliveMaxTimeout to 10 minutes" is two windows, each aligned
    on its own. `number_spans`: where the clause's numbers and what they count end; a piece
    under `least_words` words joins its neighbour."""
    if len(number_spans) < 2:
        return [clause]
    cuts = [end for _, end in number_spans[:-1]]
    pieces: list[str] = []
    for piece in (clause[a:b] for a, b in zip([0, *cuts], [*cuts, len(clause)])):
        if pieces and len(pieces[-1].split()) < least_words:  # "One collaborator" leads to nothing yet
            pieces[-1] += piece
        else:
            pieces.append(piece)
    if len(pieces) > 1 and len(pieces[-1].split()) < least_words:  # "…06:00 UTC."
        last = pieces.pop()
        pieces[-1] += last
    return [piece for piece in pieces if piece.strip()]


def bound(window: str, vector: np.ndarray, found: list[Unit], vectors: np.ndarray, numbered: bool,
          weight: float = 1.0) -> Unit:
    """The unit `window` is aligned to; a window stating a number, among the units that state
    one (in "There is a separate FSA for dependent care, and the max for that plan is $7,500",
    the $7,500 is the second clause's, though the first names the FSA)."""
    within = [at for at, unit in enumerate(found) if unit.states_number] if numbered else []
    if not within:
        return found[aligned(window, vector, found, vectors, weight)]
    return found[within[aligned(window, vector, [found[at] for at in within], vectors[within], weight)]]


def swapped(own: frozenset[str], unit: Unit, other: Unit, titled: frozenset[str]) -> bool:
    """A claim (its terms `own`) aligned to `unit` takes the place of the parallel unit `other`:
    it holds a word only the other states and lacks one only the unit states ("the secondary is
    paid $350" against "the primary receives $350 per week, and the secondary receives $150").
    Numbers do not count (they are checked on their own), nor the chunk's title's words."""
    def plain(terms: frozenset[str]) -> set[str]:
        return {t for t in terms if not t[0].isdigit()} - titled
    return bool(own & plain(other.terms - unit.terms)) and bool(plain(unit.terms - other.terms) - own)


def aligned(window: str, vector: np.ndarray, found: list[Unit], vectors: np.ndarray, weight: float = 1.0) -> int:
    """Index of the unit saying most nearly what `window` says: the share of the window's words
    it holds plus `weight` x its cosine to the window (words decide between the cells of a
    table, meaning between differently worded clauses)."""
    own = term_set(window)
    lexical = np.array([len(own & unit.terms) / max(1, len(own)) for unit in found])
    return int(np.argmax(lexical + weight * (vectors @ vector)))
