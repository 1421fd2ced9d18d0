"""`citebot serve`: every platform whose settings are present, in one process sharing one
Engine. Slack when SLACK_BOT_TOKEN is set; Teams when CITEBOT_TEAMS=1 or the Agents SDK client
id is set. Each platform's settings are checked before anything is indexed."""
from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Callable, Mapping

from rag_graph.config import Settings
from rag_graph.engine import RefreshError

from .access import Access

log = logging.getLogger(__name__)
NOTHING_TO_SERVE = ("nothing to serve: set SLACK_BOT_TOKEN for Slack, or CITEBOT_TEAMS=1 / "
                    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID for Microsoft Teams")


def _platforms(settings: Settings, env: Mapping[str, str]) -> tuple[list[Callable[[object], int]], str | None]:
    """The platforms to serve, as functions of the engine, or the first setting problem."""
    runners = []
    if settings.slack_bot_token:
        from .slack import app as slack

        if problem := slack.missing(settings):
            return [], problem
        runners.append(lambda engine: slack.run(settings, engine))
    if settings.teams or settings.teams_client_id:
        from .teams import app as teams

        config = teams.sdk_config(env)
        if problem := teams.config_problem(config):
            return [], problem
        runners.append(lambda engine: teams.run(settings, engine, config))
    return runners, None if runners else NOTHING_TO_SERVE


def _engine(settings: Settings):
    from rag_graph.engine import Engine

    engine = Engine(settings)
    try:
        stats = engine.refresh()
        print(f"Indexed {stats.documents} documents, {stats.chunks} chunks "
              f"({stats.embedded} embedded) from {settings.corpus}", flush=True)
    except RefreshError as error:
        if not engine.ready:
            raise  # nothing to serve: the CLI prints the error and exits 2
        print(f"warning: {error}; serving the existing index", file=sys.stderr, flush=True)
    engine.warm_up()
    return engine


def _keep_alive(run: Callable[[object], int], engine) -> None:
    try:
        run(engine)
    except Exception:
        log.exception("a platform stopped; the others keep serving")


def serve(settings: Settings, env: Mapping[str, str] | None = None) -> int:
    runners, problem = _platforms(settings, os.environ if env is None else env)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    Access.load(settings.access_path)  # a bad access file stops us before anything is indexed
    engine = _engine(settings)
    # The last platform (Teams' aiohttp loop, when present) keeps the main thread and its signals.
    for run in runners[:-1]:
        threading.Thread(target=_keep_alive, args=(run, engine), daemon=True, name="citebot-platform").start()
    return runners[-1](engine)
