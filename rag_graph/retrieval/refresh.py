"""Writing the index: an incremental, atomic refresh of the LanceDB chunk table, published by tag.

Atomicity rides on LanceDB versions. A refresh writes its changes in one `merge_insert` commit,
brings the indexes up to date, validates the new version, and only then moves the `serving` tag
to it. Readers (this process and any other) search the version the tag names, so they never see
a half-built table; a refresh that fails restores the previous version and leaves the tag alone.
Replicas follow the tag (`Index.follow`); every published version also keeps a `published-N`
tag, so a rollback is moving `serving` back, and cleaning up old versions never removes one of
them. The tables, tags and columns named here are what the reading side (index.py) reads.
"""
from __future__ import annotations

import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Iterable

import numpy as np
import pyarrow as pa
from lancedb.index import FTS

from ..errors import ModelError, RefreshError, RefreshInProgress
from ..language.markdown import sentences
from ..language.words import STEMMER_VERSION, terms
from . import published
from .progress import Progress
from .entities import EXTRACTOR_VERSION, extract
from .entities import rows as entity_rows
from .ingest import Chunk, Corpus, load_corpus
from .reading import Reading

log = logging.getLogger(__name__)

TABLE = "chunks"
ENTITY_TABLE = "entities"  # the corpus's gazetteer (entities.py), rewritten with every change
_ENTITY_SCHEMA = pa.schema([("name", pa.string()), ("kind", pa.string()), ("source_id", pa.string()),
                            ("person", pa.bool_())], metadata={"extractor": str(EXTRACTOR_VERSION)})
SERVING_TAG = "serving"
# A word the full-text index holds, to probe it with: its tokenizer splits at anything but letters
# and digits and drops tokens over 40 characters. The longest whitespace-separated word was probed
# before, and a reStructuredText title's `*****` rule or a SHA-256 sum made a sound index "not
# answer": the Debian Developer's Reference folder as installed was embedded for 10 minutes, then refused.
_TOKEN = re.compile(r"[^\W_]+")
_LONGEST_TOKEN = 40
PUBLISHED_TAG = "published-{}"  # one per published version, the newest KEEP_PUBLISHED kept
KEEP_PUBLISHED = 3
# Untagged versions older than this are deleted after a publish: a replica's query that started
# on one just before the tag moved has long finished by then.
CLEANUP_AFTER = timedelta(hours=1)
# optimize() also prunes versions, and refuses to while a tag names an old one (the serving tag
# of a table refreshed a week later): it prunes nothing here, _clean_up does it keeping tags.
_NO_PRUNING = timedelta(days=365 * 100)
_STORED = ["chunk_id", "source_id", "title", "section", "anchor", "url", "chunk_index", "body",
           "text", "status", "effective_date", "authority", "superseded_by", "links", "path",
           "audience", "content_hash"]
VOCABULARY_TABLE = "vocabulary"  # chunk frequency of every term, rows per published version
_STEMMER = "\x00stemmer"  # a row whose count is the STEMMER_VERSION the terms were counted with (no term has a NUL)
_VOCABULARY_SCHEMA = pa.schema([("version", pa.int64()), ("term", pa.string()), ("chunks", pa.int64())])


@dataclass
class RefreshStats:
    documents: int
    chunks: int
    embedded: int
    deleted: int
    seconds: float
    version: int
    skipped: list[str] = field(default_factory=list)
    formats: dict[str, dict[str, int]] = field(default_factory=dict)  # per file extension: read, skipped
    finished_at: float = field(default_factory=time.time)  # epoch seconds
    # Paths of documents that a setting decides about (what they lose without it: bot/losses.py).
    unlinked: list[str] = field(default_factory=list)  # no `url`: linked only by CITEBOT_SOURCE_URL
    restricted: list[str] = field(default_factory=list)  # an `audience`: shown only through CITEBOT_ACCESS

    def as_dict(self) -> dict:
        return {"documents": self.documents, "chunks": self.chunks, "embedded": self.embedded,
                "deleted": self.deleted, "seconds": round(self.seconds, 3), "version": self.version,
                "skipped": self.skipped, "formats": self.formats, "unlinked": self.unlinked,
                "restricted": self.restricted}


def _schema(dimension: int) -> pa.Schema:
    return pa.schema([
        ("chunk_id", pa.string()), ("source_id", pa.string()), ("title", pa.string()),
        ("section", pa.string()), ("anchor", pa.string()), ("url", pa.string()),
        ("chunk_index", pa.int32()), ("body", pa.string()), ("text", pa.string()),
        ("status", pa.string()), ("effective_date", pa.string()), ("authority", pa.int32()),
        ("superseded_by", pa.string()), ("links", pa.list_(pa.string())), ("path", pa.string()),
        ("audience", pa.list_(pa.string())), ("content_hash", pa.string()), ("vector", pa.list_(pa.float32(), dimension)),
    ])


def _sql_list(values) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


def _column(table, name: str) -> list:
    """One column of every row, without reading the vectors."""
    return table.search().select([name]).limit(None).to_arrow().column(0).to_pylist()


class Refreshing:
    """The writing side of `Index` (which sets what these methods use: the database `_db`, the
    vector `store`, the `embedder`, `_refresh_lock`, and reads the serving version)."""

    def refresh(self, corpus_dir: str | Path, reading: Reading = Reading()) -> RefreshStats:
        """Bring the table in line with the corpus folder. Raises RefreshError and keeps the
        previous version serving when anything goes wrong; RefreshInProgress when one already runs."""
        if not self._refresh_lock.acquire(blocking=False):
            raise RefreshInProgress("a reload is already running")
        try:
            return self._refresh(Path(corpus_dir), reading)
        finally:
            self._refresh_lock.release()

    def _what_serves(self) -> str:
        """The end of a failed refresh's message: what answers meanwhile, said as it is."""
        if self.ready:
            return f"; the previous index keeps serving (version {self.version})"
        return "; there is no index yet, so nothing can be answered until a refresh succeeds"

    def _refresh(self, corpus_dir: Path, reading: Reading) -> RefreshStats:
        started = time.perf_counter()
        try:
            built_from = published.fingerprint(corpus_dir, self.embedder.model_name, reading)  # before reading
            corpus = load_corpus(corpus_dir, reading)
        except FileNotFoundError as error:
            raise RefreshError(f"{error}{self._what_serves()}") from None
        if not corpus.chunks:
            raise RefreshError(f"no indexable documents in {corpus_dir}{self._what_serves()}")
        wanted = {chunk.chunk_id: chunk for chunk in corpus.chunks}
        if len(wanted) != len(corpus.chunks):
            raise RefreshError("two documents share a source_id; give each document its own source_id")

        table = self._open_table()
        existing = {}
        # An index older than the vector store (or its token vectors) or the audience column is rebuilt whole.
        if table is not None and self.store.exists() and "audience" in table.schema.names:
            existing = dict(zip(_column(table, "chunk_id"), _column(table, "content_hash")))
        changed = [c for c in corpus.chunks if existing.get(c.chunk_id) != c.content_hash]
        removed = [chunk_id for chunk_id in existing if chunk_id not in wanted]

        if table is not None and not changed and not removed:
            self._unchanged(table, corpus, wanted)
            return self._finish(corpus, 0, 0, started, self.version, built_from)
        table = self._write(table, bool(existing), changed, removed, corpus, wanted)
        self._publish(table)
        return self._finish(corpus, len(changed), len(removed), started, table.version, built_from)

    def _unchanged(self, table, corpus: Corpus, wanted: dict[str, Chunk]) -> None:
        """Nothing to write (the embedding model is not even loaded); a version written but never
        published is checked and published, what an older version of the code stored is renewed."""
        if self.version != table.version and table.version not in _published(table.tags.list()):
            # The latest version was written by a refresh that died before publishing it:
            # finish its indexes and check it like any other before it may serve. (A published
            # one was rolled back from: the rollback holds until the documents change.)
            try:
                self._update_indexes(table)
                self._validate(table, wanted)
                self._save_vocabulary(table, corpus)
            except Exception as error:
                log.exception("unpublished version failed validation")
                raise RefreshError(f"reload failed ({type(error).__name__}: {error})"
                                   f"{self._what_serves()}") from error
            self._publish(table)
        elif self.version == table.version and self._stored_vocabulary(table.version) is None:
            self._save_vocabulary(table, corpus)  # counted with an older stemmer: count again
        if not self._entities_current():
            self._store_entities(corpus)

    def _write(self, table, incremental: bool, changed: list[Chunk], removed: list[str], corpus: Corpus,
               wanted: dict[str, Chunk]):
        """The changed chunks written as one new version, its indexes built and checked; on any
        failure the previous version is restored (the serving tag never moved) and RefreshError
        (or the ModelError that names a setting) is raised. The table holding the new version."""
        previous = table.version if table is not None else None
        try:
            rows = self._embed(changed, removed)
            if table is None or not incremental:
                # A first build, or a rebuild of an older index: every row as one new version
                # (the serving tag keeps naming the old one until this one is checked).
                table = self._db.create_table(TABLE, data=rows, schema=rows.schema,
                                              mode="overwrite" if table is not None else "create")
            else:
                merge = (table.merge_insert("chunk_id").when_matched_update_all()
                         .when_not_matched_insert_all())
                if removed:
                    merge = merge.when_not_matched_by_source_delete(f"chunk_id IN ({_sql_list(removed)})")
                merge.execute(rows)
            self._update_indexes(table)
            self.store.optimize()
            self._validate(table, wanted)
            self._save_vocabulary(table, corpus)
            self._store_entities(corpus)
        except ModelError:
            self._roll_back(table, previous)
            raise  # a setting or a file to fix, said in one line: no traceback
        except Exception as error:
            self._roll_back(table, previous)
            log.exception("refresh failed; previous version keeps serving")
            raise RefreshError(f"reload failed ({type(error).__name__}: {error}){self._what_serves()}") from error
        return table

    def _embed(self, chunks: list[Chunk], removed: list[str]) -> pa.Table:
        """The chunks' rows, with their vectors. The chunks' vectors again, their token vectors
        and their sentences' vectors (all from the same forward pass) go to the vector store,
        for question-time lookups by text."""
        parts = [list(sentences(chunk.body)) for chunk in chunks]
        progress = Progress([chunk.source_id for chunk in chunks])
        vectors, part_vectors, tokens = self.embedder.encode_chunks([chunk.text for chunk in chunks], parts,
                                                                    progress.advance)
        progress.finish()
        if len(chunks) and (vectors.shape[0] != len(chunks) or not np.isfinite(vectors).all()
                            or [len(p) for p in part_vectors] != [len(p) for p in parts]
                            or not all(np.isfinite(p).all() for p in part_vectors)
                            or len(tokens) != len(chunks) or not all(np.isfinite(t).all() for t in tokens)):
            raise RefreshError("the embedding model returned malformed vectors")
        owned = [(chunk.chunk_id, chunk.text) for chunk in chunks]
        owned += [(chunk.chunk_id, part) for chunk, p in zip(chunks, parts) for part in p]
        self.store.replace([chunk.chunk_id for chunk in chunks] + removed, owned,
                           np.concatenate([vectors, *part_vectors]), [*tokens, *[None] * (len(owned) - len(chunks))])
        schema = _schema(vectors.shape[1] if len(chunks) else self.embedder.dimension)
        columns = {name: [getattr(chunk, name) for chunk in chunks] for name in _STORED}
        flat = pa.array(vectors.reshape(-1), type=pa.float32())
        columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, schema.field("vector").type.list_size)
        return pa.table(columns, schema=schema)

    @staticmethod
    def _update_indexes(table) -> None:
        # The full-text index is built afresh after every write. LanceDB's incremental update
        # (optimize) keeps replaced and deleted rows in the BM25 statistics, so keyword scores
        # drifted with the index's edit history: after two documents were changed and changed back,
        # 37signals' "what's the level code for Head of Customer Support?" scored 10.25 instead of
        # 10.06 and was declined. A rebuild takes 0.1 s on 18F's 3,468 chunks.
        table.create_index("text", config=FTS(with_position=False), replace=True)
        table.optimize(cleanup_older_than=_NO_PRUNING)  # compacts the fragments the write left

    @staticmethod
    def _validate(table, wanted: dict[str, Chunk]) -> None:
        ids = set(_column(table, "chunk_id"))
        if ids != set(wanted):
            raise RefreshError(f"table holds {len(ids)} chunks, corpus has {len(wanted)}")
        probe = next(iter(wanted.values()))
        word = max((w for w in _TOKEN.findall(probe.body) if len(w) <= _LONGEST_TOKEN), key=len, default="")
        if word and not table.search(word, query_type="fts").limit(1).to_list():
            raise RefreshError("full-text index does not answer")

    def _entities_current(self) -> bool:
        """The stored gazetteer exists and was extracted by today's rules."""
        if ENTITY_TABLE not in self._db.list_tables().tables:
            return False
        metadata = self._db.open_table(ENTITY_TABLE).schema.metadata or {}
        return metadata.get(b"extractor") == str(EXTRACTOR_VERSION).encode()

    def _store_entities(self, corpus: Corpus) -> None:
        data = pa.Table.from_pylist(entity_rows(extract(corpus)), schema=_ENTITY_SCHEMA)
        self._db.create_table(ENTITY_TABLE, data=data, schema=_ENTITY_SCHEMA, mode="overwrite")
        self._gazetteer = None

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
        published.forget(self.uri)  # what the stamp describes stops serving now
        version = table.version
        _set_tag(table, SERVING_TAG, version)
        _set_tag(table, PUBLISHED_TAG.format(version), version)
        self._checkout(version)
        try:
            self._clean_up(table)
        except Exception:  # the new version serves; the old ones are removed next time
            log.exception("could not clean up old index versions")

    def roll_back(self) -> int:
        """Move the serving tag back to the published version before the one serving now (every
        replica follows); returns that version. Holds until the documents change again."""
        if not self._refresh_lock.acquire(blocking=False):
            raise RefreshInProgress("a reload is already running")
        try:
            table = self._open_table()
            current = self.version
            earlier = [v for v in _published(table.tags.list() if table else {}) if current and v < current]
            if not earlier:
                raise RefreshError(f"no published index version before {current} to roll back to")
            published.forget(self.uri)
            _set_tag(table, SERVING_TAG, earlier[-1])
            self._checkout(earlier[-1])
            return earlier[-1]
        finally:
            self._refresh_lock.release()

    def _clean_up(self, table) -> None:
        """Forget all but the newest KEEP_PUBLISHED published versions (never the serving one),
        then delete the files of untagged versions older than CLEANUP_AFTER, with their
        vocabularies. Tagged versions stay whole: a replica reading one is never broken."""
        tags = table.tags.list()
        published = _published(tags)
        kept = set(published[-KEEP_PUBLISHED:]) | {tags[SERVING_TAG]["version"]}
        for version in set(published) - kept:
            table.tags.delete(PUBLISHED_TAG.format(version))
        table.to_lance().cleanup_old_versions(CLEANUP_AFTER, error_if_tagged_old_versions=False)
        vocabulary = self._db.open_table(VOCABULARY_TABLE)
        vocabulary.delete(f"version NOT IN ({', '.join(str(v) for v in sorted(kept))})")
        vocabulary.optimize(cleanup_older_than=CLEANUP_AFTER)

    def _save_vocabulary(self, table, corpus: Corpus) -> None:
        frequency = {**_count_terms(chunk.text for chunk in corpus.chunks), _STEMMER: STEMMER_VERSION}
        rows = pa.table({"version": [table.version] * len(frequency), "term": list(frequency),
                         "chunks": list(frequency.values())}, schema=_VOCABULARY_SCHEMA)
        try:
            stored = self._db.open_table(VOCABULARY_TABLE)
        except ValueError:
            self._db.create_table(VOCABULARY_TABLE, data=rows, schema=_VOCABULARY_SCHEMA)
            return
        stored.delete(f"version = {int(table.version)}")  # left by a refresh that died after writing it
        stored.add(rows)

    def _finish(self, corpus: Corpus, embedded: int, deleted: int, started: float, version: int,
                built_from: str) -> RefreshStats:
        self.documents = len(corpus.documents)
        self.last_refresh = RefreshStats(
            documents=len(corpus.documents), chunks=len(corpus.chunks), embedded=embedded,
            deleted=deleted, seconds=time.perf_counter() - started, version=version,
            skipped=corpus.skipped, formats=corpus.formats,
            unlinked=[d.path for d in corpus.documents if not d.url],
            restricted=[d.path for d in corpus.documents if d.audience])
        published.record(self.uri, built_from, {k: v for k, v in self.last_refresh.as_dict().items()
                                                if k not in ("embedded", "deleted", "seconds")})
        return self.last_refresh


def _count_terms(texts: Iterable[str]) -> dict[str, int]:
    """How many chunks each term appears in."""
    frequency: Counter = Counter()
    for text in texts:
        frequency.update(set(terms(text)))
    return dict(frequency)


def _set_tag(table, tag: str, version: int) -> None:
    if tag in table.tags.list():
        table.tags.update(tag, version)
    else:
        table.tags.create(tag, version)


def _published(tags: dict) -> list[int]:
    """The published versions still tagged, oldest first."""
    prefix = PUBLISHED_TAG.format("")
    return sorted(int(name[len(prefix):]) for name in tags if name.startswith(prefix) and name[len(prefix):].isdigit())