"""Words of a text: the tokeniser, stopwords, the stemmer, acronyms written out, and term weights (idf)."""
from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

from lemminflect import getAllLemmas

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further get gets got
had has have having he her here hers herself him himself his how i if in into is it its itself just
let me more most my myself no nor not of off on once or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this
those through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves also may might must shall us ok okay please thanks
there's what's it's i'm i've i'd we're they're don't doesn't isn't aren't can't won't
tell know say said does anyone someone something anything need want like much many
don doesn isn aren wasn weren won shouldn wouldn couldn didn hasn haven per each every via
""".split()) | frozenset(  # the same contractions typed without the apostrophe, as chat often has them
    [base + "s" for base in "what how where who when why that there here he she it".split()]
    + [base + "re" for base in "you we they".split()] + [base + "ve" for base in "i you we they".split()]
    + [base + "nt" for base in "do does did is are was were have has had could would should".split()]
    + ["im", "cant", "wont"])

_CLITIC = re.compile(r"'(s|re|ve|d|ll|m|t)$")
_WORD = re.compile(r"[^\W_]+(?:[.,'’-][^\W_]+)*", re.U)


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")


_JOINERS = ("of", "and", "for", "&")  # small words that may stand between the words an acronym spells


@lru_cache(maxsize=256)
def _written_out(acronym: str) -> re.Pattern:
    """"CEO" -> Chief Executive Officer, Chief of Executive Officers, chief executive officer…:
    one word per letter, "of", "and", "for" or "&" allowed between them."""
    joiner = r"\s+(?:(?:" + "|".join(_JOINERS) + r")\s+)?"
    return re.compile(r"\b" + joiner.join(f"[{letter}{letter.lower()}][a-z]+" for letter in acronym) + r"\b")


def spells_out(acronym: str, text: str) -> bool:
    """The text writes the acronym out: "Chief Executive Officer" for "CEO", "performance
    improvement plans" for "PIP". Written in lower case, every word must be a content word:
    "have questions" is no "HQ", "is crucial" no "IC"."""
    for match in _written_out(acronym).finditer(text):
        spelled = [word for word in match.group(0).split() if word not in _JOINERS]
        if all(word[0].isupper() for word in spelled) or not any(word.lower() in STOPWORDS for word in spelled):
            return True
    return False


def terms_held(query: str, text: str) -> frozenset[str]:
    """The text's terms, plus those of the query's acronyms that the text writes out only in
    words: a table that says "Chief Technology Officer" holds the "CTO" of "who's our CTO?"."""
    spelled = {t for acronym in set(_ACRONYM.findall(query)) if acronym not in text and spells_out(acronym, text)
               for t in terms(acronym)}
    return term_set(text) | spelled


def words(text: str) -> list[str]:
    """Lower-case words without accents; a hyphenated word also yields its joined form and its
    parts, so "Wi-Fi" matches "wifi" and "wi-fi" alike."""
    out = []
    for word in _WORD.findall(text):
        word = word.lower()
        if not word.isascii():  # "résumé" is the "resume" another page spells without accents
            word = unicodedata.normalize("NFC", "".join(
                ch for ch in unicodedata.normalize("NFD", word) if not unicodedata.combining(ch)))
        if "'" in word or "’" in word:
            word = _CLITIC.sub("", word.replace("’", "'"))
        if "-" in word:
            out.append(word.replace("-", ""))
            out.extend(part for part in word.split("-") if part)
        else:
            out.append(word)
    return out


# Counts of terms stored with an index are only valid for the stemmer that counted them: a
# change to `words` or `stem` bumps this, and an index counted with another version is counted again.
STEMMER_VERSION = 6


@lru_cache(maxsize=65536)  # a question's texts repeat the same few thousand words
def stem(word: str) -> str:
    """A deliberately crude suffix stripper: enough to match 'vacations'/'vacation', 'pays'/'paying'.
    A word and its inflections must reach the same stem: 'policies' is 'policy' before the
    suffixes go, and final e's go after them ('delete', 'deleting', 'deleted' -> 'delet');
    without this the evidence that says "deleting" did not hold the asker's "delete". The s of
    'class', 'bonus' or 'access' is no plural: it stays, as 'classes' keeps it. Nor is every
    'ly' an adverb's: 'apply', 'supply' and 'early' keep it ('apply' was 'app', the software),
    and 'easily' is 'easy'. A stem is never another word: the e stays where dropping it would
    make one ('fare', 'fares', 'fared' -> 'fare', not the 'far' of "how far ahead"; 'care' and
    'caring' are no 'car')."""
    original = word
    if word.endswith(("ies", "ied")) and len(word) > 5:
        word = word[:-3] + "y"
    for suffix in ("ations", "ation", "ments", "ment", "ingly", "ings", "ing", "edly",
                   "ers", "er", "ed", "es", "s", "ly"):
        if suffix == "s" and word.endswith(("ss", "us")):
            continue
        if suffix == "ly" and (word.endswith("ply") or len(word) < 6):
            continue
        if suffix == "ly" and word.endswith("ily"):
            word = word[:-3] + "y"
            break
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    bare = word
    while bare.endswith("e") and len(bare) > 3:  # "delete" and "deletes" -> "delet"
        bare = bare[:-1]
    if bare != word:
        return word[: len(bare) + 1] if _another_word(bare, original) else bare
    if word != original and _another_word(word, original) and word + "e" in _lemmas(original):
        return word + "e"  # the suffix took the e with it: "caring", "fared"
    return word


def _another_word(stem_: str, original: str) -> bool:
    """The stem is a word of its own, not one of the original's lemmas ("car" of "care")."""
    return bool(getAllLemmas(stem_)) and stem_ not in _lemmas(original)


def _lemmas(word: str) -> set[str]:
    return {lemma for found in getAllLemmas(word).values() for lemma in found}


def terms(text: str) -> list[str]:
    """Content-word stems in order, without stopwords; numbers are kept whole."""
    return [stem(w) if not w[0].isdigit() else w for w in words(text) if w not in STOPWORDS]


@lru_cache(maxsize=16384)
def term_set(text: str) -> frozenset[str]:
    # Cached: the same chunks and sentences are scored for question after question.
    return frozenset(terms(text))


def weighted_coverage(query_terms: dict[str, float], text_terms: set[str]) -> float:
    """Share of the query's term weight that the text contains."""
    total = sum(query_terms.values())
    if not total:
        return 0.0
    return sum(w for t, w in query_terms.items() if t in text_terms) / total


def idf(document_frequency: int, documents: int) -> float:
    return math.log(1 + (documents + 1) / (document_frequency + 0.5))


WRITTEN_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")  # a word as written, hyphens and all ("part-time", "wi-fi")
