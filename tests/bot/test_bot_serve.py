"""`citebot serve` and the manifest an admin installs from."""
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

from bot.serve import serve
from bot_harness import QUESTION, SECRET, Bot, answers, fake, mrkdwn_of  # noqa: F401 (fixtures)
from rag_graph.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_manifest_asks_for_exactly_what_the_bot_uses():
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text())
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "app_mentions:read", "assistant:write", "channels:history", "groups:history", "im:history",
        "chat:write", "commands", "reactions:write", "users:read"}
    assert manifest["settings"]["event_subscriptions"]["bot_events"] == [
        "app_mention", "app_home_opened", "message.channels", "message.groups", "message.im"]
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/citebot"]
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True
    assert manifest["features"]["agent_view"]["agent_description"]  # Slack's agent messaging
    assert "assistant_view" not in manifest["features"]  # new apps may no longer declare it


def test_serve_refuses_to_start_without_the_tokens_it_needs(capsys):
    assert serve(Settings()) == 2
    assert serve(Settings(slack_bot_token="xoxb-1")) == 2  # HTTP mode needs the signing secret
    assert serve(Settings(slack_bot_token="xoxb-1", slack_app_token="xoxb-wrong")) == 2
    assert "SLACK_SIGNING_SECRET" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_citebot_serve_indexes_at_start_and_answers_over_http(fake, engine, corpus_copy, tmp_path):
    port = _free_port()
    shutil.copytree(engine.settings.db, tmp_path / "db")  # start-up refresh then embeds nothing
    env = {**os.environ, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
           "SLACK_APP_TOKEN": "", "SLACK_API_URL": fake.url, "PORT": str(port),
           "CITEBOT_CORPUS": str(corpus_copy), "CITEBOT_DB": str(tmp_path / "db"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(ROOT)}  # this checkout's code, whatever the venv has installed
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        while not any("listening on" in line for line in lines):
            line = process.stdout.readline()
            assert line or process.poll() is None, "".join(lines)
            lines.append(line)
        assert any("Indexed 20 documents" in line for line in lines)
        bot = Bot(fake, f"http://127.0.0.1:{port}/slack/events", Settings())
        bot.mention(QUESTION)
        assert "3 days a week" in mrkdwn_of(answers(fake)[0])
    finally:
        process.terminate()
        process.wait(timeout=10)
