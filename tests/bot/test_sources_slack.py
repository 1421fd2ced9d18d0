"""End to end through the Slack app: a Confluence page restricted upstream to a group the access
file maps (`source_groups`) is answered in the channel of that group and never in a public
channel, where the reply is an honest "I don't know" that names nothing of it."""
from __future__ import annotations

from bot_harness import fake, mrkdwn_of, start_bot  # noqa: F401 (fixtures)
from fake_confluence import EMAIL, TOKEN, FakeConfluence
from sources_harness import sources_engine

SECRET_PAGE = "<h2>Approval</h2><p>Severance agreements are approved with code FINCHSEVER.</p>"


def test_a_restricted_confluence_page_is_answered_only_in_its_groups_channel(start_bot, fake, tmp_path):
    access = tmp_path / "access.yml"
    access.write_text("groups:\n  people-ops:\n    source_groups: ['confluence:hr-team']\nchannels:\n  C0HR: {groups: [people-ops]}\n")
    with FakeConfluence() as wiki:
        wiki.group("g-staff", "confluence-users")
        wiki.space("ENG", [("group", "g-staff")])
        wiki.add_page("ENG", "Lunch", "<h2>Lunch</h2><p>Lunch is served at noon in the atrium.</p>")
        wiki.restrict(wiki.add_page("ENG", "Severance", SECRET_PAGE), groups=["hr-team"])
        engine = sources_engine(tmp_path, [{"name": "wiki", "type": "confluence", "url": wiki.wiki, "spaces": ["ENG"],
                                            "permissions": "mirror", "everyone": ["confluence-users"]}],
                                confluence_email=EMAIL, confluence_api_token=TOKEN)
        assert not engine.sync().failed
    bot = start_bot(engine, access_path=access)
    for n, channel in enumerate(("C0HR", "C0GENERAL")):
        bot.mention("Which code approves severance agreements?", channel=channel, ts=f"17000000{n}0.000100")
        fake.wait_for("chat.postMessage", timeout=120, predicate=lambda call, channel=channel: call.args["channel"] == channel)
    posted = {call.args["channel"]: mrkdwn_of(call) + call.args.get("text", "") for call in fake.calls("chat.postMessage")}
    assert "FINCHSEVER" in posted["C0HR"]
    assert "FINCHSEVER" not in posted["C0GENERAL"] and "Severance" not in posted["C0GENERAL"]
    assert "I don't know" in posted["C0GENERAL"]
