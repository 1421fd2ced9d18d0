"""The int8 graph for texts measured against a wide bar (rag_graph/retrieval/onnx_encoder.py `_quick`,
`Embedder.encode_quick`: the synonym check's words) gives vectors close to the exact graph's; the
index's vectors, the question's own and every other passage stay exact; a form that strays is
never used."""
from __future__ import annotations

import numpy as np
import pytest

from rag_graph.retrieval import embeddings, onnx_encoder
from rag_graph.retrieval.embeddings import Embedder
from rag_graph.retrieval.onnx_encoder import OnnxEncoder

PASSAGES = [
    "Navigate to the Employment Data 2 tab. Your supervisor approves the request in HR Links.",
    "reimbursement",
    "You may carry over up to 240 hours of annual leave into the next year. " * 6,
    "Wi-Fi, VPN & the café: 12 % of £3,000 — ünïcödé",
]


def test_quick_texts_run_the_int8_graph_and_the_index_questions_and_passages_the_exact_one(embedder, vnni):
    quick = Embedder(embedder.model_name)
    exact = quick.encode(PASSAGES)  # the default: the index's way
    if quick._onnx.quick is None and not vnni:
        assert np.array_equal(quick.encode_quick(PASSAGES), exact), "refused here: the exact graph serves"
        pytest.skip("this CPU has no VNNI and its int8 form was refused; the exact graph serves every call")
    assert quick._onnx.quick is not None, "the default model has an int8 form on a CPU with VNNI"
    assert np.array_equal(exact, quick._onnx.encode(PASSAGES, 64, exact=True))
    measured = quick.encode_quick(PASSAGES)
    agreement = (measured * exact).sum(axis=1)
    assert agreement.min() >= onnx_encoder._QUICK_AGREEMENT, agreement
    assert not np.allclose(measured, exact, atol=1e-4), "the passages did not run the int8 graph"
    assert np.array_equal(quick.encode_passages(PASSAGES), exact), "an int8 vector is never handed out as exact"
    question = "Who approves my travel request?"
    assert np.array_equal(quick.encode_query(question), quick.encode([question])[0]), "a question stays exact"
    chunks, _, _ = quick.encode_chunks(PASSAGES, [[] for _ in PASSAGES])
    assert np.allclose((chunks * exact).sum(axis=1), 1.0, atol=1e-6), "an index build stays exact"


@pytest.fixture(scope="module")
def st_model(embedder):
    """The sentence-transformers model itself (torch), to export from."""
    return embeddings._open_model(embedder.model_name)


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEBOT_CACHE", str(tmp_path))
    return tmp_path / "onnx"


def test_an_int8_form_that_strays_from_the_exact_graph_is_never_used(embedder, st_model, own_cache, monkeypatch):
    """One scale per weight matrix instead of one per column: cosine 0.79 on the long probe."""
    from onnxruntime import quantization

    real = quantization.quantize_dynamic
    monkeypatch.setattr(quantization, "quantize_dynamic", lambda *a, **k: real(*a, **{**k, "per_channel": False}))
    encoder = OnnxEncoder.load(st_model, embedder.model_name)
    assert encoder is not None and encoder.quick is None, "the exact graph serves every call"
    assert sorted(path.name.split(".", 1)[1] for path in own_cache.iterdir()) == [
        "int8.disagrees", "json", "onnx", "tokenizer.json"], "marked, so it is not made again every start"
    assert np.array_equal(encoder.encode(PASSAGES, 64, exact=False), encoder.encode(PASSAGES, 64))
    assert OnnxEncoder.cached(embedder.model_name).quick is None


def test_a_damaged_int8_form_is_removed_and_made_again(embedder, st_model, own_cache, vnni):
    first = OnnxEncoder.load(st_model, embedder.model_name)
    if first.quick is None and not vnni:
        pytest.skip("this CPU has no VNNI and its int8 form was refused: no int8 file to damage")
    made = next(own_cache.glob("*.int8.onnx"))
    expected = first.encode(PASSAGES, 64, exact=False)
    made.write_bytes(b"cut short")
    served = OnnxEncoder.cached(embedder.model_name)
    assert served.quick is None and not made.exists(), "a damaged form is not used, and removed"
    assert np.array_equal(served.encode(PASSAGES, 64, exact=False), served.encode(PASSAGES, 64))
    again = OnnxEncoder.cached(embedder.model_name)
    assert again.quick is not None and np.array_equal(again.encode(PASSAGES, 64, exact=False), expected)
