"""Teams trusts no identity field an activity can forge (issue: fail closed, finding 5): only
`channelId: msteams`, replies only to Teams' service hosts (plus CITEBOT_TEAMS_SERVICE_URLS), a
missing conversationType is no personal chat, and admin rights come from the Entra ID object id
per platform, never from `from.id`. Activities posted to /api/messages in anonymous mode, the
mode in which a sender controls every field."""
from __future__ import annotations

from pathlib import Path

import pytest

from fake_connector import FakeConnector
from teams_harness import ADMIN_AAD, connector, quiet_for, start_teams  # noqa: F401 (fixtures)
from rag_graph.config import Settings
from rag_graph.engine import Engine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SEVERANCE = "ZEPHYRQUILL"
QUESTION = "What is the severance approval code?"
HR_AAD = "6f1c2e0a-0000-4000-8000-00000000beef"  # people-ops in tests/fixtures/access.yml


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    engine = Engine(Settings(corpus=FIXTURES / "access_corpus", db=str(tmp_path_factory.mktemp("ids") / "lancedb")))
    engine.refresh()
    return engine


@pytest.fixture
def teams(start_teams, engine, tmp_path):
    return start_teams(engine, access_path=FIXTURES / "access.yml", gaps_path=tmp_path / "gaps.jsonl")


@pytest.fixture
def elsewhere():
    """A server the sender of a forged activity controls."""
    with FakeConnector() as fake:
        yield fake


def test_a_serviceurl_of_the_senders_choosing_gets_nothing(teams, connector, elsewhere):  # noqa: F811
    status, _ = teams.post(teams.activity(QUESTION, user=HR_AAD, conversation="a:forged-1", serviceUrl=elsewhere.url))
    assert status == 403
    assert quiet_for(teams) == [] and elsewhere.sent() == []


def test_only_the_msteams_channel_is_served(teams, connector):  # noqa: F811
    for channel in ("directline", "webchat", "emulator"):
        status, _ = teams.post(teams.activity(QUESTION, user=HR_AAD, conversation=f"a:{channel}", channelId=channel))
        assert status == 403, channel
    assert quiet_for(teams) == []


def test_a_missing_conversation_type_is_not_a_personal_chat(teams, connector):  # noqa: F811
    activity = teams.activity(QUESTION, user=HR_AAD, conversation="19:somewhere@thread.v2", mention=True)
    del activity["conversation"]["conversationType"]
    status, _ = teams.post(activity)
    assert status == 202
    [reply] = connector.wait_for(conversation="19:somewhere@thread.v2", timeout=120)
    assert SEVERANCE not in reply.text and "I don't know" in reply.text
    teams.say(QUESTION, user=HR_AAD, conversation="a:hr-lead")  # the same person in a personal chat
    assert SEVERANCE in connector.wait_for(conversation="a:hr-lead", timeout=120)[0].text


def test_admin_rights_never_come_from_from_id(start_teams, engine, connector, tmp_path):  # noqa: F811
    teams = start_teams(engine, admin_user_ids=("UADMIN",), gaps_path=tmp_path / "gaps.jsonl")
    forged = teams.activity("gaps", conversation="a:forged-admin")
    forged["from"] = {"id": "UADMIN", "name": "Admin"}  # no aadObjectId: from.id is all there is
    assert teams.post(forged)[0] == 202
    [reply] = connector.wait_for(conversation="a:forged-admin", timeout=60)
    assert "only Citebot admins" in reply.text


def test_admin_ids_are_per_platform(start_teams, engine, connector, tmp_path):  # noqa: F811
    teams = start_teams(engine, admin_user_ids=(), slack_admin_ids=(ADMIN_AAD,), teams_admin_ids=("aad-teams-admin",),
                        gaps_path=tmp_path / "gaps.jsonl")
    teams.say("gaps", user=ADMIN_AAD, conversation="a:slack-admin")  # a Slack admin's id means nothing here
    assert "only Citebot admins" in connector.wait_for(conversation="a:slack-admin", timeout=60)[0].text
    teams.say("gaps", user="aad-teams-admin", conversation="a:teams-admin")
    assert "only Citebot admins" not in connector.wait_for(conversation="a:teams-admin", timeout=60)[0].text
