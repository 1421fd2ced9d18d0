"""The corpus's own gazetteer: the things its documents are about (document titles, section
headings, and the people and products named in them), found at index time and stored with the
index, so that a follow-up can carry the subject of the conversation without reading the corpus.

A name is a run of capitalised words that the corpus never writes in lower case ("Ines
Castellano", "Orrinfold Relay"); a person is a name of two or three words that a personal
pronoun picks up later in the same paragraph ("Ines Castellano joined in 2019. She leads…").
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import SimpleNamespace
from typing import Callable

from lemminflect import getAllLemmas

from .ingest import Corpus
from ..language.words import STOPWORDS, words

KINDS = ("document", "section", "name")
# Stored with the gazetteer: a `citebot index` with no document changed extracts it again when
# this differs, so a change to the rules below reaches indexes already built.
EXTRACTOR_VERSION = 3
MAX_WORDS = 6  # longest entity looked for in a question
TEMPLATE_HEADING_SHARE = 3  # a heading that many documents share ("Overview") names no subject

_NAME = re.compile(r"\b[A-Z][\w'’-]*[a-z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*[a-z][\w'’-]*|[A-Z]\.))*")
_PERSONAL = re.compile(r"\b(she|he|her|him|his|hers)\b", re.I)


@dataclass(frozen=True)
class Entity:
    name: str  # as the corpus writes it
    kind: str  # document | section | name
    source_id: str
    person: bool = False

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(words(self.name))


def _lower_case_words(corpus: Corpus) -> set[str]:
    return {w for chunk in corpus.chunks for w in re.findall(r"\b[a-z][\w'’-]*", chunk.body)}


def _names(text: str, common: set[str]) -> list[tuple[str, int]]:
    """(name, end offset) of every run of capitalised words that is a name: words the corpus
    also writes in lower case ("Leave is…" opening a sentence) are not part of one, except
    inside a sentence, where the capital is the name's own ("…offices in New York")."""
    out = []
    for match in _NAME.finditer(text):
        parts = match.group(0).split()
        opening = not re.search(r"[\w,;()]\s*$", text[: match.start()])  # nothing of its sentence before it
        while parts and ((opening and parts[0].lower() in common) or parts[0].lower() in STOPWORDS):
            parts = parts[1:]
        while parts and (parts[-1].lower() in common or parts[-1].lower() in STOPWORDS):
            parts = parts[:-1]
        if parts and not any(p.lower() in STOPWORDS for p in parts):
            out.append((" ".join(parts), match.end()))
    return out


def names_a_thing(heading: str) -> bool:
    """A one-word heading that English cannot use as a noun ("New", "Fixed" of a changelog,
    "Remotely") names nothing a thread could be about; "Parking" and "Onboarding" do."""
    found = words(heading)
    if len(found) != 1 or found[0].endswith("ing"):
        return True
    kinds = getAllLemmas(found[0])
    return not kinds or "NOUN" in kinds or "PROPN" in kinds


def extract(corpus: Corpus) -> list[Entity]:
    """Every entity of the corpus, once per (name, kind, document)."""
    common = _lower_case_words(corpus)
    heading_documents: Counter = Counter()
    for chunk in corpus.chunks:
        for heading in {h.strip() for h in chunk.section.split("›") if h.strip()}:
            heading_documents[(heading.lower(), chunk.source_id)] += 1
    shared = Counter(heading for heading, _ in heading_documents)
    found: dict[tuple[str, str, str], Entity] = {}

    def add(name: str, kind: str, source_id: str, person: bool = False) -> None:
        name = re.sub(r"\s+", " ", name).strip(" .:?")
        if not words(name) or all(w in STOPWORDS for w in words(name)):
            return
        key = (name.lower(), kind, source_id)
        if key not in found or person:
            found[key] = Entity(name, kind, source_id, person)

    for document in corpus.documents:
        add(document.title, "document", document.source_id)
        # "Skyline Analytics — Pricing" is about Skyline Analytics: each side of the dash names the document too.
        for side in re.split(r"\s+[—–|:-]\s+|:\s+", document.title):
            add(side, "document", document.source_id)
    for chunk in corpus.chunks:
        for heading in (h.strip() for h in chunk.section.split("›")):
            if heading and shared[heading.lower()] < TEMPLATE_HEADING_SHARE and names_a_thing(heading):
                add(heading, "section", chunk.source_id)
                for name, _ in _names(heading, common):  # "Jonah Whitfield" of "Jonah Whitfield, Office Manager"
                    add(name, "name", chunk.source_id)
        for paragraph in re.split(r"\n\s*\n", chunk.body):
            for name, end in _names(paragraph, common):
                add(name, "name", chunk.source_id, person=bool(_PERSONAL.search(paragraph[end:])))
    # A person named once with a pronoun after it is a person wherever the corpus names them. A
    # first name with a pronoun after it ("Jonah joined in 2021. He runs…") is the person whose
    # full name the same document gives ("### Jonah Whitfield, Office Manager"), and so is the
    # first name itself.
    full_names = {}
    for e in found.values():
        if 2 <= len(e.name.split()) <= 3:
            full_names.setdefault((e.name.split()[0].lower(), e.source_id), set()).add(e.name.lower())
    people = set()
    for e in found.values():
        if e.person and 2 <= len(e.name.split()) <= 3:
            people.add(e.name.lower())
        elif e.person and len(e.name.split()) == 1 and len(full_names.get((e.name.lower(), e.source_id), ())) == 1:
            people |= {e.name.lower(), *full_names[(e.name.lower(), e.source_id)]}
    return [Entity(e.name, e.kind, e.source_id, e.name.lower() in people) for e in found.values()]


def extract_rows(chunk_rows: list[dict]) -> list[Entity]:
    """The entities `extract` finds in a corpus of just the documents whose chunk rows these are
    (`source_id`, `path`, `chunk_index`, `title`, `section`, `body`): a scope's gazetteer. Which
    capitalised words are names depends on the whole corpus (a word it also writes in lower case
    is not one; a heading many documents share is a template), so a scope's names are found in
    the scope's documents alone, in the order load_corpus reads them."""
    chunk_rows = sorted(chunk_rows, key=lambda r: (PurePosixPath(r["path"]).parts, r["chunk_index"]))
    documents = {r["source_id"]: SimpleNamespace(title=r["title"], source_id=r["source_id"]) for r in chunk_rows}
    chunks = [SimpleNamespace(section=r["section"], body=r["body"], source_id=r["source_id"]) for r in chunk_rows]
    return extract(SimpleNamespace(documents=list(documents.values()), chunks=chunks))


def rows(entities: list[Entity]) -> list[dict]:
    return [{"name": e.name, "kind": e.kind, "source_id": e.source_id, "person": e.person} for e in entities]


@dataclass(frozen=True)
class Mention:
    entity: Entity
    start: int  # word offset in the text
    end: int


class Gazetteer:
    """Looks entities up in a text by their words (longest match first)."""

    def __init__(self, entities: list[Entity]):
        self.by_key: dict[tuple[str, ...], list[Entity]] = {}
        for entity in entities:
            if 0 < len(entity.key) <= MAX_WORDS:
                self.by_key.setdefault(entity.key, []).append(entity)

    @classmethod
    def from_rows(cls, table_rows: list[dict]) -> "Gazetteer":
        return cls([Entity(r["name"], r["kind"], r["source_id"], bool(r["person"])) for r in table_rows])

    def mentions(self, text: str, where: Callable[[Entity], bool] | None = None) -> list[Mention]:
        """Entities named in the text, left to right; `where` keeps only some kinds ("Staff
        record — Mara Quill" is a title, and when only people count, it names Mara Quill)."""
        tokens = words(text)
        out, i = [], 0
        while i < len(tokens):
            for n in range(min(MAX_WORDS, len(tokens) - i), 0, -1):
                found = [e for e in self.by_key.get(tuple(tokens[i:i + n]), []) if where is None or where(e)]
                if found and not (n == 1 and tokens[i] in STOPWORDS):
                    out.append(Mention(_most_specific(found), i, i + n))
                    i += n
                    break
            else:
                i += 1
        return out


def _most_specific(entities: list[Entity]) -> Entity:
    """One name can be a title, a heading and a name at once: a person first, then a document."""
    return min(entities, key=lambda e: (not e.person, KINDS.index(e.kind)))
