"""A local fake of the Bot Connector service Teams hands a bot in each activity's `serviceUrl`:
it records every activity the bot POSTs (send / reply) or PUTs (update) under
/v3/conversations/{id}/activities and answers with a new activity id, the way the real service
does. POST /v3/conversations with `isGroup` and `channelData.channel.id` starts a new thread in
that channel: its first message is the request's `activity`, the answer names the thread
(`<channel>;messageid=<id>`) and that message (`activityId`), as Teams does. A real HTTP server in a thread, so the SDK's own connector client runs unmodified.

Usage::

    with FakeConnector() as connector:
        activity = {..., "serviceUrl": connector.url}
        ...
        [reply] = connector.wait_for(kind="message", conversation="a:1")
"""
from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import unquote, urlsplit

_CONVERSATIONS = "/v3/conversations"
_ACTIVITIES = re.compile(r"^/v3/conversations/(?P<conversation>.+?)/activities(?:/(?P<activity_id>[^/]+))?$")


@dataclass(frozen=True)
class Sent:
    """One activity the bot sent. `reply_to` is the activity id in the path of a reply or update."""

    method: str  # POST (send or reply) or PUT (update)
    conversation: str
    reply_to: str | None
    activity: dict
    id: str  # the id the fake gave it
    authorization: str | None
    time: float
    created: dict | None = None  # the whole POST /v3/conversations request that started a thread

    @property
    def kind(self) -> str:
        return self.activity.get("type", "")

    @property
    def text(self) -> str:
        return self.activity.get("text") or ""


class FakeConnector:
    def __init__(self):
        self._sent: list[Sent] = []
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self.not_member = set()  # channels of teams Citebot is not in: starting a thread there is refused
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _handle(self):
                match = _ACTIVITIES.match(unquote(urlsplit(self.path).path))
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                if self.command == "POST" and urlsplit(self.path).path.rstrip("/") == _CONVERSATIONS:
                    self._create(body)
                    return
                if not match or self.command not in ("POST", "PUT"):
                    self._answer(404, {"error": {"code": "NotFound", "message": self.path}})
                    return
                new_id = match["activity_id"] if self.command == "PUT" else f"reply-{next(fake._ids)}"
                fake._record(Sent(self.command, match["conversation"], match["activity_id"], body, new_id,
                                  self.headers.get("Authorization"), time.time()))
                self._answer(200 if self.command == "PUT" else 201, {"id": new_id})

            do_POST = do_PUT = _handle

            def _create(self, body: dict):
                """A new thread in a channel (the only group conversation a bot may start)."""
                channel = ((body.get("channelData") or {}).get("channel") or {}).get("id")
                if not body.get("isGroup") or not channel or not isinstance(body.get("activity"), dict):
                    self._answer(400, {"error": {"code": "BadSyntax", "message": "isGroup, channelData.channel.id "
                                                                                  "and activity are required"}})
                    return
                if channel in fake.not_member:
                    self._answer(403, {"error": {"code": "BotNotInConversationRoster",
                                                 "message": "The bot is not part of the conversation roster."}})
                    return
                first = f"{next(fake._ids) + 1_700_000_000_000}"
                thread = f"{channel};messageid={first}"
                fake._record(Sent("POST", thread, None, body["activity"], first,
                                  self.headers.get("Authorization"), time.time(), created=body))
                self._answer(201, {"id": thread, "activityId": first})

            def _answer(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_port}/"

    def __enter__(self) -> "FakeConnector":
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _record(self, sent: Sent) -> None:
        with self._changed:
            self._sent.append(sent)
            self._changed.notify_all()

    def sent(self, kind: str | None = None, conversation: str | None = None) -> list[Sent]:
        with self._changed:
            return [s for s in self._sent if (kind is None or s.kind == kind)
                    and (conversation is None or s.conversation == conversation)]

    def wait_for(self, kind: str = "message", conversation: str | None = None, count: int = 1,
                 timeout: float = 30, predicate: Callable[[Sent], bool] = lambda s: True) -> list[Sent]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [s for s in self._sent if s.kind == kind and predicate(s)
                         and (conversation is None or s.conversation == conversation)]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} {kind} activities, got {len(found)}: "
                                         f"{[s.text[:80] for s in self._sent]}")
                self._changed.wait(left)
