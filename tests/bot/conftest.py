"""The real Bolt app, served over HTTP on a free loopback port, talking to FakeSlack."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from bot.app import EVENTS_PATH, build_app, make_http_server
from bot_harness import ADMIN, SECRET, Bot
from fake_slack import FakeSlack
from rag_graph.config import Settings
from rag_graph.engine import Engine


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
        server = make_http_server(build_app(settings, engine), host="127.0.0.1", port=0)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return Bot(fake, f"http://127.0.0.1:{server.server_port}{EVENTS_PATH}", settings)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


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
