"""Indexing progress (rag_graph/retrieval/progress.py): a bar on a terminal, a log line every few
seconds otherwise, with chunks and documents done and an estimate of the time left."""
from __future__ import annotations

import io
import logging

from rag_graph.retrieval import progress as progress_module
from rag_graph.retrieval.index import Index
from rag_graph.retrieval.progress import Progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_a_line_every_interval_with_counts_and_an_estimate(caplog):
    clock = Clock()
    caplog.set_level(logging.INFO, logger=progress_module.__name__)
    progress = Progress(["a"] * 60 + ["b"] * 40 + ["c"] * 100, stream=io.StringIO(), clock=clock, interval=5)
    assert [r.getMessage() for r in caplog.records] == ["indexing: embedding 200 chunks of 3 documents"]
    clock.now += 2
    progress.advance(50)  # 2 s in: too soon for a line
    clock.now += 3
    progress.advance(50)  # 5 s for 100 chunks: 100 left at that rate is 5 s
    clock.now += 1
    progress.advance(20)  # 1 s after the last line: none
    lines = [r.getMessage() for r in caplog.records][1:]
    assert lines == ["indexing: embedded 100 of 200 chunks (50%), 2 of 3 documents, about 5 s left"]
    assert caplog.records[-1].levelno == logging.INFO


def test_the_estimate_reads_in_minutes_when_long(caplog):
    clock = Clock()
    caplog.set_level(logging.INFO, logger=progress_module.__name__)
    progress = Progress(["doc"] * 1000, stream=io.StringIO(), clock=clock, interval=5)
    clock.now += 30
    progress.advance(100)
    assert caplog.records[-1].getMessage().endswith("0 of 1 documents, about 4 min 30 s left")


def test_on_a_terminal_one_bar_redrawn_in_place_and_a_newline_at_the_end():
    clock, screen = Clock(), Terminal()
    progress = Progress(["a", "a", "b", "b"], stream=screen, clock=clock)
    clock.now += 1
    progress.advance(2)
    clock.now += 1
    progress.advance(2)
    progress.finish()
    frames = screen.getvalue().split("\r")[1:]
    assert len(frames) == 3 and screen.getvalue().endswith("\n")
    assert frames[0].startswith("[" + "." * 24 + "] embedded 0 of 4 chunks (0%), 0 of 2 documents")
    assert frames[1].startswith("[" + "#" * 12 + "." * 12 + "] embedded 2 of 4 chunks (50%), 1 of 2 documents, "
                                "about 1 s left")
    assert "embedded 4 of 4 chunks (100%), 2 of 2 documents\x1b[K" in frames[2]


def test_a_real_build_reports_every_chunk_it_embeds(tmp_path, corpus_copy, embedder, caplog, monkeypatch):
    monkeypatch.setattr(progress_module, "INTERVAL", 0.0)
    caplog.set_level(logging.INFO, logger=progress_module.__name__)
    stats = Index(str(tmp_path / "db"), embedder).refresh(corpus_copy)
    lines = [r.getMessage() for r in caplog.records if r.name == progress_module.__name__]
    assert lines[0] == f"indexing: embedding {stats.chunks} chunks of {stats.documents} documents"
    assert len(lines) >= 2 and all("about" in line for line in lines[1:])
    assert f"of {stats.chunks} chunks" in lines[-1] and f"of {stats.documents} documents" in lines[-1]
