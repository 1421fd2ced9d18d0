"""Typos in a question, corrected from the corpus's own vocabulary: "how much vacaton do I
earn?" is asked about the "vacation" the documents write. A word is corrected only when the
corpus does not hold it and no dictionary knows it, to a word one edit away that the corpus
holds (a dictionary word first, then the most frequent: "teleworkk" is the corpus's "telework").
A real word the corpus lacks ("dental" where the documents only say "rental") is a knowledge
gap, never a typo; a name is only ever corrected to a name ("Londn" is "London", "Denver" is
no "denser").

Candidates are generated from the word (about 54 per letter), never looked for by scanning the
vocabulary, so the cost does not grow with the corpus."""
from __future__ import annotations

import re
import string

from lemminflect import getAllLemmas

from .words import STOPWORDS, stem

MIN_LENGTH = 5  # shorter words have too many neighbours one edit away ("cap", "car", "cat")
_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")


def correct_spelling(text: str, frequency: dict[str, int]) -> str:
    """The text with each misspelt word replaced by its correction; everything else as written."""
    def fix(match: re.Match) -> str:
        word = match.group(0)
        if not _correctable(word, frequency):
            return word
        # Mid-sentence, a capital marks a name: it can only be a misspelt name ("Londn"), never a
        # misspelt common word ("Denver" is no "denser").
        name = word[0].isupper() and match.start() > 0 and not re.search(r"[.!?]\s*$", text[: match.start()])
        correction = _best_neighbour(word.lower(), frequency, name)
        if correction is None:
            return word
        return correction.capitalize() if word[0].isupper() else correction

    return _TOKEN.sub(fix, text)


def corrections(typed: str, read: str) -> list[tuple[str, str]]:
    """(as typed, as read) for each word `correct_spelling` replaced: it replaces words one for
    one, so the two texts' words pair up."""
    return [(a, b) for a, b in zip(_TOKEN.findall(typed), _TOKEN.findall(read)) if a != b]


def reading_note(typed: str, read: str) -> str:
    """ "I read “vacaton” as “vacation”": the asker sees what was searched for; "" if nothing changed."""
    pairs = corrections(typed, read)
    return "I read " + ", ".join(f"“{a}” as “{b}”" for a, b in pairs) if pairs else ""


def _correctable(word: str, frequency: dict[str, int]) -> bool:
    lower = word.lower()
    if len(word) < MIN_LENGTH or "'" in word or "’" in word or lower in STOPWORDS:
        return False  # STOPWORDS holds "whats" and "dont" too: a contraction without its apostrophe
    if any(ch.isupper() for ch in word[1:]):
        return False  # an acronym ("HSA", "iPhone") is never a typo
    return stem(lower) not in frequency and not getAllLemmas(lower)


def _best_neighbour(word: str, frequency: dict[str, int], name: bool) -> str | None:
    """A neighbour the corpus writes: a dictionary word whose stem it holds, or a word that is
    its own stem there ("telework", "london"); not a string that only shares a stem with corpus
    words ("dever" is no word, though "dev" is a stem of the corpus)."""
    known = []
    for candidate in dict.fromkeys(_one_edit(word)):
        term = stem(candidate)
        if term not in frequency:
            continue
        dictionary = bool(getAllLemmas(candidate))
        if (dictionary and not name) or (not dictionary and term == candidate):
            known.append((dictionary, frequency[term], -len(candidate), candidate))
    return max(known)[-1] if known else None


def _one_edit(word: str):
    """Every string one deletion, transposition, replacement or insertion away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    for left, right in splits:
        if right:
            yield left + right[1:]
            if len(right) > 1:
                yield left + right[1] + right[0] + right[2:]
            for letter in string.ascii_lowercase:
                yield left + letter + right[1:]
        for letter in string.ascii_lowercase:
            yield left + letter + right
