"""The one HTTP server (bot/web.py) on a free loopback port, its event loop on a thread of its
own, as `citebot serve` runs it; tests attach platforms to its `endpoints`."""
from __future__ import annotations

import asyncio
import threading

from bot.slack.app import EVENTS_PATH
from bot.teams.app import MESSAGES_PATH
from bot.web import Endpoints, HttpServer, Limits, build_app


class ServedHttp:
    def __init__(self, limits: Limits = Limits(), endpoints: Endpoints | None = None):
        self.limits, self.endpoints = limits, endpoints or Endpoints()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        app = build_app(self.endpoints, limits, EVENTS_PATH, MESSAGES_PATH)
        self.server = HttpServer(app, limits, self.endpoints)
        [self.port] = asyncio.run_coroutine_threadsafe(self.server.start("127.0.0.1", [0]), self.loop).result(10)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
