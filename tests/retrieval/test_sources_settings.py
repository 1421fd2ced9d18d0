"""The sources file and the sources' credentials are checked before anything is fetched: one line
naming the setting, the source and the field; a secret's value is never shown."""
from __future__ import annotations

import pytest

from bot.access import Access, AccessError
from bot.cli import main
from rag_graph.config import Settings
from rag_graph.retrieval.sources import SourcesError, load_sources


def settings_for(tmp_path, text: str, **given) -> Settings:
    path = tmp_path / "sources.yml"
    path.write_text(text, encoding="utf-8")
    return Settings(sources_path=path, sync_dir=tmp_path / "sync", **given)


@pytest.mark.parametrize("text, message", [
    ("sources:\n  - {name: wiki, type: notion}\n", "sources.0: Input tag 'notion'"),
    ("sources:\n  - {name: Wiki!, type: git, url: x}\n", "sources.0.name: must be 1-40 lower-case"),
    ("sources:\n  - {name: docs, type: web}\n", "give either `sitemap:` or `start:`"),
    ("sources:\n  - {name: docs, type: web, start: 'ftp://x'}\n", "start: must be an http(s) URL"),
    ("sources:\n  - {name: a, type: git, url: x}\n  - {name: a, type: git, url: y}\n", "two sources are named 'a'"),
    ("sources:\n  - {name: h, type: git, url: x, link: 'https://h/'}\n", "link: must be an http(s) URL containing {path} or {slug}"),
    ("sources: [\n", "is not valid YAML (line 2)"),
    ("sources:\n  - {name: wiki, type: confluence, url: 'https://a.atlassian.net/wiki', spaces: [ENG]}\n",
     "source 'wiki' (confluence) needs CONFLUENCE_EMAIL"),
    ("sources:\n  - {name: sp, type: sharepoint, site: 'https://a.sharepoint.com/sites/h'}\n",
     "source 'sp' (sharepoint) needs CITEBOT_GRAPH_TENANT_ID"),
    ("sources:\n  - {name: d, type: google_drive, folder: abc}\n", "source 'd' (google_drive) needs GOOGLE_APPLICATION_CREDENTIALS"),
])
def test_a_bad_sources_file_is_one_line_naming_the_setting(tmp_path, text, message):
    with pytest.raises(SourcesError) as caught:
        load_sources(settings_for(tmp_path, text))
    assert str(caught.value).startswith("CITEBOT_SOURCES: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_without_a_sources_file_the_corpus_folder_is_the_one_source(tmp_path):
    settings = Settings(corpus=tmp_path)
    [source] = load_sources(settings)
    assert source.type == "folder" and source.path == tmp_path and settings.documents == tmp_path
    with_file = settings_for(tmp_path, "sources:\n  - {name: local, type: folder}\n", corpus=tmp_path / "c")
    assert load_sources(with_file)[0].path == tmp_path / "c" and with_file.documents == tmp_path / "sync" / "mirror"


def test_the_cli_names_a_bad_source_in_one_line_and_never_a_token(tmp_path, monkeypatch, capsys):
    path = tmp_path / "sources.yml"
    path.write_text("sources:\n  - {name: wiki, type: confluence, url: 'https://a.atlassian.net/wiki', spaces: [ENG]}\n")
    monkeypatch.setenv("CITEBOT_SOURCES", str(path))
    monkeypatch.setenv("CONFLUENCE_API_TOKEN", "SECRET-TOKEN-VALUE")
    monkeypatch.delenv("CONFLUENCE_EMAIL", raising=False)
    assert main(["sync", "--db", str(tmp_path / "db")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: CITEBOT_SOURCES: source 'wiki' (confluence) needs CONFLUENCE_EMAIL"
    monkeypatch.setenv("CITEBOT_SYNC_MINUTES", "soon")
    assert main(["sync"]) == 2
    assert "CITEBOT_SYNC_MINUTES must be a number" in capsys.readouterr().err


def test_the_access_file_maps_source_groups_into_a_place_s_audiences(tmp_path):
    path = tmp_path / "access.yml"
    path.write_text("groups:\n  people-ops:\n    slack_users: [U1]\n    source_groups: ['Confluence:HR-Team', 'aad:7f3c']\n"
                    "channels:\n  C0HR: {groups: [people-ops]}\n")
    access = Access.load(path)
    assert access.for_channel("C0HR").audiences == {"people-ops", "confluence:hr-team", "aad:7f3c"}
    assert access.for_user("U1").audiences == {"people-ops", "confluence:hr-team", "aad:7f3c"}
    assert access.for_channel("C0GENERAL").audiences == frozenset()
    assert access.unmapped(["confluence:hr-team", "google:secret@acme.com"]) == ["google:secret@acme.com"]
    path.write_text("groups:\n  people-ops:\n    source_groups: [hr-team]\n")
    with pytest.raises(AccessError, match="groups.people-ops.source_groups: Value error, must be written `<source kind>:<group>`"):
        Access.load(path)
