"""The real Bolt app, served over HTTP on a free loopback port against FakeSlack, and helpers
to talk to it as Slack does (signed requests posted with urllib) and read what it sent.

The fixtures live here, not in a tests/bot/conftest.py: a second module named `conftest`
would shadow tests/conftest.py for `from conftest import …` elsewhere. Test modules import
the fixtures they use."""
from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.slack.app import EVENTS_PATH, build_app
from bot.slack.events import events_handler
from bot.slack.render import PLACEHOLDER
from web_harness import ServedHttp
from fake_slack import FakeSlack, action_body, command_body, event_body, signed_headers
from rag_graph.config import Settings
from rag_graph.engine import Engine

SECRET = "test-signing-secret"
ADMIN = "UADMIN"
QUESTION = "How many days per week can employees work remotely?"


def blocks_of(call) -> list[dict]:
    blocks = call.args.get("blocks") or []
    return json.loads(blocks) if isinstance(blocks, str) else blocks


def mrkdwn_of(call) -> str:
    """Every mrkdwn text in a message's blocks, one per line."""
    texts = []
    for block in blocks_of(call):
        if block["type"] == "section":
            texts.append(block["text"]["text"])
        elif block["type"] == "context":
            texts += [element["text"] for element in block["elements"]]
    return "\n".join(texts)


def answers(fake: FakeSlack, count: int = 1, timeout: float = 30) -> list:
    """The answers posted so far, once `count` have arrived. With a thread status showing while
    the graph runs, each answer is a single chat.postMessage (no placeholder, no edit)."""
    return fake.wait_for("chat.postMessage", count=count, timeout=timeout,
                         predicate=lambda call: call.args.get("text") != PLACEHOLDER)


PROBE_CHANNEL = "DPROBE"
_probes = iter(range(1, 10**6))


def quiet_for(bot: "Bot") -> list:
    """What the bot sent for the events delivered so far, once it has surely handled them: for
    asserting that nothing happens. Events queue in arrival order, so a DM question sent now and
    answered means the bot reached every earlier event and has had a full answer's time to act
    on it (ignoring an event is far less work). The probe's own calls are left out."""
    bot.say(QUESTION, channel=PROBE_CHANNEL, channel_type="im", ts=f"1800000000.{next(_probes):06d}")
    bot.fake.wait_for("chat.update", timeout=120, predicate=lambda c: c.args.get("channel") == PROBE_CHANNEL)
    return [call for call in bot.fake.calls()
            if call.method != "auth.test" and call.args.get("channel") != PROBE_CHANNEL]


@dataclass
class Bot:
    fake: FakeSlack
    url: str
    settings: Settings

    def post(self, body: str, headers: dict | None = None, secret: str = SECRET) -> tuple[int, str]:
        request = urllib.request.Request(self.url, data=body.encode(), method="POST",
                                         headers={**signed_headers(secret, body), **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def event(self, event: dict, event_id: str | None = None, headers: dict | None = None) -> int:
        status, _ = self.post(event_body(event, event_id=event_id), headers)
        return status

    def mention(self, text: str, channel: str = "C1", ts: str = "1700000100.000100",
                user: str = "U1", thread_ts: str | None = None) -> dict:
        """Seed the message in the fake's history and deliver its app_mention event."""
        self.fake.add_message(channel, ts, f"<@UBOT> {text}", user=user, thread_ts=thread_ts)
        event = {"type": "app_mention", "channel": channel, "user": user, "ts": ts, "event_ts": ts,
                 "text": f"<@UBOT> {text}", **({"thread_ts": thread_ts} if thread_ts else {})}
        assert self.event(event) == 200
        return event

    def say(self, text: str, channel: str = "C1", ts: str = "1700000200.000100", user: str = "U1",
            thread_ts: str | None = None, channel_type: str = "channel", **extra) -> dict:
        """Seed a plain message and deliver its `message` event."""
        self.fake.add_message(channel, ts, text, user=user, thread_ts=thread_ts)
        event = {"type": "message", "channel": channel, "channel_type": channel_type, "user": user,
                 "ts": ts, "event_ts": ts, "text": text, **({"thread_ts": thread_ts} if thread_ts else {}),
                 **extra}
        assert self.event(event) == 200
        return event

    def command(self, text: str, user_id: str = "U1", response: str = "cmd") -> dict:
        status, body = self.post(command_body(text=text, user_id=user_id,
                                              response_url=self.fake.response_url(response)))
        assert status == 200, body
        return json.loads(body) if body else {}

    def click(self, payload: dict) -> int:
        status, _ = self.post(action_body(payload))
        return status


@pytest.fixture
def fake():
    with FakeSlack() as slack:
        yield slack


@pytest.fixture
def start_bot(fake, tmp_path):
    """start_bot(engine, **settings) -> Bot, served until the test ends."""
    servers = []

    def start(engine: Engine, **overrides) -> Bot:
        settings = Settings(**{
            "slack_bot_token": "xoxb-test", "slack_signing_secret": SECRET, "slack_api_url": fake.url,
            "admin_user_ids": (ADMIN,), "feedback_path": tmp_path / "feedback.jsonl", **overrides})
        server = ServedHttp()
        server.endpoints.slack = events_handler(build_app(settings, engine), settings.slack_signing_secret, server.limits)
        servers.append(server)
        return Bot(fake, server.url(EVENTS_PATH), settings)

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def bot(start_bot, engine) -> Bot:
    return start_bot(engine)


@pytest.fixture
def own_engine(engine, corpus_copy, tmp_path) -> Engine:
    """An engine of its own over a writable corpus copy, for tests that reload. Its database
    starts as a copy of the session index, so the first refresh has nothing to embed."""
    db = tmp_path / "lancedb"
    shutil.copytree(Path(engine.settings.db), db)
    own = Engine(Settings(corpus=corpus_copy, db=str(db)))
    own.refresh()
    return own
