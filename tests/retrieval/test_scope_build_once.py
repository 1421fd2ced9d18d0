"""What a scope derives from the index (its own full-text index, term counts, names) is built
once per version and scope: also when the scope's first two questions arrive together, and
before any question when the bot warms up. Real tables, real model."""
import threading
import time

from rag_graph.retrieval import index as index_module
from rag_graph.retrieval.index import Index
from rag_graph.retrieval.scope import Scope

DOCS = {
    "badges.md": "# Badges\n\n## Lost badge\n\nA lost badge is replaced by the front desk; bring a photo ID.\n",
    "laptops.md": "# Laptops\n\n## Shipping\n\nLaptops for remote hires are shipped by courier to the home address.\n",
    # restricted: questions for everyone search a scope that leaves it out
    "memo.md": "---\naudience: security\n---\n# Security memo\n\n## Badge audit\n\nEvery badge was audited.\n",
}


def _restricted_index(tmp_path, embedder):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    index = Index(str(tmp_path / "db"), embedder)
    index.refresh(folder)
    return index


def _counting_builds(monkeypatch) -> list:
    """Count the scope text indexes built; each build takes long enough for a second question
    to arrive while it runs."""
    builds = []

    class Counted(index_module.ScopedText):
        def __init__(self, rows):
            builds.append(rows.num_rows)
            time.sleep(0.3)
            super().__init__(rows)

    monkeypatch.setattr(index_module, "ScopedText", Counted)
    return builds


def test_two_first_questions_of_a_scope_build_its_text_index_once(tmp_path, embedder, monkeypatch):
    index = _restricted_index(tmp_path, embedder)
    builds = _counting_builds(monkeypatch)
    start, found = threading.Barrier(2), []

    def ask():
        start.wait()
        found.append([row["chunk_id"] for row in index.scoped(None).search("lost badge", mode="keyword", top_k=3)])

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert builds == [2]  # once, over the two public chunks
    assert len(found) == 2 and found[0] == found[1] and found[0][0].startswith("badges")


def test_warm_up_builds_the_public_scope_before_the_first_question(tmp_path, embedder, monkeypatch):
    index = _restricted_index(tmp_path, embedder)
    builds = _counting_builds(monkeypatch)

    index.warm_up(Scope())
    assert builds == [2]
    assert index.scoped(None).search("lost badge", mode="hybrid", top_k=3)[0]["source_id"] == "badges"
    assert builds == [2]  # the question built nothing
