"""Helpers for the sources tests: an Engine over a sources file in a temporary folder, a sync
that returns its report, and answers as a reader sees them (text, cited links)."""
from __future__ import annotations

from pathlib import Path

import yaml

from rag_graph.config import Settings
from rag_graph.engine import Engine


def sources_engine(tmp: Path, sources: list[dict], **settings) -> Engine:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "sources.yml"
    path.write_text(yaml.safe_dump({"sources": sources}), encoding="utf-8")
    return Engine(Settings(corpus=tmp / "no-corpus", db=str(tmp / "lancedb"), sources_path=path,
                           sync_dir=tmp / "sync", **settings))


def rewrite_sources(engine: Engine, sources: list[dict]) -> None:
    engine.settings.sources_path.write_text(yaml.safe_dump({"sources": sources}), encoding="utf-8")


def answer(engine: Engine, question: str, access=None) -> tuple[str, list[str]]:
    """(the answer, the cited links) as a reader of that place sees them."""
    out = engine.ask(question, access=access)
    return out["answer"], [c["url"] for c in out["citations"]]


def source_report(report, name: str):
    return next(s for s in report.sources if s.name == name)
