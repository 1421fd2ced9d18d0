"""Mentions, DMs and thread follow-ups. Bolt acks events before calling these (auto-ack), so the
graph already runs after the ack, on Bolt's listener thread pool."""
from __future__ import annotations

from slack_bolt import App, BoltContext
from slack_sdk import WebClient

from ..conversation import Conversations


def register(app: App, conversations: Conversations) -> None:
    @app.event("app_mention")
    def on_mention(event: dict, context: BoltContext, client: WebClient) -> None:
        conversations.handle(event, context.bot_user_id, context.bot_id, client, via_mention=True)

    # Every message subtype lands here too (edits, joins…): answering none of them is the
    # conversation's call, and an unhandled event would make Bolt answer Slack with a 404.
    @app.event("message")
    def on_message(event: dict, context: BoltContext, client: WebClient) -> None:
        conversations.handle(event, context.bot_user_id, context.bot_id, client, via_mention=False)
