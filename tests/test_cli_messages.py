"""What `citebot` says when something is off, through its command line: one true line, never a
traceback. A tampered model file is refused naming the file; a model that cannot load names
EMBEDDING_MODEL; an empty or missing folder says whether an index still answers, and `ask`
answers from the last good index as `serve` does."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.cli import main
from rag_graph.retrieval import embeddings, model_files



@pytest.fixture
def small_corpus(tmp_path) -> Path:
    from conftest import BUNDLED_CORPUS

    target = tmp_path / "corpus"
    shutil.copytree(BUNDLED_CORPUS / "handbook", target)
    return target


@pytest.fixture
def good_index(engine, tmp_path) -> Path:
    """A copy of the session's index of the bundled corpus."""
    target = tmp_path / "db"
    shutil.copytree(engine.settings.db, target)
    return target


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_a_tampered_model_file_is_refused_with_one_line_naming_it(tmp_path, small_corpus, capsys, monkeypatch):
    copy = tmp_path / "model"
    shutil.copytree(embeddings.bundled_model_path(), copy)
    model_files.verify(copy)  # the copy itself is intact
    vocab = copy / "vocab.txt"
    vocab.write_text(vocab.read_text().replace("password", "passw0rd", 1))  # one word of the vocabulary
    monkeypatch.setattr(embeddings, "bundled_model_path", lambda: str(copy))
    monkeypatch.setenv("EMBEDDING_MODEL", str(copy))
    code = main(["index", "--corpus", str(small_corpus), "--db", str(tmp_path / "db")])
    err = capsys.readouterr().err
    assert code == 2
    [line] = _errors(err)
    assert line.startswith("error: refusing the embedding model:") and str(vocab) in line
    assert "Traceback" not in err


def test_a_model_file_changed_after_its_export_was_cached_is_refused(tmp_path, small_corpus, capsys, monkeypatch):
    """The cached ONNX export is used without reading the model folder; a file changed since
    (its size or time differ) sends the load back to the folder, whose sums are checked."""
    copy = tmp_path / "model"
    shutil.copytree(embeddings.bundled_model_path(), copy)
    monkeypatch.setattr(embeddings, "bundled_model_path", lambda: str(copy))
    monkeypatch.setenv("EMBEDDING_MODEL", str(copy))
    monkeypatch.setenv("CITEBOT_CACHE", str(tmp_path / "cache"))
    assert main(["index", "--corpus", str(small_corpus), "--db", str(tmp_path / "db")]) == 0
    assert list((tmp_path / "cache" / "onnx").glob("*.onnx")), "the export is cached"
    capsys.readouterr()
    embeddings._load_model.cache_clear()  # as a new process would
    config = copy / "config.json"
    config.write_text(config.read_text().replace('"hidden_act": "gelu"', '"hidden_act": "relu"'))
    code = main(["index", "--corpus", str(small_corpus), "--db", str(tmp_path / "db2")])
    err = capsys.readouterr().err
    assert code == 2, err
    [line] = _errors(err)
    assert line.startswith("error: refusing the embedding model:") and str(config) in line


def test_a_model_that_cannot_load_is_one_line_naming_the_setting(tmp_path, small_corpus, capsys, monkeypatch):
    monkeypatch.setenv("EMBEDDING_MODEL", "nonexistent-model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for command in (["index"], ["ask", "how many vacation days?"]):
        code = main([*command, "--corpus", str(small_corpus), "--db", str(tmp_path / "db")])
        err = capsys.readouterr().err
        assert code == 2, err
        [line] = _errors(err)
        assert line.startswith("error: EMBEDDING_MODEL='nonexistent-model' cannot be loaded"), line
        assert "leave it empty for the bundled all-MiniLM-L6-v2" in line


def test_an_empty_folder_without_an_index_says_nothing_can_answer(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code = main(["index", "--corpus", str(tmp_path / "empty"), "--db", str(tmp_path / "db")])
    [line] = _errors(capsys.readouterr().err)
    assert code == 2
    assert "no indexable documents" in line and "there is no index yet" in line
    assert "keeps serving" not in line


def test_an_empty_folder_with_an_index_says_which_version_keeps_serving(tmp_path, good_index, capsys):
    (tmp_path / "empty").mkdir()
    code = main(["index", "--corpus", str(tmp_path / "empty"), "--db", str(good_index)])
    [line] = _errors(capsys.readouterr().err)
    assert code == 2 and "the previous index keeps serving (version " in line


def test_ask_with_a_missing_folder_answers_from_the_last_good_index(tmp_path, good_index, capsys):
    code = main(["ask", "How many days per week can employees work remotely?",
                 "--corpus", str(tmp_path / "gone"), "--db", str(good_index)])
    out, err = capsys.readouterr()
    assert code == 0 and "3 days a week" in out
    [line] = _errors(err)
    assert line.startswith("warning: corpus folder not found") and "keeps serving (version " in line
    assert line.endswith("answering from it")


def test_index_ends_with_one_line_per_silent_loss_and_none_once_the_settings_say_how(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "linked.md").write_text("---\nurl: https://intranet.example/linked\n---\n# Linked\n\nParking is free.\n")
    (corpus / "plain.md").write_text("# Plain\n\nThe canteen opens at noon.\n")
    (corpus / "payroll.md").write_text("---\nurl: https://intranet.example/payroll\naudience: [people-ops]\n---\n"
                                       "# Payroll\n\nSalaries are paid on the 25th.\n")
    for name in ("CITEBOT_SOURCE_URL", "CITEBOT_ACCESS"):
        monkeypatch.delenv(name, raising=False)
    args = ["index", "--corpus", str(corpus), "--db", str(tmp_path / "db")]
    for _ in range(2):  # the build, then the unchanged run that reads its figures back
        assert main(args) == 0
        lines = _errors(capsys.readouterr().err)
        assert [line for line in lines if line.startswith("warning: ")] == [
            "warning: 1 document without a `url` (plain.md) is cited without a link: give it a `url` in its "
            "front matter or set CITEBOT_SOURCE_URL",
            "warning: 1 document with an `audience` (payroll.md) is hidden from every answer because "
            "CITEBOT_ACCESS is unset: set it to the access file that names their groups"]

    access = tmp_path / "access.yml"
    access.write_text("groups:\n  people-ops:\n    slack_users: [U0PAY]\n")
    monkeypatch.setenv("CITEBOT_SOURCE_URL", "https://intranet.example/{slug}")
    monkeypatch.setenv("CITEBOT_ACCESS", str(access))
    assert main(args) == 0
    assert not [line for line in _errors(capsys.readouterr().err) if line.startswith("warning: ")]
