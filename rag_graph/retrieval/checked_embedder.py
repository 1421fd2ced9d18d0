"""Any embedder, its output checked before a similarity is computed from it: a broken model
must stop ranking and the evidence checks, not fool them."""
from __future__ import annotations

import numpy as np


class EmbeddingError(RuntimeError):
    """The model failed, or gave vectors no similarity can be computed from."""


class CheckedEmbedder:
    """Any embedder, its output checked: one finite, non-zero vector of the model's dimension per
    text. NaN or zero vectors make every similarity meaningless, so ranking and the evidence checks
    would quietly agree with anything; they raise EmbeddingError instead."""

    def __init__(self, inner):
        self.inner = inner
        self.model_name = inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._checked(lambda: self.inner.encode(texts), len(texts))

    def encode_query(self, text: str) -> np.ndarray:
        return self._checked(lambda: [self.inner.encode_query(text)], 1)[0]

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self._checked(lambda: self.inner.encode_passages(texts), len(texts))

    def encode_quick(self, texts: list[str]) -> np.ndarray:
        """Texts measured against a wide bar (single words), by a faster graph when the model has one."""
        quick = getattr(self.inner, "encode_quick", self.inner.encode_passages)
        return self._checked(lambda: quick(texts), len(texts))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Several queries' vectors, from one call of the model when it can batch them."""
        batched = getattr(self.inner, "encode_queries", None)
        if batched is None:
            return self._checked(lambda: [self.inner.encode_query(text) for text in texts], len(texts))
        return self._checked(lambda: batched(texts), len(texts))

    def query_tokens(self, text: str) -> np.ndarray:
        return self._checked_tokens(lambda: [self.inner.query_tokens(text)], 1)[0]

    def passage_tokens(self, texts: list[str]) -> list[np.ndarray]:
        return self._checked_tokens(lambda: self.inner.passage_tokens(texts), len(texts))

    def sentence_tokens(self, texts: list[str], runs: list[list[tuple[str, ...]]]
                        ) -> list[list[np.ndarray | None]]:
        """None stays None (a sentence the tokens do not reach); the rest are checked."""
        try:
            found = [list(mine) for mine in self.inner.sentence_tokens(texts, runs)]
        except Exception as error:
            raise EmbeddingError(f"the embedding model failed: {error!r}") from error
        if [len(mine) for mine in found] != [len(wanted) for wanted in runs]:
            raise EmbeddingError(f"expected token vectors for {sum(map(len, runs))} runs of sentences")
        present = [tokens for mine in found for tokens in mine if tokens is not None]
        checked = iter(self._checked_tokens(lambda: present, len(present)) if present else ())
        return [[None if tokens is None else next(checked) for tokens in mine] for mine in found]

    def _checked_tokens(self, call, texts: int) -> list[np.ndarray]:
        """One finite matrix of token vectors of the model's dimension per text."""
        try:
            matrices = [np.asarray(m, dtype=np.float32) for m in call()]
        except Exception as error:
            raise EmbeddingError(f"the embedding model failed: {error!r}") from error
        if len(matrices) != texts or any(m.ndim != 2 or not len(m) or m.shape[1] != self.dimension
                                         for m in matrices):
            raise EmbeddingError(f"expected token vectors of {self.dimension} for {texts} texts")
        if not all(np.isfinite(m).all() and np.linalg.norm(m, axis=1).all() for m in matrices):
            raise EmbeddingError("the embedding model returned NaN or zero token vectors")
        return matrices

    def _checked(self, call, rows: int) -> np.ndarray:
        try:
            vectors = np.asarray(call(), dtype=np.float32)
        except Exception as error:
            raise EmbeddingError(f"the embedding model failed: {error!r}") from error
        if vectors.shape != (rows, self.dimension):
            raise EmbeddingError(f"expected {rows} vectors of {self.dimension}, got shape {vectors.shape}")
        if not np.isfinite(vectors).all() or not np.linalg.norm(vectors, axis=1).all():
            raise EmbeddingError("the embedding model returned NaN or zero vectors")
        return vectors


def checked(embedder) -> CheckedEmbedder:
    return embedder if isinstance(embedder, CheckedEmbedder) else CheckedEmbedder(embedder)
