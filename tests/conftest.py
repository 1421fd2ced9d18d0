"""Shared fixtures: the real embedding model and a real LanceDB index of the bundled corpus,
built once per test session in a temporary folder."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The model's ONNX export goes to a folder of this session (exported once, ~3 s), never to
# whatever the machine's user cache holds; the CLI's subprocesses inherit it.
_OWN_CACHE = None
if not os.environ.get("CITEBOT_CACHE"):
    _OWN_CACHE = os.environ["CITEBOT_CACHE"] = tempfile.mkdtemp(prefix="citebot-test-cache-")
sys.path.insert(0, str(Path(__file__).parent))  # test helpers such as fake_slack

from rag_graph.config import Settings  # noqa: E402
from rag_graph.retrieval.embeddings import Embedder  # noqa: E402
from rag_graph.engine import Engine  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_CORPUS = ROOT / "corpus"


@pytest.fixture(scope="session")
def vnni() -> bool:
    """Whether this CPU has the integer dot-product instructions (x86 VNNI) the int8 graph was
    measured with; without them the graph's agreement check refuses it and the exact graph serves
    every call (why: rag_graph/retrieval/onnx_encoder.py's docstring)."""
    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text() if cpuinfo.exists() else ""
    return "avx512_vnni" in flags or "avx_vnni" in flags


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="session")
def engine(tmp_path_factory) -> Engine:
    """The bundled corpus, indexed once; tests must not modify it (copy the corpus instead)."""
    engine = Engine(Settings(corpus=BUNDLED_CORPUS, db=str(tmp_path_factory.mktemp("db") / "lancedb")))
    engine.refresh()
    engine.warm_up()
    return engine


@pytest.fixture(scope="session")
def s3():
    """A real S3-protocol endpoint (moto's server mode) with one bucket, for the whole session."""
    from servers import S3Server

    server = S3Server().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_server():
    """A real Redis server on a free port, for the whole session (tests that stop it restart it)."""
    from servers import RedisServer

    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def corpus_copy(tmp_path) -> Path:
    """A private, writable copy of the bundled corpus."""
    target = tmp_path / "corpus"
    shutil.copytree(BUNDLED_CORPUS, target)
    return target


def pytest_sessionfinish(session, exitstatus):
    if _OWN_CACHE:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)  # the session's ONNX export (~90 MB)
