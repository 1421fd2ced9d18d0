"""/slack/events on the one HTTP server (bot/web.py), in front of the Bolt app: Slack's signing
headers are checked before any of the body is read, the body is read within the size and time
limits, its signature is verified, and only then is it handed to Bolt, in a thread of a bounded
pool (Bolt's listeners are synchronous; each request returns once it is acked)."""
from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web
from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

from bot import metrics
from bot.web import Handler, Limits, read_body

# Slack's own replay window: a request signed more than five minutes ago is refused.
MAX_SKEW_SECONDS = 300
# Requests being acked at once; each ack is quick, the answering runs in Bolt's listener pool.
DISPATCH_THREADS = 16


def _signed_recently(request: web.Request) -> tuple[str, str] | None:
    timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
    signature = request.headers.get("X-Slack-Signature", "")
    if not (timestamp.isdigit() and signature.startswith("v0=")):
        return None
    if abs(time.time() - int(timestamp)) > MAX_SKEW_SECONDS:
        return None
    return timestamp, signature


def _refused(kind: str) -> web.Response:
    metrics.error(kind)
    return web.Response(status=401, text="invalid request\n")


def events_handler(app: App, signing_secret: str, limits: Limits) -> Handler:
    verifier = SignatureVerifier(signing_secret)
    pool = ThreadPoolExecutor(DISPATCH_THREADS, thread_name_prefix="citebot-slack-http")

    async def events(request: web.Request) -> web.Response:
        signed = _signed_recently(request)
        if signed is None:
            return _refused("slack_unsigned")  # nothing of the body was read
        body = await read_body(request, limits)
        if not verifier.is_valid(body, *signed):
            return _refused("slack_bad_signature")
        headers = {name: request.headers.getall(name) for name in request.headers.keys()}
        bolt_request = BoltRequest(body=body.decode("utf-8", "replace"), query=request.query_string, headers=headers)
        response = await asyncio.get_running_loop().run_in_executor(pool, app.dispatch, bolt_request)
        reply = web.Response(status=response.status, body=(response.body or "").encode())
        for name, values in response.headers.items():
            for value in values if name.lower() != "content-length" else ():
                reply.headers.add(name, value)
        return reply

    return events
