"""Does a message in a thread continue the thread's subject, or start a new one? In a Slack DM or
a Teams personal chat every message is in one conversation: "I lost my YubiKey, what do I do?"
after a question on meal allowances asks about YubiKeys, and must be answered as if asked
alone; "when did she join?" needs the person the thread is about.

The signals of a turn, one row per turn (`row`), read by a logistic regression that
`citebot tune` fits on the thread turns of eval/ (written as follow-ups) and on the same sets'
stand-alone questions asked after another thread's turns (new subjects); `thread.json`
beside this file holds it."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..language.lexicon import QUESTION_WORDS, REFERRING
from ..language.words import STOPWORDS, idf, terms, words
from .learned import Linear, linear, model_file, read

FOLLOW_UP_OPENERS = ("and ", "what about", "how about", "what if", "same for", "also ", "or ",
                     "but ", "then ", "so ")
PERSONAL = re.compile(r"\b(she|he|her|him|his|hers)\b", re.I)

TURN_FEATURES = ("opener", "referring", "personal", "own_words", "names_entity", "previous_closeness",
                 "alone_similarity", "shared_words", "rarest_word", "unpointed_distance")
MODEL_FILE = Path(__file__).with_name("thread.json")


def own_words(question: str) -> list[str]:
    """The question's content words: neither stop words nor question words."""
    return [w for w in words(question) if w not in STOPWORDS and w not in QUESTION_WORDS]


def signals(question: str, history: list[dict], entities: int, closeness: Callable[[str, str], float],
            alone: Callable[[str], float], vocabulary: tuple[dict[str, int], int]) -> dict[str, float]:
    """The turn's measures. `entities` is how many of the corpus's entities the question names,
    `closeness` the cosine of two texts, `alone` the similarity of the best chunk the question
    finds when searched alone, `vocabulary` the corpus's (document frequencies, documents): the
    rarest of the question's words the corpus writes names a subject of its own ("YubiKey"). The thread is read as written (the last question and answer),
    not as resolved: a turn's reading must not depend on how the turns before it were read."""
    own = own_words(question)
    said = {w for turn in history for w in words(turn["content"])}
    last = [t["content"] for t in (_last(history, "user"), _last(history, "assistant")) if t]
    return {
        "opener": float(question.lower().startswith(FOLLOW_UP_OPENERS)),
        "referring": float(any(w in REFERRING for w in words(question))),
        "personal": float(bool(PERSONAL.search(question))),
        "own_words": float(len(own)),
        "names_entity": float(entities),
        "previous_closeness": max((closeness(question, text) for text in last), default=0.0),
        "alone_similarity": alone(question),
        "shared_words": sum(w in said for w in own) / len(own) if own else 1.0,
        "rarest_word": rarest(question, vocabulary),
    }


def rarest(question: str, vocabulary: tuple[dict[str, int], int]) -> float:
    """The rarity (idf, on a 0-1 scale) of the rarest word of the question the corpus writes."""
    frequency, documents = vocabulary
    held = [frequency[t] for t in terms(question) if frequency.get(t)]
    return idf(min(held), documents) / idf(0, documents) if held and documents else 0.0


def measure(question: str, history: list[dict], gazetteer, embedder, search: Callable[[str], list[dict]],
            vocabulary: tuple[dict[str, int], int]) -> dict:
    """`signals` with the flow's own parts: the embedding model for closeness, `search` (the
    question -> its best rows) for the turn asked alone, the corpus's gazetteer (or None)."""
    def closeness(a: str, b: str) -> float:
        return float(embedder.encode_query(a) @ embedder.encode_query(b))

    def alone(text: str) -> float:
        rows = search(text)
        return float(rows[0]["similarity"]) if rows else 0.0

    entities = len(gazetteer.mentions(question)) if gazetteer is not None else 0
    return signals(question, history, entities, closeness, alone, vocabulary)


def row(measured: dict[str, float]) -> list[float]:
    """The model's input, in the order of TURN_FEATURES. A turn with nothing pointing back (no
    "and…", "it", "she") and far from the last question and answer is likely a new subject
    however few its words ("I lost my YubiKey, what do I do?"): a linear model cannot say
    "and" of two signals, so their combination is a feature of its own."""
    points_back = max(measured["opener"], measured["referring"], measured["personal"])
    return [measured["opener"], measured["referring"], measured["personal"], min(measured["own_words"], 8) / 8,
            min(measured["names_entity"], 3), measured["previous_closeness"], measured["alone_similarity"],
            measured["shared_words"], measured["rarest_word"], (1 - points_back) * (1 - max(measured["previous_closeness"], 0.0))]


def _last(history: list[dict], role: str) -> dict | None:
    return next((t for t in reversed(history) if t["role"] == role and t["content"].strip()), None)


@lru_cache(maxsize=2)
def _cached(path: str, stamp: float) -> Linear:
    return linear(read(path), TURN_FEATURES, path)


def shipped() -> Linear:
    """The model the flow reads threads with (read once per file version)."""
    return _cached(*model_file(MODEL_FILE.name))


def continues(table_row: list[float], model: Linear | None = None) -> bool:
    """The turn carries the thread's subject (the model's odds are above even)."""
    return float((model or shipped()).scores([table_row])[0]) > 0.0
