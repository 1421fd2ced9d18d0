"""A chat message as the plain text of a question: Slack's markup (mentions, channel and link
syntax, emoji codes, escaped characters) and control characters out, whitespace collapsed.
Shared by the query's preparation and by the final answer, which tells the asker how it read
the question."""
from __future__ import annotations

import html
import re
import unicodedata

_MENTION = re.compile(r"<[@!](?:[A-Z0-9]+|subteam\^[A-Z0-9]+|here|channel|everyone)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+(?:\|([^>]*))?>")
_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")
_EMOJI_CODE = re.compile(r":[a-z0-9_+\-']+:")


def normalize(raw: str) -> str:
    """Slack markup to plain text, control characters out, whitespace collapsed."""
    text = _MENTION.sub(" ", raw)
    text = _CHANNEL.sub(lambda m: f"#{m.group(1) or 'channel'}", text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = html.unescape(text)  # Slack escapes &, < and > in message text
    text = _EMOJI_CODE.sub(" ", text)
    text = text.replace("```", " ").replace("`", "")
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    return re.sub(r"\s+", " ", text).strip()
