"""The sets kept aside (the Debian Developer's Reference, the Debian Administrator's Handbook, a second
npm set): measured by eval_all, never learned from."""
from pathlib import Path

from rag_graph.tools import eval_all, labels
from rag_graph.tools.question_sets import load_cases


def test_a_set_kept_aside_is_measured_but_never_labeled_for_tuning():
    for name, corpus in eval_all.ASIDE.items():
        assert load_cases(eval_all.ROOT / "eval" / f"{name}.jsonl")
        assert corpus in eval_all.CORPORA
        assert name not in eval_all.SETS and name not in labels.SETS  # tools.labels, tune and loco read SETS


def test_the_developers_reference_is_read_from_its_chapter_pages_only(tmp_path, monkeypatch):
    package = tmp_path / "developers-reference"
    (package / "_sources").mkdir(parents=True)
    for name in ("pkgs.html", "resources.html", "developers-reference.html", "index.html", "search.html"):
        (package / name).write_text(f"<html><body><h1>{name}</h1></body></html>")
    (package / "developers-reference.pdf").write_bytes(b"%PDF-1.4")
    (package / "_sources" / "pkgs.rst.txt").write_text("Managing Packages")
    monkeypatch.setitem(eval_all.CORPORA, "devref", package)
    folder = eval_all.corpus_folder("devref", tmp_path / "indexes")
    assert sorted(p.name for p in folder.rglob("*")) == ["pkgs.html", "resources.html"]
    assert eval_all.corpus_folder("nodejs", tmp_path / "indexes") == eval_all.CORPORA["nodejs"]


def test_the_administrators_handbook_is_read_from_its_section_pages_only(tmp_path, monkeypatch):
    package = tmp_path / "en-US"
    (package / "Common_Content" / "css").mkdir(parents=True)
    (package / "images").mkdir()
    for name in ("apt.html", "sect.quotas.html", "index.html"):
        (package / name).write_text(f"<html><body><h1>{name}</h1></body></html>")
    (package / "Common_Content" / "css" / "default.css").write_text("body {}")
    (package / "images" / "ssh-L.png").write_bytes(b"\x89PNG")
    monkeypatch.setitem(eval_all.CORPORA, "admin-handbook", package)
    folder = eval_all.corpus_folder("admin-handbook", tmp_path / "indexes")
    assert folder == tmp_path / "indexes" / "admin-handbook-pages"
    assert sorted(p.name for p in folder.rglob("*")) == ["apt.html", "sect.quotas.html"]


def test_without_the_package_its_set_is_skipped_with_a_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(eval_all.CORPORA, "devref", tmp_path / "not-installed")
    assert eval_all.main(["--out", str(tmp_path / "out"), "--db", str(tmp_path / "db"), "--only", "debian-devref"]) == 0
    assert capsys.readouterr().out.strip() == f"skipped debian-devref: no corpus at {tmp_path / 'not-installed'}"
    assert not (tmp_path / "out" / "debian-devref.json").exists()
    monkeypatch.setitem(eval_all.CORPORA, "admin-handbook", tmp_path / "no-handbook")
    assert eval_all.main(["--out", str(tmp_path / "out"), "--db", str(tmp_path / "db"), "--only", "debian-handbook"]) == 0
    assert capsys.readouterr().out.strip() == f"skipped debian-handbook: no corpus at {tmp_path / 'no-handbook'}"
