"""CITEBOT_SOURCE_URL: a link for every document, down to its section; CITEBOT_LINK_HOSTS: the
addresses an answer may quote."""
import pytest

from rag_graph.config import Settings, SettingsError
from rag_graph.answer.links import citation_url, source_url

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


TRANSIT = """---
title: Transit benefit
url: https://handbook.example.com/transit
---
# Transit benefit

## Enrolling

To enroll in the transit benefit, register at https://transitapp.ost.dot.gov and fill in the
Transit Benefit Program application.
"""


def test_an_answer_quotes_an_address_on_a_trusted_host_and_removes_it_otherwise(tmp_path):
    """18F's transit page: "register at https://transitapp.ost.dot.gov" answered "register at
    [link removed]", since no cited document lives on that host. An admin who trusts the
    agency's hosts lists them once."""
    from rag_graph.engine import Engine

    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "transit.md").write_text(TRANSIT)
    question = "how do I enroll in the transit benefit?"
    plain = Engine(Settings(corpus=tmp_path / "kb", db=str(tmp_path / "db")))
    plain.refresh()
    assert "register at [link removed]" in plain.ask(question)["answer"]
    trusting = Engine(Settings(corpus=tmp_path / "kb", db=str(tmp_path / "db"), link_hosts=("dot.gov",)))
    output, sentences = trusting.ask_cited(question)
    assert "register at https://transitapp.ost.dot.gov and fill in" in output["answer"], output
    assert any("https://transitapp.ost.dot.gov" in s["text"] for s in sentences)
