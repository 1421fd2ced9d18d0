"""The access file (CITEBOT_ACCESS): groups by Slack id, Slack user group and Teams AAD id; per
channel groups and source globs; a missing or malformed file is one clear line, never "everyone
sees everything". No model here: what the scopes do to answers is tests/bot/test_scoped_answers.py."""
from pathlib import Path

import pytest
from slack_sdk import WebClient

from bot.access import Access, AccessError
from bot.cli import main
from bot.slack.usergroups import UsergroupMembers
from fake_slack import FakeSlack
from rag_graph.engine import Scope
from rag_graph.retrieval.scope import matches

ACCESS = Path(__file__).parent.parent / "fixtures" / "access.yml"
HR = frozenset({"people-ops"})


def no_usergroups(usergroup):
    raise AssertionError("this lookup needs no Slack user group")


def test_a_channel_counts_as_its_groups_and_an_unlisted_channel_sees_only_public_documents():
    access = Access.load(ACCESS)
    assert access.for_channel("C0HRTEAM") == Scope(audiences=HR)
    assert access.for_channel("C0RANDOM") == Scope()
    assert access.for_channel("C0ENGHELP") == Scope(sources=("engineering/**",))
    # Teams: the channel's own id, else its team's, else the chat's
    assert access.for_channel(None, "C0HRTEAM", "19:chat") == Scope(audiences=HR)


def test_in_a_dm_the_users_groups_decide_by_slack_id_usergroup_or_teams_id():
    access = Access.load(ACCESS)
    assert access.for_user("U0HRLEAD", lambda g: ()) == Scope(audiences=HR)
    assert access.for_user("U0SECLEAD", lambda g: ()) == Scope(audiences=frozenset({"security"}))
    assert access.for_user("6f1c2e0a-0000-4000-8000-00000000beef") == Scope(audiences=HR)
    members = {"S0PEOPLE": {"U0MEMBER"}}
    assert access.for_user("U0MEMBER", lambda g: members.get(g, ())) == Scope(audiences=HR)
    assert access.for_user("U0OTHER", lambda g: members.get(g, ())) == Scope()
    assert access.for_user(None) == Scope()


def test_without_an_access_file_every_place_sees_only_public_documents():
    access = Access.load(None)
    assert access.for_channel("C0HRTEAM") == Scope() and access.for_user("U0HRLEAD") == Scope()


def test_slack_usergroups_are_looked_up_once_and_a_failed_lookup_grants_nothing():
    with FakeSlack() as fake:
        fake.usergroups["S0PEOPLE"] = ["U0MEMBER"]
        now = [0.0]
        members = UsergroupMembers(WebClient(token="xoxb-test", base_url=fake.url), ttl=300, clock=lambda: now[0])
        assert members("S0PEOPLE") == {"U0MEMBER"}
        fake.usergroups["S0PEOPLE"] = []
        assert members("S0PEOPLE") == {"U0MEMBER"}  # cached
        now[0] = 301
        assert members("S0PEOPLE") == frozenset()  # expired: asked again, the member was removed
        assert len(fake.calls("usergroups.users.list")) == 2
        fake.fail_next("usergroups.users.list", error="missing_scope", status=200)
        assert members("S0NEW") == frozenset()


@pytest.mark.parametrize("glob, path, expected", [
    ("engineering/**", "engineering/on-call.md", True),
    ("engineering/**", "engineering/deep/runbook.md", True),
    ("engineering", "engineering/on-call.md", True),
    ("./engineering/", "engineering/on-call.md", True),
    ("engineering/**", "handbook/engineering.md", False),
    ("engineering/*.md", "engineering/deep/runbook.md", False),
    ("**/faq.md", "faq.md", True),
    ("**/faq.md", "product/faq.md", True),
    ("eng*", "engineering/on-call.md", True),
    ("engineering/**", "engineering-archive/old.md", False),
])
def test_source_globs_match_paths_as_git_reads_them(glob, path, expected):
    assert matches(path, (glob,)) is expected


@pytest.mark.parametrize("text, message", [
    ("groups: [people-ops", "is not valid YAML (line"),
    ("- people-ops\n", "must be a mapping"),
    ("grups: {}\n", "grups: Extra inputs are not permitted"),
    ("groups:\n  hr:\n    slack_user: [U1]\n", "groups.hr.slack_user: Extra inputs are not permitted"),
    ("groups:\n  hr:\n    slack_users: U1\n", "groups.hr.slack_users: Input should be a valid list"),
    ("channels:\n  C1:\n    groups: [hr]\n", "channels.C1.groups names undefined group(s) hr"),
    ("channels:\n  C1:\n    sources: ['']\n", "channels.C1.sources: Value error, must not hold empty names"),
])
def test_a_malformed_access_file_is_one_line_naming_the_setting_and_the_place(tmp_path, text, message):
    path = tmp_path / "access.yml"
    path.write_text(text)
    with pytest.raises(AccessError) as error:
        Access.load(path)
    assert str(error.value).startswith("CITEBOT_ACCESS: ") and message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_missing_access_file_stops_serve_and_place_options_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no .env in reach
    monkeypatch.setenv("CITEBOT_ACCESS", str(tmp_path / "nowhere.yml"))
    monkeypatch.setenv("CITEBOT_DB", str(tmp_path / "db"))
    monkeypatch.setenv("CITEBOT_TEAMS", "1")
    monkeypatch.setenv("CONNECTIONS__SERVICE_CONNECTION__SETTINGS__ANONYMOUS_ALLOWED", "true")
    assert main(["serve"]) == 2
    assert main(["ask", "anything?", "--channel", "C0HRTEAM"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert errors == [f"error: CITEBOT_ACCESS: cannot read {tmp_path / 'nowhere.yml'} (No such file or directory)"] * 2
    assert not (tmp_path / "db").exists()  # nothing was indexed


def test_a_document_with_an_unreadable_audience_is_skipped_not_published(tmp_path):
    from rag_graph.retrieval.ingest import load_corpus

    (tmp_path / "a.md").write_text("---\naudience: {people-ops: true}\n---\n# Secret\n\nText.\n")
    (tmp_path / "b.md").write_text("---\naudience: People-Ops\n---\n# Memo\n\nText.\n")
    corpus = load_corpus(tmp_path)
    assert [d.source_id for d in corpus.documents] == ["b"] and corpus.documents[0].audience == ["people-ops"]
    assert "audience must be a group name or a list of group names" in corpus.skipped[0]
