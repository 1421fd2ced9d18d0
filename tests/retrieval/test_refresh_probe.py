"""The refresh checks its full-text index with a word of the first chunk: a word the index holds,
whatever else the text is made of (rule lines of reStructuredText read as .txt, checksums)."""
from rag_graph.config import Settings
from rag_graph.engine import Engine

SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
RST_AS_TEXT = f"""{"*" * 128}
Best Packaging Practices
{"*" * 128}

The release tarball's checksum is {SHA256} in the upload.
A sponsor uploads the package for a maintainer who cannot upload it themselves.
"""


def test_a_document_led_by_rule_lines_and_a_checksum_is_indexed_and_answers(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a-packaging.rst.txt").write_text(RST_AS_TEXT)  # the first chunk of the corpus
    engine = Engine(Settings(corpus=corpus, db=str(tmp_path / "lancedb")))
    stats = engine.refresh()  # refused before: "full-text index does not answer"
    assert stats.embedded == 1
    output = engine.ask("Who uploads the package for a maintainer who cannot upload it?")
    assert output["status"] == "answered" and "sponsor" in output["answer"], output
