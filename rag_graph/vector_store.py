"""Vectors of corpus text that question-time code compares against (a chunk's text and its
sentences), computed at index time and looked up by text, so a question pays for no model
call on them, however many questions came before and however large the corpus.

A LanceDB table keyed by a hash of the text, with a BTREE index on the key: a lookup reads the
few rows asked for, never the whole table. Content-addressed, so it needs no versioning of its
own: a text's vector never changes, and a text the store does not hold (an older index, a text
no refresh saw) is simply encoded. Rows belong to a chunk (`owner`) and are replaced with it.

Rows a search has just read bring their vectors along: the store keeps the latest few
thousand in process, so the evidence checks that follow a search look up nothing.

Not stored: vectors of the corpus's single words (the synonym check). Encoding every word costs
as much as 40 % of the chunks' own encoding on a small corpus and 11 % on the 18F handbook
(13.5 s for 11,466 words), either of which breaks the build's budget (>= 0.85 x the raw
encoder); they stay encoded on demand, are never looked up here, and are cached in process.
"""
from __future__ import annotations

import hashlib
import logging
from datetime import timedelta

import numpy as np
import pyarrow as pa
from lancedb.index import BTree

from .embeddings import VectorCache

log = logging.getLogger(__name__)

TABLE = "passage_vectors"
_LOOKUP_BATCH = 500  # keys per IN (...) filter
_RECENT = 4096  # vectors of rows searches returned: a question's candidates, many times over


def text_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _sql_keys(keys) -> str:
    return ", ".join(f"'{key}'" for key in keys)  # hex digests: nothing to escape


class VectorStore:
    def __init__(self, db):
        self._db = db
        self._table = None
        self._recent = VectorCache(_RECENT)

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
        self._table = None

    def exists(self) -> bool:
        return self._open() is not None

    def remember(self, text: str, vector: np.ndarray) -> None:
        """A vector the index stored, read along with its row (a search result)."""
        self._recent.put(text, vector)

    def lookup(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The stored vector of each text the store holds."""
        found = {text: vector for text in texts if (vector := self._recent.get(text)) is not None}
        table = self._open()
        if table is None or len(found) == len(texts):
            return found
        wanted = {text_key(text): text for text in texts if text not in found}
        keys = list(wanted)
        for start in range(0, len(keys), _LOOKUP_BATCH):
            batch = keys[start:start + _LOOKUP_BATCH]
            rows = (table.search().where(f"key IN ({_sql_keys(batch)})").select(["key", "vector"])
                    .limit(None).to_arrow())
            if not rows.num_rows:
                continue
            vectors = rows.column("vector").combine_chunks()
            matrix = vectors.values.to_numpy(zero_copy_only=False).reshape(len(vectors), -1)
            for key, vector in zip(rows.column("key").to_pylist(), matrix):
                found[wanted[key]] = vector
        return found

    def replace(self, owners: list[str], owned: list[tuple[str, str]], vectors: np.ndarray) -> None:
        """Drop the rows of `owners` (chunks re-embedded or gone), then add `owned`
        ((owner, text) pairs) with their vectors."""
        table = self._open()
        if table is not None and owners:
            for start in range(0, len(owners), _LOOKUP_BATCH):
                batch = owners[start:start + _LOOKUP_BATCH]
                table.delete("owner IN (" + ", ".join("'" + o.replace("'", "''") + "'" for o in batch) + ")")
        if not owned:
            return
        dimension = vectors.shape[1]
        rows = pa.table({
            "owner": [owner for owner, _ in owned], "key": [text_key(text) for _, text in owned],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1)), dimension),
        })
        if table is None:
            self._table = self._db.create_table(TABLE, data=rows)
            self._table.create_index("key", config=BTree())
        else:
            table.add(rows)

    def optimize(self) -> None:
        """Fold new rows into the key index (until then they are scanned)."""
        table = self._open()
        if table is not None:
            table.optimize(cleanup_older_than=timedelta(days=7))
