"""The LanceDB chunk table as the answer engine reads it: semantic / keyword / hybrid search of
the version the `serving` tag names, the corpus's vocabulary and gazetteer, per scope. How a
refresh writes and publishes a version is refresh.py (`Index` inherits it).
The database may be a folder or any LanceDB URI (s3://…), reached with `storage_options`.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import lancedb
import numpy as np
import pyarrow as pa

from ..errors import IndexNotReady, RefreshError, RefreshInProgress  # noqa: F401 (the index's errors, imported from here)
from ..language.words import STEMMER_VERSION
from .checked_embedder import checked
from .embeddings import Embedder
from .entities import Gazetteer, extract_rows
from .refresh import (  # noqa: F401 (the tables' names, imported from here)
    ENTITY_TABLE,
    SERVING_TAG,
    TABLE,
    VOCABULARY_TABLE,
    _STEMMER,
    RefreshStats,
    Refreshing,
    _column,
    _count_terms,
    _sql_list,
)
from .resident import Resident
from .scope import Scope, ScopedIndex, audience_clause, matches
from .scoped_text import ScopedText, fuse, with_scores
from .vector_store import VectorStore

log = logging.getLogger(__name__)
MODES = ("semantic", "keyword", "hybrid")
# Runs a hybrid search's keyword leg beside its vector leg; each leg waits on Lance, not Python.
_LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="keyword-leg")


class _Serving(NamedTuple):
    """The chunk table checked out at the serving version, with what readers ask of it."""
    table: object
    version: int
    columns: frozenset[str]
    names: list[str]  # the same in the table's order, as its queries return them
    chunks: int
    dataset: object  # the Lance dataset beneath the table, at that version: filtered reads
    resident: Resident  # its rows in memory, for hybrid searches (read on first use)


class Index(Refreshing):
    def __init__(self, uri: str | Path, embedder: Embedder, storage_options: dict[str, str] | None = None):
        self.uri = str(uri)
        self.embedder = embedder
        # A broken query vector must fail the search, not rank the table by noise.
        self._queries = checked(embedder)
        self._db = lancedb.connect(self.uri, storage_options=storage_options or None)
        self._serving = None  # table handle checked out at the serving version
        self._tags = None  # the chunk table's tags, for follow()
        self._refresh_lock = threading.Lock()
        self.last_refresh: RefreshStats | None = None
        self.documents = 0
        self._vocabulary = None
        # Question-time code finds the vectors this index stored through the embedder.
        self.store = VectorStore(self._db)
        self.embedder.store = self.store
        self._gazetteer = None
        self._scoped: dict = {}  # (version, kind, where) -> that scope's term counts / gazetteer
        self._scoped_lock = threading.Lock()
        self._building: dict = {}  # key of _scoped -> the lock of the one thread computing it
        self._paths = None  # (version, {source_id: path}) for scopes limited to some folders
        self._open_serving()

    # ---- reading -------------------------------------------------------------------------

    def _open_table(self):
        """The chunk table, or None before the first build."""
        try:
            return self._db.open_table(TABLE)
        except ValueError:
            return None

    def _open_serving(self) -> None:
        table = self._open_table()
        if table is None:
            return
        tags = table.tags.list()
        if SERVING_TAG not in tags:
            return  # a first build that never finished (killed half-way): nothing was published
        self._checkout(tags[SERVING_TAG]["version"])

    def _checkout(self, version: int) -> None:
        table = self._db.open_table(TABLE)
        table.checkout(version)
        # A checked-out version never changes: what every question would ask of it (its
        # version, columns, size) is read once here; each such call on the handle costs ~0.6 ms.
        names = table.schema.names
        dataset = table.to_lance()
        serving = _Serving(table, table.version, frozenset(names), names, table.count_rows(), dataset,
                           Resident(dataset, names))
        self.documents = len(set(_column(table, "source_id")))
        self.store.reopen()  # another process may have added the new version's vectors
        self._serving = serving  # one reference swap: readers see the old or the new, never half

    def follow(self) -> bool:
        """Serve the version the `serving` tag names now, if another process moved it (one small
        read of the tag); True when it moved. A replica calls this every poll interval."""
        if self._tags is None:  # any handle reads the tags as they are now: open one once
            table = self._open_table()
            if table is None:
                return False
            self._tags = table.tags
        try:
            version = self._tags.get_version(SERVING_TAG)
        except RuntimeError:
            if SERVING_TAG not in self._tags.list():
                return False  # nothing published yet
            raise  # the storage failed
        if version == self.version:
            return False
        self._checkout(version)
        log.info("serving index version %s (the serving tag moved)", version)
        return True

    @property
    def ready(self) -> bool:
        return self._serving is not None

    @property
    def table(self):
        return self._checked_out.table

    @property
    def _checked_out(self) -> "_Serving":
        if self._serving is None:
            raise IndexNotReady("the index has not been built yet: run `citebot index`")
        return self._serving

    @property
    def version(self) -> int | None:
        return self._serving.version if self._serving is not None else None

    def count(self) -> int:
        return self._checked_out.chunks

    def scoped(self, scope: Scope | dict | None) -> ScopedIndex:
        """This index as a question in `scope` may read it (None: documents for everyone)."""
        return ScopedIndex(self, Scope.of(scope))

    def where(self, scope: Scope) -> str:
        """The scope as one SQL filter over the chunk table."""
        if "audience" not in self._checked_out.columns:
            # Built before audiences were stored, it may hold restricted documents as public ones.
            raise IndexNotReady("the index predates document audiences: run `citebot index` to rebuild it")
        clause = audience_clause(scope.audiences)
        if scope.sources:
            # Globs become the ids of the documents they match: a plain IN filter, exact for `*`
            # against `**` where SQL LIKE would let `%` run across folders.
            ids = sorted(source for source, path in self._source_paths().items() if matches(path, scope.sources))
            clause += f" AND source_id IN ({_sql_list(ids)})" if ids else " AND false"
        return clause

    def _source_paths(self) -> dict[str, str]:
        version = self._checked_out.version
        if self._paths is None or self._paths[0] != version:
            self._paths = (version, dict(zip(_column(self.table, "source_id"), _column(self.table, "path"))))
        return self._paths[1]

    def search(self, query: str, mode: str = "hybrid", top_k: int = 8,
               query_vector: np.ndarray | None = None, where: str | None = None) -> list[dict]:
        """Rows best first, each with `similarity` (cosine to the query), `keyword_score` (BM25,
        0 when the keyword leg did not find it) and `score` (the fused rank score of the mode).
        `where` filters both legs before they rank (a prefilter): a row outside it can neither
        be returned nor push a permitted row out of the top k."""
        if mode not in MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; use one of {MODES}")
        narrows = self._narrows(where)  # a filter that keeps every row only slows both legs (~3 ms)
        if mode == "hybrid" and not narrows:
            query_vector, rows = self._hybrid(query, top_k, query_vector)
        else:
            if mode != "keyword" and query_vector is None:
                query_vector = self._queries.encode_query(query)
            if mode == "semantic" or not narrows:
                rows = self._search_table(query, mode, top_k, query_vector, where if narrows else None)
            else:
                rows = self._search_in_scope(query, mode, top_k, query_vector, where)
        for row in rows:  # the evidence checks compare against these rows' vectors next
            if row.get("vector") is not None:
                row["vector"] = np.asarray(row["vector"], dtype=np.float32)
                self.store.remember(row["text"], row["vector"])
        return [self._result(row, query_vector, mode) for row in rows]

    def _search_table(self, query: str, mode: str, top_k: int, query_vector, where: str | None = None) -> list[dict]:
        """One leg alone: semantic (within `where`, a prefilter) or keyword over every row."""
        table = self.table
        if mode == "semantic":
            search = table.search(query_vector).distance_type("cosine")
        else:
            search = table.search(_words(query), query_type="fts")
        return (search.where(where, prefilter=True) if where else search).limit(top_k).to_list()

    def _hybrid(self, query: str, top_k: int, query_vector) -> tuple[np.ndarray, list[dict]]:
        """LanceDB's hybrid query, leg by leg and fused as it fuses them (scoped_text.fuse): the
        same rows in the same order. Lance ranks the keyword leg (row ids and BM25 scores); the
        rows' columns, and the vector leg when its order is provably Lance's, come from memory
        (resident.py): 3 ms where LanceDB's query builder took 16. The keyword leg needs no
        vector: it runs while the model encodes the query. (the query vector, the rows)"""
        serving = self._checked_out  # both legs read the same version, whatever a reload does
        resident = serving.resident.rows()
        columns = ["_score"] if resident is not None else [*serving.names, "_score"]
        keyword = _LEGS.submit(serving.dataset.to_table, columns=columns, with_row_id=True,
                               full_text_query=_words(query), limit=top_k)
        try:
            if query_vector is None:
                query_vector = self._queries.encode_query(query)
            near = resident.nearest_places(query_vector, top_k) if resident is not None else None
            if near is None:
                vector = serving.dataset.to_table(columns=[*serving.names, "_distance"], with_row_id=True, nearest={
                    "column": "vector", "q": query_vector, "k": top_k, "metric": "cosine"})
        except BaseException:
            keyword.cancel()
            raise
        if near is not None:
            return query_vector, resident.fused_rows(near, keyword.result(), top_k)
        found = keyword.result() if resident is None else resident.keyword_rows(keyword.result())
        return query_vector, _rows(fuse(query, vector, found, top_k))

    def _search_in_scope(self, query: str, mode: str, top_k: int, query_vector, where: str) -> list[dict]:
        """Keyword and hybrid search for a scope that leaves rows out: the keyword leg ranks with
        the scope's own BM25 statistics (scoped_text.py), so hidden rows cannot move it."""
        hits = self.scoped_text(where).search(query, top_k)
        ids = [chunk_id for chunk_id, _ in hits]
        serving = self._checked_out  # the hits' rows, read from the Lance dataset: 2 ms, not 4
        keyword = with_scores(serving.dataset.to_table(columns=serving.names, with_row_id=True, limit=len(ids) or 1,
                                                       filter=f"chunk_id IN ({_sql_list(ids)})" if ids else "false"), hits)
        if mode == "keyword":
            return keyword.to_pylist()
        vector = (self.table.search(query_vector).distance_type("cosine").where(where, prefilter=True)
                  .with_row_id(True).limit(top_k).to_arrow())
        return fuse(query, vector, keyword, top_k).to_pylist()

    def scoped_text(self, where: str) -> ScopedText:
        """The full-text index of the rows `where` allows, built once per version and scope."""
        return self._per_scope("text", where, lambda: ScopedText(
            self.table.search().where(where).select(["chunk_id", "text"]).limit(None).to_arrow()))

    def warm_up(self, scope: Scope, terms: bool = True) -> None:
        """Read or build now what the first question in `scope` would: the term counts, the
        gazetteer, for a scope that leaves rows out its own full-text index, the rows in memory
        and (unless `terms` is False: a process asking one question) every chunk's terms, its
        row as a search returns it, and the stored vectors (vector_store.py)."""
        where = self.where(scope)
        self.vocabulary(where)
        self.entities(where)
        if self._narrows(where):
            self.scoped_text(where)
        rows = self._checked_out.resident.rows()
        if rows is not None and terms:
            rows.warm_terms()
            rows.warm_rows()
        if terms:  # many questions follow: the stored vectors they look up are read once
            self.store.hold()

    @staticmethod
    def _result(row: dict, query_vector, mode: str) -> dict:
        vector = row.pop("vector", None)
        similarity = float(np.dot(vector, query_vector)) if vector is not None and query_vector is not None else 0.0
        keyword = row.pop("_score", None)
        distance = row.pop("_distance", None)
        fused = row.pop("_relevance_score", None)
        row.pop("_rowid", None)
        row["similarity"] = round(similarity, 4)
        row["keyword_score"] = round(float(keyword or 0.0), 4)
        row["score"] = round(float(fused if fused is not None else (similarity if mode == "semantic" else keyword or 0.0)), 4)
        row["retrieval"] = mode
        if distance is not None and mode == "semantic":
            row["similarity"] = round(1.0 - float(distance), 4)
        return row

    def fetch(self, where: str, limit: int = 50) -> list[dict]:
        """Rows matching a SQL filter (used to pull neighbouring and linked chunks), read from
        the Lance dataset beneath the table: 2.3 ms where LanceDB's query builder takes 4.3."""
        serving = self._checked_out
        columns = sorted(serving.columns - {"vector"})
        return serving.dataset.to_table(columns=columns, filter=where, limit=limit).to_pylist()

    def related(self, chunks: list[dict], where: str | None = None) -> list[dict]:
        """The other chunks of the given chunks' sections, and the opening chunk of each
        document they link to or are superseded by (within `where`)."""
        if not chunks:
            return []
        have = {c["chunk_id"] for c in chunks}
        linked = {target for c in chunks for target in [*(c.get("links") or []), c.get("superseded_by")] if target}
        resident = None if self._narrows(where) else self._checked_out.resident.rows()
        if resident is not None:
            found = resident.related({(c["source_id"], c["anchor"]) for c in chunks}, linked, limit=100)
            return [row for row in found if row["chunk_id"] not in have]
        sections = " OR ".join(
            f"(source_id = {_sql_list([c['source_id']])} AND anchor = {_sql_list([c['anchor']])})"
            for c in chunks)
        wanted = f"({sections})"
        if linked:
            wanted += f" OR (source_id IN ({_sql_list(sorted(linked))}) AND chunk_index = 0 AND anchor = '')"
        if where:
            wanted = f"({where}) AND ({wanted})"
        return [row for row in self.fetch(wanted, limit=100) if row["chunk_id"] not in have]

    def vocabulary(self, where: str | None = None) -> tuple[dict[str, int], int]:
        """(chunk frequency of every term, number of chunks) for the serving version: the
        evidence behind 'this word appears nowhere in the knowledge base'. Counted at index time
        and read from the vocabulary table, once per version. Within `where`, counted over the
        rows it allows (once per version and scope), so that a word only a hidden document holds
        reads as unknown, as it would in an index without that document."""
        if self._narrows(where):
            return self._per_scope("terms", where, lambda: _counts(
                self.table.search().where(where).select(["text"]).limit(None).to_arrow().column(0).to_pylist()))
        serving = self._checked_out
        if self._vocabulary is None or self._vocabulary[0] != serving.version:
            # An index built before the counts were stored, or counted with another stemmer, is
            # counted here (a reader never writes; `citebot index` stores the new counts).
            frequency = self._stored_vocabulary(serving.version) or _count_terms(_column(serving.table, "text"))
            self._vocabulary = (serving.version, frequency, serving.chunks)
        return self._vocabulary[1], self._vocabulary[2]

    def _stored_vocabulary(self, version: int) -> dict[str, int] | None:
        try:
            rows = (self._db.open_table(VOCABULARY_TABLE).search().where(f"version = {int(version)}")
                    .select(["term", "chunks"]).limit(None).to_arrow())
        except ValueError:
            return None
        frequency = dict(zip(rows.column("term").to_pylist(), rows.column("chunks").to_pylist()))
        return frequency if frequency.pop(_STEMMER, None) == STEMMER_VERSION else None

    def entities(self, where: str | None = None) -> Gazetteer:
        """The corpus's gazetteer, read once per published version (a few thousand short rows);
        within `where`, found in the documents it allows alone, once per version and scope."""
        if self._narrows(where):
            return self._per_scope("entities", where, lambda: Gazetteer(extract_rows(
                self.table.search().where(where).select(["source_id", "path", "chunk_index", "title", "section", "body"])
                .limit(None).to_arrow().to_pylist())))
        version = self._checked_out.version
        if self._gazetteer is None or self._gazetteer[0] != version:
            try:
                stored = self._db.open_table(ENTITY_TABLE).to_arrow().to_pylist()
            except ValueError:  # an index built before the gazetteer existed: `citebot index` adds it
                stored = []
            self._gazetteer = (version, Gazetteer.from_rows(stored))
        return self._gazetteer[1]

    def _narrows(self, where: str | None) -> bool:
        """The filter leaves some rows out (a corpus without restricted documents pays nothing)."""
        return bool(where) and self._per_scope(
            "narrows", where, lambda: self.table.count_rows(where) != self._checked_out.chunks)

    def _per_scope(self, kind: str, where: str, compute):
        """What one scope derives from the serving version, computed once, also when the scope's
        first questions arrive together (the text index takes 0.1 s a build: each would build
        its own); entries of older versions are dropped."""
        version = self._checked_out.version
        key = (version, kind, where)
        with self._scoped_lock:
            if key in self._scoped:
                return self._scoped[key]
            building = self._building.setdefault(key, threading.Lock())
        with building:  # one computes; the others wait for it and read what it stored
            with self._scoped_lock:
                if key in self._scoped:
                    return self._scoped[key]
            try:
                value = compute()
            except BaseException:
                with self._scoped_lock:
                    self._building.pop(key, None)
                raise
            with self._scoped_lock:
                for old in [k for k in self._scoped if k[0] != version]:
                    del self._scoped[old]
                self._scoped[key] = value
                self._building.pop(key, None)
        return value

    def metadata(self) -> dict:
        serving = self._checked_out
        return {"uri": self.uri, "version": serving.version, "chunks": serving.chunks,
                "documents": self.documents, "model": self.embedder.model_name}


def _words(query: str) -> str:
    """The question as the full-text index should read it: words, never query syntax. A question
    pasted in double quotes is otherwise a phrase query, which an index without word positions
    refuses (the user got "Something went wrong"); the tokenizer drops the quotes anyway, so no
    other question's keyword hits change."""
    return query.replace('"', " ")


def _rows(found: pa.Table) -> list[dict]:
    """A search's rows as dicts, each `vector` as float32 numpy (the conversion to Python lists of
    floats, 384 a row, cost more than the search's own fusion)."""
    if "vector" not in found.column_names:
        return found.to_pylist()
    column = found.column("vector")
    if column.null_count or not len(column):
        return found.to_pylist()
    vectors = np.array(column.combine_chunks().flatten().to_numpy(zero_copy_only=False),
                       dtype=np.float32).reshape(len(column), -1)
    rows = found.drop_columns(["vector"]).to_pylist()
    for row, vector in zip(rows, vectors):
        row["vector"] = vector
    return rows


def _counts(texts: list[str]) -> tuple[dict[str, int], int]:
    """(chunk frequency of every term, number of chunks): what `vocabulary` returns."""
    return _count_terms(texts), len(texts)


