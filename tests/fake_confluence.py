"""A local fake of Confluence Cloud's REST APIs, as the Confluence source reads them (from
Atlassian's REST v2 and v1 references): spaces by key, a space's permission assignments, group
names by id, CQL content search with expanded version / space / ancestors / read restrictions,
and a page's storage-format body. Cursor pagination with `_links.next` (relative to the site, as
Confluence writes it), Basic auth with an email and API token, 429 with Retry-After when told,
and deleted pages that 404 and drop out of search."""
from __future__ import annotations

import base64
import re

from fake_http import FakeServer, cursor, offset_of

EMAIL, TOKEN = "bot@acme.com", "ATATT-test-token"


class FakeConfluence(FakeServer):
    def __init__(self):
        super().__init__()
        self.spaces: dict[str, dict] = {}  # key -> {id, name, grants: [(type, id)]}
        self.groups: dict[str, str] = {}  # id -> name
        self.pages: dict[str, dict] = {}
        self._next_id = 1000
        self.route("GET", r"/wiki/api/v2/spaces", self._spaces)
        self.route("GET", r"/wiki/api/v2/spaces/(?P<space_id>\d+)/permissions", self._permissions)
        self.route("GET", r"/wiki/rest/api/group/by-id", self._group)
        self.route("GET", r"/wiki/rest/api/content/search", self._search)
        self.route("GET", r"/wiki/api/v2/pages/(?P<page_id>\d+)", self._page)

    @property
    def wiki(self) -> str:
        return self.url + "/wiki"

    def authorized(self, headers) -> bool:
        expected = "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()
        return headers.get("Authorization") == expected

    # ---- what the tests set up ---------------------------------------------------------------

    def group(self, group_id: str, name: str) -> None:
        self.groups[group_id] = name

    def space(self, key: str, readers: list[tuple[str, str]]) -> None:
        """`readers`: ("group", group id) or ("user", account id) holding read on the space."""
        self.spaces[key] = {"id": str(len(self.spaces) + 1), "key": key, "name": key.title(), "grants": readers}

    def add_page(self, space: str, title: str, body: str, parent: str | None = None) -> str:
        self._next_id += 1
        page_id = str(self._next_id)
        self.pages[page_id] = {"id": page_id, "space": space, "title": title, "body": body, "version": 1,
                               "parent": parent, "groups": [], "users": [], "deleted": False}
        return page_id

    def edit(self, page_id: str, body: str) -> None:
        self.pages[page_id].update(body=body, version=self.pages[page_id]["version"] + 1)

    def restrict(self, page_id: str, groups: list[str] = (), users: list[str] = ()) -> None:
        """Read restrictions (group names, account ids); a restriction change makes no new version."""
        self.pages[page_id].update(groups=list(groups), users=list(users))

    def delete(self, page_id: str) -> None:
        self.pages[page_id]["deleted"] = True

    # ---- the API -----------------------------------------------------------------------------

    def _paged(self, items: list, query: dict, path: str, extra: str = "") -> dict:
        limit = min(int(query.get("limit", 25)), 250)
        start = offset_of(query.get("cursor"))
        out = {"results": items[start:start + limit], "_links": {"base": self.wiki}}
        if start + limit < len(items):
            out["_links"]["next"] = f"{path}?{extra}limit={limit}&cursor={cursor(start + limit)}"
        return out

    def _spaces(self, query, **_):
        keys = query.get("keys", "").split(",")
        found = [{"id": s["id"], "key": s["key"], "name": s["name"], "type": "global", "status": "current"}
                 for s in self.spaces.values() if s["key"] in keys]
        return self._paged(found, query, "/wiki/api/v2/spaces", f"keys={query.get('keys', '')}&")

    def _permissions(self, query, space_id, **_):
        space = next((s for s in self.spaces.values() if s["id"] == space_id), None)
        if space is None:
            return 404, {"message": "space not found"}
        grants = [{"id": f"{space_id}-{n}", "principal": {"type": kind, "id": principal},
                   "operation": {"key": operation, "targetType": target}}
                  for n, (kind, principal) in enumerate(space["grants"])
                  for operation, target in (("read", "space"), ("create", "page"))]
        return self._paged(grants, query, f"/wiki/api/v2/spaces/{space_id}/permissions")

    def _group(self, query, **_):
        name = self.groups.get(query.get("id", ""))
        return (200, {"type": "group", "id": query["id"], "name": name}) if name else (404, {"message": "no group"})

    def _search(self, query, **_):
        cql = query.get("cql", "")
        match = re.fullmatch(r'type=page AND space in \(((?:"[^"]+",?)+)\)', cql)
        if not match:
            return 400, {"message": f"could not parse cql: {cql}"}
        keys = re.findall(r'"([^"]+)"', match.group(1))
        expand = set(query.get("expand", "").split(","))
        found = [self._content(p, expand) for p in self.pages.values() if p["space"] in keys and not p["deleted"]]
        limit = min(int(query.get("limit", 25)), 200)
        start = offset_of(query.get("cursor"))
        out = {"results": found[start:start + limit], "start": start, "limit": limit, "size": len(found[start:start + limit]),
               "_links": {"base": self.wiki, "context": "/wiki"}}
        if start + limit < len(found):  # v1 links are relative to the context path
            out["_links"]["next"] = f"/rest/api/content/search?cql={cql}&expand={query.get('expand', '')}&limit={limit}&cursor={cursor(start + limit)}"
        return out

    def _ancestors(self, page: dict) -> list[dict]:
        chain, parent = [], page["parent"]
        while parent:
            chain.insert(0, {"id": parent, "type": "page", "title": self.pages[parent]["title"]})
            parent = self.pages[parent]["parent"]
        return chain

    def _content(self, page: dict, expand: set[str]) -> dict:
        out = {"id": page["id"], "type": "page", "status": "current", "title": page["title"],
               "_links": {"webui": f"/spaces/{page['space']}/pages/{page['id']}/{page['title'].replace(' ', '+')}"}}
        if "version" in expand:
            out["version"] = {"number": page["version"], "when": "2026-12-01T10:00:00.000Z"}
        if "space" in expand:
            out["space"] = {"key": page["space"], "id": int(self.spaces[page["space"]]["id"])}
        if "ancestors" in expand:
            out["ancestors"] = self._ancestors(page)
        if "restrictions.read.restrictions.group" in expand:
            groups = [{"type": "group", "name": name, "id": next((i for i, n in self.groups.items() if n == name), name)}
                      for name in page["groups"]]
            users = [{"type": "known", "accountId": account} for account in page["users"]]
            out["restrictions"] = {"read": {"operation": "read", "restrictions": {
                "group": {"results": groups, "size": len(groups)}, "user": {"results": users, "size": len(users)}}}}
        return out

    def _page(self, query, page_id, **_):
        page = self.pages.get(page_id)
        if page is None or page["deleted"]:
            return 404, {"errors": [{"status": 404, "title": "Not Found"}]}
        body = {"storage": {"representation": "storage", "value": page["body"]}} if query.get("body-format") == "storage" else {}
        return {"id": page_id, "status": "current", "title": page["title"], "spaceId": self.spaces[page["space"]]["id"],
                "parentId": page["parent"], "version": {"number": page["version"], "createdAt": "2026-12-01T10:00:00.000Z"},
                "body": body, "_links": {"webui": f"/spaces/{page['space']}/pages/{page_id}/{page['title'].replace(' ', '+')}",
                                         "base": self.wiki}}
