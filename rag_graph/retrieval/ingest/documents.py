"""The document model: a document, a chunk of it, and a corpus of both."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Document:
    source_id: str
    title: str
    path: str  # relative to the corpus root, with forward slashes
    body: str
    url: str = ""
    effective_date: str = ""
    status: str = "current"
    superseded_by: str = ""
    authority: int = 1
    links: list[str] = field(default_factory=list)  # relative paths of linked corpus documents
    keywords: list[str] = field(default_factory=list)  # the page's own search terms (front matter)
    audience: list[str] = field(default_factory=list)  # group names that may read it; [] = everyone
    warnings: list[str] = field(default_factory=list)  # authoring slips that did not stop it (authoring.py)


@dataclass
class Chunk:
    chunk_id: str
    source_id: str
    title: str
    section: str  # heading path below the title, joined with " › "
    anchor: str
    url: str
    chunk_index: int
    body: str  # the section text of this chunk
    text: str  # contextual header + body: what is embedded, indexed and ranked
    status: str
    effective_date: str
    authority: int
    superseded_by: str
    links: list[str]
    path: str
    audience: list[str] = field(default_factory=list)
    content_hash: str = ""

    def row(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Corpus:
    documents: list[Document]
    chunks: list[Chunk]
    skipped: list[str]  # human-readable warnings: each file left out, each authoring slip (authoring.py)
    formats: dict[str, dict[str, int]] = field(default_factory=dict)  # {".pdf": {"read": n, "skipped": m}}


