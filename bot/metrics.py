"""Prometheus metrics of `citebot serve` (the official prometheus-client), served at /metrics:
questions by platform and status, answer latency, reloads and their duration, the serving index
version, errors by kind. `Metered` is the Engine as one platform sees it: every question and
reload that passes through it is counted, so the platforms need not know about metrics."""
from __future__ import annotations

import time

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest

QUESTIONS = Counter("citebot_questions", "Questions answered, by platform and outcome", ["platform", "status"])
# Buckets around the answer times seen: ~0.1 s warm offline answers up to chat models' tens of seconds.
ANSWER_SECONDS = Histogram("citebot_answer_seconds", "Time to answer a question", ["platform"],
                           buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60))
RELOADS = Counter("citebot_reloads", "Index reloads, by outcome", ["outcome"])
RELOAD_SECONDS = Histogram("citebot_reload_seconds", "Time an index reload took",
                           buckets=(0.1, 0.5, 1, 5, 15, 60, 300, 1800))
INDEX_VERSION = Gauge("citebot_index_version", "The index version being served (0: none yet)")
ERRORS = Counter("citebot_errors", "Errors, by kind", ["kind"])


def error(kind: str) -> None:
    ERRORS.labels(kind).inc()


def follow_version(engine) -> None:
    """The gauge reads the engine's serving version at each scrape."""
    INDEX_VERSION.set_function(lambda: engine.index.version or 0)


def timed_reload(refresh):
    """Run `refresh()`, counting its outcome and duration; its result or error passes through."""
    started = time.perf_counter()
    try:
        result = refresh()
    except Exception:
        RELOADS.labels("failed").inc()
        error("reload_failed")
        raise
    finally:
        RELOAD_SECONDS.observe(time.perf_counter() - started)
    RELOADS.labels("ok").inc()
    return result


class Metered:
    """The engine seen by one platform; anything not counted here is the engine's own."""

    def __init__(self, engine, platform: str):
        self._engine, self._platform = engine, platform

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def _count(self, output: dict, started: float) -> None:
        ANSWER_SECONDS.labels(self._platform).observe(time.perf_counter() - started)
        QUESTIONS.labels(self._platform, output["status"]).inc()
        for kind in output.get("errors") or []:
            error(kind)

    def run(self, *args, **kwargs):
        started = time.perf_counter()
        state = self._engine.run(*args, **kwargs)
        self._count(state["final_output"], started)
        return state

    def ask(self, *args, **kwargs):
        return self.run(*args, **kwargs)["final_output"]

    def ask_cited(self, *args, **kwargs):
        started = time.perf_counter()
        output, sentences = self._engine.ask_cited(*args, **kwargs)
        self._count(output, started)
        return output, sentences

    def refresh(self):
        return timed_reload(self._engine.refresh)


async def handler(_: web.Request) -> web.Response:
    response = web.Response(body=generate_latest(REGISTRY))
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response
