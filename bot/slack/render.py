"""The graph's final_output -> one Slack message (fallback `text` + Block Kit), within Slack's
limits: 3,000 characters per section text, 50 blocks, 2,000 per feedback button value."""
from __future__ import annotations

import json
import re

MAX_SECTION = 3000
MAX_BLOCKS = 50
MAX_TEXT = 3000  # the notification / fallback text; it is also what the next turn reads back
MAX_BUTTON_VALUE = 2000
PLACEHOLDER = "Looking through the handbook…"
TRUNCATED = " … (answer truncated)"
FEEDBACK_ACTION = "feedback"  # Slack's native feedback_buttons element; its value names the vote
VOTES = ("helpful", "not_helpful")

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
    """A context_actions block with a feedback_buttons element: each button's value carries the
    vote and what the feedback is about (the answer's ref, status, question, cited chunks)."""
    record = {"ref": ref, "status": output["status"], "q": question[:500],
              "chunks": [c["chunk_id"] for c in output.get("citations", [])]}

    def value(vote: str) -> str:
        return json.dumps({"vote": vote, **record}, ensure_ascii=False)

    while len(value("not_helpful")) > MAX_BUTTON_VALUE and (record["chunks"] or record["q"]):
        if record["chunks"]:
            record["chunks"].pop()
        else:
            record["q"] = record["q"][:-50]

    def button(vote: str, label: str, spoken: str) -> dict:
        return {"text": {"type": "plain_text", "text": label, "emoji": True},
                "accessibility_label": spoken, "value": value(vote)}

    return {"type": "context_actions", "block_id": f"feedback-{ref}", "elements": [{
        "type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
        "positive_button": button("helpful", ":+1:", "This answer helped"),
        "negative_button": button("not_helpful", ":-1:", "This answer did not help")}]}


def _fit(sections: list[str], room: int) -> list[dict]:
    if len(sections) > room:
        last = split_text(sections[room - 1], MAX_SECTION - len(TRUNCATED))[0]
        sections = sections[:room - 1] + [last + TRUNCATED]
    return [_section(text) for text in sections]


def answer_body(output: dict) -> str:
    """The answer's own words (plain text, no note): what a stream may show before the end."""
    return _split_note(output.get("answer", ""))[0] if output.get("status") == "answered" else ""


def answer_tail(output: dict, ref: str, question: str = "") -> list[dict]:
    """What follows the answer's words: the note, the sources, the feedback buttons. A streamed
    answer gets these when the stream stops."""
    note = _split_note(output.get("answer", ""))[1]
    tail = [_context(":information_source: " + split_text(escape(note), MAX_SECTION - 30)[0])] if note else []
    if output.get("citations"):
        tail.append(_context(_sources(output["citations"])))
    return tail + [_feedback(output, ref, question)]


def render_answer(output: dict, ref: str, question: str = "", ask_hint: str = "") -> dict:
    """`{"text", "blocks"}` for chat.postMessage / chat.update. `ask_hint` is admin-set mrkdwn
    (e.g. a channel link)."""
    status = output.get("status")
    if status == "answered":
        tail = answer_tail(output, ref, question)
        text = escape(output.get("answer", ""))
        return {"text": split_text(text, MAX_TEXT)[0] if text else "",
                "blocks": _fit(split_text(escape(answer_body(output))), MAX_BLOCKS - len(tail)) + tail}
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
