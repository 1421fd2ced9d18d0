"""Does a message in a thread continue the thread's subject, or start a new one? In a Slack DM or
a Teams personal chat every message is in one conversation: "I lost my YubiKey, what do I do?"
after a question on meal allowances asks about YubiKeys, and must be answered as if asked
alone; "when did she join?" needs the person the thread is about.

The signals of a turn, one row per turn (`row`), read by a logistic regression that
`citebot tune` fits on the dev half of the thread turns of eval/ (follow-ups and new subjects,
as the sets label them); `thread.json` beside this file holds it. The strongest signal is
whether the thread helps the search: asked with the last question (or answer) beside it, a
follow-up finds a closer passage than asked alone ("can I reserve one?" + "Where do I park?"),
a new subject finds the same passage or a worse one."""
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
                 "alone_similarity", "shared_words", "rarest_word", "unpointed_distance",
                 "question_gain", "answer_gain", "same_passage")

Best = Callable[[str], tuple[float, str | None]]  # a text -> the similarity and id of the best passage it finds
MODEL_FILE = Path(__file__).with_name("thread.json")


def own_words(question: str) -> list[str]:
    """The question's content words: neither stop words nor question words."""
    return [w for w in words(question) if w not in STOPWORDS and w not in QUESTION_WORDS]


def pointers(question: str) -> tuple[float, float, float]:
    """(opener, referring, personal): the words that point back ("and…", "it", "she")."""
    return (float(question.lower().startswith(FOLLOW_UP_OPENERS)), float(any(w in REFERRING for w in words(question))),
            float(bool(PERSONAL.search(question))))


def points_back(question: str) -> bool:
    """The gate of `continues`, read from the words alone: a turn with one keeps its thread
    whatever the search signals say, so they need not be measured."""
    return max(pointers(question)) > 0


def signals(question: str, history: list[dict], entities: int, closeness: Callable[[str, str], float],
            best: Best, vocabulary: tuple[dict[str, int], int]) -> dict[str, float]:
    """The turn's measures. `entities` is how many of the corpus's entities the question names,
    `closeness` the cosine of two texts, `best` the best passage a text finds (searched three
    times: the question alone, with the last question, with the last answer), `vocabulary` the
    corpus's (document frequencies, documents): the rarest of the question's words the corpus
    writes names a subject of its own ("YubiKey"). The thread is read as written (the last
    question and answer), not as resolved: a turn's reading must not depend on how the turns
    before it were read."""
    own = own_words(question)
    said = {w for turn in history for w in words(turn["content"])}
    asked, answered = (t["content"] if t else "" for t in (_last(history, "user"), _last(history, "assistant")))
    last = [text for text in (asked, answered) if text]
    alone, passage = best(question)
    with_question = best(f"{question} {asked}") if asked else (alone, passage)
    with_answer = best(f"{question} {answered}")[0] if answered else alone
    opener, referring, personal = pointers(question)
    return {
        "opener": opener,
        "referring": referring,
        "personal": personal,
        "own_words": float(len(own)),
        "names_entity": float(entities),
        "previous_closeness": max((closeness(question, text) for text in last), default=0.0),
        "alone_similarity": alone,
        "shared_words": sum(w in said for w in own) / len(own) if own else 1.0,
        "rarest_word": rarest(question, vocabulary),
        "question_gain": with_question[0] - alone,
        "answer_gain": with_answer - alone,
        "same_passage": float(passage is not None and with_question[1] == passage),
    }


def rarest(question: str, vocabulary: tuple[dict[str, int], int]) -> float:
    """The rarity (idf, on a 0-1 scale) of the rarest word of the question the corpus writes."""
    frequency, documents = vocabulary
    held = [frequency[t] for t in terms(question) if frequency.get(t)]
    return idf(min(held), documents) / idf(0, documents) if held and documents else 0.0


def measure(question: str, history: list[dict], gazetteer, embedder, search: Callable[[str], list[dict]],
            vocabulary: tuple[dict[str, int], int]) -> dict:
    """`signals` with the flow's own parts: the embedding model for closeness, `search` (a text
    -> its best rows) for the turn asked alone and with the thread, the corpus's gazetteer (or None)."""
    def closeness(a: str, b: str) -> float:
        return float(embedder.encode_query(a) @ embedder.encode_query(b))

    def best(text: str) -> tuple[float, str | None]:
        rows = search(text)
        return (float(rows[0]["similarity"]), rows[0].get("chunk_id")) if rows else (0.0, None)

    entities = len(gazetteer.mentions(question)) if gazetteer is not None else 0
    return signals(question, history, entities, closeness, best, vocabulary)


def row(measured: dict[str, float]) -> list[float]:
    """The model's input, in the order of TURN_FEATURES. A turn with nothing pointing back (no
    "and…", "it", "she") and far from the last question and answer is likely a new subject
    however few its words ("I lost my YubiKey, what do I do?"): a linear model cannot say
    "and" of two signals, so their combination is a feature of its own."""
    points_back = max(measured["opener"], measured["referring"], measured["personal"])
    return [measured["opener"], measured["referring"], measured["personal"], min(measured["own_words"], 8) / 8,
            min(measured["names_entity"], 3), measured["previous_closeness"], measured["alone_similarity"],
            measured["shared_words"], measured["rarest_word"], (1 - points_back) * (1 - max(measured["previous_closeness"], 0.0)),
            measured["question_gain"], measured["answer_gain"], measured["same_passage"]]


def _last(history: list[dict], role: str) -> dict | None:
    return next((t for t in reversed(history) if t["role"] == role and t["content"].strip()), None)


@lru_cache(maxsize=2)
def _cached(path: str, stamp: float) -> Linear:
    return linear(read(path), TURN_FEATURES, path)


def shipped() -> Linear:
    """The model the flow reads threads with (read once per file version)."""
    return _cached(*model_file(MODEL_FILE.name))


def continues(table_row: list[float], model: Linear | None = None) -> bool:
    """The turn carries the thread's subject: it has a word pointing back ("and…", "it",
    "she"), or the model's odds are above even. The words are a gate the model cannot overrule:
    they mean the same in every corpus, while the search signals move with a corpus's layout.
    Measured end to end with each corpus held out of the fit (answer recall / MRR of the
    questions with history): on npm, whose docs repeat each option on every command page, the
    model alone read "how do I turn that off?" and "does it work with dist-tags too?" as new
    subjects, .219 / .345 against the word rule's .312 / .471; with the gate .312 / .493."""
    if max(table_row[0], table_row[1], table_row[2]) > 0:  # opener, referring, personal (TURN_FEATURES)
        return True
    return float((model or shipped()).scores([table_row])[0]) > 0.0
