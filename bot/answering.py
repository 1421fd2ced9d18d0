"""The answering service both chat platforms call: one question in, one Reply out (bot/reply.py).
It runs the graph with the place's scope and the thread's history, records an "I don't know" in
the gap log, turns a crash into an apology whose reference is quoted to the user while the details
stay in the log, and writes the one log line per answer. The platform adapters (slack/, teams/)
only turn events into a Question and the Reply into a message."""
from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from rag_graph.engine import Scope

from bot.gaps import GapLog
from bot.reply import Reply, apology, build_reply

log = logging.getLogger(__name__)
# Each platform answers on a pool of its own this size: graph runs are CPU-bound on a small
# machine, and more threads than this only queue inside torch.
ANSWER_THREADS = 4


def new_ref() -> str:
    """Quoted to the user when something fails, and logged with the details."""
    return uuid.uuid4().hex[:8]


@dataclass
class Question:
    platform: str  # "slack" | "teams": the gap log's and the feedback records' platform
    place: str | None  # the channel or conversation the answer goes to
    asker: str | None  # the platform's user id; the gap log keeps only a salted hash of it
    text: str
    turns: list[dict]  # the thread before the question, [{role, content}]
    scope: Scope | None  # what the place may read (bot/access.py)
    ref: str = field(default_factory=new_ref)
    started: float = field(default_factory=time.perf_counter)


class Answering:
    def __init__(self, engine, gaps: GapLog, ask_hint: str = ""):
        self.engine, self.gaps, self.ask_hint = engine, gaps, ask_hint

    def answer(self, question: Question, on_text: Callable[[str, list[dict]], None] | None = None,
               cited: bool = False, record_gap: bool = True) -> Reply:
        """Never raises. `on_text` receives a chat model's grounded sentences, with their
        citations, while they are written (Engine.run); `cited` asks for each sentence's sources
        (Engine.ask_cited) too.
        `record_gap=False`: nobody asked Citebot (a help channel's chatter), so an "I don't know"
        that is never shown is no gap in the documents."""
        ref, text = question.ref, question.text
        try:
            sentences: list[dict] = []
            if cited:
                output, sentences = self.engine.ask_cited(text, question.turns, question.scope, on_text=on_text)
            else:
                output = self.engine.ask(text, question.turns, on_text=on_text, access=question.scope)
            if output["status"] == "failed":
                log.warning("[%s] graph failed: %s", ref, output.get("errors"))
            if record_gap:
                self.gaps.unanswered(question.platform, question.place, question.asker, text, output)
            return dataclasses.replace(build_reply(output, ref, text, self.ask_hint, sentences),
                                       history=len(question.turns))
        except Exception:
            log.exception("[%s] answering failed", ref)
            return apology(ref)

    def answer_unasked(self, question: Question, min_confidence: float, cited: bool = False) -> Reply | None:
        """A help channel's message nobody addressed to Citebot: the reply only when it answers
        with at least `min_confidence` (CITEBOT_AUTO_MIN_CONFIDENCE); None means say nothing, since
        a bot that says "I don't know" to people talking to each other is noise."""
        reply = self.answer(question, cited=cited, record_gap=False)
        confidence = reply.output.get("confidence") or 0.0
        if reply.status != "answered" or confidence < min_confidence:
            log.info("[%s] help channel %s: %s at confidence %.2f, not replying", question.ref, question.place,
                     reply.status, confidence)
            return None
        log.info("[%s] help channel %s: answered unasked at confidence %.2f", question.ref, question.place, confidence)
        return reply

    @staticmethod
    def delivered(question: Question, reply: Reply, streamed: bool = False) -> None:
        """The one line per answer for operators: outcome, place, history and time, never the text."""
        log.info("[%s] %s in %s with %d history turns%s, %.2f s", question.ref, reply.status, question.place,
                 len(question.turns), ", streamed" if streamed else "", time.perf_counter() - question.started)
