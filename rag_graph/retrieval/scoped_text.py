"""Keyword search with the BM25 statistics of one scope's rows only.

LanceDB's full-text index computes its statistics (how rare a word is, how long a chunk is on
average) over every row of the table; a prefilter only removes rows from the results. So a
restricted document still moved the keyword ranks of the chunks a question may read. Measured
with `python -m rag_graph.tools.scope_bound --set 18f-handbook`: with 50 of 246 pages restricted,
4 of 86 public top-5 lists and one answer differed from an index without those pages.

For a scope that leaves rows out, the keyword leg runs on an in-memory table of exactly that
scope's rows with its own full-text index, built like the served one; its statistics are those of
the documents the question may read, as if the others were not indexed. Building it is one read
of the scope's text and a full-text index (about 0.1 s on 18F's 3,468 chunks), once per published
version and scope (the Index caches it beside the scope's term counts).
"""
from __future__ import annotations

import itertools
from collections import defaultdict

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.index import FTS

_names = itertools.count()  # one in-memory table per scope, each under its own name


class ScopedText:
    """The full-text index of one scope's rows (`chunk_id`, `text`)."""

    def __init__(self, rows: pa.Table):
        self.chunks = rows.num_rows
        self._table = None
        if rows.num_rows:  # LanceDB cannot index an empty table; an empty scope finds nothing
            table = lancedb.connect("memory://").create_table(f"scope-{next(_names)}", rows)
            table.create_index("text", config=FTS(with_position=False))  # as Index._update_indexes
            self._table = table

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) best first."""
        if self._table is None:
            return []
        found = self._table.search(query, query_type="fts").select(["chunk_id", "_score"]).limit(limit).to_arrow()
        return list(zip(found.column("chunk_id").to_pylist(), found.column("_score").to_pylist()))


def with_scores(rows: pa.Table, hits: list[tuple[str, float]]) -> pa.Table:
    """The table's `rows` for the hits, in the hits' order, with their BM25 `_score`."""
    position = {chunk_id: n for n, chunk_id in enumerate(rows.column("chunk_id").to_pylist())}
    order = [position[chunk_id] for chunk_id, _ in hits if chunk_id in position]
    scores = [score for chunk_id, score in hits if chunk_id in position]
    return rows.take(pa.array(order, type=pa.int64())).append_column("_score", pa.array(scores, type=pa.float32()))


# LanceDB's RRFReranker's constant (the rank at which a row's weight halves, plus one).
RRF_K = 60


def rrf_order(vector_ids: list[int], keyword_ids: list[int], limit: int) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The fused ranking of two legs' row ids (`fuse`'s arithmetic): (the keyword leg's places of
    the rows the vector leg lacks; the best `limit` places in the vector leg's rows followed by
    those, best first; their float32 relevance)."""
    score = defaultdict(float)
    for ids in (vector_ids, keyword_ids):
        for rank, row_id in enumerate(ids, 1):
            score[row_id] += 1 / (rank + RRF_K)
    # The vector leg's rows, then the keyword leg's others: the reranker's merge keeps a row's
    # first copy. Best first by the float32 score, equal scores in that order (a stable sort).
    found = set(vector_ids)
    others = [n for n, row_id in enumerate(keyword_ids) if row_id not in found]
    relevance = np.array([score[row_id] for row_id in vector_ids + [keyword_ids[n] for n in others]], dtype=np.float32)
    order = np.argsort(-relevance, kind="stable")[:limit]
    return others, order, relevance[order]


def fuse(query: str, vector_rows: pa.Table, keyword_rows: pa.Table, limit: int) -> pa.Table:
    """Both legs by reciprocal rank, as LanceDB's hybrid query fuses them with its RRFReranker
    (it normalises the scores first, which leaves every rank, and so RRF, as it is); computed as
    it computes, for the same rows in the same order (a test compares the two), in a quarter of
    its time."""
    others, order, relevance = rrf_order(vector_rows.column("_rowid").to_pylist(),
                                         keyword_rows.column("_rowid").to_pylist(), limit)
    merged = pa.concat_tables([vector_rows, keyword_rows.take(pa.array(others, type=pa.int64()))],
                              promote_options="default")
    fused = merged.take(pa.array(order, type=pa.int64())).append_column(
        "_relevance_score", pa.array(relevance, type=pa.float32()))
    # A row both legs found is kept once, with the vector leg's columns and no BM25 score: each
    # leg's own score goes back by row id, as the hybrid query restores them.
    for column, leg in (("_score", keyword_rows), ("_distance", vector_rows)):
        if leg.num_rows:
            at = pc.index_in(fused.column("_rowid"), value_set=leg.column("_rowid"))
            fused = fused.set_column(fused.column_names.index(column), column, pc.take(leg.column(column), at))
    return fused
