"""Whether a selected chunk supports a sentence that a writer (a chat model, or the offline
generator quoting) put in an answer.

A sentence is supported by a chunk when
- every fact it states that can be checked word for word is in the chunk: numbers and amounts
  ("three days", "$325"), dates (months, weekdays, years), names, and identifiers (an address,
  a command, a product code, an acronym);
- each number, and each name, stands where the sentence's words say it does: the sentence is
  cut into clauses and each clause at its numbers, each piece is aligned to the unit of the
  chunk (a clause, a list item, a table cell) that says most nearly the same, and the piece's
  numbers must be that unit's, its names that unit's sentence's ("$350" of "the primary
  receives $350 per week, and the secondary receives $150" is not the secondary's; "4 hours" of
  the Professional plan's P1 row is not the Team plan's; answer/align.py);
- it says what the evidence's sentences nearest to it say, not the opposite: a word they only
  negate that it states ("you can book a space" against "spaces cannot be booked"), or one it
  negates that they only state, rejects it;
- its meaning is close: most of its content words are the chunk's, or its embedding is close to
  one of the chunk's sentences (a paraphrase: "Staff can work from home for up to three days each
  week, provided their manager agrees").

Pleasantries ("Let me know if you have any other questions!") are no claims: they are dropped
before the check. The thresholds are fields of rag_graph/tuning.py ("sentences a chat model
wrote"), set on the labelled set `eval/grounding/sentences.jsonl` and measured held out on
`eval/grounding/held_out.jsonl` and `eval/grounding/fresh.jsonl` (`python -m
rag_graph.tools.grounding_eval --set …`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..language.markdown import sentences
from ..language.words import STOPWORDS, stem, term_set, words
from ..tuning import DEFAULT, Tuning
from .align import bound, clauses, siblings, swapped, units, windows

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
_PRONOUN = re.compile(r"\W*(?:they|it|these|this|those|he|she|such)\b", re.I)  # a sentence naming its subject by pronoun
_CAPITALISED = re.compile(r"\b[A-Z][a-z][\w'’-]*")
# Words that flip what a sentence says. "n't" covers don't, can't, isn't, won't…
_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|unable|"
                       r"prohibited|forbidden|ineligible|instead of|rather than)\b|n[’']t\b", re.I)
# Social filler a chat model adds around an answer; it states nothing about the documents.
_PLEASANTRY = re.compile(
    r"^\W*(?:let me know\b|(?:i\s+)?hope (?:this|that|it) helps|feel free\b|if you have (?:any )?(?:other|more|further)"
    r"|is there anything else|(?:i'?m |i am )?(?:happy|glad) to help|thanks?\b|thank you|you'?re welcome|great question"
    r"|(?:sure|certainly|of course|absolutely|okay|ok)\W*$|have a (?:great|nice|good)\b|good luck\b"
    r"|i hope (?:this|that) (?:answers|clarifies))", re.I)


def is_pleasantry(sentence: str) -> bool:
    return bool(_PLEASANTRY.match(sentence))


STOPWORDS_PATTERN = sorted((re.escape(w) for w in STOPWORDS if w.isalpha()), key=len, reverse=True)


def _number(token: str) -> str:
    token = _NUMBER_WORDS.get(token.lower(), token).replace(",", "")
    if ":" in token:  # a time of day: "10:00"
        return token
    return token.rstrip("0").rstrip(".") if "." in token else token.lstrip("0") or "0"


_QUANTITY = re.compile(r"(?P<currency>[$£€])?\s?(?P<n>\b\d+(?:[.,:]\d+)*(?![\dA-Za-z])|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b)"
                       r"(?P<percent>\s?%)?(?=(?P<after>[^.;:!?]*))", re.I)
_TIME_UNITS = ("minute", "hour", "day", "night", "week", "month", "quarter", "year")


# A duration in one unit is the same duration in another: what the documents state as "300000 ms"
# a writer may state as "5 minutes" (seconds per unit, by the stem of the word after the number).
_SECONDS = {"ms": 0.001, "millisecond": 0.001, "msec": 0.001, "second": 1, "sec": 1, "s": 1, "minut": 60, "min": 60,
            "mins": 60, "hour": 3600, "hr": 3600, "hrs": 3600, "day": 86400, "week": 604800}
_UNIT_NAMES = {0.001: "millisecond", 1: "second", 60: "minut", 3600: "hour", 86400: "day", 604800: "week"}


def _equivalents(number: str, counted: str) -> set[tuple[str, frozenset[str]]]:
    """The same duration in the other units, when it is a whole number of them."""
    per = _SECONDS.get(counted)
    if per is None or ":" in number:
        return set()
    seconds = float(number) * per
    return {(_number(f"{seconds / size:.3f}"), frozenset({name})) for size, name in _UNIT_NAMES.items()
            if size != per and seconds / size >= 1 and abs(seconds / size - round(seconds / size, 3)) < 1e-9}


def quantities(text: str, unit_words: int = DEFAULT.unit_words, held: bool = False) -> set[tuple[str, frozenset[str]]]:
    """The numbers a text states, in digits, each with what it counts (the next `unit_words`
    content words, stemmed; "$" and "%" too): "three working days" is (3, {work, day}), "$325" (325, {$}).
    `held`: a text checked against, whose durations also count in other units ("300000 ms" holds
    "5 minutes" and "300 seconds")."""
    found = set()
    for match in _QUANTITY.finditer(text):
        unit = {"$"} if match["currency"] else {"%"} if match["percent"] else set()
        after = [w for w in words(match["after"]) if w.isalpha() and w not in STOPWORDS][:unit_words]
        found.add((_number(match["n"]), frozenset(unit | {stem(w) for w in after})))
        if held and after and not unit:
            found |= _equivalents(_number(match["n"]), stem(after[0]))
    return found


def number_spans(text: str) -> list[tuple[int, int]]:
    """Where each number of `text` starts, and where the first word after it that says what it
    counts ends ("4 seconds", "$350 per week"), never past the next number."""
    matches = list(_QUANTITY.finditer(text))
    spans = []
    for at, match in enumerate(matches):
        counted = re.match(r"(?:\W*(?:%s)\b)*\W*[\w'’-]+" % "|".join(STOPWORDS_PATTERN), match["after"])
        end = match.end() + (counted.end() if counted else 0)
        spans.append((match.start(), min(end, matches[at + 1].start()) if at + 1 < len(matches) else end))
    return spans


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
    def of(cls, sentence: str, unit_words: int = DEFAULT.unit_words) -> "Facts":
        identifiers = {m.strip("`").lower() for m in _IDENTIFIER.findall(sentence)}
        return cls(frozenset(quantities(sentence, unit_words)), frozenset(_named(sentence)),
                   frozenset(i for i in identifiers if not _MEASURE.fullmatch(i)))

    def missing_from(self, text: str, unit_words: int = DEFAULT.unit_words) -> list[str]:
        """The facts that `text` does not state."""
        lower = text.lower()
        held_words = set(words(text))
        held_stems = {stem(w) for w in held_words}
        missing = unmatched(self.quantities, quantities(text, unit_words, held=True))
        missing += sorted(n for n in self.names if n not in held_words and stem(n) not in held_stems
                          and not all(w in held_words or stem(w) in held_stems for w in words(n)))
        missing += sorted(i for i in self.identifiers if i not in lower)
        return missing


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def _negations(text: str, scope: int) -> list[tuple[str, frozenset[str]]]:
    """Each negation of `text`: the word it bears on (the first content word after it) and the
    words around it that it may bear on (a few before: "an automatic reply does not count";
    `scope` after: "cannot be booked in advance")."""
    found = []
    for match in _NEGATION.finditer(text):
        ahead = _terms_in_order(" ".join(text[match.end():].split()[:scope]))
        if ahead:
            before = _terms_in_order(" ".join(text[:match.start()].split()[-scope:]))[-3:]
            found.append((ahead[0], frozenset(ahead + before)))
    return found


def _terms_in_order(text: str) -> list[str]:
    return [stem(w) if not w[0].isdigit() else w for w in words(text) if w not in STOPWORDS]


def _polarity(texts: list[str], scope: int) -> tuple[set[str], set[str], set[str]]:
    """(words stated, words negated, words near a negation) of some sentences: a word a
    negation bears on in one sentence and that another states plainly counts as stated."""
    stated, heads, near = set(), set(), set()
    for text in texts:
        found = _negations(text, scope)
        bears = set().union(*(b for _, b in found)) if found else set()
        stated |= term_set(text) - bears
        heads |= {head for head, _ in found}
        near |= bears
    return stated, heads - stated, near


def flips(sentence: str, sources: list[str], scope: int = DEFAULT.negation_scope) -> bool:
    """`sentence` states what the `sources` only negate, or negates what they only state: "You
    can book a parking space" against "…cannot be booked", "npm ci updates the lock when the
    dependencies do not match" against "…npm ci will exit with an error, instead of updating the
    lock", "EnvHttpProxyAgent does not support uppercase variables" against "Uppercase variables
    are also supported". A negation bears on the first content word after it (and may on a few
    words around it): "you cannot delete a message" and "messages can't be deleted" agree, and a
    clause the writer left out ("everyone who is not travelling") is no flip."""
    stated, negated, near = _polarity(sources, scope)
    mine = _negations(sentence, scope)
    bears = set().union(*(b for _, b in mine)) if mine else set()
    return bool(negated & (term_set(sentence) - bears)) or any(head in stated and head not in near for head, _ in mine)


def answers(question: str, sentences: list[str], embedder, tuning: Tuning = DEFAULT) -> bool:
    """Whether supported sentences answer the question at all: one of them is about it
    (tuning.written_on_topic). A true sentence from another section of the evidence ("every new
    hire gets a buddy" for a question about the training budget) is no answer."""
    if not sentences:
        return False
    vectors = np.asarray(embedder.encode([question, *sentences]))
    return float(np.max(vectors[1:] @ vectors[0])) >= tuning.written_on_topic


@dataclass(frozen=True)
class Placement:
    """How a sentence's facts stand in one chunk (SupportChecker.placement): numbers and names
    found outside the unit their words align to, windows taking a parallel unit's place, the
    worst window's alignment (share of its words + cosine, 0–2), and the first reason met ("")."""
    numbers: int
    names: int
    swaps: int
    fit: float
    reason: str


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
    sentences and units (answer/align.py) are embedded once, when a sentence first needs them."""

    def __init__(self, chunks: list[dict], embedder, tuning: Tuning = DEFAULT, model="shipped"):
        """`model`: the learned decision (answer/support_learned.py) over the rules' signals; None:
        the rules alone decide; "shipped": the one `citebot tune --grounding` chose."""
        self.chunks, self.embedder, self.tuning = chunks, embedder, tuning
        if model == "shipped":
            from .support_learned import shipped  # it measures with this module's checker
            model = shipped()
        self.model = model
        self._sentences: dict[str, tuple[str, ...]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._units: dict[str, tuple[list, np.ndarray]] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embedder.encode(texts))

    def _chunk_sentences(self, chunk: dict) -> tuple[str, ...]:
        key = chunk["chunk_id"]
        if key not in self._sentences:
            body = chunk.get("body") or chunk["text"]
            self._sentences[key] = tuple(sentences(body)) or (body,)
        return self._sentences[key]

    def closeness(self, vector: np.ndarray, chunk: dict) -> float:
        """Cosine of the sentence's `vector` to the chunk's closest sentence."""
        key = chunk["chunk_id"]
        if key not in self._vectors:
            self._vectors[key] = self.embed(list(self._chunk_sentences(chunk)))
        return float(np.max(self._vectors[key] @ vector))

    def _chunk_units(self, chunk: dict) -> tuple[list, np.ndarray]:
        key = chunk["chunk_id"]
        if key not in self._units:
            found = units(chunk.get("body") or chunk["text"])
            self._units[key] = (found, self.embed([u.text for u in found]))
        return self._units[key]

    def placement(self, parts: list[tuple[str, list[str]]], vectors: dict, chunk: dict) -> "Placement":
        """Whether the chunk states the sentence's facts where they belong. Each window of each
        clause (a number with the words leading to it) is aligned to one unit of the chunk
        (answer/align.py): its numbers must be that unit's, its names that unit's sentence's (or
        the chunk's title's), and it must not take the place of a parallel unit that states
        another number ("the secondary is paid $350" against "the primary receives $350 per
        week, and the secondary receives $150")."""
        found, unit_vectors = self._chunk_units(chunk)
        header = chunk["text"][: len(chunk["text"]) - len(chunk.get("body") or "")]
        titled, unit_words = term_set(header), self.tuning.unit_words
        numbers, names, swaps, fit, reason = 0, 0, 0, 2.0, ""
        for _, pieces in parts:
            for window in pieces:
                claimed = quantities(window, unit_words)
                unit = bound(window, vectors[window], found, unit_vectors, bool(claimed), self.tuning.written_align_cosine)
                own = term_set(window)
                fit = min(fit, len(own & unit.terms) / max(1, len(own)) + float(unit_vectors[found.index(unit)] @ vectors[window]))
                astray = unmatched(claimed, quantities(unit.text + " " + header, unit_words, held=True))
                # names stand in the sentence aligned to: "$250 in London", "P1 tickets on the Starter plan"
                # (identifiers too dropped 2 paraphrases on held_out.jsonl and caught nothing more)
                named = Facts(frozenset(), Facts.of(window).names, frozenset()).missing_from(header + " " + unit.sentence)
                swap = bool(claimed) and any(
                    swapped(own, unit, other, titled) for other in siblings(unit, found)
                    if other.states_number and unmatched(claimed, quantities(other.text, unit_words, held=True)))
                numbers, names, swaps = numbers + len(astray), names + len(named), swaps + swap
                if not reason and (astray or named or swap):
                    reason = ", ".join((astray + named)[:3]) or "another item's"
        return Placement(numbers, names, swaps, fit, reason)

    def parts(self, sentence: str) -> tuple[list[tuple[str, list[str]]], dict]:
        """The sentence's clauses, each with its windows, and their vectors."""
        parts = [(clause, windows(clause, number_spans(clause), self.tuning.written_window_words))
                 for clause in clauses(sentence)]
        texts = list(dict.fromkeys([sentence] + [t for clause, pieces in parts for t in (clause, *pieces)]))
        return parts, dict(zip(texts, self.embed(texts)))

    def saying(self, sentence: str, vector: np.ndarray, chunks: list[dict]) -> list[str]:
        """The sentences of `chunks` that say most nearly what `sentence` says (share of its words
        plus cosine, as units are aligned), each within `nearly_as_close` of the best."""
        scored = []
        own = term_set(sentence)
        for chunk in chunks:
            self.closeness(vector, chunk)
            cosines = self._vectors[chunk["chunk_id"]] @ vector
            scored += [(len(own & term_set(text)) / len(own) + self.tuning.written_align_cosine * float(cos), text)
                       for text, cos in zip(self._chunk_sentences(chunk), cosines)]
        top = max(score for score, _ in scored)
        return list(dict.fromkeys(text for score, text in scored if score >= top - self.tuning.nearly_as_close))

    def evidence(self, sentence: str, vector: np.ndarray, chunks: list[dict]) -> list[str]:
        """The sentences a claim's polarity is read against: those that say most nearly what it
        says (`saying`), each with the next sentence of its chunk when that one names the same
        subject by a pronoun ("…20 reserved parking spaces in the garage. They … cannot be
        booked")."""
        near = self.saying(sentence, vector, chunks)
        out = list(near)
        for chunk in chunks:
            found = self._chunk_sentences(chunk)
            out += [after for before, after in zip(found, found[1:]) if before in near and _PRONOUN.match(after)]
        return list(dict.fromkeys(out))

    def nearest(self, sentence: str, vector: np.ndarray, chunk: dict) -> float:
        """How nearly the chunk's closest sentence says what `sentence` says: share of its words
        plus cosine (0–2), as `saying` ranks them."""
        own = term_set(sentence)
        self.closeness(vector, chunk)
        cosines = self._vectors[chunk["chunk_id"]] @ vector
        return max(len(own & term_set(text)) / max(1, len(own)) + self.tuning.written_align_cosine * float(cos)
                   for text, cos in zip(self._chunk_sentences(chunk), cosines))

    def source(self, sentence: str, chunk_id: str) -> str:
        """The sentence of that chunk that says most nearly what `sentence` says."""
        chunk = next(c for c in self.chunks if c["chunk_id"] == chunk_id)
        return self.saying(sentence, self.embed([sentence])[0], [chunk])[0]

    def check(self, sentence: str, prefer: list[str] = ()) -> Verdict:
        """The chunk that supports `sentence`: one of `prefer` (the ones it cites) when they do,
        else any of the checker's chunks. Decided by the learned model when there is one."""
        if self.model is not None:
            from .support_learned import decide
            return decide(self, sentence, prefer)
        return self.ruled(sentence, prefer)

    def ruled(self, sentence: str, prefer: list[str] = ()) -> Verdict:
        """The rules' decision: the closest chunk that holds the sentence's facts where they
        belong, is not contradicted, and is close in meaning. A rejection names the first reason
        met, in the order facts, negation, meaning."""
        if is_pleasantry(sentence):
            return Verdict(None, "pleasantry")
        own = term_set(sentence)
        if len(words(sentence)) < self.tuning.written_min_words:  # "4." or "Yes." states nothing checkable
            return Verdict(None, "empty")
        facts = Facts.of(sentence, self.tuning.unit_words)
        parts = vectors = None
        best, refusals = None, []
        about = [c for c in self.chunks if len(own & term_set(c["text"])) / len(own) >= self.tuning.written_paraphrase_floor]
        if about:
            parts, vectors = self.parts(sentence)
            if flips(sentence, self.evidence(sentence, vectors[sentence], about), self.tuning.negation_scope):
                return Verdict(None, "negation")
        for chunk in sorted(self.chunks, key=lambda c: c["chunk_id"] not in prefer):
            missing = facts.missing_from(chunk["text"], self.tuning.unit_words)
            lexical = len(own & term_set(chunk["text"])) / len(own)
            if missing or lexical < self.tuning.written_paraphrase_floor:
                refusals.append((0.0, "facts: " + ", ".join(missing[:3]) if missing else "meaning"))
                continue
            if vectors is None:
                parts, vectors = self.parts(sentence)
            closeness = self.closeness(vectors[sentence], chunk)
            astray = self.placement(parts, vectors, chunk).reason
            if astray:  # "12 weeks of parental leave": 12 is the chunk's, but of "within 12 months"
                refusals.append((closeness, "facts: " + astray))
            elif lexical >= self.tuning.written_lexical_support or closeness >= self.tuning.written_semantic_support:
                verdict = Verdict(chunk["chunk_id"], "supported", closeness)
                best = verdict if best is None or (chunk["chunk_id"] in prefer, closeness) > (
                    best.chunk_id in prefer, best.closeness) else best
            else:
                refusals.append((closeness, "meaning"))
        if best is not None:
            return best
        closeness, reason = max(refusals, key=lambda r: (r[0], r[1] != "meaning"), default=(0.0, "meaning"))
        return Verdict(None, reason, closeness)


def judge(checker: SupportChecker, text: str, prefer: list[str], subject: set[str]) -> Verdict:
    """One written sentence: supported by a chunk, and, in a follow-up, resting on a sentence of
    it that holds a word of the borrowed `subject` (validate_grounding's judgement, and the
    same while an answer streams)."""
    verdict = checker.check(text, prefer)
    if verdict.kept and subject and not subject & term_set(checker.source(text, verdict.chunk_id)):
        return Verdict(None, "another subject", verdict.closeness)
    return verdict
