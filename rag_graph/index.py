"""The LanceDB chunk table: incremental, atomic refresh and semantic / keyword / hybrid search.

Atomicity rides on LanceDB versions. A refresh writes its changes in one `merge_insert` commit,
brings the indexes up to date, validates the new version, and only then moves the `serving` tag
to it. Readers (this process and any other) search the version the tag names, so they never see
a half-built table; a refresh that fails restores the previous version and leaves the tag alone.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS
from lancedb.rerankers import RRFReranker

from .embeddings import Embedder, checked
from .ingest import Chunk, Corpus, load_corpus
from .text import term_set

log = logging.getLogger(__name__)

TABLE = "chunks"
SERVING_TAG = "serving"
MODES = ("semantic", "keyword", "hybrid")
_STORED = ["chunk_id", "source_id", "title", "section", "anchor", "url", "chunk_index", "body",
           "text", "status", "effective_date", "authority", "superseded_by", "links", "path",
           "content_hash"]


class RefreshError(RuntimeError):
    """The refresh did not happen; the previous version keeps serving."""


class RefreshInProgress(RefreshError):
    pass


class IndexNotReady(RuntimeError):
    pass


@dataclass
class RefreshStats:
    documents: int
    chunks: int
    embedded: int
    deleted: int
    seconds: float
    version: int
    skipped: list[str] = field(default_factory=list)
    finished_at: float = field(default_factory=time.time)  # epoch seconds

    def as_dict(self) -> dict:
        return {"documents": self.documents, "chunks": self.chunks, "embedded": self.embedded,
                "deleted": self.deleted, "seconds": round(self.seconds, 3), "version": self.version,
                "skipped": self.skipped}


def _schema(dimension: int) -> pa.Schema:
    return pa.schema([
        ("chunk_id", pa.string()), ("source_id", pa.string()), ("title", pa.string()),
        ("section", pa.string()), ("anchor", pa.string()), ("url", pa.string()),
        ("chunk_index", pa.int32()), ("body", pa.string()), ("text", pa.string()),
        ("status", pa.string()), ("effective_date", pa.string()), ("authority", pa.int32()),
        ("superseded_by", pa.string()), ("links", pa.list_(pa.string())), ("path", pa.string()),
        ("content_hash", pa.string()), ("vector", pa.list_(pa.float32(), dimension)),
    ])


def _sql_list(values) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


def _column(table, name: str) -> list:
    """One column of every row, without reading the vectors."""
    return table.search().select([name]).limit(None).to_arrow().column(0).to_pylist()


class Index:
    def __init__(self, uri: str | Path, embedder: Embedder):
        self.uri = str(uri)
        self.embedder = embedder
        # A broken query vector must fail the search, not rank the table by noise.
        self._queries = checked(embedder)
        self._db = lancedb.connect(self.uri)
        self._serving = None  # table handle checked out at the serving version
        self._refresh_lock = threading.Lock()
        self.last_refresh: RefreshStats | None = None
        self.documents = 0
        self._vocabulary = None
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
        table.checkout(tags[SERVING_TAG]["version"])
        self._serving = table
        self.documents = len(set(_column(table, "source_id")))

    @property
    def ready(self) -> bool:
        return self._serving is not None

    @property
    def table(self):
        if self._serving is None:
            raise IndexNotReady("the index has not been built yet: run `citebot index`")
        return self._serving

    @property
    def version(self) -> int | None:
        return self._serving.version if self._serving is not None else None

    def count(self) -> int:
        return self.table.count_rows()

    def search(self, query: str, mode: str = "hybrid", top_k: int = 8,
               query_vector: np.ndarray | None = None) -> list[dict]:
        """Rows best first, each with `similarity` (cosine to the query), `keyword_score` (BM25,
        0 when the keyword leg did not find it) and `score` (the fused rank score of the mode)."""
        if mode not in MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; use one of {MODES}")
        table = self.table
        if mode != "keyword" and query_vector is None:
            query_vector = self._queries.encode_query(query)
        if mode == "semantic":
            rows = table.search(query_vector).distance_type("cosine").limit(top_k).to_list()
        elif mode == "keyword":
            rows = table.search(query, query_type="fts").limit(top_k).to_list()
        else:
            rows = (table.search(query_type="hybrid").vector(query_vector).text(query)
                    .distance_type("cosine").rerank(RRFReranker(return_score="all"))
                    .limit(top_k).to_list())
        return [self._result(row, query_vector, mode) for row in rows]

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
        """Rows matching a SQL filter (used to pull neighbouring and linked chunks)."""
        rows = self.table.search().where(where).limit(limit).to_list()
        for row in rows:
            row.pop("vector", None)
        return rows

    def related(self, chunks: list[dict]) -> list[dict]:
        """The other chunks of the given chunks' sections, and the opening chunk of each
        document they link to or are superseded by."""
        if not chunks:
            return []
        sections = " OR ".join(
            f"(source_id = {_sql_list([c['source_id']])} AND anchor = {_sql_list([c['anchor']])})"
            for c in chunks)
        linked = {target for c in chunks for target in [*(c.get("links") or []), c.get("superseded_by")] if target}
        where = f"({sections})"
        if linked:
            where += f" OR (source_id IN ({_sql_list(sorted(linked))}) AND chunk_index = 0 AND anchor = '')"
        have = {c["chunk_id"] for c in chunks}
        return [row for row in self.fetch(where, limit=100) if row["chunk_id"] not in have]

    def vocabulary(self) -> tuple[dict[str, int], int]:
        """(chunk frequency of every term, number of chunks) for the serving version: the
        evidence behind 'this word appears nowhere in the knowledge base'."""
        version = self.table.version
        if self._vocabulary is None or self._vocabulary[0] != version:
            frequency: Counter = Counter()
            texts = _column(self.table, "text")
            for text in texts:
                frequency.update(term_set(text))
            self._vocabulary = (version, dict(frequency), len(texts))
        return self._vocabulary[1], self._vocabulary[2]

    def metadata(self) -> dict:
        table = self.table
        return {"uri": self.uri, "version": table.version, "chunks": table.count_rows(),
                "documents": self.documents, "model": self.embedder.model_name}

    # ---- writing -------------------------------------------------------------------------

    def refresh(self, corpus_dir: str | Path) -> RefreshStats:
        """Bring the table in line with the corpus folder. Raises RefreshError and keeps the
        previous version serving when anything goes wrong; RefreshInProgress when one already runs."""
        if not self._refresh_lock.acquire(blocking=False):
            raise RefreshInProgress("a reload is already running")
        try:
            return self._refresh(Path(corpus_dir))
        finally:
            self._refresh_lock.release()

    def _refresh(self, corpus_dir: Path) -> RefreshStats:
        started = time.perf_counter()
        try:
            corpus = load_corpus(corpus_dir)
        except FileNotFoundError as error:
            raise RefreshError(str(error)) from None
        if not corpus.chunks:
            raise RefreshError(f"no indexable documents in {corpus_dir}; the previous index keeps serving")
        wanted = {chunk.chunk_id: chunk for chunk in corpus.chunks}
        if len(wanted) != len(corpus.chunks):
            raise RefreshError("two documents share a source_id; give each document its own source_id")

        table = self._open_table()
        existing = {}
        if table is not None:
            existing = dict(zip(_column(table, "chunk_id"), _column(table, "content_hash")))
        changed = [c for c in corpus.chunks if existing.get(c.chunk_id) != c.content_hash]
        removed = [chunk_id for chunk_id in existing if chunk_id not in wanted]

        if table is not None and not changed and not removed:
            # Nothing to do: do not even load the embedding model.
            if self._serving is None or self._serving.version != table.version:
                # The latest version was written by a refresh that died before publishing it:
                # finish its indexes and check it like any other before it may serve.
                try:
                    self._update_indexes(table)
                    self._validate(table, wanted)
                except Exception as error:
                    log.exception("unpublished version failed validation")
                    raise RefreshError(f"reload failed ({type(error).__name__}: {error}); "
                                       "the previous index keeps serving") from error
                self._publish(table)
            return self._finish(corpus, 0, 0, started, table.version)

        previous = table.version if table is not None else None
        try:
            rows = self._embed(changed)
            if table is None:
                table = self._db.create_table(TABLE, data=rows, schema=_schema(self.embedder.dimension))
            else:
                merge = (table.merge_insert("chunk_id").when_matched_update_all()
                         .when_not_matched_insert_all())
                if removed:
                    merge = merge.when_not_matched_by_source_delete(f"chunk_id IN ({_sql_list(removed)})")
                merge.execute(rows)
            self._update_indexes(table)
            self._validate(table, wanted)
        except Exception as error:
            self._roll_back(table, previous)
            log.exception("refresh failed; previous version keeps serving")
            raise RefreshError(f"reload failed ({type(error).__name__}: {error}); the previous index keeps serving") from error
        self._publish(table)
        return self._finish(corpus, len(changed), len(removed), started, table.version)

    def _embed(self, chunks: list[Chunk]) -> pa.Table:
        vectors = self.embedder.encode([chunk.text for chunk in chunks])
        if len(chunks) and (vectors.shape[0] != len(chunks) or not np.isfinite(vectors).all()):
            raise RefreshError("the embedding model returned malformed vectors")
        schema = _schema(vectors.shape[1] if len(chunks) else self.embedder.dimension)
        columns = {name: [getattr(chunk, name) for chunk in chunks] for name in _STORED}
        flat = pa.array(vectors.reshape(-1), type=pa.float32())
        columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, schema.field("vector").type.list_size)
        return pa.table(columns, schema=schema)

    @staticmethod
    def _update_indexes(table) -> None:
        if not any(index.index_type == "FTS" for index in table.list_indices()):
            table.create_index("text", config=FTS(with_position=False))
        # Rows written after an index build are only scanned until optimize(); fold them in now.
        table.optimize(cleanup_older_than=timedelta(days=7))

    @staticmethod
    def _validate(table, wanted: dict[str, Chunk]) -> None:
        ids = set(_column(table, "chunk_id"))
        if ids != set(wanted):
            raise RefreshError(f"table holds {len(ids)} chunks, corpus has {len(wanted)}")
        probe = next(iter(wanted.values()))
        word = max(probe.body.split(), key=len, default="")
        if word and not table.search(word, query_type="fts").limit(1).to_list():
            raise RefreshError("full-text index does not answer")

    def _roll_back(self, table, previous: int | None) -> None:
        if table is None:
            return
        try:
            if previous is None:
                self._db.drop_table(TABLE)
            elif table.version != previous:
                table.restore(previous)
        except Exception:  # the serving tag still names the good version; nothing reads the rest
            log.exception("could not restore version %s", previous)

    def _publish(self, table) -> None:
        version = table.version
        tags = table.tags.list()
        if SERVING_TAG in tags:
            table.tags.update(SERVING_TAG, version)
        else:
            table.tags.create(SERVING_TAG, version)
        serving = self._db.open_table(TABLE)
        serving.checkout(version)
        self._serving = serving  # one reference swap: readers see the old or the new, never half

    def _finish(self, corpus: Corpus, embedded: int, deleted: int, started: float, version: int) -> RefreshStats:
        self.documents = len(corpus.documents)
        self.last_refresh = RefreshStats(
            documents=len(corpus.documents), chunks=len(corpus.chunks), embedded=embedded,
            deleted=deleted, seconds=time.perf_counter() - started, version=version,
            skipped=corpus.skipped)
        return self.last_refresh
