"""What the offline answer writer knows about each sentence of its pool, measured in one place:
the signals `scoring.sentences` turns into a model's rows, which `rag_graph.tools.sentence_labels`
stores for `citebot tune` to fit and measure a sentence scorer on."""
from __future__ import annotations

from ..language.markdown import LIST_ITEM, is_code
from ..language.question import Question, read
from ..language.words import terms, weighted_coverage
from ..scoring.late import standing
from ..scoring.relevance import by_relevance
from ..tuning import Tuning
from .passages import ABOUT_THE_PAGE, EXAMPLE, LEANS_BACK, POINTER, Candidate


def measured_pool(writer, question: Question | str, context: list[dict]) -> tuple[list[Candidate], list[dict]]:
    """The pool the offline writer (`ExtractiveGenerator`) chooses its best sentence from, in
    the order of the word score, and what is measured about each of its sentences."""
    question = read(question)
    weights = writer._weights(question)
    candidates = writer._candidates(question, context, weights)
    if not candidates:
        return [], []
    pool, similarity, late = writer.scored_pool(question, candidates, context)
    return pool, measure(question, pool, context, weights, similarity, late, writer.tuning)


def measure(question: Question, pool: list[Candidate], context: list[dict], weights: dict[str, float],
            similarity: list[float], late: list[float], tuning: Tuning) -> list[dict]:
    """One record per pool sentence (in pool order): its hand score and the signals it is made
    of, and what kind of sentence it is."""
    chunks = {c["chunk_id"]: c for c in context}
    place = {c["chunk_id"]: at for at, c in enumerate(by_relevance(context))}
    asked = set(terms(question.own))
    own = {t: w for t, w in weights.items() if t in asked} or weights
    return [{
        "hand": c.score, "lexical": c.lexical,
        "coverage": weighted_coverage(weights, c.terms), "own_coverage": weighted_coverage(own, c.terms),
        "heading": weighted_coverage(weights, c.heading - c.terms),
        "similarity": float(s), "late": float(l),
        "chunk_rank": c.rank, "relevance_place": place.get(c.chunk_id, c.rank),
        "standing": standing(chunks[c.chunk_id], tuning) if c.chunk_id in chunks else 0.0,
        "position": c.position, "chars": len(c.text), "typed": c.typed, "titled": c.titled,
        "list_item": bool(LIST_ITEM.match(c.text)), "tabular": c.tabular, "code": is_code(c.text),
        "with_list": c.last != c.position, "lead_in": bool(c.lead_in),
        "pointer": bool(POINTER.match(c.text) or ABOUT_THE_PAGE.match(c.text)),
        "example": bool(EXAMPLE.match(c.text)), "leans_back": bool(LEANS_BACK.match(c.text)),
    } for c, s, l in zip(pool, similarity, late)]
