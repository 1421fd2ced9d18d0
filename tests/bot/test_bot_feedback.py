"""Feedback buttons under an answer: the click is acknowledged and recorded."""
from bot.feedback import FeedbackLog
from bot_harness import QUESTION, blocks_of, bot, fake, start_bot  # noqa: F401 (fixtures)


def test_a_feedback_click_is_recorded_and_thanked(bot, fake):
    bot.mention(QUESTION, ts="1700000100.000100")
    update = fake.wait_for("chat.update", timeout=30)[0]
    button = blocks_of(update)[-1]["elements"][1]  # not helpful
    [message] = [m for m in fake.thread("C1", "1700000100.000100") if m.get("bot_id")]

    status = bot.click({"user": {"id": "U7"}, "channel": {"id": "C1"},
                        "container": {"type": "message", "channel_id": "C1", "message_ts": message["ts"]},
                        "message": message, "actions": [{**button, "block_id": "feedback"}]})
    assert status == 200
    thanks = fake.wait_for("chat.postEphemeral")[0]
    assert (thanks.args["user"], thanks.args["channel"], thanks.args["thread_ts"]) == ("U7", "C1", "1700000100.000100")

    [record] = FeedbackLog(bot.settings.feedback_path).read()
    assert record["vote"] == "not_helpful" and record["user"] == "U7"
    assert record["question"] == QUESTION and record["status"] == "answered"
    assert record["chunk_ids"] == ["hr-handbook-2025::remote-work::0"]
    assert record["message_ts"] == message["ts"] and len(record["ref"]) == 8
