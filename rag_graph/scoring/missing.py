"""What the evidence is silent about: the question's weighty words that no chunk holds, unless the
evidence says them in other words."""
from __future__ import annotations

import re

import numpy as np

from ..language.lexicon import FRAME_WORDS
from ..language.markdown import sentences
from ..language.subject import names_a_subject, unknown_word
from ..language.words import STOPWORDS, WRITTEN_WORD, terms, terms_held
from ..language.words import words as _words  # foreign_terms has a list named words
from ..tuning import DEFAULT, Tuning
from .relevance import query_weights

# What the asker does ("when do I hit…", "before I buy…", "I have to sign…"): the word after a
# personal pronoun or after "want to", "have to"…. Documents say it in their own words ("hit the
# max" is "max out"), so it is neither the question's subject nor a gap. A modal is no cue:
# "can contractors…" puts the subject after it.
_ASKER_DOES = re.compile(r"\b(?:i|we|you|they|he|she|(?:want|need|have|has|going|able|allowed|ok|okay|supposed|"
                         r"expected|how|plan|try) to)\s+(?=([a-z]+)\b)", re.I)


def subject_weights(query: str, vocabulary) -> dict[str, float]:
    """The query's term weights without the words that frame it or say what the asker does."""
    does = {t for word in _ASKER_DOES.findall(query) for t in terms(word)}
    return {t: w for t, w in query_weights(query, vocabulary).items() if t not in FRAME_WORDS and t not in does}


def uncovered_terms(query: str, chunks: list[dict], vocabulary, tuning: Tuning = DEFAULT) -> list[str]:
    """Query words that carry real weight yet occur in none of the chunks."""
    weights = subject_weights(query, vocabulary)
    total = sum(weights.values()) or 1.0
    seen = set().union(*(terms_held(query, c["text"]) for c in chunks)) if chunks else set()
    stems = [t for t, w in weights.items() if t not in seen and w / total >= tuning.uncovered_share]
    originals = {}  # each stem as the asker wrote it, "wi-fi" included
    for token in WRITTEN_WORD.findall(query.lower()):
        for word in (token, *token.split("-")):
            for t in stems:
                if terms(word.replace("-", "")) == [t]:
                    originals.setdefault(t, word)
    return [originals.get(t, t) for t in stems]


def foreign_terms(question: str, search_query: str, chunks: list[dict], vocabulary, embedder,
                  tuning: Tuning = DEFAULT) -> list[str]:
    """The subject the evidence is silent about ("contractors" in a question about contractors'
    remote work): a weighty question word that no top chunk contains and whose removal brings
    the query *closer* to the best chunk. A synonym the documents phrase differently ("PTO" for
    paid time off) moves the query away when removed, so it does not count as missing."""
    words = [word for word in uncovered_terms(question, chunks, vocabulary, tuning) if names_a_subject(word, question)]
    if not words:
        return []
    # A word neither the corpus nor the dictionary knows, written in lower case, is a misspelling
    # of something the corpus lacks ("sabatical"): no vector can say what it is close to.
    unknown = [word for word in words if unknown_word(word, question, vocabulary[0])]
    words = [word for word in words if word not in unknown]
    reduced = [re.sub(rf"\b{re.escape(word)}\b", " ", search_query, flags=re.I) for word in words]
    best = embedder.encode_passages([chunks[0]["text"]])[0]
    closeness = float(embedder.encode_query(search_query) @ best)
    # Queries, cached as queries: the grounding check asks again about the words the answer left
    # behind, and the reduced queries are the same texts (the model's vectors are the same bits).
    without = embedder.encode_queries(reduced) @ best if reduced else []
    foreign = unknown + [word for word, then in zip(words, without) if float(then) - closeness > tuning.foreign_margin]
    return [word for word in foreign if not has_synonym(word, chunks, embedder, tuning)]


def has_synonym(word: str, chunks: list[dict], embedder, tuning: Tuning = DEFAULT) -> bool:
    """The evidence says it in other words: a word close to the missing one, in the sentences
    of the top chunks nearest to it. Sentence vectors were stored at index time; only the
    words of those few sentences are encoded, not every word of the chunks."""
    target = embedder.encode_query(word)
    parts = list(dict.fromkeys(s for c in chunks for s in sentences(c.get("body") or c["text"])))
    if parts:
        nearest = np.argsort(-(embedder.encode_passages(parts) @ target))[:tuning.synonym_sentences]
        parts = [parts[i] for i in nearest]
    vocabulary = sorted({w for s in parts for w in _words(s) if w not in STOPWORDS and len(w) > 2
                         and not w[0].isdigit()})
    if not vocabulary:
        return False
    closeness = embedder.encode_quick(vocabulary) @ target  # int8: within ~0.01 of exact, the bar is 0.6
    return float(closeness.max()) >= tuning.synonym
