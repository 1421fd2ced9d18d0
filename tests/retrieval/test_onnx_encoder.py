"""The embedding model run by ONNX Runtime (rag_graph/onnx_encoder.py): the same vectors as
sentence-transformers' own torch pass, for queries, long chunks and the sentences of a chunk,
and torch again whenever the exported graph cannot be trusted."""
from __future__ import annotations

import numpy as np
import pytest

from rag_graph.retrieval import embeddings
from rag_graph.retrieval.embeddings import Embedder, all_cores
from rag_graph.retrieval.onnx_encoder import OnnxEncoder

TEXTS = [
    "Who approves my travel request?",
    "  pto  ",  # sentence-transformers strips before tokenizing; so must we
    "Annual leave › Carry-over\n\nYou may carry over up to 240 hours of annual leave into the next year. " * 12,
    "Wi-Fi, VPN & the café: 12 % of £3,000 — ünïcödé",
]


def torch_vectors(model, texts):
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


def test_the_onnx_graph_encodes_exactly_what_sentence_transformers_encodes(embedder):
    model = embedder.model
    assert embedder._onnx is not None, "the default model should run on ONNX Runtime"
    ours = embedder.encode(TEXTS)
    assert np.allclose((ours * torch_vectors(model, TEXTS)).sum(axis=1), 1.0, atol=1e-5)
    with all_cores():  # an index build: batches side by side
        parallel = embedder.encode(TEXTS * 40)
    assert np.allclose(parallel, np.tile(ours, (40, 1)), atol=1e-6)


def test_a_question_time_call_with_many_texts_is_split_over_the_cores_and_encodes_the_same(embedder, monkeypatch):
    """The synonym check encodes 10-30 single words; they go out as one batch per core (half
    the wait on this 2-core machine: `citebot eval` p95 on 18F 140 -> 126 ms), and each word's
    vector is the one it has encoded alone."""
    words = ["administrator", "agency", "basis", "check", "daily", "answers", "submit", "review", "voucher",
             "receipt", "hotel", "flight"]
    alone = np.stack([embedder.encode([w])[0] for w in words])
    calls = []
    real = OnnxEncoder.encode
    monkeypatch.setattr(embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(OnnxEncoder, "encode", lambda self, texts, batch, workers: calls.append((batch, workers))
                        or real(self, texts, batch, workers))
    together = embedder.encode(words)
    assert calls == [(6, 2)]
    assert np.allclose((together * alone).sum(axis=1), 1.0, atol=1e-5)
    embedder.encode(words[: embeddings.SPLIT_AT - 1])
    assert calls[-1] == (embedder.batch_size, 1), "a few texts stay one batch on one thread"


def test_sentence_vectors_taken_from_a_chunks_tokens_match_the_torch_pass(embedder):
    text = "Transit subsidy › How to apply\n\nFill in the enrolment form. Your supervisor signs it."
    parts = [["Fill in the enrolment form.", "Your supervisor signs it."]]
    torch_only = Embedder(embedder.model_name)
    torch_only._model, torch_only._onnx = embedder.model, None
    chunk, sentences, tokens = embedder.encode_chunks([text], parts)
    chunk_t, sentences_t, tokens_t = torch_only.encode_chunks([text], parts)
    assert float(chunk[0] @ chunk_t[0]) > 0.99999
    assert np.allclose((sentences[0] * sentences_t[0]).sum(axis=1), 1.0, atol=1e-5)
    assert tokens[0].shape == tokens_t[0].shape and np.allclose((tokens[0] * tokens_t[0]).sum(axis=1), 1.0, atol=1e-5)


def test_a_damaged_graph_file_falls_back_to_torch_and_is_exported_again(embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("CITEBOT_CACHE", str(tmp_path))
    model = embedder.model
    first = OnnxEncoder.load(model, embedder.model_name)
    graphs = list((tmp_path / "onnx").glob("*.onnx"))
    assert first is not None and len(graphs) == 1, "the graph is exported into the cache folder"

    graphs[0].write_bytes(b"not an onnx graph")  # a disk that filled up, a copy cut short
    assert OnnxEncoder.load(model, embedder.model_name) is None, "a damaged graph must not be used"
    assert not graphs[0].exists(), "the damaged file is removed"
    again = OnnxEncoder.load(model, embedder.model_name)
    assert again is not None and graphs[0].exists(), "and exported afresh on the next load"
    assert np.allclose(again.encode(TEXTS[:1], 8), first.encode(TEXTS[:1], 8), atol=1e-6)


def test_without_onnx_runtime_the_model_still_encodes_with_torch(embedder, monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def no_onnxruntime(name, *args, **kwargs):
        if name == "onnxruntime":
            raise ImportError("No module named 'onnxruntime'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setenv("CITEBOT_CACHE", str(tmp_path))
    monkeypatch.setattr(builtins, "__import__", no_onnxruntime)
    assert OnnxEncoder.load(embedder.model, embedder.model_name) is None
    fallback = Embedder(embedder.model_name)
    monkeypatch.setattr(embeddings, "_load_model", lambda name: (embedder.model, None))
    vectors = fallback.encode(TEXTS)
    assert np.allclose((vectors * torch_vectors(embedder.model, TEXTS)).sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("modules", [["Transformer", "Pooling", "Dense"], ["Transformer", "Pooling"]])
def test_only_the_plain_mean_pooling_pipeline_is_exported(modules):
    from rag_graph.retrieval.onnx_encoder import _plain_pipeline

    class Module:
        pooling_mode = "mean"

        def get_config_dict(self):
            return {"pooling_mode": "mean"}

    model = [type(name, (Module,), {})() for name in modules]
    assert _plain_pipeline(model) == (modules == ["Transformer", "Pooling"])
