"""A website: the pages its sitemap lists (with `lastmod`), or a crawl from a start page within
the listed URL prefixes. Polite and bounded: robots.txt is obeyed, a `noindex` page (meta tag or
X-Robots-Tag) is left out and a `nofollow` one not followed, redirects are followed only while
they stay within the prefixes, pages, depth and request rate are capped. Incremental: a sitemap
`lastmod` that did not move skips the page, else the request carries the page's `ETag` and
`Last-Modified` and a 304 keeps it. A page gone (404, 410, or no longer listed or linked) is
removed; a page that fails otherwise keeps its last good copy.

The main content is extracted with trafilatura (boilerplate such as navigation and footers
removed, headings, lists and tables kept as markdown); each heading then gets the `id` the page
gives it, so a citation links to the section on the live page."""
from __future__ import annotations

import email.utils
import re
import time
from collections import deque
from urllib.parse import urljoin, urldefrag, urlsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

import lxml.html
import trafilatura

from .base import Changes, Document, SourceError, slug
from .http import Http

MAX_REDIRECTS = 5
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class Fetcher:
    def __init__(self, source, settings, sleep=time.sleep):
        self.source = source
        entry = source.sitemap or source.start
        self.prefixes = source.include or [entry.rsplit("/", 1)[0] + "/"]
        self.http = Http(headers={"User-Agent": source.user_agent}, follow_redirects=False, sleep=sleep)
        self.sleep = sleep
        self._robots: dict[str, RobotFileParser] = {}
        self._last_request = 0.0

    # ---- politeness ------------------------------------------------------------------------

    def _within(self, url: str) -> bool:
        return any(url.startswith(prefix) for prefix in self.prefixes)

    def _get(self, url: str, headers: dict | None = None):
        wait = self._last_request + self.source.delay_seconds - time.monotonic()
        if wait > 0:
            self.sleep(wait)
        self._last_request = time.monotonic()
        return self.http.get(url, headers=headers or {})

    def _allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            robots = RobotFileParser()
            response = self._get(origin + "/robots.txt")
            if response.status_code >= 500:
                raise SourceError(f"robots.txt of {origin} answers HTTP {response.status_code}; nothing fetched")
            robots.parse(response.text.splitlines() if response.status_code == 200 else [])
            self._robots[origin] = robots
        return self._robots[origin].can_fetch(self.source.user_agent, url)

    def _follow(self, url: str, headers: dict):
        """The response at the end of the redirects, or (None, why) when one leaves the prefixes."""
        for _ in range(MAX_REDIRECTS + 1):
            if not self._within(url) or not self._allowed(url):
                return None, url
            response = self._get(url, headers)
            if response.status_code in (301, 302, 303, 307, 308) and "location" in response.headers:
                url = urldefrag(urljoin(url, response.headers["location"]))[0]
                continue
            return response, url
        return None, url

    # ---- what to fetch -----------------------------------------------------------------------

    def _sitemap(self, url: str, depth: int = 0) -> dict[str, str]:
        """{page URL: lastmod} from a sitemap or a sitemap index."""
        response = self._get(url)
        if response.status_code != 200:
            raise SourceError(f"sitemap {url} answers HTTP {response.status_code}")
        try:
            root = ElementTree.fromstring(response.content)
        except ElementTree.ParseError:
            raise SourceError(f"sitemap {url} is not XML") from None
        pages = {}
        for entry in root:
            loc = (entry.findtext(f"{_SITEMAP_NS}loc") or "").strip()
            if entry.tag == f"{_SITEMAP_NS}sitemap" and loc and depth < 2:
                pages.update(self._sitemap(loc, depth + 1))
            elif entry.tag == f"{_SITEMAP_NS}url" and loc:
                pages[urldefrag(loc)[0]] = (entry.findtext(f"{_SITEMAP_NS}lastmod") or "").strip()
        return pages

    def fetch(self, state) -> Changes:
        known: dict = state.cursor.get("pages", {}) if state.files else {}
        pages: dict = {}
        changes = Changes(full=True)
        try:
            if self.source.sitemap:
                listed = self._sitemap(self.source.sitemap)
                for url, lastmod in list(listed.items())[:self.source.max_pages]:
                    if self._within(url):
                        self._page(url, known, pages, changes, lastmod=lastmod)
                if len(listed) > self.source.max_pages:
                    changes.notes.append(f"the sitemap lists {len(listed)} pages; the first {self.source.max_pages} are kept (max_pages)")
            else:
                self._crawl(known, pages, changes)
        finally:
            self.http.close()
        changes.cursor = {"pages": pages}
        return changes

    def _crawl(self, known: dict, pages: dict, changes: Changes) -> None:
        queue, seen = deque([(self.source.start, 0)]), {self.source.start}
        while queue and len(pages) < self.source.max_pages:
            url, depth = queue.popleft()
            links = self._page(url, known, pages, changes)
            if depth < self.source.max_depth:
                for link in links:
                    if link not in seen and self._within(link):
                        seen.add(link)
                        queue.append((link, depth + 1))
        if queue:
            changes.notes.append(f"stopped at {self.source.max_pages} pages (max_pages)")

    # ---- one page ------------------------------------------------------------------------------

    def _page(self, url: str, known: dict, pages: dict, changes: Changes, lastmod: str = "") -> list[str]:
        """Fetch one page into `changes`; returns the links to follow from it."""
        before = known.get(url)
        if before and lastmod and before.get("lastmod") == lastmod:
            pages[url] = before
            changes.keep.append(url)
            return before.get("links", [])
        headers = {}
        if before and before.get("etag"):
            headers["If-None-Match"] = before["etag"]
        if before and before.get("last_modified"):
            headers["If-Modified-Since"] = before["last_modified"]
        response, final = self._follow(url, headers)
        if response is None:
            changes.notes.append(f"left out {url}: robots.txt disallows it or it redirects outside the prefixes ({final})")
            return []
        if response.status_code == 304 and before:
            pages[url] = {**before, "lastmod": lastmod}
            changes.keep.append(url)
            return before.get("links", [])
        if response.status_code in (404, 410):
            return []  # gone: not kept, so removed
        if response.status_code != 200:
            if before:  # a passing failure keeps the last good copy
                pages[url] = before
                changes.keep.append(url)
            changes.notes.append(f"kept the last copy of {url}: HTTP {response.status_code}")
            return []
        html = response.text
        robots = (response.headers.get("X-Robots-Tag", "") + " " + _meta_robots(html)).lower()
        links = [] if "nofollow" in robots else _links(html, final)
        record = {"etag": response.headers.get("ETag"), "last_modified": response.headers.get("Last-Modified"),
                  "lastmod": lastmod, "links": links}
        if "noindex" in robots:
            pages[url] = {**record, "noindex": True}
            return links
        document = _document(url, final, html, response.headers.get("Last-Modified"))
        if document is None:
            changes.notes.append(f"left out {url}: no main content found")
            return links
        pages[url] = record
        changes.upserts.append(document)
        return links


def _meta_robots(html: str) -> str:
    try:
        tree = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return ""
    return " ".join(m.get("content", "") for m in tree.xpath("//meta[@name]")
                    if m.get("name", "").lower() in ("robots", "citebot"))


def _links(html: str, base: str) -> list[str]:
    try:
        tree = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return []
    out = []
    for anchor in tree.xpath("//a[@href]"):
        if "nofollow" in (anchor.get("rel") or ""):
            continue
        link = urldefrag(urljoin(base, anchor.get("href")))[0]
        if link.startswith(("http://", "https://")) and link not in out:
            out.append(link)
    return out


def _heading_ids(html: str) -> dict[str, str]:
    """{heading text: the id a link to it uses}: the heading's own id, or an anchor's inside it."""
    tree = lxml.html.fromstring(html)
    ids = {}
    for heading in tree.xpath("//h1|//h2|//h3|//h4|//h5|//h6"):
        anchor = heading.get("id") or next((a.get("id") or a.get("name") for a in heading.xpath(".//*[@id]|.//a[@name]")), None)
        text = " ".join(heading.text_content().split())
        if anchor and text:
            ids.setdefault(text.lower(), anchor)
    return ids


def _document(url: str, final: str, html: str, modified: str | None) -> Document | None:
    body = trafilatura.extract(html, output_format="markdown", include_formatting=True, include_tables=True,
                               include_links=False, include_comments=False, favor_recall=True)
    if not body or not body.strip():
        return None
    ids = _heading_ids(html)
    lines = []
    for line in body.splitlines():
        match = _HEADING.match(line)
        if match and match.group(2).strip("#* ").lower() in ids:
            line = f"{match.group(1)} {match.group(2)} {{#{ids[match.group(2).strip('#* ').lower()]}}}"
        lines.append(line)
    metadata = trafilatura.extract_metadata(html)
    title = (metadata.title if metadata and metadata.title else "") or urlsplit(final).path.strip("/") or final
    parts = urlsplit(url)
    path = f"{slug(parts.netloc, 60)}/{slug(parts.path.strip('/') or 'index', 120)}.md"
    meta = {"title": title, "url": final}
    if modified:
        try:
            meta["effective_date"] = email.utils.parsedate_to_datetime(modified).date().isoformat()
        except (TypeError, ValueError):
            pass
    return Document(key=url, path=path, content="\n".join(lines).encode(), meta=meta)
