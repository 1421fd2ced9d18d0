"""The odds that an answer about to be given is wrong, from what the flow knows when it answers:
a logistic regression fitted on answered dev replies a person judged right or wrong
(`eval/judged/replies-dev.jsonl`) by `python -m rag_graph.tools.wrong_answers --fit`, shipped as
`doubt.json` beside this module with its threshold, the command, a hash of its training data and
its figures with each corpus left out.

Above the threshold the flow gives the answer hedged (flow/nodes/finalize.py): its quote and
sources as always, with "I'm not sure this answers your question" said first. A decline cost
too many right answers (docs/measuring.md); a hedge costs a right answer one line, and warns
the asker of a wrong one. The signals are the evidence's (how far the lead stands out over the next
chunk by relevance and by late interaction: a wrong answer's lead mostly does not), the
answer's (how much of the question its words hold) and the thread's (words a follow-up
borrowed); no single one separates wrong from right (docs/measuring.md, "Judged replies")."""
from __future__ import annotations

import math
from functools import lru_cache

from ..language.words import terms_held, weighted_coverage
from .features import signals
from .learned import Linear, ModelError, linear, model_file, read
from .missing import subject_weights
from .relevance import by_relevance, query_weights

MODEL_FILE = "doubt.json"
FIT_COMMAND = "python -m rag_graph.tools.wrong_answers --out .citebot/labels --db DIR --fit"
# The order of the columns the model's coefficients are fitted on. Not whether the question has a
# thread: a new subject inside a thread must be answered as if asked alone; the words a
# follow-up borrowed ("borrowed") say what the thread changed.
FEATURES = (
    "confidence", "similarity", "coverage", "subject_coverage", "relevance", "relevance_margin",
    "late", "late_margin", "cited_rank", "citations", "cited_sources", "retrieval_attempts",
    "rewrite_used", "borrowed", "parts", "contradictory", "grounded",
    "answer_coverage", "answer_subject_coverage", "answer_chars", "section_match", "title_match",
)


def measure(state: dict, output: dict, vocabulary, embedder) -> dict[str, float]:
    """FEATURES of an answer: `output` the final_output it is about to go out as, `state` the
    flow's state it was written in."""
    ranked = state.get("ranked_chunks") or []
    query = state.get("retrieval_query") or state.get("normalized_query") or ""
    question = state.get("question")
    own = question.own if question is not None else state.get("normalized_query") or ""
    judged = by_relevance(ranked)
    best = judged[0] if judged else {}
    second = judged[1] if len(judged) > 1 else {}
    late = [float(c["late"]) for c in ranked[:2] if c.get("late") is not None]
    # Every chunk cited, as the model was fitted on (a citation now stands for a section and
    # lists its chunks in `chunk_ids`).
    cited = [i for c in output["citations"] for i in (c.get("chunk_ids") or [c["chunk_id"]])]
    order = [c["chunk_id"] for c in ranked]
    first = next((c for c in state.get("context") or [] if cited and c["chunk_id"] == cited[0]), None)
    heading = signals(query, [first], vocabulary, embedder)[0] if first else {}
    held = terms_held(own, output["answer"])
    return {
        "confidence": float(output["confidence"]),
        "similarity": float(best.get("similarity") or 0), "coverage": float(best.get("coverage") or 0),
        "subject_coverage": weighted_coverage(subject_weights(query, vocabulary), terms_held(query, best.get("text", ""))),
        "relevance": float(best.get("relevance") or 0),
        "relevance_margin": float(best.get("relevance") or 0) - float(second.get("relevance") or 0),
        "late": late[0] if late else 0.0, "late_margin": late[0] - late[1] if len(late) == 2 else 0.0,
        "cited_rank": float(order.index(cited[0]) if cited and cited[0] in order else len(order)),
        "citations": float(len(cited)), "cited_sources": float(len({c["source_id"] for c in output["citations"]})),
        "retrieval_attempts": float(output["retrieval_attempts"]), "rewrite_used": float(bool(state.get("query_rewrites"))),
        "borrowed": float(bool(question is not None and question.carried)),
        "parts": float(len(state.get("sub_questions") or [])),
        "contradictory": float(state.get("context_quality") == "contradictory"),
        "grounded": float(output["grounding_status"] == "grounded"),
        "answer_coverage": weighted_coverage(query_weights(own, vocabulary), held),
        "answer_subject_coverage": weighted_coverage(subject_weights(own, vocabulary), held),
        "answer_chars": math.log1p(len(output["answer"])),
        "section_match": float(heading.get("section_match", 0)), "title_match": float(heading.get("title_match", 0)),
    }


class Doubt:
    """The fitted model and the odds above which an answer is given hedged."""

    def __init__(self, model: Linear, threshold: float):
        self.model, self.threshold = model, threshold

    def odds(self, measured: dict[str, float]) -> float:
        score = float(self.model.scores([[measured[name] for name in FEATURES]])[0])
        return 0.5 * (1.0 + math.tanh(score / 2))  # the logistic function, without overflow at any score

    def doubts(self, measured: dict[str, float]) -> bool:
        # Signals that are no numbers (a retriever's garbage) leave odds of NaN: doubted, not trusted.
        return not self.odds(measured) <= self.threshold


@lru_cache(maxsize=2)
def _cached(path: str, stamp: float) -> Doubt:
    data = read(path)
    threshold = data.get("threshold")
    if not isinstance(threshold, (int, float)) or not 0 < threshold < 1:
        raise ModelError(f"{path}: `threshold` must be odds between 0 and 1")
    return Doubt(linear(data, FEATURES, path, refit=FIT_COMMAND), float(threshold))


def shipped() -> Doubt:
    """The model the flow reads (read once per file version)."""
    return _cached(*model_file(MODEL_FILE))
