"""A local fake of Google's OAuth token endpoint and the Drive API v3, as the Google Drive source
uses them (from the Drive v3 reference): a service account's signed JWT grant (the signature is
checked against the key the test made), files listed by `'<folder>' in parents` queries,
`changes.getStartPageToken` and `changes.list` (removed and trashed files, sharing changes, a
newStartPageToken on the last page), Google Docs exported as HTML with heading ids, downloads
with `alt=media`, and file permissions. pageToken pagination throughout; 429 with Retry-After
when told."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import parse_qs

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from fake_http import FakeServer, cursor, offset_of

FOLDER, DOC = "application/vnd.google-apps.folder", "application/vnd.google-apps.document"
ACCESS_TOKEN = "ya29.drive-test-token"


def _b64(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


class FakeDrive(FakeServer):
    def __init__(self):
        super().__init__()
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.files: dict[str, dict] = {}
        self.log_of_changes: list[str] = []
        self.page_size = 2
        self._n = 0
        d = r"/drive/v3"
        self.route("POST", r"/token", self._token)
        self.route("GET", d + r"/changes/startPageToken", lambda **_: {"kind": "drive#startPageToken",
                                                                         "startPageToken": str(len(self.log_of_changes))})
        self.route("GET", d + r"/changes", self._changes)
        self.route("GET", d + r"/files", self._list)
        self.route("GET", d + r"/files/(?P<file_id>[^/]+)/export", self._export)
        self.route("GET", d + r"/files/(?P<file_id>[^/]+)/permissions", self._permissions)
        self.route("GET", d + r"/files/(?P<file_id>[^/]+)", self._get)

    def key_file(self, folder: Path) -> Path:
        """A service-account key file whose token_uri is this fake."""
        path = folder / "service-account.json"
        pem = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode()
        path.write_text(json.dumps({"type": "service_account", "project_id": "acme", "private_key_id": "k1",
                                    "private_key": pem, "client_email": "citebot@acme.iam.gserviceaccount.com",
                                    "client_id": "1", "token_uri": f"{self.url}/token"}))
        return path

    def authorized(self, headers) -> bool:
        return headers.get("Authorization") == f"Bearer {ACCESS_TOKEN}"

    def _handler(self):
        handler = super()._handler()
        fake = self

        class Token(handler):  # the token endpoint is where a token comes from: no bearer yet
            def _serve(self):
                if self.path == "/token":
                    saved, fake.authorized = fake.authorized, lambda headers: True
                    try:
                        return super()._serve()
                    finally:
                        fake.authorized = saved
                return super()._serve()

            do_GET = do_POST = _serve

        return Token

    # ---- what the tests set up ---------------------------------------------------------------

    def _changed(self, file_id: str) -> None:
        self.log_of_changes.append(file_id)

    def add(self, name: str, parent: str | None, mime: str, content: bytes = b"", grants: list[dict] = ()) -> str:
        self._n += 1
        file_id = f"1AbCdEf{self._n:04d}xyz"
        self.files[file_id] = {"id": file_id, "name": name, "mimeType": mime, "parents": [parent] if parent else [],
                               "trashed": False, "removed": False, "content": content, "grants": list(grants)}
        self._changed(file_id)
        return file_id

    def edit(self, file_id: str, content: bytes) -> None:
        self.files[file_id]["content"] = content
        self._changed(file_id)

    def share(self, file_id: str, grants: list[dict]) -> None:
        self.files[file_id]["grants"] = list(grants)
        self._changed(file_id)

    def trash(self, file_id: str) -> None:
        self.files[file_id]["trashed"] = True
        self._changed(file_id)

    def remove(self, file_id: str) -> None:
        self.files[file_id]["removed"] = True
        self._changed(file_id)

    # ---- the API -----------------------------------------------------------------------------

    def _token(self, body, **_):
        form = {k: v[-1] for k, v in parse_qs(body.decode()).items()}
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return 400, {"error": "unsupported_grant_type"}
        header, claims, signature = form.get("assertion", "..").split(".")
        try:
            self.key.public_key().verify(_b64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
        except Exception:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        if "drive.readonly" not in json.loads(_b64(claims)).get("scope", ""):
            return 400, {"error": "invalid_scope"}
        return {"access_token": ACCESS_TOKEN, "expires_in": 3599, "token_type": "Bearer"}

    def _resource(self, f: dict) -> dict:
        kind = "document" if f["mimeType"] == DOC else "file"
        link = (f"https://docs.google.com/document/d/{f['id']}/edit?usp=drivesdk" if kind == "document"
                else f"https://drive.google.com/file/d/{f['id']}/view?usp=drivesdk")
        return {"kind": "drive#file", "id": f["id"], "name": f["name"], "mimeType": f["mimeType"], "parents": f["parents"],
                "trashed": f["trashed"], "modifiedTime": "2026-12-01T10:00:00.000Z", "webViewLink": link}

    def _paged(self, items: list, query: dict, key: str, last: dict | None = None) -> dict:
        size = min(int(query.get("pageSize", 100)), self.page_size)
        start = offset_of(query.get("pageToken")) if key != "changes" else 0
        page = items[start:start + size]
        out = {key: page}
        if start + size < len(items):
            out["nextPageToken"] = cursor(start + size)
        else:
            out.update(last or {})
        return out

    def _list(self, query, **_):
        match = re.fullmatch(r"'([^']+)' in parents and trashed=false", query.get("q", ""))
        if not match:
            return 400, {"error": {"code": 400, "message": "Invalid Value", "errors": [{"reason": "invalid"}]}}
        found = [self._resource(f) for f in self.files.values()
                 if match.group(1) in f["parents"] and not f["trashed"] and not f["removed"]]
        return self._paged(found, query, "files")

    def _changes(self, query, **_):
        token = query.get("pageToken", "")
        position, _, skip = token.partition(":")
        if not position.isdigit():
            return 400, {"error": {"code": 400, "message": "Invalid pageToken"}}
        later = list(dict.fromkeys(self.log_of_changes[int(position):]))
        entries = [{"kind": "drive#change", "changeType": "file", "fileId": i, "removed": self.files[i]["removed"],
                    **({} if self.files[i]["removed"] else {"file": self._resource(self.files[i])})} for i in later]
        start, size = int(skip or 0), self.page_size
        out = {"kind": "drive#changeList", "changes": entries[start:start + size]}
        if start + size < len(entries):
            out["nextPageToken"] = f"{position}:{start + size}"
        else:
            out["newStartPageToken"] = str(len(self.log_of_changes))
        return out

    def _live(self, file_id):
        f = self.files.get(file_id)
        return f if f and not f["removed"] else None

    def _get(self, query, file_id, **_):
        f = self._live(file_id)
        if not f:
            return 404, {"error": {"code": 404, "message": f"File not found: {file_id}."}}
        if query.get("alt") == "media":
            if f["mimeType"].startswith("application/vnd.google-apps"):
                return 403, {"error": {"code": 403, "message": "Only files with binary content can be downloaded. Use Export with Docs Editors files."}}
            return 200, f["content"], {"Content-Type": "application/octet-stream"}
        return self._resource(f)

    def _export(self, query, file_id, **_):
        f = self._live(file_id)
        if not f:
            return 404, {"error": {"code": 404, "message": f"File not found: {file_id}."}}
        if f["mimeType"] != DOC or query.get("mimeType") != "text/html":
            return 400, {"error": {"code": 400, "message": "Export only supports Docs Editors files."}}
        return 200, f["content"], {"Content-Type": "text/html"}

    def _permissions(self, query, file_id, **_):
        f = self._live(file_id)
        if not f:
            return 404, {"error": {"code": 404, "message": f"File not found: {file_id}."}}
        grants = [{"kind": "drive#permission", "id": f"p{n}", **g} for n, g in enumerate(f["grants"])]
        return self._paged(grants, query, "permissions")
