"""A 👎 in Teams asks why, like Slack's: the answer's feedback loop is Teams' `custom` one, the
click's `message/fetchTask` gets a dialog with the reasons and a comment box, and its submission
(`message/submitAction`) is recorded with the vote, down to what `citebot gaps` prints. End to end
through the real Agents SDK app answering HTTP."""
import json

from bot.cli import main as cli_main
from bot.feedback import FeedbackLog
from bot.gaps import GapLog
from bot_harness import QUESTION
from teams_harness import connector, quiet_for, start_teams  # noqa: F401 (fixtures)


def invoke(teams, name: str, answer_id: str, value: dict) -> tuple[int, str]:
    return teams.post(teams.activity(type="invoke", name=name, replyToId=answer_id, value=value))


def test_a_thumbs_down_asks_why_and_the_reason_reaches_the_gap_report(start_teams, connector, engine, tmp_path,
                                                                      monkeypatch, capsys):
    teams = start_teams(engine, gaps_path=tmp_path / "gaps.jsonl")
    teams.say(QUESTION)
    [answer] = connector.wait_for()
    assert answer.activity["channelData"]["feedbackLoop"] == {"type": "custom"}
    quiet_for(teams)  # the bot notes what it answered just after the send returns: let it finish

    status, body = invoke(teams, "message/fetchTask", answer.id,
                          {"data": {"actionName": "feedback", "actionValue": {"reaction": "dislike"}}})
    assert status == 200
    task = json.loads(body)["task"]
    assert task["type"] == "continue"
    card = task["value"]["card"]
    assert card["contentType"] == "application/vnd.microsoft.card.adaptive"
    [why, comment] = card["content"]["body"]
    assert why["label"] == "What was wrong with it?"
    assert [c["title"] for c in why["choices"]] == ["Wrong", "Outdated", "Incomplete", "Not what I asked"]
    assert comment["id"] == "comment" and card["content"]["actions"][0]["type"] == "Action.Submit"

    status, body = invoke(teams, "message/fetchTask", answer.id,
                          {"data": {"actionName": "feedback", "actionValue": {"reaction": "like"}}})
    assert [e["id"] for e in json.loads(body)["task"]["value"]["card"]["content"]["body"]] == ["comment"]

    submitted = json.dumps({"reason": "outdated", "comment": "The policy changed in March"})
    assert invoke(teams, "message/submitAction", answer.id,
                  {"actionName": "feedback", "actionValue": {"reaction": "dislike", "feedback": submitted}}) == (200, "")
    [vote] = FeedbackLog(teams.settings.feedback_path).read()
    assert (vote["vote"], vote["reason"], vote["comment"]) == ("not_helpful", "outdated", "The policy changed in March")
    [gap] = GapLog(tmp_path / "gaps.jsonl").read()
    assert (gap["reason"], gap["comment"], gap["question"]) == ("outdated", "The policy changed in March", QUESTION)

    for name, value in {"CITEBOT_GAPS": str(tmp_path / "gaps.jsonl"), "CITEBOT_DB": engine.settings.db,
                        "CITEBOT_CORPUS": str(engine.settings.corpus)}.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert cli_main(["gaps"]) == 0
    report = capsys.readouterr().out
    assert "why unhelpful: outdated ×1" in report and "The policy changed in March" in report


def test_a_reason_that_was_not_offered_is_not_recorded(start_teams, connector, engine, tmp_path):
    teams = start_teams(engine, gaps_path=tmp_path / "gaps.jsonl")
    teams.say(QUESTION)
    [answer] = connector.wait_for()
    quiet_for(teams)
    submitted = json.dumps({"reason": "<script>", "comment": "meh"})
    assert invoke(teams, "message/submitAction", answer.id,
                  {"actionName": "feedback", "actionValue": {"reaction": "dislike", "feedback": submitted}}) == (200, "")
    [vote] = FeedbackLog(teams.settings.feedback_path).read()
    assert (vote["reason"], vote["comment"]) == ("", "meh")
