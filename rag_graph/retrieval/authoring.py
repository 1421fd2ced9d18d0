"""Authoring slips that must never publish restricted text. A writer hides a section with an
internal marker and a document with `audience:`; a slip in either used to publish the text to
everyone without a word. Here each slip either still hides the text or leaves the document out,
and always says so in the reload's warnings:

- the marker `<!-- internal -->` in any case and spacing, in a markdown heading, an HTML heading,
  an admonition's title or an .html page's heading; a marker anywhere else leaves the document out
  (which section it meant cannot be told);
- `audience:` with no value or an empty list leaves the document out;
- a front matter key close to a known one ("audiences", "Audience", "groups") is a warning, and
  leaves the document out when the key it resembles is `audience`;
- a folder's `.citebot.yml` with `audience:` marks the folder restricted: with
  CITEBOT_STRICT_AUDIENCE=1 its documents without an audience inherit it, else each one is a warning."""
from __future__ import annotations

import difflib
import re
from pathlib import Path

import yaml

# What a marker becomes before the document is rendered: private-use characters, which no
# renderer step (HTML tag removal, admonitions, headings) strips or escapes.
INTERNAL = "\ue000internal\ue000"
_MARKER = re.compile(r"<!--\s*internal\b[^>]*?-->", re.I)
_HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]+>")
FOLDER_FILE = ".citebot.yml"
# Names writers use for who may read a page, in other tools' front matter.
_AUDIENCE_LIKE = {"groups", "group", "access", "visibility", "visible_to", "allowed", "allowed_groups",
                  "restricted", "restricted_to", "permissions", "roles", "readers", "audience_groups", "private"}
# Read by ingest besides the stored fields; other keys are internal and ignored on purpose.
_ALSO_READ = ("source_url",)


class AuthoringError(ValueError):
    """The document is left out; the message says what to fix."""


def mark_internal(body: str) -> str:
    """Every internal marker as INTERNAL; an HTML heading holding one as a markdown heading, so
    the section under it is dropped like any other internal section."""
    body = _MARKER.sub(INTERNAL, body)
    if INTERNAL not in body:
        return body

    def heading(match: re.Match) -> str:
        if INTERNAL not in match.group(2):
            return match.group(0)
        text = " ".join(_TAG.sub(" ", match.group(2)).split())
        return f"\n{'#' * int(match.group(1))} {text}\n"
    return _HTML_HEADING.sub(heading, body)


def check_no_stray_marker(body: str) -> None:
    """After internal sections were dropped: a marker left is outside any heading."""
    if INTERNAL in body:
        line = next(n for n, text in enumerate(body.splitlines(), 1) if INTERNAL in text)
        raise AuthoringError("an <!-- internal --> marker is outside a heading (near body line "
                             f"{line}), so which section it hides cannot be told; put it in the heading "
                             "of the section to hide")


def key_warnings(meta: dict, known: tuple[str, ...], access: tuple[str, ...]) -> list[str]:
    """A warning for each key that looks like a known one but is not; raises AuthoringError when
    it looks like an access key (a misspelt `audience` would publish the document to everyone)."""
    warnings = []
    for key in meta:
        if not isinstance(key, str) or key in known or key in _ALSO_READ:
            continue
        meant = _resembles(key, known)
        if meant in access or key.strip().lower() in _AUDIENCE_LIKE:
            raise AuthoringError(f"front matter key `{key}` is not `audience`, so it restricts nothing; "
                                 "write `audience:` (left out until then)")
        if meant:
            warnings.append(f"front matter key `{key}` is not read: did you mean `{meant}`?")
    return warnings


def _resembles(key: str, known: tuple[str, ...]) -> str | None:
    plain = key.strip().lower().replace("-", "_")
    for name in known:
        if plain in (name, name + "s") or name == plain + "s":
            return name
    close = difflib.get_close_matches(plain, known, n=1, cutoff=0.8)
    return close[0] if close else None


def audience_of(meta: dict) -> list[str] | None:
    """The document's own `audience` (None: the key is absent); raises AuthoringError for a value
    that names no group: empty, `[]`, a number, a blank name."""
    if "audience" not in meta:
        return None
    value = meta["audience"]
    if value is None:
        raise AuthoringError("audience has no value: name the group(s) that may read it, or remove the key "
                             "to publish the document to everyone")
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise AuthoringError(f"audience must be a group name or a list of group names, got {value!r}")
    if not names:
        raise AuthoringError("audience is empty: name the group(s) that may read it, or remove the key "
                             "to publish the document to everyone")
    return sorted({n.strip().lower() for n in names})


class FolderAudiences:
    """The audience a folder's `.citebot.yml` gives the documents below it (the nearest wins)."""

    def __init__(self, root: Path):
        self.root = root
        self._cache: dict[Path, tuple[list[str] | None, str]] = {}

    def of(self, relative_path: str) -> tuple[list[str] | None, str]:
        """(audience, the marker file's path) for the document's folder; (None, "") when unmarked."""
        folder = (self.root / relative_path).parent
        while True:
            if folder not in self._cache:
                self._cache[folder] = self._read(folder)
            audience, where = self._cache[folder]
            if audience is not None or folder == self.root or self.root not in folder.parents:
                return audience, where
            folder = folder.parent

    def _read(self, folder: Path) -> tuple[list[str] | None, str]:
        marker = folder / FOLDER_FILE
        if not marker.is_file():
            return None, ""
        where = marker.relative_to(self.root).as_posix()
        try:
            meta = yaml.safe_load(marker.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError, OSError):
            raise AuthoringError(f"{where} is not valid YAML, so who may read this folder cannot be told") from None
        if not isinstance(meta, dict):
            raise AuthoringError(f"{where} must be a set of `key: value` fields")
        try:
            return audience_of(meta), where
        except AuthoringError as error:
            raise AuthoringError(f"{where}: {error}") from None


def folder_default(own: list[str] | None, folder: list[str] | None, where: str, strict: bool) -> tuple[list[str], str | None]:
    """(the audience to store, a warning). A document's own audience wins; without one, a
    restricted folder's audience is inherited under CITEBOT_STRICT_AUDIENCE, else it is a warning."""
    if own is not None or folder is None:
        return own or [], None
    if strict:
        return folder, None
    return [], (f"has no `audience:` but {where} restricts its folder to {', '.join(folder)}: indexed for "
                "everyone; add `audience:` or set CITEBOT_STRICT_AUDIENCE=1 to inherit the folder's")
