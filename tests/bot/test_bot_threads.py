"""Thread history, Slack markup and which thread messages count as questions."""
import time

import pytest

from bot.dedupe import SeenCache
from bot.intent import classify, mentioned_users
from bot.slack.threads import history, plain_text


def msg(ts, text, user="U1", **extra):
    return {"type": "message", "ts": ts, "text": text, "user": user, **extra}


def test_slack_markup_becomes_plain_text_and_our_mention_disappears():
    raw = "<@UBOT> does <@U2|maria> know about <https://x.example|the policy> &amp; <#C1|people-ops> &lt;3"
    assert plain_text(raw, "UBOT") == "does @maria know about the policy & #people-ops <3"


def test_history_keeps_the_last_turns_before_the_question_and_drops_noise():
    thread = [msg("1.000001", "<@UBOT> remote days?"),
              msg("1.000002", "Looking through the handbook…", user="UBOT", bot_id="BBOT"),
              msg("1.000003", "3 days a week.", user="UBOT", bot_id="BBOT"),
              msg("1.000004", "deploy finished", user="UCI", bot_id="BCI"),
              msg("1.000005", "U2 joined", subtype="channel_join"),
              msg("1.000006", "what about contractors?"),
              msg("1.000007", "later message")]
    turns = history(thread, "1.000006", "UBOT", "BBOT", max_turns=8,
                    skip_texts=("Looking through the handbook…",))
    assert turns == [{"role": "user", "content": "remote days?"},
                     {"role": "assistant", "content": "3 days a week."}]


def test_history_is_bounded():
    thread = [msg(f"1.{i:06d}", f"question {i}") for i in range(1, 101)]
    turns = history(thread, "2.000000", "UBOT", "BBOT", max_turns=3)
    assert [t["content"] for t in turns] == [f"question {i}" for i in range(95, 101)]
    long = history([msg("1.000001", "x" * 50_000)], "2.0", "UBOT", "BBOT", max_turns=3)
    assert len(long[0]["content"]) == 2000


@pytest.mark.parametrize("text, intent", [
    ("what about contractors?", "question"),
    ("what about contractors", "question"),
    ("and the parental leave policy?", "question"),
    ("Explain the expense limits", "question"),
    ("thanks!", "small_talk"),
    ("thank you so much :pray:", "small_talk"),
    (":+1:", "small_talk"),
    ("ok got it", "small_talk"),
    ("I'll check with HR tomorrow", "other"),
    ("help", "help"),
    ("What can you do?", "help"),
    ("how do I use you?", "help"),
    ("help me with my expense report", "other"),
    ("how do I use the travel card?", "question"),
])
def test_which_thread_messages_are_questions(text, intent):
    assert classify(text) == intent


def test_mentioned_users():
    assert mentioned_users("<@U2> and <@UBOT|citebot> <!here>") == {"U2", "UBOT"}


def test_seen_cache_forgets_after_the_ttl_and_stays_bounded():
    now = [0.0]
    seen = SeenCache(ttl=10, max_size=3, clock=lambda: now[0])
    assert seen.first_time("a") and not seen.first_time("a")
    now[0] = 11
    assert seen.first_time("a")
    for key in "bcd":
        seen.first_time(key)
    assert seen.first_time("a")  # evicted as the oldest once the cache was full
