"""The embedding model run by ONNX Runtime (rag_graph/onnx_encoder.py): the same vectors as
sentence-transformers' own torch pass, for queries, long chunks and the sentences of a chunk,
without importing torch once the export is cached, and torch again whenever the exported graph
cannot be trusted."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

from rag_graph.retrieval import embeddings, onnx_encoder
from rag_graph.retrieval.embeddings import Embedder, all_cores
from rag_graph.retrieval.onnx_encoder import OnnxEncoder


@pytest.fixture(scope="module")
def st_model(embedder):
    """The sentence-transformers model itself (torch), to compare with."""
    return embeddings._open_model(embedder.model_name)

TEXTS = [
    "Who approves my travel request?",
    "  pto  ",  # sentence-transformers strips before tokenizing; so must we
    "Annual leave › Carry-over\n\nYou may carry over up to 240 hours of annual leave into the next year. " * 12,
    "Wi-Fi, VPN & the café: 12 % of £3,000 — ünïcödé",
]


def torch_vectors(model, texts):
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


def test_the_onnx_graph_encodes_exactly_what_sentence_transformers_encodes(embedder, st_model):
    ours = embedder.encode(TEXTS)
    assert embedder._onnx is not None, "the default model should run on ONNX Runtime"
    assert np.allclose((ours * torch_vectors(st_model, TEXTS)).sum(axis=1), 1.0, atol=1e-5)
    assert embedder.offsets(TEXTS) == st_model.tokenizer(TEXTS, return_offsets_mapping=True, truncation=True,
                                                          max_length=st_model.max_seq_length)["offset_mapping"]
    with all_cores():  # an index build: batches side by side
        parallel = embedder.encode(TEXTS * 40)
    assert np.allclose(parallel, np.tile(ours, (40, 1)), atol=1e-6)


class _Int8Stand:
    """The exact session standing in for an int8 graph (this CPU may have none): another object,
    so that the encoder treats its calls as the int8 graph's."""

    def __init__(self, session):
        self.session, self.feeds = session, []

    def run(self, names, feed):
        self.feeds.append(feed)
        return self.session.run(names, feed)


WORDS = ["administrator", "agency", "basis", "check", "daily", "answers", "submit", "review", "voucher",
         "receipt", "hotel", "flight"]


def test_a_question_time_call_with_many_texts_is_cut_per_core_and_runs_its_batches_one_after_the_other(
        embedder, monkeypatch):
    """The synonym check encodes 10-30 single words; on the int8 graph they go out as one batch
    per core (it quantizes each batch as a whole, so the cut stays what it was), one batch after
    the other: each call already uses both cores, and side by side they were four threads on two
    cores (16 words at load 5: 90th percentile 98 -> 12 ms). On the exact graph the cut does not
    change a vector, and the call is cut where padding costs least (see the next test)."""
    alone = np.stack([embedder.encode([w])[0] for w in WORDS])
    calls, threads = [], set()
    real, run = OnnxEncoder.encode, embedder._onnx.session.run
    monkeypatch.setattr(embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(OnnxEncoder, "encode", lambda self, texts, batch, workers, exact=True:
                        calls.append((batch, workers)) or real(self, texts, batch, workers, exact))
    monkeypatch.setattr(embedder._onnx.session, "run", lambda *a, **k: threads.add(threading.get_ident()) or run(*a, **k))
    stand = _Int8Stand(embedder._onnx.session)
    monkeypatch.setattr(embedder._onnx, "quick", stand)
    together = embedder.encode(WORDS, exact=False)
    assert calls == [(6, 1)], "one batch per core, run one after the other"
    assert [len(feed["input_ids"]) for feed in stand.feeds] == [6, 6], "the int8 graph's batches are the cut's"
    order = sorted(WORDS, key=len, reverse=True)  # longest first, by characters, as its vectors were checked
    first = [embedder._onnx.tokenizer.backend.decode(list(ids), skip_special_tokens=True) for ids in stand.feeds[0]["input_ids"]]
    assert first == order[:6]
    assert threads == {threading.get_ident()}, "the batches ran on the asking thread, not side by side"
    assert np.allclose((together * alone).sum(axis=1), 1.0, atol=1e-5)
    embedder.encode(WORDS[: embeddings.SPLIT_AT - 1], exact=False)
    assert calls[-1] == (embedder.batch_size, 1), "a few texts stay one batch"
    embedder.encode(WORDS)
    assert calls[-1] == (embedder.batch_size, 1), "the exact graph's calls are cut by padding, not per core"


def test_the_exact_graph_cuts_a_call_where_padding_costs_least_and_each_text_keeps_its_own_vectors(
        embedder, monkeypatch):
    """A text's vectors from the exact graph are the same bits in any batch (its padding is masked
    out), so a question-time call is cut by token length: a dozen single words in a run per
    length, passages of unlike lengths one by one, instead of everything padded to the longest."""
    texts = [*WORDS, "Who approves my travel request?", TEXTS[2], TEXTS[2][:300], TEXTS[3]]
    alone = [embedder._onnx.token_vectors([text], 64)[0] for text in texts]
    feeds, run = [], embedder._onnx.session.run
    monkeypatch.setattr(embedder._onnx.session, "run", lambda names, feed: feeds.append(feed) or run(names, feed))
    together = embedder._onnx.token_vectors(texts, 64)
    assert all(np.array_equal(a, b) for a, b in zip(together, alone)), "bit for bit the vectors of each text alone"
    lengths = [len(one.ids) for one in embedder._onnx.tokenizer.encode(texts)]
    padded = sum(feed["input_ids"].size for feed in feeds)
    assert padded + onnx_encoder.CALL_COST * len(feeds) < len(texts) * max(lengths) + onnx_encoder.CALL_COST
    assert padded - sum(lengths) <= 2 * len(feeds), "hardly a padded position"
    assert [len(feed["input_ids"]) for feed in feeds] != [len(texts)], "not one batch padded to the longest"


@pytest.mark.parametrize("lengths, runs", [
    ([110, 95, 80], [(0, 1), (1, 2), (2, 3)]),  # 285 positions and two more calls, not 330
    ([6, 5, 5, 4, 4, 3], [(0, 6)]),  # a run more would cost more than the padding it saves
    ([6, 5, 5, 4, 4, 4, 3, 3, 3, 3], [(0, 3), (3, 10)]),
    ([40, 40, 40, 6, 5, 5, 4, 4, 3], [(0, 3), (3, 9)]),
    ([7], [(0, 1)]),
])
def test_least_padding_cuts_runs_of_like_lengths(lengths, runs):
    assert onnx_encoder._least_padding(lengths, 64) == runs


def test_least_padding_never_runs_more_texts_than_the_batch_size():
    runs = onnx_encoder._least_padding([5] * 10, 4)
    assert [end - start for start, end in runs] in ([2, 4, 4], [4, 4, 2], [4, 2, 4], [3, 3, 4], [4, 3, 3], [3, 4, 3])
    assert runs[0][0] == 0 and runs[-1][1] == 10 and all(a[1] == b[0] for a, b in zip(runs, runs[1:]))


def test_sentence_vectors_taken_from_a_chunks_tokens_match_the_torch_pass(embedder, st_model):
    text = "Transit subsidy › How to apply\n\nFill in the enrolment form. Your supervisor signs it."
    parts = [["Fill in the enrolment form.", "Your supervisor signs it."]]
    torch_only = Embedder(embedder.model_name)
    torch_only._model, torch_only._onnx, torch_only._loaded = st_model, None, True
    chunk, sentences, tokens = embedder.encode_chunks([text], parts)
    chunk_t, sentences_t, tokens_t = torch_only.encode_chunks([text], parts)
    assert float(chunk[0] @ chunk_t[0]) > 0.99999
    assert np.allclose((sentences[0] * sentences_t[0]).sum(axis=1), 1.0, atol=1e-5)
    assert tokens[0].shape == tokens_t[0].shape and np.allclose((tokens[0] * tokens_t[0]).sum(axis=1), 1.0, atol=1e-5)


def test_a_cached_export_encodes_without_torch_and_a_damaged_one_is_exported_again(embedder, st_model, tmp_path,
                                                                                   monkeypatch, vnni):
    monkeypatch.setenv("CITEBOT_CACHE", str(tmp_path))
    assert OnnxEncoder.cached(embedder.model_name) is None, "nothing is exported yet"
    first = OnnxEncoder.load(st_model, embedder.model_name)
    graphs = [path for path in (tmp_path / "onnx").glob("*.onnx") if not path.name.endswith(".int8.onnx")]
    assert first is not None and len(graphs) == 1, "the graph is exported into the cache folder"
    if vnni:
        assert first.quick is not None and graphs[0].with_suffix(".int8.onnx").exists(), "with its int8 form beside it"
    else:  # see the `vnni` fixture: the int8 form strays on this CPU
        assert first.quick is None and graphs[0].with_suffix(".int8.disagrees").exists(), "its int8 form refused, marked"
    cached = OnnxEncoder.cached(embedder.model_name)
    assert np.allclose(cached.encode(TEXTS, 8), first.encode(TEXTS, 8), atol=1e-6)

    graphs[0].write_bytes(b"not an onnx graph")  # a disk that filled up, a copy cut short
    assert OnnxEncoder.cached(embedder.model_name) is None, "a damaged graph must not be used"
    assert not any((tmp_path / "onnx").iterdir()), "the damaged files are removed"
    again = OnnxEncoder.load(st_model, embedder.model_name)
    assert again is not None and graphs[0].exists(), "and exported afresh on the next load"
    assert np.allclose(again.encode(TEXTS[:1], 8), first.encode(TEXTS[:1], 8), atol=1e-6)


def test_a_graph_that_disagrees_with_torch_is_never_kept(embedder, st_model, tmp_path, monkeypatch):
    monkeypatch.setenv("CITEBOT_CACHE", str(tmp_path))
    monkeypatch.setattr(OnnxEncoder, "encode", lambda self, texts, batch, workers=1: -torch_vectors(st_model, texts))
    assert OnnxEncoder.load(st_model, embedder.model_name) is None
    assert OnnxEncoder.cached(embedder.model_name) is None, "a disagreeing graph is not served on the next start"
    assert [path.suffix for path in (tmp_path / "onnx").iterdir()] == [".disagrees"], "nor exported at every start"


def test_an_ask_with_the_export_cached_never_imports_torch(engine, tmp_path):
    """What makes `citebot ask` start in seconds (its figure is in `citebot bench`): with the
    graph cached, no torch, transformers or sentence-transformers in the process."""
    db = tmp_path / "db"
    shutil.copytree(engine.settings.db, db)
    probe = ("import sys; from bot.cli import main; code = main(['ask', 'How many vacation days do I get?']); "
             "print('imported:', sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules)); "
             "sys.exit(code)")
    env = {**os.environ, "CITEBOT_CORPUS": str(engine.settings.corpus), "CITEBOT_DB": str(db)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[answered" in done.stdout and "imported: []" in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("modules", [["Transformer", "Pooling", "Dense"], ["Transformer", "Pooling"]])
def test_only_the_plain_mean_pooling_pipeline_is_exported(modules):
    from rag_graph.retrieval.onnx_encoder import _plain_pipeline

    class Module:
        pooling_mode = "mean"

        def get_config_dict(self):
            return {"pooling_mode": "mean"}

    model = [type(name, (Module,), {})() for name in modules]
    assert _plain_pipeline(model) == (modules == ["Transformer", "Pooling"])


def test_a_call_on_two_threads_gives_the_vectors_of_one_thread_bit_for_bit(embedder, monkeypatch):
    """A question's model calls use a second core: ONNX Runtime divides the work between the
    threads without splitting a sum, so no vector, hence no ranking or answer, depends on it."""
    from rag_graph.retrieval import onnx_encoder

    embedder.encode(TEXTS[:1])
    assert embedder._onnx.session.get_session_options().intra_op_num_threads == min(os.cpu_count(), 2)
    monkeypatch.setattr(onnx_encoder, "INTRA_OP_THREADS", 1)
    one_thread = OnnxEncoder.cached(embedder.model_name)
    assert one_thread.session.get_session_options().intra_op_num_threads == 1
    for texts in (TEXTS, TEXTS[:1], TEXTS[2:3]):
        for exact in (True, False):  # the int8 graph's integer sums are split the same way
            assert np.array_equal(one_thread.encode(texts, 64, exact=exact), embedder._onnx.encode(texts, 64, exact=exact))
            assert all(np.array_equal(a, b) for a, b in zip(one_thread.token_vectors(texts, 64, exact=exact),
                                                             embedder._onnx.token_vectors(texts, 64, exact=exact)))
