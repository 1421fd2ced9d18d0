"""The serving version's rows held in memory, so that a hybrid search asks Lance only for what
Lance alone can compute.

The keyword leg: Lance ranks by BM25 and returns row ids and scores (1 ms on 18F's 3,447
chunks); the rows' columns are taken from memory, where reading them with the ranking took
5.7 ms.

The vector leg: the chunk table has no vector index (refresh.py builds only the full-text one),
so Lance's nearest-neighbour query is exact: the cosine distance of every stored vector, smallest
first (4.9 ms, reading all of them). Here the same ranking comes from the matrix in memory
(0.4 ms), in float64, exact to 1e-14. Lance computes in float32 (lance-linalg's `Cosine for f32`:
16-lane fused multiply-adds, a sum of the lanes, two divisions by the norms, one subtraction), so
its distance of a row can differ from the exact one by at most `error_bound(dimension)`, 3.3e-6
for 384 dimensions (measured over the eval sets' questions: 1.5e-7 at most). Two rows whose
exact cosines differ by more than twice that are ranked by Lance as here; when two neighbours of
the top k+1 are closer (18F: about one search in six; copies of one text, always), the leg is
Lance's own query, as before. The query's norm divides every row alike and moves no rank.
"""
from __future__ import annotations

import math
import threading

import numpy as np
import pyarrow as pa

from ..language.words import term_set
from .scoped_text import rrf_order

# Above this many rows the copy in memory (about 3 KB a chunk with its vector: 10 MB for 18F's
# 3,447) is not kept and both legs read from Lance, as before: 150 MB at most.
MAX_ROWS = 50_000
# Rows kept as Python dicts for the searches (`_dicts`): about 3.4 KB each, 14 MB at most (18F:
# 3,447 rows, 11.7 MB).
DICTS = 4_096
_UNIT = 2.0 ** -24  # float32's unit roundoff


def _gamma(terms: int) -> float:
    """Higham's bound on the relative error of a float32 sum of `terms` products."""
    return terms * _UNIT / (1 - terms * _UNIT)


def error_bound(dimension: int) -> float:
    """Most Lance's float32 cosine distance of one row can differ from the exact one: each of
    16 lanes adds dimension/16 products (a rounding per multiply and per add, FMA or not) and the
    lanes are summed (at most 16 more), for the dot product and for the row's squared norm (whose
    square root halves its error); then two divisions and the subtraction from 1."""
    terms = 2 * math.ceil(dimension / 16) + 16
    return 1.5 * _gamma(terms) + 5 * _UNIT


class ServedRows:
    """One published version's rows (the columns a search returns, and `_rowid`) and its vectors."""

    def __init__(self, table: pa.Table, names: list[str]):
        self.table, self.names = table, names
        self._places = None  # (source_id, anchor) and source_id -> rows, for `related`
        self._row_dicts: dict[int, dict] = {}  # place -> the row's columns as read (`_dicts`)
        ids = table.column("_rowid").to_numpy()
        self._order = np.argsort(ids, kind="stable")
        self._ids = ids[self._order]
        vectors = table.column("vector").combine_chunks()
        self.matrix = None  # None: the vector leg stays Lance's (see `exact`)
        if not vectors.null_count and len(vectors):
            matrix = vectors.flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(len(vectors), -1)
            norms = np.sqrt(np.square(matrix, dtype=np.float64).sum(axis=1))
            if np.isfinite(norms).all() and norms.all():  # Lance's distance of a zero vector is NaN
                self.matrix, self.norms = matrix, norms
                self.dimension = matrix.shape[1]
                self.tie = 2 * error_bound(self.dimension) * (1 + 1e-3)  # margin for the query norm's scale

    @classmethod
    def read(cls, dataset, names: list[str]) -> "ServedRows | None":
        """The dataset's rows, or None when they are too many to hold."""
        if dataset.count_rows() > MAX_ROWS:
            return None
        rows = cls(dataset.to_table(columns=names, with_row_id=True), names)
        if any("vector" in index.field_names for index in dataset.describe_indices()):
            rows.matrix = None  # an approximate index answers Lance's query: nothing here can match it
        return rows

    def related(self, sections: set[tuple[str, str]], linked: set[str], limit: int) -> list[dict]:
        """The rows of these (source_id, anchor) sections and the opening rows (chunk 0, no
        anchor) of the `linked` documents, at most `limit`, in the table's order, every column but
        the vector in name order: what Index.fetch returns for the same filter (2 ms less)."""
        if self._places is None:
            places: dict = {}
            for n, (source, anchor, index) in enumerate(zip(*(self.table.column(name).to_pylist() for name in (
                    "source_id", "anchor", "chunk_index")))):
                places.setdefault((source, anchor), []).append(n)
                if index == 0 and anchor == "":
                    places.setdefault(source, []).append(n)
            self._places = places
        found = sorted({n for key in [*sections, *linked] for n in self._places.get(key, ())})[:limit]
        columns = sorted(set(self.names) - {"vector"})
        return self.table.take(pa.array(found, type=pa.int64())).select(columns).to_pylist()

    def warm_terms(self) -> None:
        """Every chunk's terms into `term_set`'s cache. A chunk a question meets first is otherwise
        stemmed word by word then (lemminflect): 12 of a 18F question's 80 ms of CPU. All 3,447
        take 0.4 s once, repaid after some 40 questions. Skipped when they would fill more than
        half the cache (they would only push each other out)."""
        texts = self.table.column("text")
        if len(texts) <= term_set.cache_info().maxsize // 2:
            for text in texts.to_pylist():
                term_set(text)

    def warm_rows(self) -> None:
        """Every row as the searches return it (`_dicts`), when they all fit: a search otherwise
        reads its new rows (~40 % of them on 18F's eval) at ~20 us each. 18F's 3,447 rows take
        ~0.2 s once."""
        if len(self.table) <= DICTS:
            self._dicts(list(range(len(self.table))))

    def keyword_rows(self, hits: pa.Table) -> pa.Table:
        """The rows of the keyword leg's hits (`_score`, `_rowid`, best first) with every column, as
        Lance returns them: the search's columns, `_score`, `_rowid`."""
        rows = self.table.take(pa.array(self._places_of(hits), type=pa.int64()))
        return rows.add_column(len(self.names), "_score", hits.column("_score"))

    def _places_of(self, hits: pa.Table) -> np.ndarray:
        """The table places of the keyword leg's hits, in their order."""
        ids = hits.column("_rowid").to_numpy()
        at = np.minimum(np.searchsorted(self._ids, ids), len(self._ids) - 1)
        if len(ids) and (self._ids[at] != ids).any():  # the hits of another version: a bug, not a miss
            raise LookupError("the keyword leg found rows this version does not hold")
        return self._order[at]

    def fused_rows(self, nearest: tuple[np.ndarray, np.ndarray], hits: pa.Table, limit: int) -> list[dict]:
        """Both legs fused by reciprocal rank (scoped_text.rrf_order), as dicts: what Index's
        `_rows(fuse(...))` makes of `nearest`'s and `keyword_rows`' tables, the same rows, keys and
        values, without copying 19 columns (384 floats a row) through three arrow tables (~3 ms).
        `nearest` is `nearest_places`' (places, float32 distances)."""
        places, distances = nearest
        row_ids = self.table.column("_rowid")
        vector_ids = row_ids.take(pa.array(places, type=pa.int64())).to_pylist()
        keyword_ids = hits.column("_rowid").to_pylist()
        keyword_places = self._places_of(hits)
        others, order, relevance = rrf_order(vector_ids, keyword_ids, limit)
        merged = [*places.tolist(), *keyword_places[others].tolist()]  # rrf_order's places
        chosen = [merged[n] for n in order.tolist()]
        scores = dict(zip(keyword_ids, hits.column("_score").to_pylist()))
        distance = dict(zip(vector_ids, distances.tolist()))
        ids = [*vector_ids, *(keyword_ids[n] for n in others)]
        rows = self._dicts(chosen)
        for row, n, place, fused in zip(rows, order.tolist(), chosen, relevance.tolist()):
            row_id = ids[n]
            row.update(_distance=distance.get(row_id), _rowid=row_id, _score=scores.get(row_id),
                       _relevance_score=fused, vector=self.matrix[place].copy())
        return rows

    def _dicts(self, places: list[int]) -> list[dict]:
        """These rows' columns but the vector, each a new dict (with new lists) the caller may
        change: read from the table once per row (to_pylist of the rows a search returns was
        most of its time), at most DICTS rows kept."""
        kept = self._row_dicts  # searches run side by side: each works on its own `found`
        found = {place: kept.get(place) for place in places}
        missing = [place for place, row in found.items() if row is None]
        if missing:
            read = self.table.take(pa.array(missing, type=pa.int64())).drop_columns(["vector", "_rowid"]).to_pylist()
            found.update(zip(missing, read))
            if len(kept) + len(missing) > DICTS:
                kept.clear()
            kept.update(zip(missing, read))
        return [{key: value[:] if type(value) is list else value for key, value in found[place].items()}
                for place in places]

    def nearest_places(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The places of the k rows nearest the query by cosine, nearest first, and their float32
        distances; None when Lance's float32 order of them cannot be known from here (two of the
        first k+1 within `tie` of each other)."""
        if self.matrix is None or k < 1:
            return None
        query = np.asarray(query, dtype=np.float32)
        total, want = len(self.matrix), min(k + 1, len(self.matrix))
        exact_query = query.astype(np.float64)
        length = float(np.sqrt(exact_query @ exact_query))
        # Screened in float32 (off by at most gamma(dimension) * |query| from the exact cosine
        # times |query|): every row of the exact first `want` scores within twice that of the
        # want-th best screened score.
        screened = (self.matrix @ query) / self.norms
        candidates = np.arange(total)
        if want < total:
            floor = np.partition(screened, total - want)[total - want]
            candidates = np.flatnonzero(screened >= floor - 2.0 * _gamma(self.dimension) * length * (1 + 1e-3))
        cosine = (self.matrix[candidates].astype(np.float64) @ exact_query) / (self.norms[candidates] * length)
        order = np.argsort(-cosine, kind="stable")[:want]
        if want > 1 and float(np.min(cosine[order[:-1]] - cosine[order[1:]])) <= self.tie:
            return None
        top = order[:k]
        return candidates[top], (1.0 - cosine[top]).astype(np.float32)


class Resident:
    """A published version's `ServedRows`, read on first use, once (also when the first searches
    arrive together). It belongs to that version's checkout: a new version has its own."""

    def __init__(self, dataset, names: list[str]):
        self._dataset, self._names = dataset, names
        self._lock = threading.Lock()
        self._read = False
        self._rows: ServedRows | None = None

    def rows(self) -> ServedRows | None:
        if not self._read:
            with self._lock:
                if not self._read:
                    self._rows = ServedRows.read(self._dataset, self._names)
                    self._read = True
        return self._rows
