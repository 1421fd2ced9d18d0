"""A Confluence source against a faithful local fake of Confluence Cloud: content with links to
the page and its headings, pagination, 429 with Retry-After, deletions, and mirrored permissions
end to end: a space or page restricted upstream is read only where the access file maps its
group, a page restricted to a group nobody maps reaches nobody and is named in the sync report,
and a restriction added upstream takes effect at the next sync."""
from __future__ import annotations

import pytest

from bot.access import Access
from bot.sources import report_lines
from fake_confluence import EMAIL, TOKEN, FakeConfluence
from rag_graph.retrieval.sources import confluence
from sources_harness import answer, source_report, sources_engine

DEPLOY = "<p>How we ship.</p><h2>Rollback steps</h2><p>A rollback of production uses the WRENROLL command within ten minutes.</p>"
SEVERANCE = "<p>For people partners.</p><h2>Approval</h2><p>Severance agreements are approved with code FINCHSEVER.</p>"
MEMO = "<h2>Acquisition</h2><p>The board memo names the acquisition target as HERONBOARD.</p>"
APPENDIX = "<h2>Figures</h2><p>The appendix prices the acquisition at LARKAPPENDIX.</p>"


@pytest.fixture
def wiki(monkeypatch):
    monkeypatch.setattr(confluence, "LIMIT", 2)  # every listing takes several pages
    with FakeConfluence() as fake:
        fake.group("g-staff", "confluence-users")
        fake.group("g-hr", "hr-team")
        fake.group("g-board", "board")
        fake.space("ENG", [("group", "g-staff")])
        fake.space("HR", [("group", "g-hr")])
        fake.deploy = fake.add_page("ENG", "Deploy guide", DEPLOY)
        fake.add_page("ENG", "Coding style", "<h2>Tabs</h2><p>We indent with four spaces.</p>")
        fake.severance = fake.add_page("HR", "Severance", SEVERANCE)
        fake.memo = fake.add_page("ENG", "Board memo", MEMO)
        fake.restrict(fake.memo, groups=["board"])
        fake.add_page("ENG", "Board appendix", APPENDIX, parent=fake.memo)  # inherits the memo's restriction
        yield fake


@pytest.fixture
def access(tmp_path):
    path = tmp_path / "access.yml"
    path.write_text("groups:\n  people-ops:\n    slack_users: [U0HR]\n    source_groups: ['confluence:hr-team']\n"
                    "channels:\n  C0HR: {groups: [people-ops]}\n")
    return Access.load(path)


def test_confluence_pages_and_their_permissions_are_mirrored(tmp_path, wiki, access):
    engine = sources_engine(tmp_path, [{"name": "wiki", "type": "confluence", "url": wiki.wiki, "spaces": ["ENG", "HR"],
                                        "permissions": "mirror", "everyone": ["confluence-users"]}],
                            confluence_email=EMAIL, confluence_api_token=TOKEN)
    wiki.throttled("/wiki/rest/api/content/search", 1)
    report = engine.sync()
    assert not report.failed and source_report(report, "wiki").documents == 5
    assert ("GET", 429) in [(m, s) for m, _, s in wiki.calls("/content/search")]  # throttled once, then retried
    lines = "\n".join(report_lines(report, access))
    assert f"visible to nobody: wiki/ENG/board-memo-{wiki.memo}.html (limited to confluence:board" in lines
    assert "board-appendix" in lines and "severance" not in lines

    public, hr = access.for_channel("C0GENERAL"), access.for_channel("C0HR")
    text, links = answer(engine, "What command does a production rollback use?", public)
    assert "WRENROLL" in text
    assert f"{wiki.wiki}/spaces/ENG/pages/{wiki.deploy}/Deploy+guide#Rollback-steps" in links
    assert "FINCHSEVER" not in answer(engine, "Which code approves severance agreements?", public)[0]
    assert "FINCHSEVER" in answer(engine, "Which code approves severance agreements?", hr)[0]
    for place in (public, hr):
        assert "HERONBOARD" not in answer(engine, "What is the acquisition target in the board memo?", place)[0]
        assert "LARKAPPENDIX" not in answer(engine, "What price does the appendix give the acquisition?", place)[0]

    wiki.log.clear()
    unchanged = engine.sync()
    assert unchanged.refresh.embedded == 0 and not wiki.calls("/api/v2/pages/")  # no body read again

    wiki.edit(wiki.deploy, DEPLOY.replace("ten minutes", "five minutes"))
    wiki.delete(wiki.severance)
    report = engine.sync()
    assert source_report(report, "wiki").changed == 1 and source_report(report, "wiki").removed == 1
    assert "five minutes" in answer(engine, "How soon must a production rollback happen?", public)[0]
    assert "FINCHSEVER" not in answer(engine, "Which code approves severance agreements?", hr)[0]

    wiki.restrict(wiki.deploy, groups=["hr-team"])  # no new version: only the listing shows it
    engine.sync()
    text, links = answer(engine, "What command does a production rollback use?", public)
    assert "WRENROLL" not in text and not any("Deploy+guide" in link for link in links)
    assert "WRENROLL" in answer(engine, "What command does a production rollback use?", hr)[0]


def test_wrong_credentials_fail_the_source_with_one_line_and_no_secret(tmp_path, wiki):
    engine = sources_engine(tmp_path, [{"name": "wiki", "type": "confluence", "url": wiki.wiki, "spaces": ["ENG"]}],
                            confluence_email=EMAIL, confluence_api_token="WRONG-SECRET")
    report = engine.sync()
    [failed] = report.failed
    assert failed.error == f"HTTP 401 from {wiki.wiki}/api/v2/spaces (check the credentials)"
    assert "WRONG-SECRET" not in str(report.as_dict())
