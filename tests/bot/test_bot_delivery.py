"""Slack's delivery quirks and the messages Citebot must leave alone."""
import logging

from bot_harness import QUESTION, answers, bot, fake, quiet_for, start_bot  # noqa: F401 (fixtures)
from fake_slack import event_body

MENTION_TS = "1700000100.000100"


def mention_event(ts=MENTION_TS):
    return {"type": "app_mention", "channel": "C1", "user": "U1", "ts": ts, "event_ts": ts,
            "text": f"<@UBOT> {QUESTION}"}


def test_the_same_event_delivered_twice_is_answered_once(bot, fake):
    fake.add_message("C1", MENTION_TS, f"<@UBOT> {QUESTION}", user="U1")
    assert bot.event(mention_event(), event_id="EvSAME") == 200
    assert bot.event(mention_event(), event_id="EvSAME") == 200
    answers(fake)
    assert [c.method for c in quiet_for(bot)].count("chat.postMessage") == 1


def test_a_mention_arriving_as_app_mention_and_as_message_is_answered_once(bot, fake):
    bot.mention(QUESTION, ts=MENTION_TS)
    assert bot.event({**mention_event(), "type": "message", "channel_type": "channel"}) == 200
    answers(fake)
    assert [c.method for c in quiet_for(bot)].count("chat.postMessage") == 1


def test_a_slack_retry_of_an_answered_event_gets_no_second_reply(bot, fake, caplog):
    caplog.set_level(logging.INFO, logger="bot.slack.app")
    fake.add_message("C1", MENTION_TS, f"<@UBOT> {QUESTION}", user="U1")
    body = event_body(mention_event(), event_id="EvRETRY")
    assert bot.post(body)[0] == 200
    answers(fake)
    status, _ = bot.post(body, headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    assert status == 200
    assert [c.method for c in quiet_for(bot)].count("chat.postMessage") == 1
    # Dropped at the door by event_id, before any listener ran.
    assert "dropping duplicate delivery of EvRETRY (retry 1)" in caplog.text


def test_a_request_with_a_bad_signature_is_refused(bot, fake):
    status, _ = bot.post(event_body(mention_event()), secret="not-the-secret")
    assert status == 401
    assert quiet_for(bot) == []


def test_bots_and_our_own_messages_are_ignored(bot, fake):
    bot.say(f"<@UBOT> {QUESTION}", ts="1700000200.000100", user="UOTHERBOT", bot_id="B2")
    bot.say(f"<@UBOT> {QUESTION}", ts="1700000200.000200", user="UOTHERBOT", subtype="bot_message")
    bot.say(QUESTION, ts="1700000200.000300", user="UBOT", bot_id="BBOT", channel_type="im")
    assert quiet_for(bot) == []


def test_edits_deletes_and_joins_are_ignored(bot, fake):
    edited = {"type": "message", "subtype": "message_changed", "channel": "C1", "channel_type": "im",
              "ts": "1700000200.000400", "message": {"user": "U1", "text": f"<@UBOT> {QUESTION}"}}
    deleted = {"type": "message", "subtype": "message_deleted", "channel": "C1", "channel_type": "im",
               "ts": "1700000200.000500", "deleted_ts": MENTION_TS}
    joined = {"type": "message", "subtype": "channel_join", "channel": "C1", "channel_type": "channel",
              "user": "U2", "ts": "1700000200.000600", "text": "<@U2> has joined the channel"}
    for event in (edited, deleted, joined):
        assert bot.event(event) == 200
    assert quiet_for(bot) == []


def test_small_talk_in_an_answered_thread_gets_a_reaction_not_an_answer(bot, fake):
    bot.mention(QUESTION, ts=MENTION_TS)
    answers(fake)
    bot.say("thanks! :pray:", ts="1700000300.000100", thread_ts=MENTION_TS)
    reaction = fake.wait_for("reactions.add")[0]
    assert reaction.args["timestamp"] == "1700000300.000100"
    assert len(fake.calls("chat.postMessage")) == 1


def test_a_thread_message_for_another_person_is_left_alone(bot, fake):
    bot.mention(QUESTION, ts=MENTION_TS)
    answers(fake)
    fake.clear_calls()
    bot.say("<@U2> can you double-check this with HR?", ts="1700000300.000100", thread_ts=MENTION_TS)
    assert quiet_for(bot) == []


def test_channel_chatter_and_threads_without_citebot_are_left_alone(bot, fake):
    bot.say("How many days per week can we work remotely?", ts="1700000400.000100")
    fake.add_message("C1", "1700000500.000100", "lunch?", user="U2")
    bot.say("what time is lunch?", ts="1700000500.000200", thread_ts="1700000500.000100")
    calls = quiet_for(bot)
    assert [c.method for c in calls] == ["conversations.replies"]


def test_asking_what_citebot_can_do_gets_the_help_text_not_a_search(bot, fake):
    bot.mention("what can you do?", ts=MENTION_TS)
    [reply] = fake.wait_for("chat.postMessage")
    assert reply.args["thread_ts"] == MENTION_TS
    assert "answers questions from the company's documents" in reply.args["text"]
    assert "/citebot status" in reply.args["text"] and "I don't know" not in reply.args["text"]
