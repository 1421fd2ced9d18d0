"""Teams users are answered from a verified answer saved in Slack (it is a document like any
other) and see its mark while it is within its review date: end to end through the Agents SDK
app against the fake Bot Connector."""
from datetime import date, timedelta

from bot.verified import VerifiedAnswers
from bot_harness import own_engine  # noqa: F401 (fixture)
from teams_harness import connector, start_teams  # noqa: F401 (fixtures)

QUESTION = "Does the company offer a company car or lease scheme?"
ANSWER = "Yes: employees can lease a company car through the Fleetwise lease scheme after six months of employment."


def test_a_teams_answer_citing_a_verified_answer_carries_its_mark_until_review(start_teams, connector, own_engine):
    settings = own_engine.settings
    verified = VerifiedAnswers(settings)
    saved = verified.save(QUESTION, ANSWER, "Dana Expert", "UDANA", (), "https://fake-team.slack.com/archives/C0HR/p1")
    own_engine.refresh()
    teams = start_teams(own_engine, corpus=settings.corpus)
    teams.say(QUESTION, conversation="a:personal-v")
    [reply] = connector.wait_for("message", conversation="a:personal-v", timeout=120)
    assert "Fleetwise" in reply.text and f"✅ Verified by Dana Expert on {date.today().isoformat()}" in reply.text

    past = (date.today() - timedelta(days=1)).isoformat()
    saved.path.write_text(saved.path.read_text().replace(f"review_by: '{saved.review_by.isoformat()}'", f"review_by: '{past}'"))
    teams.say(QUESTION, conversation="a:personal-w")
    [later] = connector.wait_for("message", conversation="a:personal-w", timeout=120)
    assert "Fleetwise" in later.text and "Verified by" not in later.text
