"""The helpful / not helpful buttons under each answer."""
from __future__ import annotations

import json
import logging
import re

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ...feedback import FeedbackLog
from ..render import FEEDBACK_ACTIONS

log = logging.getLogger(__name__)
THANKS = {"helpful": "Thanks, glad it helped!",
          "not_helpful": "Thanks for telling me. I've noted that this answer didn't help."}


def record_from_click(body: dict, action: dict) -> dict:
    """Who voted what on which answer; the button value carries the answer's ref, status,
    question and cited chunk ids (see render._feedback)."""
    message = body.get("message") or {}
    try:
        answer = json.loads(action.get("value") or "{}")
    except ValueError:
        answer = {}
    return {"platform": "slack", "vote": FEEDBACK_ACTIONS[action["action_id"]], "user": body["user"]["id"],
            "channel": (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id"),
            "message_ts": message.get("ts"), "thread_ts": message.get("thread_ts"),
            "ref": answer.get("ref"), "status": answer.get("status"),
            "question": answer.get("q"), "chunk_ids": answer.get("chunks", [])}


def register(app: App, feedback: FeedbackLog) -> None:
    @app.action(re.compile("^(" + "|".join(FEEDBACK_ACTIONS) + ")$"))
    def on_feedback(ack: Ack, body: dict, action: dict, client: WebClient) -> None:
        ack()
        record = feedback.append(record_from_click(body, action))
        try:  # only the person who clicked sees the thanks; the buttons stay for everyone else
            client.chat_postEphemeral(channel=record["channel"], user=record["user"],
                                      thread_ts=record.get("thread_ts"), text=THANKS[record["vote"]])
        except SlackApiError as error:
            log.warning("could not thank %s: %s", record["user"], error.response.get("error"))
