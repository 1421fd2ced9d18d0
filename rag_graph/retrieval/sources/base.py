"""What a source hands to the sync: the documents that changed since its cursor, those removed,
and the cursor to start from next time. A source never writes the mirror itself, so a source that
fails half-way changes nothing (its last good documents keep serving)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field


class SourceError(RuntimeError):
    """A source could not be read; the message is one line an admin can act on (never a secret)."""


@dataclass
class Document:
    """One upstream document as the mirror stores it.

    `key`: the source's stable id for it (page id, item id, path); `path`: where it goes below the
    source's mirror folder (its extension says how it is read: `.md` as markdown, `.pdf`…);
    `meta`: front matter (title, url, audience, effective_date), which wins over the content's own
    when `authoritative`; `restricted`: the source groups it is limited to (mirrored permissions),
    for the sync report."""

    key: str
    path: str
    content: bytes
    meta: dict = field(default_factory=dict)
    authoritative: bool = True
    restricted: list[str] = field(default_factory=list)


@dataclass
class Changes:
    upserts: list[Document] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)  # keys
    cursor: dict = field(default_factory=dict)  # the source's own state, saved only after the mirror took the changes
    full: bool = False  # upserts and `keep` list every document: any other key is gone upstream
    keep: list[str] = field(default_factory=list)  # keys unchanged (or unreadable this time): kept as they are
    notes: list[str] = field(default_factory=list)  # one line each: pages skipped, limits reached


_CREDENTIALS = re.compile(r"(\w+://)[^/@\s]+@")


def redact(text: str) -> str:
    """A message without the credentials a URL may carry (https://user:token@host)."""
    return _CREDENTIALS.sub(r"\1***@", text)


def slug(text: str, limit: int = 80) -> str:
    """A file-name-safe form of a title: letters, digits and hyphens."""
    value = re.sub(r"[^\w]+", "-", text.lower(), flags=re.UNICODE).strip("-")
    return value[:limit].strip("-") or "untitled"


PUBLIC: list[str] = []  # an audience open to everyone


def audience(groups: set[str], public: bool, source: str) -> list[str]:
    """The audience of a mirrored document: everyone when upstream it is open to the whole
    organisation, else its source groups; a document no group may read gets a group no access
    file can map (fail closed: nobody)."""
    if public:
        return PUBLIC
    return sorted(g.lower() for g in groups) or [f"nobody:{source}"]
