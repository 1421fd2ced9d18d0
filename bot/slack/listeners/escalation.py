""""Ask an expert", "Save as verified answer" and the experts' replies (bot/slack/experts.py).
The relay listener is registered before the messages listener: Bolt runs the first listener
whose matcher accepts an event, so a reply in an experts' thread is relayed, not answered."""
from __future__ import annotations

import logging

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.experts import ESCALATE_ACTION, SAVE_ACTION, SlackExperts

log = logging.getLogger(__name__)


def _tell(client: WebClient, body: dict, text: str | None) -> None:
    """An ephemeral note to the person who clicked, in the thread they clicked in."""
    if not text:
        return
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    thread = (body.get("message") or {}).get("thread_ts") or container.get("thread_ts")
    try:
        client.chat_postEphemeral(channel=channel, user=body["user"]["id"], thread_ts=thread, text=text)
    except SlackApiError as error:
        log.warning("could not tell %s: %s", body["user"]["id"], error.response.get("error"))


def register(app: App, experts: SlackExperts) -> None:
    @app.action(ESCALATE_ACTION)
    def on_escalate(ack: Ack, body: dict, action: dict, client: WebClient) -> None:
        ack()
        _tell(client, body, experts.escalate(client, body["user"]["id"], action))

    @app.action(SAVE_ACTION)
    def on_save(ack: Ack, body: dict, action: dict, client: WebClient) -> None:
        ack()  # the save indexes a document: Slack must have its answer first
        _tell(client, body, experts.save(client, body["user"]["id"], action))

    def expert_reply(event: dict) -> bool:
        return experts.is_expert_reply(event)

    @app.event("message", matchers=[expert_reply])
    def on_expert_reply(event: dict, context: BoltContext, client: WebClient) -> None:
        experts.relay(client, event, context.bot_user_id)
