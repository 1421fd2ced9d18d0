"""The tool behind the documented bound on what hidden documents' BM25 statistics change
(docs/access.md): it must hide and remove the same documents, and count every difference."""
from rag_graph.retrieval.ingest.corpus import load_corpus
from rag_graph.tools.scope_bound import AUDIENCE, differences, prepare


def test_the_same_documents_are_hidden_in_one_copy_and_missing_from_the_other(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "team").mkdir(parents=True)
    for name in ("a", "b", "c", "d"):
        (corpus / "team" / f"{name}.md").write_text(f"# {name.upper()} policy\n\nWhat the {name} policy says.\n")
    (corpus / "team" / "c.md.yml").write_text("title: C policy\n")  # a sidecar already there keeps its fields

    hidden, removed, chosen = prepare(corpus, tmp_path / "out", every=2)

    assert chosen == ["team/a.md", "team/c.md"]
    audiences = {doc.path: doc.audience for doc in load_corpus(hidden).documents}
    assert audiences == {"team/a.md": [AUDIENCE], "team/b.md": [], "team/c.md": [AUDIENCE], "team/d.md": []}
    assert sorted(doc.path for doc in load_corpus(removed).documents) == ["team/b.md", "team/d.md"]
    assert "title: C policy" in (hidden / "team" / "c.md.yml").read_text()
    assert not (corpus / "team" / "a.md.yml").exists()  # the corpus itself is never touched


def _report(*questions):
    return {"summary": {"overall": {"mrr": 0.5}}, "questions": [
        {"question": q, "history": [], "final_output": {"answer": answer, "citations": [{"chunk_id": c} for c in cited]},
         "retrieved": [{"chunk_id": c} for c in top]} for q, answer, cited, top in questions]}


def test_every_kind_of_difference_is_counted():
    hidden = _report(("same?", "A.", ["x"], ["x", "y"]), ("order?", "B.", ["x"], ["y", "x"]),
                     ("cite?", "C.", ["z"], ["z"]), ("words?", "D!", ["x"], ["x"]))
    removed = _report(("same?", "A.", ["x"], ["x", "y"]), ("order?", "B.", ["x"], ["x", "y"]),
                      ("cite?", "C.", ["y"], ["z"]), ("words?", "D.", ["x"], ["x"]))

    result = differences(hidden, removed)

    assert {k: result["counts"][k] for k in ("questions", "answer", "citations", "top5")} == \
        {"questions": 4, "answer": 1, "citations": 1, "top5": 1}
    assert [row["question"] for row in result["changed"]] == ["order?", "cite?", "words?"]
