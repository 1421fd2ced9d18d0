"""YAML front matter: only the public fields are ever kept, and a broken block is an error that
names the file rather than a document without its metadata."""
from __future__ import annotations

import re
from datetime import date, datetime

import yaml

# Only these front matter fields are ever stored; everything else (owner_email, internal_notes,
# any field a writer invents) is internal by default, so a new field cannot leak by accident.
PUBLIC_FIELDS = ("source_id", "title", "url", "effective_date", "status", "superseded_by", "authority",
                 "keywords", "tags")


# Stored to decide who may read a document (rag_graph/scope.py), never shown.
ACCESS_FIELDS = ("audience",)


class FrontMatterError(ValueError):
    pass


def split_front_matter(raw: str) -> tuple[dict, str]:
    """(public front matter fields, body). No front matter is fine; a broken one is an error."""
    meta, body = read_front_matter(raw)
    return {key: meta[key] for key in PUBLIC_FIELDS + ACCESS_FIELDS if key in meta}, body


def read_front_matter(raw: str) -> tuple[dict, str]:
    """(every front matter field, body): the key checks of authoring.py read them all."""
    raw = raw.lstrip("\ufeff")
    if not raw.startswith("---"):
        return {}, raw
    match = re.match(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", raw, re.S)
    if not match:
        raise FrontMatterError("front matter starts with '---' but is never closed")
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 2})" if where else ""
        raise FrontMatterError(f"front matter is not valid YAML{line}") from None
    if not isinstance(meta, dict):
        raise FrontMatterError("front matter must be a set of `key: value` fields")
    return dict(meta), raw[match.end():]


def date_text(value) -> str:
    if isinstance(value, (date, datetime)):
        return value.isoformat()[:10]
    return str(value or "")
