"""The stored vectors held in memory by a process that answers many questions
(rag_graph/retrieval/vector_store.py `hold`): the same vectors as the keyed read of the table,
no read per question, and never a version behind the index it serves."""
from __future__ import annotations

import numpy as np
import pytest

from rag_graph.language.markdown import sentences
from rag_graph.retrieval.embeddings import Embedder
from rag_graph.retrieval.index import Index
from rag_graph.retrieval.scope import Scope

SHARED = "Ask your manager before you book."  # in two documents, read in two contexts
DOCS = {
    "travel.md": f"# Travel\n\n## Trains\n\nSecond class rail tickets are booked by the travel desk. {SHARED}\n",
    "leave.md": f"# Leave\n\n## Holidays\n\nAnnual leave is 25 days a year, carried over up to five. {SHARED}\n",
    "office.md": "# Office\n\n## Animals\n\nStaff may bring their dogs along on Fridays. Cats stay at home.\n",
}


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


def _corpus_texts(index: Index) -> list[str]:
    chunks = index.fetch("true", limit=100)
    return [text for chunk in chunks for text in (chunk["text"], *sentences(chunk["body"]))]


def test_held_vectors_are_the_keyed_reads_and_a_question_reads_none(tmp_path, corpus, embedder, monkeypatch):
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    index = Index(str(tmp_path / "db"), Embedder(embedder.model_name))
    texts = [*_corpus_texts(index), "Not a text of the corpus at all."]
    assert texts.count(SHARED) == 2
    read = index.store.lookup(texts)  # keyed reads of the table, as a single question makes them
    assert SHARED in read and "Not a text of the corpus at all." not in read
    index.warm_up(Scope())  # a process that answers many questions
    monkeypatch.setattr(index.store, "_read", lambda *a: pytest.fail("a lookup read the table"))
    held = index.store.lookup(texts)
    assert held.keys() == read.keys()
    assert all(np.array_equal(held[text], read[text]) for text in read), \
        "a held vector differs from the keyed read (the shared sentence: the last row's, as the read gives it)"


def test_held_vectors_follow_the_index_to_its_next_version(tmp_path, corpus, embedder):
    """An edited document's new sentence is found with the vector its new chunk stored: a held
    copy of the older version would miss it and encode it alone, a different vector."""
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    index.warm_up(Scope())
    added = "Pets need a vaccination record on file."
    (corpus / "office.md").write_text(DOCS["office.md"].rstrip() + f" {added}\n")
    index.refresh(corpus)
    found = index.store.lookup([added])
    assert added in found, "the held vectors stayed at the older version"
    reader = Index(str(tmp_path / "db"), Embedder(embedder.model_name))
    assert np.array_equal(found[added], reader.store.lookup([added])[added])


def test_held_rows_read_a_chunk_s_tokens_by_place_as_the_key_index_finds_them(tmp_path, corpus, embedder, monkeypatch):
    """Late interaction reads a few chunks' token vectors a question. With the rows held their
    places are known: the same tokens as the keyed read, in this version and after an edit."""
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    (corpus / "office.md").write_text(DOCS["office.md"].rstrip() + " Pets need a vaccination record on file.\n")
    index.refresh(corpus)  # rows deleted and appended: places are no longer the order of writing
    reader = Index(str(tmp_path / "db"), Embedder(embedder.model_name))
    texts = [chunk["text"] for chunk in reader.fetch("true", limit=100)]
    keyed = reader.store.tokens(texts)
    assert len(keyed) == len(texts)
    reader.warm_up(Scope())
    monkeypatch.setattr(reader.store, "_read", lambda *a: pytest.fail("the key index was read"))
    held = reader.store.tokens(list(reversed(texts)))
    assert held.keys() == keyed.keys() and all(np.array_equal(held[text], keyed[text]) for text in texts)
