"""A docs-site page (Sphinx's layout, as most generators write it): only its content is indexed,
and its sections link to the ids the page really has."""
import pytest

from rag_graph.config import Settings
from rag_graph.engine import Engine
from rag_graph.retrieval.ingest import load_corpus

# Sphinx's shape: ids on <section>, a ¶ permalink inside each heading, a "related" bar and a sidebar
# (whole-site table of contents, search box) as role="navigation" <div>s, the text in role="main".
SPHINX_PAGE = """<!doctype html><html><head><title>4. Resources &#8212; Team handbook 2.1 documentation</title></head>
<body>
<div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3>
<ul><li><a href="genindex.html">index</a></li><li><a href="duties.html">previous</a> |</li></ul></div>
<div class="document"><div class="body" role="main">
<section id="resources"><h1>4. Resources<a class="headerlink" href="#resources" title="Permalink to this heading">¶</a></h1>
<section id="mailing-lists"><span id="lists"></span>
<h2>4.1. Mailing lists<a class="headerlink" href="#mailing-lists" title="Permalink to this heading">¶</a></h2>
<p>Our lists are hosted at lists.example.org.</p>
<section id="basic-rules-for-use">
<h3>4.1.1. Basic rules for use<a class="headerlink" href="#basic-rules-for-use" title="Permalink to this heading">¶</a></h3>
<p>When replying on a mailing list, do not send a carbon copy to the original poster unless they ask for one.</p>
</section></section>
<section id="chat"><h2>4.2. Chat</h2><p>The team chats on the #team channel of the Libera network.</p></section>
</section></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation"><h3>Table of Contents</h3>
<ul><li><a href="#">4. Resources</a><ul><li><a href="#mailing-lists">4.1. Mailing lists</a></li></ul></li></ul>
<h4>Previous topic</h4><p><a href="duties.html">3. Duties of every member</a></p>
<div id="searchbox" role="search"><h3>Quick search</h3><form action="search.html"><input type="text" name="q"/></form></div></div>
<div class="footer" role="contentinfo">&#169; Copyright 2024. Created using Sphinx.</div>
</body></html>"""

# MkDocs and Docusaurus keep the id on the heading; GitHub's renderer puts it only on the permalink.
OTHER_GENERATORS = """<html><head><title>Tools</title></head><body><div class="menu" role="navigation"><a href="/">Site map</a></div>
<h2 id="linters">Linters<a class="headerlink" href="#linters" title="Permanent link">¶</a></h2><p>Run lintian before uploading.</p>
<h2><a class="anchor" aria-hidden="true" href="#builders"><svg viewBox="0 0 16 16"></svg></a>Builders</h2><p>Build in a clean chroot with sbuild.</p>
<h2><a href="#faq">FAQ</a></h2><p>Ask on the list.</p>
</body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    (root / "resources.html").write_text(SPHINX_PAGE)
    (root / "resources.html.yml").write_text("url: https://handbook.example.org/resources.html\n")
    (root / "tools.html").write_text(OTHER_GENERATORS)
    return root


def _chunks(root, path):
    return [c for c in load_corpus(root).chunks if c.path == path]


def test_site_furniture_is_not_indexed(site):
    text = "\n".join(c.text for c in _chunks(site, "resources.html"))
    for furniture in ("Navigation", "previous", "Table of Contents", "Previous topic", "Quick search", "Created using Sphinx"):
        assert furniture not in text
    assert "carbon copy" in text and "Libera network" in text


def test_sections_are_named_without_permalinks_and_anchored_to_the_pages_ids(site):
    sections = {c.section: c.anchor for c in _chunks(site, "resources.html")}
    assert sections == {"4.1. Mailing lists": "mailing-lists", "4.1. Mailing lists › 4.1.1. Basic rules for use": "basic-rules-for-use",
                        "4.2. Chat": "chat"}
    assert not any("¶" in c.text for c in _chunks(site, "resources.html"))


def test_a_permalink_gives_the_heading_its_id_and_a_heading_that_is_a_link_keeps_its_words(site):
    sections = {c.section: c.anchor for c in _chunks(site, "tools.html")}
    assert sections == {"Linters": "linters", "Builders": "builders", "FAQ": "faq"}
    assert not any("Site map" in c.text for c in _chunks(site, "tools.html"))  # a page without <main> too


def test_an_answer_cites_the_section_link_the_page_has(site, tmp_path):
    engine = Engine(Settings(corpus=site, db=str(tmp_path / "lancedb")))
    engine.refresh()
    output = engine.ask("Should I cc the original poster when I reply on the mailing list?")
    assert output["status"] == "answered" and "carbon copy" in output["answer"], output
    assert output["citations"][0]["url"] == "https://handbook.example.org/resources.html#basic-rules-for-use"
