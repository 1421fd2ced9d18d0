"""The real Agents SDK app (aiohttp, JWT middleware, AgentApplication) served on a free loopback
port, and helpers to post activities to it as Teams does. Every activity's serviceUrl points at
a FakeConnector, which records the bot's replies. Fixtures live here (see bot_harness.py)."""
from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

import pytest
from aiohttp import web

from bot.teams.app import MESSAGES_PATH, build_web_app, sdk_config
from bot_harness import QUESTION
from fake_connector import FakeConnector
from rag_graph.config import Settings

BOT_ID, BOT_NAME, TENANT = "28:citebot-app-id", "Citebot", "tenant-1"
ADMIN_AAD = "00000000-0000-0000-0000-00000000a0a0"
USER_AAD = "11111111-1111-1111-1111-111111111111"
ANONYMOUS = {"CONNECTIONS__SERVICE_CONNECTION__SETTINGS__ANONYMOUS_ALLOWED": "true"}


class _Served:
    """An aiohttp app on its own event loop thread, like the process `citebot serve` runs."""

    def __init__(self, app: web.Application):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def start():
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            return runner, runner.addresses[0][1]

        self.runner, self.port = asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@dataclass
class TeamsBot:
    connector: FakeConnector
    url: str
    settings: Settings

    def activity(self, text: str = "", *, conversation: str = "a:personal-1", kind: str = "personal",
                 user: str = USER_AAD, mention: bool = False, type: str = "message", **extra) -> dict:
        """An activity as Teams sends it; `mention` puts `<at>Citebot</at>` and its entity in."""
        body = {"type": type, "id": extra.pop("id", f"1700{uuid.uuid4().int % 10**9:09d}"),
                "timestamp": "2026-12-03T12:00:00.000Z", "channelId": "msteams",
                "serviceUrl": self.connector.url, "locale": "en-US",
                "from": {"id": f"29:{user}", "name": "Pat", "aadObjectId": user},
                "recipient": {"id": BOT_ID, "name": BOT_NAME},
                "conversation": {"id": conversation, "conversationType": kind, "tenantId": TENANT},
                "channelData": {"tenant": {"id": TENANT}}}
        if type == "message":
            body["text"] = f"<at>{BOT_NAME}</at> {text}" if mention else text
            body["textFormat"] = "plain"
            if mention:
                body["entities"] = [{"type": "mention", "text": f"<at>{BOT_NAME}</at>",
                                     "mentioned": {"id": BOT_ID, "name": BOT_NAME}}]
        return {**body, **extra}

    def post(self, activity: dict, headers: dict | None = None) -> tuple[int, str]:
        request = urllib.request.Request(self.url, data=json.dumps(activity).encode(), method="POST",
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def say(self, text: str = "", **fields) -> dict:
        """Deliver a message activity; Teams must get its answer at once (202)."""
        activity = self.activity(text, **fields)
        status, body = self.post(activity)
        assert status == 202, body
        return activity


_probes = iter(range(1, 10**6))


def quiet_for(teams: "TeamsBot") -> list:
    """What the bot sent for the activities delivered so far, typing aside, once it has surely
    handled them: for asserting that nothing (more) happens. A personal question sent now and
    answered means the bot took in every earlier activity and had a full answer's time to act on
    it (ignoring one is far less work). The probe's own messages are left out."""
    probe = f"a:probe-{next(_probes)}"
    teams.say(QUESTION, conversation=probe)
    teams.connector.wait_for(kind="message", conversation=probe, timeout=120)
    return [s for s in teams.connector.sent() if s.kind != "typing" and s.conversation != probe]


def ai_entity(sent) -> dict:
    [entity] = [e for e in sent.activity.get("entities", []) if e.get("type") == "https://schema.org/Message"]
    return entity


@pytest.fixture
def connector():
    with FakeConnector() as fake:
        yield fake


@pytest.fixture
def start_teams(connector, tmp_path):
    """start_teams(engine, env=ANONYMOUS, **settings) -> TeamsBot, served until the test ends."""
    served = []

    def start(engine, env: dict | None = None, **overrides) -> TeamsBot:
        settings = Settings(**{"teams": True, "admin_user_ids": (ADMIN_AAD,), "teams_service_urls": (connector.url,),
                               "feedback_path": tmp_path / "feedback.jsonl", **overrides})
        server = _Served(build_web_app(settings, engine, sdk_config(ANONYMOUS if env is None else env)))
        served.append(server)
        return TeamsBot(connector, f"http://127.0.0.1:{server.port}{MESSAGES_PATH}", settings)

    yield start
    for server in served:
        server.close()


@pytest.fixture
def teams(start_teams, engine) -> TeamsBot:
    return start_teams(engine)
