"""Mentions, DMs and thread follow-ups. Bolt acks events before calling these (auto-ack); the
graph then runs on a pool of its own, so that a burst of questions never occupies Bolt's
listener pool, where slash commands and button clicks must be acked within Slack's 3 s."""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from slack_bolt import App, BoltContext, SayStream, SetStatus
from slack_sdk import WebClient

from bot.answering import ANSWER_THREADS
from bot.slack.conversation import Conversations

log = logging.getLogger(__name__)


def register(app: App, conversations: Conversations) -> None:
    answering = ThreadPoolExecutor(ANSWER_THREADS, thread_name_prefix="citebot-answer")

    def handle(event: dict, context: BoltContext, client: WebClient, via_mention: bool) -> None:
        # Bolt attaches set_status / say_stream for the event's thread (a top-level message's own ts).
        set_status: SetStatus | None = context.get("set_status")
        say_stream: SayStream | None = context.get("say_stream")

        def run() -> None:
            try:
                conversations.handle(event, context.bot_user_id, context.bot_id, client, via_mention=via_mention,
                                     set_status=set_status, say_stream=say_stream)
            except Exception:  # nothing else would see it: the future is never read
                log.exception("handling a message in %s failed", event.get("channel"))

        answering.submit(run)

    @app.event("app_mention")
    def on_mention(event: dict, context: BoltContext, client: WebClient) -> None:
        handle(event, context, client, via_mention=True)

    # Every message subtype lands here too (edits, joins…): answering none of them is the
    # conversation's call, and an unhandled event would make Bolt answer Slack with a 404.
    @app.event("message")
    def on_message(event: dict, context: BoltContext, client: WebClient) -> None:
        handle(event, context, client, via_mention=False)
