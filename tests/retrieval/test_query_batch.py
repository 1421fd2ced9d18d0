"""A multi-part question's parts are encoded by one call of the model, before their searches:
the same vectors and tokens each part gets alone, one call's fixed cost instead of one a part."""
from __future__ import annotations

import numpy as np

from rag_graph.retrieval.embeddings import Embedder

PARTS = ["How many vacation days do I get?", "Who approves remote work?"]


def test_queries_known_together_are_encoded_by_one_call(embedder):
    batched = Embedder(embedder.model_name)
    calls, real = [], batched.token_vectors
    batched.token_vectors = lambda texts: calls.append(list(texts)) or real(texts)
    vectors = batched.encode_queries([PARTS[0], PARTS[1], PARTS[0]])
    assert calls == [PARTS]
    alone = Embedder(embedder.model_name)
    for text, vector in zip([PARTS[0], PARTS[1], PARTS[0]], vectors):
        assert np.array_equal(vector, alone.encode_query(text))
        assert np.array_equal(batched.query_tokens(text), alone.query_tokens(text))
    assert calls == [PARTS]  # the tokens came with the vectors


def test_a_multi_part_question_encodes_its_parts_in_one_call(engine, monkeypatch):
    engine.embedder.queries.clear()  # asked by another test of the session: encoded afresh here
    engine.embedder.query_token_cache.clear()
    seen, real = [], engine.embedder.token_vectors
    monkeypatch.setattr(engine.embedder, "token_vectors", lambda texts: seen.append(list(texts)) or real(texts))
    state = engine.run("How many vacation days do I get, and who approves remote work requests?")
    parts = state["sub_questions"]
    assert len(parts) == 2 and parts in seen, (parts, seen)
    assert not [texts for texts in seen if len(texts) == 1 and texts[0] in parts]  # never encoded alone again
