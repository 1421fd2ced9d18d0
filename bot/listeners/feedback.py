"""The helpful / not helpful buttons under each answer."""
from __future__ import annotations

import logging
import re

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ..feedback import FeedbackLog, record_from_click
from ..render import FEEDBACK_ACTIONS

log = logging.getLogger(__name__)
THANKS = {"helpful": "Thanks, glad it helped!",
          "not_helpful": "Thanks for telling me. I've noted that this answer didn't help."}


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
