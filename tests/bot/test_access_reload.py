"""Access follows the file (issue: fail closed, finding 1). Removing a person from a group and
running `/citebot reload` (or the Teams `reload`, or just saving the file) takes their access away
at once; a file that fails validation is refused with its error shown to the admin, the grants
loaded before keep serving, and `status` tells admins which file (by hash) grants what since when.

End to end: signed Slack requests to the real Bolt app, activities to /api/messages, `citebot index`."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.slack.render import PLACEHOLDER
from bot_harness import ADMIN, fake, mrkdwn_of, start_bot  # noqa: F401 (fixtures)
from teams_harness import ADMIN_AAD, connector, start_teams  # noqa: F401 (fixtures)
from rag_graph.config import Settings
from rag_graph.engine import Engine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = FIXTURES / "access_corpus"
SEVERANCE = "ZEPHYRQUILL"  # the canary of people-ops/severance.md
QUESTION = "What is the severance approval code?"
HR_AAD = "6f1c2e0a-0000-4000-8000-00000000beef"
ROOT = Path(__file__).resolve().parents[2]
_ts = iter(range(100, 10**6))


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    engine = Engine(Settings(corpus=CORPUS, db=str(tmp_path_factory.mktemp("access-reload") / "lancedb")))
    engine.refresh()
    return engine


@pytest.fixture
def access(tmp_path) -> Path:
    path = tmp_path / "access.yml"
    shutil.copy(FIXTURES / "access.yml", path)
    return path


def wait_response(fake, containing: str, name: str, timeout: float = 60) -> str:
    return fake.wait_for("response_url", timeout=timeout,
                         predicate=lambda c: c.path == f"/response/{name}" and containing in c.args["text"])[0].args["text"]


def answer_count(fake, channel):
    return len([c for c in fake.calls("chat.update") if c.args["channel"] == channel and c.args.get("text") != PLACEHOLDER])


def ask_dm(bot, fake, user: str) -> str:
    channel = f"D{user}"
    before = answer_count(fake, channel)
    bot.say(QUESTION, channel=channel, channel_type="im", user=user, ts=f"1700{next(_ts):06d}.000100")
    calls = fake.wait_for("chat.update", count=before + 1, timeout=120,
                          predicate=lambda c: c.args["channel"] == channel and c.args.get("text") != PLACEHOLDER)
    call = calls[-1]
    return mrkdwn_of(call) + call.args.get("text", "")


def in_place(path: Path, old: str, new: str) -> None:
    """Edit the file without changing its size, inode or modification time: only a reload can see it."""
    assert len(old) == len(new)
    times = path.stat()
    with open(path, "r+", encoding="utf-8") as handle:
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace(old, new))
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def test_a_slash_reload_takes_a_removed_persons_access_away(start_bot, engine, fake, access):
    bot = start_bot(engine, access_path=access)
    assert SEVERANCE in ask_dm(bot, fake, "U0HRLEAD")
    in_place(access, "U0HRLEAD", "U0GONE00")
    bot.command("reload", user_id=ADMIN, response="reload")
    done = wait_response(fake, "Reloaded", "reload", timeout=120)
    reply = ask_dm(bot, fake, "U0HRLEAD")
    assert SEVERANCE not in reply and "I don't know" in reply
    assert hashlib.sha256(access.read_bytes()).hexdigest()[:12] in done  # the reply names the file it applied


def test_saving_the_file_is_enough(start_bot, engine, fake, access):
    bot = start_bot(engine, access_path=access)
    assert SEVERANCE in ask_dm(bot, fake, "U0HRLEAD")
    access.write_text(access.read_text().replace("slack_users: [U0HRLEAD]", "slack_users: []"))
    reply = ask_dm(bot, fake, "U0HRLEAD")
    assert SEVERANCE not in reply and "I don't know" in reply


def test_an_invalid_file_is_refused_with_its_error_and_the_old_grants_keep_serving(start_bot, engine, fake, access):
    bot = start_bot(engine, access_path=access)
    good = hashlib.sha256(access.read_bytes()).hexdigest()[:12]
    access.write_text("groups:\n  people-ops:\n    slack_users: [U0HRLEAD\nchannels: {}\n")
    bot.command("reload", user_id=ADMIN, response="bad")
    refused = wait_response(fake, "Reload refused", "bad")
    assert "not valid YAML" in refused and "access.yml" in refused and "keep serving" in refused
    assert SEVERANCE in ask_dm(bot, fake, "U0HRLEAD")  # the grants loaded before
    status = bot.command("status", user_id=ADMIN)["text"]
    assert f"sha256 {good}" in status and "refused" in status and "not valid YAML" in status
    assert "sha256" not in bot.command("status", user_id="U0OTHER")["text"]  # admins only

    access.write_text("groups:\n  people-ops:\n    slack_users: [U0HRLEAD]\nchannels:\n  C0X: {groups: [nobody]}\n")
    bot.command("reload", user_id=ADMIN, response="undefined")
    assert "undefined group" in wait_response(fake, "Reload refused", "undefined")


def test_teams_reload_refuses_an_invalid_file_and_applies_a_valid_one(start_teams, engine, connector, access):
    teams = start_teams(engine, access_path=access)
    teams.say(QUESTION, conversation="a:hr-1", user=HR_AAD)
    [reply] = connector.wait_for(kind="message", conversation="a:hr-1", timeout=120)
    assert SEVERANCE in reply.text

    access.write_text("groups: [not, a, mapping]\n")
    teams.say("reload", conversation="a:admin-1", user=ADMIN_AAD)
    [refused] = connector.wait_for(kind="message", conversation="a:admin-1", timeout=60)
    assert "Reload refused" in refused.text and "groups" in refused.text

    shutil.copy(FIXTURES / "access.yml", access)
    in_place(access, HR_AAD, "6f1c2e0a-0000-4000-8000-00000000dead")
    teams.say("reload", conversation="a:admin-2", user=ADMIN_AAD)
    connector.wait_for(kind="message", conversation="a:admin-2", timeout=120,
                       predicate=lambda s: "Reloaded" in (s.text or ""))
    teams.say(QUESTION, conversation="a:hr-2", user=HR_AAD)
    [reply] = connector.wait_for(kind="message", conversation="a:hr-2", timeout=120)
    assert SEVERANCE not in reply.text and "I don't know" in reply.text


def test_citebot_index_refuses_an_invalid_access_file(tmp_path, access):
    access.write_text("groups:\n  people-ops: {slack_user: [U1]}\n")
    env = {**os.environ, "CITEBOT_ACCESS": str(access), "CITEBOT_CORPUS": str(CORPUS),
           "CITEBOT_DB": str(tmp_path / "db"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "index"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 2, done
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: CITEBOT_ACCESS:") and "slack_user" in line
    assert not (tmp_path / "db").exists()  # nothing was indexed
