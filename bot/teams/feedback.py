"""Teams' 👍/👎 with a reason: the answer's feedback loop is Teams' `custom` one, so a click sends
`message/fetchTask` and Teams shows the dialog (task module) returned here; after a 👎 it asks
why (the same choices as Slack, bot/gaps.REASONS) and for an optional comment. Submitting it
sends `message/submitAction` whose `actionValue.feedback` is the form's inputs as a JSON string.
The default form's `feedbackText` is still read, for answers sent before the switch."""
from __future__ import annotations

import json

from microsoft_agents.activity import ContentTypes

from bot.gaps import REASONS

MAX_COMMENT = 2000
WHY = "What was wrong with it?"


def reaction_of(value) -> str:
    """like | dislike, from a fetchTask value (`data.actionValue`) or a submitAction one (`actionValue`)."""
    value = value if isinstance(value, dict) else {}
    data = value.get("data") if isinstance(value.get("data"), dict) else value
    action = data.get("actionValue") if isinstance(data.get("actionValue"), dict) else {}
    return str(action.get("reaction") or "")


def form(reaction: str) -> dict:
    """The fetchTask response: a dialog with the reasons (after a 👎) and a comment box."""
    body = [{"type": "Input.Text", "id": "comment", "isMultiline": True, "maxLength": MAX_COMMENT,
             "label": "Anything else? (optional)"}]
    if reaction == "dislike":
        choices = [{"title": label[:1].upper() + label[1:], "value": reason} for reason, label in REASONS.items()]
        body.insert(0, {"type": "Input.ChoiceSet", "id": "reason", "style": "expanded", "label": WHY, "choices": choices})
    card = {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "version": "1.5",
            "body": body, "actions": [{"type": "Action.Submit", "title": "Send"}]}
    return {"task": {"type": "continue", "value": {
        "title": "Thanks for telling me" if reaction == "dislike" else "Thanks!",
        "card": {"contentType": ContentTypes.adaptive_card, "content": card}}}}


def submitted(action: dict) -> tuple[str, str]:
    """(reason, comment) from a submitAction's actionValue; a reason not offered is dropped."""
    raw = action.get("feedback") if isinstance(action, dict) else None
    try:
        inputs = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return "", str(raw or "")[:MAX_COMMENT]
    if not isinstance(inputs, dict):
        return "", ""
    reason = str(inputs.get("reason") or "")
    comment = str(inputs.get("comment") or inputs.get("feedbackText") or "")
    return (reason if reason in REASONS else ""), comment[:MAX_COMMENT]
