"""After a 👎: why (wrong, outdated, incomplete, not what I asked), an optional comment, and
"Ask an expert" where the place has experts. Shown only to the person who voted; each choice
updates that person's vote in the feedback log and the gap log (`citebot gaps` shows them)."""
from __future__ import annotations

import json
import logging
import re

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.feedback import FeedbackLog
from bot.gaps import REASONS, GapLog
from bot.slack.experts import SlackExperts, escalate_button
from bot.slack.render import escape

log = logging.getLogger(__name__)
REASON_ACTION = "feedback_reason_"  # + the reason: action ids are unique within a block
COMMENT_ACTION = "feedback_comment"
ASK_WHY = "Thanks for telling me. What was wrong with it? (Only you can see this.)"
MAX_COMMENT = 2000


def why_blocks(record: dict, experts: SlackExperts | None) -> list[dict]:
    """The choice offered with the thanks for a 👎 (`record`: the vote as recorded)."""
    ref, channel, thread = record.get("ref") or "", record.get("channel") or "", record.get("thread_ts") or ""
    buttons = [{"type": "button", "action_id": REASON_ACTION + reason, "text": {"type": "plain_text", "text": label.capitalize()},
                "value": json.dumps({"ref": ref, "reason": reason})} for reason, label in REASONS.items()]
    if experts and thread and experts.access.place(channel).experts:
        buttons.append(escalate_button(record.get("question") or "", record["user"], "", None, channel, thread))
    return [{"type": "section", "text": {"type": "mrkdwn", "text": ASK_WHY}},
            {"type": "actions", "block_id": f"why|{ref}", "elements": buttons},
            {"type": "input", "block_id": f"comment|{ref}", "dispatch_action": True, "optional": True,
             "label": {"type": "plain_text", "text": "Anything to add? (press Enter to send)"},
             "element": {"type": "plain_text_input", "action_id": COMMENT_ACTION, "max_length": MAX_COMMENT}}]


def _voted(feedback: FeedbackLog, record: dict, user: str) -> bool:
    """The record is this person's vote: the log stores voters hashed (as the gap log does)."""
    if feedback.hasher is None:
        return record.get("user") == user
    return record.get("user") == feedback.hasher(str(record.get("platform") or ""), user)


def register(app: App, feedback: FeedbackLog, gaps: GapLog) -> None:
    def update(body: dict, client: WebClient, ref: str, **change) -> None:
        user = body["user"]["id"]
        mine = [r for r in feedback.read() if r.get("ref") == ref and _voted(feedback, r, user)]
        if not ref or not mine:
            log.warning("a reason for an unknown vote (%s by %s)", ref, user)
            return
        # The stored vote names its voter as a hash; the update is appended with the id itself,
        # which the log hashes once more like any vote (never a hash of the hash).
        record = feedback.append({**mine[-1], **change, "user": user})
        gaps.negative_feedback(record)
        said = REASONS.get(change.get("reason", ""), "") or "your comment"
        try:
            client.chat_postEphemeral(channel=record["channel"], user=user, thread_ts=record.get("thread_ts"),
                                      text=f"Noted: {escape(said)}. Thank you.")
        except SlackApiError as error:
            log.warning("could not thank %s: %s", user, error.response.get("error"))

    @app.action(re.compile("^" + REASON_ACTION))
    def on_reason(ack: Ack, body: dict, action: dict, client: WebClient) -> None:
        ack()
        try:
            value = json.loads(action.get("value") or "{}")
        except ValueError:
            value = {}
        if value.get("reason") in REASONS:
            update(body, client, value.get("ref") or "", reason=value["reason"])

    @app.action(COMMENT_ACTION)
    def on_comment(ack: Ack, body: dict, action: dict, client: WebClient) -> None:
        ack()
        comment = (action.get("value") or "").strip()[:MAX_COMMENT]
        if comment:
            update(body, client, (action.get("block_id") or "").partition("|")[2], comment=comment)
