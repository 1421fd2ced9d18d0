"""The learned accept/drop decision over the support check's signals (answer/support.py).

The rules measure a written sentence against each chunk: the share of its words the chunk holds,
its cosine to the chunk's closest sentence, how well each of its windows aligns to a unit of the
chunk, the numbers and names it puts where the chunk does not, whether it takes a parallel
unit's place, whether it states what the nearest evidence only negates. The hand rules turn those
into thresholds one at a time; a logistic regression fitted by `citebot tune --grounding`
(rag_graph/tools/tune_grounding.py) weighs them together, and the flow reads its coefficients
from rag_graph/scoring/grounding.json (one dot product per candidate chunk, nothing fitted at
question time; a file fitted on other features is refused, as scoring/learned.py refuses any).

Rules stay in front of the model, as guards it may not overrule: a pleasantry or a fragment is
no claim; a chunk is a candidate only when it holds every number the sentence states (in any
unit of time: "5 minutes" is held by "300000 ms") and the share of the sentence's words that the
rules ask of a paraphrase (tuning.written_paraphrase_floor). The model decides among the rest.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..language.words import term_set, words
from ..scoring.learned import Linear, linear, model_file, read
from .support import Facts, SupportChecker, Verdict, flips, is_pleasantry, negated, quantities, unmatched

MODEL_FILE = "grounding.json"
# What the model weighs, per (sentence, candidate chunk). The first five are the sentence's own.
FEATURES = ("flip", "negation_pull", "negated", "claim_numbers", "claim_words",
            "lexical", "closeness", "sentence_fit", "unit_fit", "unshared",
            "missing_names", "missing_identifiers", "astray_numbers", "astray_names", "swaps")

_AUXILIARY = re.compile(r"\b(?:is|are|was|were|can|could|may|might|must|should|will|would|does|do|did|has|have|had)\b", re.I)
_UNSAY = ((re.compile(r"\bcannot\b", re.I), "can"), (re.compile(r"n[’']t\b", re.I), ""),
          (re.compile(r"\b(?:not|never|no)\s+", re.I), ""), (re.compile(r"\bwithout\b", re.I), "with"))


def toggled(sentence: str) -> str:
    """The sentence saying the opposite, as plainly as words allow: its first negation taken out,
    or a "not" put after its first auxiliary verb (a meaning-only flip, "disabled" for
    "enabled", is for the embedding to notice: `negation_pull`)."""
    if negated(sentence):
        for pattern, plain in _UNSAY:
            if pattern.search(sentence):
                return pattern.sub(plain, sentence, count=1)
    if _AUXILIARY.search(sentence):
        return _AUXILIARY.sub(lambda m: m.group(0) + " not", sentence, count=1)
    return "It is not true that " + sentence[:1].lower() + sentence[1:]


@dataclass(frozen=True)
class Measured:
    chunk_id: str
    values: dict  # FEATURES -> float
    closeness: float
    reason: str  # why the rules would reject it ("" when they would not say)


def measure(checker: SupportChecker, sentence: str) -> tuple[str, list[Measured]]:
    """(guard, candidates): the rule that drops the sentence before the model ("" if none), and
    each candidate chunk's measures."""
    if is_pleasantry(sentence):
        return "pleasantry", []
    own = term_set(sentence)
    if len(words(sentence)) < checker.tuning.written_min_words:
        return "empty", []
    facts = Facts.of(sentence, checker.tuning.unit_words)
    unit_words, floor = checker.tuning.unit_words, checker.tuning.written_paraphrase_floor
    candidates, refusals = [], []
    for chunk in checker.chunks:
        numbers = unmatched(facts.quantities, quantities(chunk["text"], unit_words, held=True))
        lexical = len(own & term_set(chunk["text"])) / len(own)
        if numbers or lexical < floor:
            refusals.append("facts: " + ", ".join(numbers[:3]) if numbers else "meaning")
        else:
            candidates.append((chunk, lexical))
    if not candidates:
        return (sorted(refusals, key=lambda r: r == "meaning")[0] if refusals else "meaning"), []
    parts, vectors = checker.parts(sentence)
    vector = vectors[sentence]
    about = [c for c in checker.chunks if len(own & term_set(c["text"])) / len(own) >= floor]
    nearest = checker.saying(sentence, vector, about)
    flip = flips(sentence, checker.evidence(sentence, vector, about), checker.tuning.negation_scope)
    evidence = checker.embed([nearest[0], toggled(sentence)])
    pull = float(evidence[1] @ evidence[0]) - float(vector @ evidence[0])
    shared = {"flip": float(flip), "negation_pull": pull, "negated": float(negated(sentence)),
              "claim_numbers": float(min(len(facts.quantities), 3)), "claim_words": min(len(own), 20) / 10}
    out = []
    for chunk, lexical in candidates:
        missing = Facts(frozenset(), facts.names, facts.identifiers).missing_from(chunk["text"], unit_words)
        names = sum(1 for n in facts.names if n in missing)
        placed = checker.placement(parts, vectors, chunk)
        closeness = checker.closeness(vector, chunk)
        values = {**shared, "lexical": lexical, "closeness": closeness, "sentence_fit": checker.nearest(sentence, vector, chunk),
                  "unit_fit": placed.fit, "unshared": float(min(len(own - term_set(chunk["text"])), 5)),
                  "missing_names": float(min(names, 3)), "missing_identifiers": float(min(len(missing) - names, 3)),
                  "astray_numbers": float(min(placed.numbers, 3)), "astray_names": float(min(placed.names, 3)),
                  "swaps": float(min(placed.swaps, 3))}
        reason = "negation" if flip else f"facts: {', '.join(missing[:3])}" if missing else (
            f"facts: {placed.reason}" if placed.reason else "meaning")
        out.append(Measured(chunk["chunk_id"], values, closeness, reason))
    return "", out


def row(values: dict) -> list[float]:
    return [float(values[name]) for name in FEATURES]


def decide(checker: SupportChecker, sentence: str, prefer: list[str] = ()) -> Verdict:
    """The model's verdict: the candidate it scores above even, one the sentence cites first,
    the best scored among them; else the best candidate's reason to reject."""
    guard, measured = measure(checker, sentence)
    if guard:
        return Verdict(None, guard)
    scores = checker.model.scores([row(m.values) for m in measured])
    best = max(range(len(measured)), key=lambda i: (bool(scores[i] > 0), measured[i].chunk_id in prefer, scores[i]))
    chosen = measured[best]
    if scores[best] > 0:
        return Verdict(chosen.chunk_id, "supported", chosen.closeness)
    return Verdict(None, chosen.reason, chosen.closeness)


@lru_cache(maxsize=2)
def _cached(path: str, stamp: float) -> Linear | None:
    data = read(path)
    model = linear(data, FEATURES, path)
    return model if data.get("chosen") == "learned" else None


def shipped() -> Linear | None:
    """The decision the flow uses: the fitted model when `citebot tune --grounding` chose it
    (it beat the rules on the sets it was not fitted on), else None (the rules decide)."""
    return _cached(*model_file(MODEL_FILE))
