"""From one Slack message to at most one reply: decide whether it is for Citebot, show that an
answer is coming, run the graph with the thread as history, deliver the answer (delivery.py)."""
from __future__ import annotations

import logging
import time
import uuid

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rag_graph.config import Settings

from bot.access import Access
from bot.admin import Markup, help_text
from bot.dedupe import RedisSeen, SeenCache
from bot.gaps import GapLog
from bot.intent import classify, mentioned_users
from bot.slack.delivery import Delivery
from bot.slack.experts import SlackExperts
from bot.slack.help_channel import answer_unasked
from bot.slack.render import PLACEHOLDER, answer_body, answer_tail, apology, render_answer
from bot.slack.threads import PEOPLE_SUBTYPES, fetch_thread, history, is_from, plain_text
from bot.slack.usergroups import UsergroupMembers

log = logging.getLogger(__name__)
SMALL_TALK_REACTION = "+1"


class Conversations:
    def __init__(self, engine, settings: Settings, seen: SeenCache | RedisSeen, access: Access,
                 usergroups: UsergroupMembers, gaps: GapLog, experts: SlackExperts | None = None):
        self.engine, self.settings, self.seen = engine, settings, seen
        self.access, self.usergroups, self.gaps = access, usergroups, gaps
        self.experts = experts  # the verified mark and "Ask an expert" (bot/slack/experts.py)

    def handle(self, event: dict, bot_user_id: str, bot_id: str, client: WebClient,
               via_mention: bool, set_status=None, say_stream=None) -> None:
        """Runs after the ack, on the answering pool. `set_status` / `say_stream` are Bolt's
        utilities for this event's thread."""
        if event.get("subtype") not in PEOPLE_SUBTYPES or event.get("bot_id") or not event.get("user"):
            return  # edits, deletes, joins, bots (ourselves included)
        channel, ts, raw = event["channel"], event["ts"], event.get("text") or ""
        thread_ts = event.get("thread_ts") if event.get("thread_ts") != ts else None
        # Addressed: a mention (Slack also sends it as a plain `message`) or a DM.
        addressed = via_mention or f"<@{bot_user_id}>" in raw or event.get("channel_type") == "im"
        if not addressed and not thread_ts and self.access.place(channel).answer == "all":
            answer_unasked(self, event, client, bot_user_id)  # a help channel: no mention needed
            return
        if not addressed and (mentioned_users(raw) - {bot_user_id} or not thread_ts):
            return  # talking to someone else, or channel chatter outside any thread
        # Both deliveries of a mention come through here; whichever is first owns the reply.
        if not self.seen.first_time(("message", channel, ts)):
            return
        question = plain_text(raw, bot_user_id)
        intent = classify(question)
        if not addressed and intent in ("other", "help"):
            return

        messages: list[dict] = []
        if thread_ts:
            try:
                messages = fetch_thread(client, channel, thread_ts)
            except SlackApiError as error:
                log.warning("conversations.replies failed in %s: %s", channel, error.response.get("error"))
                if not addressed:
                    return  # cannot tell whether we are part of this thread: stay quiet
            if not addressed and not any(is_from(m, bot_user_id, bot_id) for m in messages):
                return  # follow-ups only in threads Citebot already answered in

        if intent == "small_talk":
            self._react(client, channel, ts)
            return
        # A channel question is answered in its thread; a top-level DM gets a top-level reply.
        reply_in = thread_ts or (None if event.get("channel_type") == "im" else ts)
        if intent == "help":
            try:
                client.chat_postMessage(channel=channel, thread_ts=reply_in, text=help_text(Markup()))
            except SlackApiError as error:
                log.warning("chat.postMessage (help) failed in %s: %s", channel, error.response.get("error"))
            return
        turns = history(messages, ts, bot_user_id, bot_id, self.settings.history_turns,
                        skip_texts=(PLACEHOLDER,))
        delivery = Delivery(client, channel, reply_in, uuid.uuid4().hex[:8], set_status, say_stream)
        # Everyone in a channel reads the answer, so the channel decides; in a DM, the asker.
        scope = (self.access.for_user(event["user"], self.usergroups) if event.get("channel_type") == "im"
                 else self.access.for_channel(channel))
        self.answer(delivery, question, turns, scope, event["user"])

    def answer(self, delivery: Delivery, question: str, turns: list[dict], scope, user: str) -> None:
        ref = delivery.ref  # quoted to the user on failure, logged with the details
        started = time.perf_counter()
        if not delivery.start():
            return
        body, tail = "", None
        try:
            output = self.engine.ask(question, turns, on_text=delivery.text if delivery.can_stream else None,
                                     access=scope)
            if output["status"] == "failed":
                log.warning("[%s] graph failed: %s", ref, output.get("errors"))
            self.gaps.unanswered("slack", delivery.channel, user, question, output)
            message = render_answer(output, ref, question, self.settings.ask_hint)
            if output["status"] == "answered":
                body, tail = answer_body(output), answer_tail(output, ref, question)
            if self.experts:
                place = (delivery.channel, delivery.thread_ts, question, user)
                message = self.experts.decorate(message, output, *place)
                tail = tail and self.experts.decorate({"blocks": tail}, output, *place)["blocks"]
            status = output["status"]
        except Exception:
            log.exception("[%s] answering failed", ref)
            message, status = apology(ref), "error"
        if delivery.finish(message, body, tail):
            log.info("[%s] %s in %s with %d history turns%s, %.2f s", ref, status, delivery.channel, len(turns),
                     ", streamed" if delivery.streamed else "", time.perf_counter() - started)

    @staticmethod
    def _react(client: WebClient, channel: str, ts: str) -> None:
        try:
            client.reactions_add(channel=channel, timestamp=ts, name=SMALL_TALK_REACTION)
        except SlackApiError as error:  # already reacted, or the message is gone: nothing to fix
            log.debug("reactions.add: %s", error.response.get("error"))
