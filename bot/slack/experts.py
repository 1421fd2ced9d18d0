"""Slack's side of asking an expert: the "Ask an expert" button under an "I don't know" (and
after a 👎), the post in the experts' channel, the expert's reply relayed to the asker's thread
with "Save as verified answer", and the verified mark on answers that cite a verified answer.
Who may do what, and what is stored, is decided in bot/experts.py and bot/verified.py."""
from __future__ import annotations

import json
import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from rag_graph.config import Settings

from bot.access import Access
from bot.experts import (GONE, NO_EXPERTS, Escalations, ExpertReply, claim_save, question_key,
                         save_verified)
from bot.shared import SharedState
from bot.slack.render import MAX_BUTTON_VALUE, escape, link, split_text
from bot.slack.threads import PEOPLE_SUBTYPES, plain_text
from bot.verified import VerifiedAnswers

log = logging.getLogger(__name__)
ESCALATE_ACTION = "escalate"
SAVE_ACTION = "save_answer"


def _button(text: str, action: str, value: dict, style: str | None = None) -> dict:
    button = {"type": "button", "action_id": action, "text": {"type": "plain_text", "text": text, "emoji": True},
              "value": json.dumps(value, ensure_ascii=False)}
    return {**button, "style": style} if style else button


def escalate_button(question: str, asker: str, gap: str, near: tuple[str, str] | None, channel: str,
                    thread: str) -> dict:
    """Everything the click needs rides in the value: the question, who asked it and where."""
    value = {"q": question[:500], "asker": asker, "gap": gap[:300], "near": list(near or ()), "ch": channel, "th": thread}
    while len(json.dumps(value, ensure_ascii=False)) > MAX_BUTTON_VALUE and value["q"]:
        value["q"], value["near"] = value["q"][:-100], []
    return _button("Ask an expert", ESCALATE_ACTION, value)


def _value(action: dict) -> dict:
    try:
        value = json.loads(action.get("value") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class SlackExperts:
    def __init__(self, settings: Settings, engine, shared: SharedState, access: Access, usergroups):
        self.settings, self.engine, self.shared, self.access = settings, engine, shared, access
        self.usergroups = usergroups
        self.escalations = Escalations(settings, shared)
        self.verified = VerifiedAnswers(settings)
        self.expert_channels = {c.experts.channel for c in access.channels.values() if c.experts}

    # --- what an answer shows --------------------------------------------------------------

    def decorate(self, message: dict, output: dict, channel: str, thread: str | None, question: str,
                 asker: str) -> dict:
        """The verified mark on an answer citing a verified answer; "Ask an expert" under an
        "I don't know" where the place has experts. Both go just above the feedback buttons."""
        blocks = list(message.get("blocks") or [])
        extra = []
        if output.get("status") == "answered":
            extra = [{"type": "context", "elements": [{"type": "mrkdwn", "text": f":white_check_mark: {escape(mark)}"}]}
                     for mark in self.verified.marks(output.get("citations") or [])]
        elif output.get("status") == "insufficient_context" and thread and self.access.place(channel).experts:
            near = output.get("closest") or {}
            extra = [{"type": "actions", "block_id": "escalate", "elements": [escalate_button(
                question, asker, output.get("knowledge_gap") or "",
                (" › ".join(p for p in (near.get("title"), near.get("section")) if p), near.get("url") or "") if near else None,
                channel, thread)]}]
        if not extra:
            return message
        at = len(blocks) - 1 if blocks and blocks[-1].get("type") == "context_actions" else len(blocks)
        return {**message, "blocks": blocks[:at] + extra + blocks[at:]}

    # --- "Ask an expert" ---------------------------------------------------------------------

    def escalate(self, client: WebClient, user: str, action: dict) -> str | None:
        """Posts the question to the experts once; returns what only the clicker should read."""
        info = _value(action)
        channel, thread, question = info.get("ch"), info.get("th"), info.get("q")
        if not (channel and thread and question):
            return GONE
        experts = self.access.place(channel).experts
        if not experts:
            return NO_EXPERTS
        key = question_key("slack", channel, thread, question)
        if not self.escalations.claim(key):
            return f"The {experts.group} experts in <#{experts.channel}> have been asked already."
        asker = info.get("asker") or user
        permalink = self._permalink(client, channel, thread)
        try:
            posted = client.chat_postMessage(channel=experts.channel, **self._question_post(info, asker, permalink))
        except SlackApiError as error:
            log.error("cannot post to the experts' channel %s: %s", experts.channel, error.response.get("error"))
            self.escalations.release(key)
            return f"I couldn't post in <#{experts.channel}> ({error.response.get('error')}): an admin must invite me there."
        self.escalations.open({
            "key": key, "platform": "slack", "channel": channel, "thread": thread, "question": question,
            "asker": asker, "escalated_by": user, "knowledge_gap": info.get("gap") or "", "permalink": permalink,
            "experts_channel": experts.channel, "experts_thread": posted["ts"], "group": experts.group,
            "audience": sorted(self.access.for_channel(channel).audiences)})
        self._say(client, channel, thread, f"I've asked the {escape(experts.group)} experts in <#{experts.channel}>. "
                                           "Their answer will appear in this thread.")
        return None

    @staticmethod
    def _question_post(info: dict, asker: str, permalink: str) -> dict:
        question = split_text(escape(info["q"]), 2900)[0]
        lines = [f"*Question from <@{asker}> in <#{info['ch']}>:*\n>{question}"]
        if info.get("gap"):
            lines.append(f"*What's missing:* {escape(info['gap'])}")
        if len(info.get("near") or []) == 2 and info["near"][0]:
            lines.append(f"*Closest section:* {link(info['near'][1], info['near'][0])}")
        if permalink:
            lines.append(f"{link(permalink, 'Open the thread')}")
        return {"text": f"Question from <@{asker}>: {question}",
                "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}},
                           {"type": "context", "elements": [{"type": "mrkdwn", "text":
                               "Reply in this thread: I'll pass your answer on to the asker's thread."}]}]}

    # --- the expert's reply -----------------------------------------------------------------

    def is_expert_reply(self, event: dict) -> bool:
        """A person's reply in the thread of one of our posts in an experts' channel."""
        thread = event.get("thread_ts")
        return bool(event.get("channel") in self.expert_channels and thread and thread != event.get("ts")
                    and event.get("user") and not event.get("bot_id") and event.get("subtype") in PEOPLE_SUBTYPES
                    and self.escalations.for_expert_thread(event["channel"], thread))

    def relay(self, client: WebClient, event: dict, bot_user_id: str | None) -> None:
        record = self.escalations.for_expert_thread(event["channel"], event["thread_ts"])
        text = plain_text(event.get("text") or "", bot_user_id)
        if not record or not text:
            return
        # Recorded before it is posted: a click on its button can arrive the moment it shows.
        position = self.escalations.add_reply(record["key"], ExpertReply(event["user"], text))
        shown = split_text(escape(text), 2800)[0]
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text":
                   f"*<@{event['user']}> ({escape(record['group'])} expert) answered:*\n>{shown.replace(chr(10), chr(10) + '>')}"}},
                  {"type": "actions", "block_id": f"save-{position}", "elements": [
                      _button("Save as verified answer", SAVE_ACTION, {"k": record["key"], "n": position}, "primary")]},
                  {"type": "context", "elements": [{"type": "mrkdwn", "text":
                      f"The {escape(record['group'])} experts and admins can save this as a verified answer: "
                      "I'll then answer this question from it, with a link to this thread."}]}]
        self._say(client, record["channel"], record["thread"], f"<@{event['user']}> answered: {shown}", blocks)

    # --- "Save as verified answer" ----------------------------------------------------------

    def save(self, client: WebClient, user: str, action: dict) -> str | None:
        info = _value(action)
        record, refusal = claim_save(self.escalations, self.access, info.get("k"), info.get("n"), user,
                                     self.settings.admin_ids("slack"), self.usergroups)
        if refusal:
            return refusal
        reply = record["replies"][info["n"]]
        verified = save_verified(self.escalations, self.verified, self.engine, self.shared, record, info["n"],
                                 self._name(client, reply["expert"]), user,
                                 self._permalink(client, record["channel"], record["thread"]))
        log.info("verified answer %s saved by %s", verified.source_id, user)
        whose = "their" if user == reply["expert"] else f"<@{reply['expert']}>'s"
        self._say(client, record["channel"], record["thread"],
                  f":white_check_mark: <@{user}> saved {whose} answer as a verified answer "
                  f"(due for review on {verified.review_by}). I'll answer this question from it from now on.")
        return None

    # --- Slack calls ------------------------------------------------------------------------

    @staticmethod
    def _permalink(client: WebClient, channel: str, ts: str) -> str:
        try:
            return client.chat_getPermalink(channel=channel, message_ts=ts)["permalink"]
        except SlackApiError as error:
            log.info("chat.getPermalink in %s: %s", channel, error.response.get("error"))
            return ""

    @staticmethod
    def _name(client: WebClient, user: str) -> str:
        try:
            profile = client.users_info(user=user)["user"]
        except SlackApiError:
            return user
        return (profile.get("real_name") or (profile.get("profile") or {}).get("real_name") or profile.get("name") or user)

    @staticmethod
    def _say(client: WebClient, channel: str, thread: str, text: str, blocks: list | None = None) -> str | None:
        try:
            return client.chat_postMessage(channel=channel, thread_ts=thread, text=text, blocks=blocks)["ts"]
        except SlackApiError as error:
            log.error("cannot post in %s: %s", channel, error.response.get("error"))
            return None
