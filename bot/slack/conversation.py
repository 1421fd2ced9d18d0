"""From one Slack message to at most one reply: decide whether it is for Citebot, show that an
answer is coming, run the graph with the thread as history, deliver the answer (delivery.py)."""
from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rag_graph.config import Settings

from rag_graph.engine import Scope

from bot.access import Access
from bot.admin import Markup, help_text
from bot.answering import Answering, Question
from bot.dedupe import RedisSeen, SeenCache
from bot.intent import classify, mentioned_users
from bot.slack.delivery import Delivery
from bot.slack.experts import SlackExperts
from bot.slack.help_channel import answer_unasked
from bot.slack.render import PLACEHOLDER, render, tail
from bot.slack.threads import PEOPLE_SUBTYPES, fetch_thread, history, is_from, plain_text
from bot.slack.usergroups import UsergroupMembers

log = logging.getLogger(__name__)
SMALL_TALK_REACTION = "+1"
SLACK_CONNECT = "citebot_slack_connect"  # set on an event by slack.app.check_workspace


class Conversations:
    def __init__(self, answering: Answering, settings: Settings, seen: SeenCache | RedisSeen, access: Access,
                 usergroups: UsergroupMembers, experts: SlackExperts | None = None):
        self.answering, self.settings, self.seen = answering, settings, seen
        self.access, self.usergroups = access, usergroups
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
        # Everyone in a channel reads the answer, so the channel decides; in a DM, the asker.
        scope = (self.access.for_user(event["user"], self.usergroups) if event.get("channel_type") == "im"
                 else self.access.for_channel(channel))
        if event.get(SLACK_CONNECT) and not self.access.place(channel).slack_connect:
            scope = Scope()  # people of another organisation read the answer too
        asked = Question("slack", channel, event["user"], question, turns, scope)
        self.answer(Delivery(client, channel, reply_in, asked.ref, set_status, say_stream), asked)

    def answer(self, delivery: Delivery, question: Question) -> None:
        if not delivery.start():
            return
        reply = self.answering.answer(question, on_text=delivery.text if delivery.can_stream else None)
        message, body, closing = render(reply), "", None
        # The answer's own words and closing blocks complete a stream; a hedged answer's stream is
        # edited into the message instead, so that the hedge comes first.
        if reply.status == "answered" and not reply.hedge:
            body, closing = reply.body, tail(reply)
        if self.experts:
            place = (delivery.channel, delivery.thread_ts, question.text, question.asker)
            message = self.experts.decorate(message, reply.output, *place)
            closing = closing and self.experts.decorate({"blocks": closing}, reply.output, *place)["blocks"]
        if delivery.finish(message, body, closing):
            self.answering.delivered(question, reply, streamed=bool(delivery.streamed))

    @staticmethod
    def _react(client: WebClient, channel: str, ts: str) -> None:
        try:
            client.reactions_add(channel=channel, timestamp=ts, name=SMALL_TALK_REACTION)
        except SlackApiError as error:  # already reacted, or the message is gone: nothing to fix
            log.debug("reactions.add: %s", error.response.get("error"))
