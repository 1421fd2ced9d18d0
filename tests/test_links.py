"""CITEBOT_SOURCE_URL: a link for every document, down to its section."""
import pytest

from rag_graph.config import Settings, SettingsError
from rag_graph.links import citation_url, source_url

GITHUB = "https://github.com/acme/handbook/blob/main/{path}"
SITE = "https://handbook.example.com/{slug}/"


def test_path_keeps_the_extension_and_quotes_each_segment():
    assert source_url(GITHUB, "people ops/Time off & leave.md") == \
        "https://github.com/acme/handbook/blob/main/people%20ops/Time%20off%20%26%20leave.md"


def test_slug_drops_md_and_an_index_stands_for_its_folder():
    assert source_url(SITE, "handbook/benefits.md") == "https://handbook.example.com/handbook/benefits/"
    assert source_url(SITE, "handbook/index.md") == "https://handbook.example.com/handbook/"
    assert source_url(SITE, "index.md") == "https://handbook.example.com/"
    assert source_url(SITE, "docs/laptops.mdx") == "https://handbook.example.com/docs/laptops/"
    assert source_url(SITE, "docs/index.markdown") == "https://handbook.example.com/docs/"


def test_a_front_matter_url_wins_and_the_anchor_is_appended():
    assert citation_url("https://hr.example/2025", SITE, "handbook/x.md", "remote-work") == \
        "https://hr.example/2025#remote-work"
    assert citation_url("", SITE, "handbook/x.md", "remote-work") == "https://handbook.example.com/handbook/x/#remote-work"
    assert citation_url("", "", "handbook/x.md", "remote-work") == ""


@pytest.mark.parametrize("bad", ["handbook/{path}", "https://handbook.example.com/", "ftp://x/{path}"])
def test_a_template_that_cannot_make_links_is_refused_by_name(bad, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no .env in reach
    monkeypatch.setenv("CITEBOT_SOURCE_URL", bad)
    with pytest.raises(SettingsError, match="^CITEBOT_SOURCE_URL must be"):
        Settings.from_env()
