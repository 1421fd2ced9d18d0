"""Whether a selected chunk supports a sentence that a writer (a chat model, or the offline
generator quoting) put in an answer.

A sentence is supported by a chunk when
- every fact it states that can be checked word for word is in the chunk: numbers and amounts
  ("three days", "$325"), dates (months, weekdays, years), names, and identifiers (an address,
  a command, a product code, an acronym);
- it says what the chunk's closest sentence says, not the opposite: a negation added ("without
  manager approval") or dropped ("contractors are eligible") against that sentence rejects it;
- its meaning is close: most of its content words are the chunk's, or its embedding is close to
  one of the chunk's sentences (a paraphrase: "Staff can work from home for up to three days each
  week, provided their manager agrees").

Pleasantries ("Let me know if you have any other questions!") are no claims: they are dropped
before the check. The thresholds are fields of rag_graph/tuning.py ("sentences a chat model
wrote"), set on the labelled set `eval/grounding/sentences.jsonl` and measured held out on
`eval/grounding/held_out.jsonl` (`python -m rag_graph.tools.grounding_eval --set …`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..language.markdown import sentences
from ..language.words import STOPWORDS, stem, term_set, words
from ..tuning import DEFAULT, Tuning

_NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                      "eighty": "80", "ninety": "90", "hundred": "100", "twice": "2", "dozen": "12"})
_MONTHS_DAYS = frozenset("january february march april may june july august september october november december "
                         "monday tuesday wednesday thursday friday saturday sunday".split())
# An identifier: an address, a path or command, a code with digits, a CamelCase or ALL-CAPS name.
_IDENTIFIER = re.compile(r"`[^`]+`|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[\w-]*\d[\w-]*[A-Za-z][\w-]*\b|\b[A-Za-z][\w-]*\d[\w-]*\b"
                         r"|\b\w+(?:[_/]|::|\.(?=\w))[\w./:-]*\w|\b[A-Z][a-z]+[A-Z]\w*\b|\b[A-Z]{2,}s?\b")
_MEASURE = re.compile(r"[\d.,]+(?:-[a-z]+)+|[\d.,]+")  # "90-day", "14-inch": a number and its unit, no code
_CAPITALISED = re.compile(r"\b[A-Z][a-z][\w'’-]*")
# Words that flip what a sentence says. "n't" covers don't, can't, isn't, won't…
_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|unable|"
                       r"prohibited|forbidden|ineligible)\b|n[’']t\b", re.I)
# Social filler a chat model adds around an answer; it states nothing about the documents.
_PLEASANTRY = re.compile(
    r"^\W*(?:let me know\b|(?:i\s+)?hope (?:this|that|it) helps|feel free\b|if you have (?:any )?(?:other|more|further)"
    r"|is there anything else|(?:i'?m |i am )?(?:happy|glad) to help|thanks?\b|thank you|you'?re welcome|great question"
    r"|(?:sure|certainly|of course|absolutely|okay|ok)\W*$|have a (?:great|nice|good)\b|good luck\b"
    r"|i hope (?:this|that) (?:answers|clarifies))", re.I)


def is_pleasantry(sentence: str) -> bool:
    return bool(_PLEASANTRY.match(sentence))


def _number(token: str) -> str:
    token = _NUMBER_WORDS.get(token.lower(), token).replace(",", "")
    if ":" in token:  # a time of day: "10:00"
        return token
    return token.rstrip("0").rstrip(".") if "." in token else token.lstrip("0") or "0"


_QUANTITY = re.compile(r"(?P<currency>[$£€])?\s?(?P<n>\b\d+(?:[.,:]\d+)*|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b)"
                       r"(?P<percent>\s?%)?(?=(?P<after>[^.;:!?]*))", re.I)
_TIME_UNITS = ("minute", "hour", "day", "night", "week", "month", "quarter", "year")


def quantities(text: str) -> set[tuple[str, frozenset[str]]]:
    """The numbers a text states, in digits, each with what it counts (the next few content
    words, stemmed; "$" and "%" too): "three working days" is (3, {work, day}), "$325" (325, {$})."""
    found = set()
    for match in _QUANTITY.finditer(text):
        unit = {"$"} if match["currency"] else {"%"} if match["percent"] else set()
        after = [w for w in words(match["after"]) if w.isalpha() and w not in STOPWORDS][:DEFAULT.unit_words]
        found.add((_number(match["n"]), frozenset(unit | {stem(w) for w in after})))
    return found


def numbers(text: str) -> set[str]:
    """The numbers a text states, in digits: "three days" and "3 days" both state 3."""
    return {number for number, _ in quantities(text)}


def _time_unit(unit: frozenset[str]) -> str:
    return next((u for u in _TIME_UNITS if u in unit), "")


def _same_count(claimed: frozenset[str], held: frozenset[str]) -> bool:
    """Two numbers count the same thing: their words meet (or one side names nothing), and
    they are not days on one side and weeks on the other."""
    if not claimed or not held:
        return True
    mine, theirs = _time_unit(claimed), _time_unit(held)
    return bool(claimed & held) and (not mine or not theirs or mine == theirs)


def unmatched(claimed: set[tuple[str, frozenset[str]]], held: set[tuple[str, frozenset[str]]]) -> list[str]:
    """The claimed numbers `held` lacks, counting the same thing: "12 weeks of leave" is not
    held by "within 12 months of the birth", nor "four days a week" by "for up to 4 weeks"."""
    return sorted({n for n, unit in claimed if not any(n == m and _same_count(unit, other) for m, other in held)})


def _named(sentence: str) -> set[str]:
    """Names and dates the sentence states: capitalised words after its first word (the first
    is capitalised anyway), and a first word that opens a run of them ("Rahel Tesfaye is…")."""
    found = []
    spans = list(_CAPITALISED.finditer(sentence))
    for at, match in enumerate(spans):
        first = not sentence[: match.start()].strip(" \"“*_(")
        word = match.group(0).rstrip("'’").removesuffix("'s").removesuffix("’s")
        if first and not (at + 1 < len(spans) and sentence[match.end(): spans[at + 1].start()] == " "):
            continue
        if word.lower() not in STOPWORDS and word.lower() not in ("i'm", "i’m", "i've"):
            found.append(word)
    found += [w for w in words(sentence) if w in _MONTHS_DAYS and w != "may"]
    return {w.lower() for w in found}


@dataclass(frozen=True)
class Facts:
    """What a text states that can be checked word for word."""
    quantities: frozenset[tuple[str, frozenset[str]]]
    names: frozenset[str]  # lower case
    identifiers: frozenset[str]  # lower case

    @classmethod
    def of(cls, sentence: str) -> "Facts":
        identifiers = {m.strip("`").lower() for m in _IDENTIFIER.findall(sentence)}
        return cls(frozenset(quantities(sentence)), frozenset(_named(sentence)),
                   frozenset(i for i in identifiers if not _MEASURE.fullmatch(i)))

    def missing_from(self, text: str) -> list[str]:
        """The facts that `text` does not state."""
        lower = text.lower()
        held_words = set(words(text))
        held_stems = {stem(w) for w in held_words}
        missing = unmatched(self.quantities, quantities(text))
        missing += sorted(n for n in self.names if n not in held_words and stem(n) not in held_stems
                          and not all(w in held_words or stem(w) in held_stems for w in words(n)))
        missing += sorted(i for i in self.identifiers if i not in lower)
        return missing


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def _negation_scopes(text: str) -> list[frozenset[str]]:
    """The content words each negation in `text` bears on: the few words after it."""
    return [term_set(" ".join(text[m.end():].split()[:DEFAULT.negation_scope])) for m in _NEGATION.finditer(text)]


def flips(sentence: str, source: str) -> bool:
    """`sentence` negates what `source` states, or states what `source` negates: a negation on
    one side bears on words the other side holds, and the other side has none. A clause the
    writer left out ("everyone who is not travelling") is no flip."""
    mine, theirs = _negation_scopes(sentence), _negation_scopes(source)
    if bool(mine) == bool(theirs):
        return False
    scopes, other = (mine, term_set(source)) if mine else (theirs, term_set(sentence))
    return any(scope & other for scope in scopes)


def answers(question: str, sentences: list[str], embedder, tuning: Tuning = DEFAULT) -> bool:
    """Whether supported sentences answer the question at all: one of them is about it
    (tuning.written_on_topic). A true sentence from another section of the evidence ("every new
    hire gets a buddy" for a question about the training budget) is no answer."""
    if not sentences:
        return False
    vectors = np.asarray(embedder.encode([question, *sentences]))
    return float(np.max(vectors[1:] @ vectors[0])) >= tuning.written_on_topic


@dataclass(frozen=True)
class Verdict:
    chunk_id: str | None  # the chunk that supports the sentence; None: none does
    reason: str  # "supported", or why not: "facts: 5", "negation", "meaning", "pleasantry", "empty"
    closeness: float = 0.0

    @property
    def kept(self) -> bool:
        return self.chunk_id is not None


class SupportChecker:
    """Checks sentences against a fixed set of chunks (one answer's context); the chunks'
    sentences are embedded once, when a sentence first needs its meaning compared."""

    def __init__(self, chunks: list[dict], embedder, tuning: Tuning = DEFAULT):
        self.chunks, self.embedder, self.tuning = chunks, embedder, tuning
        self._sentences: dict[str, tuple[str, ...]] = {}
        self._vectors: dict[str, np.ndarray] = {}

    def _chunk_sentences(self, chunk: dict) -> tuple[str, ...]:
        key = chunk["chunk_id"]
        if key not in self._sentences:
            body = chunk.get("body") or chunk["text"]
            self._sentences[key] = tuple(sentences(body)) or (body,)
        return self._sentences[key]

    def _closest(self, vector: np.ndarray, chunk: dict) -> list[tuple[float, str]]:
        """The chunk's sentences closest in meaning to the sentence's `vector`, closest first."""
        key = chunk["chunk_id"]
        parts = self._chunk_sentences(chunk)
        if key not in self._vectors:
            self._vectors[key] = np.asarray(self.embedder.encode(list(parts)))
        scores = self._vectors[key] @ vector
        ranked = [(float(scores[at]), parts[at]) for at in np.argsort(-scores)[:self.tuning.closest_sentences]]
        return [pair for pair in ranked if pair[0] >= ranked[0][0] - self.tuning.nearly_as_close]

    def _together(self, facts: Facts, chunk: dict) -> bool:
        """One sentence of the chunk states the numbers with the names ("the cap is $325" in
        "high-cost cities (…London…)"), the chunk's title and section counting as every
        sentence's: "$250 in London" is not supported by "$250" in one sentence and London in
        another."""
        header = chunk["text"][: len(chunk["text"]) - len(chunk.get("body") or "")]
        return any(not unmatched(facts.quantities, quantities(part))
                   and not Facts(frozenset(), facts.names, frozenset()).missing_from(header + " " + part)
                   for part in self._chunk_sentences(chunk))

    def check(self, sentence: str, prefer: list[str] = ()) -> Verdict:
        """The chunk that supports `sentence`: one of `prefer` (the ones it cites) when they do,
        else any of the checker's chunks; the closest wins. A rejection names the first reason
        met, in the order facts, negation, meaning."""
        if is_pleasantry(sentence):
            return Verdict(None, "pleasantry")
        own = term_set(sentence)
        if len(words(sentence)) < self.tuning.written_min_words:  # "4." or "Yes." states nothing checkable
            return Verdict(None, "empty")
        facts = Facts.of(sentence)
        vector = None
        best, refusals = None, []
        for chunk in sorted(self.chunks, key=lambda c: c["chunk_id"] not in prefer):
            missing = facts.missing_from(chunk["text"])
            lexical = len(own & term_set(chunk["text"])) / len(own)
            if missing or lexical < self.tuning.written_paraphrase_floor:
                refusals.append((0.0, "facts: " + ", ".join(missing[:3]) if missing else "meaning"))
                continue
            if vector is None:
                vector = np.asarray(self.embedder.encode([sentence]))[0]
            closest = self._closest(vector, chunk)
            closeness = closest[0][0]
            unplaced = unmatched(facts.quantities, quantities(" ".join(text for _, text in closest)))
            if unplaced:  # "12 weeks of parental leave": 12 is the chunk's, but of "within 12 months"
                refusals.append((closeness, "facts: " + ", ".join(unplaced[:3])))
            elif facts.names and facts.quantities and not self._together(facts, chunk):
                refusals.append((closeness, "facts: not together"))
            elif flips(sentence, closest[0][1]):
                refusals.append((closeness, "negation"))
            elif lexical >= self.tuning.written_lexical_support or closeness >= self.tuning.written_semantic_support:
                verdict = Verdict(chunk["chunk_id"], "supported", closeness)
                if chunk["chunk_id"] in prefer:
                    return verdict
                best = verdict if best is None or closeness > best.closeness else best
            else:
                refusals.append((closeness, "meaning"))
        if best is not None:
            return best
        closeness, reason = max(refusals, key=lambda r: (r[0], r[1] != "meaning"), default=(0.0, "meaning"))
        return Verdict(None, reason, closeness)
