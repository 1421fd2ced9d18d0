"""Who may read what, inside retrieval. A question runs with a Scope (the audiences of the place
it was asked in, and optionally the documents that place answers from); the Index turns it into
one SQL `where` clause, and a ScopedIndex applies that clause to every read a question makes:
both legs of the search (as a LanceDB prefilter, before ranking), related and linked chunks,
the term counts behind "nothing in the knowledge base covers …", and the gazetteer that resolves
follow-ups. A document outside the scope is, for that question, not in the index at all.

The bot decides the scope (bot/access.py); the graph never sees who asked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Scope:
    """`audiences`: the groups the place counts as (documents without `audience:` are for
    everyone). `sources`: path globs relative to the corpus root (`engineering/**`); empty means
    every document."""

    audiences: frozenset[str] = frozenset()
    sources: tuple[str, ...] = ()

    @classmethod
    def of(cls, value: "Scope | dict | None") -> "Scope":
        """A Scope from the graph input's `{audiences: [...], sources: [...]}`; None is the
        public scope (documents for everyone), never "everything"."""
        if value is None:
            return cls()
        if isinstance(value, Scope):
            return value
        return cls(audiences=frozenset(a.strip().lower() for a in value.get("audiences") or ()),
                   sources=tuple(value.get("sources") or ()))


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def audience_clause(audiences: frozenset[str]) -> str:
    public = "array_length(audience) = 0"
    if not audiences:
        return public
    names = ", ".join(_sql_text(a) for a in sorted(audiences))
    return f"({public} OR array_has_any(audience, make_array({names})))"


@lru_cache(maxsize=256)
def glob_pattern(glob: str) -> re.Pattern:
    """A path glob as git and most tools read it: `*` and `?` stay inside one folder, `**`
    spans folders, and a glob naming a folder (`engineering` or `engineering/`) means all of it."""
    glob = glob.strip().removeprefix("./").strip("/")
    glob = "**" if glob in ("", ".") else glob
    out = []
    for part in re.split(r"(\*\*/|\*\*|\*|\?)", glob):
        out.append({"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part)))
    return re.compile("".join(out) + "(?:/.*)?")


def matches(path: str, globs: tuple[str, ...]) -> bool:
    return any(glob_pattern(g).fullmatch(path) for g in globs)


class ScopedIndex:
    """The Retriever the graph reads through for one question: the Index, with the scope's
    `where` clause on every read. The clause is made at the first read, so that a missing index
    fails where the graph expects it (prepare_corpus_index), not before the question starts."""

    def __init__(self, index, scope: Scope):
        self.index, self.scope = index, scope
        self._where: str | None = None

    @property
    def where(self) -> str:
        if self._where is None:
            self._where = self.index.where(self.scope)
        return self._where

    def search(self, query: str, mode: str = "hybrid", top_k: int = 8, query_vector=None) -> list[dict]:
        return self.index.search(query, mode, top_k, query_vector=query_vector, where=self.where)

    def fetch(self, where: str, limit: int = 50) -> list[dict]:
        return self.index.fetch(f"({self.where}) AND ({where})", limit)

    def related(self, chunks: list[dict]) -> list[dict]:
        return self.index.related(chunks, where=self.where)

    def metadata(self) -> dict:
        return self.index.metadata()

    def vocabulary(self) -> tuple[dict[str, int], int]:
        return self.index.vocabulary(where=self.where)

    def entities(self):
        return self.index.entities(where=self.where)
