"""`make teams-package`: the zip an admin uploads to Teams: manifest.json (the bot id filled in
from CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID) and the two icons Teams requires,
drawn here (color 192×192, white-on-transparent outline 32×32) so no binary lives in the repo.
Standard library only: it runs before any virtualenv exists."""
from __future__ import annotations

import argparse
import os
import re
import struct
import sys
import zipfile
import zlib
from pathlib import Path

MANIFEST = Path(__file__).with_name("manifest.json")
CLIENT_ID = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID"
_GUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
ACCENT = (0x3D, 0x5A, 0xFE, 255)
WHITE, CLEAR = (255, 255, 255, 255), (0, 0, 0, 0)


def png(size: int, pixel) -> bytes:
    """An RGBA PNG whose pixel (x, y) is `pixel(x, y, size)`."""
    rows = b"".join(b"\0" + b"".join(bytes(pixel(x, y, size)) for x in range(size)) for y in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def _bubble(x: int, y: int, size: int) -> bool:
    """A speech bubble with three text lines cut out: a chat answer."""
    u, v = x / size, y / size
    body = 0.18 <= u <= 0.82 and 0.2 <= v <= 0.66
    tail = 0.3 <= u <= 0.42 and 0.66 <= v <= 0.8 - (u - 0.3)
    lines = 0.28 <= u <= 0.72 and any(top <= v <= top + 0.05 for top in (0.3, 0.4, 0.5))
    return (body or tail) and not lines


def color_icon(x: int, y: int, size: int):
    return WHITE if _bubble(x, y, size) else ACCENT


def outline_icon(x: int, y: int, size: int):
    return WHITE if _bubble(x, y, size) else CLEAR


def build(out: Path, bot_id: str) -> Path:
    manifest = MANIFEST.read_text(encoding="utf-8").replace("{{BOT_ID}}", bot_id)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("manifest.json", manifest)
        package.writestr("color.png", png(192, color_icon))
        package.writestr("outline.png", png(32, outline_icon))
    return out


def _client_id() -> str:
    """From the environment, else from .env (as `citebot serve` reads it)."""
    if os.environ.get(CLIENT_ID):
        return os.environ[CLIENT_ID]
    env = Path(".env")
    lines = env.read_text(encoding="utf-8").splitlines() if env.exists() else []
    values = [line.split("=", 1)[1].strip().strip("'\"") for line in lines if line.startswith(CLIENT_ID + "=")]
    return values[-1] if values else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="dist/citebot-teams.zip")
    args = parser.parse_args(argv)
    bot_id = _client_id()
    if not _GUID.match(bot_id):
        print(f"error: {CLIENT_ID} must be the Azure Bot's app id (a GUID), got {bot_id!r}", file=sys.stderr)
        return 2
    print(f"Wrote {build(Path(args.out), bot_id)}: upload it in Teams (Apps → Manage your apps → Upload an app)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
