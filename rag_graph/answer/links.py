"""Where a citation points: the document's own `url` from its front matter or, failing that,
CITEBOT_SOURCE_URL filled in with the file's place in the corpus; then the section anchor.
Applied when a citation is built (not at ingest), so changing the setting needs no re-index."""
from __future__ import annotations

import re
from urllib.parse import quote

from ..retrieval.loaders import page_name


def source_url(template: str, path: str) -> str:
    """`{path}`: the file's path below the corpus folder, each segment URL-quoted, extension kept;
    `{slug}`: the same without `.md` (or `.markdown`, `.mdx`), an `index.md` standing for its
    folder (as static-site generators publish it)."""
    if not template or not path:
        return ""
    segments = path.split("/")
    page = page_name(segments[-1])
    slug_segments = segments[:-1] if page == "index" and page != segments[-1] else [*segments[:-1], page]
    slug = "/".join(quote(s, safe="") for s in slug_segments)
    url = template.replace("{path}", "/".join(quote(s, safe="") for s in segments)).replace("{slug}", slug)
    # The corpus root's index.md has an empty slug: "https://site/{slug}/" must not become "//".
    return re.sub(r"(?<!:)//+", "/", url) if not slug else url


def citation_url(document_url: str, template: str, path: str, anchor: str) -> str:
    url = document_url or source_url(template, path)
    if not url:
        return ""
    return f"{url}#{anchor}" if anchor else url
