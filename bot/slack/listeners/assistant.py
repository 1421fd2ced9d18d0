"""Slack's Messages tab as an agent (manifest `agent_view`) or, for apps still installed with
`assistant_view`, as an assistant: when someone opens it, suggest questions the corpus can answer,
and greet a first-time visitor. What they then type arrives as an ordinary `message.im` and is
answered by the messages listener.

Agent messaging: `app_home_opened` with `tab: "messages"` says the tab was opened; the prompts
are set without `thread_ts` (an agent app's call with one silently does nothing). Assistant
messaging: `assistant_thread_started` says a thread was opened; prompts go to that thread."""
from __future__ import annotations

import logging

from slack_bolt import App, Assistant, SetSuggestedPrompts
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.admin import Markup, help_text

log = logging.getLogger(__name__)
PROMPTS_TITLE = "Ask about the documents, for example:"
GREETING = "Hi! I answer questions from the company's documents and link the sections I used."


def register(app: App, engine) -> None:
    assistant = Assistant()

    @assistant.thread_started
    def on_thread_started(set_suggested_prompts: SetSuggestedPrompts, payload: dict) -> None:
        prompts = engine.suggested_prompts()
        if not prompts:
            return  # nothing indexed yet: an empty list would be refused anyway
        try:
            set_suggested_prompts(prompts=prompts, title=PROMPTS_TITLE)
        except SlackApiError as error:
            thread = payload.get("assistant_thread") or {}
            log.warning("suggested prompts refused in %s: %s", thread.get("channel_id"), error.response.get("error"))

    app.assistant(assistant)

    @app.event("app_home_opened")
    def on_home_opened(event: dict, client: WebClient) -> None:
        if event.get("tab") != "messages" or not event.get("channel"):
            return  # the Home tab is off: nothing to show there, but Slack still gets its 200
        opened(client, event["channel"], engine.suggested_prompts())


def opened(client: WebClient, channel: str, prompts: list[dict]) -> None:
    """The Messages tab of `channel` (the DM with Citebot) was opened: greet a visitor the DM
    shows nothing yet (Slack's advice: check it is the first interaction), then set the prompts."""
    try:
        first_time = not client.conversations_history(channel=channel, limit=1).get("messages")
    except SlackApiError as error:
        log.info("conversations.history in %s: %s; not greeting", channel, error.response.get("error"))
        first_time = False
    try:
        if first_time:
            client.chat_postMessage(channel=channel, text=f"{GREETING}\n{help_text(Markup())}")
        if prompts:
            client.assistant_threads_setSuggestedPrompts(channel_id=channel, prompts=prompts, title=PROMPTS_TITLE)
    except SlackApiError as error:
        log.warning("the Messages tab of %s: %s", channel, error.response.get("error"))
