"""The acceptance test of issue 15: two `citebot serve` processes (HTTP mode) on one index in an
S3 bucket (moto's server) and one Redis, driven by signed events from the fake Slack.

- 100 events spread over both replicas, a quarter of them retried by "Slack" on the other
  replica (X-Slack-Retry-Num): every question is answered exactly once;
- an admin reload with a new document on replica A (while B's admin is told a reload is already
  running): B serves the new version within one poll interval;
- kill -9 of replica A: B answers what it receives, including Slack's retries of what A never got.

`pytest -s tests/bot/test_replicas.py` prints the counts and rates (docs/scaling.md quotes them)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import lancedb
import redis

from bot_harness import ADMIN, SECRET, Bot, fake  # noqa: F401 (fixture)
from fake_slack import event_body
from rag_graph.config import Settings
from servers import BUCKET, S3_KEYS, free_port

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 100
RETRY_EVERY = 4  # every 4th event is delivered again, to the other replica
AFTER_KILL = 20
POLL_SECONDS = 1.0
QUESTIONS = [
    "How many days per week can employees work remotely?",
    "How many vacation days do I get?",
    "How much is the home office stipend?",
    "What is the parental leave policy?",
    "Can contractors work remotely?",
]
SABBATICAL = "# Sabbatical\n\n## Eligibility\n\nAfter five years employees may take a paid sabbatical of four weeks.\n"


def upload(folder: Path, s3, prefix: str) -> None:
    """The session's local index, copied object by object into the bucket (a Lance dataset's
    files name each other by relative path), so no replica has anything to embed at start."""
    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name=S3_KEYS["AWS_REGION"],
                          aws_access_key_id=S3_KEYS["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=S3_KEYS["AWS_SECRET_ACCESS_KEY"])
    for path in folder.rglob("*"):
        if path.is_file():
            client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(folder).as_posix()}")


class Replica:
    def __init__(self, name: str, env: dict, workdir: Path):
        self.name, self.port = name, free_port()
        self.log = workdir / f"replica-{name}.log"
        self.process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], cwd=workdir,
                                        env={**env, "PORT": str(self.port)},
                                        stdout=self.log.open("w"), stderr=subprocess.STDOUT)

    def wait_listening(self, deadline: float) -> None:
        while "listening on" not in self.log.read_text():
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, f"replica {self.name} did not start:\n{self.log.read_text()}"
            time.sleep(0.1)

    def bot(self, fake) -> Bot:
        return Bot(fake, f"http://127.0.0.1:{self.port}/slack/events", Settings())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def mention(fake, n: int) -> tuple[str, dict]:
    """A new question's body (its event_id fixed, for a retry) and its thread (channel, ts)."""
    channel, ts = f"C{n % 7}", f"1700200000.{n:06d}"
    text = f"<@UBOT> {QUESTIONS[n % len(QUESTIONS)]}"
    fake.add_message(channel, ts, text, user="U1")
    event = {"type": "app_mention", "channel": channel, "user": "U1", "ts": ts, "event_ts": ts, "text": text}
    return event_body(event, event_id=f"Ev{n:04d}{uuid.uuid4().hex[:6].upper()}"), {"channel": channel, "ts": ts}


def answers_in(fake, thread: dict) -> list:
    return [c for c in fake.calls("chat.postMessage")
            if c.args.get("channel") == thread["channel"] and c.args.get("thread_ts") == thread["ts"]]


def wait_answered(fake, threads: list[dict], deadline: float) -> None:
    while time.monotonic() < deadline:
        if all(answers_in(fake, t) for t in threads):
            return
        time.sleep(0.2)
    missing = [t for t in threads if not answers_in(fake, t)]
    raise AssertionError(f"{len(missing)} of {len(threads)} questions unanswered, e.g. {missing[:3]}")


def serving_version(bot: Bot) -> int:
    return int(re.search(r"index version (\d+)", bot.command("status")["text"]).group(1))


def test_two_replicas_on_one_bucket_and_one_redis(fake, engine, corpus_copy, s3, redis_server, tmp_path):  # noqa: F811
    started = time.monotonic()
    deadline = started + 180
    prefix = f"replicas-{uuid.uuid4().hex[:8]}/lancedb"
    upload(Path(engine.settings.db), s3, prefix)
    redis.Redis.from_url(redis_server.url).flushdb()
    env = {**os.environ, **s3.env, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
           "SLACK_APP_TOKEN": "", "SLACK_API_URL": fake.url, "CITEBOT_CORPUS": str(corpus_copy),
           "CITEBOT_DB": f"s3://{BUCKET}/{prefix}", "CITEBOT_REDIS_URL": redis_server.url,
           "CITEBOT_POLL_SECONDS": str(POLL_SECONDS), "ADMIN_USER_IDS": ADMIN,
           "CITEBOT_FEEDBACK": str(tmp_path / "feedback.jsonl"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(ROOT)}  # this checkout's code, whatever the venv has installed
    replicas = [Replica("A", env, tmp_path), Replica("B", env, tmp_path)]
    try:
        for replica in replicas:
            replica.wait_listening(deadline)
        a, b = (replica.bot(fake) for replica in replicas)
        ready = time.monotonic()

        # 1. 100 events over both replicas; every 4th also delivered to the other one, as Slack's retry.
        sent = [mention(fake, n) for n in range(EVENTS)]

        def deliver(n: int) -> None:
            body, _ = sent[n]
            first, other = (a, b) if n % 2 == 0 else (b, a)
            assert first.post(body)[0] == 200
            if n % RETRY_EVERY == 0:
                assert other.post(body, {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})[0] == 200

        load_started = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(deliver, range(EVENTS)))
        threads = [thread for _, thread in sent]
        wait_answered(fake, threads, deadline)
        load_seconds = time.monotonic() - load_started
        assert all(len(answers_in(fake, t)) == 1 for t in threads), "a question was answered twice"
        replies = len(fake.calls("chat.postMessage"))
        assert replies == EVENTS

        # 2. A reload with a changed document on A; B's admin, at the same moment, is told one runs.
        (corpus_copy / "handbook" / "sabbatical.md").write_text(SABBATICAL)
        before = serving_version(b)
        options = Settings(**s3.env).storage_options
        tags = lancedb.connect(env["CITEBOT_DB"], storage_options=options).open_table("chunks").tags
        a.command("reload", user_id=ADMIN, response="reload-a")
        b.command("reload", user_id=ADMIN, response="reload-b")
        while tags.get_version("serving") == before:  # the moment A publishes
            assert time.monotonic() < deadline, "the reload never published"
            time.sleep(0.02)
        moved = time.monotonic()
        published = tags.get_version("serving")
        while serving_version(b) != published:
            assert time.monotonic() - moved < 10 * POLL_SECONDS, "replica B did not follow the serving tag"
            time.sleep(0.05)
        pickup = time.monotonic() - moved
        assert pickup <= POLL_SECONDS + 0.5, f"B took {pickup:.2f} s to serve the new version"
        [busy] = fake.wait_for("response_url", timeout=60, predicate=lambda c: c.path == "/response/reload-b")
        assert "already running" in busy.args["text"]
        [done] = fake.wait_for("response_url", timeout=120,
                               predicate=lambda c: c.path == "/response/reload-a" and "Reloaded:" in c.args["text"])
        assert f"index version {published}" in done.args["text"]
        body, sabbatical = mention(fake, 10_000)
        fake.add_message(sabbatical["channel"], sabbatical["ts"], "<@UBOT> How long is a paid sabbatical?", user="U1")
        body = body.replace(QUESTIONS[10_000 % len(QUESTIONS)], "How long is a paid sabbatical?")
        assert b.post(body)[0] == 200
        wait_answered(fake, [sabbatical], deadline)
        assert "four weeks" in str(answers_in(fake, sabbatical)[0].args)

        # 3. kill -9 of A. Slack's deliveries to A fail, and its retries reach B; B answers them all.
        replicas[0].process.send_signal(signal.SIGKILL)
        replicas[0].process.wait(10)
        after = [mention(fake, 20_000 + n) for n in range(AFTER_KILL)]
        refused = 0
        for n, (body, _) in enumerate(after):
            if n % 2 == 0:
                try:
                    a.post(body)
                except (urllib.error.URLError, ConnectionError):
                    refused += 1
                assert b.post(body, {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_error"})[0] == 200
            else:
                assert b.post(body)[0] == 200
        wait_answered(fake, [t for _, t in after], deadline)
        assert refused == AFTER_KILL // 2
        assert all(len(answers_in(fake, t)) == 1 for _, t in after)
        print(f"\nreplicas: {EVENTS} events + {EVENTS // RETRY_EVERY} retries on the other replica -> "
              f"{replies} replies, {EVENTS // RETRY_EVERY} duplicates suppressed, "
              f"{EVENTS / load_seconds:.1f} events/s over {load_seconds:.1f} s; new tag served by B "
              f"{pickup:.2f} s after A published it (poll {POLL_SECONDS:.0f} s); after kill -9 of A: "
              f"{AFTER_KILL} events ({refused} refused by A and retried on B) answered once each; "
              f"start-up {ready - started:.1f} s, whole test {time.monotonic() - started:.1f} s")
    finally:
        for replica in replicas:
            replica.stop()
