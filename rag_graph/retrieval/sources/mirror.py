"""The mirror: one folder per source below CITEBOT_SYNC_DIR/mirror, holding each upstream document
as a file ingest reads (rag_graph/retrieval/loaders.py). What a source knows about a document
(its title, link, audience) travels as front matter for markdown, or as the `name.pdf.yml` sidecar
ingest reads beside other formats. Each file is written to a temporary name and renamed, and only
when its bytes change, so an unchanged sync leaves every file (and the index) as it was."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import yaml

from ..ingest import FrontMatterError, split_front_matter
from ..loaders import MARKDOWN_SUFFIXES
from .base import Document


def _write(path: Path, data: bytes) -> bool:
    """Write when the bytes differ; True when the file changed."""
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
    return True


def _front_matter(meta: dict) -> bytes:
    return ("---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n").encode()


def _merged(own: dict, given: dict, authoritative: bool) -> dict:
    """The source's fields win when it is the authority on them (mirrored permissions, a page's
    link); else the document's own front matter wins (a git file's `url:` beats the link template)."""
    return {**own, **given} if authoritative else {**given, **own}


def rendered(document: Document) -> dict[str, bytes]:
    """{relative path: bytes} of the files that hold the document."""
    suffix = Path(document.path).suffix.lower()
    # An audience open to everyone is written as no `audience:` at all: ingest leaves out a
    # document whose `audience:` is empty, since a writer's empty list is a slip (authoring.py).
    meta = {k: v for k, v in document.meta.items() if v is not None and not (k == "audience" and v == [])}
    if not meta:
        return {document.path: document.content}
    if suffix in MARKDOWN_SUFFIXES:
        text = document.content.decode("utf-8-sig", errors="replace")
        try:
            own, body = split_front_matter(text)  # the fields ingest reads; the rest never reach a chunk
        except FrontMatterError:
            return {document.path: document.content}  # ingest skips it and says why
        return {document.path: _front_matter(_merged(own, meta, document.authoritative)) + body.encode()}
    return {document.path: document.content,
            document.path + ".yml": yaml.safe_dump(meta, allow_unicode=True, sort_keys=False).encode()}


class Mirror:
    def __init__(self, root: Path, source: str):
        self.folder = root / source

    def put(self, document: Document) -> bool:
        changed = False
        for relative, data in rendered(document).items():
            changed |= _write(self._path(relative), data)
        return changed

    def remove(self, relative: str) -> None:
        for path in (self._path(relative), self._path(relative + ".yml")):
            path.unlink(missing_ok=True)
        parent = self._path(relative).parent
        while parent != self.folder and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _path(self, relative: str) -> Path:
        path = (self.folder / relative).resolve()
        if not path.is_relative_to(self.folder.resolve()):  # a path from upstream never leaves its folder
            raise ValueError(f"path {relative!r} leaves the source's folder")
        return path
