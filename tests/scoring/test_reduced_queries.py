"""The question without each word the evidence lacks (scoring/missing.foreign_terms) is encoded
once a question: the grounding check asks again about the words the answer left behind, with
the same reduced queries, and gets the vectors of those very texts, bit for bit what the model
gives each alone."""
from __future__ import annotations

import numpy as np

from rag_graph.language.words import term_set
from rag_graph.retrieval.checked_embedder import checked
from rag_graph.retrieval.embeddings import Embedder
from rag_graph.scoring.missing import foreign_terms

DOCUMENTS = [
    "Employees may work remotely up to three days a week with their manager's approval.",
    "Remote work requests are approved by your manager and recorded in the HR system.",
    "The office is open from 8 am to 6 pm on weekdays.",
    "Contractors are paid monthly against the invoice they send.",
    "Pets are not allowed in the office, except for service animals.",
]
QUESTION = "Can contractors bring their parrots when they work remotely?"


def _vocabulary() -> tuple[dict[str, int], int]:
    frequency: dict[str, int] = {}
    for text in DOCUMENTS:
        for term in term_set(text):
            frequency[term] = frequency.get(term, 0) + 1
    return frequency, len(DOCUMENTS)


def _counted(embedder: Embedder, monkeypatch) -> list[list[str]]:
    """Every batch of texts the model runs from now on (exact and int8 graphs alike; the
    process's embedders share one encoder)."""
    embedder._load()
    calls, encoder = [], embedder._onnx
    real = encoder.token_vectors
    monkeypatch.setattr(encoder, "token_vectors",
                        lambda texts, *args, **kwargs: calls.append(list(texts)) or real(texts, *args, **kwargs))
    return calls


def test_the_reduced_queries_of_a_question_are_encoded_once_and_are_each_text_s_own(embedder, monkeypatch):
    evidence = [{"text": DOCUMENTS[0], "body": DOCUMENTS[0]}, {"text": DOCUMENTS[1], "body": DOCUMENTS[1]}]
    mine = Embedder(embedder.model_name)
    calls = _counted(mine, monkeypatch)
    first = foreign_terms(QUESTION, QUESTION, evidence, _vocabulary(), checked(mine))
    # "contractors" and "parrots" are both missing from the evidence: the question without each
    reduced = {text for batch in calls for text in batch if text.startswith("Can ") and text != QUESTION}
    assert len(reduced) == 2, calls
    calls.clear()
    again = foreign_terms(QUESTION, QUESTION, evidence, _vocabulary(), checked(mine))
    assert again == first
    assert not calls, calls  # the grounding check's second look runs the model for nothing

    alone = Embedder(embedder.model_name)  # each reduced query's vector, as foreign_terms reads it again,
    texts = sorted(reduced)                 # is the one its own text gets alone
    vectors = checked(mine).encode_queries(texts)
    assert not calls
    for text, vector in zip(texts, vectors):
        assert np.array_equal(vector, alone.encode([text])[0]), text
