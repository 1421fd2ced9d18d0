"""Every supported file as the markdown text ingest reads: PDF, Word, HTML and plain text are
converted to markdown with front matter, so chunking, section titles, citations, redaction and
injection quarantine treat them exactly like a `.md` file.

Libraries, chosen to keep structure (markitdown flattens a PDF to one page-less text and drops
HTML heading ids, the two things citations need):
- PDF: pypdf. Its layout extraction keeps paragraph gaps; the outline (bookmarks, which Word and
  LibreOffice write from heading styles) gives the sections, each anchored to its page as
  `#page=N`, the fragment browsers and PDF viewers honour. Without an outline each page is a section.
- Word: python-docx. Heading styles become headings; lists and tables keep their shape. Word has
  no anchors a browser can follow, so its sections link to the document.
- HTML: markdownify (on BeautifulSoup). h1-h6 become headings and a heading's own `id` its anchor.
A heading's anchor travels as `{#anchor}` after the heading text, the attribute syntax Pandoc,
kramdown and Hugo use, which ingest honours in markdown files too.

Formats that cannot carry front matter take it from a sidecar, `name.pdf.yml` beside `name.pdf`,
with the same fields; the file's own title (PDF or Word properties, HTML <title>) is the fallback.
A file that cannot be read raises UnreadableFile with a reason a person can act on.
"""
from __future__ import annotations

import io
import re
from urllib.parse import quote
from pathlib import Path

import yaml

from .authoring import INTERNAL
from .html_page import page_content

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")  # .mdx: Docusaurus' markdown with JSX components
SUFFIXES = (*MARKDOWN_SUFFIXES, ".pdf", ".docx", ".html", ".htm", ".txt")


def page_name(path: str) -> str:
    """A markdown file's path without its extension ("docs/laptops.mdx" -> "docs/laptops"); other
    formats keep theirs, so a.pdf and a.md may sit side by side."""
    return re.sub(r"\.(?:md|markdown|mdx)$", "", path)
SIDECAR_SUFFIXES = (".yml", ".yaml")


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


_MAGIC = {".pdf": (b"%PDF-", "a PDF"), ".docx": (b"PK\x03\x04", "a Word (.docx) file")}
_LIST_ITEM = re.compile(r"^(?:[•▪◦‣]\s*|[-*]\s+|\d{1,3}[.)]\s+)")  # extraction may drop the space after a bullet
_COLUMN_GAP = re.compile(r"\S\s{3,}\S")  # layout extraction pads table cells apart with spaces
_WORD_HEADING = re.compile(r"^heading\s*([1-6])$", re.I)


class UnreadableFile(ValueError):
    """The file was left out; the message says why."""


def read_markdown(path: Path) -> str:
    """The file as markdown (with front matter for converted formats)."""
    data = path.read_bytes()
    if not data.strip():
        raise UnreadableFile("the file is empty")
    suffix = path.suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return _text(data, "markdown")
    magic, kind = _MAGIC.get(suffix, (None, ""))
    if magic is not None and not data[:1024].lstrip().startswith(magic):
        raise UnreadableFile(f"it is named {suffix} but is not {kind} ({_looks_like(data)})")
    try:
        meta, body = _CONVERTERS[suffix](data)
    except UnreadableFile:
        raise
    except Exception as error:  # parsers raise many types on damaged files; none may stop the reload
        raise UnreadableFile(f"the {suffix} file is damaged and could not be read "
                             f"({type(error).__name__}: {error})") from None
    if not body.strip():
        raise UnreadableFile("it holds no text")
    meta = {key: value for key, value in meta.items() if value}
    meta.update(sidecar_of(path))
    return "---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n" + body


def is_sidecar(path: Path) -> bool:
    return path.suffix.lower() in SIDECAR_SUFFIXES and Path(path.stem).suffix.lower() in SUFFIXES


def sidecar_of(path: Path) -> dict:
    """The fields of `name.ext.yml` beside the file ({} without one); UnreadableFile when broken."""
    for suffix in SIDECAR_SUFFIXES:
        sidecar = path.with_name(path.name + suffix)
        if sidecar.is_file():
            try:
                meta = yaml.safe_load(sidecar.read_text(encoding="utf-8")) or {}
            except (yaml.YAMLError, UnicodeDecodeError):
                raise UnreadableFile(f"its sidecar {sidecar.name} is not valid YAML") from None
            if not isinstance(meta, dict):
                raise UnreadableFile(f"its sidecar {sidecar.name} must be a set of `key: value` fields")
            return meta
    return {}


def _reject_binary(data: bytes, kind: str) -> None:
    if b"\x00" in data[:4096]:
        raise UnreadableFile(f"it is binary, not {kind} text")


def _text(data: bytes, kind: str) -> str:
    _reject_binary(data, kind)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"it is not UTF-8 {kind} text ({error.reason} at byte {error.start})") from None


def _looks_like(data: bytes) -> str:
    head = data[:1024].lstrip().lower()
    for magic, kind in [(b"%pdf-", "a PDF"), (b"pk\x03\x04", "a ZIP archive"), (b"<", "HTML or XML"),
                        (b"\xff\xd8\xff", "a JPEG image"), (b"\x89png", "a PNG image")]:
        if head.startswith(magic):
            return f"its content is {kind}"
    return "its content is plain text" if b"\x00" not in head else "its content is unrecognised binary data"


# ---- PDF -----------------------------------------------------------------------------------

def _pdf(data: bytes) -> tuple[dict, str]:
    from pypdf import PasswordType, PdfReader

    reader = PdfReader(io.BytesIO(data))
    # Many PDFs are encrypted only to restrict printing or copying: their empty user password opens them.
    if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise UnreadableFile("the PDF is encrypted with a password")
    texts = [page.extract_text(extraction_mode="layout") for page in reader.pages]
    if not any(text.strip() for text in texts):
        raise UnreadableFile("the PDF has no text layer (a scan or images only); "
                             "Citebot does no OCR, so there is nothing to index")
    headings = _outline(reader, reader.outline, 1, {})
    pages = [_page_markdown(text, number, headings.get(number, []) if headings else [(2, f"Page {number}")])
             for number, text in enumerate(texts, 1)]
    # Without properties or an outline, a page's first line is the best title the PDF offers.
    title = (reader.metadata or {}).get("/Title") or ("" if headings else _first_line(pages[0]))
    return {"title": str(title)}, "\n\n".join(pages)


def _first_line(page: str) -> str:
    return next((line[:120] for line in page.splitlines() if line.strip() and not line.startswith("#")), "")


def _outline(reader, items, depth: int, found: dict) -> dict[int, list[tuple[int, str]]]:
    """{page number: [(heading level, title)]} in outline order; a nested list holds the
    children of the entry before it."""
    for item in items:
        if isinstance(item, list):
            _outline(reader, item, depth + 1, found)
            continue
        page = reader.get_destination_page_number(item)
        title = re.sub(r"\s+", " ", str(item.title or "")).strip()
        if page is not None and page >= 0 and title:
            found.setdefault(page + 1, []).append((min(depth, 6), title))
    return found


def _page_markdown(text: str, number: int, headings: list[tuple[int, str]]) -> str:
    """One page as markdown: each heading replaces the line that shows it (or opens the page when
    no line does) and carries the page anchor; wrapped lines are joined into paragraphs."""
    lines = [line.strip() for line in text.splitlines()]
    out, at = [], 0
    for level, title in headings:
        key = _squash(title)
        found = next((i for i in range(at, len(lines)) if _squash(lines[i]) == key), None)
        if found is not None:
            out += lines[at:found]
            at = found + 1
        out += ["", f"{'#' * level} {title} {{#page={number}}}", ""]
    return "\n".join(_reflow(out + lines[at:]))


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _reflow(lines: list[str]) -> list[str]:
    """Join a paragraph's wrapped lines; list items and table rows stay one a line."""
    out: list[str] = []
    joinable = False
    for line in lines:
        if not line or line.startswith("#"):
            out.append(line)
            joinable = False
        elif _COLUMN_GAP.search(line):
            # Layout extraction leaves a gap between table rows; a table stays one block.
            while len(out) > 1 and not out[-1] and " | " in out[-2]:
                out.pop()
            out.append(" | ".join(re.split(r"\s{3,}", line)))
            joinable = False
        elif _LIST_ITEM.match(line):
            out.append(_LIST_ITEM.sub("- ", line, count=1))
            joinable = True
        elif joinable:
            out[-1] += " " + line
        else:
            out.append(line)
            joinable = True
    return out


# ---- Word ----------------------------------------------------------------------------------

def _docx(data: bytes) -> tuple[dict, str]:
    import docx
    from docx.table import Table

    document = docx.Document(io.BytesIO(data))
    blocks = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            blocks.append(_docx_table(block))
            continue
        text = block.text.strip()
        if not text:
            continue
        style = (block.style.name if block.style is not None else "") or ""
        heading = _WORD_HEADING.match(style)
        if heading or style.lower() == "title":
            blocks.append(f"{'#' * int(heading.group(1) if heading else 1)} {text}")
        # A list paragraph has a List style or, when formatted by hand, numbering properties
        # (python-docx has no public accessor for those).
        elif style.lower().startswith("list") or block._p.pPr is not None and block._p.pPr.numPr is not None:
            # Consecutive items form one block, as a markdown list does.
            item = f"- {text}"
            if blocks and blocks[-1].startswith("- "):
                blocks[-1] += "\n" + item
            else:
                blocks.append(item)
        else:
            blocks.append(text)
    return {"title": document.core_properties.title}, "\n\n".join(blocks)


def _docx_table(table) -> str:
    rows = [[" ".join(cell.text.split()).replace("|", "\\|") for cell in row.cells] for row in table.rows]
    if not rows:
        return ""
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * len(rows[0]))
    return "\n".join(lines)


# ---- HTML ----------------------------------------------------------------------------------

def _html(data: bytes) -> tuple[dict, str]:
    from bs4 import BeautifulSoup, Comment, NavigableString
    from markdownify import MarkdownConverter

    class _Converter(MarkdownConverter):
        def convert_hN(self, n, el, text, parent_tags):
            heading = super().convert_hN(n, el, text, parent_tags)
            anchor = (el.get("id") or "").strip()
            if re.fullmatch(r"[^}\s]+", anchor) and "_inline" not in parent_tags:
                return heading.rstrip("\n") + f" {{#{anchor}}}\n\n"
            return heading

    _reject_binary(data, "HTML")  # BeautifulSoup finds the encoding of a real page itself
    soup = BeautifulSoup(data, "html.parser")
    # An internal marker is a comment, which the conversion drops: it becomes text ingest knows.
    for comment in soup.find_all(string=lambda text: isinstance(text, Comment)):
        if re.fullmatch(r"\s*internal\b[^>]*", comment, re.I):
            comment.replace_with(NavigableString(INTERNAL))
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    # The page's own address, as docs generators, CMSs and saved pages write it: its citations
    # link there without CITEBOT_SOURCE_URL. Only an absolute http(s) address (a relative one has
    # no base here, any other scheme is no link); a sidecar's `url` still wins (read_markdown).
    canonical = soup.find("link", rel="canonical", href=True)
    url = canonical["href"].strip().split("#")[0] if canonical else ""
    # Page furniture, not content: navigation menus repeat on every page of a wiki export.
    for element in soup(["head", "script", "style", "noscript", "template", "nav"]):
        element.decompose()
    body = _Converter(heading_style="ATX", bullets="-", escape_asterisks=False,
                      escape_underscores=False).convert_soup(page_content(soup))
    return {"title": title, "url": url if re.fullmatch(r"https?://\S+", url) else ""}, body


def _plain(data: bytes) -> tuple[dict, str]:
    return {}, _text(data, "plain")


_CONVERTERS = {".pdf": _pdf, ".docx": _docx, ".html": _html, ".htm": _html, ".txt": _plain}
