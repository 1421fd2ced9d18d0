"""`citebot serve` in Socket Mode, end to end: the real process opens a connection with the app
token (apps.connections.open on the fake Web API), connects to a local WebSocket server standing
in for Slack's, acks the event envelope it is sent and answers in the thread."""
from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from websockets.sync.server import serve as websocket_server

from bot_harness import QUESTION, mrkdwn_of
from fake_slack import FakeSlack, event_body

ROOT = Path(__file__).resolve().parents[2]
APP_TOKEN = "xapp-1-A111-222-test"
MENTION_TS = "1700000100.000100"


class SocketModeSlack(FakeSlack):
    """The fake Web API, plus the call that hands a Socket Mode client its WebSocket URL."""

    websocket_url = ""

    def _api_apps_connections_open(self, args: dict) -> dict:
        return {"ok": True, "url": self.websocket_url}


@pytest.fixture
def slack():
    """(fake Web API, messages the client sent over the socket); the socket sends one mention."""
    envelope = {"envelope_id": "env-1", "type": "events_api", "accepts_response_payload": False,
                "retry_attempt": 0, "retry_reason": "",
                "payload": json.loads(event_body({"type": "app_mention", "channel": "C1", "user": "U1",
                                                  "ts": MENTION_TS, "event_ts": MENTION_TS,
                                                  "text": f"<@UBOT> {QUESTION}"}, event_id="EvSOCKET"))}
    received: queue.Queue = queue.Queue()

    def connection(websocket):
        websocket.send(json.dumps({"type": "hello", "num_connections": 1}))
        websocket.send(json.dumps(envelope))
        for message in websocket:
            received.put(json.loads(message))

    with SocketModeSlack() as fake, websocket_server(connection, "127.0.0.1", 0) as server:
        fake.websocket_url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/link"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        fake.add_message("C1", MENTION_TS, f"<@UBOT> {QUESTION}", user="U1")
        yield fake, received
        server.shutdown()


def test_socket_mode_connects_with_the_app_token_acks_and_answers(slack, engine, corpus_copy, tmp_path):
    fake, received = slack
    shutil.copytree(engine.settings.db, tmp_path / "db")  # start-up refresh then embeds nothing
    env = {**os.environ, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "", "SLACK_APP_TOKEN": APP_TOKEN,
           "SLACK_API_URL": fake.url, "CITEBOT_CORPUS": str(corpus_copy), "CITEBOT_DB": str(tmp_path / "db"),
           "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}  # this checkout's code, whatever is installed
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, cwd=tmp_path,
                               stdout=(tmp_path / "serve.log").open("w"), stderr=subprocess.STDOUT)
    try:
        [opened] = fake.wait_for("apps.connections.open", timeout=180)
        assert opened.headers["authorization"] == f"Bearer {APP_TOKEN}"  # the app token, not the bot token
        assert received.get(timeout=60) == {"envelope_id": "env-1"}  # acked over the socket
        [answer] = fake.wait_for("chat.postMessage", timeout=60)  # the thread status showed meanwhile
        assert answer.args["channel"] == "C1" and "3 days a week" in mrkdwn_of(answer)
        assert answer.args["thread_ts"] == MENTION_TS  # in the thread where it was asked
    finally:
        process.terminate()
        process.wait(timeout=10)
