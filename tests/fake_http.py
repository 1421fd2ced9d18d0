"""The parts every local vendor fake shares: a real HTTP server on a loopback port in a thread,
routing by method and path pattern, Basic or Bearer auth checked, scripted throttling (429 with
Retry-After) and a log of the requests answered."""
from __future__ import annotations

import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def offset_of(value: str | None) -> int:
    return int(base64.urlsafe_b64decode(value.encode()).decode().split(":")[1]) if value else 0


class FakeServer:
    def __init__(self):
        self.routes: list[tuple[str, re.Pattern, callable]] = []
        self.log: list[tuple[str, str, int]] = []  # (method, path with query, status)
        self.throttle: dict[str, list[int]] = {}  # path prefix -> Retry-After seconds, one per coming request
        self.lock = threading.RLock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def route(self, method: str, pattern: str, handler) -> None:
        self.routes.append((method, re.compile(pattern + r"$"), handler))

    def authorized(self, headers) -> bool:  # each fake checks its own scheme
        return True

    def throttled(self, prefix: str, *retry_after: int) -> None:
        """The next requests under `prefix` answer 429 with these Retry-After values."""
        self.throttle.setdefault(prefix, []).extend(retry_after)

    def calls(self, fragment: str) -> list[tuple[str, str, int]]:
        return [entry for entry in self.log if fragment in entry[1]]

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status: int, body=None, headers: dict | None = None):
                fake.log.append((self.command, self.path, status))
                data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in (headers or {"Content-Type": "application/json"}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _serve(self):
                parts = urlsplit(self.path)
                with fake.lock:
                    for prefix, waits in fake.throttle.items():
                        if parts.path.startswith(prefix) and waits:
                            wait = waits.pop(0)
                            return self._reply(429, {"message": "Rate limit exceeded"}, {"Retry-After": str(wait),
                                                                                        "Content-Type": "application/json"})
                if not fake.authorized(self.headers):
                    return self._reply(401, {"message": "Unauthorized"})
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                for method, pattern, handler in fake.routes:
                    match = pattern.match(parts.path)
                    if method == self.command and match:
                        with fake.lock:
                            result = handler(query=query, body=body, headers=self.headers, **match.groupdict())
                        status, payload, *extra = result if isinstance(result, tuple) else (200, result)
                        return self._reply(status, payload, extra[0] if extra else None)
                return self._reply(404, {"message": f"no route for {self.command} {parts.path}"})

            do_GET = do_POST = _serve

        return Handler
