"""CITEBOT_EXCLUDE: a docs site's build folder holds each page more than once (the HTML page, the
`_sources/*.txt` it was made from, an index page); the admin leaves the copies out with
gitignore-style patterns, answers cite the page, `citebot index` says what was left out, and
changing the patterns rebuilds the index. Real folder, real LanceDB table, real embedding model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from rag_graph.config import Settings
from rag_graph.engine import Engine

PAGE = """<html><head><title>Orphaning a package</title></head><body>
<h1 id="orphaning">Orphaning a package</h1>
<p>To orphan a package, file a bug against the wnpp pseudo-package titled "O: package -- description"
and set the package's Maintainer field to the Debian QA Group.</p>
<h2 id="adopting">Adopting a package</h2>
<p>To adopt an orphaned package, retitle its wnpp bug from O: to ITA: and upload within a week.</p>
</body></html>"""
SOURCE = """Orphaning a package
===================

To orphan a package, file a bug against the wnpp pseudo-package titled "O: package -- description"
and set the package's Maintainer field to the Debian QA Group.
"""
INDEX_PAGE = """<html><body><h1>Index</h1><p>orphan a package: Orphaning a package; wnpp: Orphaning a package,
Adopting a package</p></body></html>"""


@pytest.fixture
def build_folder(tmp_path) -> Path:
    """A Sphinx build as installed: the pages, their sources, an index page."""
    folder = tmp_path / "site"
    (folder / "_sources").mkdir(parents=True)
    (folder / "pkgs.html").write_text(PAGE)
    (folder / "_sources" / "pkgs.rst.txt").write_text(SOURCE)
    (folder / "genindex.html").write_text(INDEX_PAGE)
    return folder


def _index(folder: Path, db: Path, capsys) -> tuple[dict, str]:
    """`citebot index --json`'s figures, and its warnings (what the admin's reload shows too)."""
    assert main(["index", "--corpus", str(folder), "--db", str(db), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return stats, "\n".join(stats["skipped"])


def test_the_copies_are_left_out_said_so_and_answers_cite_the_page(build_folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEBOT_EXCLUDE", "_sources/,genindex.html")
    monkeypatch.setenv("CITEBOT_SOURCE_URL", "https://docs.example.org/{path}")
    stats, err = _index(build_folder, tmp_path / "db", capsys)
    assert stats["documents"] == 1
    assert "left out 2 file(s) matching CITEBOT_EXCLUDE (_sources/pkgs.rst.txt, genindex.html)" in err

    assert main(["ask", "How do I orphan a package?", "--corpus", str(build_folder), "--db", str(tmp_path / "db")]) == 0
    out = capsys.readouterr().out
    assert "wnpp" in out and "https://docs.example.org/pkgs.html#orphaning" in out
    assert "_sources" not in out and "genindex" not in out


def test_changing_the_patterns_rebuilds_and_a_pattern_can_take_a_file_back(build_folder, tmp_path, capsys, monkeypatch):
    db = tmp_path / "db"
    monkeypatch.setenv("CITEBOT_EXCLUDE", "_sources/,*.html,!pkgs.html")
    stats, _ = _index(build_folder, db, capsys)
    assert stats["documents"] == 1
    monkeypatch.setenv("CITEBOT_EXCLUDE", "_sources/")
    stats, err = _index(build_folder, db, capsys)
    assert stats["documents"] == 2  # genindex.html is back: not the previous build's figures read back
    assert "left out 1 file(s) matching CITEBOT_EXCLUDE (_sources/pkgs.rst.txt)" in err
    monkeypatch.delenv("CITEBOT_EXCLUDE")
    stats, err = _index(build_folder, db, capsys)
    assert stats["documents"] == 3 and "CITEBOT_EXCLUDE" not in err


def test_a_file_left_out_changes_nothing_when_it_changes(build_folder, tmp_path, capsys, monkeypatch):
    """The everyday cron run (`citebot index`, nothing changed) is answered from the last build's
    figures without loading the model; editing a file that is left out must not cost a refresh."""
    monkeypatch.setenv("CITEBOT_EXCLUDE", "_sources/")
    db = tmp_path / "db"
    _index(build_folder, db, capsys)
    settings = Settings.from_env(corpus=build_folder, db=str(db))
    assert Engine.unchanged_index(settings) is not None
    (build_folder / "_sources" / "pkgs.rst.txt").write_text(SOURCE + "\nEdited.\n")
    assert Engine.unchanged_index(settings) is not None
    (build_folder / "pkgs.html").write_text(PAGE.replace("within a week", "within two weeks"))
    assert Engine.unchanged_index(settings) is None


def test_a_pattern_never_hides_a_change_of_audience(build_folder, tmp_path, capsys, monkeypatch):
    """A sidecar or a folder's .citebot.yml says who may read a page: a pattern that matches them
    (`*.yml`, `.*`) must not keep their change from rebuilding the index (fail closed)."""
    monkeypatch.setenv("CITEBOT_EXCLUDE", "*.yml,.*,_sources/")
    db = tmp_path / "db"
    _index(build_folder, db, capsys)
    settings = Settings.from_env(corpus=build_folder, db=str(db))
    (build_folder / "pkgs.html.yml").write_text("audience: [debian-qa]\n")
    assert Engine.unchanged_index(settings) is None
    _index(build_folder, db, capsys)
    (build_folder / ".citebot.yml").write_text("audience: [debian-qa]\n")
    assert Engine.unchanged_index(settings) is None
