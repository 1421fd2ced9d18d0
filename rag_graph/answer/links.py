"""Where a citation points: the document's own `url` from its front matter or, failing that,
CITEBOT_SOURCE_URL filled in with the file's place in the corpus; then the section anchor.
Applied when a citation is built (not at ingest), so changing the setting needs no re-index."""
from __future__ import annotations

from ..retrieval.loaders import source_url  # a document's link from its place in the corpus


def citation_url(document_url: str, template: str, path: str, anchor: str) -> str:
    url = document_url or source_url(template, path)
    if not url:
        return ""
    return f"{url}#{anchor}" if anchor else url
