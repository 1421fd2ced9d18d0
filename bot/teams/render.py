"""A Reply -> one Teams message in Teams' own AI-message idiom: `[n]` after the sentences a
source supports, one schema.org Message entity (the "AI generated" label and the citation list,
through the SDK's add_ai_metadata) and the native feedback loop (thumbs up/down with a comment)."""
from __future__ import annotations

from microsoft_agents.activity import Activity, ActivityTypes, ClientCitation, ClientCitationAppearance

from bot.reply import CLOSEST, DONT_KNOW, DONT_KNOW_WHY, MISSING, Reply, quote_ref, where_to_ask

# Teams' limits for a citation: the list, its title, its excerpt.
MAX_CITATIONS = 20
MAX_NAME = 80
MAX_ABSTRACT = 160
MAX_TEXT = 20_000  # well inside the ~28 KB a Teams message may carry
# `custom`: a click asks for our dialog (message/fetchTask), which asks why after a 👎 (bot/teams/feedback.py).
FEEDBACK_LOOP = {"feedbackLoop": {"type": "custom"}}


def escape(text: str) -> str:
    """Teams renders a little HTML in message text (`<at>`, tags): what the graph says is data."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# Markdown that Teams renders: each becomes its HTML character reference, which Teams shows as the
# character itself without acting on it.
_MARKDOWN = {ch: f"&#{ord(ch)};" for ch in "\\`*_[]()#+-!|~"}


def escape_markdown(text: str) -> str:
    """Text a reader typed, shown inside our markdown: neither a tag nor markdown of theirs acts."""
    return "".join(_MARKDOWN.get(ch, ch) for ch in escape(text))


def link(url: str, label: str) -> str:
    """A markdown link whose label and address cannot end it early (a "]" or ")" of their own)."""
    label = escape(label).replace("[", "(").replace("]", ")")
    return f"[{label}]({url.replace('(', '%28').replace(')', '%29').replace(' ', '%20')})"


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut) + "…"


def _markers(positions: tuple[int, ...]) -> str:
    return "".join(f"[{n}]" for n in positions if n <= MAX_CITATIONS)


def citations(reply: Reply) -> list[ClientCitation]:
    """One per source, numbered as the markers are; the abstract is what the answer took from
    it (the sentences that cite it), so no document text is shown that the answer did not show."""
    result = []
    for n, source in enumerate(reply.sources[:MAX_CITATIONS], 1):
        quoted = " ".join(s.text for s in reply.sentences if n in s.sources) or reply.body
        result.append(ClientCitation(position=n, appearance=ClientCitationAppearance(
            name=clip(source.label, MAX_NAME), url=source.url or None, abstract=clip(quoted, MAX_ABSTRACT))))
    return result


def _message(text: str, cited: list[ClientCitation] | None = None, ai: bool = True,
             feedback: bool = True) -> Activity:
    activity = Activity(type=ActivityTypes.message, text=text[:MAX_TEXT], text_format="markdown")
    if ai:
        activity.add_ai_metadata(cited or None)
    if feedback:
        activity.channel_data = dict(FEEDBACK_LOOP)
    return activity


def marked(reply: Reply) -> str:
    """The answer with each sentence's markers after it. A code block stands on lines of its own
    (its sentence comes with them): its closing fence must end its line, so its markers go on the
    next line, unless the sentence that leads in to it has marked the same sources already."""
    pieces, before = [], None
    for s in reply.sentences:
        if s.text.endswith("\n"):
            pieces.append(escape(s.text) + ("" if s.sources == before else _markers(s.sources)))
        else:
            pieces.append(f"{escape(s.text)} {_markers(s.sources)}".rstrip())
        before = s.sources
    return " ".join(pieces).strip()


def render(reply: Reply) -> Activity:
    if reply.status == "answered":
        answer = marked(reply)
        if reply.hedge:  # said first: the bot doubts this answer
            answer = f"_{escape(reply.hedge)}_\n\n{answer}"
        if reply.note:
            answer += f"\n\nℹ️ {escape(reply.note)}"
        return _message(answer, citations(reply))
    if reply.status == "insufficient_context":
        parts = [f"**{DONT_KNOW}** {DONT_KNOW_WHY}"]
        if reply.gap:
            parts.append(f"**{MISSING}** {escape(reply.gap)}")
        if reply.closest:
            parts.append(f"{CLOSEST} {link(reply.closest.url, reply.closest.label)}")
        if reply.ask_hint:
            parts.append(where_to_ask(reply.ask_hint))
        return _message("\n\n".join(parts))
    return _message(f"{escape(reply.body)}\n\n{quote_ref(reply.ref)}", ai=False, feedback=False)
