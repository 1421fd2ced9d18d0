"""Teams' streaming, in personal chats only (Teams streams nowhere else): an informative update
("Looking through the documents…") while the graph runs, then the chat model's grounded
sentences as they are written, each with the `[n]` markers the answer will give it, then the
final message, the very Activity the unstreamed answer would be (citations, feedback loop,
AI label) with a `streaminfo` entity that closes the stream.

The wire format is Teams' REST streaming contract, which the SDK's StreamingResponse also speaks:
`typing` activities with a `streaminfo` entity (streamType informative or streaming,
streamSequence 1, 2, 3…, the streamId Teams answered the first one with), each carrying the
whole text so far, at most one a second; then a `message` with streamType final, the streamId
and no sequence. Teams rejects a final whose text does not hold what was streamed, so the final
is sent only when the answer's text begins with it; otherwise (the answer was declined, or its
sentences were cited differently) the stream is closed as it stands and edited into the answer.

StreamingResponse's own end_stream is not used: its final is built from the streamed text (no
textFormat, citations re-numbered, the feedback loop's type its own), and a 403 from Teams ends
it without any final message, so the asker would get no answer. Here any refusal stops the
updates and the answer is still delivered, once."""
from __future__ import annotations

import asyncio
import logging

from aiohttp import ClientResponseError
from microsoft_agents.activity import Activity, ActivityTypes, ResourceResponse, StreamInfo
from microsoft_agents.hosting.core import TurnContext

from bot.reply import build_reply
from bot.teams.render import MAX_TEXT, marked

log = logging.getLogger(__name__)
INFORMING = "Looking through the documents…"
# Teams: "Buffer the tokens from the model for 1.5 to two seconds"; the SDK's StreamingResponse
# waits 1.0 s between Teams updates. A sentence takes a small model longer than that anyway.
INTERVAL = 1.5
# What Teams answers when the asker pressed Stop: nothing more may be sent into that stream.
STOPPED = "cancelled by user"


class TeamsStream:
    def __init__(self, context: TurnContext, ref: str):
        self.context, self.ref = context, ref
        self.loop = asyncio.get_running_loop()
        self.stream_id: str | None = None
        self.sequence = 0
        self.shown = ""  # the text the last accepted update carried
        self.open = True  # False once Teams refused the start or an update: no more are sent
        self.stopped = False  # the asker pressed Stop
        self._sentences: list[dict] = []
        self._citations: dict[str, dict] = {}  # chunk id -> its citation, in the order first cited
        self._pending: str | None = None
        self._flushing: asyncio.Task | None = None

    async def start(self) -> None:
        """The informative update, sent while the graph already runs; Teams' answer names the
        stream, and sentences written meanwhile follow."""
        sent = await self._send("informative", INFORMING)
        self.stream_id = sent.id if sent else None
        self.open = bool(self.stream_id)
        self._kick()

    def text(self, sentence: str, citations: list[dict]) -> None:
        """Engine.run's on_text, called on the answering thread: a grounded sentence with its
        citations."""
        self.loop.call_soon_threadsafe(self._add, sentence, citations)

    def _add(self, sentence: str, citations: list[dict]) -> None:
        for citation in citations:
            self._citations.setdefault(citation["chunk_id"], citation)
        self._sentences.append({"text": sentence, "chunk_ids": [c["chunk_id"] for c in citations]})
        # Numbered as the final answer numbers its sources, from the citations seen so far.
        shown = marked(build_reply({"status": "answered", "answer": sentence, "citations": list(self._citations.values())},
                                   self.ref, sentences=self._sentences))
        if len(shown) < MAX_TEXT:
            self._pending = shown
            self._kick()

    def _kick(self) -> None:
        if self._pending is not None and self.stream_id and self._flushing is None:
            self._flushing = asyncio.ensure_future(self._flush())

    async def _flush(self) -> None:
        """One update at a time, the latest text only, at most one per INTERVAL, none once
        Teams refused one."""
        try:
            while self._pending is not None and self.open:
                text, self._pending = self._pending, None
                if await self._send("streaming", text):
                    self.shown = text
                await asyncio.sleep(INTERVAL)
        finally:
            self._flushing = None

    async def _send(self, kind: str, text: str) -> ResourceResponse | None:
        self.sequence += 1
        info = StreamInfo(stream_type=kind, stream_sequence=self.sequence)
        if self.stream_id:
            info.stream_id = self.stream_id
        try:
            return await self.context.send_activity(Activity(type=ActivityTypes.typing, text=text, entities=[info]))
        except Exception as error:  # a refusal of an update costs the stream, never the answer
            self._refused(kind, error)
            return None

    def _refused(self, what: str, error: Exception) -> None:
        self.open = False
        self.stopped = isinstance(error, ClientResponseError) and STOPPED in str(error.message).lower()
        log.info("[%s] Teams refused the %s update (%s): %s", self.ref, what, _reason(error),
                 "the asker stopped the answer" if self.stopped else "the answer follows without streaming")

    async def finish(self, message: Activity) -> str | None:
        """Deliver the answer once; its id (the stream's, when it closes the stream), or None
        when nothing was delivered."""
        self._pending = None  # the final carries it
        if self._flushing is not None:
            await self._flushing
        if self.stopped:
            return None  # Teams: a stopped stream is the asker's choice; nothing more goes into it
        if not self.stream_id:
            return await self._plain(message)  # nothing was shown: the answer as it would be sent
        closing = message if message.text.startswith(self.shown) else Activity(type=ActivityTypes.message, text=self.shown)
        final = closing.model_copy(deep=True)
        final.entities = [*(final.entities or []), StreamInfo(stream_type="final", stream_id=self.stream_id)]
        try:
            await self.context.send_activity(final)
        except Exception as error:
            self._refused("final", error)
            if self.stopped:
                return None
            return await self._edit(message) or await self._plain(message)
        if closing is not message:
            log.info("[%s] the streamed text is not the start of the answer: editing it into the answer", self.ref)
            return await self._edit(message) or await self._plain(message)
        return self.stream_id

    async def _edit(self, message: Activity) -> str | None:
        """The streamed message becomes the answer (as the SDK does after Teams timed a stream out)."""
        edited = message.model_copy(deep=True)
        edited.id = self.stream_id
        try:
            await self.context.update_activity(edited)
            return self.stream_id
        except Exception as error:
            log.warning("[%s] the streamed message could not be edited (%s): sending the answer", self.ref, _reason(error))
            return None

    async def _plain(self, message: Activity) -> str | None:
        try:
            sent = await self.context.send_activity(message)
            return sent.id if sent else None
        except Exception as error:
            log.error("[%s] the answer could not be delivered: %s", self.ref, _reason(error))
            return None


def _reason(error: Exception) -> str:
    return f"{error.status} {error.message}"[:300] if isinstance(error, ClientResponseError) else type(error).__name__
