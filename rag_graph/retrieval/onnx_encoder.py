"""The embedding model's transformer run by ONNX Runtime instead of torch.

Why: a question encodes a few short texts, and for those torch's per-call overhead is most of
the cost (a 14-token query: 17 ms in torch, 7 ms in ONNX Runtime, one thread each on this
machine); the same session also encodes an index build's batches about 1.3x faster. Same
weights, same tokenizer, same pooling: the vectors agree with sentence-transformers' to 1e-6,
so an index built either way serves the other.

The graph is exported from the loaded model once per model and torch version, and kept in the
user's cache folder (`CITEBOT_CACHE`, else `$XDG_CACHE_HOME/citebot`, else `~/.cache/citebot`).
Only the plain pipeline (transformer, mean pooling, optional normalisation) is exported: any
other model, a failed export, or a graph whose vectors disagree with torch's keeps torch.
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

EXPORT_FORMAT = 1  # bump when the exported graph changes shape
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PROBE = ["Who approves travel requests over the limit?", "parental leave " * 200]
_AGREEMENT = 0.9999  # least cosine between the graph's vectors and torch's on the probe texts


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


def _prepare(model, texts: list[str]) -> dict:
    """Tokenized as sentence-transformers tokenizes for its own forward pass (same stripping,
    truncation and padding): `preprocess` since 5.x, `tokenize` before."""
    return model.preprocess(texts) if hasattr(model, "preprocess") else model.tokenize(texts)


def _graph_path(model, name: str) -> Path:
    import torch

    weights = Path(name) / "model.safetensors"
    stamp = f"{weights.stat().st_size}:{weights.stat().st_mtime_ns}" if weights.exists() else ""
    key = f"{EXPORT_FORMAT}|{name}|{stamp}|{torch.__version__}|{model.max_seq_length}"
    return cache_dir() / "onnx" / f"{hashlib.blake2b(key.encode(), digest_size=12).hexdigest()}.onnx"


def _export(model, path: Path) -> None:
    """Trace the transformer with eager attention (the SDPA path bakes one mask shape into the
    trace), with batch and length as dynamic axes; written beside and swapped in, so a reader
    never sees half a file."""
    import torch

    transformer = model[0].auto_model

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).last_hidden_state

    features = _prepare(model, ["an example", "a longer example sentence to trace"])
    previous = transformer.config._attn_implementation
    transformer.set_attn_implementation("eager")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, suffix=".partial")
    os.close(handle)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                LastHiddenState().eval(), tuple(features[name] for name in _INPUTS), partial,
                input_names=list(_INPUTS), output_names=["tokens"], opset_version=17, dynamo=False,
                dynamic_axes={name: {0: "batch", 1: "length"} for name in (*_INPUTS, "tokens")})
        os.replace(partial, path)
    finally:
        transformer.set_attn_implementation(previous)
        if os.path.exists(partial):
            os.unlink(partial)


class OnnxEncoder:
    """Token vectors and pooled sentence vectors of a sentence-transformers model, computed by
    ONNX Runtime on one thread per call; `parallel` calls spread batches over threads (the
    session releases the GIL), which is how index builds use every core."""

    def __init__(self, model, session):
        self.model, self.session = model, session
        self.normalize = len(model) > 2

    @classmethod
    def load(cls, model, name: str) -> "OnnxEncoder | None":
        """The encoder for a loaded model, or None when torch should keep doing the work."""
        if not _plain_pipeline(model):
            return None
        try:
            import onnxruntime

            path = _graph_path(model, name)
        except Exception as error:  # no runtime installed, no cache folder to be had
            log.warning("encoding with torch: ONNX Runtime is unavailable (%s)", error)
            return None
        try:
            if not path.exists():
                _export(model, path)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = options.inter_op_num_threads = 1
            options.log_severity_level = 3
            encoder = cls(model, onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]))
            expected = model.encode(_PROBE, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            agreement = float((encoder.encode(_PROBE, 8) * expected).sum(axis=1).min())
        except Exception as error:  # an export torch cannot do, a damaged file
            log.warning("encoding with torch: the ONNX graph of %s is unavailable (%s)", name, error)
            path.unlink(missing_ok=True)  # a damaged file is exported afresh next time
            return None
        if agreement < _AGREEMENT:
            log.warning("encoding with torch: the ONNX graph of %s disagrees (cosine %.5f)", name, agreement)
            return None
        return encoder

    def token_vectors(self, texts: list[str], batch_size: int, parallel: int = 1) -> list[np.ndarray]:
        """Each text's token vectors (its padding dropped), as sentence-transformers'
        `output_value="token_embeddings"` gives them."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # like lengths pad least
        batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]

        def run(batch: list[int]) -> list[np.ndarray]:
            features = _prepare(self.model, [texts[i] for i in batch])
            feed = {name: features[name].numpy() for name in _INPUTS}
            tokens = self.session.run(None, feed)[0]
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

    def encode(self, texts: list[str], batch_size: int, parallel: int = 1) -> np.ndarray:
        pooled = np.stack([tokens.mean(axis=0) for tokens in self.token_vectors(texts, batch_size, parallel)])
        if self.normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.where(norms > 0, norms, 1.0)
        return pooled.astype(np.float32, copy=False)
