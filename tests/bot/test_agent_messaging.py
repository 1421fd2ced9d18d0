"""Slack's agent messaging (manifest `agent_view`) end to end against FakeSlack in its "agent"
mode: opening the Messages tab sets the suggested prompts without a thread_ts and greets a
first-time visitor; every event the manifest subscribes to is acknowledged with 200."""
from pathlib import Path

import pytest
import yaml

from bot_harness import fake, start_bot, bot, quiet_for  # noqa: F401 (fixtures)

ROOT = Path(__file__).resolve().parents[2]
DM = "DHOME1"


def opened(bot, tab: str = "messages", user: str = "U1", channel: str = DM) -> int:
    return bot.event({"type": "app_home_opened", "user": user, "channel": channel, "tab": tab,
                      "event_ts": "1700000700.000100"})


def test_opening_the_messages_tab_sets_prompts_without_a_thread_and_greets_once(bot, fake, engine):
    fake.messaging = "agent"
    assert opened(bot) == 200
    [call] = fake.wait_for("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in call.args  # with one, an agent app's call silently does nothing
    assert fake.suggested_prompts[(DM, None)]["prompts"] == engine.suggested_prompts()
    [greeting] = fake.calls("chat.postMessage")
    assert greeting.args["channel"] == DM and "answer questions from the company's documents" in greeting.args["text"]

    assert opened(bot) == 200  # the second visit: prompts again, no second greeting
    fake.wait_for("assistant.threads.setSuggestedPrompts", count=2)
    assert len([c for c in quiet_for(bot) if c.method == "chat.postMessage"]) == 1


def test_the_home_tab_is_acknowledged_and_left_alone(bot, fake):
    assert opened(bot, tab="home") == 200
    assert [c.method for c in quiet_for(bot)] == []


@pytest.mark.parametrize("event_type", yaml.safe_load((ROOT / "manifest.yml").read_text())
                         ["settings"]["event_subscriptions"]["bot_events"] + ["assistant_thread_started"])
def test_every_subscribed_event_is_acknowledged_with_200(bot, event_type):
    """Slack retries an event answered otherwise and counts it as a failure. The message.*
    subscriptions arrive as `message` events (here an edit, which nothing answers)."""
    kind = event_type.split(".")[0]
    events = {"message": {"type": "message", "subtype": "message_changed", "channel": "C1", "channel_type": "channel",
                          "message": {"type": "message", "user": "U1", "text": "edited", "ts": "1700000000.000001"},
                          "ts": "1700000800.000100", "event_ts": "1700000800.000100"},
              "app_mention": {"type": "app_mention", "channel": "C1", "user": "U1", "text": "<@UBOT>",
                              "ts": "1700000800.000200", "event_ts": "1700000800.000200"},
              "app_home_opened": {"type": "app_home_opened", "user": "U1", "channel": DM, "tab": "home",
                                  "event_ts": "1700000800.000300"},
              "assistant_thread_started": {"type": "assistant_thread_started", "event_ts": "1700000800.000400",
                                           "assistant_thread": {"user_id": "U1", "channel_id": "D1",
                                                                "thread_ts": "1700000800.000400", "context": {}}}}
    assert bot.event(events[kind]) == 200
