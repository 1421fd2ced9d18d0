"""What of an HTML page is the document, before loaders._html converts it to markdown.

Pages built by docs-site generators (Sphinx, MkDocs, Docusaurus, Jekyll themes) wrap the text in
site furniture: a sidebar holding the whole site's table of contents, "previous / next" bars, a
search box, a footer. Indexed, these become sections of every page (the Debian Developer's
Reference: 67 of its 699 chunks, one of them cited as an answer). And each heading carries a
permalink (`¶`, `#`, `§`, an icon) that would end up in its section name, while the id a link
must name sits on the permalink's `href` or on the enclosing `<section>` (HTML5 sectioning, as
docutils 0.17+ writes it), not on the heading: the citation would point at an anchor the page
does not have. DocBook's HTML (Publican, the DocBook XSL stylesheets: Linux distributions'
manuals) and older generators (Javadoc) name a section by an empty `<a id=…>` / `<a name=…>`
inside its heading, wrap the text in previous/next bars and chapter tables of contents marked
only by class, and an XHTML page opens with `<?xml …?>`, which the conversion would keep as text
(The Debian Administrator's Handbook: every section anchor missed, "xml version=…" and
"Prev / Up / Home / Next" in every page's first and last chunk).
"""
from __future__ import annotations

import re

_HEADING = re.compile(r"^h[1-6]$")
_LANDMARKS = ["navigation", "search"]  # ARIA roles of a <nav> and a search form written as <div>s
# DocBook's navigation, by class: the DocBook XSL stylesheets' header and footer bars, Publican's
# previous/up/home/next list, the table of contents opening a chapter or book page.
_NAVIGATION_CLASSES = {"navheader", "navfooter", "docnav", "toc"}


def page_content(soup):
    """The part of the parsed page to convert: its one <main> (or role="main") element when it has
    exactly one, else the whole page; navigation and search landmarks dropped either way, and
    every heading's permalink turned into the heading's id."""
    from bs4 import Declaration, ProcessingInstruction

    for node in soup.find_all(string=lambda text: isinstance(text, (ProcessingInstruction, Declaration))):
        node.extract()  # `<?xml version="1.0"?>`: markup about the file, not text of the page
    for element in soup.find_all(attrs={"role": _LANDMARKS}):
        element.decompose()
    for element in soup.find_all(class_=lambda names: names in _NAVIGATION_CLASSES):
        element.decompose()
    mains = soup.find_all("main") or soup.find_all(attrs={"role": "main"})
    root = mains[0] if len(mains) == 1 else soup
    for heading in root.find_all(_HEADING):
        _permalink_to_id(heading)
    return root


def _permalink_to_id(heading) -> None:
    """A link inside the heading to a fragment, with no letter or digit in its text, is the
    heading's permalink: removed from the text, its fragment kept as the heading's id unless the
    heading has one. Without either, the id (or old-style name) of an empty anchor inside the
    heading, else the id of the <section> the heading opens."""
    permalink = next((a for a in heading.find_all("a", href=True)
                      if a["href"].startswith("#") and len(a["href"]) > 1 and not re.search(r"\w", a.get_text())), None)
    fragment = permalink["href"][1:] if permalink is not None else ""
    if permalink is not None:
        permalink.decompose()
    if heading.get("id"):
        return
    section = heading.parent
    opens_section = section is not None and section.name == "section" and section.find(_HEADING) is heading
    target = next((a for a in heading.find_all("a") if not a.get("href") and not a.get_text(strip=True)
                   and (a.get("id") or a.get("name"))), None)
    named = (target.get("id") or target.get("name")) if target is not None else ""
    anchor = fragment or named or (section.get("id") if opens_section else "")
    if anchor:
        heading["id"] = anchor
