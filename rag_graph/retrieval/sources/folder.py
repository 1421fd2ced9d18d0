"""A local folder (CITEBOT_CORPUS by default) as one source among others: every file copied into
the mirror as it is (front matter, sidecars and all), listed whole each sync."""
from __future__ import annotations

from pathlib import Path

from .base import Changes, Document, SourceError


class Fetcher:
    def __init__(self, source, settings):
        self.root = Path(source.path)

    def fetch(self, state) -> Changes:
        if not self.root.is_dir():
            raise SourceError(f"folder not found: {self.root}")
        documents = []
        for path in sorted(p for p in self.root.rglob("*") if p.is_file()):
            relative = path.relative_to(self.root)
            if any(part.startswith(".") for part in relative.parts):
                continue
            documents.append(Document(key=relative.as_posix(), path=relative.as_posix(), content=path.read_bytes()))
        return Changes(upserts=documents, full=True)
