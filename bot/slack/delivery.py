"""How one answer reaches its thread, with Slack's AI-app surface where the workspace allows it:
1. a thread status ("is looking through the documents…") while the graph runs, or where setting a
   status is refused (a missing scope, an older workspace) today's placeholder, edited at the end;
2. a chat model's sentences streamed into the thread as they are written (Bolt's `say_stream`),
   the sources and feedback buttons attached when the stream stops;
3. otherwise, and whenever streaming is refused or the streamed words turn out not to be the
   final answer, the full answer posted (or the stream or placeholder edited into it) once."""
from __future__ import annotations

import logging
import re

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

from bot.slack.render import PLACEHOLDER

log = logging.getLogger(__name__)
STATUS = "is looking through the documents…"
LOADING_MESSAGES = ["Searching the documents…", "Reading the sections that match…",
                    "Checking every sentence against its source…"]


# Slack reads "<!channel>", "<!here>", "<@U…>", "<#C…>" and "<!subteam^…>" as notifications and
# "<url|label>" as a link, in streamed markdown too. A model's words are data: a zero-width space
# after "<" leaves them readable and inert.
_SPECIAL = re.compile(r"<(?=[!@#a-zA-Z])")


def inert(text: str) -> str:
    return _SPECIAL.sub("<\u200b", text)


class Delivery:
    def __init__(self, client: WebClient, channel: str, thread_ts: str | None, ref: str,
                 set_status=None, say_stream=None):
        self.client, self.channel, self.thread_ts, self.ref = client, channel, thread_ts, ref
        # Status and streams live in threads: a top-level DM reply (no agent view) uses the placeholder.
        self.set_status = set_status if thread_ts else None
        self.say_stream = say_stream if thread_ts else None
        self.placeholder: str | None = None
        self.stream = None
        self.streamed = ""  # the text the stream has shown so far

    def start(self) -> bool:
        """Show that an answer is coming; False when nothing can be posted in this channel."""
        if self.set_status is not None:
            try:
                self.set_status(status=STATUS, loading_messages=LOADING_MESSAGES)
                return True
            except SlackApiError as error:
                log.info("[%s] no thread status in %s (%s): posting a placeholder", self.ref, self.channel,
                         error.response.get("error"))
                self.set_status = None
        try:
            self.placeholder = self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts,
                                                            text=PLACEHOLDER)["ts"]
            return True
        except SlackApiError as error:
            log.error("[%s] cannot post in %s: %s", self.ref, self.channel, error.response.get("error"))
            return False

    @property
    def can_stream(self) -> bool:
        return self.say_stream is not None and self.placeholder is None

    def text(self, sentence: str, citations: list[dict] = ()) -> None:
        """One more sentence of the answer, as the model writes it (see Engine.ask's on_text); its
        sources are shown when the stream stops."""
        if not self.can_stream:
            return
        piece = (" " if self.streamed else "") + sentence
        try:
            if self.stream is None:
                self.stream = self.say_stream(buffer_size=1)  # a sentence is worth showing at once
            self.stream.append(markdown_text=inert(piece))
            self.streamed += piece
        except (SlackApiError, SlackRequestError) as error:
            log.info("[%s] streaming refused (%s): the full answer follows", self.ref, _reason(error))
            self.say_stream = None  # no more appends; finish() stops or replaces what was shown

    def finish(self, message: dict, body: str = "", tail: list[dict] | None = None) -> bool:
        """Deliver the final `message`; `body` and `tail` are its words and closing blocks, used
        to complete a stream whose text is a prefix of the answer."""
        if self.stream is not None and self._stop_stream(body, tail):
            return True
        try:
            if self.stream is not None and self.stream.ts:
                self.client.chat_update(channel=self.channel, ts=self.stream.ts, **message)
            elif self.placeholder:
                self.client.chat_update(channel=self.channel, ts=self.placeholder, **message)
            else:
                self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts, **message)
            return True
        except SlackApiError as error:
            log.error("[%s] the answer could not be delivered in %s: %s", self.ref, self.channel,
                      error.response.get("error"))
            self._clear_status()
            return False

    def _stop_stream(self, body: str, tail: list[dict] | None) -> bool:
        """True when the stream was completed into the final answer; otherwise it is stopped as
        it is and the caller edits it into the answer."""
        if not self.stream.ts:
            return False  # refused at the start: nothing was shown
        complete = self.say_stream is not None and tail is not None and body.startswith(self.streamed)
        try:
            if complete:
                self.stream.stop(markdown_text=body[len(self.streamed):] or None, blocks=tail)
                return True
            self.stream.stop()
        except (SlackApiError, SlackRequestError) as error:  # expired, or stopped by the user
            log.info("[%s] the stream could not be stopped (%s): editing it instead", self.ref, _reason(error))
        return False

    def _clear_status(self) -> None:
        if self.set_status is None:
            return
        try:
            self.set_status(status="")
        except SlackApiError:
            pass  # it expires by itself after two minutes


def _reason(error: Exception) -> str:
    return error.response.get("error") if isinstance(error, SlackApiError) else str(error)
