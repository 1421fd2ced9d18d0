"""Google Drive: the files below one folder (and its sub-folders), kept in sync with Drive's
changes feed, through the Drive API v3 over plain HTTP (the two dozen lines of calls need no
generated client; google-auth signs the service account's token request).

The first sync takes the feed's start token, then lists the folder tree; each later sync reads
`changes.list` from the saved token: a file removed, trashed or moved out of the tree leaves the
index, a changed one is read again. Google Docs are exported as HTML, whose headings carry the
ids Docs links to (`#heading=h.…`); PDF, Word, markdown, HTML and text files are downloaded;
Sheets, Slides and other types are skipped with a note. Citations link to `webViewLink`.

`permissions: mirror`: a file's permissions become its audience: `google:<email>` for users and
groups; sharing with anyone, or with a domain listed in `domains:` (the company's own), is public;
another domain becomes `google-domain:<domain>`. A sharing change is a change in the feed."""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..loaders import SUFFIXES
from .base import Changes, Document, SourceError, audience, slug
from .http import Http

SCOPES = ["https://www.googleapis.com/auth/drive.readonly"]
FOLDER, DOC = "application/vnd.google-apps.folder", "application/vnd.google-apps.document"
FIELDS = "id,name,mimeType,parents,trashed,modifiedTime,webViewLink"
PAGE = 100
_HEADING_ID = re.compile(r'(<h[1-6][^>]*\sid=")(h\.[^"]+)(")')


def token(settings) -> str:
    from google.auth.exceptions import GoogleAuthError
    from google.auth.transport.requests import Request
    from google.oauth2 import service_account

    try:
        credentials = service_account.Credentials.from_service_account_file(str(settings.google_credentials), scopes=SCOPES)
        credentials.refresh(Request())
    except (ValueError, KeyError) as error:
        raise SourceError(f"GOOGLE_APPLICATION_CREDENTIALS is not a service-account key file ({type(error).__name__})") from None
    except GoogleAuthError as error:
        raise SourceError(f"Google sign-in failed: {str(error).split(':')[0][:120]}") from None
    return credentials.token


class Fetcher:
    def __init__(self, source, settings):
        self.source, self.settings = source, settings
        self.api = settings.drive_url.rstrip("/")
        self.http: Http | None = None

    def fetch(self, state) -> Changes:
        self.http = Http(headers={"Authorization": f"Bearer {token(self.settings)}"})
        try:
            known = state.cursor if state.files and state.cursor.get("token") else {}
            return self._changed(known) if known else self._listed()
        finally:
            self.http.close()

    def _pages(self, url: str, params: dict, key: str):
        """Every item of a paginated list, and the last page's body (it holds newStartPageToken)."""
        while True:
            data = self.http.json(url, params=params)
            yield from data.get(key, [])
            if not data.get("nextPageToken"):
                self.last = data
                return
            params = {**params, "pageToken": data["nextPageToken"]}

    def _listed(self) -> Changes:
        start = self.http.json(f"{self.api}/changes/startPageToken")["startPageToken"]  # before listing: nothing slips by
        folders, files, queue = {self.source.folder: ""}, [], [self.source.folder]
        while queue:
            folder = queue.pop()
            for item in self._pages(f"{self.api}/files", {"q": f"'{folder}' in parents and trashed=false",
                                                          "fields": f"nextPageToken,files({FIELDS})", "pageSize": PAGE}, "files"):
                if item["mimeType"] == FOLDER:
                    folders[item["id"]] = f"{folders[folder]}/{item['name']}".strip("/")
                    queue.append(item["id"])
                else:
                    files.append(item)
        changes = Changes(full=True, cursor={"token": start, "folders": folders})
        for item in files:
            self._add(item, folders, changes)
        return changes

    def _changed(self, known: dict) -> Changes:
        folders = dict(known["folders"])
        changes = Changes(cursor={"folders": folders})
        for change in self._pages(f"{self.api}/changes", {"pageToken": known["token"], "includeRemoved": "true",
                                                          "fields": f"nextPageToken,newStartPageToken,changes(fileId,removed,file({FIELDS}))",
                                                          "pageSize": PAGE}, "changes"):
            item = change.get("file") or {}
            parent = next((p for p in item.get("parents") or [] if p in folders), None)
            if change.get("removed") or item.get("trashed") or parent is None:
                changes.deletes.append(change["fileId"])  # gone, in the bin, or moved out of the folder
                folders.pop(change["fileId"], None)
            elif item["mimeType"] == FOLDER:
                folders[item["id"]] = f"{folders[parent]}/{item['name']}".strip("/")
            else:
                self._add(item, folders, changes)
        changes.cursor["token"] = self.last.get("newStartPageToken") or known["token"]
        return changes

    def _add(self, item: dict, folders: dict, changes: Changes) -> None:
        folder = folders.get(next((p for p in item.get("parents") or [] if p in folders), ""), "")
        if item["mimeType"] == DOC:
            response = self.http.get(f"{self.api}/files/{item['id']}/export", params={"mimeType": "text/html"})
            name = f"{item['name']}.html"
        elif PurePosixPath(item["name"]).suffix.lower() in SUFFIXES:
            response = self.http.get(f"{self.api}/files/{item['id']}", params={"alt": "media"})
            name = item["name"]
        else:
            changes.notes.append(f"skipped {item['name']}: {item['mimeType']} is not a format Citebot reads")
            return
        if response.status_code == 404:
            changes.deletes.append(item["id"])
            return
        if response.status_code >= 400:
            raise SourceError(f"HTTP {response.status_code} reading Drive file {item['id']}")
        content = response.content
        if item["mimeType"] == DOC:  # Docs links to a heading as #heading=h.xxx
            content = _HEADING_ID.sub(r"\1heading=\2\3", content.decode("utf-8", errors="replace")).encode()
        groups, public = self._readers(item["id"])
        meta = {"title": PurePosixPath(item["name"]).stem if item["mimeType"] != DOC else item["name"],
                "url": item.get("webViewLink"), "audience": audience(groups, public, self.source.name),
                "effective_date": (item.get("modifiedTime") or "")[:10] or None}
        path = "/".join(p for p in (folder, f"{slug(PurePosixPath(name).stem)}-{item['id'][:12]}{PurePosixPath(name).suffix}") if p)
        changes.upserts.append(Document(key=item["id"], path=path, content=content, meta=meta,
                                        restricted=[] if public else meta["audience"]))

    def _readers(self, file_id: str) -> tuple[set[str], bool]:
        if self.source.permissions != "mirror":
            return set(), True
        groups = set()
        domains = {d.lower() for d in self.source.domains}
        for grant in self._pages(f"{self.api}/files/{file_id}/permissions",
                                 {"fields": "nextPageToken,permissions(id,type,role,emailAddress,domain)", "pageSize": PAGE},
                                 "permissions"):
            kind = grant.get("type")
            if kind == "anyone" or (kind == "domain" and (grant.get("domain") or "").lower() in domains):
                return set(), True
            if kind in ("user", "group") and grant.get("emailAddress"):
                groups.add(f"google:{grant['emailAddress'].lower()}")
            elif kind == "domain" and grant.get("domain"):
                groups.add(f"google-domain:{grant['domain'].lower()}")
        return groups, False
