"""The graph's final_output -> one Slack message (fallback `text` + Block Kit), within Slack's
limits: 3,000 characters per section text, 50 blocks, 2,000 per button value."""
from __future__ import annotations

import json
import re

MAX_SECTION = 3000
MAX_BLOCKS = 50
MAX_TEXT = 3000  # the notification / fallback text; it is also what the next turn reads back
MAX_BUTTON_VALUE = 2000
PLACEHOLDER = "Looking through the handbook…"
TRUNCATED = " … (answer truncated)"
FEEDBACK_ACTIONS = {"feedback_helpful": "helpful", "feedback_not_helpful": "not_helpful"}

# Only links Slack will open; anything else (relative paths, javascript:) is shown as text.
_SAFE_URL = re.compile(r"^(https?://|mailto:)\S+$", re.IGNORECASE)


def escape(text: str) -> str:
    """mrkdwn control characters; everything the graph says is data, never markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label: str) -> str:
    if not url or not _SAFE_URL.match(url):
        return escape(label)
    safe = url.replace("&", "&amp;").replace("<", "%3C").replace(">", "%3E").replace("|", "%7C")
    return f"<{safe}|{escape(label)}>"


def split_text(text: str, limit: int = MAX_SECTION) -> list[str]:
    """Pieces of at most `limit` characters, cut at the strongest boundary in the second half
    of the window (paragraph, line, sentence, word) and never inside an `&amp;` entity."""
    pieces = []
    while len(text) > limit:
        window = text[:limit]
        cut = next((i + len(sep) for sep in ("\n\n", "\n", ". ", " ")
                    if (i := window.rfind(sep)) >= limit // 2), 0)
        if not cut:
            cut = limit
            amp = window.rfind("&", limit - len("&amp;"))
            if amp != -1 and ";" not in window[amp:]:
                cut = amp
        pieces.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    pieces.append(text)
    return [piece for piece in pieces if piece]


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _split_note(answer: str) -> tuple[str, str]:
    # The graph appends its conflict note to the answer as "(Note: …)"; the bot shows it apart
    # so the answer reads cleanly. Any other shape simply stays in the answer.
    start = answer.rfind("(Note: ")
    if start > 0 and answer.rstrip().endswith(")"):
        return answer[:start].rstrip(), answer[start + 1:].rstrip()[:-1]
    return answer, ""


def _sources(citations: list[dict]) -> str:
    lines, seen = [], set()
    for c in citations:
        label = " › ".join(part for part in (c.get("title"), c.get("section")) if part) or c.get("source_id", "")
        key = (label, c.get("url", ""))
        if key not in seen:
            seen.add(key)
            lines.append("• " + link(c.get("url", ""), label))
    text = "*Sources*"
    for shown, line in enumerate(lines):
        more = f"\n… and {len(lines) - shown} more"
        if len(text) + 1 + len(line) + len(more) > MAX_SECTION:
            return text + more
        text += "\n" + line
    return text


def _feedback(output: dict, ref: str, question: str) -> dict:
    record = {"ref": ref, "status": output["status"], "q": question[:500],
              "chunks": [c["chunk_id"] for c in output.get("citations", [])]}
    value = json.dumps(record, ensure_ascii=False)
    while len(value) > MAX_BUTTON_VALUE and record["chunks"]:
        record["chunks"].pop()
        value = json.dumps(record, ensure_ascii=False)
    buttons = [("feedback_helpful", ":+1: Helpful"), ("feedback_not_helpful", ":-1: Not helpful")]
    return {"type": "actions", "block_id": "feedback", "elements": [
        {"type": "button", "action_id": action, "text": {"type": "plain_text", "text": label, "emoji": True},
         "value": value} for action, label in buttons]}


def _fit(sections: list[str], room: int) -> list[dict]:
    if len(sections) > room:
        last = split_text(sections[room - 1], MAX_SECTION - len(TRUNCATED))[0]
        sections = sections[:room - 1] + [last + TRUNCATED]
    return [_section(text) for text in sections]


def render_answer(output: dict, ref: str, question: str = "", ask_hint: str = "") -> dict:
    """`{"text", "blocks"}` for chat.update. `ask_hint` is admin-set mrkdwn (e.g. a channel link)."""
    status = output.get("status")
    if status == "answered":
        body, note = _split_note(output.get("answer", ""))
        tail = [_context(":information_source: " + split_text(escape(note), MAX_SECTION - 30)[0])] if note else []
        if output.get("citations"):
            tail.append(_context(_sources(output["citations"])))
        tail.append(_feedback(output, ref, question))
        text = escape(output.get("answer", ""))
        return {"text": split_text(text, MAX_TEXT)[0] if text else "",
                "blocks": _fit(split_text(escape(body)), MAX_BLOCKS - len(tail)) + tail}
    if status == "insufficient_context":
        gap = output.get("knowledge_gap") or ""
        blocks = [_section("*I don't know.* The documents I can search don't answer this, so I won't guess.")]
        if gap:
            blocks.append(_section("*What's missing:* " + split_text(escape(gap), MAX_SECTION - 30)[0]))
        if ask_hint:
            blocks.append(_context(f"Try asking in {ask_hint}; once it's written down, I can answer it too."))
        blocks.append(_feedback(output, ref, question))
        return {"text": split_text("I don't know. " + escape(gap), MAX_TEXT)[0], "blocks": blocks}
    return apology(ref, output.get("answer") or "")


def apology(ref: str, message: str = "") -> dict:
    message = message or "Sorry, something went wrong while I was looking this up."
    text = split_text(escape(message), MAX_SECTION - 80)[0]
    return {"text": text, "blocks": [
        _section(text), _context(f"If it keeps happening, tell an admin and quote reference `{ref}`.")]}
