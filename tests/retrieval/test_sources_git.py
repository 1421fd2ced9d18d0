"""A git source against a real bare repository in a temporary folder: commit, change, delete and
force-push upstream, each visible in answers after one sync; an unchanged sync embeds nothing; a
source that cannot be reached keeps its last good documents and does not stop the others."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sources_harness import answer, source_report, sources_engine


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}).stdout


LEAVE = """# Parental leave

## How long

Parents get 14 weeks of paid parental leave, taken within the first year.
"""
TRAVEL = """# Travel

## Per diem

The travel per diem is 55 dollars a day for meals.
"""


@pytest.fixture
def repo(tmp_path):
    bare, work = tmp_path / "upstream.git", tmp_path / "work"
    git(tmp_path, "init", "--bare", "-b", "main", str(bare))
    git(tmp_path, "init", "-b", "main", str(work))
    (work / "content").mkdir()
    (work / "content" / "leave.md").write_text(LEAVE)
    (work / "content" / "travel.md").write_text(TRAVEL)
    (work / "outside.md").write_text("# Outside\n\nThe sub-path leaves this out: KESTRELNOTE.\n")
    git(work, "add", "-A")
    git(work, "commit", "-m", "first")
    git(work, "remote", "add", "origin", str(bare))
    git(work, "push", "origin", "main")
    return bare, work


def commit(work: Path, message: str) -> None:
    git(work, "add", "-A")
    git(work, "commit", "-m", message)
    git(work, "push", "origin", "main")


def test_git_changes_reach_answers_after_one_sync(tmp_path, repo):
    bare, work = repo
    engine = sources_engine(tmp_path, [{"name": "handbook", "type": "git", "url": f"file://{bare}", "branch": "main",
                                        "path": "content/", "link": "https://handbook.acme.com/{slug}/"}])
    report = engine.sync()
    assert source_report(report, "handbook").added == 2 and not report.failed
    text, links = answer(engine, "How many weeks of paid parental leave do parents get?")
    assert "14 weeks" in text
    assert "https://handbook.acme.com/leave/#how-long" in links
    assert "KESTRELNOTE" not in answer(engine, "What does the sub-path leave out?")[0]

    unchanged = engine.sync()
    assert unchanged.refresh.embedded == 0 and source_report(unchanged, "handbook").changed == 0

    (work / "content" / "leave.md").write_text(LEAVE.replace("14 weeks", "18 weeks"))
    commit(work, "longer leave")
    report = engine.sync()
    assert source_report(report, "handbook").changed == 1 and report.refresh.embedded >= 1
    assert "18 weeks" in answer(engine, "How many weeks of paid parental leave do parents get?")[0]
    first_change = git(work, "rev-parse", "HEAD").strip()

    (work / "content" / "travel.md").unlink()
    commit(work, "travel moves elsewhere")
    report = engine.sync()
    assert source_report(report, "handbook").removed == 1 and report.refresh.deleted >= 1
    text, links = answer(engine, "What is the travel per diem for meals?")
    assert "55 dollars" not in text and not any("travel" in link for link in links)

    # History rewritten: back to the first commit's tree with other leave, force-pushed.
    git(work, "reset", "--hard", "HEAD~2")
    (work / "content" / "leave.md").write_text(LEAVE.replace("14 weeks", "21 weeks"))
    git(work, "add", "-A")
    git(work, "commit", "-m", "rewritten")
    git(work, "push", "--force", "origin", "main")
    assert git(work, "rev-parse", "HEAD").strip() != first_change
    report = engine.sync()
    assert not report.failed
    assert "21 weeks" in answer(engine, "How many weeks of paid parental leave do parents get?")[0]
    assert "55 dollars" in answer(engine, "What is the travel per diem for meals?")[0]


def test_an_unreachable_source_keeps_its_documents_and_does_not_block_the_others(tmp_path, repo):
    bare, work = repo
    other = tmp_path / "other"
    other.mkdir()
    (other / "badges.md").write_text("# Badges\n\n## Lost badge\n\nA lost badge is replaced at the front desk for 10 dollars.\n")
    engine = sources_engine(tmp_path, [
        {"name": "handbook", "type": "git", "url": f"file://{bare}", "path": "content"},
        {"name": "office", "type": "folder", "path": str(other)}])
    assert not engine.sync().failed
    shutil.move(bare, tmp_path / "gone.git")
    (other / "badges.md").write_text("# Badges\n\n## Lost badge\n\nA lost badge is replaced at the front desk for 25 dollars.\n")
    report = engine.sync()
    failed = source_report(report, "handbook")
    assert failed.error and "git fetch failed" in failed.error and failed.documents == 2
    assert "14 weeks" in answer(engine, "How many weeks of paid parental leave do parents get?")[0]
    assert "25 dollars" in answer(engine, "How much does replacing a lost badge cost?")[0]
    status = {s["name"]: s for s in engine.sources_status()}
    assert status["handbook"]["error"] == failed.error and status["handbook"]["last_success"] < status["handbook"]["last_sync"]
    assert status["office"]["error"] is None and status["office"]["documents"] == 1
