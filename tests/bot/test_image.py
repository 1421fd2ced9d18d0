"""`make test-image`: the container image, started with the bundled corpus in Teams anonymous
mode, becomes ready and answers one question over HTTP, its reply delivered to a local stand-in
for the Bot Connector. Needs the image built (CITEBOT_IMAGE) and a container engine (CONTAINER,
e.g. `docker` or `podman`; CONTAINER_RUN_ARGS for extra `run` options). Loopback only: the
container shares the host's network and binds 127.0.0.1."""
from __future__ import annotations

import os
import shlex
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import pytest

from bot_harness import QUESTION
from fake_connector import FakeConnector
from rag_graph.config import Settings
from teams_harness import TeamsBot

pytestmark = pytest.mark.image


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def test_the_image_answers_a_question_over_http():
    image = os.environ.get("CITEBOT_IMAGE") or pytest.fail("CITEBOT_IMAGE is not set: run `make test-image`")
    engine = shlex.split(os.environ.get("CONTAINER", "docker"))
    port, name = _free_port(), f"citebot-test-{uuid.uuid4().hex[:8]}"
    connector = FakeConnector().__enter__()
    run = [*engine, "run", "-d", "--name", name, "--network", "host",
           *shlex.split(os.environ.get("CONTAINER_RUN_ARGS", "")),
           "-e", "CITEBOT_TEAMS=1", "-e", "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__ANONYMOUS_ALLOWED=true",
           "-e", f"TEAMS_PORT={port}",
           "-e", f"CITEBOT_TEAMS_SERVICE_URLS={connector.url}",  # replies go only to Teams' hosts and this fake
           image]
    subprocess.run(run, check=True, capture_output=True, text=True, timeout=120)
    try:
        deadline, seen = time.monotonic() + 900, set()
        while time.monotonic() < deadline:
            status = _status(f"http://127.0.0.1:{port}/readyz")
            seen.add(status)
            if status == 200:
                break
            running = subprocess.run([*engine, "inspect", "-f", "{{.State.Running}}", name],
                                     capture_output=True, text=True, timeout=60).stdout.strip()
            assert running == "true", subprocess.run([*engine, "logs", name], capture_output=True, text=True).stdout
            time.sleep(2)
        assert 200 in seen, subprocess.run([*engine, "logs", name], capture_output=True, text=True).stdout
        TeamsBot(connector, f"http://127.0.0.1:{port}/api/messages", Settings()).say(QUESTION)
        [reply] = connector.wait_for(timeout=120)
        assert "3 days a week" in reply.text
        user = subprocess.run([*engine, "exec", name, "id", "-u"], capture_output=True, text=True, timeout=60)
        assert user.stdout.strip() not in ("", "0")  # not root
    finally:
        subprocess.run([*engine, "rm", "-f", name], capture_output=True, timeout=120)
        connector.__exit__(None, None, None)
