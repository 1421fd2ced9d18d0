"""Slack's Messages tab in its AI-app form (the agent / assistant view): when someone opens a new
thread there, suggest questions the corpus can answer. What they then type arrives as an
ordinary `message.im` in that thread and is answered by the messages listener like any thread."""
from __future__ import annotations

import logging

from slack_bolt import App, Assistant, SetSuggestedPrompts
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)
PROMPTS_TITLE = "Ask about the documents, for example:"


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
