"""The graph's final_output -> one Slack message (fallback `text` + Block Kit), within Slack's
limits: 3,000 characters per section text, 50 blocks, 2,000 per button value."""
from __future__ import annotations

import json

from bot.reply import (CLOSEST, DONT_KNOW, DONT_KNOW_WHY, MISSING, Reply, Source, apology as apology_reply, build_reply,
                     quote_ref, safe_url, where_to_ask)

MAX_SECTION = 3000
MAX_BLOCKS = 50
MAX_TEXT = 3000  # the notification / fallback text; it is also what the next turn reads back
MAX_BUTTON_VALUE = 2000
PLACEHOLDER = "Looking through the handbook…"
TRUNCATED = " … (answer truncated)"
FEEDBACK_ACTION = "feedback"  # Slack's native feedback_buttons element; its value names the vote
VOTES = ("helpful", "not_helpful")


def escape(text: str) -> str:
    """mrkdwn control characters; everything the graph says is data, never markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label: str) -> str:
    if not safe_url(url):
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


def _sources(sources: tuple[Source, ...]) -> str:
    lines = ["• " + link(source.url, source.label) for source in sources]
    text = "*Sources*"
    for shown, line in enumerate(lines):
        more = f"\n… and {len(lines) - shown} more"
        if len(text) + 1 + len(line) + len(more) > MAX_SECTION:
            return text + more
        text += "\n" + line
    return text


def _feedback(reply: Reply) -> dict:
    """A context_actions block with a feedback_buttons element: each button's value carries the
    vote and what the feedback is about (the answer's ref, status, question, cited chunks, and
    how many thread turns it was asked after)."""
    record = {"ref": reply.ref, "status": reply.status, "q": reply.question[:500], "chunks": list(reply.chunk_ids),
              "h": reply.history}

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

    return {"type": "context_actions", "block_id": f"feedback-{reply.ref}", "elements": [{
        "type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
        "positive_button": button("helpful", ":+1:", "This answer helped"),
        "negative_button": button("not_helpful", ":-1:", "This answer did not help")}]}


def _fit(sections: list[str], room: int) -> list[dict]:
    if len(sections) > room:
        last = split_text(sections[room - 1], MAX_SECTION - len(TRUNCATED))[0]
        sections = sections[:room - 1] + [last + TRUNCATED]
    return [_section(text) for text in sections]


def render_answer(output: dict, ref: str, question: str = "", ask_hint: str = "") -> dict:
    """`{"text", "blocks"}` for chat.postMessage / chat.update. `ask_hint` is admin-set mrkdwn
    (e.g. a channel link)."""
    return render(build_reply(output, ref, question, ask_hint))


def answer_body(output: dict) -> str:
    """The answer's own words (plain text, no note): what a stream may show before the end."""
    return build_reply(output, "").body if output.get("status") == "answered" else ""


def tail(reply: Reply) -> list[dict]:
    """What follows the answer's words: the note, the sources, the feedback buttons. A streamed
    answer gets these when the stream stops."""
    blocks = [_context(":information_source: " + split_text(escape(reply.note), MAX_SECTION - 30)[0])] if reply.note else []
    if reply.sources:
        blocks.append(_context(_sources(reply.sources)))
    return blocks + [_feedback(reply)]


def render(reply: Reply) -> dict:
    if reply.status == "answered":
        closing = tail(reply)
        opening = [_section(f"_{escape(reply.hedge)}_")] if reply.hedge else []
        text = escape(reply.plain)
        return {"text": split_text(text, MAX_TEXT)[0] if text else "",
                "blocks": opening + _fit(split_text(escape(reply.body)), MAX_BLOCKS - len(opening) - len(closing)) + closing}
    if reply.status == "insufficient_context":
        blocks = [_section(f"*{DONT_KNOW}* {DONT_KNOW_WHY}")]
        if reply.gap:
            blocks.append(_section(f"*{MISSING}* " + split_text(escape(reply.gap), MAX_SECTION - 30)[0]))
        if reply.closest:
            blocks.append(_context(f"{CLOSEST} {link(reply.closest.url, reply.closest.label)}"))
        if reply.ask_hint:
            blocks.append(_context(where_to_ask(reply.ask_hint)))
        blocks.append(_feedback(reply))
        return {"text": split_text(escape(reply.plain), MAX_TEXT)[0], "blocks": blocks}
    text = split_text(escape(reply.body), MAX_SECTION - 80)[0]
    return {"text": text, "blocks": [_section(text), _context(quote_ref(reply.ref))]}


def apology(ref: str, message: str = "") -> dict:
    return render(apology_reply(ref, message))
