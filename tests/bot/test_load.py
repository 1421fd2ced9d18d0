"""Load: 200 signed events from 20 concurrent senders to the Bolt app in HTTP mode, against
FakeSlack, while an admin reload runs. Every question gets exactly one reply in its own thread,
none is lost or duplicated, and memory stays flat. Loopback only; bounded in count and time.

Run with `make test-load` (pytest -m load)."""
from __future__ import annotations

import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bot.slack.render import PLACEHOLDER  # noqa: E402
from bot_harness import ADMIN, fake, own_engine, start_bot  # noqa: E402,F401 (fixtures)

SENDERS = 20
PER_SENDER = 10
WARM_UP = 20
DEADLINE_S = 600
MAX_RSS_GROWTH_MB = 100
QUESTIONS = [
    "How many days per week can employees work remotely?",
    "How many vacation days do I get?",
    "Can contractors work remotely?",
    "Where is the bike room?",
    "How much is the home office stipend?",
    "What is the parental leave policy?",
    "Who do I call when I am on call and something breaks?",
    "Does the company offer a company car or lease scheme?",
    "How do I report a lost laptop?",
    "What does the Team plan cost per seat?",
]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _send(bot, channel: str, ts: str, question: str) -> float:
    sent = time.time()
    bot.mention(question, channel=channel, ts=ts)
    return sent


def _replies(fake, channel: str, ts: str) -> list[dict]:
    return [m for m in fake.thread(channel, ts) if m.get("bot_id") and m["ts"] != ts]


def _wait_all_answered(fake, threads: list[tuple[str, str]], deadline: float) -> None:
    while time.monotonic() < deadline:
        if all(any(m.get("text") != PLACEHOLDER for m in _replies(fake, c, t)) for c, t in threads):
            return
        time.sleep(0.25)
    missing = [t for t in threads if not any(m.get("text") != PLACEHOLDER for m in _replies(fake, *t))]
    raise AssertionError(f"{len(missing)} questions unanswered by the deadline, e.g. {missing[:3]}")


@pytest.mark.load
def test_200_events_from_20_senders_during_a_reload(start_bot, own_engine, corpus_copy, fake):
    started_at = time.monotonic()
    deadline = started_at + DEADLINE_S
    bot = start_bot(own_engine)
    assert bot.url.startswith("http://127.0.0.1:")

    # Warm-up: model, vocabulary and thread pools reach their working size before RSS is read.
    warm = [(f"CW{n % 4}", f"1700000000.{n:06d}") for n in range(WARM_UP)]
    with ThreadPoolExecutor(SENDERS) as pool:
        list(pool.map(lambda i: _send(bot, *warm[i], QUESTIONS[i % len(QUESTIONS)]), range(WARM_UP)))
    _wait_all_answered(fake, warm, deadline)
    rss_before = rss_mb()
    fake.clear_calls()

    # Something for the reload to embed.
    (corpus_copy / "handbook" / "sabbatical.md").write_text(
        "# Sabbatical\n\n## Eligibility\n\nAfter five years employees may take a paid sabbatical of four weeks.\n")
    events = [(f"C{sender:02d}", f"1700100000.{sender * 1000 + n:06d}", QUESTIONS[(sender + n) % len(QUESTIONS)])
              for sender in range(SENDERS) for n in range(PER_SENDER)]
    sent_at: dict[tuple[str, str], float] = {}
    lock = threading.Lock()

    def sender(index: int) -> None:
        for channel, ts, question in events[index * PER_SENDER:(index + 1) * PER_SENDER]:
            sent = _send(bot, channel, ts, question)
            with lock:
                sent_at[(channel, ts)] = sent

    load_started = time.time()
    with ThreadPoolExecutor(SENDERS + 1) as pool:
        futures = [pool.submit(sender, i) for i in range(SENDERS)]
        time.sleep(1.0)  # questions in flight, then the admin reloads
        bot.command("reload", user_id=ADMIN, response="reload")
        for future in futures:
            future.result(timeout=DEADLINE_S)
    threads = [(channel, ts) for channel, ts, _ in events]
    _wait_all_answered(fake, threads, deadline)
    [reloaded] = fake.wait_for("response_url", timeout=max(1, deadline - time.monotonic()),
                               predicate=lambda c: c.path == "/response/reload" and "Reloaded:" in c.args["text"])
    load_seconds = time.time() - load_started
    rss_after = rss_mb()

    # Exactly one reply per question, in its own thread; nothing posted anywhere else.
    posts = [c for c in fake.calls("chat.postMessage")]
    assert len(posts) == len(events), f"{len(posts)} replies posted for {len(events)} questions"
    assert {(c.args["channel"], c.args["thread_ts"]) for c in posts} == set(threads)
    # Each answer is one chat.postMessage after the thread status: no placeholder, no edit.
    answered = {(c.args["channel"], c.args["thread_ts"]): c for c in posts}
    latencies = []
    for channel, ts in threads:
        [reply] = _replies(fake, channel, ts)
        assert reply["text"] != PLACEHOLDER
        latencies.append(answered[(channel, ts)].time - sent_at[(channel, ts)])
    assert not fake.calls("chat.update")
    assert reloaded.time < max(c.time for c in posts), "the reload did not overlap the load"

    # The reload happened in the middle of it and its new document serves.
    assert own_engine.index.last_refresh.embedded >= 1
    assert own_engine.ask("How long is a sabbatical?")["status"] == "answered"

    growth = rss_after - rss_before
    quantiles = statistics.quantiles(latencies, n=20)
    print(f"\nload: {len(events)} events from {SENDERS} senders, {len(posts)} replies, "
          f"{len(events) / load_seconds:.1f} answered/s over {load_seconds:.1f} s; reply latency "
          f"p50 {statistics.median(latencies):.2f} s, p95 {quantiles[18]:.2f} s, max {max(latencies):.2f} s; "
          f"RSS {rss_before:.0f} -> {rss_after:.0f} MB ({growth:+.0f} MB)")
    assert growth < MAX_RSS_GROWTH_MB, f"memory grew by {growth:.0f} MB"
    assert time.monotonic() < deadline
