"""The embedding model's transformer run by ONNX Runtime instead of torch.

Why: a question encodes a few short texts, and for those torch's per-call overhead is most of
the cost (a 14-token query: 17 ms in torch, 7 ms in ONNX Runtime, one thread each on this
machine); the same session also encodes an index build's batches about 1.3x faster. Same
weights, same tokenizer, same pooling: the vectors agree with sentence-transformers' to 1e-6,
so an index built either way serves the other.

The graph is exported from the loaded model once per model and torch version, checked against
torch's own vectors, and kept in the user's cache folder (`CITEBOT_CACHE`, else
`$XDG_CACHE_HOME/citebot`, else `~/.cache/citebot`) beside the model's tokenizer and the few
numbers encoding needs. From then on `OnnxEncoder.cached` runs the model without importing
torch, transformers or sentence-transformers: those imports were most of a `citebot ask`'s
start (13 of its 34 s on this machine) and 400 MB of a serving process.

Only the plain pipeline (transformer, mean pooling, optional normalisation) is exported: any
other model, a failed export, or a graph whose vectors disagree with torch's keeps torch.

Texts whose closeness only has to clear a wide bar (the synonym check's words, see
`Embedder.encode_quick`) run a second graph made from the checked one with its weights in int8
(`_quick`): 2-3x less CPU a call on a CPU with integer dot-product instructions, vectors within
cosine `_QUICK_AGREEMENT` of the exact graph's. It is made once per exported graph (about 2 s) and
checked like the export: on a CPU whose integer products saturate (AVX2 without VNNI: cosine
0.970 on the long probe on an AMD EPYC) or an ONNX Runtime that quantizes differently, vectors that
stray keep the exact graph for every call. 7-bit weights (ONNX Runtime's `reduce_range`) agree on
such a CPU (0.984) but flipped two 18F answers against the exact graph (a right answer declined, an
unanswerable answered), so they are not used. The
index's vectors and questions always come from the exact graph, so an index is the same whichever
graph a process has.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2  # bump when the exported files change shape (2: tokenizer and settings saved beside)
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PROBE = ["Who approves travel requests over the limit?", "  pto  ", "Wi-Fi & the café: £3,000 — ünïcödé",
          "parental leave " * 200]
# Threads one model call may use (see `_session`).
INTRA_OP_THREADS = 2
_AGREEMENT = 0.9999  # least cosine between the graph's vectors and torch's on the probe texts
# Least cosine between the int8 graph's vectors and the exact graph's on the probe texts. Where it
# comes from (all-MiniLM-L6-v2): the int8 graph with one scale per weight column gave 0.981 at
# worst over the 18F set's 86 questions and 90 handbook passages (0.993 on average) and 0.989 on
# the probes; one scale per weight matrix gave 0.79 on the long probe and changed rankings.
_QUICK_AGREEMENT = 0.98
# The files of a model folder whose change must mean a new export (a changed file is then checked
# against its pinned sum again when the model loads, see model_files.py).
_STAMPED = ("model.safetensors", "pytorch_model.bin", "config.json", "tokenizer.json", "vocab.txt",
            "tokenizer_config.json", "special_tokens_map.json", "modules.json", "1_Pooling/config.json",
            "sentence_bert_config.json", "config_sentence_transformers.json")


def cache_dir() -> Path:
    configured = os.environ.get("CITEBOT_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "citebot"


def _plain_pipeline(model) -> bool:
    """Transformer -> mean pooling (-> normalize): what this module reproduces."""
    names = [type(module).__name__ for module in model]
    if names[:2] != ["Transformer", "Pooling"] or names[2:] not in ([], ["Normalize"]):
        return False
    return model[1].get_config_dict().get("pooling_mode") == "mean"


def _graph_path(name: str) -> Path:
    """Where the graph of this model is kept: named by the model, the size and time of each of
    its files and the torch version (read from the package metadata, so asking costs no import)."""
    folder = Path(name)
    stamps = [f"{file}:{path.stat().st_size}:{path.stat().st_mtime_ns}" for file in _STAMPED
              if (path := folder / file).is_file()]
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = ""
    key = "|".join([str(EXPORT_FORMAT), name, *stamps, torch_version])
    return cache_dir() / "onnx" / f"{hashlib.blake2b(key.encode(), digest_size=12).hexdigest()}.onnx"


class Tokenizer:
    """The model's fast tokenizer (the `tokenizers` library under transformers), called as
    sentence-transformers calls it: texts stripped, truncated to the model's length, padded to
    the longest of the batch. Its own lower-casing lives in the tokenizer's normalizer."""

    def __init__(self, backend, max_length: int, pad_id: int):
        self.backend, self.max_length, self.pad_id = backend, max_length, pad_id
        backend.no_padding()
        backend.enable_truncation(max_length)

    @classmethod
    def from_file(cls, path: Path, max_length: int, pad_id: int) -> "Tokenizer":
        from tokenizers import Tokenizer as Backend

        return cls(Backend.from_file(str(path)), max_length, pad_id)

    def features(self, texts: list[str]) -> dict[str, np.ndarray]:
        return self.pack(self.encode(texts))

    def encode(self, texts: list[str]) -> list:
        """Each text's encoding (stripped, truncated, unpadded): `pack` makes a batch of some."""
        return self.backend.encode_batch([text.strip() for text in texts])

    def pack(self, encoded: list) -> dict[str, np.ndarray]:
        """The model's inputs for these encodings, padded to the longest."""
        width = max(len(one.ids) for one in encoded)
        ids = np.full((len(encoded), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        types = np.zeros((len(encoded), width), dtype=np.int64)
        for row, one in enumerate(encoded):
            ids[row, :len(one.ids)], mask[row, :len(one.ids)], types[row, :len(one.ids)] = one.ids, 1, one.type_ids
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}

    def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        """Each token's character span in its (unstripped) text, [CLS] and [SEP] as (0, 0)."""
        return [one.offsets for one in self.backend.encode_batch(texts)]


def _export(model, path: Path) -> None:
    """Trace the transformer with eager attention (the SDPA path bakes one mask shape into the
    trace), with batch and length as dynamic axes, into `path`."""
    import torch

    transformer = model[0].auto_model

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).last_hidden_state

    features = _tokenizer_of(model).features(["an example", "a longer example sentence to trace"])
    previous = transformer.config._attn_implementation
    transformer.set_attn_implementation("eager")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                LastHiddenState().eval(), tuple(torch.from_numpy(features[name]) for name in _INPUTS), str(path),
                input_names=list(_INPUTS), output_names=["tokens"], opset_version=17, dynamo=False,
                dynamic_axes={name: {0: "batch", 1: "length"} for name in (*_INPUTS, "tokens")})
    finally:
        transformer.set_attn_implementation(previous)


def _tokenizer_of(model) -> Tokenizer:
    """A copy of the loaded model's own tokenizer (its lower-casing, if any, included)."""
    from tokenizers import Tokenizer as Backend

    hf = model.tokenizer
    return Tokenizer(Backend.from_str(hf.backend_tokenizer.to_str()), model.max_seq_length, hf.pad_token_id or 0)


def _session(path: Path):
    """One call may use a second core (ONNX Runtime splits each matrix product's rows and
    columns, never a dot product, so every vector is bit for bit the one-thread vector). The
    helper thread sleeps between operators instead of spinning: a spinning one took the core
    from the rest of the question, and from other processes (a query 300-660 ms instead of
    23-36 while another process computed). Why two: a question's texts are a few dozen tokens;
    more threads only add waking. Measured on a 2-core machine other processes kept busy (load
    5): a query 22 -> 13 ms, a passage grown both ways (2 texts) 87 -> 65 ms, no more CPU."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = min(os.cpu_count() or 1, INTRA_OP_THREADS)
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _files(graph: Path) -> tuple[Path, Path]:
    """The tokenizer and the settings kept beside a graph."""
    return graph.with_suffix(".tokenizer.json"), graph.with_suffix(".json")


def _disagrees(graph: Path) -> Path:
    """Left where a model's export disagreed with torch, so that it is not exported every start."""
    return graph.with_suffix(".disagrees")


class OnnxEncoder:
    """Token vectors and pooled sentence vectors of a sentence-transformers model, computed by
    ONNX Runtime on one thread per call; `parallel` calls spread batches over threads (the
    session releases the GIL), which is how index builds use every core."""

    def __init__(self, tokenizer: Tokenizer, session, dimension: int, normalize: bool, quick=None):
        self.tokenizer, self.session = tokenizer, session
        self.dimension, self.normalize = dimension, normalize
        self.quick = quick  # the int8 session for `Embedder.encode_quick`'s texts (`_quick`), or None

    @classmethod
    def cached(cls, name: str) -> "OnnxEncoder | None":
        """The encoder exported and checked by an earlier `load`, without torch; None when there
        is none (or it is damaged: removed, to be exported afresh by the next `load`)."""
        try:
            graph = _graph_path(name)
            tokenizer_file, settings_file = _files(graph)
            if not (graph.exists() and settings_file.exists()):
                return None
            settings = json.loads(settings_file.read_text())
            tokenizer = Tokenizer.from_file(tokenizer_file, settings["max_length"], settings["pad_id"])
            encoder = cls(tokenizer, _session(graph), settings["dimension"], settings["normalize"])
            encoder.quick = _quick(graph, encoder)
            return encoder
        except Exception as error:  # a damaged file, no runtime installed, no cache folder
            log.warning("the cached ONNX graph of %s is unusable (%s); it is exported again", name, error)
            # Everything made from the damaged graph, its int8 form's refusal too (judged again on the new export).
            quick = _quick_path(graph) if "graph" in locals() else None
            for stale in (graph, *_files(graph), quick, _disagrees(quick)) if quick else ():
                stale.unlink(missing_ok=True)
            return None

    @classmethod
    def load(cls, model, name: str) -> "OnnxEncoder | None":
        """The encoder for a loaded sentence-transformers model, exported into the cache when its
        vectors agree with torch's on the probe texts; None when torch should keep doing the work."""
        if not _plain_pipeline(model):
            return None
        try:
            import onnxruntime  # noqa: F401  (only to know whether it is installed)

            graph = _graph_path(name)
            graph.parent.mkdir(parents=True, exist_ok=True)
        except Exception as error:  # no runtime installed, no cache folder to be had
            log.warning("encoding with torch: ONNX Runtime is unavailable (%s)", error)
            return None
        if _disagrees(graph).exists():
            return None
        work = Path(tempfile.mkdtemp(dir=graph.parent, prefix=".export-"))
        try:
            tokenizer = _tokenizer_of(model)
            _export(model, work / "graph.onnx")
            encoder = cls(tokenizer, _session(work / "graph.onnx"), model.get_embedding_dimension(), len(model) > 2)
            expected = model.encode(_PROBE, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            agreement = float((encoder.encode(_PROBE, 8) * expected).sum(axis=1).min())
            if agreement < _AGREEMENT:
                log.warning("encoding with torch: the ONNX graph of %s disagrees (cosine %.5f)", name, agreement)
                _disagrees(graph).touch()
                return None
            encoder._keep(work, graph)
            encoder.quick = _quick(graph, encoder)
            return encoder
        except Exception as error:  # an export torch cannot do
            log.warning("encoding with torch: the ONNX graph of %s is unavailable (%s)", name, error)
            return None
        finally:
            for leftover in work.iterdir():
                leftover.unlink()
            work.rmdir()

    def _keep(self, work: Path, graph: Path) -> None:
        """Move the checked export into the cache: the settings last, so `cached` never finds a
        graph without its tokenizer."""
        tokenizer_file, settings_file = _files(graph)
        self.tokenizer.backend.save(str(work / "tokenizer.json"))
        (work / "settings.json").write_text(json.dumps({
            "max_length": self.tokenizer.max_length, "pad_id": self.tokenizer.pad_id,
            "dimension": self.dimension, "normalize": self.normalize}))
        os.replace(work / "graph.onnx", graph)
        os.replace(work / "tokenizer.json", tokenizer_file)
        os.replace(work / "settings.json", settings_file)

    def token_vectors(self, texts: list[str], batch_size: int, parallel: int = 1, exact: bool = True
                      ) -> list[np.ndarray]:
        """Each text's token vectors (its padding dropped), as sentence-transformers'
        `output_value="token_embeddings"` gives them; `exact=False` runs the int8 graph when
        there is one (`Embedder.encode_quick`)."""
        session = self.session if exact or self.quick is None else self.quick
        if session is self.session and parallel == 1 and len(texts) > 1:
            # The exact graph gives a text the same vectors bit for bit in any batch (padding is
            # masked out, and no sum is split differently), so a question-time call is cut where
            # padding would cost more than another call (`_least_padding`). The int8 graph
            # quantizes each batch as a whole: its batches stay the ones its vectors were checked on.
            encoded = self.tokenizer.encode(texts)
            lengths = [len(one.ids) for one in encoded]
            order = sorted(range(len(texts)), key=lambda i: -lengths[i])
            batches = _least_padding([lengths[i] for i in order], batch_size)
            batches = [order[start:end] for start, end in batches]
        else:
            encoded = None
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # like lengths pad least
            batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]

        def run(batch: list[int]) -> list[np.ndarray]:
            feed = (self.tokenizer.features([texts[i] for i in batch]) if encoded is None
                    else self.tokenizer.pack([encoded[i] for i in batch]))
            tokens = session.run(None, feed)[0]
            lengths = feed["attention_mask"].sum(axis=1)
            return [tokens[row, :length] for row, length in enumerate(lengths)]

        if parallel > 1 and len(batches) > 1:
            with ThreadPoolExecutor(parallel) as pool:
                results = list(pool.map(run, batches))
        else:
            results = [run(batch) for batch in batches]
        out: list[np.ndarray] = [None] * len(texts)  # type: ignore[list-item]
        for batch, vectors in zip(batches, results):
            for i, vector in zip(batch, vectors):
                out[i] = vector
        return out

    def encode(self, texts: list[str], batch_size: int, parallel: int = 1, exact: bool = True) -> np.ndarray:
        pooled = np.stack([tokens.mean(axis=0) for tokens in self.token_vectors(texts, batch_size, parallel, exact)])
        if self.normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.where(norms > 0, norms, 1.0)
        return pooled.astype(np.float32, copy=False)


# What one more model call costs, in padded token positions: a call's fixed cost (its operators
# started, the second thread woken) against the cost of a position. Measured with all-MiniLM-L6-v2
# on two threads here: 1 text of 3 tokens 4.4-5.8 ms, of 32 tokens 13-16 ms, of 128 tokens 51 ms
# (0.34 ms a position): about 12 positions' worth.
CALL_COST = 12


def _least_padding(lengths: list[int], most: int) -> list[tuple[int, int]]:
    """Cut texts of these token lengths, longest first, into runs of at most `most` texts each
    padded to its first (longest) text, so that the padded positions plus `CALL_COST` a run are
    fewest: (start, end) of each run. Three passages of 80, 95 and 110 tokens go one by one (285
    positions and two more calls, not 330); a dozen single words, 3 to 6 tokens, go in a run
    per length."""
    best, cut = [0] + [None] * len(lengths), [0] * (len(lengths) + 1)
    for end in range(1, len(lengths) + 1):
        for start in range(max(0, end - most), end):
            cost = best[start] + CALL_COST + (end - start) * lengths[start]
            if best[end] is None or cost < best[end]:
                best[end], cut[end] = cost, start
    runs, end = [], len(lengths)
    while end:
        runs.append((cut[end], end))
        end = cut[end]
    return runs[::-1]


def _quick_path(graph: Path) -> Path:
    return graph.with_suffix(".int8.onnx")


def _quick(graph: Path, exact: "OnnxEncoder"):
    """The int8 session made from the exact graph (its MatMul weights quantized, one scale per
    column; activations quantized as each call runs), kept beside it; None, and the exact graph
    for every call, when ONNX Runtime cannot make it or its vectors stray from the exact graph's
    (cosine below `_QUICK_AGREEMENT` on the probe texts: marked, so it is not made every start)."""
    path = _quick_path(graph)
    if _disagrees(path).exists():
        return None
    try:
        if path.exists():
            return _session(path)
        from onnxruntime.quantization import QuantType, quantize_dynamic

        work = Path(tempfile.mkdtemp(dir=graph.parent, prefix=".int8-"))
        try:
            root, was = logging.getLogger(), logging.getLogger().disabled
            root.disabled = True  # it advises pre-processing on the root logger, whatever the outcome
            try:
                quantize_dynamic(graph, work / "graph.onnx", op_types_to_quantize=["MatMul"], per_channel=True,
                                 weight_type=QuantType.QInt8)
            finally:
                root.disabled = was
            session = _session(work / "graph.onnx")
            # Checked as it will run: as the int8 graph (`exact=False`), its batches cut as they will be
            # cut (an encoder whose own session were the int8 graph would cut them as the exact graph's).
            quick = OnnxEncoder(exact.tokenizer, exact.session, exact.dimension, exact.normalize, quick=session)
            agreement = float((quick.encode(_PROBE, 8, exact=False) * exact.encode(_PROBE, 8)).sum(axis=1).min())
            if agreement < _QUICK_AGREEMENT:
                log.warning("question-time calls run the exact graph: its int8 form disagrees (cosine %.4f)", agreement)
                _disagrees(path).touch()
                return None
            os.replace(work / "graph.onnx", path)
            return session
        finally:
            for leftover in work.iterdir():
                leftover.unlink()
            work.rmdir()
    except Exception as error:  # no quantization tool in this ONNX Runtime, a damaged file
        log.warning("question-time calls run the exact graph: its int8 form is unavailable (%s)", error)
        path.unlink(missing_ok=True)
        return None
