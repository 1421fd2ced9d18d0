"""Local fakes of Microsoft's sign-in and Microsoft Graph's files API, as the SharePoint source
uses them (from the Graph v1.0 reference): the OpenID metadata and client-credentials token
endpoint of a tenant (over TLS, as msal insists, with a certificate made for the test), a site by
path and its document libraries, a drive's delta query (nextLink pages, a deltaLink whose token
returns only later changes, deleted facets, 410 for an expired token, sharing changes returned
when asked with `Prefer: deltashowsharingchanges`), item content through a 302 to a
pre-authenticated download URL, and item permissions."""
from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from fake_http import FakeServer, cursor, offset_of

TENANT, CLIENT_ID, SECRET = "contoso-tenant", "app-client-id", "app-secret-value"
ACCESS_TOKEN = "graph-access-token"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, written to `folder`."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "login.pem", folder / "login.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class FakeLogin(FakeServer):
    """login.microsoftonline.com for one tenant, over TLS."""

    def __init__(self, folder: Path):
        super().__init__()
        self.cert, key = self_signed(folder)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.url = self.url.replace("http://", "https://")
        self.tokens_issued = 0
        self.route("GET", rf"/{TENANT}/v2.0/.well-known/openid-configuration", self._metadata)
        self.route("POST", rf"/{TENANT}/oauth2/v2.0/token", self._token)

    def _metadata(self, **_):
        base = f"{self.url}/{TENANT}"
        return {"token_endpoint": f"{base}/oauth2/v2.0/token", "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "issuer": f"{base}/v2.0", "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                "end_session_endpoint": f"{base}/oauth2/v2.0/logout"}

    def _token(self, body, **_):
        from urllib.parse import parse_qs

        form = {k: v[-1] for k, v in parse_qs(body.decode()).items()}
        if form.get("grant_type") != "client_credentials" or form.get("client_id") != CLIENT_ID:
            return 400, {"error": "unauthorized_client", "error_description": "AADSTS700016: Application not found."}
        if form.get("client_secret") != SECRET:
            return 401, {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided. Trace ID: x"}
        self.tokens_issued += 1
        return {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": ACCESS_TOKEN}


class FakeGraph(FakeServer):
    """Graph v1.0: one site with document libraries (drives) of files and folders."""

    def __init__(self, host: str = "contoso.sharepoint.com", site_path: str = "/sites/handbook"):
        super().__init__()
        self.host, self.site_path, self.site_id = host, site_path, f"{host},site-guid,web-guid"
        self.drives: dict[str, dict] = {}
        self.items: dict[str, dict] = {}
        self.changes: list[str] = []  # item ids, in the order they changed (the delta's log)
        self.expired: set[int] = set()  # delta tokens that answer 410
        self.page_size = 2
        self._n = 0
        v = r"/v1\.0"
        self.route("GET", v + r"/sites/(?P<host>[^/:]+):(?P<path>/.*)", self._site)
        self.route("GET", v + r"/sites/(?P<site>[^/]+)/drives", self._drives)
        self.route("GET", v + r"/drives/(?P<drive>[^/]+)/root/delta", self._delta)
        self.route("GET", v + r"/drives/(?P<drive>[^/]+)/items/(?P<item>[^/]+)/content", self._content)
        self.route("GET", v + r"/drives/(?P<drive>[^/]+)/items/(?P<item>[^/]+)/permissions", self._permissions)
        self.route("GET", v + r"/drives/(?P<drive>[^/]+)/items/(?P<item>[^/]+)", self._item)
        self.route("GET", r"/download/(?P<item>[^/]+)", self._download)

    @property
    def api(self) -> str:
        return self.url + "/v1.0"

    def authorized(self, headers) -> bool:
        return headers.get("Authorization") == f"Bearer {ACCESS_TOKEN}" or False

    def _handler(self):
        handler = super()._handler()
        fake = self

        class Downloads(handler):  # a pre-authenticated download URL takes no Authorization
            def _serve(self):
                if self.path.startswith("/download/"):
                    saved, fake.authorized = fake.authorized, lambda headers: True
                    try:
                        return super()._serve()
                    finally:
                        fake.authorized = saved
                return super()._serve()

            do_GET = _serve

        return Downloads

    # ---- what the tests set up ---------------------------------------------------------------

    def _changed(self, item_id: str) -> None:
        self.changes.append(item_id)
        self.items[item_id]["etag"] = f'"{{{item_id}}},{len(self.changes)}"'

    def library(self, name: str) -> str:
        drive_id = "b!" + name.lower().replace(" ", "-")  # Graph drive ids are URL-safe
        self.drives[drive_id] = {"id": drive_id, "name": name, "driveType": "documentLibrary",
                                 "webUrl": f"https://{self.host}{self.site_path}/{name.replace(' ', '%20')}"}
        root = self._new(drive_id, None, "root", folder=True)
        self.drives[drive_id]["root"] = root
        return drive_id

    def _new(self, drive_id, parent, name, folder=False, content=b"") -> str:
        self._n += 1
        item_id = f"01ITEM{self._n:04d}"
        self.items[item_id] = {"id": item_id, "drive": drive_id, "parent": parent, "name": name, "folder": folder,
                               "content": content, "deleted": False, "grants": [], "inherit": True}
        self._changed(item_id)
        return item_id

    def folder(self, drive_id: str, name: str, parent: str | None = None) -> str:
        return self._new(drive_id, parent or self.drives[drive_id]["root"], name, folder=True)

    def file(self, drive_id: str, name: str, content: bytes, parent: str | None = None) -> str:
        return self._new(drive_id, parent or self.drives[drive_id]["root"], name, content=content)

    def edit(self, item_id: str, content: bytes) -> None:
        self.items[item_id]["content"] = content
        self._changed(item_id)

    def delete(self, item_id: str) -> None:
        """Deleting a folder reports the folder only (as Graph may): its files go with it."""
        self.items[item_id]["deleted"] = True
        self._changed(item_id)

    def share(self, item_id: str, *grants: dict, inherit: bool = False) -> None:
        """Set an item's own permissions (Graph permission resources); a sharing change."""
        self.items[item_id].update(grants=list(grants), inherit=inherit)
        self._changed(item_id)

    # ---- the API -----------------------------------------------------------------------------

    def _site(self, host, path, **_):
        if host != self.host or path.rstrip("/") != self.site_path:
            return 404, {"error": {"code": "itemNotFound", "message": "Requested site could not be found"}}
        return {"id": self.site_id, "webUrl": f"https://{host}{path}", "displayName": "Handbook"}

    def _drives(self, site, **_):
        return {"value": [{k: v for k, v in d.items() if k != "root"} for d in self.drives.values()]}

    def _path(self, item: dict) -> str:
        names, parent = [], item["parent"]
        while parent and self.items[parent]["parent"]:
            names.insert(0, self.items[parent]["name"])
            parent = self.items[parent]["parent"]
        return f"/drives/{item['drive']}/root:" + ("/" + "/".join(names) if names else "")

    def _resource(self, item: dict, sharing: bool = False) -> dict:
        out = {"id": item["id"], "name": item["name"], "eTag": item["etag"], "cTag": item["etag"],
               "lastModifiedDateTime": "2026-12-01T10:00:00Z",
               "parentReference": {"driveId": item["drive"], "id": item["parent"], "path": self._path(item)} if item["parent"] else {"driveId": item["drive"]},
               "webUrl": self.drives[item["drive"]]["webUrl"] + self._path(item).split("root:", 1)[1] + "/" + item["name"]}
        if item["deleted"]:
            return {"id": item["id"], "deleted": {"state": "deleted"}, "parentReference": out["parentReference"]}
        out["folder" if item["folder"] else "file"] = {"childCount": 0} if item["folder"] else {"mimeType": "application/octet-stream"}
        if sharing and item["grants"]:
            out["@microsoft.graph.sharedChanged"] = "True"
        return out

    def _delta(self, drive, query, headers, **_):
        token, skip = query.get("token"), offset_of(query.get("$skiptoken"))
        if token is not None and int(token) in self.expired:
            return 410, {"error": {"code": "resyncRequired", "message": "Resync required."}}
        in_drive = [i for i in self.items.values() if i["drive"] == drive]
        if token is None:  # the whole drive as it is now
            listed = [self._resource(i) for i in in_drive if not i["deleted"] and not self._gone(i)]
        else:
            later = list(dict.fromkeys(self.changes[int(token):]))
            listed = [self._resource(self.items[i], "deltashowsharingchanges" in headers.get("Prefer", ""))
                      for i in later if self.items[i]["drive"] == drive]
        page = listed[skip:skip + self.page_size]
        out = {"@odata.context": f"{self.api}/$metadata#Collection(driveItem)", "value": page}
        base = f"{self.api}/drives/{drive}/root/delta?" + (f"token={token}&" if token is not None else "")
        if skip + self.page_size < len(listed):
            out["@odata.nextLink"] = f"{base}$skiptoken={cursor(skip + self.page_size)}"
        else:
            out["@odata.deltaLink"] = f"{self.api}/drives/{drive}/root/delta?token={len(self.changes)}"
        return out

    def _gone(self, item: dict) -> bool:
        parent = item["parent"]
        while parent:
            if self.items[parent]["deleted"]:
                return True
            parent = self.items[parent]["parent"]
        return False

    def _live(self, drive, item):
        found = self.items.get(item)
        return found if found and found["drive"] == drive and not found["deleted"] and not self._gone(found) else None

    def _item(self, drive, item, **_):
        found = self._live(drive, item)
        return self._resource(found) if found else (404, {"error": {"code": "itemNotFound", "message": "not found"}})

    def _content(self, drive, item, **_):
        if not self._live(drive, item):
            return 404, {"error": {"code": "itemNotFound", "message": "not found"}}
        return 302, b"", {"Location": f"{self.url}/download/{item}?tempauth=one-time"}

    def _download(self, item, **_):
        return 200, self.items[item]["content"], {"Content-Type": "application/octet-stream"}

    def _permissions(self, drive, item, **_):
        found = self._live(drive, item)
        if not found:
            return 404, {"error": {"code": "itemNotFound", "message": "not found"}}
        grants, node = [], found
        while node:  # its own grants, then what it inherits until an item that breaks inheritance
            grants += [{**g, "inheritedFrom": {"id": node["id"]}} if node is not found else g for g in node["grants"]]
            if not node["inherit"]:
                break
            node = self.items.get(node["parent"]) if node["parent"] else None
        return {"value": [{"id": f"perm{n}", "roles": ["read"], **g} for n, g in enumerate(grants)]}
