"""A hidden document must not move what others are shown: the keyword leg ranks with the BM25
statistics of the rows the question may read (scoped_text.py), and the names that resolve
follow-ups are found in those documents alone, as if the others were not indexed. Real tables,
real model."""
import pytest

from rag_graph.retrieval.index import Index

PUBLIC = {
    "badges.md": "# Badges\n\n## Lost badge\n\nA lost badge is replaced by the front desk; bring a photo ID.\n",
    "laptops.md": "# Laptops\n\n## Shipping\n\nLaptops for remote hires are shipped by courier to the home address.\n",
    "desks.md": "# Desks\n\n## Booking\n\nBook a desk in the office app the day before you come in.\n",
    "payroll.md": "# Payroll\n\n## Who runs it\n\nHarbor runs payroll for all staff. Questions go to the finance desk.\n",
}
# The hidden document makes "badge" common, which lowers its BM25 weight for everyone if the
# statistics cross the scope: the lost-badge section would lose ground to the laptop section.
HIDDEN = ("# Security memo\n\naudience-free text\n\n" +
          "\n\n".join(f"## Badge audit {n}\n\nBadge {n} badge badge was audited." for n in range(12)) +
          "\n\n## Docks\n\nThe harbor gate stays locked at night.\n")  # "harbor" in lower case
QUESTION = "badge replaced laptops shipped"


def _index(tmp_path, embedder, name, hidden):
    folder = tmp_path / name
    folder.mkdir()
    for file, text in PUBLIC.items():
        (folder / file).write_text(text)
    if hidden:
        (folder / "memo.md").write_text("---\naudience: security\n---\n" + HIDDEN)
    index = Index(str(tmp_path / f"{name}-db"), embedder)
    index.refresh(folder)
    return index


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_public_ranks_and_scores_are_those_of_an_index_without_the_hidden_document(tmp_path, embedder, mode):
    with_hidden = _index(tmp_path, embedder, "with", hidden=True).scoped(None)
    without = _index(tmp_path, embedder, "without", hidden=False).scoped(None)

    shown = [(r["chunk_id"], r["keyword_score"]) for r in with_hidden.search(QUESTION, mode=mode, top_k=3)]
    expected = [(r["chunk_id"], r["keyword_score"]) for r in without.search(QUESTION, mode=mode, top_k=3)]

    assert shown == expected
    assert all(not chunk_id.startswith("memo") for chunk_id, _ in shown)


def test_the_hidden_document_is_still_found_by_those_who_may_read_it(tmp_path, embedder):
    index = _index(tmp_path, embedder, "with", hidden=True)
    found = index.scoped({"audiences": ["security"]}).search("badge audit", mode="hybrid", top_k=3)
    assert found[0]["source_id"] == "memo" and found[0]["keyword_score"] > 0


def test_public_names_are_those_of_an_index_without_the_hidden_document(tmp_path, embedder):
    """A capitalised word the corpus also writes in lower case is no name at a sentence's start:
    the hidden memo's "harbor" must not take "Harbor" (who runs payroll) from everyone else."""
    public = _index(tmp_path, embedder, "with", hidden=True).scoped(None).entities()
    expected = _index(tmp_path, embedder, "without", hidden=False).scoped(None).entities()

    assert public.mentions("who is Harbor?")
    assert sorted(map(repr, public.by_key.items())) == sorted(map(repr, expected.by_key.items()))
