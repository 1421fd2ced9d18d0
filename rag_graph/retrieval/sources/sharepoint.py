"""SharePoint document libraries and OneDrive, through Microsoft Graph.

The app signs in as itself (client credentials, with msal: token caching and the authority's
metadata handled by Microsoft's own library). A `site:` is resolved to its document libraries;
each library (or the one `drive:`) is followed with its delta query: the first sync enumerates
it, each later one reads only what changed since the saved `@odata.deltaLink` (an expired link,
HTTP 410, starts the enumeration again). Items with the `deleted` facet leave the index, and so
does every file below a deleted folder. Files ingest can read (markdown, PDF, Word, HTML, text)
are downloaded; a citation links to the item's `webUrl`.

`permissions: mirror`: each file's permissions (`/items/{id}/permissions`) become its audience:
`aad:<object id>` for users and groups granted directly or through a sharing link for specific
people, `sharepoint:<site group name>` for site groups; an organisation-wide or anonymous link,
or a group listed in `everyone:`, makes it public. The delta is asked with `Prefer:
deltashowsharingchanges, hierarchicalsharing` so a permission change brings the item back, and a
folder that comes back has the files below it re-read (they inherit its permissions)."""
from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import quote, urlsplit

from ..loaders import SUFFIXES
from .base import Changes, Document, SourceError, audience, slug
from .http import Http, check

PREFER = "deltashowremovedasdeleted, deltatraversepermissiongaps, deltashowsharingchanges, hierarchicalsharing"
PUBLIC_LINKS = ("anonymous", "organization")


def token(settings) -> str:
    """An app-only access token for Graph (msal caches it per process)."""
    import msal

    resource = "{0.scheme}://{0.netloc}".format(urlsplit(settings.graph_url))
    default = settings.graph_authority.rstrip("/") == "https://login.microsoftonline.com"
    app = msal.ConfidentialClientApplication(
        settings.graph_client_id, client_credential=settings.graph_client_secret,
        authority=f"{settings.graph_authority.rstrip('/')}/{settings.graph_tenant_id}",
        instance_discovery=default)  # a national cloud or a stand-in is trusted as configured
    result = app.acquire_token_for_client(scopes=[f"{resource}/.default"])
    if "access_token" not in result:
        reason = (result.get("error_description") or "").split(".")[0]
        raise SourceError(f"Microsoft sign-in failed: {result.get('error', 'unknown error')}" + (f" ({reason})" if reason else ""))
    return result["access_token"]


class Fetcher:
    def __init__(self, source, settings):
        self.source, self.settings = source, settings
        self.api = settings.graph_url.rstrip("/")
        self.http: Http | None = None

    def fetch(self, state) -> Changes:
        try:
            self.http = Http(headers={"Authorization": f"Bearer {token(self.settings)}"})
        except ValueError as error:  # msal refuses the authority address
            raise SourceError(f"CITEBOT_GRAPH_AUTHORITY: {error}") from None
        try:
            known = state.cursor if state.files else {}
            changes = Changes(cursor={"drives": {}, "items": {}})
            for drive in self._drives():
                self._drive(drive, known, changes)
            return changes
        finally:
            self.http.close()

    def _drives(self) -> list[dict]:
        if self.source.drive:
            return [self.http.json(f"{self.api}/drives/{self.source.drive}", params={"$select": "id,name,webUrl"})]
        parts = urlsplit(self.source.site)
        site = self.http.json(f"{self.api}/sites/{parts.netloc}:{quote(parts.path.rstrip('/') or '/')}",
                              params={"$select": "id,webUrl"})
        return list(self._values(f"{self.api}/sites/{site['id']}/drives", {"$select": "id,name,webUrl"}))

    def _values(self, url: str, params: dict | None = None):
        while url:
            data = self.http.json(url, params=params)
            params = None
            yield from data.get("value", [])
            url = data.get("@odata.nextLink")

    def _delta(self, drive_id: str, link: str | None) -> tuple[list[dict], str, bool]:
        """(changed items, the next deltaLink, whether this was a whole enumeration)."""
        url, full = link or f"{self.api}/drives/{drive_id}/root/delta", link is None
        items = []
        while True:
            response = self.http.get(url, headers={"Prefer": PREFER})
            if response.status_code == 410 and not full:  # the link expired: enumerate again
                url, full, items = f"{self.api}/drives/{drive_id}/root/delta", True, []
                continue
            check(response)
            data = response.json()
            items += data.get("value", [])
            if "@odata.nextLink" in data:
                url = data["@odata.nextLink"]
            elif "@odata.deltaLink" in data:
                return items, data["@odata.deltaLink"], full
            else:
                raise SourceError(f"the delta of drive {drive_id} ended without a deltaLink")

    def _drive(self, drive: dict, known: dict, changes: Changes) -> None:
        drive_id = drive["id"]
        before = (known.get("items") or {})
        parents = {k: v for k, v in before.items() if v.get("drive") == drive_id}  # item id -> {parent, file, drive}
        items, link, full = self._delta(drive_id, (known.get("drives") or {}).get(drive_id))
        changes.cursor["drives"][drive_id] = link
        refresh = set()
        for item in items:
            item_id = item["id"]
            if "deleted" in item:
                gone = {item_id} | _below(item_id, parents)
                changes.deletes += [i for i in gone if parents.get(i, {}).get("file")]
                for i in gone:
                    parents.pop(i, None)
                continue
            parent = (item.get("parentReference") or {}).get("id")
            parents[item_id] = {"parent": parent, "drive": drive_id, "file": "file" in item}
            if "folder" in item and not full:
                refresh |= _below(item_id, parents)  # its permissions may have changed: the files inherit them
        wanted = {item["id"]: item for item in items if "file" in item and "deleted" not in item}
        for item_id in refresh - set(wanted):
            if parents.get(item_id, {}).get("file"):
                wanted[item_id] = self.http.json(f"{self.api}/drives/{drive_id}/items/{item_id}")
        for item in wanted.values():
            if PurePosixPath(item["name"]).suffix.lower() not in SUFFIXES:
                continue
            changes.upserts.append(self._document(drive, item))
        if full:  # a whole enumeration lists everything there is: the rest of this drive is gone
            changes.keep += [i for i, v in parents.items() if v.get("file") and i not in wanted]
            changes.full = True
        else:
            changes.keep += [i for i, v in parents.items() if v.get("file")]
        changes.cursor["items"].update(parents)

    def _document(self, drive: dict, item: dict) -> Document:
        response = self.http.get(f"{self.api}/drives/{drive['id']}/items/{item['id']}/content")
        check(response)
        groups, public = self._readers(drive["id"], item["id"])
        folder = (item.get("parentReference") or {}).get("path", "").split("root:", 1)[-1].strip("/")
        path = "/".join(p for p in (slug(drive.get("name") or drive["id"]), folder, item["name"]) if p)
        meta = {"title": PurePosixPath(item["name"]).stem, "url": item.get("webUrl"),
                "audience": audience(groups, public, self.source.name),
                "effective_date": (item.get("lastModifiedDateTime") or "")[:10] or None}
        return Document(key=item["id"], path=path, content=response.content, meta=meta,
                        restricted=[] if public else meta["audience"])

    def _readers(self, drive_id: str, item_id: str) -> tuple[set[str], bool]:
        if self.source.permissions != "mirror":
            return set(), True
        everyone = {g.lower() for g in self.source.everyone}
        groups = set()
        for grant in self._values(f"{self.api}/drives/{drive_id}/items/{item_id}/permissions"):
            link = grant.get("link") or {}
            if link.get("scope") in PUBLIC_LINKS:
                return set(), True
            identities = [grant.get("grantedToV2") or {}] + list(grant.get("grantedToIdentitiesV2") or [])
            for identity in identities:
                for kind in ("group", "user"):
                    if (identity.get(kind) or {}).get("id"):
                        groups.add(f"aad:{identity[kind]['id'].lower()}")
                if (identity.get("siteGroup") or {}).get("displayName"):
                    groups.add(f"sharepoint:{identity['siteGroup']['displayName'].lower()}")
        if groups & {f"aad:{g}" for g in everyone} | groups & {f"sharepoint:{g}" for g in everyone}:
            return set(), True
        return groups, False


def _below(item_id: str, parents: dict) -> set[str]:
    """Every item whose chain of parents reaches item_id."""
    out, changed = set(), True
    while changed:
        changed = False
        for child, record in parents.items():
            if child not in out and (record.get("parent") == item_id or record.get("parent") in out):
                out.add(child)
                changed = True
    return out
