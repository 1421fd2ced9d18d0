"""A local fake of the Bot Connector service Teams hands a bot in each activity's `serviceUrl`:
it records every activity the bot POSTs (send / reply) or PUTs (update) under
/v3/conversations/{id}/activities and answers with a new activity id, the way the real service
does. POST /v3/conversations with `isGroup` and `channelData.channel.id` starts a new thread in
that channel: its first message is the request's `activity`, the answer names the thread
(`<channel>;messageid=<id>`) and that message (`activityId`), as Teams does. A real HTTP server in a thread, so the SDK's own connector client runs unmodified.

Streaming (`Streams`) follows Teams' REST contract (learn.microsoft.com/microsoftteams/platform/bots/streaming-ux,
"Stream message through REST API" and "Response codes"): a `typing` activity with a `streaminfo`
entity and no streamId starts a stream (streamSequence 1, text required, one-on-one chats only:
elsewhere 403 ContentStreamNotAllowed) and is answered 201 with the streamId; later updates name
it, with a higher streamSequence (a lower one is dropped: 202 ContentStreamSequenceOrderPreConditionFailed)
and text that keeps what was streamed (a changed text is a BadRequest, as Microsoft's Agents SDK
team found: microsoft/Agents-for-net#251, #313); the final is a `message` with streamType final,
the streamId, no streamSequence and text holding what was streamed, answered 202 `{}`; after it the
stream takes nothing more (403). `fail_next` makes the next matching request fail as Teams would.

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
    status: int = 201  # what the fake answered; 400 and above: refused, nothing was shown

    @property
    def stream(self) -> dict:
        """The activity's streaminfo entity ({} when it has none)."""
        return stream_info(self.activity)

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
        self.streams = Streams()
        self._failures: list[tuple[Callable[[str, dict], bool], int, dict]] = []
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
                status, payload = 200 if self.command == "PUT" else 201, {"id": new_id}
                if failure := fake._failure(self.command, body):
                    status, payload = failure
                elif self.command == "POST" and stream_info(body):
                    status, payload, new_id = fake.streams.take(body, new_id)
                fake._record(Sent(self.command, match["conversation"], match["activity_id"], body, new_id,
                                  self.headers.get("Authorization"), time.time(), status=status))
                self._answer(status, payload)

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

    def fail_next(self, when: Callable[[str, dict], bool], status: int, code: str, message: str) -> None:
        """The next request (method, activity) `when` accepts is answered with Teams' error shape."""
        with self._changed:
            self._failures.append((when, status, {"error": {"code": code, "message": message}}))

    def _failure(self, method: str, body: dict) -> tuple[int, dict] | None:
        with self._changed:
            for at, (when, status, payload) in enumerate(self._failures):
                if when(method, body):
                    del self._failures[at]
                    return status, payload
        return None

    def sent(self, kind: str | None = None, conversation: str | None = None, refused: bool = False) -> list[Sent]:
        """What the fake accepted (with `refused`, what it refused instead)."""
        with self._changed:
            return [s for s in self._sent if (kind is None or s.kind == kind) and (s.status >= 400) == refused
                    and (conversation is None or s.conversation == conversation)]

    def wait_for(self, kind: str = "message", conversation: str | None = None, count: int = 1,
                 timeout: float = 30, predicate: Callable[[Sent], bool] = lambda s: True) -> list[Sent]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [s for s in self._sent if s.kind == kind and predicate(s) and s.status < 400
                         and (conversation is None or s.conversation == conversation)]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} {kind} activities, got {len(found)}: "
                                         f"{[s.text[:80] for s in self._sent]}")
                self._changed.wait(left)


def stream_info(activity: dict) -> dict:
    return next((e for e in activity.get("entities") or [] if str(e.get("type", "")).lower() == "streaminfo"), {})


def _error(status: int, code: str, message: str) -> tuple[int, dict]:
    return status, {"error": {"code": code, "message": message}}


class Streams:
    """Teams' side of streaming: each stream's last sequence number and streamed text."""

    def __init__(self):
        self._streams: dict[str, dict] = {}
        self._lock = threading.Lock()

    def take(self, activity: dict, new_id: str) -> tuple[int, dict, str]:
        """(status, body, id) for a POST that carries a streaminfo entity."""
        with self._lock:
            info, text = stream_info(activity), activity.get("text") or ""
            stream_id = info.get("streamId")
            if not stream_id:
                refused = self._start(activity, info, text)
                if refused:
                    return (*refused, new_id)
                self._streams[new_id] = {"sequence": 1, "text": text if info.get("streamType") == "streaming" else "",
                                         "done": False}
                return 201, {"id": new_id}, new_id
            stream = self._streams.get(stream_id)
            if stream is None:
                return (*_error(400, "BadRequest", "Unknown streamId"), stream_id)
            if stream["done"]:
                return (*_error(403, "ContentStreamNotAllowed",
                                "Content stream is not allowed on an already completed streamed message"), stream_id)
            refused = (self._final(stream, activity, info, text) if activity.get("type") == "message"
                       else self._update(stream, info, text))
            return (*(refused or (202, {})), stream_id)

    @staticmethod
    def _start(activity: dict, info: dict, text: str) -> tuple[int, dict] | None:
        if (activity.get("conversation") or {}).get("conversationType") != "personal":
            return _error(403, "ContentStreamNotAllowed", "Content stream is not allowed")
        if activity.get("type") != "typing" or info.get("streamSequence") != 1:
            return _error(400, "BadRequest", "A stream starts with a typing activity of streamSequence 1")
        if not text:
            return _error(400, "BadRequest", "Start streaming activities should include text")
        if info.get("streamType") == "informative" and len(text) > 1000:
            return _error(400, "BadRequest", "Informative messages must not be more than 1000 characters")
        return None

    @staticmethod
    def _update(stream: dict, info: dict, text: str) -> tuple[int, dict] | None:
        sequence = info.get("streamSequence")
        if not isinstance(sequence, int) or not text:
            return _error(400, "BadRequest", "streamSequence and text are required")
        if sequence <= stream["sequence"]:
            return _error(202, "ContentStreamSequenceOrderPreConditionFailed",
                          "PreCondition failed exception when processing streaming activity.")
        if info.get("streamType", "streaming") == "informative":
            if len(text) > 1000:
                return _error(400, "BadRequest", "Informative messages must not be more than 1000 characters")
        elif not text.startswith(stream["text"]):
            return _error(400, "BadRequest", "Streamed content changed")
        else:
            stream["text"] = text
        stream["sequence"] = sequence
        return None

    @staticmethod
    def _final(stream: dict, activity: dict, info: dict, text: str) -> tuple[int, dict] | None:
        if info.get("streamType") != "final" or "streamSequence" in info:
            return _error(400, "BadRequest", "The final message has streamType final and no streamSequence")
        if not text or not text.startswith(stream["text"]):
            return _error(400, "BadRequest", "Streamed content changed")
        stream["done"] = True
        return None
