"""An HTML page that names its own address (`<link rel="canonical">`, as Sphinx with html_baseurl,
MkDocs, Docusaurus, Publican and most CMSs write it) is cited with a link to that address and the
section's anchor, with no CITEBOT_SOURCE_URL. Only an absolute http(s) address counts; a sidecar's
`url` wins over it."""
from pathlib import Path

import pytest

from rag_graph.config import Settings
from rag_graph.engine import Engine
from rag_graph.retrieval.ingest import load_corpus


def _page(canonical: str, heading: str, text: str) -> str:
    return (f'<html><head><title>{heading}</title><link rel="stylesheet" href="style.css">'
            f'<link rel="canonical" href="{canonical}"></head><body>'
            f'<h1>{heading}</h1><h2 id="upgrades">Automatic upgrades</h2><p>{text}</p></body></html>')


@pytest.fixture
def site(tmp_path) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    (root / "updates.html").write_text(_page(
        "https://admin.example.org/guide/updates.html", "Keeping systems up to date",
        "Security fixes are installed every night by unattended-upgrades on every server."))
    (root / "relative.html").write_text(_page("/guide/relative.html", "Relative", "Printers are managed with CUPS."))
    (root / "script.html").write_text(_page("javascript:alert(1)", "Script", "Backups are kept for fifteen days."))
    (root / "sidecar.html").write_text(_page("https://old.example.org/mail.html", "Mail", "Mail is delivered by Postfix."))
    (root / "sidecar.html.yml").write_text("url: https://admin.example.org/guide/mail.html\n")
    return root


def test_a_page_is_cited_at_the_address_it_names_with_the_sections_anchor(site, tmp_path, monkeypatch):
    monkeypatch.delenv("CITEBOT_SOURCE_URL", raising=False)
    engine = Engine(Settings(corpus=site, db=str(tmp_path / "lancedb")))
    engine.refresh()
    output = engine.ask("How do security fixes get installed on our servers?")
    assert output["status"] == "answered" and "unattended-upgrades" in output["answer"], output
    assert output["citations"][0]["url"] == "https://admin.example.org/guide/updates.html#upgrades"


def test_only_an_absolute_web_address_counts_and_a_sidecar_wins(site):
    urls = {d.path: d.url for d in load_corpus(site).documents}
    assert urls["relative.html"] == "" and urls["script.html"] == ""
    assert urls["sidecar.html"] == "https://admin.example.org/guide/mail.html"
    assert urls["updates.html"] == "https://admin.example.org/guide/updates.html"
