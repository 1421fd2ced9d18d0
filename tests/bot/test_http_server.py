"""The one HTTP server of `citebot serve`, run as a real process: health and readiness during the
first build, Prometheus metrics, and what an unauthenticated client can do to it (a huge body,
hundreds of half-open connections). Loopback only; every loop is bounded in count and time."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from bot_harness import QUESTION, SECRET, Bot, mrkdwn_of
from fake_slack import FakeSlack, signed_headers
from rag_graph.config import Settings

ROOT = Path(__file__).resolve().parents[2]
READ_TIMEOUT = 3  # CITEBOT_READ_TIMEOUT of the served process
MiB = 1 << 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return 0, ""


class Served:
    """`citebot serve` for Slack over HTTP, its first index build still to come."""

    def __init__(self, fake: FakeSlack, corpus: Path, workdir: Path):
        self.port = _free_port()
        env = {**os.environ, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET, "SLACK_APP_TOKEN": "",
               "SLACK_API_URL": fake.url, "PORT": str(self.port), "CITEBOT_BIND": "127.0.0.1",
               "CITEBOT_READ_TIMEOUT": str(READ_TIMEOUT), "CITEBOT_CORPUS": str(corpus),
               "CITEBOT_DB": str(workdir / "db"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
        self.log = workdir / "serve.log"
        self.process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, cwd=workdir,
                                        stdout=self.log.open("w"), stderr=subprocess.STDOUT)
        self.ps = psutil.Process(self.process.pid)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture(scope="module")
def fake_slack():
    with FakeSlack() as slack:
        yield slack


@pytest.fixture(scope="module")
def served(fake_slack, tmp_path_factory):
    """The process, and the /readyz answers seen while it built its first index."""
    workdir = tmp_path_factory.mktemp("serve")
    import shutil

    from conftest import BUNDLED_CORPUS

    shutil.copytree(BUNDLED_CORPUS, workdir / "corpus")
    server = Served(fake_slack, workdir / "corpus", workdir)
    seen = []
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            assert server.process.poll() is None, server.log.read_text()
            health, ready = _get(server.url("/healthz"))[0], _get(server.url("/readyz"))
            if health:
                seen.append((health, ready[0], ready[1]))
            if ready[0] == 200:
                break
            time.sleep(0.2)
        yield server, seen
    finally:
        server.stop()


def test_healthz_at_once_readyz_503_during_the_first_build_then_200(served):
    server, seen = served
    assert seen and seen[-1][:2] == (200, 200), server.log.read_text()
    building = [s for s in seen if s[1] == 503]
    assert building, "the server answered only once the index was built"
    assert all(health == 200 for health, _, _ in seen)  # alive all along
    assert "index is being built" in building[0][2]
    # The platform's route says it is not ready rather than hang or 404.
    assert "Indexed 20 documents" in server.log.read_text()


def test_metrics_count_questions_reloads_and_the_serving_version(served, fake_slack):
    server, _ = served
    Bot(fake_slack, server.url("/slack/events"), Settings()).mention(QUESTION)
    [answer] = fake_slack.wait_for("chat.postMessage", timeout=60)
    assert "3 days a week" in mrkdwn_of(answer)
    status, text = _get(server.url("/metrics"))
    assert status == 200
    metrics = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("citebot_")}
    assert metrics['citebot_questions_total{platform="slack",status="answered"}'] == 1
    assert metrics['citebot_answer_seconds_count{platform="slack"}'] == 1
    assert metrics['citebot_reloads_total{outcome="ok"}'] == 1  # the first build
    assert metrics["citebot_reload_seconds_count"] == 1
    assert metrics["citebot_index_version"] >= 1


def _flood(port: int, headers: str, total: int, chunked: bool) -> tuple[int, int]:
    """Send `headers` and up to `total` body bytes as fast as the server takes them; returns
    (the response's status, bytes the server took before it answered or closed)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(headers.encode())
    chunk = b"x" * (256 * 1024)
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" if chunked else chunk
    sent = 0
    try:
        while sent < total:
            sock.sendall(frame)
            sent += len(chunk)
    except OSError:
        pass  # the server closed: what it wanted to say is in the buffer
    try:
        reply = sock.recv(4096).decode(errors="replace")
    except OSError:
        reply = ""
    sock.close()
    return (int(reply.split()[1]) if reply.startswith("HTTP/") else 0), sent


def _peak_growth(process: psutil.Process, action) -> tuple[object, float]:
    """`action()`'s result and the process's peak resident growth while it ran, in MiB."""
    before = process.memory_info().rss
    peak, done = [before], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = action()
    finally:
        done.set()
        sampler.join()
    return result, (peak[0] - before) / MiB


@pytest.mark.parametrize("signed_like,chunked,expected", [
    (False, False, 401),  # no signing headers: refused before a byte of the body is read
    (True, False, 413),  # signing headers that look right, a declared length above the limit
    (True, True, 413),  # no length declared: reading stops at the limit
])
def test_a_300_mb_body_is_refused_without_the_process_growing(served, signed_like, chunked, expected):
    server, _ = served
    total = 300 * MiB
    head = ["POST /slack/events HTTP/1.1", f"Host: 127.0.0.1:{server.port}", "Content-Type: application/json"]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    if signed_like:
        head += [f"X-Slack-Request-Timestamp: {int(time.time())}", "X-Slack-Signature: v0=" + "0" * 64]
    (status, sent), growth = _peak_growth(server.ps, lambda: _flood(server.port, "\r\n".join(head) + "\r\n\r\n",
                                                                    total, chunked))
    assert status == expected
    assert growth <= 20, f"grew {growth:.0f} MiB while {sent / MiB:.0f} MiB were sent"


def test_400_half_open_connections_neither_block_a_signed_request_nor_outlive_the_timeout(served):
    server, _ = served
    threads_before = server.ps.num_threads()
    held = []
    try:
        for _ in range(400):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sock.sendall(b"POST /slack/ev")  # half a request line, then nothing
            held.append(sock)
        body = json.dumps({"type": "url_verification", "challenge": "still-answering", "token": "t"})
        started = time.monotonic()
        request = urllib.request.Request(server.url("/slack/events"), data=body.encode(), method="POST",
                                         headers=signed_headers(SECRET, body))
        with urllib.request.urlopen(request, timeout=10) as response:
            assert "still-answering" in response.read().decode()
        assert time.monotonic() - started < 5
        assert server.ps.num_threads() <= threads_before + 2  # no thread per connection
        # Every held connection is closed by the server once the header timeout has passed.
        deadline = time.monotonic() + READ_TIMEOUT + 10
        open_ = list(held)
        while open_ and time.monotonic() < deadline:
            still = []
            for sock in open_:
                sock.settimeout(0.01)
                try:
                    if sock.recv(1) != b"":
                        still.append(sock)
                except socket.timeout:
                    still.append(sock)
                except OSError:
                    pass  # reset: closed
            open_ = still
            time.sleep(0.2)
        assert not open_, f"{len(open_)} of 400 half-open connections outlived the {READ_TIMEOUT} s timeout"
    finally:
        for sock in held:
            sock.close()
