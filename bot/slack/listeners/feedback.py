"""Slack's native feedback buttons (a feedback_buttons element) under each answer."""
from __future__ import annotations

import json
import logging

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.feedback import FeedbackLog
from bot.gaps import GapLog
from bot.slack.listeners.reasons import why_blocks
from bot.slack.render import FEEDBACK_ACTION, VOTES

log = logging.getLogger(__name__)
THANKS = {"helpful": "Thanks, glad it helped!",
          "not_helpful": "Thanks for telling me. I've noted that this answer didn't help."}


def record_from_click(body: dict, action: dict) -> dict | None:
    """Who voted what on which answer; the clicked button's value carries the vote and the
    answer's ref, status, question, cited chunk ids and thread turns (see render._feedback)."""
    message = body.get("message") or {}
    try:
        answer = json.loads(action.get("value") or "{}")
    except ValueError:
        answer = {}
    if answer.get("vote") not in VOTES:
        return None
    return {"platform": "slack", "vote": answer["vote"], "user": body["user"]["id"],
            "channel": (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id"),
            "message_ts": message.get("ts"), "thread_ts": message.get("thread_ts"),
            "ref": answer.get("ref"), "status": answer.get("status"),
            "question": answer.get("q"), "chunk_ids": answer.get("chunks", []), "history": answer.get("h")}


def register(app: App, feedback: FeedbackLog, gaps: GapLog, experts=None) -> None:
    """`experts` (bot/slack/experts.SlackExperts): a 👎 also offers "Ask an expert" where the place has them."""
    @app.action(FEEDBACK_ACTION)
    def on_feedback(ack: Ack, body: dict, action: dict, client: WebClient) -> None:
        ack()
        record = record_from_click(body, action)
        if record is None:
            log.warning("feedback click without a vote: %r", (action.get("value") or "")[:200])
            return
        record = feedback.append(record)
        gaps.negative_feedback(record)
        extra = {"blocks": why_blocks(record, experts)} if record["vote"] == "not_helpful" else {}
        try:  # only the person who clicked sees the thanks (and, for a 👎, the question why)
            client.chat_postEphemeral(channel=record["channel"], user=record["user"],
                                      thread_ts=record.get("thread_ts"), text=THANKS[record["vote"]], **extra)
        except SlackApiError as error:
            log.warning("could not thank %s: %s", record["user"], error.response.get("error"))
