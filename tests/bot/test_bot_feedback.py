"""Slack's native feedback buttons under an answer: the click is acknowledged and recorded, once
per person per answer."""
from bot.feedback import FeedbackLog
from bot.gaps import gap_log
from bot_harness import QUESTION, answers, blocks_of, bot, fake, start_bot  # noqa: F401 (fixtures)


def click(bot, message, block, vote, user="U7"):
    element = block["elements"][0]
    button = element["positive_button" if vote == "helpful" else "negative_button"]
    return bot.click({"user": {"id": user}, "channel": {"id": "C1"},
                      "container": {"type": "message", "channel_id": "C1", "message_ts": message["ts"]},
                      "message": message, "actions": [{
                          "type": "feedback_buttons", "action_id": element["action_id"], "block_id": block["block_id"],
                          "text": button["text"], "value": button["value"], "action_ts": "1700000999.000001"}]})


def test_a_feedback_click_is_recorded_once_per_person_and_answer(bot, fake):
    bot.mention(QUESTION, ts="1700000100.000100")
    block = blocks_of(answers(fake)[0])[-1]
    assert block["type"] == "context_actions" and block["elements"][0]["type"] == "feedback_buttons"
    [message] = [m for m in fake.thread("C1", "1700000100.000100") if m.get("bot_id")]

    assert click(bot, message, block, "helpful") == 200
    thanks = fake.wait_for("chat.postEphemeral")[0]
    assert (thanks.args["user"], thanks.args["channel"], thanks.args["thread_ts"]) == ("U7", "C1", "1700000100.000100")
    # A double click, then a change of mind: still one record for U7, holding the last vote.
    assert click(bot, message, block, "helpful") == 200
    assert click(bot, message, block, "not_helpful") == 200
    assert click(bot, message, block, "helpful", user="U8") == 200
    fake.wait_for("chat.postEphemeral", count=4)

    records = FeedbackLog(bot.settings.feedback_path).read()
    voter = gap_log(bot.settings).asker  # voters are stored as the gap log's salted hash, never as ids
    [mine] = [r for r in records if r["user"] == voter("slack", "U7")]
    assert len(records) == 2 and {r["user"] for r in records} == {voter("slack", "U7"), voter("slack", "U8")}
    assert mine["vote"] == "not_helpful"
    assert mine["question"] == QUESTION and mine["status"] == "answered"
    assert mine["chunk_ids"] == ["hr-handbook-2025::remote-work::0"] and mine["history"] == 0  # asked alone
    assert mine["message_ts"] == message["ts"] and len(mine["ref"]) == 8
