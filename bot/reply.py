"""What Citebot says, whatever the platform: the graph's final_output turned into a reply model
(answer sentences with the sources they rest on, the notes on it, "I don't know" with the gap
and where to ask, or an apology) and the wording both platforms share. Slack renders it as Block
Kit, Teams as an AI message with [n] citations; neither invents its own words for these."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

DONT_KNOW = "I don't know."
DONT_KNOW_WHY = "The documents I can search don't answer this, so I won't guess."
MISSING = "What's missing:"
CLOSEST = "Closest section:"
SORRY = "Sorry, something went wrong while I was looking this up."
# Said first, before an answer the flow marked `hedged` (its doubt model expects it to be wrong):
# the asker still gets the quote and its sources, and knows to check them.
HEDGE = "I'm not sure this answers your question. The closest I found:"

# Only links a chat client will open; anything else (relative paths, javascript:) is shown as text.
_SAFE_URL = re.compile(r"^(https?://|mailto:)\S+$", re.IGNORECASE)


def safe_url(url: str | None) -> str:
    return url if url and _SAFE_URL.match(url) else ""


def where_to_ask(hint: str) -> str:
    return f"Try asking in {hint}; once it's written down, I can answer it too."


def quote_ref(ref: str) -> str:
    return f"If it keeps happening, tell an admin and quote reference `{ref}`."


@dataclass(frozen=True)
class Source:
    label: str  # "Title › Section"
    url: str  # with the section anchor; "" when there is no link a client would open
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True)
class Sentence:
    text: str
    sources: tuple[int, ...]  # 1-based positions in Reply.sources


@dataclass(frozen=True)
class Reply:
    status: str  # answered | insufficient_context | failed
    text: str  # the answer with its note in brackets after it (with_notes)
    body: str  # the answer without the note
    note: str  # the graph's notes as one ("" when it had none): a typo's reading, a superseded source
    hedge: str  # HEDGE when the answer is one the bot doubts, said before it; else ""
    sentences: tuple[Sentence, ...]
    sources: tuple[Source, ...]
    gap: str
    closest: Source | None  # of an "I don't know": the section its gap names, when it has a link
    ask_hint: str  # where people can ask instead (CITEBOT_ASK_HINT)
    ref: str  # quoted to the user on failure, logged with the details
    question: str
    chunk_ids: tuple[str, ...]  # every cited chunk, in citation order: what feedback is about
    # The graph's final_output the reply was built from (confidence, citations' sources, the gap),
    # for what a platform adds to an answer: the verified mark, "Ask an expert".
    output: dict = field(default_factory=dict, compare=False, repr=False)
    # Thread turns the question was asked after: `citebot tune --feedback` learns only from
    # questions asked alone, the ones it can ask again as they were asked.
    history: int = 0

    @property
    def plain(self) -> str:
        """The reply as one line of text: a notification, and what the next turn reads back."""
        if self.status == "insufficient_context":
            return f"{DONT_KNOW} {self.gap}".strip()
        if self.status == "answered":
            return f"{self.hedge} {self.text}" if self.hedge else self.text
        return self.body

    def feedback_record(self) -> dict:
        """What a vote on this reply is about, in every platform's feedback record."""
        return {"ref": self.ref, "status": self.status, "question": self.question[:500],
                "chunk_ids": list(self.chunk_ids), "history": self.history}


def label(citation: dict) -> str:
    return " › ".join(part for part in (citation.get("title"), citation.get("section")) if part) \
        or citation.get("source_id", "")


def note_text(notes: list[str]) -> str:
    """The graph's notes on an answer (`final_output["notes"]`) as one note: "Note: I read
    “vacaton” as “vacation”. An archived source, … supersedes it." ("" when there are none)."""
    notes = [note.rstrip(".") if at < len(notes) - 1 else note for at, note in enumerate(notes)]
    joined = ". ".join([*notes[:1], *(note[0].upper() + note[1:] for note in notes[1:])])
    return f"Note: {joined}" if joined else ""


def with_notes(output: dict) -> str:
    """The answer with its note after it in brackets, as one line of text: what a plain-text
    reader (the CLI, a notification) shows, and what the next turn reads back."""
    note = note_text(output.get("notes") or [])
    answer = output.get("answer") or ""
    return f"{answer} ({note})" if note else answer


def _sources(citations: list[dict]) -> tuple[tuple[Source, ...], dict[str, int]]:
    """Citations of the same section collapse into one source; chunk id -> its position."""
    order: dict[tuple[str, str], list[str]] = {}
    for c in citations:
        order.setdefault((label(c), safe_url(c.get("url"))), []).extend(c.get("chunk_ids") or [c.get("chunk_id", "")])
    sources = tuple(Source(name, url, tuple(ids)) for (name, url), ids in order.items())
    return sources, {chunk: n for n, source in enumerate(sources, 1) for chunk in source.chunk_ids}


def build_reply(output: dict, ref: str, question: str = "", ask_hint: str = "",
                sentences: list[dict] | tuple = ()) -> Reply:
    """`sentences` (Engine.ask_cited) says which sources each sentence rests on; without them
    the whole answer rests on all its sources."""
    status = output.get("status") or "failed"
    citations = (output.get("citations") or []) if status == "answered" else []
    sources, position = _sources(citations)
    body = output.get("answer") or ""
    note = note_text(output.get("notes") or []) if status == "answered" else ""
    text = with_notes(output) if status == "answered" else body
    if status == "failed":
        body = text or SORRY
    marked = tuple(Sentence(s["text"], tuple(sorted({position[c] for c in s.get("chunk_ids", []) if c in position})))
                   for s in sentences if s.get("text"))
    if status == "answered" and not marked and body:
        marked = (Sentence(body, tuple(range(1, len(sources) + 1))),)
    near = output.get("closest") if status == "insufficient_context" else None
    closest = Source(label(near), safe_url(near.get("url")), ()) if near and safe_url(near.get("url")) else None
    hedge = HEDGE if status == "answered" and output.get("hedged") else ""
    return Reply(status=status, text=text, body=body, note=note, hedge=hedge, sentences=marked, sources=sources,
                 gap=(output.get("knowledge_gap") or "") if status == "insufficient_context" else "",
                 closest=closest,
                 ask_hint=ask_hint, ref=ref, question=question,
                 chunk_ids=tuple(i for c in citations for i in (c.get("chunk_ids") or [c.get("chunk_id")]) if i),
                 output=dict(output))


def apology(ref: str, message: str = "") -> Reply:
    return build_reply({"status": "failed", "answer": message}, ref)
