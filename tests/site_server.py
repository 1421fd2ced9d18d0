"""A real HTTP server on a loopback port serving a small website the tests edit as they go:
pages with ETag and Last-Modified (answering 304 to a matching conditional request), redirects,
robots.txt, a sitemap with lastmod, and a log of every request it answered."""
from __future__ import annotations

import hashlib
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Site:
    def __init__(self):
        self.pages: dict[str, tuple[str, str]] = {}  # path -> (content type, body)
        self.redirects: dict[str, str] = {}  # path -> Location
        self.modified: dict[str, float] = {}
        self.headers: dict[str, dict] = {}  # path -> extra response headers
        self.log: list[tuple[str, int]] = []  # (path, status)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def page(self, path: str, body: str, content_type: str = "text/html; charset=utf-8", when: float = 1.7e9, **headers):
        self.pages[path] = (content_type, body)
        self.modified[path] = when
        self.headers[path] = headers

    def requested(self, path: str) -> list[int]:
        return [status for p, status in self.log if p == path]

    def __enter__(self) -> "Site":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: bytes = b"", headers: dict | None = None):
                site.log.append((self.path, status))
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                path = self.path
                if path in site.redirects:
                    return self._send(301, headers={"Location": site.redirects[path]})
                if path not in site.pages:
                    return self._send(404, b"not found", {"Content-Type": "text/plain"})
                content_type, body = site.pages[path]
                data = body.encode()
                etag = '"' + hashlib.sha1(data).hexdigest()[:12] + '"'
                modified = formatdate(site.modified[path], usegmt=True)
                headers = {"ETag": etag, "Last-Modified": modified, "Content-Type": content_type, **site.headers[path]}
                if self.headers.get("If-None-Match") == etag:
                    return self._send(304, headers=headers)
                self._send(200, data, headers)

        return Handler
