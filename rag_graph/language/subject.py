"""Which words of a question can name what it is about: nouns and names, not frame words, verbs
or misspellings."""
from __future__ import annotations

import re

from lemminflect import getAllLemmas

from .lexicon import NOT_A_SUBJECT
from .words import STOPWORDS, stem


def names_a_subject(word: str, question: str = "") -> bool:
    """A question word that can name what the question is about: not a frame word ("ago"),
    and a word English can use as a noun, or no dictionary word at all (a name, an acronym:
    "HSA", "Juneteenth"). A word that is only ever a verb, adjective or adverb ("lived",
    "attach", "far") is what the question asks about its subject, and documents say it in
    their own words: its absence from the evidence is no knowledge gap. In the question, a
    verb's -ing form before a noun names a kind of that thing as a noun would: the "signing"
    of "a signing bonus", the "parking" of "a parking permit"."""
    if word in NOT_A_SUBJECT or word in STOPWORDS or stem(word) in STOPWORDS:
        return False
    kinds = getAllLemmas(word)
    if "VERB" in kinds and re.search(rf"\b{re.escape(word)}\s+(?:off|over|up|out|down|back|through)\b", question, re.I):
        return False  # a phrasal verb ("sign off", "goes over") says what is done, not to what
    return not kinds or "NOUN" in kinds or "PROPN" in kinds or bool(kind_named(word, question))


def kind_named(word: str, question: str) -> str:
    """The thing an -ing word is a kind of in the question ("signing bonus"), "" if none."""
    if not word.endswith("ing"):
        return ""
    following = re.search(rf"\b{re.escape(word)}\s+([a-z]+)\b", question, re.I)
    noun = following[1].lower() if following else ""
    return f"{word} {noun}" if noun and noun not in STOPWORDS and "NOUN" in getAllLemmas(noun) else ""


def unknown_word(word: str, question: str, frequency: dict[str, int]) -> bool:
    """Five letters or more, in lower case as asked or opening a sentence (not a name or an
    acronym), in no document and no dictionary."""
    written = re.search(rf"\b{re.escape(word)}\b|(?:^|[.!?]\s+)(?i:{re.escape(word)})\b", question)
    return (len(word) >= 5 and written is not None and word.isalpha() and stem(word) not in frequency
            and not getAllLemmas(word))
