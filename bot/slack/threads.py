"""A Slack thread (conversations.replies) -> the graph's `history` turns, bounded."""
from __future__ import annotations

import re

from slack_sdk import WebClient

PAGE = 200
MAX_MESSAGES = 1000  # longer threads are read up to here; only their tail becomes history
MAX_TURN_CHARS = 2000  # one pasted log in a thread must not crowd out the question
# Edits of ordinary messages, broadcasts and messages with files are still people talking.
PEOPLE_SUBTYPES = {None, "thread_broadcast", "file_share"}

_MARKUP = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


def plain_text(text: str, bot_user_id: str | None = None) -> str:
    """Slack's wire format -> what a person reads: links to their labels, mentions to names
    (our own mention dropped), entities unescaped."""

    def replace(match: re.Match) -> str:
        target, label = match.group(1), match.group(2)
        if target == f"@{bot_user_id}":
            return ""
        if target[:1] in "@#!":
            prefix = "#" if target[0] == "#" else "@"
            return prefix + (label or target[1:].split("^")[0]).lstrip("@#")
        return label or target

    text = _MARKUP.sub(replace, text or "")
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return re.sub(r"[ \t]+", " ", text).strip()


def fetch_thread(client: WebClient, channel: str, thread_ts: str) -> list[dict]:
    """All messages of the thread, oldest first (up to MAX_MESSAGES, keeping the newest)."""
    messages: list[dict] = []
    cursor = None
    for _ in range(MAX_MESSAGES // PAGE):
        page = client.conversations_replies(channel=channel, ts=thread_ts, limit=PAGE, cursor=cursor)
        messages += page.get("messages", [])
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not page.get("has_more") or not cursor:
            break
    return messages[-MAX_MESSAGES:]


def is_from(message: dict, bot_user_id: str | None, bot_id: str | None) -> bool:
    return bool((bot_id and message.get("bot_id") == bot_id)
                or (bot_user_id and message.get("user") == bot_user_id))


def history(messages: list[dict], before_ts: str, bot_user_id: str | None, bot_id: str | None,
            max_turns: int, skip_texts: tuple[str, ...] = ()) -> list[dict]:
    """The last `max_turns` exchanges before `before_ts`: people are `user`, Citebot is
    `assistant`; other bots and placeholders (`skip_texts`) are not part of the conversation."""
    turns = []
    for message in messages:
        if _ts(message.get("ts", "0")) >= _ts(before_ts):
            continue
        ours = is_from(message, bot_user_id, bot_id)
        if not ours and (message.get("bot_id") or message.get("subtype") not in PEOPLE_SUBTYPES):
            continue
        if ours and message.get("text") in skip_texts:
            continue
        content = plain_text(message.get("text", ""), bot_user_id)[:MAX_TURN_CHARS]
        if content:
            turns.append({"role": "assistant" if ours else "user", "content": content})
    return turns[-2 * max_turns:] if max_turns > 0 else []


def _ts(ts: str) -> tuple[int, int]:
    # Compare numerically: "1700000000.1" and floats at 1.7e9 both mislead.
    seconds, _, fraction = str(ts).partition(".")
    return int(seconds), int((fraction or "0").ljust(6, "0")[:6])
