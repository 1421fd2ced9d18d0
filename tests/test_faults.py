"""Faults: broken reloads keep the previous index serving; broken retrievers, embedders and chat
models end in a controlled `failed` or `insufficient_context`, never in an ungrounded answer;
chat-model retries are bounded."""
from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from rag_graph.config import Settings
from rag_graph.context import Deps
from rag_graph.engine import Engine
from rag_graph.generation import ChatModelGenerator
from rag_graph.graph import GENERATION_RETRY
from rag_graph.index import TABLE, Index, RefreshError, RefreshInProgress

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("handbook/employee-handbook-2025.md", "handbook/benefits.md", "office/facilities.md")
REMOTE = "How many days per week can employees work remotely?"
NEW_FACT = "Zeppelin rides for staff depart from the roof every Wednesday at noon."


@pytest.fixture
def small_corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    for name in DOCS:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "corpus" / name, folder / name)
    return folder


@pytest.fixture
def served(tmp_path, small_corpus, embedder):
    """An engine over the small corpus, indexed once: version 1 is serving."""
    engine = Engine(Settings(corpus=small_corpus, db=str(tmp_path / "db")))
    engine.refresh()
    return engine


def _add_new_fact(corpus: Path) -> None:
    (corpus / "zeppelin.md").write_text(f"# Zeppelin rides\n\n## Schedule\n\n{NEW_FACT}\n")


def _still_serves_version(engine: Engine, version: int, chunks: int) -> None:
    """The old version answers, in this process and in any other that opens the database now."""
    assert engine.index.version == version
    output = engine.ask(REMOTE)
    assert output["status"] == "answered" and "3 days" in output["answer"], output
    other = Index(engine.settings.db, engine.embedder)
    assert other.version == version and other.count() == chunks
    assert not other.search("zeppelin rides roof", mode="keyword", top_k=3)
    assert engine.index._db.table_names() == [TABLE], "no half-built table may be visible"


# ---- reload faults ----------------------------------------------------------------------------

def test_corrupt_files_are_skipped_and_named_and_the_rest_is_served(served, small_corpus):
    (small_corpus / "binary.md").write_bytes(bytes(range(256)) * 8)
    (small_corpus / "unclosed.md").write_text("---\ntitle: never closed\n\n# Body\n\nText.\n")
    (small_corpus / "bad-yaml.md").write_text("---\ntitle: [unclosed\n---\n# Body\n\nText.\n")
    (small_corpus / "authority.md").write_text("---\nauthority: very high\n---\n# Body\n\nText here.\n")
    _add_new_fact(small_corpus)
    stats = served.refresh()
    skipped = " ".join(stats.skipped)
    for name in ("binary.md", "unclosed.md", "bad-yaml.md", "authority.md"):
        assert name in skipped  # what the admin is told
    assert served.ask("When do zeppelin rides depart?")["status"] == "answered"
    assert served.ask(REMOTE)["status"] == "answered"


@pytest.mark.parametrize("fault", ["empty corpus", "only unreadable files", "folder disappears", "folder is a file"])
def test_reload_fault_keeps_the_previous_version_serving(served, small_corpus, fault):
    version, chunks = served.index.version, served.index.count()
    if fault == "empty corpus":
        for path in small_corpus.rglob("*.md"):
            path.unlink()
    elif fault == "only unreadable files":
        for path in small_corpus.rglob("*.md"):
            path.write_bytes(b"\xff\xfe\x00garbage")
    elif fault == "folder disappears":
        shutil.rmtree(small_corpus)
    else:
        shutil.rmtree(small_corpus)
        small_corpus.write_text("not a folder")
    with pytest.raises(RefreshError, match="previous index keeps serving|not found"):
        served.refresh()
    _still_serves_version(served, version, chunks)


class FailingEmbedder:
    """The real model for questions; a fault when a reload embeds the corpus."""

    def __init__(self, real, fault):
        self.real, self.fault = real, fault
        self.model_name, self.dimension = real.model_name, real.dimension

    def encode(self, texts):
        if self.fault == "nan":
            return np.full((len(texts), self.dimension), np.nan, dtype=np.float32)
        if self.fault == "short":
            return self.real.encode(texts[:-1])
        raise {"raise": RuntimeError("CUDA out of memory"), "timeout": TimeoutError("model server timed out")}[self.fault]

    def encode_query(self, text):
        return self.real.encode_query(text)


@pytest.mark.parametrize("fault", ["raise", "timeout", "nan", "short"])
def test_embedder_fault_half_way_through_a_reload(served, small_corpus, fault):
    version, chunks = served.index.version, served.index.count()
    served.index.embedder = FailingEmbedder(served.embedder, fault)
    _add_new_fact(small_corpus)
    with pytest.raises(RefreshError):
        served.refresh()
    served.index.embedder = served.embedder
    _still_serves_version(served, version, chunks)
    served.refresh()  # the fault gone, the next reload goes through
    assert served.ask("When do zeppelin rides depart?")["status"] == "answered"


@pytest.mark.parametrize("step", ["_update_indexes", "_validate"])
def test_exception_after_the_write_rolls_back(served, small_corpus, monkeypatch, step):
    version, chunks = served.index.version, served.index.count()

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(Index, step, staticmethod(explode))
    _add_new_fact(small_corpus)
    with pytest.raises(RefreshError, match="previous index keeps serving"):
        served.refresh()
    monkeypatch.undo()
    _still_serves_version(served, version, chunks)
    served.refresh()
    assert served.ask("When do zeppelin rides depart?")["status"] == "answered"


def test_a_second_reload_while_one_runs_is_refused(served, small_corpus):
    assert served.index._refresh_lock.acquire(blocking=False)
    try:
        with pytest.raises(RefreshInProgress):
            served.refresh()
    finally:
        served.index._refresh_lock.release()


# ---- the process killed half-way ------------------------------------------------------------

# Runs the real `citebot index`, announcing on stdout when it reaches the chosen point, then
# waits there to be killed.
_KILLABLE = textwrap.dedent("""
    import sys, time
    from rag_graph.embeddings import Embedder
    from rag_graph.index import Index
    from bot.cli import main

    point = sys.argv[1]
    def pause(original):
        def wrapper(*args, **kwargs):
            if point == "embedding":
                print("REACHED", flush=True)
                time.sleep(120)
            result = original(*args, **kwargs)
            return result
        return wrapper
    def after_write(original):
        def wrapper(*args, **kwargs):
            print("REACHED", flush=True)  # the merge is committed; indexes and tag not yet
            time.sleep(120)
        return wrapper
    if point == "embedding":
        Embedder.encode = pause(Embedder.encode)
    else:
        Index._update_indexes = staticmethod(after_write(Index._update_indexes))
    sys.exit(main(["index", "--corpus", sys.argv[2], "--db", sys.argv[3]]))
""")


def _kill_citebot_index_at(point: str, corpus: Path, db: str) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    process = subprocess.Popen([sys.executable, "-c", _KILLABLE, point, str(corpus), db], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()  # blocks until the child reaches the point (or dies)
        assert line.strip() == "REACHED", f"child exited early with {process.poll()}"
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=30) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("point", ["embedding", "after the write"])
def test_citebot_index_killed_half_way_leaves_the_previous_version_serving(served, small_corpus, point):
    version, chunks = served.index.version, served.index.count()
    _add_new_fact(small_corpus)
    _kill_citebot_index_at(point, small_corpus, served.settings.db)
    restarted = Engine(served.settings)  # what a restarted bot sees
    _still_serves_version(restarted, version, chunks)
    _still_serves_version(served, version, chunks)
    restarted.refresh()  # the next reload repairs and publishes
    assert restarted.ask("When do zeppelin rides depart?")["status"] == "answered"
    assert Index(served.settings.db, served.embedder).version == restarted.index.version


def test_first_build_killed_half_way_is_never_served(tmp_path, small_corpus, embedder):
    db = str(tmp_path / "fresh-db")
    _kill_citebot_index_at("after the write", small_corpus, db)
    engine = Engine(Settings(corpus=small_corpus, db=db))
    assert not engine.index.ready, "an unvalidated, unpublished table is being served"
    output = engine.ask(REMOTE)
    assert output["status"] == "failed" and "isn't available" in output["answer"]
    engine.refresh()
    assert engine.ask(REMOTE)["status"] == "answered"
