"""The signals the flow computes about a candidate chunk, as one row of numbers per chunk: what
`citebot tune` fits a chunk ranker on and measures it with against the hand weights (no fit has
beaten them on held-out corpora yet, so the flow ranks by `scoring.late.standing`).

Two steps, so the training set can be cached and re-read: `signals` measures each chunk against
the question (similarity, words held, BM25, late interaction, headings; the costly part), and
`rows` turns a list of those measures into the feature rows, some of them relative to the best
of the list (a chunk's similarity minus the best similarity of the candidates: the scale of
cosine differs between corpora, a lead over the others less so)."""
from __future__ import annotations

import math
import re

from ..language.words import terms_held, weighted_coverage
from .late import late_interaction
from .missing import subject_weights
from .relevance import query_weights

# The order of the columns a ranker's coefficients are fitted on.
FEATURES = (
    "similarity", "coverage", "subject_coverage", "keyword", "late", "relevance", "fused",
    "title_match", "section_match", "first_in_section", "log_chars", "number_wanted_held",
    "similarity_gap", "late_gap", "coverage_gap", "relevance_gap",
)

# "how many / much / long / often…": the answer is a number, a duration or an amount.
_ASKS_NUMBER = re.compile(r"\bhow (?:many|much|long|often|soon|far|early|late)\b|\bwhat (?:is|'s) the (?:limit|cap|"
                          r"maximum|minimum|rate|amount)\b", re.I)
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty)\b", re.I)


def signals(query: str, chunks: list[dict], vocabulary, embedder) -> list[dict]:
    """The raw measures of each chunk against the query (chunks as `relevance_scores` returns
    them: with `similarity`, `coverage`, `relevance` and the search's `keyword_score` and
    fused `score`). Late interaction is computed where the chunk has none yet."""
    weights = query_weights(query, vocabulary)
    subject = subject_weights(query, vocabulary) or weights
    missing = [i for i, c in enumerate(chunks) if c.get("late") is None]
    late = dict(zip(missing, late_interaction(query, [chunks[i] for i in missing], embedder))) if missing else {}
    number = bool(_ASKS_NUMBER.search(query))
    measured = []
    for i, chunk in enumerate(chunks):
        section = chunk.get("section") or ""
        measured.append({
            "similarity": float(chunk.get("similarity") or 0.0),
            "coverage": float(chunk.get("coverage") or 0.0),
            "subject_coverage": weighted_coverage(subject, terms_held(query, chunk["text"])),
            "keyword_score": float(chunk.get("keyword_score") or 0.0),
            "late": float(chunk["late"] if chunk.get("late") is not None else late[i]),
            "relevance": float(chunk.get("relevance") or 0.0),
            "fused": float(chunk.get("score") or 0.0),
            "title_match": weighted_coverage(weights, terms_held(query, chunk.get("title") or "")),
            "section_match": weighted_coverage(weights, terms_held(query, section.split("›")[-1])),
            "chunk_index": int(chunk.get("chunk_index") or 0),
            "chars": len(chunk.get("body") or chunk["text"]),
            "number_wanted_held": float(number and bool(_NUMBER.search(chunk.get("body") or chunk["text"]))),
        })
    return measured


def rows(measured: list[dict]) -> list[list[float]]:
    """One feature row per chunk, in the order of FEATURES."""
    if not measured:
        return []
    best = {name: max(m[name] for m in measured) for name in ("similarity", "late", "coverage", "relevance")}
    top_keyword = max(m["keyword_score"] for m in measured) or 1.0
    return [[
        m["similarity"], m["coverage"], m["subject_coverage"], m["keyword_score"] / top_keyword, m["late"],
        m["relevance"], m["fused"], m["title_match"], m["section_match"], float(m["chunk_index"] == 0),
        math.log1p(m["chars"]) / 10, m["number_wanted_held"],
        m["similarity"] - best["similarity"], m["late"] - best["late"], m["coverage"] - best["coverage"],
        m["relevance"] - best["relevance"],
    ] for m in measured]
