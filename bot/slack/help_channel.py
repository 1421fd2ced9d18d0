"""Help channels (`answer: all` in the access file): a top-level question is answered in its
thread without a mention, but only when the answer is confident (CITEBOT_AUTO_MIN_CONFIDENCE).
Small talk, statements and questions the documents cannot answer get no reply at all: in a
channel where people talk to each other, a bot that says "I don't know" is noise. Follow-ups in
the thread are then answered like any thread Citebot has answered in."""
from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answering import Question
from bot.intent import classify, mentioned_users
from bot.slack.render import render
from bot.slack.threads import plain_text

log = logging.getLogger(__name__)


def answer_unasked(conversations, event: dict, client: WebClient, bot_user_id: str) -> None:
    """`conversations`: the Conversations whose answering service, settings, access and experts answer."""
    channel, ts, raw = event["channel"], event["ts"], event.get("text") or ""
    if mentioned_users(raw) - {bot_user_id}:
        return  # addressed to someone else
    question = plain_text(raw, bot_user_id)
    if classify(question) != "question" or not conversations.seen.first_time(("message", channel, ts)):
        return
    asked = Question("slack", channel, event["user"], question, [], conversations.access.for_channel(channel))
    reply = conversations.answering.answer_unasked(asked, conversations.settings.auto_min_confidence)
    if reply is None:
        return
    message = render(reply)
    if conversations.experts:
        message = conversations.experts.decorate(message, reply.output, channel, ts, question, event["user"])
    try:
        client.chat_postMessage(channel=channel, thread_ts=ts, **message)
    except SlackApiError as error:
        log.warning("[%s] the answer could not be posted in %s: %s", asked.ref, channel, error.response.get("error"))
