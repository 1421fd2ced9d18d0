"""A DocBook-built docs page (Publican's and the DocBook XSL stylesheets' layout, as Linux
distributions' manuals ship it): only its text is indexed, and its sections link to the ids the
page really has."""
import pytest

from rag_graph.config import Settings
from rag_graph.engine import Engine
from rag_graph.retrieval.ingest import load_corpus

# Publican's shape: an XML declaration, previous/next lists (class "docnav"), a chapter table of
# contents (class "toc"), and each section named by an empty <a id> inside its heading.
CHAPTER_PAGE = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter 9. Unix Services</title></head><body>
<ul class="docnav top"><li class="previous"><a accesskey="p" href="network.html"><strong>Prev</strong></a></li>
<li class="home">The Office Admin Guide</li><li class="next"><a accesskey="n" href="sect.backup.html"><strong>Next</strong></a></li></ul>
<div class="chapter"><div class="titlepage"><div><div><h1 class="title"><a xmlns="" id="unix-services"></a>Chapter 9. Unix Services</h1></div></div></div>
<div class="toc"><dl class="toc"><dt><span class="section"><a href="unix-services.html#sect.scheduling">9.1. Scheduling Tasks</a></span></dt>
<dt><span class="section"><a href="sect.backup.html">9.2. Backup</a></span></dt></dl></div>
<div class="section"><div class="titlepage"><div><div><h2 class="title"><a xmlns="" id="sect.scheduling"></a>9.1. Scheduling Tasks</h2></div></div></div>
<div class="para">The office runs its recurring jobs with cron.</div>
<div class="section"><div class="titlepage"><div><div><h3 class="title"><a xmlns="" id="sect.cron-deny"></a>9.1.1. Keeping someone from scheduling</h3></div></div></div>
<div class="para">To block a user from scheduling jobs, write their username in the file /etc/cron.deny.</div></div></div></div>
<ul class="docnav"><li class="previous"><a accesskey="p" href="network.html"><strong>Prev</strong>8.4. Network</a></li>
<li class="up"><a accesskey="u" href="#"><strong>Up</strong></a></li><li class="home"><a accesskey="h" href="index.html"><strong>Home</strong></a></li>
<li class="next"><a accesskey="n" href="sect.backup.html"><strong>Next</strong>9.2. Backup</a></li></ul></body></html>"""

# The DocBook XSL stylesheets' shape (and Javadoc's): old-style <a name> in the heading, header and footer bars.
XSL_PAGE = """<html><head><title>9.2. Backup</title></head><body>
<div class="navheader"><table><tr><th colspan="3">9.2. Backup</th></tr><tr><td><a href="unix-services.html">Prev</a></td></tr></table></div>
<div class="section"><div class="titlepage"><h2 class="title"><a name="sect.backup"></a>9.2. Backup</h2></div>
<p>Backups are kept on the backup server for fifteen days.</p></div>
<div class="navfooter"><table><tr><td><a href="unix-services.html">Prev</a></td><td>Up</td><td>Home</td></tr></table></div>
</body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("docbook")
    (root / "unix-services.html").write_text(CHAPTER_PAGE)
    (root / "unix-services.html.yml").write_text("url: https://guide.example.org/unix-services.html\n")
    (root / "sect.backup.html").write_text(XSL_PAGE)
    return root


def _chunks(root, path):
    return [c for c in load_corpus(root).chunks if c.path == path]


def test_navigation_contents_and_the_xml_declaration_are_not_indexed(site):
    text = "\n".join(c.text for c in _chunks(site, "unix-services.html") + _chunks(site, "sect.backup.html"))
    for furniture in ("xml version", "Prev", "Next", "Home", "9.2. Backup](sect.backup.html)"):
        assert furniture not in text
    assert "/etc/cron.deny" in text and "fifteen days" in text


def test_sections_are_anchored_to_the_empty_anchor_in_their_heading(site):
    sections = {c.section: c.anchor for c in _chunks(site, "unix-services.html")}
    assert sections == {"9.1. Scheduling Tasks": "sect.scheduling",
                        "9.1. Scheduling Tasks › 9.1.1. Keeping someone from scheduling": "sect.cron-deny"}
    assert {c.anchor for c in _chunks(site, "sect.backup.html")} == {"sect.backup"}  # <a name>, old style


def test_an_answer_cites_the_section_link_the_page_has(site, tmp_path):
    engine = Engine(Settings(corpus=site, db=str(tmp_path / "lancedb")))
    engine.refresh()
    output = engine.ask("How do I stop a user from scheduling cron jobs?")
    assert output["status"] == "answered" and "/etc/cron.deny" in output["answer"], output
    assert output["citations"][0]["url"] == "https://guide.example.org/unix-services.html#sect.cron-deny"
