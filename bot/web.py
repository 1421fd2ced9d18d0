"""The one HTTP server of `citebot serve` (aiohttp): Slack's /slack/events, Teams' /api/messages,
/healthz, /readyz and /metrics, the same routes on every port served.

Limits against clients that flood or hold it (each one a setting, see `Limits`):
- a body larger than CITEBOT_MAX_BODY_BYTES is refused with 413 before it is read, and a body
  without a length is cut off there too;
- a request's headers must arrive within CITEBOT_READ_TIMEOUT seconds (aiohttp's keep-alive timer
  closes a connection that has not completed a request in that time), and its body within as
  long again (408);
- at CITEBOT_MAX_CONNECTIONS open connections, the oldest one with no request being handled is
  closed to make room; when every one is busy, the new one gets 503.
The platforms are attached once the index is built: until then their routes answer 503 and
/readyz says why."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from aiohttp import web

from bot import metrics

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
HEALTH_PATH, READY_PATH, METRICS_PATH = "/healthz", "/readyz", "/metrics"
_BODILESS = ("GET", "HEAD", "OPTIONS")


@dataclass(frozen=True)
class Limits:
    max_body: int = 1 << 20
    read_timeout: float = 10.0
    max_connections: int = 1000

    @classmethod
    def of(cls, settings) -> "Limits":
        return cls(settings.max_body_bytes, settings.read_timeout, settings.max_connections)


@dataclass
class Endpoints:
    """What the routes hand requests to; filled in as the platforms start."""
    slack: Handler | None = None
    teams: Handler | None = None
    ready: bool = False
    state: str = "starting: the index is being built"
    busy: set = field(default_factory=set)  # transports with a request being handled


async def read_body(request: web.Request, limits: Limits) -> bytes:
    """The whole body, or 413 (declared or found too large) / 408 (not sent in time)."""
    if (request.content_length or 0) > limits.max_body:
        metrics.error("body_too_large")
        raise web.HTTPRequestEntityTooLarge(max_size=limits.max_body, actual_size=request.content_length)
    try:
        # bounded by client_max_size: 413 past it, never buffered whole
        return await asyncio.wait_for(request.read(), limits.read_timeout)
    except asyncio.TimeoutError:
        metrics.error("body_timeout")
        raise web.HTTPRequestTimeout(text="the request body did not arrive in time") from None
    except web.HTTPRequestEntityTooLarge:
        metrics.error("body_too_large")
        raise


def _platform(name: str, endpoints: Endpoints) -> Handler:
    async def route(request: web.Request) -> web.StreamResponse:
        handler = getattr(endpoints, name)
        if handler is None:
            return web.Response(status=503, text=f"{endpoints.state}\n", headers={"Retry-After": "10"})
        return await handler(request)

    return route


def build_app(endpoints: Endpoints, limits: Limits, slack_path: str, teams_path: str,
              teams_auth: Callable[[Handler], Handler] | None = None, teams_config=None) -> web.Application:
    """`teams_auth` wraps the Teams route (the Agents SDK's JWT check, which reads only headers);
    `teams_config` is the SDK's `agent_configuration` that check reads from the app."""

    @web.middleware
    async def bounded(request: web.Request, handler: Handler) -> web.StreamResponse:
        endpoints.busy.add(request.transport)
        try:
            # Slack's route reads its own body, after its signing headers are checked.
            if request.method not in _BODILESS and request.path != slack_path:
                await read_body(request, limits)  # cached: the handler's read() returns it
            return await handler(request)
        finally:
            endpoints.busy.discard(request.transport)

    app = web.Application(middlewares=[bounded], client_max_size=limits.max_body)
    app.router.add_get(HEALTH_PATH, lambda _: web.Response(text="ok\n"))
    app.router.add_get(READY_PATH, lambda _: web.Response(status=200 if endpoints.ready else 503,
                                                         text=("ready" if endpoints.ready else endpoints.state) + "\n"))
    app.router.add_get(METRICS_PATH, metrics.handler)
    app.router.add_post(slack_path, _platform("slack", endpoints))
    teams = _platform("teams", endpoints)
    app.router.add_post(teams_path, teams_auth(teams) if teams_auth else teams)
    if teams_config is not None:
        app["agent_configuration"] = teams_config
    return app


class _Refuse(asyncio.Protocol):
    """A connection over the bound, when no open one is idle: 503 and close."""

    def connection_made(self, transport) -> None:
        metrics.error("connections_full")
        transport.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        transport.close()


class BoundedSite(web.TCPSite):
    """A TCP site that keeps at most `limits.max_connections` connections open."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, limits: Limits, endpoints: Endpoints):
        super().__init__(runner, host, port, backlog=1024)
        self.limits, self.endpoints = limits, endpoints

    def _protocol(self):
        server = self._runner.server
        open_ = server.connections  # oldest first
        if len(open_) >= self.limits.max_connections:
            idle = [handler for handler in open_ if handler.transport not in self.endpoints.busy]
            if not idle:
                return _Refuse()
            metrics.error("connection_evicted")
            idle[0].force_close()
        return server()

    async def start(self) -> None:
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._protocol, self._host, self._port,
                                                backlog=self._backlog, reuse_address=True)
        self._bound_port = self._server.sockets[0].getsockname()[1]


class HttpServer:
    """The app on `host` at each of `ports` (0: any free port), with the limits."""

    def __init__(self, app: web.Application, limits: Limits, endpoints: Endpoints):
        self.app, self.limits, self.endpoints = app, limits, endpoints
        # keepalive_timeout also runs from a connection's start until its first request is
        # complete (aiohttp closes it then if the request is still unfinished): the header timeout.
        self.runner = web.AppRunner(app, keepalive_timeout=limits.read_timeout, access_log=None,
                                    shutdown_timeout=5)
        self.ports: list[int] = []

    async def start(self, host: str, ports: list[int]) -> list[int]:
        await self.runner.setup()
        for port in ports:
            site = BoundedSite(self.runner, host, port, self.limits, self.endpoints)
            await site.start()
            self.ports.append(site.port)
        return self.ports

    async def stop(self) -> None:
        await self.runner.cleanup()


def raise_open_files_limit(wanted: int) -> None:
    """Every connection is a file: the soft limit (often 1024) must leave room for the bound."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(hard, max(soft, wanted + 256)) if hard != resource.RLIM_INFINITY else max(soft, wanted + 256)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
