"""The Bolt app: one Engine shared by every listener; Socket Mode, or HTTP at /slack/events of
the one HTTP server (bot/web.py, bot/slack/events.py)."""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from slack_bolt import App, BoltResponse
from slack_sdk import WebClient
from slack_sdk.http_retry import RateLimitErrorRetryHandler, default_retry_handlers
from slack_sdk.http_retry.builtin_handlers import ServerErrorRetryHandler

from rag_graph.config import Settings
from bot.access_file import access_file
from bot.admin import Admin, Markup
from bot.answering import Answering
from bot.dedupe import RedisSeen, SeenCache
from bot.feedback import feedback_log
from bot.gaps import gap_log
from bot.shared import SharedState
from bot.slack.conversation import SLACK_CONNECT, Conversations
from bot.slack.experts import SlackExperts
from bot.slack.listeners import assistant, commands, escalation, feedback, messages, reasons
from bot.slack.events import events_handler
from bot.slack.render import escape
from bot.slack.usergroups import UsergroupMembers

log = logging.getLogger(__name__)
EVENTS_PATH = "/slack/events"
# Slash commands and button clicks ack *inside* Bolt's pool, so it must stay roomier than the
# number of questions in flight or an ack could wait behind a graph run past Slack's 3 s.
LISTENER_THREADS = 16


def web_client(settings: Settings) -> WebClient:
    base_url = settings.slack_api_url or WebClient.BASE_URL
    return WebClient(token=settings.slack_bot_token, base_url=base_url.rstrip("/") + "/",
                     retry_handlers=default_retry_handlers() + [RateLimitErrorRetryHandler(max_retry_count=2),
                                                               ServerErrorRetryHandler(max_retry_count=2)])


def drop_redelivered_events(seen: SeenCache | RedisSeen):
    """Bolt middleware: an `event_callback` whose event_id was already taken is acked and
    dropped. Slack's retries (X-Slack-Retry-Num) reuse the event_id, so they land here too;
    a retry whose first delivery never reached us still gets answered."""

    def middleware(body: dict, request, next) -> BoltResponse | None:
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if event_id and not seen.first_time(("event", event_id)):
            retry = request.headers.get("x-slack-retry-num", ["0"])[0]
            log.info("dropping duplicate delivery of %s (retry %s)", event_id, retry)
            return BoltResponse(status=200, body="")
        return next()

    return middleware


def check_workspace(body: dict, context, next) -> BoltResponse | None:
    """Bolt middleware: a request from another workspace than the one the token is installed in
    is refused (its channel ids could name a listed channel of ours); an event from a Slack
    Connect channel is marked, so it is answered from the documents for everyone."""
    installed = getattr(context.authorize_result, "team_id", None) if context.authorize_result else None
    team = body.get("team_id") or (body.get("team") or {}).get("id")
    if installed and team and team != installed:
        log.warning("refused a request from workspace %s (installed in %s)", team, installed)
        return BoltResponse(status=403, body="")
    if body.get("is_ext_shared_channel") and isinstance(body.get("event"), dict):
        body["event"][SLACK_CONNECT] = True
    return next()


def build_app(settings: Settings, engine, client: WebClient | None = None,
              shared: SharedState | None = None) -> App:
    """`shared`: the process's shared state (one for every platform); by default, from the settings."""
    shared = shared or SharedState(settings.redis_url)
    app = App(client=client or web_client(settings),
              signing_secret=settings.slack_signing_secret or "",
              listener_executor=ThreadPoolExecutor(LISTENER_THREADS, thread_name_prefix="citebot"))
    app.use(check_workspace)
    app.use(drop_redelivered_events(shared.seen()))
    gaps = gap_log(settings, shared)
    access, usergroups = access_file(settings.access_path), UsergroupMembers(app.client)
    experts = SlackExperts(settings, engine, shared, access, usergroups)
    assistant.register(app, engine)
    escalation.register(app, experts)  # before messages: an expert's reply is relayed, not answered
    messages.register(app, Conversations(Answering(engine, gaps, settings.ask_hint), settings, shared.seen(),
                                         access, usergroups, experts))
    commands.register(app, Admin(settings, engine, shared, Markup(escape=escape)))
    votes = feedback_log(settings, shared)
    feedback.register(app, votes, gaps, experts)
    reasons.register(app, votes, gaps)
    return app


def missing(settings: Settings) -> str | None:
    """What Slack mode lacks, as a one-line message; None when it can start."""
    if not settings.slack_bot_token:
        return "SLACK_BOT_TOKEN is not set (the xoxb- token from OAuth & Permissions)"
    if settings.slack_app_token and not settings.slack_app_token.startswith("xapp-"):
        return "SLACK_APP_TOKEN must be an app-level token (xapp-…) with connections:write"
    if not settings.slack_app_token and not settings.slack_signing_secret:
        return "SLACK_SIGNING_SECRET is required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)"
    return None


def start(settings: Settings, engine, shared: SharedState, endpoints, limits) -> None:
    """Serve Slack from now on: over Socket Mode with SLACK_APP_TOKEN (its own thread), else at
    /slack/events of the HTTP server (`endpoints`, bot/web.py)."""
    app = build_app(settings, engine, shared=shared)
    if settings.slack_app_token:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        SocketModeHandler(app, settings.slack_app_token).connect()
        return
    endpoints.slack = events_handler(app, settings.slack_signing_secret or "", limits)
