"""Confluence Cloud: the pages of the listed spaces, with their permissions mirrored.

Each sync lists every page of the spaces with CQL (`/rest/api/content/search`, v1: the one listing
that carries each page's version, ancestors and read restrictions in one paginated call), and
reads the body (REST v2, storage format) only of the pages whose version moved; a page no longer
listed was deleted (or archived) and leaves the index. Version numbers, not `lastmodified` times,
decide what changed: no clock or time zone is involved, and a listing is needed anyway to see
deletions and restriction changes (restrictions do not make a new version).

`permissions: mirror`: the readers of a page are the space's `read` permission holders (REST v2
space permissions; group ids named through `/rest/api/group/by-id`) narrowed by the read
restrictions of the page and of each ancestor (a restricted parent hides its children). Tokens are
`confluence:<group name>` and `confluence-user:<accountId>`; a level whose readers share no token
with the next leaves nobody (fail closed). A space readable by a group listed in `everyone:` (such
as `confluence-users`) does not narrow anything, and a page nobody restricts in such a space is for
everyone."""
from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

from .base import Changes, Document, SourceError, audience, slug
from .http import Http

LIMIT = 100  # results per request (the APIs cap at 250 for v2, 100 to 200 for CQL search)
_HEADING = re.compile(r"<h([1-6])(\s[^>]*)?>(.*?)</h\1>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")


def heading_anchor(text: str) -> str:
    """Confluence Cloud's link to a heading: its words joined by hyphens, case kept."""
    words = re.sub(r"[^\w\s-]", "", html.unescape(_TAG.sub("", text))).split()
    return "-".join(words)


class Fetcher:
    def __init__(self, source, settings):
        self.source = source
        self.base = source.url.rstrip("/")  # https://acme.atlassian.net/wiki
        parts = urlsplit(self.base)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.http = Http(auth=(settings.confluence_email, settings.confluence_api_token),
                         headers={"Accept": "application/json"})
        self._groups: dict[str, str] = {}

    def _next(self, link: str | None) -> str | None:
        if not link:
            return None
        return self.origin + link if link.startswith(urlsplit(self.base).path + "/") else self.base + link

    def _pages_of(self, url: str, params: dict | None = None):
        while url:
            data = self.http.json(url, params=params)
            params = None  # the next link carries them
            yield from data.get("results", [])
            url = self._next((data.get("_links") or {}).get("next"))

    def fetch(self, state) -> Changes:
        try:
            spaces = {s["key"]: s for s in self._pages_of(f"{self.base}/api/v2/spaces",
                                                          {"keys": ",".join(self.source.spaces), "limit": LIMIT})}
            missing = [key for key in self.source.spaces if key not in spaces]
            if missing:
                raise SourceError(f"space(s) {', '.join(missing)} not found, or the account may not read them")
            readers = {key: self._space_readers(space["id"]) for key, space in spaces.items()}
            listed = list(self._pages_of(f"{self.base}/rest/api/content/search", {
                "cql": "type=page AND space in (" + ",".join(f'"{k}"' for k in self.source.spaces) + ")",
                "expand": "version,space,ancestors,restrictions.read.restrictions.user,restrictions.read.restrictions.group",
                "limit": LIMIT}))
            return self._changes(state, listed, readers)
        finally:
            self.http.close()

    def _changes(self, state, listed: list[dict], readers: dict[str, set[str] | None]) -> Changes:
        known = state.cursor.get("pages", {}) if state.files else {}
        restrictions = {page["id"]: _restricted(page) for page in listed}
        pages, changes = {}, Changes(full=True)
        for page in listed:
            space = page["space"]["key"]
            groups, public = self._readers(page, readers[space], restrictions)
            version = page["version"]["number"]
            record = {"version": version, "audience": sorted(groups), "public": public, "title": page["title"]}
            pages[page["id"]] = record
            if known.get(page["id"]) == record:
                changes.keep.append(page["id"])
                continue
            changes.upserts.append(self._document(page, space, groups, public))
        changes.cursor = {"pages": pages}
        return changes

    def _readers(self, page: dict, space: set[str] | None, restrictions: dict) -> tuple[set[str], bool]:
        """(source groups that may read the page, open to everyone?). None for the space: anyone."""
        if self.source.permissions != "mirror":
            return set(), True
        levels = [space] if space is not None else []
        levels += [restrictions[a["id"]] for a in page.get("ancestors", []) if restrictions.get(a["id"])]
        if restrictions[page["id"]]:
            levels.append(restrictions[page["id"]])
        if not levels:
            return set(), True
        allowed = set(levels[0])
        for level in levels[1:]:
            allowed &= level
        return allowed, False

    def _space_readers(self, space_id: str) -> set[str] | None:
        """The tokens of who may read the space; None when a group of `everyone:` may."""
        if self.source.permissions != "mirror":
            return None
        tokens = set()
        for grant in self._pages_of(f"{self.base}/api/v2/spaces/{space_id}/permissions", {"limit": LIMIT}):
            operation, principal = grant.get("operation") or {}, grant.get("principal") or {}
            if operation.get("key") != "read" or operation.get("targetType") != "space":
                continue
            if principal.get("type") == "group":
                tokens.add(f"confluence:{self._group_name(principal['id'])}")
            elif principal.get("type") == "user":
                tokens.add(f"confluence-user:{principal['id']}")
            # any other principal (a role) grants nobody here: fail closed
        everyone = {f"confluence:{g.lower()}" for g in self.source.everyone}
        return None if tokens & everyone else tokens

    def _group_name(self, group_id: str) -> str:
        if group_id not in self._groups:
            self._groups[group_id] = self.http.json(f"{self.base}/rest/api/group/by-id", params={"id": group_id})["name"].lower()
        return self._groups[group_id]

    def _document(self, page: dict, space: str, groups: set[str], public: bool) -> Document:
        data = self.http.json(f"{self.base}/api/v2/pages/{page['id']}", params={"body-format": "storage"})
        body = ((data.get("body") or {}).get("storage") or {}).get("value", "")
        body = _HEADING.sub(lambda m: f'<h{m.group(1)} id="{html.escape(heading_anchor(m.group(3)))}">{m.group(3)}</h{m.group(1)}>', body)
        title = data.get("title") or page["title"]
        page_html = f"<html><head><title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>{body}</body></html>"
        links = data.get("_links") or {}
        url = (links.get("base") or self.base) + links.get("webui", f"/pages/viewpage.action?pageId={page['id']}")
        meta = {"title": title, "url": url, "audience": audience(groups, public, self.source.name),
                "effective_date": ((data.get("version") or {}).get("createdAt") or "")[:10] or None}
        return Document(key=page["id"], path=f"{space}/{slug(title)}-{page['id']}.html", content=page_html.encode(),
                        meta=meta, restricted=[] if public else sorted(groups) or meta["audience"])


def _restricted(page: dict) -> set[str]:
    """The read restrictions set on the page itself (users and groups), as tokens."""
    read = ((page.get("restrictions") or {}).get("read") or {}).get("restrictions") or {}
    tokens = {f"confluence:{g['name'].lower()}" for g in (read.get("group") or {}).get("results", [])}
    tokens |= {f"confluence-user:{u['accountId']}" for u in (read.get("user") or {}).get("results", [])}
    return tokens
