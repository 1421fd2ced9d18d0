"""The LanceDB index: hybrid retrieval, incremental and atomic refresh. Real table, real model."""
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from rag_graph.retrieval import index as index_module
from rag_graph.retrieval import refresh as refresh_module
from rag_graph.retrieval.embeddings import Embedder, content_tokens
from rag_graph.retrieval.index import Index, RefreshError, RefreshInProgress
from rag_graph.language.words import stem
from rag_graph.language.markdown import sentences

DOCS = {
    "office.md": "# Office\n\n## Animals\n\nStaff may bring their dogs and cats along on Fridays.\n",
    "hardware.md": "# Hardware\n\n## Adapters\n\nThe ZX-4411 dongle is kept in the supply cupboard.\n",
    "travel.md": "# Travel\n\n## Trains\n\nBook second class rail tickets through the travel desk.\n",
}


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def index(tmp_path, embedder):
    return Index(str(tmp_path / "db"), embedder)


def test_hybrid_finds_a_keyword_only_match_and_a_paraphrase_only_match(index, corpus):
    index.refresh(corpus)
    assert index.search("ZX-4411", mode="hybrid", top_k=3)[0]["source_id"] == "hardware"
    paraphrase = "are pets allowed in the workplace"
    assert not index.search(paraphrase, mode="keyword", top_k=3)  # no shared words at all
    best = index.search(paraphrase, mode="hybrid", top_k=3)[0]
    assert best["source_id"] == "office" and best["anchor"] == "animals"
    assert {"chunk_id", "title", "section", "url", "similarity", "keyword_score", "score"} <= set(best)


def test_refresh_is_incremental(index, corpus):
    first = index.refresh(corpus)
    assert (first.documents, first.chunks, first.embedded, first.deleted) == (3, 3, 3, 0)
    assert index.refresh(corpus).embedded == 0
    (corpus / "travel.md").write_text(DOCS["travel.md"].replace("second", "first"))
    changed = index.refresh(corpus)
    assert (changed.embedded, changed.deleted) == (1, 0)
    assert "first class" in index.search("rail tickets", top_k=1)[0]["text"]


def test_keyword_scores_depend_on_the_documents_not_on_the_edits_before(tmp_path, corpus, embedder):
    """LanceDB's incremental full-text update kept deleted rows in the BM25 statistics: after a
    document was added and removed again, the same question over the same documents scored
    differently from a fresh build, enough to flip a borderline answer."""
    fresh = Index(str(tmp_path / "fresh"), embedder)
    fresh.refresh(corpus)
    edited = Index(str(tmp_path / "edited"), embedder)
    edited.refresh(corpus)
    (corpus / "trains.md").write_text("# Trains\n\n## Tickets\n\nRail tickets for second class travel are booked online.\n")
    edited.refresh(corpus)
    (corpus / "trains.md").unlink()
    edited.refresh(corpus)
    for question in ("second class rail tickets", "dogs on Fridays"):
        expected = [(row["chunk_id"], row["keyword_score"]) for row in fresh.search(question, mode="keyword", top_k=3)]
        assert [(row["chunk_id"], row["keyword_score"]) for row in edited.search(question, mode="keyword", top_k=3)] == expected


def test_unchanged_refresh_does_not_load_the_model(tmp_path, corpus, embedder):
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    fresh = Embedder(embedder.model_name)
    stats = Index(str(tmp_path / "db"), fresh).refresh(corpus)
    assert stats.embedded == 0 and not fresh.loaded


def test_deleted_documents_disappear_from_results(index, corpus):
    index.refresh(corpus)
    (corpus / "hardware.md").unlink()
    stats = index.refresh(corpus)
    assert stats.deleted == 1 and stats.documents == 2
    assert all(row["source_id"] != "hardware" for row in index.search("ZX-4411 dongle", top_k=5))


def test_a_failed_refresh_keeps_the_previous_version_serving(index, corpus, monkeypatch):
    index.refresh(corpus)
    version = index.version
    (corpus / "travel.md").write_text("# Travel\n\n## Trains\n\nRail is now forbidden.\n")

    def broken(texts, parts, progress=None):
        raise RuntimeError("embedding server fell over")

    monkeypatch.setattr(index.embedder, "encode_chunks", broken)
    with pytest.raises(RefreshError, match="previous index keeps serving"):
        index.refresh(corpus)
    assert index.version == version
    assert "second class" in index.search("rail tickets", mode="keyword", top_k=1)[0]["text"]


def test_an_empty_or_missing_corpus_is_refused(index, corpus, tmp_path):
    index.refresh(corpus)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RefreshError, match="no indexable documents"):
        index.refresh(empty)
    with pytest.raises(RefreshError, match="not found"):
        index.refresh(tmp_path / "gone")
    assert index.count() == 3


def test_readers_during_a_refresh_see_a_complete_version(index, corpus, embedder, monkeypatch):
    index.refresh(corpus)
    for n in range(30):
        (corpus / f"extra-{n}.md").write_text(f"# Extra {n}\n\n## Part\n\nFiller document number {n}.\n")
    slow_encode = embedder.encode_chunks

    def slow(texts, parts, progress=None):
        time.sleep(0.5)
        return slow_encode(texts, parts, progress)

    monkeypatch.setattr(index.embedder, "encode_chunks", slow)
    counts = []
    worker = threading.Thread(target=index.refresh, args=(corpus,))
    worker.start()
    while worker.is_alive():
        counts.append(len(index.search("dongle", mode="keyword", top_k=100)) and index.count())
        time.sleep(0.02)
    worker.join()
    assert set(counts) <= {3, 33} and index.count() == 33


def test_a_second_refresh_while_one_runs_is_refused(index, corpus, embedder, monkeypatch):
    index.refresh(corpus)
    (corpus / "new.md").write_text("# New\n\nSomething new.\n")
    gate = threading.Event()
    real = embedder.encode_chunks

    def waiting(texts, parts, progress=None):
        gate.wait(10)
        return real(texts, parts, progress)

    monkeypatch.setattr(index.embedder, "encode_chunks", waiting)
    worker = threading.Thread(target=index.refresh, args=(corpus,))
    worker.start()
    time.sleep(0.2)
    with pytest.raises(RefreshInProgress):
        index.refresh(corpus)
    gate.set()
    worker.join()


def test_another_process_opens_the_last_good_version(tmp_path, corpus, embedder):
    first = Index(str(tmp_path / "db"), embedder)
    first.refresh(corpus)
    reader = Index(str(tmp_path / "db"), embedder)
    assert reader.ready and reader.count() == 3 and reader.documents == 3


def test_question_time_vectors_of_corpus_text_come_from_the_index_not_the_model(tmp_path, corpus, embedder):
    """The first question after a start is as fast as the hundredth: a chunk's text and its
    sentences were embedded at index time, so looking them up loads no model."""
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    fresh = Embedder(embedder.model_name)
    index = Index(str(tmp_path / "db"), fresh)
    chunk = index.fetch("source_id = 'office'")[0]
    own = list(sentences(chunk["body"]))
    stored = fresh.encode_passages([chunk["text"], *own])
    assert not fresh.loaded, "a question-time lookup of corpus text loaded the model"
    encoded = embedder.encode([chunk["text"], *own])
    assert np.allclose(stored[0], encoded[0], atol=1e-3)  # the chunk vector is the encoder's own
    # A sentence's vector is pooled from its chunk's forward pass: near its own encoding.
    assert float(stored[1] @ encoded[1]) > 0.6


def test_token_vectors_for_late_interaction_come_from_the_index_not_the_model(tmp_path, corpus, embedder):
    """Ranking reads a question's top chunks token by token: their token vectors were stored at
    index time (as int8), so it loads no model, and the rounding barely moves a cosine."""
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    fresh = Embedder(embedder.model_name)
    index = Index(str(tmp_path / "db"), fresh)
    text = index.fetch("source_id = 'office'")[0]["text"]
    [stored] = fresh.passage_tokens([text])
    assert not fresh.loaded, "a question-time lookup of a chunk's tokens loaded the model"
    encoded = content_tokens(embedder.token_vectors([text])[0])
    assert stored.shape == encoded.shape
    assert np.abs(stored @ stored.T - encoded @ encoded.T).max() < 0.01


def test_a_sentence_is_read_token_by_token_in_the_context_of_its_chunk(tmp_path, corpus, embedder):
    """The answer's pick reads a sentence's tokens as its chunk's stored tokens that fall inside
    it; a sentence that is not in the text as written (a table row rewritten) has none."""
    (corpus / "office.md").write_text("# Office\n\n## Animals\n\nStaff may bring their dogs along on Fridays.\n"
                                      "Cats stay at home, as do birds.\n")
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    fresh = Embedder(embedder.model_name)
    chunk = Index(str(tmp_path / "db"), fresh).fetch("source_id = 'office'")[0]
    first, second = sentences(chunk["body"])
    [[one, both, rewritten]] = fresh.sentence_tokens([chunk["text"]], [[(first,), (first, second), ("Not in the text.",)]])
    [stored] = fresh.passage_tokens([chunk["text"]])
    assert len(one) == len(fresh.offsets([first])[0]) - 2  # its own words, no more
    assert len(both) > len(one) and np.allclose(both[: len(one)], one)
    assert all((stored == token).all(axis=1).any() for token in both)  # the stored rows themselves
    assert rewritten is None


def test_each_chunk_s_sentences_are_read_at_their_own_places_question_after_question(tmp_path, corpus, embedder):
    """Where a chunk's tokens lie in its text is kept by text between questions: two sections of
    one page (their texts open alike) read in either order give what a fresh process reads."""
    (corpus / "office.md").write_text("# Office\n\n## Animals\n\nStaff may bring their dogs along on Fridays.\n"
                                      "Cats stay at home.\n\n## Plants\n\nWater the ferns on Mondays.\n")
    Index(str(tmp_path / "db"), embedder).refresh(corpus)

    def read(embedder: Embedder, chunks: list[dict]) -> list[list[np.ndarray | None]]:
        runs = [[(sentence,) for sentence in sentences(chunk["body"])] for chunk in chunks]
        return embedder.sentence_tokens([chunk["text"] for chunk in chunks], runs)

    def serving() -> tuple[Embedder, Index]:  # an embedder reads the tokens its index stored
        fresh = Embedder(embedder.model_name)
        return fresh, Index(str(tmp_path / "db"), fresh)

    warm, index = serving()
    animals, plants = sorted(index.fetch("source_id = 'office'"), key=lambda c: c["section"])
    read(warm, [animals])
    for order in ([plants], [plants, animals], [animals]):
        expected = read(serving()[0], order)
        got = read(warm, order)
        assert [[tokens.shape for tokens in chunk] for chunk in got] == [[tokens.shape for tokens in chunk] for chunk in expected]
        assert all((a == b).all() for mine, theirs in zip(got, expected) for a, b in zip(mine, theirs))


def test_an_index_stored_before_token_vectors_is_rebuilt_whole_by_the_next_refresh(tmp_path, corpus, embedder):
    """An index from before late interaction answers questions by encoding the few chunks it
    re-ranks; `citebot index`, with no document changed, stores their token vectors."""
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    Index(str(tmp_path / "db"), embedder).store._open().drop_columns(["tokens", "scales"])
    older = Index(str(tmp_path / "db"), embedder)
    text = older.fetch("source_id = 'office'")[0]["text"]
    assert older.store.tokens([text]) == {}
    assert older.refresh(corpus).embedded == 3
    fresh = Embedder(embedder.model_name)
    Index(str(tmp_path / "db"), fresh)
    assert fresh.passage_tokens([text])[0].shape[1] == embedder.dimension and not fresh.loaded


def test_chunks_a_search_found_are_compared_without_reading_the_vector_table_again(tmp_path, corpus, embedder, monkeypatch):
    """The evidence checks after a search compare the question with the rows it found: their
    vectors came back with the search, so no second read of the vector table (~6 ms each)."""
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    fresh = Embedder(embedder.model_name)
    index = Index(str(tmp_path / "db"), fresh)
    found = index.search("Can I bring my dog to the office?", top_k=2)
    reads = []
    monkeypatch.setattr(index.store, "_read", lambda *a: reads.append(a) or pytest.fail("read again"))
    vectors = fresh.encode_passages([row["text"] for row in found])
    fresh.encode_passages(["dongle"])  # a single word (the synonym check) is never stored: not looked up
    assert reads == []
    assert np.allclose(vectors, embedder.encode([row["text"] for row in found]), atol=1e-3)


def test_term_counts_are_read_from_the_index_not_counted_per_process(tmp_path, corpus, embedder, monkeypatch):
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    reopened = Index(str(tmp_path / "db"), embedder)
    scanned = []
    real = index_module._column
    monkeypatch.setattr(index_module, "_column", lambda table, name: scanned.append(name) or real(table, name))
    frequency, chunks = reopened.vocabulary()
    assert "text" not in scanned, "vocabulary() scanned the whole table"
    assert chunks == 3 and frequency["dog"] == 1 and frequency[stem("dongle")] == 1


def test_term_counts_of_an_older_stemmer_are_counted_again_and_stored_by_the_next_index(
        tmp_path, corpus, embedder, monkeypatch):
    """An index counted before the stemmer changed would make every changed stem read as a
    word the knowledge base never uses: its counts are not trusted, and `citebot index` with no
    document changed stores new ones."""
    Index(str(tmp_path / "db"), embedder).refresh(corpus)
    moved_on = index_module.STEMMER_VERSION + 1  # the code moved on: what reads and what writes the counts
    for module in (index_module, refresh_module):
        monkeypatch.setattr(module, "STEMMER_VERSION", moved_on)
    upgraded = Index(str(tmp_path / "db"), embedder)
    frequency, chunks = upgraded.vocabulary()
    assert chunks == 3 and frequency["dog"] == 1 and index_module._STEMMER not in frequency
    assert upgraded._stored_vocabulary(upgraded.version) is None
    stats = upgraded.refresh(corpus)
    assert stats.embedded == 0 and stats.version == upgraded.version
    assert Index(str(tmp_path / "db"), embedder)._stored_vocabulary(upgraded.version)["dog"] == 1


def test_a_gazetteer_extracted_by_older_rules_is_extracted_again_by_the_next_index(tmp_path, corpus, embedder):
    """The gazetteer is rewritten when documents change; after an upgrade of the extraction rules
    (a changelog's "New" is no subject any more), `citebot index` with no document changed
    rewrites it too, without encoding anything."""
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    older = pa.schema(list(refresh_module._ENTITY_SCHEMA), metadata={"extractor": "1"})
    stale = pa.Table.from_pylist([{"name": "New", "kind": "section", "source_id": "x", "person": False}], schema=older)
    index._db.create_table(index_module.ENTITY_TABLE, data=stale, schema=older, mode="overwrite")
    assert [m.entity.name for m in Index(str(tmp_path / "db"), embedder).entities().mentions("New")] == ["New"]
    stats = Index(str(tmp_path / "db"), embedder).refresh(corpus)
    assert stats.embedded == 0
    assert Index(str(tmp_path / "db"), embedder).entities().mentions("New") == []
