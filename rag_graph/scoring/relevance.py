"""How well a chunk answers a query, in numbers that can be explained: cosine similarity from
the embedding, and the share of the query's (rarity-weighted) terms the chunk contains.

LanceDB's fused hybrid score is rank-based and min-max normalised per query, so it orders a
result list but says nothing absolute; these measures do."""
from __future__ import annotations

import re

from ..tuning import DEFAULT, Tuning
from ..language.words import WRITTEN_WORD, idf, terms, terms_held


# Phrases that ask for a description of their subject and name nothing a document would write:
# "what does a cycle look like?" is about a cycle, and no section on cycles says "look".
_DESCRIBE = re.compile(r"\blooks? like\b|\bwhat(?:'s|’s| is) the (?:deal|story) with\b|\btell me (?:more )?about\b", re.I)


def query_weights(query: str, vocabulary: tuple[dict[str, int], int]) -> dict[str, float]:
    """Rarity weight of each of the query's terms. A hyphenated word the corpus never writes
    joined ("part-time" where documents say "part time") counts as its parts only: its joined
    form would be a word no chunk can contain, the rarest term of the query and a false gap."""
    frequency, total = vocabulary
    query = _DESCRIBE.sub(" ", query)
    unwritten = {t for word in WRITTEN_WORD.findall(query) if "-" in word for t in terms(word.replace("-", ""))
                 if t not in frequency}
    return {term: idf(frequency.get(term, 0), total) for term in dict.fromkeys(terms(query))
            if term not in unwritten}


def relevance_scores(query: str, chunks: list[dict], vocabulary, tuning: Tuning = DEFAULT) -> list[dict]:
    """Copies of the chunks with `coverage` and `relevance` added, best first (tuning.relevance_weights)."""
    weight = tuning.relevance_weights
    weights = query_weights(query, vocabulary)
    total = sum(weights.values()) or 1.0
    best_keyword = max([float(c.get("keyword_score") or 0.0) for c in chunks] + [1e-9])
    scored = []
    for chunk in chunks:
        have = terms_held(query, chunk["text"])
        coverage = sum(w for t, w in weights.items() if t in have) / total
        similarity = float(chunk.get("similarity") or 0.0)
        keyword = float(chunk.get("keyword_score") or 0.0) / best_keyword
        relevance = weight[0] * similarity + weight[1] * coverage + weight[2] * keyword
        scored.append({**chunk, "coverage": round(coverage, 4), "relevance": round(relevance, 4)})
    return sorted(scored, key=lambda c: (-c["relevance"], -int(c.get("authority") or 0),
                                         _descending(c.get("effective_date") or "")))


def by_relevance(chunks: list[dict]) -> list[dict]:
    """The chunks in order of relevance, whatever order late interaction gave them (stable:
    ties keep their rank)."""
    return sorted(chunks, key=lambda c: -float(c.get("relevance") or 0.0))


def _descending(date: str) -> str:
    return "".join(chr(0x10FFFF - ord(ch)) for ch in date)
