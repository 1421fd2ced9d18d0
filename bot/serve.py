"""`citebot serve`: every platform whose settings are present, in one process sharing one
Engine and one SharedState. Slack when SLACK_BOT_TOKEN is set; Teams when CITEBOT_TEAMS=1 or the
Agents SDK client id is set. Each platform's settings are checked before anything is indexed.
Several replicas may serve one index: each follows its `serving` tag every CITEBOT_POLL_SECONDS."""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Callable, Mapping

from rag_graph.config import Settings
from rag_graph.engine import Engine, check_sources
from rag_graph.errors import RefreshError

from bot import sources
from bot.access import Access
from bot.shared import SharedState
from bot.verified import folder_of

log = logging.getLogger(__name__)
NOTHING_TO_SERVE = ("nothing to serve: set SLACK_BOT_TOKEN for Slack, or CITEBOT_TEAMS=1 / "
                    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID for Microsoft Teams")


Runner = Callable[[object, SharedState], int]


def _platforms(settings: Settings, env: Mapping[str, str]) -> tuple[list[Runner], str | None]:
    """The platforms to serve, as functions of the engine, or the first setting problem."""
    runners = []
    if settings.slack_bot_token:
        from bot.slack import app as slack

        if problem := slack.missing(settings):
            return [], problem
        runners.append(lambda engine, shared: slack.run(settings, engine, shared))
    if settings.teams or settings.teams_client_id:
        from bot.teams import app as teams

        config = teams.sdk_config(env)
        if problem := teams.config_problem(config):
            return [], problem
        runners.append(lambda engine, shared: teams.run(settings, engine, config, shared))
    return runners, None if runners else NOTHING_TO_SERVE


def _engine(settings: Settings, shared: SharedState):
    engine = Engine(settings)
    try:
        # A first start with sources has nothing to serve until they have been read once.
        stats = shared.reload_lock.run(engine.refresh if engine.ready or not settings.sources_path
                                       else lambda: _first_sync(engine))
    except RefreshError as error:
        if not engine.ready:
            raise  # nothing to serve: the CLI prints the error and exits 2
        print(f"warning: {error}; serving the existing index", file=sys.stderr, flush=True)
    else:
        if stats is None:  # another replica is indexing: it publishes, we follow
            print("another replica is reloading; serving the published index", file=sys.stderr, flush=True)
        else:
            print(f"Indexed {stats.documents} documents, {stats.chunks} chunks "
                  f"({stats.embedded} embedded) from {settings.documents}", flush=True)
    engine.warm_up()
    return engine


def _first_sync(engine):
    report = engine.sync()
    if report.refresh_error:
        raise RefreshError(report.refresh_error)
    return report.refresh


def _follow_index(engine, seconds: float) -> None:
    """Serve what the index job or another replica's reload publishes, every `seconds`. An
    unreachable bucket leaves the version in hand serving; the next poll tries again."""
    failing = False
    while True:
        time.sleep(seconds)
        try:
            engine.follow_index()
        except Exception as error:
            if not failing:
                log.error("cannot read the index's serving tag (%s); the version in hand keeps serving", error)
            failing = True
        else:
            failing = False


def _keep_alive(run: Runner, engine, shared: SharedState) -> None:
    try:
        run(engine, shared)
    except Exception:
        log.exception("a platform stopped; the others keep serving")


def serve(settings: Settings, env: Mapping[str, str] | None = None) -> int:
    runners, problem = _platforms(settings, os.environ if env is None else env)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    Access.load(settings.access_path)  # a bad access file stops us before anything is indexed
    folder_of(settings)  # so does a verified-answers folder outside the corpus
    check_sources(settings)  # so does a bad sources file or a source's missing credentials
    shared = SharedState(settings.redis_url)
    engine = _engine(settings, shared)
    sources.start(engine, shared, settings)  # every CITEBOT_SYNC_MINUTES, counted from the last sync
    threading.Thread(target=_follow_index, args=(engine, settings.poll_seconds),
                     daemon=True, name="citebot-follow").start()
    # The last platform (Teams' aiohttp loop, when present) keeps the main thread and its signals.
    for run in runners[:-1]:
        threading.Thread(target=_keep_alive, args=(run, engine, shared), daemon=True, name="citebot-platform").start()
    return runners[-1](engine, shared)
