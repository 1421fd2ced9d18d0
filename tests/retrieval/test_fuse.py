"""The hybrid search's fusion computes LanceDB's reciprocal-rank fusion itself: the same rows, in the
same order, with the same scores, as LanceDB's RRFReranker on any pair of legs."""
import random

import pyarrow as pa
import pyarrow.compute as pc
from lancedb.rerankers import RRFReranker

from rag_graph.retrieval.scoped_text import fuse


def lancedb_fuse(vector_rows: pa.Table, keyword_rows: pa.Table, limit: int) -> pa.Table:
    """LanceDB's hybrid fusion, each leg's own score restored by row id (what LanceDB's hybrid
    query returns)."""
    fused = RRFReranker(return_score="all").rerank_hybrid("q", vector_rows, keyword_rows)
    for column, leg in (("_score", keyword_rows), ("_distance", vector_rows)):
        if leg.num_rows:
            at = pc.index_in(fused.column("_rowid"), value_set=leg.column("_rowid"))
            fused = fused.set_column(fused.column_names.index(column), column, pc.take(leg.column(column), at))
    return fused.slice(0, limit)


def leg(ids: list[int], score: str) -> pa.Table:
    return pa.table({"chunk_id": [f"c{i}" for i in ids], "text": [f"text {i}" for i in ids],
                     score: pa.array([round(1 / (n + 2), 3) for n in range(len(ids))], type=pa.float32()),
                     "_rowid": pa.array(ids, type=pa.uint64())})


def test_fusion_is_lancedbs_on_random_legs():
    """Legs of 0 to 30 rows, overlapping or not, cut at any limit: many rows share a fused score."""
    rng = random.Random(40)
    for _ in range(300):
        pool = rng.sample(range(1000), rng.randint(0, 60))
        vector = rng.sample(pool, min(len(pool), rng.randint(0, 30)))
        keyword = rng.sample(pool, min(len(pool), rng.randint(0, 30)))
        limit = rng.randint(1, 40)
        ours = fuse("q", leg(vector, "_distance"), leg(keyword, "_score"), limit)
        theirs = lancedb_fuse(leg(vector, "_distance"), leg(keyword, "_score"), limit)
        assert ours.column_names == theirs.column_names
        assert ours.to_pylist() == theirs.to_pylist()


def test_rows_with_equal_fused_scores_keep_lancedbs_order():
    """Row 1 first by vector and second by keyword, row 2 the other way round: equal scores;
    the vector leg's first row stays first, as in LanceDB's stable sort."""
    vector, keyword = leg([1, 2, 3], "_distance"), leg([2, 1, 4], "_score")
    ours = fuse("q", vector, keyword, 10).to_pylist()
    assert [row["_rowid"] for row in ours] == [row["_rowid"] for row in lancedb_fuse(vector, keyword, 10).to_pylist()]
    assert [row["_rowid"] for row in ours][:2] == [1, 2] and ours[0]["_relevance_score"] == ours[1]["_relevance_score"]
