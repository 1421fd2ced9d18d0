"""`citebot serve`: every platform whose settings are present, in one process sharing one
Engine and one SharedState. Slack when SLACK_BOT_TOKEN is set; Teams when CITEBOT_TEAMS=1 or the
Agents SDK client id is set. Each platform's settings are checked before anything is indexed.
One HTTP server (bot/web.py) answers /healthz at once, and the platforms' routes once the index is
built (/readyz says which). Several replicas may serve one index: each follows its `serving` tag every CITEBOT_POLL_SECONDS."""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping

from rag_graph.config import Settings
from rag_graph.engine import Engine, check_sources
from rag_graph.errors import RefreshError

from bot import heap, metrics, sources
from bot.access import Access
from bot.losses import silent_losses
from bot.metrics import Metered
from bot.shared import SharedState
from bot.verified import folder_of
from bot.web import (HEALTH_PATH, METRICS_PATH, READY_PATH, Endpoints, HttpServer, Limits, build_app,
                     raise_open_files_limit)

log = logging.getLogger(__name__)
NOTHING_TO_SERVE = ("nothing to serve: set SLACK_BOT_TOKEN for Slack, or CITEBOT_TEAMS=1 / "
                    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID for Microsoft Teams")


@dataclass(frozen=True)
class Platform:
    name: str  # its label in the metrics
    port: int | None  # the HTTP port it is reached on; None: it reaches out (Socket Mode)
    path: str | None
    start: Callable[[object, SharedState, Endpoints, Limits], None]  # (engine, shared, endpoints, limits)


def _platforms(settings: Settings, env: Mapping[str, str]) -> tuple[list[Platform], dict | None, str | None]:
    """The platforms to serve, the Teams SDK configuration (None without Teams), or the first
    setting problem."""
    platforms, teams_config = [], None
    if settings.slack_bot_token:
        from bot.slack import app as slack

        if problem := slack.missing(settings):
            return [], None, problem
        http = not settings.slack_app_token
        platforms.append(Platform("slack", settings.port if http else None, slack.EVENTS_PATH if http else None,
                                  lambda engine, shared, endpoints, limits: slack.start(settings, engine, shared,
                                                                                        endpoints, limits)))
    if settings.teams or settings.teams_client_id:
        from bot.teams import app as teams

        teams_config = teams.sdk_config(env)
        if problem := teams.config_problem(teams_config):
            return [], None, problem

        def start_teams(engine, shared, endpoints, limits) -> None:
            endpoints.teams = teams.messages_handler(settings, engine, teams_config, shared)

        platforms.append(Platform("teams", settings.teams_port, teams.MESSAGES_PATH, start_teams))
    return platforms, teams_config, None if platforms else NOTHING_TO_SERVE


def _engine(settings: Settings, shared: SharedState):
    engine = Engine(settings)
    metrics.follow_version(engine)
    # A first start with sources has nothing to serve until they have been read once.
    refresh = engine.refresh if engine.ready or not settings.sources_path else lambda: _first_sync(engine)
    try:
        stats = shared.reload_lock.run(lambda: metrics.timed_reload(refresh))
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
            for line in silent_losses(stats.as_dict(), settings):
                log.warning(line)
    engine.warm_up()
    heap.give_back()  # what checking the index and loading the model freed
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
                metrics.error("index_unreachable")
                log.error("cannot read the index's serving tag (%s); the version in hand keeps serving", error)
            failing = True
        else:
            failing = False


def _start(settings: Settings, shared: SharedState, platforms: list[Platform], endpoints: Endpoints,
           limits: Limits, urls: dict[str, str]) -> None:
    """Build the index, then attach every platform; the server answers /healthz meanwhile."""
    engine = _engine(settings, shared)
    sources.start(engine, shared, settings)  # every CITEBOT_SYNC_MINUTES, counted from the last sync
    for platform in platforms:
        platform.start(Metered(engine, platform.name), shared, endpoints, limits)
    endpoints.ready = True
    for platform in platforms:
        if platform.name in urls:
            # One write, newline included: two platforms' lines must not run into one.
            print(f"Citebot is listening{' for Teams' if platform.name == 'teams' else ''} on "
                  f"{urls[platform.name]}\n", end="", flush=True)
        else:
            print("Citebot is connected to Slack over Socket Mode", flush=True)
    threading.Thread(target=_follow_index, args=(engine, settings.poll_seconds),
                     daemon=True, name="citebot-follow").start()


async def _run(settings: Settings, shared: SharedState, platforms: list[Platform], server: HttpServer,
               host: str) -> None:
    wanted = list(dict.fromkeys(p.port for p in platforms if p.port is not None)) or [settings.port]
    bound = dict(zip(wanted, await server.start(host, wanted)))
    urls = {p.name: f"http://{host}:{bound[p.port]}{p.path}" for p in platforms if p.port is not None}
    first = bound[wanted[0]]
    print(f"Citebot health checks at http://{host}:{first}{HEALTH_PATH}, metrics at {METRICS_PATH}; "
          f"{READY_PATH} answers 503 until the index is built", flush=True)
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stopped.set)
    started: asyncio.Future = loop.create_future()

    def start() -> None:
        try:
            _start(settings, shared, platforms, server.endpoints, server.limits, urls)
        except BaseException as error:  # handed to the loop: the CLI reports it
            loop.call_soon_threadsafe(lambda failed=error: started.done() or started.set_exception(failed))
        else:
            loop.call_soon_threadsafe(lambda: started.done() or started.set_result(None))

    # A daemon thread: a stop during the first build must not wait for the build to end.
    threading.Thread(target=start, daemon=True, name="citebot-start").start()
    waiting = asyncio.ensure_future(stopped.wait())
    try:
        await asyncio.wait({started, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if started.done():
            started.result()  # a failed start raises here
            await waiting
    finally:
        waiting.cancel()
        await server.stop()


def serve(settings: Settings, env: Mapping[str, str] | None = None) -> int:
    platforms, teams_config, problem = _platforms(settings, os.environ if env is None else env)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    Access.load(settings.access_path)  # a bad access file stops us before anything is indexed
    heap.limit_arenas()  # before any thread starts
    folder_of(settings)  # so does a verified-answers folder outside the corpus
    check_sources(settings)  # so does a bad sources file or a source's missing credentials
    shared = SharedState(settings.redis_url)
    limits, endpoints = Limits.of(settings), Endpoints()
    from bot.slack.app import EVENTS_PATH
    from bot.teams import MESSAGES_PATH

    teams_auth = auth_config = None
    host = settings.bind or "0.0.0.0"
    if teams_config is not None:
        from bot.teams import app as teams

        teams_auth, auth_config = teams.authenticated, teams.auth_configuration(teams_config)
        if teams.anonymous(teams_config):
            # Unsigned Teams requests are for development: only this machine may send them,
            # unless the admin binds elsewhere on purpose.
            host = settings.bind or "127.0.0.1"
    app = build_app(endpoints, limits, EVENTS_PATH, MESSAGES_PATH, teams_auth, auth_config)
    raise_open_files_limit(limits.max_connections)
    asyncio.run(_run(settings, shared, platforms, HttpServer(app, limits, endpoints), host))
    # Stopped by a signal, connections closed, every record already written: the native
    # libraries' teardown (ONNX Runtime, LanceDB, torch) takes 10 s and more on a busy machine,
    # longer than `docker stop` waits before it kills.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

