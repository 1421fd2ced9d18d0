"""`citebot serve` with Teams: one process, one Engine, each configured platform; the settings
checked before anything is indexed; the app package an admin uploads."""
import json
import os
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

from bot.admin import COMMANDS
from bot.memory import InProcessMemory
from bot.reply import build_reply
from bot.serve import serve
from bot.teams.render import MAX_ABSTRACT, MAX_CITATIONS, MAX_NAME, render
from bot_harness import QUESTION, SECRET, Bot, fake, mrkdwn_of  # noqa: F401 (fixtures)
from fake_connector import FakeConnector
from rag_graph.config import Settings
from teams_harness import TeamsBot

ROOT = Path(__file__).resolve().parents[2]
ID = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_teams_alone_starts_without_slack_tokens_and_a_missing_setting_is_named(capsys):
    assert serve(Settings(teams=True), env={}) == 2
    err = capsys.readouterr().err
    assert f"{ID} is not set" in err and "ANONYMOUS_ALLOWED=true" in err and "SLACK" not in err
    assert serve(Settings(teams=True), env={ID: "app-id"}) == 2
    assert "CLIENTSECRET is required" in capsys.readouterr().err
    certificate = {ID: "app-id", "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__TENANTID": "t",
                   "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__AUTHTYPE": "certificate"}
    assert serve(Settings(teams=True), env=certificate) == 2  # certificate authentication needs its .pfx
    assert "CERTPFXFILE (the certificate's .pfx file) is required" in capsys.readouterr().err
    assert serve(Settings(), env={}) == 2
    assert "nothing to serve" in capsys.readouterr().err


def test_one_process_serves_slack_and_teams_from_one_index(fake, engine, corpus_copy, tmp_path):
    slack_port, teams_port = _free_port(), _free_port()
    shutil.copytree(engine.settings.db, tmp_path / "db")  # start-up refresh then embeds nothing
    connector = FakeConnector().__enter__()
    env = {**os.environ, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET, "SLACK_APP_TOKEN": "",
           "SLACK_API_URL": fake.url, "PORT": str(slack_port), "CITEBOT_TEAMS": "1", "TEAMS_PORT": str(teams_port),
           "CITEBOT_TEAMS_SERVICE_URLS": connector.url,  # replies go only to Teams' hosts, and this fake
           "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__ANONYMOUS_ALLOWED": "true",
           "CITEBOT_CORPUS": str(corpus_copy), "CITEBOT_DB": str(tmp_path / "db"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(ROOT)}  # this checkout, not whichever copy is installed
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        while sum("listening" in line for line in lines) < 2:
            line = process.stdout.readline()
            assert line or process.poll() is None, "".join(lines)
            lines.append(line)
        assert sum("Indexed 20 documents" in line for line in lines) == 1  # one engine for both
        Bot(fake, f"http://127.0.0.1:{slack_port}/slack/events", Settings()).mention(QUESTION)
        assert "3 days a week" in mrkdwn_of(fake.wait_for("chat.postMessage", timeout=30)[0])
        TeamsBot(connector, f"http://127.0.0.1:{teams_port}/api/messages", Settings()).say(QUESTION)
        assert "3 days a week" in connector.wait_for(timeout=30)[0].text
    finally:
        connector.__exit__(None, None, None)
        process.terminate()
        process.wait(timeout=60)  # interpreter teardown (torch) takes seconds on a busy machine


def test_citations_stay_within_teams_limits():
    citations = [{"source_id": f"d{i}", "title": "A very long document title " * 4, "section": f"Section {i}",
                  "chunk_id": f"d{i}::s::0", "url": f"https://docs.example/{i}#s"} for i in range(30)]
    sentences = [{"text": f"Fact number {i} is " + "long " * 60 + ".", "chunk_ids": [f"d{i}::s::0"]} for i in range(30)]
    output = {"status": "answered", "answer": " ".join(s["text"] for s in sentences), "citations": citations}
    activity = render(build_reply(output, "ref", "q", sentences=sentences)).model_dump(by_alias=True, mode="json")
    [entity] = activity["entities"]
    assert len(entity["citation"]) == MAX_CITATIONS
    assert all(len(c["appearance"]["name"]) <= MAX_NAME and len(c["appearance"]["abstract"]) <= MAX_ABSTRACT
               for c in entity["citation"])
    assert "[20]" in activity["text"] and "[21]" not in activity["text"]  # no marker without its citation


def test_conversation_memory_is_bounded_and_forgets_quiet_conversations():
    now = [0.0]
    memory = InProcessMemory(max_turns=2, ttl=60, max_conversations=2, clock=lambda: now[0])
    for n in range(3):
        memory.add("19:c@thread.tacv2;messageid=1", f"q{n}", f"a{n}")
    assert [t["content"] for t in memory.turns("19:c@thread.tacv2;messageid=1")] == ["q1", "a1", "q2", "a2"]
    assert memory.turns("19:c@thread.tacv2;messageid=2") == []  # another reply chain, another memory
    memory.add("b", "q", "a")
    memory.add("c", "q", "a")  # a third conversation pushes out the least recent
    assert memory.turns("19:c@thread.tacv2;messageid=1") == []
    now[0] = 61
    assert memory.turns("c") == []


def test_make_teams_package_builds_an_uploadable_zip(tmp_path):
    out = tmp_path / "citebot-teams.zip"
    env = {**os.environ, ID: "00000000-0000-0000-0000-0000000000b0"}
    subprocess.run(["make", "-s", "teams-package", f"TEAMS_PACKAGE={out}", "PYTHON=" + sys.executable],
                   cwd=ROOT, env=env, check=True)
    with zipfile.ZipFile(out) as package:
        assert sorted(package.namelist()) == ["color.png", "manifest.json", "outline.png"]
        manifest = json.loads(package.read("manifest.json"))
        color, outline = package.read("color.png"), package.read("outline.png")
    assert manifest["$schema"].endswith("/v1.22/MicrosoftTeams.schema.json")
    [bot] = manifest["bots"]
    assert bot["botId"] == manifest["id"] == env[ID]
    assert set(bot["scopes"]) == {"personal", "team", "groupChat"}
    assert {c["title"] for c in bot["commandLists"][0]["commands"]} == set(COMMANDS)
    assert {p["name"] for p in manifest["authorization"]["permissions"]["resourceSpecific"]} == {
        "ChannelMessage.Read.Group", "ChatMessage.Read.Chat"}  # channels and group chats, unmentioned
    # PNG width and height live at bytes 16-24 of the IHDR chunk.
    assert (int.from_bytes(color[16:20], "big"), int.from_bytes(color[20:24], "big")) == (192, 192)
    assert (int.from_bytes(outline[16:20], "big"), int.from_bytes(outline[20:24], "big")) == (32, 32)
