"""The corpus walk: every document below a folder, parsed (front matter, docs-site syntax, internal
sections dropped), its links and `superseded_by` resolved to source ids, and cut into chunks."""
from __future__ import annotations

import logging
import re
from pathlib import Path

from ...language.markdown import MD_LINK
from ..authoring import (AuthoringError, FolderAudiences, audience_of, check_no_stray_marker, folder_default,
                         key_warnings, mark_internal)
from ..loaders import MARKDOWN_SUFFIXES, SUFFIXES, UnreadableFile, is_sidecar, page_name, read_markdown, sidecar_of
from .chunking import HEADING, chunk_document, drop_internal_sections, plain_text
from .dialects import inline_text, render_shortcodes, resolve_reference_links, without_jsx
from .documents import Corpus, Document
from .front_matter import ACCESS_FIELDS, PUBLIC_FIELDS, FrontMatterError, date_text, read_front_matter
from ..reading import Reading

log = logging.getLogger(__name__)


# README.md / SOURCE.md describe a folder of documents rather than being one of them.
FOLDER_NOTES = ("README.md", "SOURCE.md")


_DOCUMENT_SUFFIX = re.compile("(" + "|".join(re.escape(suffix) for suffix in SUFFIXES) + ")$", re.I)


_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def load_corpus(root: Path | str, reading: Reading = Reading()) -> Corpus:
    """Every document below root (see loaders.SUFFIXES), in a stable order, but for hidden files,
    sidecars, a folder's README.md / SOURCE.md and the files CITEBOT_EXCLUDE leaves out (`reading`,
    which also says whether a restricted folder's documents inherit its audience). A bad file is
    skipped with a warning naming it; the rest is still loaded. Files of other types are counted
    and named once per type, and so are the files left out, so the admin sees what a pattern caught."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder not found: {root}")
    documents, skipped, formats, unsupported = [], [], {}, {}
    folders = FolderAudiences(root)
    paths, left_out = reading.files(root)
    for path in paths:
        relative = path.relative_to(root).as_posix()
        if (any(part.startswith(".") for part in path.relative_to(root).parts) or is_sidecar(path)
                or path.name in FOLDER_NOTES):
            continue
        suffix = path.suffix.lower() or "(none)"
        counts = formats.setdefault(suffix, {"read": 0, "skipped": 0})
        if suffix not in SUFFIXES:
            counts["skipped"] += 1
            unsupported.setdefault(suffix, []).append(relative)
            continue
        try:
            sidecar = sidecar_of(path) if suffix in MARKDOWN_SUFFIXES else {}  # other formats read theirs
            document = parse_document(read_markdown(path), relative, sidecar, folders.of(relative),
                                      reading.strict_audience)
            documents.append(document)
            skipped += [f"{relative}: {warning}" for warning in document.warnings]
            counts["read"] += 1
        except (FrontMatterError, UnreadableFile, AuthoringError) as error:
            counts["skipped"] += 1
            skipped.append(f"skipped {relative}: {error}")
    for suffix, paths in unsupported.items():
        skipped.append(f"skipped {len(paths)} {suffix} file(s) ({', '.join(paths[:3])}"
                       f"{', …' if len(paths) > 3 else ''}): not a supported format ({' '.join(SUFFIXES)})")
    if left_out:
        skipped.append(f"left out {len(left_out)} file(s) matching CITEBOT_EXCLUDE ({', '.join(left_out[:3])}"
                       f"{', …' if len(left_out) > 3 else ''})")
    for message in skipped:
        log.warning(message)
    _resolve_references(documents)
    chunks = [chunk for document in documents for chunk in chunk_document(document)]
    return Corpus(documents=documents, chunks=chunks, skipped=skipped, formats=formats)


def parse_document(raw: str, relative_path: str, sidecar: dict | None = None,
                   folder: tuple[list[str] | None, str] = (None, ""), strict_audience: bool = False) -> Document:
    """`sidecar`: the fields of `name.md.yml` beside a markdown file; `folder`: the audience a
    folder's .citebot.yml gives it, and that file's path (authoring.py)."""
    meta, body = read_front_matter(raw)
    for key, value in (sidecar or {}).items():
        if key in meta and meta[key] != value:
            raise AuthoringError(f"its front matter and its sidecar disagree on `{key}`; keep one of them")
        meta[key] = value
    warnings = key_warnings(meta, PUBLIC_FIELDS + ACCESS_FIELDS, ACCESS_FIELDS)
    audience, folder_note = folder_default(audience_of(meta), *folder, strict_audience)
    meta = {key: meta[key] for key in PUBLIC_FIELDS + ACCESS_FIELDS if key in meta}
    body = mark_internal(body)
    if relative_path.lower().endswith(".mdx"):
        body = without_jsx(body)
    body, shortcode_links = render_shortcodes(resolve_reference_links(body))
    body = _HTML_COMMENT.sub("", drop_internal_sections(body))
    check_no_stray_marker(body)
    first_heading = next((m.group(2) for m in map(HEADING.match, body.splitlines()) if m), None)
    default_id = page_name(relative_path)
    title = inline_text(str(meta.get("title") or (first_heading and plain_text(first_heading)) or default_id))
    try:
        authority = int(meta.get("authority", 1))
    except (TypeError, ValueError):
        raise FrontMatterError(f"authority must be a whole number, got {meta.get('authority')!r}")
    return Document(
        source_id=str(meta.get("source_id") or default_id),
        title=title,
        path=relative_path,
        body=body,
        url=str(meta.get("url") or meta.get("source_url") or ""),
        effective_date=date_text(meta.get("effective_date")),
        status=str(meta.get("status") or "current").lower(),
        superseded_by=str(meta.get("superseded_by") or ""),
        authority=authority,
        links=[target for _, target in MD_LINK.findall(body) if _DOCUMENT_SUFFIX.search(target.split("#")[0])]
        + shortcode_links,
        keywords=_keywords(meta),
        audience=audience,
        warnings=warnings + ([folder_note] if folder_note else []),
    )


def _keywords(meta: dict) -> list[str]:
    """`keywords:` or `tags:` of the front matter, a list or a comma-separated line: the words a
    docs site's own search finds the page by ("subsidy" for the Transit Benefit page), which an
    employee often uses where the page's prose does not."""
    found = []
    for name in ("keywords", "tags"):
        value = meta.get(name)
        items = value if isinstance(value, list) else str(value or "").split(",")
        found += [str(item).strip() for item in items if str(item).strip()]
    return list(dict.fromkeys(found))


def _resolve_references(documents: list[Document]) -> None:
    """Turn `superseded_by` and link targets written as paths into source ids."""
    by_key: dict[str, str] = {}
    for document in documents:
        stem = _DOCUMENT_SUFFIX.sub("", document.path)
        for key in (document.source_id, document.path, stem, stem.rsplit("/", 1)[-1]):
            by_key.setdefault(key, document.source_id)
    for document in documents:
        if document.superseded_by:
            target = document.superseded_by.strip()
            document.superseded_by = by_key.get(target, by_key.get(_DOCUMENT_SUFFIX.sub("", target), target))
        resolved = []
        for link in document.links:
            # `guide.md`, `../policies/guide.md#x` and a site path like `/policies/guide/#x`
            # all name the document by its file name
            target = _DOCUMENT_SUFFIX.sub("", link.split("#")[0].strip("./").rsplit("/", 1)[-1])
            if target in by_key and by_key[target] != document.source_id:
                resolved.append(by_key[target])
        document.links = sorted(set(resolved))
