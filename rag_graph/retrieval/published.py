"""What the last refresh of a local index folder was built from, readable without LanceDB.

`citebot index` with nothing changed is a cron job's everyday case, and importing LanceDB alone
takes most of its 2-second budget. So every successful refresh of an index on local disk leaves
`published.json` beside the tables: a fingerprint of what it was built from (every corpus file's
path and bytes, the embedding model, the indexing code) and the figures it reported. When the
fingerprint of the corpus as it is now matches, there is nothing to do, and the command says so
without opening the table.

The stamp is removed before a new version is published or the serving tag moves (a rollback), and
written after, so a crash in between leaves none, and the next run takes the full path. Object
storage (s3://, db://) has no stamp: there the full path runs, and several writers may share it.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from .reading import Reading

log = logging.getLogger(__name__)

STAMP = "published.json"
_CODE = Path(__file__).parent  # how files become rows: a new release re-checks everything


def _folder(uri: str) -> Path | None:
    return None if "://" in str(uri) else Path(uri)


def fingerprint(corpus_dir: str | Path, model_name: str, reading: Reading = Reading()) -> str:
    # The files read (a file CITEBOT_EXCLUDE leaves out changes nothing when it changes), and
    # CITEBOT_STRICT_AUDIENCE, which changes who may read them: changing either must rebuild.
    digest = hashlib.sha256(model_name.encode() + reading.stamp())
    for source in sorted(_CODE.rglob("*.py")):
        digest.update(source.read_bytes())
    root = Path(corpus_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder not found: {root}")
    for path in reading.files(root)[0]:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def unchanged(uri: str, corpus_dir: str | Path, model_name: str, reading: Reading = Reading()) -> dict | None:
    """The figures of the last refresh when nothing it was built from has changed since."""
    stamp = read(uri)
    try:
        return stamp if stamp and stamp.get("fingerprint") == fingerprint(corpus_dir, model_name, reading) else None
    except OSError:  # a missing corpus: the full path says so properly
        return None


def read(uri: str) -> dict | None:
    folder = _folder(uri)
    try:
        return json.loads((folder / STAMP).read_text(encoding="utf-8")) if folder else None
    except (OSError, ValueError):
        return None


def record(uri: str, stamp: str, figures: dict) -> None:
    folder = _folder(uri)
    if folder is None:
        return
    try:
        (folder / STAMP).write_text(json.dumps({"fingerprint": stamp, **figures}), encoding="utf-8")
    except OSError:  # a read-only folder only costs the next run its shortcut
        log.warning("could not write %s; the next unchanged `citebot index` takes the full path", folder / STAMP)


def forget(uri: str) -> None:
    folder = _folder(uri)
    if folder is not None:
        (folder / STAMP).unlink(missing_ok=True)
