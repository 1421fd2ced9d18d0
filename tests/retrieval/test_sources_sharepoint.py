"""A SharePoint source against faithful local fakes of Microsoft sign-in (msal, over TLS) and
Microsoft Graph: a site's libraries enumerated by delta query, then only what changed; links to
each item's webUrl; deleted files and folders leave the index; permissions mirrored (AAD groups,
site groups, organisation links), a file shared with an unmapped group reaches nobody, and a
sharing change upstream takes effect at the next sync."""
from __future__ import annotations

import pytest

from bot.access import Access
from bot.sources import report_lines
from fake_graph import CLIENT_ID, SECRET, TENANT, FakeGraph, FakeLogin
from sources_harness import answer, source_report, sources_engine

HR_GROUP, BOARD_GROUP = "7f3c0000-0000-4000-8000-00000000a11d", "b0a4d000-0000-4000-8000-000000000b0d"
ORG_LINK = {"link": {"scope": "organization", "type": "view", "webUrl": "https://contoso.sharepoint.com/:w:/s/x"}}


def grant_group(group_id: str) -> dict:
    return {"grantedToV2": {"group": {"id": group_id, "displayName": "a group"}}}


@pytest.fixture
def graph(tmp_path, monkeypatch):
    with FakeLogin(tmp_path) as login, FakeGraph() as graph:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(login.cert))  # msal (requests) trusts the test's certificate
        graph.login = login
        docs = graph.library("Documents")
        policies = graph.folder(docs, "Policies")
        graph.share(policies, ORG_LINK, inherit=False)  # the policies folder is open to the whole organisation
        graph.leave = graph.file(docs, "Leave.md", b"# Leave\n\n## Annual leave\n\nStaff get 26 days of annual leave, says CORMORANTLEAVE.\n", policies)
        graph.hr = graph.folder(docs, "HR only")
        graph.share(graph.hr, grant_group(HR_GROUP), inherit=False)
        graph.pay = graph.file(docs, "Pay bands.md", b"# Pay bands\n\n## Bands\n\nThe top pay band code is PUFFINPAY.\n", graph.hr)
        graph.board = graph.file(docs, "Board.md", b"# Board\n\n## Deal\n\nThe board deal is code-named TERNBOARD.\n")
        graph.share(graph.board, grant_group(BOARD_GROUP), inherit=False)
        wiki = graph.library("Team Wiki")
        graph.wifi = graph.file(wiki, "Wifi.md", b"# Wifi\n\n## Guests\n\nThe guest wifi password is SANDERLINGWIFI.\n")
        graph.share(graph.wifi, ORG_LINK)
        yield graph


@pytest.fixture
def access(tmp_path):
    path = tmp_path / "access.yml"
    path.write_text(f"groups:\n  people-ops:\n    source_groups: ['aad:{HR_GROUP}']\nchannels:\n  C0HR: {{groups: [people-ops]}}\n")
    return Access.load(path)


def engine_for(tmp_path, graph, secret=SECRET):
    return sources_engine(tmp_path, [{"name": "intranet", "type": "sharepoint", "site": "https://contoso.sharepoint.com/sites/handbook",
                                      "permissions": "mirror"}],
                          graph_tenant_id=TENANT, graph_client_id=CLIENT_ID, graph_client_secret=secret,
                          graph_url=graph.api, graph_authority=graph.login.url)


def test_sharepoint_files_and_their_permissions_are_mirrored(tmp_path, graph, access):
    engine = engine_for(tmp_path, graph)
    graph.throttled("/v1.0/drives/", 1)
    report = engine.sync()
    assert not report.failed and source_report(report, "intranet").documents == 4
    assert any(status == 429 for _, _, status in graph.calls("/drives/"))
    assert f"visible to nobody: intranet/documents/Board.md (limited to aad:{BOARD_GROUP}" in "\n".join(report_lines(report, access))

    public, hr = access.for_channel("C0GENERAL"), access.for_channel("C0HR")
    text, links = answer(engine, "How many days of annual leave do staff get?", public)
    assert "26 days" in text
    assert "https://contoso.sharepoint.com/sites/handbook/Documents/Policies/Leave.md#annual-leave" in links
    assert "SANDERLINGWIFI" in answer(engine, "What is the guest wifi password?", public)[0]
    assert "PUFFINPAY" not in answer(engine, "What is the top pay band code?", public)[0]
    assert "PUFFINPAY" in answer(engine, "What is the top pay band code?", hr)[0]
    for place in (public, hr):
        assert "TERNBOARD" not in answer(engine, "What is the board deal code-named?", place)[0]

    graph.log.clear()
    unchanged = engine.sync()
    assert unchanged.refresh.embedded == 0 and not graph.calls("/content") and graph.calls("/root/delta?token=")

    graph.edit(graph.leave, b"# Leave\n\n## Annual leave\n\nStaff get 30 days of annual leave, says CORMORANTLEAVE.\n")
    graph.delete(graph.hr)  # the folder goes, and the pay bands with it
    graph.share(graph.wifi, grant_group(BOARD_GROUP), inherit=False)  # no longer organisation-wide
    report = engine.sync()
    assert source_report(report, "intranet").removed == 1 and source_report(report, "intranet").changed == 2
    assert "30 days" in answer(engine, "How many days of annual leave do staff get?", public)[0]
    assert "PUFFINPAY" not in answer(engine, "What is the top pay band code?", hr)[0]
    assert "SANDERLINGWIFI" not in answer(engine, "What is the guest wifi password?", public)[0]

    graph.expired.add(len(graph.changes))  # the saved deltaLink expires: enumerate again, lose nothing
    report = engine.sync()
    assert not report.failed and source_report(report, "intranet").documents == 3
    assert "30 days" in answer(engine, "How many days of annual leave do staff get?", public)[0]


def test_a_wrong_client_secret_fails_the_source_in_one_line(tmp_path, graph):
    report = engine_for(tmp_path, graph, secret="NOT-THE-SECRET").sync()
    [failed] = report.failed
    assert failed.error == "Microsoft sign-in failed: invalid_client (AADSTS7000215: Invalid client secret provided)"
    assert "NOT-THE-SECRET" not in str(report.as_dict())
