"""From one Teams activity to at most one reply. The turn Teams is waiting on only decides what
to do; the graph and reloads run afterwards in a proactive turn of the SDK
(continue_conversation_with_claims), because Teams gives a bot about 15 s to answer the HTTP
request and the SDK holds it until the turn ends."""
from __future__ import annotations

import asyncio
import html
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial
from typing import Awaitable, Callable

from microsoft_agents.activity import Activity, ActivityTypes, InvokeResponse
from microsoft_agents.hosting.core import TurnContext, TypingIndicator
from microsoft_agents.hosting.core.app import TypingOptions

from rag_graph.config import Settings

from rag_graph.engine import Scope

from bot.access import Access
from bot.admin import COMMANDS, Admin, Markup
from bot.answering import ANSWER_THREADS, Answering, Question
from bot.dedupe import RedisSeen, SeenCache
from bot.feedback import FeedbackLog
from bot.gaps import GapLog
from bot.intent import classify
from bot.memory import ConversationMemory
from bot.teams import feedback as feedback_form
from bot.teams.experts import TeamsExperts, place_ids
from bot.teams.render import escape, escape_markdown, render
from bot.teams.stream import TeamsStream
from bot.verified import VerifiedAnswers

log = logging.getLogger(__name__)
# Typing shows at once and is renewed before Teams drops it (~3 s); the answer's send stops it.
TYPING = TypingOptions(initial_delay_ms=0, interval_ms=2500)
WELCOME = ("Hi, I'm **Citebot**. I answer questions from the company's documents and link the sections "
           "I used; when the documents don't say, I tell you what's missing instead of guessing. "
           "Ask me anything here, or mention me in a channel. Type `help` for my commands.")
SMALL_TALK_REPLY = "👍"
GAPS_IN_PRIVATE = "The gap report quotes what people asked: ask me for `gaps` in a personal chat."
VOTES = {"like": "helpful", "dislike": "not_helpful"}
# The admin commands' shared wording in Teams markdown; commands are typed as plain words.
MARKUP = Markup(escape=escape, user_text=escape_markdown, bold="**{}**", command="{}", warning="⚠️", done="✅",
                ask="Chat with me here, or mention me in a channel or group chat "
                    "(`@Citebot how many days can I work remotely?`)")

_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")


def kind_of(activity: Activity) -> str:
    """personal, groupChat or channel; "" when Teams did not say. A missing type is never taken
    for a personal chat: that would answer with the sender's own groups wherever they ask."""
    return activity.conversation.conversation_type or ""


def admin_id(activity: Activity) -> str:
    """The id admin rights are checked against: the sender's Entra ID object id, never from.id
    (a bot-scoped id, and one that other Bot Framework channels let a sender choose)."""
    return (activity.from_property.aad_object_id if activity.from_property else None) or ""


def scope_of(activity: Activity, access: Access) -> Scope:
    """A personal chat: the asker's groups. A channel or group chat: the place (the channel, its
    team, or the chat itself), since everyone there reads the answer."""
    if kind_of(activity) == "personal":
        user = activity.from_property
        return access.for_user(user.aad_object_id if user else None)
    return access.for_channel(*place_ids(activity))


def plain_text(text: str | None) -> str:
    """Teams' message text -> what a person reads: other people's `<at>` mentions become their
    names (ours was removed by the SDK), entities are unescaped."""
    return " ".join(html.unescape(_TAG.sub("", text or "")).split())


class TeamsConversations:
    def __init__(self, answering: Answering, settings: Settings, admin: Admin, memory: ConversationMemory,
                 feedback: FeedbackLog, seen: SeenCache | RedisSeen, access: Access, gaps: GapLog,
                 experts: TeamsExperts):
        self.answering, self.settings, self.admin = answering, settings, admin
        self.memory, self.feedback, self.seen = memory, feedback, seen
        self.access, self.gaps, self.experts = access, gaps, experts
        self.verified = VerifiedAnswers(settings)  # the mark on answers citing an expert's verified answer
        self._answering = ThreadPoolExecutor(ANSWER_THREADS, thread_name_prefix="citebot-teams")
        self._later: set[asyncio.Task] = set()

    # --- the turn Teams waits on -------------------------------------------------------------

    async def first_delivery(self, context: TurnContext, state) -> bool:
        """before_turn: a message activity Teams delivers again is answered once."""
        activity = context.activity
        if activity.type != ActivityTypes.message or not activity.id:
            return True
        if self.seen.first_time(("teams", activity.conversation.id, activity.id)):
            return True
        log.info("dropping a repeated delivery of activity %s", activity.id)
        return False

    async def on_message(self, context: TurnContext, state) -> None:
        activity = context.activity
        kind = kind_of(activity)
        key = activity.conversation.id  # in a channel it names the reply chain (";messageid=")
        others = {m.mentioned.id for m in activity.get_mentions() if m.mentioned} - {activity.recipient.id}
        addressed = kind == "personal" or activity.is_recipient_mentioned()
        question = plain_text(activity.text)
        user = activity.from_property
        asker = (user.aad_object_id or user.id) if user else None
        if kind == "channel" and question and (escalation := self.experts.escalation_for(activity)):
            await self.experts.relay(context, escalation, question)  # an expert answered in their thread
            return
        intent = classify(question)
        if self._help_channel_question(activity, addressed, others, intent):
            asked = Question("teams", key, asker, question, [], scope_of(activity, self.access))
            self._in_background(context, lambda later: self._answer(later, asked, unasked=True))
            return
        if not addressed and (others or kind != "channel" or intent != "question" or not self.memory.turns(key)):
            return  # follow-ups without a mention only in reply chains Citebot already answered in

        command = "help" if intent == "help" else question.lower().rstrip(".!")
        if addressed and command in COMMANDS:
            await self._command(context, command)
        elif intent == "small_talk":
            if kind == "personal":  # in a channel, "thanks" needs no answer from a bot
                await context.send_activity(SMALL_TALK_REPLY)
        else:
            turns = self.memory.turns(key)[-2 * self.settings.history_turns:] if self.settings.history_turns > 0 else []
            asked = Question("teams", key, asker, question, turns, scope_of(activity, self.access))
            self._in_background(context, lambda later: self._answer(later, asked))

    async def on_members_added(self, context: TurnContext, state) -> None:
        activity = context.activity
        installed = any(m.id == activity.recipient.id for m in activity.members_added or [])
        if installed and kind_of(activity) == "personal":
            await context.send_activity(WELCOME)

    async def on_feedback(self, context: TurnContext, state) -> None:
        """`message/submitAction` from the feedback loop: recorded, answered 200 with no body."""
        activity = context.activity
        value = activity.value if isinstance(activity.value, dict) else {}
        action = value.get("actionValue") or {}
        reaction = action.get("reaction", "")
        reason, comment = feedback_form.submitted(action)
        user = activity.from_property
        record = self.feedback.append({
            "platform": "teams", "vote": VOTES.get(reaction, reaction), "reaction": reaction,
            "reason": reason if reaction == "dislike" else "", "comment": comment, "user": (user.aad_object_id or user.id) if user else None,
            "conversation": activity.conversation.id, "answer_id": activity.reply_to_id,
            **(self.memory.answer(activity.reply_to_id or "") or {})})
        self.gaps.negative_feedback(record)
        if record["vote"] == "not_helpful" and kind_of(activity) != "personal" and (
                offer := self.experts.after_thumbs_down(activity, record.get("question") or "")):
            await context.send_activity(offer)
        await context.send_activity(Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(status=200)))

    async def on_feedback_form(self, context: TurnContext, state) -> None:
        """`message/fetchTask` from a 👍/👎 click: the dialog that asks why (bot/teams/feedback.py)."""
        form = feedback_form.form(feedback_form.reaction_of(context.activity.value))
        await context.send_activity(Activity(type=ActivityTypes.invoke_response,
                                             value=InvokeResponse(status=200, body=form)))

    async def _command(self, context: TurnContext, command: str) -> None:
        if command == "status":
            await context.send_activity(self.admin.status(admin_id(context.activity),
                                                          scope_of(context.activity, self.access)))
        elif command == "help":
            await context.send_activity(self.admin.help())
        else:
            user_id = admin_id(context.activity)
            if command == "gaps" and kind_of(context.activity) != "personal":
                await context.send_activity(GAPS_IN_PRIVATE)  # the report quotes other people's questions
            elif command == "gaps":
                self._in_background(context, lambda later: self._gaps(later, user_id))
            else:
                self._in_background(context, lambda later: self._reload(later, user_id))

    # --- after the HTTP request was answered ---------------------------------------------------

    def _in_background(self, context: TurnContext, work: Callable[[TurnContext], Awaitable[None]]) -> None:
        async def run() -> None:
            try:
                await context.adapter.continue_conversation_with_claims(
                    context.identity, context.activity.model_copy(deep=True), work)
            except Exception:  # nothing else would see it: the task is never awaited
                log.exception("replying in %s failed", context.activity.conversation.id)

        task = asyncio.create_task(run())
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    def _help_channel_question(self, activity: Activity, addressed: bool, others: set, intent: str) -> bool:
        """A question of no one in particular in a help place (`answer: all`): a new post in a channel
        (not a reply in a chain), or any message of a group chat (a chat has no chains)."""
        kind, root = kind_of(activity), activity.conversation.id.partition(";messageid=")[2]
        new_post = (kind == "channel" and root == activity.id) or kind == "groupChat"
        return (not addressed and not others and intent == "question" and new_post
                and self.access.place(*place_ids(activity)).answer == "all")

    async def _answer(self, context: TurnContext, question: Question, unasked: bool = False) -> None:
        """`unasked`: a help channel's post, answered only when confident, and without "typing"
        (nobody is waiting for Citebot there). In a personal chat the answer streams (stream.py);
        Teams streams nowhere else, so channels and group chats see "typing", then the answer."""
        run = asyncio.get_running_loop().run_in_executor
        stream = TeamsStream(context, question.ref) if not unasked and kind_of(context.activity) == "personal" else None
        if unasked:
            reply = await run(self._answering, partial(self.answering.answer_unasked, question,
                                                       self.settings.auto_min_confidence, cited=True))
            if reply is None:
                return
        else:
            work = run(self._answering, partial(self.answering.answer, question, cited=True,
                                                on_text=stream.text if stream else None))
            if stream:
                await stream.start()
            # "Typing" where the informative update is not shown (a channel, or a stream Teams refused).
            async with TypingIndicator(context, typing_options=TYPING) if not (stream and stream.open) else nullcontext():
                reply = await work
        if reply.status != "failed":
            # Remembered before it is sent: a reply in the chain the moment the answer shows is a
            # follow-up, and must find the turn (after the send, it raced the next message).
            self.memory.add(question.place, question.text, reply.plain)
        message = self.experts.decorate(render(reply), reply, context.activity)
        for mark in self.verified.marks((reply.output or {}).get("citations") or []) if reply.status == "answered" else []:
            message.text += f"\n\n✅ {escape(mark)}"  # an expert's verified answer, within its review date
        sent = await stream.finish(message) if stream else (await context.send_activity(message)).id
        if reply.status != "failed" and sent:
            self.memory.note_answer(sent, reply.feedback_record())
        self.answering.delivered(question, reply, streamed=bool(stream and stream.shown))

    async def _gaps(self, context: TurnContext, user_id: str) -> None:
        report = await asyncio.to_thread(self.admin.gaps, user_id, self.admin.is_listed(user_id))
        await context.send_activity(report)

    async def _reload(self, context: TurnContext, user_id: str) -> None:
        loop = asyncio.get_running_loop()

        def respond(text: str) -> None:  # Admin.reload runs on a worker thread
            asyncio.run_coroutine_threadsafe(context.send_activity(text), loop).result(timeout=30)

        await asyncio.to_thread(self.admin.reload, user_id, self.admin.is_listed(user_id), respond)

