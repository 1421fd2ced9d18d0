"""A local fake of Slack's Web API for end-to-end tests of the bolt app.

Modelled on bolt-python's ``tests/mock_web_api_server`` (a real HTTP server in a
thread, so the whole slack_sdk stack -- urllib, retries, error parsing -- runs
unmodified), but with a little state so multi-step flows behave like Slack:
threads that ``conversations.replies`` can read back, ``chat.update`` that
edits them, settable users and user groups, and scripted faults (429s, 500s). The AI-app surface too: thread
statuses (cleared, as in Slack, when the app posts in the thread), suggested prompts, and
streamed messages (``chat.startStream`` / ``appendStream`` / ``stopStream``).

Usage::

    with FakeSlack() as fake:
        client = WebClient(base_url=fake.url, token="xoxb-test")
        fake.add_message("C1", "1700000000.000001", "hi <@UBOT>", user="U1")
        ...
        fake.wait_for("chat.postMessage")
"""
from __future__ import annotations

import copy
import hashlib
import hmac
import json
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional
from urllib.parse import parse_qs, urlencode, urlsplit

BOT_USER_ID, BOT_ID, BOT_NAME = "UBOT", "BBOT", "citebot"
TEAM_ID, APP_ID = "T0001", "A0001"


@dataclass(frozen=True)
class Call:
    """One request received by the fake. ``headers`` keys are lower-cased."""

    method: str  # Web API method ("chat.postMessage") or "response_url"
    args: dict
    headers: dict
    time: float
    path: str = ""  # raw URL path, e.g. "/response/reload" for response_url posts


def _ts_key(ts: str) -> tuple:
    # Slack ts strings are "seconds.micros"; compare numerically, since floats
    # lose the last digits at 1.7e9 and plain string order breaks on short ones.
    sec, _, frac = str(ts).partition(".")
    return int(sec), int((frac or "0").ljust(6, "0"))


def _maybe_json(value):
    # slack_sdk sends blocks/view as real JSON in JSON bodies but as a JSON
    # *string* when the caller used form params; accept both.
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        return json.loads(value)
    return value


def _default_user(uid: str) -> dict:
    return {
        "id": uid, "team_id": TEAM_ID, "name": uid.lower(), "real_name": f"User {uid}",
        "deleted": False, "is_bot": uid == BOT_USER_ID, "is_admin": False, "is_owner": False,
        "is_primary_owner": False, "is_restricted": False, "tz": "UTC",
        "profile": {"real_name": f"User {uid}", "display_name": uid.lower()},
    }


class _Users(dict):
    """``fake.users["U1"]["is_admin"] = True`` works without seeding U1 first."""

    def __missing__(self, uid: str) -> dict:
        self[uid] = _default_user(uid)
        return self[uid]


class FakeSlack:
    """Threaded HTTP fake of https://slack.com/api/ bound to an ephemeral port."""

    def __init__(self) -> None:
        self.users = _Users()
        self.usergroups: dict[str, list[str]] = {}  # usergroup id -> member user ids
        # One re-entrant Condition guards all state and wakes wait_for() callers.
        self._cond = threading.Condition()
        self._calls: list[Call] = []
        self._messages: dict[str, dict[str, dict]] = {}  # channel -> ts -> message
        self._faults: dict[str, list[dict]] = {}
        self.statuses: dict[tuple[str, str], str] = {}  # (channel, thread_ts) -> current status
        self.suggested_prompts: dict[tuple[str, str], dict] = {}  # (channel, thread_ts) -> {title, prompts}
        # "agent" (manifest agent_view) or "assistant" (assistant_view): an agent app's
        # setSuggestedPrompts with a thread_ts silently does nothing; without one, the prompts
        # are set for the latest message of the channel (kept under thread_ts None).
        self.messaging = "assistant"
        self._streaming: set[tuple[str, str]] = set()  # (channel, ts) of messages still streaming
        self._last_us = 1_700_000_000_000_000  # last issued ts, in microseconds
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self
        self._stopped = False
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    # -- lifecycle ---------------------------------------------------------
    def __enter__(self) -> "FakeSlack":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        """Base URL for ``WebClient(base_url=...)``; slack_sdk appends the method name."""
        return self.root + "/api/"

    def response_url(self, name: str = "default") -> str:
        """A ``response_url`` whose posts are recorded as method ``"response_url"``."""
        return f"{self.root}/response/{name}"

    # -- test-side setup and inspection ------------------------------------
    def add_message(self, channel: str, ts: str, text: str, user: str = "U0USER",
                    thread_ts: Optional[str] = None, bot_id: Optional[str] = None) -> dict:
        """Seed channel history; pass ``thread_ts`` to make it a reply in that thread."""
        msg = {"type": "message", "user": user, "text": text, "ts": ts, "team": TEAM_ID}
        if thread_ts and thread_ts != ts:
            msg["thread_ts"] = thread_ts
        if bot_id:
            msg["bot_id"] = bot_id
        with self._cond:
            self._messages.setdefault(channel, {})[ts] = msg
            # Keep bot-generated ts strictly after anything seeded, like real time would.
            sec, micros = _ts_key(ts)
            self._last_us = max(self._last_us, sec * 1_000_000 + micros)
        return msg

    def thread(self, channel: str, ts: str) -> list[dict]:
        """Parent (if known) then replies, sorted by ts -- what conversations.replies shows."""
        with self._cond:
            history = self._messages.get(channel, {})
            root = history[ts].get("thread_ts", ts) if ts in history else ts
            replies = [m for m in history.values() if m.get("thread_ts") == root and m["ts"] != root]
            replies.sort(key=lambda m: _ts_key(m["ts"]))
            out = copy.deepcopy(replies)
            if root in history:
                parent = copy.deepcopy(history[root])
                if replies:  # Slack decorates the parent with thread metadata.
                    parent.update(thread_ts=root, reply_count=len(replies),
                                  reply_users=sorted({m.get("user", "") for m in replies}),
                                  latest_reply=replies[-1]["ts"])
                out.insert(0, parent)
            return out

    def history(self, channel: str) -> list[dict]:
        """The channel's top-level messages, newest first -- what conversations.history shows."""
        with self._cond:
            return self._api_conversations_history({"channel": channel, "limit": 1000})["messages"]

    def fail_next(self, method: str, error: str = "ratelimited", status: int = 429,
                  retry_after: Optional[int] = 1, count: int = 1) -> None:
        """Make the next ``count`` calls to ``method`` fail with ``{"ok": false, "error"}``.

        ``Retry-After`` is sent whenever ``retry_after`` is not None; use
        ``status=500, error="internal_error", retry_after=None`` for a server error.
        """
        fault = {"status": status, "error": error, "retry_after": retry_after}
        with self._cond:
            self._faults.setdefault(method, []).extend([fault] * count)

    def calls(self, method: Optional[str] = None) -> list[Call]:
        with self._cond:
            return [c for c in self._calls if method is None or c.method == method]

    def clear_calls(self) -> None:
        with self._cond:
            self._calls.clear()

    def wait_for(self, method: str, count: int = 1, timeout: float = 10,
                 predicate: Optional[Callable[[Call], bool]] = None) -> list[Call]:
        """Block until ``count`` calls of ``method`` (matching ``predicate``) have arrived.

        Bolt acks first and calls the Web API afterwards on a worker thread, so
        e2e tests must wait rather than assert immediately.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [c for c in self._calls
                         if c.method == method and (predicate is None or predicate(c))]
                remaining = deadline - time.monotonic()
                if len(found) >= count or remaining <= 0:
                    break
                self._cond.wait(remaining)
            if len(found) >= count:
                return found
            listing = "\n".join(f"  {c.method} {json.dumps(c.args, default=str)[:200]}"
                                for c in self._calls) or "  (none)"
            raise AssertionError(f"expected {count} matching {method!r} call(s) within {timeout}s, "
                                 f"got {len(found)}; all calls received:\n{listing}")

    # -- request dispatch (runs on server threads) --------------------------
    def _next_ts(self) -> str:
        self._last_us += 100
        return f"{self._last_us // 1_000_000}.{self._last_us % 1_000_000:06d}"

    def _dispatch(self, method: str, args: dict, headers: dict, path: str):
        with self._cond:
            faults = self._faults.get(method)
            if faults:
                f = faults.pop(0)
                extra = {"Retry-After": str(f["retry_after"])} if f["retry_after"] is not None else {}
                status, body = f["status"], {"ok": False, "error": f["error"]}
            elif method == "response_url":
                status, body, extra = 200, {"ok": True}, {}
            elif not (args.get("token") or headers.get("authorization", "").startswith("Bearer ")):
                status, body, extra = 200, {"ok": False, "error": "not_authed"}, {}
            else:
                handler = getattr(self, "_api_" + method.replace(".", "_"), None)
                body = handler(args) if handler else {"ok": True}
                status, extra = 200, {}
            # Record only after state changed, so a woken wait_for() sees the effects.
            self._calls.append(Call(method, args, headers, time.time(), path))
            self._cond.notify_all()
            return status, body, extra

    def _api_auth_test(self, a: dict) -> dict:
        return {"ok": True, "url": "https://fake-team.slack.com/", "team": "Fake Team",
                "user": BOT_NAME, "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": BOT_ID,
                "is_enterprise_install": False}

    def _api_chat_postMessage(self, a: dict) -> dict:
        channel, blocks = a.get("channel"), _maybe_json(a.get("blocks"))
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if not (a.get("text") or blocks or a.get("attachments")):
            return {"ok": False, "error": "no_text"}
        ts = self._next_ts()
        msg = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "app_id": APP_ID,
               "team": TEAM_ID, "text": a.get("text") or "", "ts": ts, "blocks": blocks or []}
        history = self._messages.setdefault(channel, {})
        if a.get("thread_ts"):
            # Replying to a reply lands in the same thread, as in Slack.
            root = history.get(str(a["thread_ts"]), {}).get("thread_ts", str(a["thread_ts"]))
            msg["thread_ts"] = root
            if root in history:
                msg["parent_user_id"] = history[root].get("user")
        history[ts] = msg
        self.statuses.pop((channel, msg.get("thread_ts", ts)), None)  # a reply ends "is thinking…"
        return {"ok": True, "channel": channel, "ts": ts, "message": copy.deepcopy(msg)}

    def _api_chat_update(self, a: dict) -> dict:
        channel, ts = a.get("channel"), str(a.get("ts"))
        msg = self._messages.get(channel, {}).get(ts)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        if "text" in a:
            msg["text"] = a["text"] or ""
        if a.get("blocks") is not None:
            msg["blocks"] = _maybe_json(a["blocks"])
        msg["edited"] = {"user": BOT_USER_ID, "ts": self._next_ts()}
        return {"ok": True, "channel": channel, "ts": ts, "text": msg["text"],
                "message": copy.deepcopy(msg)}

    # -- the AI-app surface ----------------------------------------------------
    def _api_assistant_threads_setStatus(self, a: dict) -> dict:
        if not a.get("channel_id") or not a.get("thread_ts") or "status" not in a:
            return {"ok": False, "error": "invalid_arguments"}
        if len(a.get("loading_messages") or []) > 10:
            return {"ok": False, "error": "invalid_arguments"}
        key = (a["channel_id"], str(a["thread_ts"]))
        if a["status"]:
            self.statuses[key] = a["status"]
        else:
            self.statuses.pop(key, None)  # an empty status clears it
        return {"ok": True}

    def _api_assistant_threads_setSuggestedPrompts(self, a: dict) -> dict:
        prompts = _maybe_json(a.get("prompts"))
        if not a.get("channel_id") or not isinstance(prompts, list):
            return {"ok": False, "error": "invalid_arguments"}
        if not a.get("thread_ts") and self.messaging == "assistant":
            return {"ok": False, "error": "invalid_arguments"}  # the legacy experience needs the thread
        if not 1 <= len(prompts) <= 4 or any(not p.get("title") or not p.get("message") for p in prompts):
            return {"ok": False, "error": "invalid_arguments"}
        if a.get("thread_ts") and self.messaging == "agent":
            return {"ok": True}  # Slack: "will cause the call to silently fail"
        key = (a["channel_id"], str(a["thread_ts"]) if a.get("thread_ts") else None)
        self.suggested_prompts[key] = {"title": a.get("title"), "prompts": prompts}
        return {"ok": True}

    def _api_conversations_history(self, a: dict) -> dict:
        """Top-level messages of the channel, newest first (thread replies are not listed)."""
        history = self._messages.get(a.get("channel"), {})
        top = sorted((m for m in history.values() if m.get("thread_ts", m["ts"]) == m["ts"]),
                     key=lambda m: _ts_key(m["ts"]), reverse=True)
        limit = int(a.get("limit") or 100)
        return {"ok": True, "messages": copy.deepcopy(top[:limit]), "has_more": len(top) > limit,
                "response_metadata": {"next_cursor": ""}}

    def _api_chat_getPermalink(self, a: dict) -> dict:
        channel, ts = a.get("channel"), str(a.get("message_ts"))
        msg = self._messages.get(channel, {}).get(ts)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        link = f"https://fake-team.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        if msg.get("thread_ts") and msg["thread_ts"] != ts:  # a reply: Slack adds its thread
            link += f"?thread_ts={msg['thread_ts']}&cid={channel}"
        return {"ok": True, "channel": channel, "permalink": link}

    @staticmethod
    def _stream_text(a: dict) -> str:
        # slack_sdk's ChatStream sends `chunks` ({"type": "markdown_text", "text"}); raw callers `markdown_text`.
        chunks = _maybe_json(a.get("chunks")) or []
        return (a.get("markdown_text") or "") + "".join(
            c.get("text", "") for c in chunks if c.get("type") == "markdown_text")

    def _api_chat_startStream(self, a: dict) -> dict:
        channel, thread_ts = a.get("channel"), a.get("thread_ts")
        if not channel or not thread_ts:
            return {"ok": False, "error": "invalid_arguments"}
        if not channel.startswith("D") and not (a.get("recipient_user_id") and a.get("recipient_team_id")):
            return {"ok": False, "error": "invalid_arguments"}  # required outside DMs
        posted = self._api_chat_postMessage({"channel": channel, "thread_ts": thread_ts,
                                             "text": self._stream_text(a) or " "})
        posted["message"]["text"] = self._messages[channel][posted["ts"]]["text"] = self._stream_text(a)
        self._streaming.add((channel, posted["ts"]))
        return {"ok": True, "channel": channel, "ts": posted["ts"]}

    def _streamed(self, a: dict) -> Optional[dict]:
        key = (a.get("channel"), str(a.get("ts")))
        return self._messages[key[0]][key[1]] if key in self._streaming else None

    def _api_chat_appendStream(self, a: dict) -> dict:
        msg = self._streamed(a)
        if msg is None:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        msg["text"] += self._stream_text(a)
        return {"ok": True, "channel": a["channel"], "ts": msg["ts"]}

    def _api_chat_stopStream(self, a: dict) -> dict:
        msg = self._streamed(a)
        if msg is None:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        msg["text"] += self._stream_text(a)
        msg["blocks"] = _maybe_json(a.get("blocks")) or []  # rendered under the streamed text
        self._streaming.discard((a["channel"], msg["ts"]))
        return {"ok": True, "channel": a["channel"], "ts": msg["ts"], "message": copy.deepcopy(msg)}

    def _api_chat_postEphemeral(self, a: dict) -> dict:
        # Ephemeral messages never enter channel history, as in Slack.
        if not a.get("channel") or not a.get("user"):
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True, "message_ts": self._next_ts()}

    def _api_reactions_add(self, a: dict) -> dict:
        msg = self._messages.get(a.get("channel"), {}).get(str(a.get("timestamp")))
        if msg is not None:  # unseeded messages are tolerated; seeded ones track reactions
            reactions = msg.setdefault("reactions", [])
            if any(r["name"] == a.get("name") for r in reactions):
                return {"ok": False, "error": "already_reacted"}
            reactions.append({"name": a.get("name"), "users": [BOT_USER_ID], "count": 1})
        return {"ok": True}

    def _api_conversations_replies(self, a: dict) -> dict:
        messages = self.thread(a.get("channel"), str(a.get("ts")))
        if not messages:
            return {"ok": False, "error": "thread_not_found"}
        return {"ok": True, "messages": messages, "has_more": False,
                "response_metadata": {"next_cursor": ""}}

    def _api_users_info(self, a: dict) -> dict:
        uid = a.get("user")
        if not uid:
            return {"ok": False, "error": "user_not_found"}
        # Merge so a partial assignment (fake.users["U1"] = {"is_admin": True}) still looks real.
        return {"ok": True, "user": {**_default_user(uid), **copy.deepcopy(self.users[uid])}}

    def _api_usergroups_users_list(self, a: dict) -> dict:
        group = a.get("usergroup")
        if group not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": list(self.usergroups[group])}

    def _api_views_open(self, a: dict) -> dict:
        if not (a.get("trigger_id") or a.get("interactivity_pointer")):
            return {"ok": False, "error": "invalid_arguments"}
        view = _maybe_json(a.get("view")) or {}
        vid = "V" + uuid.uuid4().hex[:10].upper()
        return {"ok": True, "view": {
            "id": vid, "team_id": TEAM_ID, "app_id": APP_ID, "bot_id": BOT_ID,
            "state": {"values": {}}, "hash": uuid.uuid4().hex[:16], "private_metadata": "",
            "callback_id": "", "root_view_id": vid, "previous_view_id": None, **view}}


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # load tests open many connections at once; the default backlog is 5


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest output quiet
        pass

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        if url.path.startswith("/api/"):
            method = url.path[len("/api/"):]
        elif url.path.startswith("/response/"):
            method = "response_url"
        else:
            return self._send(404, {"ok": False, "error": "not_found"}, {})
        args = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        ctype = headers.get("content-type", "")
        try:
            if "json" in ctype or raw.lstrip().startswith("{"):
                args.update(json.loads(raw) if raw.strip() else {})
            elif "x-www-form-urlencoded" in ctype:
                args.update({k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()})
        except json.JSONDecodeError:
            return self._send(200, {"ok": False, "error": "invalid_json"}, {})
        self._send(*self.server.fake._dispatch(method, args, headers, url.path))

    do_GET = do_POST  # slack_sdk always POSTs, but other clients may GET with a query string

    def _send(self, status: int, body: dict, extra: dict) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


# -- building signed inbound requests for the bolt app -------------------------
def signed_headers(signing_secret: str, body: str, timestamp: Optional[int] = None) -> dict:
    """Headers Slack would send with ``body`` (v0 HMAC-SHA256 over "v0:ts:body")."""
    ts = str(int(time.time() if timestamp is None else timestamp))
    digest = hmac.new(signing_secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    ctype = "application/json" if body.lstrip().startswith("{") else "application/x-www-form-urlencoded"
    return {"Content-Type": ctype, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def event_body(event: dict, event_id: Optional[str] = None, team_id: str = TEAM_ID,
               api_app_id: str = APP_ID) -> str:
    """JSON ``event_callback`` envelope. event_id is fresh by default so dedup logic doesn't drop it."""
    return json.dumps({
        "token": "verification-token", "team_id": team_id, "api_app_id": api_app_id,
        "event": event, "type": "event_callback",
        "event_id": event_id or "Ev" + uuid.uuid4().hex[:10].upper(),
        "event_time": int(time.time()), "is_ext_shared_channel": False,
        "authorizations": [{"enterprise_id": None, "team_id": team_id, "user_id": BOT_USER_ID,
                            "is_bot": True, "is_enterprise_install": False}],
    })


def command_body(command: str = "/citebot", text: str = "reload", user_id: str = "U0USER",
                 channel_id: str = "C0001", response_url: Optional[str] = None,
                 team_id: str = TEAM_ID) -> str:
    """Form-encoded slash-command payload; pass ``fake.response_url(...)`` to capture respond()."""
    fields = {
        "token": "verification-token", "team_id": team_id, "team_domain": "fake-team",
        "channel_id": channel_id, "channel_name": "general", "user_id": user_id,
        "user_name": user_id.lower(), "command": command, "text": text, "api_app_id": APP_ID,
        "trigger_id": f"{int(time.time())}.{uuid.uuid4().int % 10**10}.{uuid.uuid4().hex[:12]}",
    }
    if response_url:
        fields["response_url"] = response_url
    return urlencode(fields)


def action_body(payload: dict) -> str:
    """Form-encoded ``payload=<json>`` interaction; fills block_actions envelope defaults."""
    p = dict(payload)
    p.setdefault("type", "block_actions")
    p.setdefault("team", {"id": TEAM_ID, "domain": "fake-team"})
    p.setdefault("api_app_id", APP_ID)
    p.setdefault("token", "verification-token")
    p.setdefault("trigger_id", f"{int(time.time())}.{uuid.uuid4().hex[:12]}")
    return urlencode({"payload": json.dumps(p)})
