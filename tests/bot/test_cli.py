"""The `citebot` command as a user runs it: a real subprocess, the bundled corpus, a temp index."""
import json
import os
import subprocess
import sys

import pytest

from conftest import BUNDLED_CORPUS, ROOT


def citebot(*args, stdin=None, db, env=None):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CITEBOT_DB": str(db), "CITEBOT_CORPUS": str(BUNDLED_CORPUS),
           **(env or {})}
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return tmp_path_factory.mktemp("cli") / "lancedb"


def test_index_twice_embeds_nothing_the_second_time(db):
    first = citebot("index", "--json", db=db)
    assert first.returncode == 0, first.stderr
    stats = json.loads(first.stdout)
    assert set(stats) == {"documents", "chunks", "embedded", "deleted", "seconds", "formats", "skipped", "losses"}
    assert stats["losses"] == ["2 documents without a `url` (notes/all-hands-2025-03.md, reference/glossary.md) "
                               "are cited without a link: give them a `url` in their front matter or set "
                               "CITEBOT_SOURCE_URL"]
    assert stats["formats"][".md"] == {"read": stats["documents"], "skipped": 1}
    assert stats["embedded"] == stats["chunks"] > 100
    assert "malformed-front-matter.md" in first.stderr  # skipped, and the user is told which file
    again = json.loads(citebot("index", "--json", db=db).stdout)
    assert again["embedded"] == 0 and again["chunks"] == stats["chunks"]


def test_ask_json_prints_the_final_output(db):
    result = citebot("ask", "--json", "How many days per week can employees work remotely?", db=db)
    out = json.loads(result.stdout)
    assert out["status"] == "answered"
    assert out["citations"][0]["source_id"] == "hr-handbook-2025"
    assert out["citations"][0]["section"] == "Remote Work"


def test_ask_links_documents_without_a_url_through_citebot_source_url(db):
    env = {"CITEBOT_SOURCE_URL": "https://github.com/acme/handbook/blob/main/{path}"}
    result = citebot("ask", "What is the EcoPass?", db=db, env=env)
    assert "<https://github.com/acme/handbook/blob/main/reference/glossary.md#af>" in result.stdout, result.stdout
    bad = citebot("ask", "What is the EcoPass?", db=db, env={"CITEBOT_SOURCE_URL": "handbook/{path}"})
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1].startswith("error: CITEBOT_SOURCE_URL must be")


def test_ask_names_the_closest_section_of_a_question_it_cannot_answer_with_its_link(db):
    result = citebot("ask", "Can contractors work remotely?", db=db)
    assert result.stdout.startswith("I don't know"), result.stdout
    assert ("Closest section: Employee Handbook 2025 › Remote Work › Working from another country "
            "<https://handbook.orrinfold.example/2025#working-from-another-country>") in result.stdout


def test_ask_says_first_when_it_is_not_sure_of_its_answer_and_still_cites(db):
    """No document says whether dogs may come to the office: the answer found is one the doubt
    model expects to be wrong, given hedged."""
    result = citebot("ask", "Can I bring my dog to the office?", db=db)
    lines = result.stdout.splitlines()
    assert lines[0] == "I'm not sure this answers your question. The closest I found:", result.stdout
    assert "Sources:" in lines and "Denver Office and Facilities" in result.stdout
    trusted = citebot("ask", "How many days per week can employees work remotely?", db=db)
    assert "not sure" not in trusted.stdout and "3 days" in trusted.stdout


def test_a_doubt_model_fitted_on_other_features_is_one_line_before_any_question(db, tmp_path):
    from rag_graph.scoring import doubt, learned

    for shipped in learned.MODEL_DIR.glob("*.json"):
        (tmp_path / shipped.name).write_text(shipped.read_text())
    data = json.loads((tmp_path / doubt.MODEL_FILE).read_text())
    (tmp_path / doubt.MODEL_FILE).write_text(json.dumps({**data, "features": data["features"][::-1]}))
    result = citebot("ask", "How many days per week can employees work remotely?", db=db,
                     env={learned.MODEL_ENV: str(tmp_path)})
    assert result.returncode == 2 and "Traceback" not in result.stderr and not result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {tmp_path / doubt.MODEL_FILE} was fitted on features") and "--fit" in last


def test_ask_with_history_file_resolves_a_follow_up(db, tmp_path):
    history = tmp_path / "history.json"
    history.write_text(json.dumps([
        {"role": "user", "content": "How many days per week can employees work remotely?"},
        {"role": "assistant", "content": "Up to 3 days a week with manager approval."}]))
    out = json.loads(citebot("ask", "--json", "--history", str(history), "what about contractors?", db=db).stdout)
    assert out["status"] == "insufficient_context" and "contractors" in out["knowledge_gap"]


def test_chat_keeps_one_thread_across_lines(db):
    result = citebot("chat", db=db, stdin="Who is our Head of People?\nwhen did she join?\n")
    assert result.returncode == 0, result.stderr
    assert "March 2019" in result.stdout.split("> when did she join?")[1]


def test_graph_prints_a_mermaid_diagram(db):
    result = citebot("graph", "--mermaid", db=db)
    assert result.stdout.startswith("---") or "graph TD" in result.stdout
    assert "rewrite_query" in result.stdout and "finalize_insufficient_context" in result.stdout


def test_missing_corpus_is_a_clear_error_not_a_traceback(db, tmp_path):
    result = citebot("index", "--corpus", str(tmp_path / "nowhere"), db=db)
    assert result.returncode == 2
    assert "corpus folder not found" in result.stderr and "Traceback" not in result.stderr


def test_an_unchanged_index_run_does_not_even_import_lancedb(tmp_path):
    """The everyday cron run: nothing changed, so the answer comes from the stamp the last refresh
    left, without LanceDB (whose import alone is most of a 2-second budget). A changed file, or
    a rollback, takes the full path again."""
    corpus, db = tmp_path / "docs", tmp_path / "db"
    corpus.mkdir()
    (corpus / "parking.md").write_text("# Parking\n\nStaff park in the north lot after 8:00.\n")
    (corpus / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    env = {"CITEBOT_CORPUS": str(corpus)}

    def without_lancedb(*args):
        code = "import sys; sys.modules['lancedb'] = None; from bot.cli import main; sys.exit(main(sys.argv[1:]))"
        return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                              cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1", "CITEBOT_DB": str(db), **env})

    assert citebot("index", db=db, env=env).returncode == 0
    unchanged = without_lancedb("index", "--json")
    assert unchanged.returncode == 0, unchanged.stderr
    assert json.loads(unchanged.stdout)["embedded"] == 0 and "broken.md" in unchanged.stderr

    (corpus / "parking.md").write_text("# Parking\n\nStaff park in the south lot after 8:00.\n")
    assert without_lancedb("index").returncode != 0  # the stamp no longer matches: LanceDB is needed
    changed = json.loads(citebot("index", "--json", db=db, env=env).stdout)
    assert changed["embedded"] == 1
    assert without_lancedb("index").returncode == 0

    assert citebot("index", "--rollback", db=db, env=env).returncode == 0
    assert without_lancedb("index").returncode != 0  # the serving version moved: the stamp is gone


def test_ask_answers_from_an_edited_document_and_with_nothing_changed_still_names_skipped_files(tmp_path):
    """`ask` skips the refresh when the last one's stamp says nothing changed: an edit must
    still be indexed before the answer, and the unchanged run still tells which file it skips."""
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED_CORPUS, corpus)
    db, env, question = tmp_path / "db", {"CITEBOT_CORPUS": str(corpus)}, "How many days per week can employees work remotely?"
    assert "3 days a week" in citebot("ask", question, db=db, env=env).stdout
    again = citebot("ask", question, db=db, env=env)
    assert "3 days a week" in again.stdout and "malformed-front-matter.md" in again.stderr

    handbook = corpus / "handbook" / "employee-handbook-2025.md"
    handbook.write_text(handbook.read_text().replace("up to 3 days a week", "up to 4 days a week"))
    edited = citebot("ask", question, db=db, env=env)
    assert "4 days a week" in edited.stdout and "3 days a week" not in edited.stdout, edited.stdout


def test_an_answer_from_two_chunks_of_one_section_lists_that_section_once_under_sources(db):
    """"and who approves it?" quotes both chunks of Remote Work; the reader sees one source line,
    and the JSON keeps both chunk ids for feedback."""
    result = citebot("chat", db=db, stdin="How many days can I work remotely?\nand who approves it?\n")
    assert result.returncode == 0, result.stderr
    reply = result.stdout.split("> and who approves it?")[1]
    assert "Your manager approves the request" in reply
    sources = [line for line in reply.split("Sources:")[1].splitlines() if line.startswith("  - ")]
    assert sources.count("  - Employee Handbook 2025 › Remote Work <https://handbook.orrinfold.example/2025#remote-work>") == 1
    assert len(sources) == len(set(sources))
    history = json.dumps([{"role": "user", "content": "How many days can I work remotely?"},
                          {"role": "assistant", "content": reply.split("Sources:")[0].strip()}])
    out = json.loads(citebot("ask", "--json", "--history", "/dev/stdin", "and who approves it?", db=db,
                             stdin=history).stdout)
    remote = [c for c in out["citations"] if c["section"] == "Remote Work"]
    assert len(remote) == 1 and len(remote[0]["chunk_ids"]) == 2
