"""Teams' side of asking an expert, over the same records and rules as Slack's (bot/experts.py,
bot/verified.py): an "Ask an expert" Adaptive Card action (Action.Execute, verb `escalate`)
under an "I don't know" where the place has experts; the click starts a thread in the experts'
Teams channel; an expert's reply there is relayed into the asker's conversation with "Save as
verified answer" (verb `save_answer`), which only the place's expert group and admins may use.

Both conversations are kept as the SDK's proactive `Conversation` (reference + claims) in the
escalation record, so a restart or another replica still relays a reply. What the clicker alone
should read comes back in the Action.Execute response (`application/vnd.microsoft.activity.message`),
Teams' counterpart of Slack's ephemeral message."""
from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus
from urllib.parse import quote

from microsoft_agents.activity import (Activity, ActivityTypes, AdaptiveCardInvokeResponse, Attachment,
                                       ChannelAccount, ContentTypes, ConversationAccount, ConversationParameters,
                                       Mention)
from microsoft_agents.hosting.core import ConnectorClientBase, TurnContext
from microsoft_agents.hosting.core.app import Conversation, Proactive

from rag_graph.config import Settings

from bot.access import Access
from bot.experts import (GONE, NO_EXPERTS, Escalations, ExpertReply, claim_save, question_key,
                         save_verified)
from bot.reply import Reply
from bot.shared import SharedState
from bot.teams.render import escape, link
from bot.verified import VerifiedAnswers

log = logging.getLogger(__name__)
ESCALATE_VERB = "escalate"
SAVE_VERB = "save_answer"
CARD_VERSION = "1.5"  # Action.Execute (Universal Actions) needs 1.4+; Microsoft's Teams guide uses 1.5
SAVING = "Saving it as a verified answer: I'll confirm in this conversation."


def place_ids(activity: Activity) -> tuple[str | None, ...]:
    """The ids the access file may list a Teams place under: its channel, its team, the chat."""
    data = activity.channel_data if isinstance(activity.channel_data, dict) else {}
    return ((data.get("channel") or {}).get("id") or data.get("teamsChannelId"),
            (data.get("team") or {}).get("id") or data.get("teamsTeamId"),
            activity.conversation.id.split(";")[0])


def message_link(conversation_id: str, tenant: str | None) -> str:
    """Teams' deep link to the thread a conversation id names (`<channel>;messageid=<root>`)."""
    place, _, root = conversation_id.partition(";messageid=")
    if not root:
        return ""
    query = f"?tenantId={quote(tenant)}&parentMessageId={root}" if tenant else f"?parentMessageId={root}"
    return f"https://teams.microsoft.com/l/message/{quote(place, safe='@:.')}/{root}{query}"


def card(body: list[dict], actions: list[dict] | None = None) -> Attachment:
    content = {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
               "version": CARD_VERSION, "body": body}
    if actions:
        content["actions"] = actions
    return Attachment(content_type=ContentTypes.adaptive_card, content=content)


def plain_block(text: str, **style) -> dict:
    """Text a person wrote: a TextRun is never read as markdown."""
    return {"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": text, **style}]}


def told(text: str) -> AdaptiveCardInvokeResponse:
    """The Action.Execute response Teams shows the clicker alone."""
    return AdaptiveCardInvokeResponse(status_code=HTTPStatus.OK, type=ContentTypes.message, value=text)


class TeamsExperts:
    def __init__(self, settings: Settings, engine, shared: SharedState, access: Access, proactive: Proactive,
                 adapter):
        self.settings, self.engine, self.shared, self.access = settings, engine, shared, access
        self.proactive, self.adapter = proactive, adapter  # proactive sends go through the app's CloudAdapter
        self.escalations = Escalations(settings, shared)
        self.verified = VerifiedAnswers(settings)
        self._saving: set[asyncio.Task] = set()

    def _place(self, activity: Activity) -> str | None:
        """The id the access file lists this place under (its entry decides who the experts are)."""
        return next((i for i in place_ids(activity) if i and i in self.access.channels), None)

    # --- what an "I don't know" shows ------------------------------------------------------

    def decorate(self, message: Activity, reply: Reply, question: Activity) -> Activity:
        """"Ask an expert" under an "I don't know" in a place with experts."""
        if reply.status == "insufficient_context" and (ask := self._ask_card(
                question, reply.question, reply.gap, [reply.closest.label, reply.closest.url] if reply.closest else [],
                "Want a person to answer? The {} experts can.")):
            message.attachments = [*(message.attachments or []), ask]
        return message

    def after_thumbs_down(self, vote: Activity, question: str) -> Activity | None:
        """After a 👎 in a place with experts: the same offer, in the answer's conversation."""
        ask = self._ask_card(vote, question, "", [], "Sorry that didn't help. The {} experts can answer it instead.")
        return Activity(type=ActivityTypes.message, attachments=[ask]) if ask else None

    def _ask_card(self, activity: Activity, question: str, gap: str, near: list, offer: str) -> Attachment | None:
        """The card with "Ask an expert", or None where the place has no experts. The asker rides in
        the action's data; the place and the thread are taken from the click itself."""
        place = self._place(activity)
        experts = self.access.place(place).experts if place else None
        if not experts or not question.strip():
            return None
        asker = activity.from_property
        data = {"q": question[:500], "gap": (gap or "")[:300], "near": near,
                "asker": asker.id if asker else "", "name": (asker.name if asker else "") or ""}
        return card([{"type": "TextBlock", "wrap": True, "isSubtle": True, "text": offer.format(escape(experts.group))}],
                    [{"type": "Action.Execute", "title": "Ask an expert", "verb": ESCALATE_VERB, "data": data}])

    # --- "Ask an expert" ---------------------------------------------------------------------

    async def on_escalate(self, context: TurnContext, state, data: dict) -> AdaptiveCardInvokeResponse:
        return told(await self.escalate(context, data if isinstance(data, dict) else {}))

    async def escalate(self, context: TurnContext, data: dict) -> str:
        activity = context.activity
        place, thread, question = self._place(activity), activity.conversation.id, str(data.get("q") or "")
        experts = self.access.place(place).experts if place else None
        if not experts:
            return NO_EXPERTS
        if not question.strip():
            return GONE
        key = question_key("teams", place, thread, question)
        if not self.escalations.claim(key):
            return f"The {experts.group} experts have been asked already."
        tenant = activity.conversation.tenant_id or ((activity.channel_data or {}).get("tenant") or {}).get("id")
        asker = ChannelAccount(id=str(data.get("asker") or activity.from_property.id),
                               name=str(data.get("name") or activity.from_property.name or "someone"))
        permalink = message_link(thread, tenant)
        try:
            started = await context.services.get(ConnectorClientBase).conversations.create_conversation(
                ConversationParameters(is_group=True, agent=activity.recipient, tenant_id=tenant,
                                       channel_data={"channel": {"id": experts.channel}, "tenant": {"id": tenant}},
                                       activity=self._question_post(question, asker, data, permalink)))
        except Exception as error:  # the connector answers 403 when Citebot is not in the experts' team
            log.error("cannot post to the experts' channel %s: %s", experts.channel, error)
            self.escalations.release(key)
            return f"I couldn't post in the {experts.group} experts' channel: an admin must add me to its team."
        asked = Conversation.from_turn_context(context)
        asked.conversation_reference.activity_id = activity.reply_to_id  # the card's message
        answers = Conversation.from_turn_context(context)
        answers.conversation_reference.conversation = ConversationAccount(
            id=started.id, is_group=True, conversation_type="channel", tenant_id=tenant)
        answers.conversation_reference.activity_id = started.activity_id
        self.escalations.open({
            "key": key, "platform": "teams", "channel": place, "thread": thread, "question": question,
            "asker": asker.id, "escalated_by": activity.from_property.aad_object_id or activity.from_property.id,
            "knowledge_gap": str(data.get("gap") or ""), "permalink": permalink, "experts_channel": experts.channel,
            "experts_thread": started.id, "group": experts.group,
            "audience": sorted(self.access.for_channel(*place_ids(activity)).audiences),
            "asker_conversation": asked.store_item_to_json(), "experts_conversation": answers.store_item_to_json()})
        await context.send_activity(f"I've asked the **{escape(experts.group)}** experts in their channel. "
                                    "Their answer will appear in this conversation.")
        return f"I've asked the {experts.group} experts."

    @staticmethod
    def _question_post(question: str, asker: ChannelAccount, data: dict, permalink: str) -> Activity:
        at = f"<at>{escape(asker.name)}</at>"
        lines = [f"**Question from {at}:**", "> " + escape(" ".join(question.split()))]
        if data.get("gap"):
            lines.append(f"**What's missing:** {escape(str(data['gap']))}")
        near = data.get("near") or []
        if len(near) == 2 and near[0] and near[1]:
            lines.append(f"**Closest section:** {link(str(near[1]), str(near[0]))}")
        if permalink:
            lines.append(link(permalink, "Open the conversation"))
        lines.append("Reply in this thread: I'll pass your answer on to the asker.")
        return Activity(type=ActivityTypes.message, text="\n\n".join(lines), text_format="markdown",
                        entities=[Mention(mentioned=asker, text=at, type="mention")])

    # --- the expert's reply -----------------------------------------------------------------

    def escalation_for(self, activity: Activity) -> dict | None:
        """The escalation whose thread in an experts' channel a person replied in."""
        experts_channels = {c.experts.channel for c in self.access.channels.values() if c.experts}
        channel = next((i for i in place_ids(activity) if i in experts_channels), None)
        sender = activity.from_property
        if not channel or not sender:
            return None
        return self.escalations.for_expert_thread(channel, activity.conversation.id)

    async def relay(self, context: TurnContext, record: dict, text: str) -> None:
        sender = context.activity.from_property
        expert = sender.aad_object_id or sender.id
        name = sender.name or "An expert"
        # Recorded before it is posted: a click on its button can arrive the moment it shows.
        position = self.escalations.add_reply(record["key"], ExpertReply(expert, text, name))
        relayed = Activity(type=ActivityTypes.message, attachments=[card(
            [{"type": "TextBlock", "wrap": True, "weight": "Bolder",
              "text": f"{escape(name)} ({escape(record['group'])} expert) answered:"},
             plain_block(text),
             {"type": "TextBlock", "wrap": True, "isSubtle": True, "size": "Small",
              "text": f"The {escape(record['group'])} experts and admins can save this as a verified answer: "
                      "I'll then answer this question from it, with a link to this conversation."}],
            [{"type": "Action.Execute", "title": "Save as verified answer", "verb": SAVE_VERB, "style": "positive",
              "data": {"k": record["key"], "n": position}}])])
        await self._send(record["asker_conversation"], relayed)

    # --- "Save as verified answer" ----------------------------------------------------------

    async def on_save(self, context: TurnContext, state, data: dict) -> AdaptiveCardInvokeResponse:
        data = data if isinstance(data, dict) else {}
        clicker = context.activity.from_property
        # Only the Entra ID object id is checked against the access file: a Bot Framework id
        # means nothing there, so a click without one is refused.
        user = (clicker.aad_object_id if clicker else None) or ""
        record, refusal = claim_save(self.escalations, self.access, data.get("k"), data.get("n"), user,
                                     self.settings.admin_ids("teams"))
        if refusal:
            log.info("save of %s by %s refused: %s", data.get("k"), user or "an unknown clicker", refusal)
            return told(refusal)
        task = asyncio.create_task(self._save(record, data["n"], user, (clicker.name or "Someone")))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)
        return told(SAVING)

    async def _save(self, record: dict, position: int, user: str, user_name: str) -> None:
        """After Teams got its answer: writing and indexing may wait for a running reload."""
        reply = record["replies"][position]
        try:
            saved = await asyncio.to_thread(save_verified, self.escalations, self.verified, self.engine, self.shared, record, position,
                                            reply.get("name") or reply["expert"], user, record["permalink"])
        except Exception:
            log.exception("saving the verified answer of %s failed", record["key"])
            await self._send(record["asker_conversation"], "⚠️ I couldn't save that answer; an admin will find "
                                                           "the details in my log. Please try again later.")
            return
        log.info("verified answer %s saved by %s", saved.source_id, user)
        whose = "their" if user == reply["expert"] else f"{escape(reply.get('name') or 'the expert')}'s"
        await self._send(record["asker_conversation"],
                         f"✅ **{escape(user_name)}** saved {whose} answer as a verified answer (due for review on "
                         f"{saved.review_by.isoformat()}). I'll answer this question from it from now on.")

    async def _send(self, stored: dict, activity: Activity | str) -> None:
        if isinstance(activity, str):
            activity = Activity(type=ActivityTypes.message, text=activity, text_format="markdown")
        conversation = Conversation.from_json_to_store_item(stored)
        await self.proactive.send_activity(self.adapter, conversation, activity)
