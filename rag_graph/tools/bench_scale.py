"""`citebot bench`'s scale and object storage steps (rag_graph/tools/bench.py runs them).

Scale step: synthetic tables (text drawn from a small vocabulary, random unit vectors, written in
batches without the embedding model) with the production FTS index and an IVF_PQ vector index,
searched through `Index.search(mode="hybrid")` with the graph's candidate count. IVF_PQ won the
measurement at 1M rows on 2 busy cores: 45 s to build (256 partitions, 24 sub-vectors, 10
k-means iterations on 64 rows per partition) for hybrid p95 21 ms; IVF_HNSW_SQ (64 partitions,
m=16, ef_construction=100) took 583 s to build for hybrid p95 73 ms, and would not fit
`make bench` in 15 minutes.

Object storage step: the same kind of table in a folder and in an S3 bucket (moto's server on
loopback, from the dev extra), the same queries on both, and how long a replica takes to serve a
version once the serving tag moved (docs/scaling.md).
"""
from __future__ import annotations

import logging
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from ..config import Settings
from .evaluation import percentile
from .measure import folder_bytes, free_port, percentiles, timed

SCALE_SIZES = (10_000, 100_000, 1_000_000)
SCALE_BATCH = 100_000
DIMENSION = 384
SCALE_QUERIES = 100
OBJECT_STORAGE_ROWS = 10_000
# moto reads (and copies) a whole object for every ranged GET, under a lock: at 100k rows (one
# 170 MB data file) a hybrid query took ~8 s there and the step did not finish in 15 minutes, so
# the bucket step runs at 10k rows. Its figure is the test server's cost, an upper bound.
OBJECT_STORAGE_QUERIES = 30


def _vocabulary(size: int = 3000, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    consonants, vowels = list("bcdfghjklmnprstvz"), list("aeiou")
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.integers(2, 4))))
    return np.array(sorted(words))


def synthetic_batch(start: int, rows: int, vocabulary: np.ndarray, rng: np.random.Generator):
    """Rows `start..start+rows`: Zipf-distributed words (40-80 a chunk) and random unit vectors."""
    import pyarrow as pa

    ranks = (rng.zipf(1.2, size=(rows, 80)) - 1) % len(vocabulary)
    lengths = rng.integers(40, 81, size=rows)
    words = vocabulary[ranks]
    texts = [" ".join(row[:n]) for row, n in zip(words, lengths)]
    vectors = rng.standard_normal((rows, DIMENSION), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"synthetic-{n // 10}::s::{n % 10}" for n in range(start, start + rows)]
    return pa.table({
        "chunk_id": ids, "source_id": [i.split("::")[0] for i in ids], "title": ["Synthetic"] * rows,
        "section": [""] * rows, "anchor": [""] * rows, "text": texts, "body": texts,
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), DIMENSION),
    })


def ann_config(rows: int):
    from lancedb.index import IvfPq

    return IvfPq(distance_type="cosine", num_partitions=max(16, min(256, int(rows ** 0.5) // 4)),
                 num_sub_vectors=DIMENSION // 16, max_iterations=10, sample_rate=64)


def build_synthetic(rows: int, folder: Path, seed: int = 11) -> dict:
    """A published synthetic table of `rows` chunks in `folder`, with the production indexes;
    returns the build times."""
    import lancedb
    from lancedb.index import FTS

    from ..retrieval.index import SERVING_TAG, TABLE

    rng = np.random.default_rng(seed)
    vocabulary = _vocabulary()
    db = lancedb.connect(str(folder))
    started = time.perf_counter()
    table = None
    for start in range(0, rows, SCALE_BATCH):
        batch = synthetic_batch(start, min(SCALE_BATCH, rows - start), vocabulary, rng)
        if table is None:
            table = db.create_table(TABLE, data=batch)
        else:
            table.add(batch)
    written = time.perf_counter()
    table.create_index("vector", config=ann_config(rows))
    vector_indexed = time.perf_counter()
    table.create_index("text", config=FTS(with_position=False))
    finished = time.perf_counter()
    table.tags.create(SERVING_TAG, table.version)  # publish it, as a refresh does
    return {"rows": rows, "write_s": written - started, "vector_index_s": vector_indexed - written,
            "fts_index_s": finished - vector_indexed, "build_s": finished - started}


def time_hybrid(index, queries: int = SCALE_QUERIES, seed: int = 5) -> dict:
    """p50 / p95 of hybrid searches with the graph's candidate count; every query brings its
    vector (the model never loads), and the same seed asks the same queries."""
    from ..tuning import DEFAULT

    rng = np.random.default_rng(seed)
    common = _vocabulary()[:300]

    def query(_):
        vector = rng.standard_normal(DIMENSION).astype(np.float32)
        vector /= np.linalg.norm(vector)
        text = " ".join(rng.choice(common, size=3))
        index.search(text, mode="hybrid", top_k=DEFAULT.candidates, query_vector=vector)

    timed(query, range(min(10, queries)))
    return percentiles(timed(query, range(queries)))


def bench_scale_step(rows: int, folder: Path) -> dict:
    from ..retrieval.embeddings import Embedder
    from ..retrieval.index import Index

    built = build_synthetic(rows, folder)
    latency = time_hybrid(Index(folder, Embedder()))
    return {**built, "disk_mb": folder_bytes(folder) / 2 ** 20, **latency}


def bench_object_storage(scratch: Path, rows: int = OBJECT_STORAGE_ROWS) -> dict:
    """Hybrid p50 / p95 on the same table in a folder and in an S3 bucket (moto's S3-protocol
    server on loopback: the protocol's cost without a network's), and how long a replica takes
    to serve a version once the serving tag moved (`Index.follow`; it waits for its next poll
    first, at most CITEBOT_POLL_SECONDS)."""
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError:
        return {"status": "n/a", "reason": "needs moto[server] (the dev extra)"}

    from ..retrieval.embeddings import Embedder
    from ..retrieval.index import SERVING_TAG, Index

    folder = scratch / "object-storage-local"
    built = build_synthetic(rows, folder)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        keys = {"aws_access_key_id": "bench", "aws_secret_access_key": "bench", "region_name": "us-east-1"}
        client = boto3.client("s3", endpoint_url=endpoint, **keys)
        client.create_bucket(Bucket="citebot-bench")
        started = time.perf_counter()
        for path in folder.rglob("*"):  # a Lance dataset's files name each other by relative path
            if path.is_file():
                client.upload_file(str(path), "citebot-bench", f"lancedb/{path.relative_to(folder).as_posix()}")
        uploaded = time.perf_counter() - started
        settings = Settings(db="s3://citebot-bench/lancedb", aws_endpoint=endpoint, aws_access_key_id="bench",
                            aws_secret_access_key="bench", aws_region="us-east-1")
        embedder = Embedder()
        local = time_hybrid(Index(folder, embedder), OBJECT_STORAGE_QUERIES)
        replica = Index(settings.db, embedder, settings.storage_options)
        remote = time_hybrid(replica, OBJECT_STORAGE_QUERIES)
        # The index job publishes a new version; the replica's next poll finds and serves it.
        writer = Index(settings.db, embedder, settings.storage_options)
        table = writer._open_table()
        table.add(synthetic_batch(rows, 10, _vocabulary(), np.random.default_rng(3)))
        table.tags.update(SERVING_TAG, table.version)
        started = time.perf_counter()
        replica.follow()
        follow_ms = (time.perf_counter() - started) * 1000
        unchanged = timed(lambda _: replica.follow(), range(20))
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return {"status": "ok", "rows": rows, "build_s": built["build_s"], "upload_s": uploaded,
            "local": local, "s3": remote, "follow_ms": follow_ms,
            "tag_check_ms": percentile(unchanged, 50)}


def bench_scale(scratch: Path, sizes=SCALE_SIZES) -> list[dict]:
    results = []
    for rows in sizes:
        folder = scratch / f"scale-{rows}"
        results.append(bench_scale_step(rows, folder))
        shutil.rmtree(folder, ignore_errors=True)
        print(f"  scale {rows:>9,}: built in {results[-1]['build_s']:.0f} s, "
              f"hybrid p95 {results[-1]['p95_ms']:.1f} ms", file=sys.stderr, flush=True)
    return results


