"""Help channels (`answer: all` in the access file): a top-level question is answered in its
thread without a mention, but only when the answer is confident (CITEBOT_AUTO_MIN_CONFIDENCE).
Small talk, statements and questions the documents cannot answer get no reply at all: in a
channel where people talk to each other, a bot that says "I don't know" is noise. Follow-ups in
the thread are then answered like any thread Citebot has answered in."""
from __future__ import annotations

import logging
import uuid

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.intent import classify, mentioned_users
from bot.slack.render import render_answer
from bot.slack.threads import plain_text

log = logging.getLogger(__name__)


def answer_unasked(conversations, event: dict, client: WebClient, bot_user_id: str) -> None:
    """`conversations`: the Conversations whose engine, settings, access and experts answer."""
    channel, ts, raw = event["channel"], event["ts"], event.get("text") or ""
    if mentioned_users(raw) - {bot_user_id}:
        return  # addressed to someone else
    question = plain_text(raw, bot_user_id)
    if classify(question) != "question" or not conversations.seen.first_time(("message", channel, ts)):
        return
    output = conversations.engine.ask(question, [], access=conversations.access.for_channel(channel))
    ref = uuid.uuid4().hex[:8]
    settings = conversations.settings
    if output["status"] != "answered" or output["confidence"] < settings.auto_min_confidence:
        log.info("[%s] help channel %s: %s at confidence %.2f, not replying", ref, channel, output["status"],
                 output["confidence"])
        return
    message = render_answer(output, ref, question, settings.ask_hint)
    if conversations.experts:
        message = conversations.experts.decorate(message, output, channel, ts, question, event["user"])
    try:
        client.chat_postMessage(channel=channel, thread_ts=ts, **message)
        log.info("[%s] help channel %s: answered unasked at confidence %.2f", ref, channel, output["confidence"])
    except SlackApiError as error:
        log.warning("[%s] the answer could not be posted in %s: %s", ref, channel, error.response.get("error"))
