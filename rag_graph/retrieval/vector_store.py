"""Vectors of corpus text that question-time code compares against (a chunk's text and its
sentences), computed at index time and looked up by text, so a question pays for no model
call on them, however many questions came before and however large the corpus.

A LanceDB table keyed by a hash of the text, with a BTREE index on the key: a lookup reads the
few rows asked for, never the whole table. Content-addressed, so it needs no versioning of its
own: a text's vector never changes, and a text the store does not hold (an older index, a text
no refresh saw) is simply encoded. Rows belong to a chunk (`owner`) and are replaced with it.

Rows a search has just read bring their vectors along: the store keeps the latest few
thousand in process, so the evidence checks that follow a search look up nothing. A process
that answers many questions (`hold`) reads every key and vector once (18F: 15,137 rows, 23 MB,
about 70 ms) and looks up in memory from then on: a keyed read costs about 2 ms of CPU, and a
question made two or three. A text held by several rows (one sentence in two chunks, each with
its own vector) gets the last row's, as the keyed read gives it (checked on every eval index).

A chunk's row also holds its content tokens (`embeddings.content_tokens`) for late
interaction, as int8 with one scale per token: 49 KB for the average 18F chunk of 128 tokens
(172 MB for the handbook's 3,468 chunks) instead of four times that as float32. The rounding moves
a token-to-token cosine by less than 0.01 (tested); a sentence's row holds none.

Not stored: vectors of the corpus's single words (the synonym check). Encoding every word costs
as much as 40 % of the chunks' own encoding on a small corpus and 11 % on the 18F handbook
(13.5 s for 11,466 words), either of which breaks the build's budget (>= 0.85 x the raw
encoder); they stay encoded on demand, are never looked up here, and are cached in process.
"""
from __future__ import annotations

import hashlib
import logging
import threading
from datetime import timedelta

import numpy as np
import pyarrow as pa
from lancedb.index import BTree

from .embeddings import VectorCache

log = logging.getLogger(__name__)

TABLE = "passage_vectors"
_LOOKUP_BATCH = 500  # keys per IN (...) filter
_RECENT = 4096  # vectors of rows searches returned: a question's candidates, many times over
# Above this many rows the vectors are not held in memory (about 1.6 KB a row: 80 MB at most).
MAX_HELD = 50_000


def text_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _sql_keys(keys) -> str:
    return ", ".join(f"'{key}'" for key in keys)  # hex digests: nothing to escape


class VectorStore:
    def __init__(self, db):
        self._db = db
        self._table = None
        self._dataset = None  # the Lance dataset beneath the table, for lookups by key
        self._recent = VectorCache(_RECENT)
        self._held = None  # (key -> row, matrix) as `hold` read them; () when too many to hold
        self._hold = False  # hold the next version's rows too (set by `hold`)
        self._holding = threading.Lock()
        self._opened = 0  # counts reopens: rows read from a version reopened meanwhile are not kept

    def _open(self):
        if self._table is None:
            try:
                self._table = self._db.open_table(TABLE)
            except ValueError:
                return None
        return self._table

    def reopen(self) -> None:
        """Read the table's latest version from the next lookup on (another process may have
        added rows: a handle stays at the version it opened)."""
        self._table = self._dataset = self._held = None
        self._opened += 1

    def exists(self) -> bool:
        """The table exists and holds token vectors (an older one is replaced on the next build)."""
        dataset = self._lance()
        return dataset is not None and "tokens" in dataset.schema.names

    def remember(self, text: str, vector: np.ndarray) -> None:
        """A vector the index stored, read along with its row (a search result)."""
        self._recent.put(text, vector)

    def hold(self) -> None:
        """Look up in memory from now on, in this version and the next ones (see the module's
        docstring); nothing is held above MAX_HELD rows."""
        self._hold = True
        self._rows_held()

    def _rows_held(self):
        """(key -> row, matrix) of the table's vectors, read once per version; None when not held."""
        if not self._hold:
            return None
        with self._holding:
            held, opened, dataset = self._held, self._opened, self._lance()
            if held is None and dataset is not None:
                held = ()
                if dataset.count_rows() <= MAX_HELD:
                    rows = dataset.to_table(columns=["key", "vector"])
                    vectors = rows.column("vector").combine_chunks()
                    matrix = vectors.values.to_numpy(zero_copy_only=False).reshape(len(vectors), -1)
                    matrix.setflags(write=False)
                    # dict() keeps the last row of a key, as `lookup`'s keyed read does
                    held = (dict(zip(rows.column("key").to_pylist(), range(len(vectors)))), matrix)
                if opened == self._opened:
                    self._held = held
            return held or None

    def lookup(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The stored vector of each text the store holds."""
        found = {text: vector for text in texts if (vector := self._recent.get(text)) is not None}
        table = self._open()
        if table is None or len(found) == len(texts):
            return found
        held = self._rows_held()
        if held is not None:
            places, matrix = held
            found.update((text, matrix[place]) for text in texts
                         if text not in found and (place := places.get(text_key(text))) is not None)
            return found
        wanted = {text_key(text): text for text in texts if text not in found}
        keys = list(wanted)
        for start in range(0, len(keys), _LOOKUP_BATCH):
            batch = keys[start:start + _LOOKUP_BATCH]
            rows = self._read(batch, ["key", "vector"])
            if not rows.num_rows:
                continue
            vectors = rows.column("vector").combine_chunks()
            matrix = vectors.values.to_numpy(zero_copy_only=False).reshape(len(vectors), -1)
            for key, vector in zip(rows.column("key").to_pylist(), matrix):
                found[wanted[key]] = vector
        return found

    def tokens(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The stored content tokens of each chunk text the store holds."""
        if not self.exists():
            return {}
        wanted = {text_key(text): text for text in texts}
        rows = self._taken(wanted) or self._read(list(wanted), ["key", "tokens", "scales"]).to_pylist()
        return {wanted[row["key"]]: dequantize(row["tokens"], row["scales"]) for row in rows if row["tokens"]}

    def _taken(self, wanted: dict[str, str]) -> list[dict] | None:
        """The rows of these keys read by their places, when the rows are held (`hold`): 1.0 ms for
        six chunks where the key index takes 1.8. The last row of a key, as the keyed read keeps
        it. None when not held, or when the rows at those places are not the keys' (the version
        moved meanwhile): then the key index answers."""
        held, dataset = self._rows_held(), self._lance()
        if held is None or dataset is None:
            return None
        places = {held[0][key]: key for key in wanted if key in held[0]}
        if not places:
            return None
        rows = dataset.take(sorted(places), columns=["key", "tokens", "scales"]).to_pylist()
        return rows if [row["key"] for row in rows] == [places[at] for at in sorted(places)] else None

    def _read(self, keys: list[str], columns: list[str]) -> pa.Table:
        """The rows of these keys, found through the key index. Read from the Lance dataset
        beneath the table: 1.4 ms for ten keys, where LanceDB's query builder takes 2.4-3.4 ms,
        and a question looks up twice or more."""
        return self._lance().to_table(columns=columns, filter=f"key IN ({_sql_keys(keys)})")

    def _lance(self):
        if self._dataset is None and self._open() is not None:
            self._dataset = self._table.to_lance()
        return self._dataset

    def replace(self, owners: list[str], owned: list[tuple[str, str]], vectors: np.ndarray,
                tokens: list[np.ndarray | None]) -> None:
        """Drop the rows of `owners` (chunks re-embedded or gone), then add `owned`
        ((owner, text) pairs) with their vectors and content tokens (None for a sentence)."""
        table, self._dataset, self._held = self._open(), None, None
        if table is not None and not self.exists():  # written before tokens were stored
            self._db.drop_table(TABLE)
            self._table = table = None
        if table is not None and owners:
            for start in range(0, len(owners), _LOOKUP_BATCH):
                batch = owners[start:start + _LOOKUP_BATCH]
                table.delete("owner IN (" + ", ".join("'" + o.replace("'", "''") + "'" for o in batch) + ")")
        if not owned:
            return
        dimension = vectors.shape[1]
        packed = [quantize(matrix) if matrix is not None else (None, None) for matrix in tokens]
        rows = pa.table({
            "owner": [owner for owner, _ in owned], "key": [text_key(text) for _, text in owned],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1)), dimension),
            "tokens": pa.array([values for values, _ in packed], type=pa.binary()),
            "scales": pa.array([scales for _, scales in packed], type=pa.binary()),
        })
        if table is None:
            self._table = self._db.create_table(TABLE, data=rows)
            self._table.create_index("key", config=BTree())
        else:
            table.add(rows)

    def optimize(self) -> None:
        """Fold new rows into the key index (until then they are scanned)."""
        table, self._dataset, self._held = self._open(), None, None
        if table is not None:
            table.optimize(cleanup_older_than=timedelta(days=7))


def quantize(matrix: np.ndarray) -> tuple[bytes, bytes]:
    """Token vectors as int8 (each row scaled so its largest component is ±127) and the
    float16 scale of each row."""
    scales = np.abs(matrix).max(axis=1, keepdims=True) / 127.0
    scales[scales == 0] = 1.0
    values = np.rint(matrix / scales).astype(np.int8)
    return values.tobytes(), scales.astype(np.float16).tobytes()


def dequantize(values: bytes, scales: bytes) -> np.ndarray:
    scale = np.frombuffer(scales, dtype=np.float16).astype(np.float32)
    matrix = np.frombuffer(values, dtype=np.int8).reshape(len(scale), -1).astype(np.float32)
    return matrix * scale[:, None]
