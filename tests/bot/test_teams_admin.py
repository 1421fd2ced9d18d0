"""Teams: admin text commands, the feedback loop, and who may talk to the bot at all."""
from bot.feedback import FeedbackLog
from bot_harness import QUESTION, own_engine  # noqa: F401 (fixtures)
from teams_harness import ADMIN_AAD, connector, quiet_for, start_teams, teams  # noqa: F401 (fixtures)

CHANNEL_THREAD = "19:general@thread.tacv2;messageid=1700000100001"
REGISTERED = {"CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID": "citebot-app-id",
              "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTSECRET": "secret",
              "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__TENANTID": "tenant-1",
              # ignored: a registered bot never accepts unsigned requests
              "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__ANONYMOUS_ALLOWED": "true"}


def texts(connector):
    return [s.text for s in connector.sent("message")]


def test_an_admin_reloads_with_a_mention_in_a_channel_and_hears_the_same_words_as_in_slack(
        start_teams, own_engine, connector):
    teams = start_teams(own_engine)
    before = own_engine.last_refresh
    teams.say("reload", conversation=CHANNEL_THREAD, kind="channel", mention=True, user=ADMIN_AAD)
    connector.wait_for(predicate=lambda s: "Reloaded:" in s.text, timeout=60)
    said = texts(connector)
    assert said[0] == "Reloading the documents… the current index keeps answering meanwhile."
    assert said[1].startswith("✅ Reloaded: 20 documents") and "index version" in said[1]
    assert own_engine.last_refresh is not before
    assert all(s.conversation == CHANNEL_THREAD for s in connector.sent("message"))


def test_others_are_refused_politely_and_nothing_is_reloaded(start_teams, own_engine, connector):
    teams = start_teams(own_engine)
    before = own_engine.last_refresh
    teams.say("reload")
    [refusal] = connector.wait_for()
    assert "only Citebot admins" in refusal.text and "Ask an admin" in refusal.text
    assert len(quiet_for(teams)) == 1 and own_engine.last_refresh is before


def test_status_and_help_answer_in_the_chat_without_a_trip_through_the_graph(teams, connector):
    teams.say("status")
    teams.say("Help")
    status, help_text = [s.text for s in connector.wait_for(count=2)]
    assert status.startswith("**Citebot") and "20 documents" in status
    assert "`reload`" in help_text and "admins only" in help_text and "/citebot" not in help_text


def test_a_channel_message_without_a_mention_is_not_a_command(teams, connector):
    teams.say("status", conversation=CHANNEL_THREAD, kind="channel")
    assert quiet_for(teams) == []


def test_feedback_on_an_answer_is_answered_200_empty_and_recorded_with_the_answer(teams, connector):
    teams.say(QUESTION)
    [answer] = connector.wait_for()
    quiet_for(teams)  # the bot notes what it answered just after the send returns: let it finish
    invoke = teams.activity(type="invoke", name="message/submitAction", replyToId=answer.id, value={
        "actionName": "feedback",
        "actionValue": {"reaction": "dislike", "feedback": '{"feedbackText":"I wanted the policy for interns"}'}})
    status, body = teams.post(invoke)
    assert (status, body) == (200, "")

    [record] = FeedbackLog(teams.settings.feedback_path).read()
    assert record["platform"] == "teams" and record["conversation"] == "a:personal-1"
    assert record["answer_id"] == answer.id
    assert (record["reaction"], record["vote"]) == ("dislike", "not_helpful")
    assert record["comment"] == "I wanted the policy for interns"
    assert record["question"] == QUESTION and record["status"] == "answered"
    assert record["chunk_ids"] == ["hr-handbook-2025::remote-work::0"] and record["history"] == 0  # asked alone


def test_unsigned_or_malformed_requests_are_refused_when_anonymous_mode_is_off(start_teams, engine, connector):
    for env in (REGISTERED, {}):  # a registered bot, and a bot with neither id nor anonymous mode
        teams = start_teams(engine, env=env)
        activity = teams.activity(QUESTION)
        for headers in ({}, {"Authorization": "Bearer not-a-jwt"}, {"Authorization": "Basic dXNlcjpwYXNz"},
                        {"Authorization": "Bearer"}):
            status, _ = teams.post(activity, headers)
            assert status in (401, 403), (env, headers, status)
    assert connector.sent() == []  # refused before any turn began: nothing can follow

