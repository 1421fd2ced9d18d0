"""The hybrid search's legs read from the serving version's rows in memory (resident.py): the same
rows in the same order as Lance's own queries, Lance deciding wherever its float32 order cannot be
known, and never the rows of a version no longer served. Real LanceDB table, real model."""
import shutil
import threading

import numpy as np
import pyarrow as pa
import pytest

from rag_graph.retrieval.index import Index, _rows, _words
from rag_graph.retrieval import resident
from rag_graph.retrieval.resident import ServedRows, error_bound
from rag_graph.retrieval.scope import Scope
from rag_graph.retrieval.scoped_text import fuse
from rag_graph.language.words import term_set

TOPICS = {
    "leave": "Parental leave lasts sixteen weeks at full pay; tell your manager a month ahead.",
    "travel": "Book economy class for flights under six hours; premium economy above that.",
    "laptops": "New staff get a laptop on the first day; the IT desk replaces broken ones.",
    "remote": "Employees may work remotely three days a week with their manager's approval.",
    "security": "Report a lost YubiKey to the security team at once; they revoke it.",
    "expenses": "Submit receipts within thirty days; meals are reimbursed up to the daily limit.",
    "holidays": "The office closes for ten public holidays; the calendar lists them each January.",
    "training": "Each employee has a yearly training budget for courses and conferences.",
}
QUESTIONS = ["how long is parental leave", "can I fly business class", "my laptop broke", "working from home",
             "I lost my security key", "meal allowance", "public holidays", "conference budget", "manager approval"]


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in TOPICS.items():
        (folder / f"{name}.md").write_text(f"# {name.title()}\n\n## Policy\n\n{text}\n")
    return folder


def nearest(rows: ServedRows, vector: np.ndarray, k: int) -> pa.Table | None:
    """`nearest_places`' rows as Lance's vector leg returns them (`_distance` before `_rowid`)."""
    found = rows.nearest_places(vector, k)
    if found is None:
        return None
    places, distances = found
    table = rows.table.take(pa.array(places, type=pa.int64()))
    return table.add_column(len(rows.names), "_distance", pa.array(distances, type=pa.float32()))


def lance_nearest(index: Index, vector: np.ndarray, k: int):
    serving = index._checked_out
    return serving.dataset.to_table(columns=[*serving.names, "_distance"], with_row_id=True, nearest={
        "column": "vector", "q": vector, "k": k, "metric": "cosine"})


def test_the_vector_leg_from_memory_is_lances_ranking_or_leaves_it_to_lance(tmp_path, corpus, embedder):
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    rows = index._checked_out.resident.rows()
    answered = 0
    for question in QUESTIONS:
        vector = embedder.encode_query(question)
        for k in (1, 3, 8, 20):
            ours = nearest(rows, vector, k)
            if ours is None:
                continue
            answered += 1
            theirs = lance_nearest(index, vector, k)
            assert ours.column_names == theirs.column_names
            assert ours.drop_columns(["_distance"]).to_pylist() == theirs.drop_columns(["_distance"]).to_pylist()
            # Lance's float32 distances agree with the exact ones far inside the bound the ranking relies on
            assert np.abs(ours.column("_distance").to_numpy() - theirs.column("_distance").to_numpy()).max() \
                < error_bound(len(vector))
    assert answered >= 30  # of 36: near-ties go to Lance, the rest is answered here


def test_copies_of_one_text_are_ranked_by_lance(tmp_path, corpus, embedder):
    """Two pages with the same text have the same vector: their order is Lance's own (no bound can
    tell it), so the leg goes to Lance, and the search still returns both, as it did."""
    shutil.copy(corpus / "leave.md", corpus / "leave-copy.md")
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    vector = embedder.encode_query("how long is parental leave")
    assert index._checked_out.resident.rows().nearest_places(vector, 3) is None
    found = index.search("how long is parental leave", top_k=3)
    assert {row["source_id"] for row in found[:2]} == {"leave", "leave-copy"}


def test_keyword_rows_from_memory_are_the_rows_lance_returns(tmp_path, corpus, embedder):
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    serving = index._checked_out
    for question in QUESTIONS:
        hits = serving.dataset.to_table(columns=["_score"], with_row_id=True, full_text_query=_words(question), limit=5)
        full = serving.dataset.to_table(columns=[*serving.names, "_score"], with_row_id=True,
                                        full_text_query=_words(question), limit=5)
        ours = serving.resident.rows().keyword_rows(hits)
        assert ours.column_names == full.column_names and ours.to_pylist() == full.to_pylist()


def test_an_edited_document_is_found_as_edited_after_the_refresh(tmp_path, corpus, embedder):
    """The rows in memory belong to the version they were read from: after an edit is indexed,
    the search reads the new version's rows, not the old ones."""
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    index.warm_up(Scope())  # the rows of the first version are in memory
    before = index.search("how long is parental leave", top_k=2)[0]
    assert before["source_id"] == "leave" and "sixteen weeks" in before["text"]
    (corpus / "leave.md").write_text("# Leave\n\n## Policy\n\nParental leave lasts twenty weeks at full pay.\n")
    index.refresh(corpus)
    after = index.search("how long is parental leave", top_k=2)[0]
    assert after["source_id"] == "leave" and "twenty weeks" in after["text"] and "sixteen" not in after["text"]


def test_rows_are_read_once_when_the_first_searches_arrive_together(tmp_path, corpus, embedder, monkeypatch):
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    reads, read = [], ServedRows.read

    def counted(dataset, names):
        reads.append(1)
        return read(dataset, names)
    monkeypatch.setattr(ServedRows, "read", staticmethod(counted))
    threads = [threading.Thread(target=index.search, args=(question,)) for question in QUESTIONS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reads == [1]


def test_warm_up_reads_every_chunks_terms_unless_one_question_follows(tmp_path, corpus, embedder):
    """A chunk's words are stemmed once per process; warming up does it for every chunk before
    the first question, except for `citebot ask`, which asks one."""
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    texts = index._checked_out.resident.rows().table.column("text").to_pylist()
    term_set.cache_clear()
    index.warm_up(Scope(), terms=False)
    assert term_set.cache_info().currsize == 0
    index.warm_up(Scope())
    misses = term_set.cache_info().misses
    assert [term_set(text) for text in texts] and term_set.cache_info().misses == misses == len(texts)


@pytest.mark.parametrize("kept", [resident.DICTS, 3])
def test_fused_rows_from_memory_are_the_rows_the_arrow_fusion_makes(tmp_path, corpus, embedder, monkeypatch, kept):
    """The hybrid search's rows built straight from memory are, key for key and value for value
    (vectors included), what fusing the two legs' arrow tables gives, for every limit; also when
    the rows kept as dicts are dropped search after search (a corpus larger than DICTS)."""
    monkeypatch.setattr(resident, "DICTS", kept)
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    serving = index._checked_out
    rows = serving.resident.rows()
    compared = 0
    for question in QUESTIONS:
        vector = embedder.encode_query(question)
        for k, limit in ((3, 3), (5, 4), (8, 8)):
            near = rows.nearest_places(vector, k)
            if near is None:
                continue
            hits = serving.dataset.to_table(columns=["_score"], with_row_id=True, full_text_query=_words(question), limit=k)
            ours = rows.fused_rows(near, hits, limit)
            theirs = _rows(fuse(question, nearest(rows, vector, k), rows.keyword_rows(hits), limit))
            assert [list(row) for row in ours] == [list(row) for row in theirs]
            for mine, other in zip(ours, theirs):
                assert np.array_equal(mine.pop("vector"), other.pop("vector")) and mine == other
            compared += 1
    assert compared >= 20


def test_a_search_s_rows_are_its_own_to_change(tmp_path, corpus, embedder):
    """Rows read once are kept for the next search: what one caller does to its rows (it pops
    and adds keys, extends lists) never reaches another search's rows."""
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(corpus)
    index.warm_up(Scope())
    first = index.search("how long is parental leave", top_k=3)
    fresh = [dict(row, links=list(row["links"])) for row in first]
    for row in first:
        row["links"].append("elsewhere")
        row["text"] = "changed"
        del row["source_id"]
    again = index.search("how long is parental leave", top_k=3)
    assert again == fresh and all(row["links"] is not old["links"] for row, old in zip(again, first))
