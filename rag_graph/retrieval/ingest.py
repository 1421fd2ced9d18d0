"""Load markdown documents (with or without YAML front matter) and cut them into section chunks.

A chunk never straddles two sections, knows its heading path and GitHub-style anchor, and has a
stable id `source_id::section-slug::n`. What gets embedded and full-text indexed is a short
contextual header (title › section path) followed by the section text. Internal front matter
fields and sections marked `<!-- internal -->` never reach a chunk.
"""
from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from fnmatch import fnmatch
from html import unescape
from pathlib import Path
from typing import Callable

import yaml

from .loaders import SUFFIXES, UnreadableFile, is_sidecar, page_name, read_markdown
from ..language.text import FENCE, MD_LINK, SPLITTER_VERSION, indent, item_lines, link_labels, paragraphs, without_emphasis

log = logging.getLogger(__name__)

# Only these front matter fields are ever stored; everything else (owner_email, internal_notes,
# any field a writer invents) is internal by default, so a new field cannot leak by accident.
PUBLIC_FIELDS = ("source_id", "title", "url", "effective_date", "status", "superseded_by", "authority",
                 "keywords", "tags")
# Stored to decide who may read a document (rag_graph/scope.py), never shown.
ACCESS_FIELDS = ("audience",)
INTERNAL_MARK = "<!-- internal -->"
MAX_CHUNK_CHARS = 700
# README.md / SOURCE.md describe a folder of documents rather than being one of them.
DEFAULT_EXCLUDE = ("README.md", "SOURCE.md")
HEADER_SEP = " › "

# A heading may name its anchor, `## Title {#anchor}` (Pandoc / kramdown / markdown-it-attrs
# syntax, as docs sites write it); the converters in loaders.py use it for HTML ids and PDF pages.
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+\{#([^}\s]+)\})?\s*#*\s*$")
_DOCUMENT_SUFFIX = re.compile("(" + "|".join(re.escape(suffix) for suffix in SUFFIXES) + ")$", re.I)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)

# Template shortcodes (11ty / Nunjucks / Liquid) as a docs site's source holds them. A reader sees
# what they render, never the tag: a `{% raw %}` block shows its content literally, a comment
# nothing, a link its text, an alert its title and body, a Slack channel its name; images,
# includes, variables and any tag we do not know render nothing we can show. An HTML link becomes
# the markdown link it stands for, so its target URL does not read as words.
_RAW = re.compile(r"\{%-?\s*raw\s*-?%\}(?P<body>.*?)\{%-?\s*endraw\s*-?%\}", re.S)
_COMMENT = re.compile(r"\{%-?\s*comment\b.*?\{%-?\s*endcomment\s*-?%\}|\{#[^{}]*?#\}", re.S)
_LINK_TAG = r"\{%-?\s*(?:page|link|download)\s+[\"'](?P<target>[^\"']*)[\"'][^%]*%\}"
_SHORTCODE_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\(\s*" + _LINK_TAG + r"\s*\)", re.S)
_SHORTCODE_LINK_DEFINITION = re.compile(r"^[ \t]*\[[^\]]+\]:[ \t]*" + _LINK_TAG + r"[ \t]*$", re.M)
_ALERT = re.compile(r"\{%-?\s*alert\b(?P<args>.*?)-?%\}(?P<body>.*?)\{%-?\s*endalert\s*-?%\}", re.S)
_SLACK_CHANNEL = re.compile(r"\{%-?\s*slack_channel\s+[\"']#?(?P<name>[^\"']+)[\"'][^%]*%\}")
_HTML_ANCHOR = re.compile(r"<a\s[^>]*?href=[\"']([^\"']*)[\"'][^>]*>(.*?)</a>", re.S | re.I)
_FENCED_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", re.S | re.M)
_ANY_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}", re.S)
# A reference-style link ("[local travel][local-travel]", defined by "[local-travel]: …" further
# down) reads as its text and points where its definition says; the definition line is no text.
_REFERENCE_DEFINITION = re.compile(
    r"^[ \t]{0,3}\[(?P<label>[^\]\n]+)\]:(?:[ \t]*\n)?[ \t]*(?P<target>\{%.*?%\}|<[^>\n]*>|\S+)(?:[ \t]+[\"'(][^\n]*)?[ \t]*$", re.M)
_REFERENCE_LINK = re.compile(r"\[(?P<text>[^\[\]]+)\]\[(?P<label>[^\[\]]*)\]")


@dataclass
class Document:
    source_id: str
    title: str
    path: str  # relative to the corpus root, with forward slashes
    body: str
    url: str = ""
    effective_date: str = ""
    status: str = "current"
    superseded_by: str = ""
    authority: int = 1
    links: list[str] = field(default_factory=list)  # relative paths of linked corpus documents
    keywords: list[str] = field(default_factory=list)  # the page's own search terms (front matter)
    audience: list[str] = field(default_factory=list)  # group names that may read it; [] = everyone


@dataclass
class Chunk:
    chunk_id: str
    source_id: str
    title: str
    section: str  # heading path below the title, joined with " › "
    anchor: str
    url: str
    chunk_index: int
    body: str  # the section text of this chunk
    text: str  # contextual header + body: what is embedded, indexed and ranked
    status: str
    effective_date: str
    authority: int
    superseded_by: str
    links: list[str]
    path: str
    audience: list[str] = field(default_factory=list)
    content_hash: str = ""

    def row(self) -> dict:
        return dict(self.__dict__)


def own_heading(section: str) -> str:
    """The chunk's own heading: the last of its heading path ("Travel comp time › Using it" -> "Using it")."""
    return section.split("›")[-1].strip()


@dataclass
class Corpus:
    documents: list[Document]
    chunks: list[Chunk]
    skipped: list[str]  # human-readable warnings, one per file that was left out
    formats: dict[str, dict[str, int]] = field(default_factory=dict)  # {".pdf": {"read": n, "skipped": m}}


class FrontMatterError(ValueError):
    pass


def load_corpus(root: Path | str, exclude: tuple[str, ...] = DEFAULT_EXCLUDE) -> Corpus:
    """Every document below root (see loaders.SUFFIXES), in a stable order, but for hidden files,
    sidecars and files matching an `exclude` pattern. A bad file is skipped with a warning naming
    it; the rest is still loaded. Files of other types are counted and named once per type."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder not found: {root}")
    documents, skipped, formats, unsupported = [], [], {}, {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if (any(part.startswith(".") for part in path.relative_to(root).parts) or is_sidecar(path)
                or any(fnmatch(relative, pattern) or fnmatch(path.name, pattern) for pattern in exclude)):
            continue
        suffix = path.suffix.lower() or "(none)"
        counts = formats.setdefault(suffix, {"read": 0, "skipped": 0})
        if suffix not in SUFFIXES:
            counts["skipped"] += 1
            unsupported.setdefault(suffix, []).append(relative)
            continue
        try:
            documents.append(parse_document(read_markdown(path), relative))
            counts["read"] += 1
        except (FrontMatterError, UnreadableFile) as error:
            counts["skipped"] += 1
            skipped.append(f"skipped {relative}: {error}")
    for suffix, paths in unsupported.items():
        skipped.append(f"skipped {len(paths)} {suffix} file(s) ({', '.join(paths[:3])}"
                       f"{', …' if len(paths) > 3 else ''}): not a supported format ({' '.join(SUFFIXES)})")
    for message in skipped:
        log.warning(message)
    _resolve_references(documents)
    chunks = [chunk for document in documents for chunk in chunk_document(document)]
    return Corpus(documents=documents, chunks=chunks, skipped=skipped, formats=formats)


def parse_document(raw: str, relative_path: str) -> Document:
    meta, body = split_front_matter(raw)
    if relative_path.lower().endswith(".mdx"):
        body = without_jsx(body)
    body, shortcode_links = render_shortcodes(resolve_reference_links(body))
    body = _HTML_COMMENT.sub("", drop_internal_sections(body))
    first_heading = next((m.group(2) for m in map(_HEADING.match, body.splitlines()) if m), None)
    default_id = page_name(relative_path)
    title = _inline_text(str(meta.get("title") or (first_heading and plain_text(first_heading)) or default_id))
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
        effective_date=_date_text(meta.get("effective_date")),
        status=str(meta.get("status") or "current").lower(),
        superseded_by=str(meta.get("superseded_by") or ""),
        authority=authority,
        links=[target for _, target in MD_LINK.findall(body) if _DOCUMENT_SUFFIX.search(target.split("#")[0])]
        + shortcode_links,
        keywords=_keywords(meta),
        audience=_audience(meta.get("audience")),
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


def _audience(value) -> list[str]:
    """`audience: people-ops` or a list of group names; group names compare case-blind. A value
    we cannot read is an error (the file is skipped), never a document for everyone."""
    if value is None:
        return []
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise FrontMatterError(f"audience must be a group name or a list of group names, got {value!r}")
    return sorted({n.strip().lower() for n in names})


def resolve_reference_links(body: str) -> str:
    """Reference-style links as inline ones, their definitions removed (CommonMark: labels match
    case-insensitively, whitespace collapsed; "[text][]" uses the text as its label). An
    undefined reference is left as written, as a renderer shows it."""
    targets: dict[str, str] = {}
    for m in _REFERENCE_DEFINITION.finditer(body):
        targets.setdefault(_label(m["label"]), m["target"].strip("<>"))
    if not targets:
        return body
    body = _REFERENCE_DEFINITION.sub("", body)

    def inline(m: re.Match) -> str:
        target = targets.get(_label(m["label"] or m["text"]))
        return f"[{m['text']}]({target})" if target is not None else m.group(0)

    return _REFERENCE_LINK.sub(inline, body)


def _label(label: str) -> str:
    return re.sub(r"\s+", " ", label).strip().lower()


def render_shortcodes(body: str) -> tuple[str, list[str]]:
    """(body as the site renders it, the pages its shortcode links point to). Fenced code is
    left as written: a code sample (`{{ .Values.image }}`) is content, and a template site
    wraps the tags it shows in `{% raw %}` anyway."""
    kept: list[str] = []

    def keep(text: str) -> str:
        kept.append(text)
        return f"\0{len(kept) - 1}\0"

    body = _RAW.sub(lambda m: keep(m.group("body")), body)
    body = _FENCED_BLOCK.sub(lambda m: keep(m.group(0)), body)
    body = _COMMENT.sub("", body)
    targets = [m.group("target") for m in _SHORTCODE_LINK.finditer(body)]
    targets += [m.group("target") for m in _SHORTCODE_LINK_DEFINITION.finditer(body)]
    body = _SHORTCODE_LINK_DEFINITION.sub("", body)
    body = _SHORTCODE_LINK.sub(lambda m: m.group("text"), body)
    body = _ALERT.sub(_render_alert, body)
    body = _SLACK_CHANNEL.sub(lambda m: "#" + m.group("name").strip(), body)
    body = _ANY_TAG.sub("", body)
    body = _HTML_ANCHOR.sub(lambda m: f"[{m.group(2).strip()}]({m.group(1)})", body)
    body = render_html(render_footnotes(render_admonitions(atx_headings(render_quotes(body)))))
    while "\0" in body:  # a kept fence may itself hold a kept raw block
        body = re.sub("\0(\\d+)\0", lambda m: kept[int(m.group(1))], body)
    return body, [target for target in targets if not re.match(r"[a-z]+:", target)]


# A heading underlined with "===" or "---" (CommonMark's setext form, common in READMEs) is the
# "#" or "##" heading it renders as: without this such a document had no sections at all.
_SETEXT = re.compile(r"^(?P<text>[ ]{0,3}[^\s|>#\-*+][^\n]*)\n[ ]{0,3}(?P<rule>=+|-+)[ \t]*$", re.M)


def atx_headings(body: str) -> str:
    """Setext headings as "#" headings. Only a one-line paragraph is a heading here: a line
    that follows text directly is a wrapped paragraph's, and "---" after one would be ambiguous."""
    def heading(match: re.Match) -> str:
        before = body[:match.start()]
        if before.strip() and not re.search(r"\n[ \t]*\n$", before):
            return match.group(0)  # the underlined line continues a paragraph above it
        level = "#" if match["rule"].startswith("=") else "##"
        return f"{level} {match['text'].strip()}"
    return _SETEXT.sub(heading, body)


# Docusaurus (":::tip Title" … ":::") and MkDocs ('!!! note "Title"' over an indented body)
# admonitions read as their title in bold over their text, like the 11ty alert boxes; so does
# each of MkDocs' content tabs ('=== "macOS"' over an indented body), one after the other.
_COLON_ADMONITION = re.compile(r"^:::[ \t]*(?P<kind>\w+)[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^:::[ \t]*$", re.M | re.S)
_BANG_ADMONITION = re.compile(r"^(?:(?:!!!|\?\?\?\+?)[ \t]*(?P<kind>\w+)|===\+?(?=[ \t]+\"))"
                              r"(?:[ \t]+\"(?P<title>[^\"\n]*)\")?[ \t]*\n"
                              r"(?P<body>(?:(?:[ ]{4}|\t)[^\n]*\n?|[ \t]*\n)+)", re.M)


def render_admonitions(body: str) -> str:
    def box(match: re.Match) -> str:
        title = (match["title"] or "").strip() or match["kind"].capitalize()
        text = re.sub(r"^(?:[ ]{4}|\t)", "", match["body"], flags=re.M).strip()
        return f"**{title}**\n\n{text}\n"
    return _BANG_ADMONITION.sub(box, _COLON_ADMONITION.sub(box, body))


# A blockquote reads as its text ("> Releases are cut on Tuesdays."), and a GitHub alert
# ("> [!NOTE]", escaped "> \[!TIP]" in some sources) as its kind in bold over its text, like
# the admonitions above.
_QUOTE_MARKS = re.compile(r"^[ ]{0,3}(?:>[ ]?)+", re.M)
_GITHUB_ALERT = re.compile(r"^\\?\[!(?P<kind>NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*\n?", re.M | re.I)


def render_quotes(body: str) -> str:
    return _GITHUB_ALERT.sub(lambda m: f"**{m['kind'].capitalize()}**\n\n", _QUOTE_MARKS.sub("", body))


# Footnotes (GitHub, Pandoc, MkDocs): a marker ("…fits you and your partner[^1].") shows as a
# number, no words, and a definition ("[^1]: Throughout this document…") as its text.
_FOOTNOTE_DEFINITION = re.compile(r"^[ ]{0,3}\[\^[^\]\s]+\]:[ \t]*", re.M)
_FOOTNOTE_MARKER = re.compile(r"\[\^[^\]\s]+\](?!:)")


def render_footnotes(body: str) -> str:
    return outside(_CODE_SPAN, body, lambda text: _FOOTNOTE_MARKER.sub("", _FOOTNOTE_DEFINITION.sub("", text)), "\x02")


# HTML inside markdown reads as what a browser shows. A table becomes rows a reader can quote:
# a header row names the columns of a markdown table; a table without one (a key / value list
# such as an office's "Location | 230 S. Dearborn St.") becomes one list item per row. Other
# tags give their text: a <details> block its <summary> as a bold line, a line break a space,
# an image its alt text. Code spans keep their tags: they show them.
_HTML_TABLE = re.compile(r"<table\b.*?</table\s*>", re.S | re.I)
_SUMMARY = re.compile(r"<summary\b[^>]*>(.*?)</summary\s*>", re.S | re.I)
_IMAGE = re.compile(r"<img\b[^>]*?\balt=[\"']([^\"']*)[\"'][^>]*>|<img\b[^>]*>", re.I)
_AUTOLINK = re.compile(r"<((?:https?://|mailto:)[^<>\s]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>")  # "<https://…>" shows its address
_LINE_BREAK = re.compile(r"[ \t]*<br\s*/?>[ \t]*", re.I)
_LIST_ITEM_TAG = re.compile(r"^[ \t]*<li\b[^>]*>", re.M | re.I)
_HTML_TAG = re.compile(r"</?(?:div|span|p|details|section|article|aside|header|footer|main|center|figure|"
                       r"figcaption|button|iframe|ul|ol|li|dl|dt|dd|strong|b|em|i|u|s|del|ins|sup|sub|kbd|"
                       r"small|mark|abbr|cite|font|label|nav|h[1-6]|thead|tbody|tfoot|tr|td|th|table|caption|"
                       r"hr|video|audio|source|picture|input|form|select|option|textarea)\b[^>]*>", re.I)
_CODE_SPAN = re.compile(r"(`+)[^\n]*?\1")


def outside(pattern: re.Pattern, body: str, render: Callable[[str], str], marker: str) -> str:
    """`render` applied to the body with the matches of `pattern` (code) set aside, then put back."""
    kept: list[str] = []

    def keep(match: re.Match) -> str:
        kept.append(match.group(0))
        return f"{marker}{len(kept) - 1}{marker}"

    return re.sub(f"{marker}(\\d+){marker}", lambda m: kept[int(m.group(1))], render(pattern.sub(keep, body)))


def render_html(body: str) -> str:
    return outside(_CODE_SPAN, body, _render_tags, "\x01")


def _render_tags(body: str) -> str:
    body = _HTML_TABLE.sub(lambda m: "\n\n" + _table_markdown(m.group(0)) + "\n\n", body)
    body = _SUMMARY.sub(lambda m: f"\n\n**{_inline_text(m.group(1))}**\n\n", body)
    body = _IMAGE.sub(lambda m: m.group(1) or "", _AUTOLINK.sub(r"\1", body))
    body = _LINE_BREAK.sub(" ", body)
    body = _LIST_ITEM_TAG.sub("- ", body)
    body = _characters(_HTML_TAG.sub("", body))
    return re.sub(r"\n[ \t]+\n", "\n\n", body)  # the lines a removed tag stood on


def _inline_text(html: str) -> str:
    return re.sub(r"\s+", " ", _characters(_HTML_TAG.sub("", _LINE_BREAK.sub(" ", html)))).strip()


_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);")


def _characters(text: str) -> str:
    """HTML entities as the characters they name: "We&rsquo;re" reads "We’re"."""
    return _ENTITY.sub(lambda m: unescape(m.group(0)), text)


def _table_markdown(html: str) -> str:
    from bs4 import BeautifulSoup

    rows = []
    for row in BeautifulSoup(html, "html.parser").find_all("tr"):
        cells = row.find_all(["td", "th"])
        rows.append(([_cell_text(cell) for cell in cells], bool(cells) and all(c.name == "th" for c in cells)))
    rows = [(cells, header) for cells, header in rows if any(cells)]
    if not rows:
        return ""
    if rows[0][1]:  # a header row: a markdown table, as the table sentences expect
        width = max(len(cells) for cells, _ in rows)
        lines = ["| " + " | ".join(cells + [""] * (width - len(cells))) + " |" for cells, _ in rows]
        lines.insert(1, "|" + "---|" * width)
        return "\n".join(lines)
    return "\n".join("- " + (f"{cells[0]}: {'; '.join(cells[1:])}" if len(cells) > 1 else cells[0])
                     for cells, _ in rows)


def _cell_text(cell) -> str:
    """A cell's text; its lines (<br>) joined by "; " unless a line ends its own sentence."""
    for br in cell.find_all("br"):
        br.replace_with("\x02")  # the source's own line breaks are only wrapping
    lines = [re.sub(r"\s+", " ", line).strip() for line in cell.get_text(" ").split("\x02")]
    text = ""
    for line in filter(None, lines):
        text += line if not text else (" " if text[-1] in ".!?:;," else "; ") + line
    return text.replace("|", "/")


# MDX: the module lines ("import Tabs from '@theme/Tabs';") and the components' tags
# ("<TabItem value="mac">…</TabItem>") render nothing of their own; the text inside them is content.
_MODULE_LINE = re.compile(r"^(?:import|export)\s[^\n]*\n?", re.M)
_COMPONENT_TAG = re.compile(r"</?[A-Z][\w.]*(?:\s[^<>]*)?/?>")


def without_jsx(text: str) -> str:
    """MDX as the page shows it (code samples kept as written)."""
    return outside(_FENCED_BLOCK, text, lambda t: _COMPONENT_TAG.sub("", _MODULE_LINE.sub("", t)), "\x01")


def _render_alert(match: re.Match) -> str:
    """An alert box is a paragraph of its own: its title (the first argument, if any) in bold,
    then its body, dedented so an indented body does not turn into a code block."""
    title = re.match(r"\s*[\"']([^\"']*)[\"']", match.group("args"))
    lines = [line.strip() for line in match.group("body").strip("\n").splitlines()]
    heading = [f"**{title.group(1).strip()}**", ""] if title and title.group(1).strip() else []
    return "\n\n" + "\n".join(heading + lines).strip() + "\n\n"


def drop_internal_sections(body: str) -> str:
    """Remove every section whose heading carries the internal mark, with its subsections."""
    kept, internal_level, in_fence = [], 0, False
    for line in body.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if internal_level and level > internal_level:
                continue
            internal_level = level if INTERNAL_MARK in heading.group(2) else 0
        if not internal_level:
            kept.append(line)
    return "\n".join(kept)


def split_front_matter(raw: str) -> tuple[dict, str]:
    """(public front matter fields, body). No front matter is fine; a broken one is an error."""
    raw = raw.lstrip("\ufeff")
    if not raw.startswith("---"):
        return {}, raw
    match = re.match(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", raw, re.S)
    if not match:
        raise FrontMatterError("front matter starts with '---' but is never closed")
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 2})" if where else ""
        raise FrontMatterError(f"front matter is not valid YAML{line}") from None
    if not isinstance(meta, dict):
        raise FrontMatterError("front matter must be a set of `key: value` fields")
    return {key: meta[key] for key in PUBLIC_FIELDS + ACCESS_FIELDS if key in meta}, raw[match.end():]


def _date_text(value) -> str:
    if isinstance(value, (date, datetime)):
        return value.isoformat()[:10]
    return str(value or "")


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


def plain_text(markdown: str) -> str:
    """Heading or sentence text without markdown decoration."""
    return re.sub(r"\s+", " ", without_emphasis(link_labels(markdown))).strip()


def slugify(heading: str) -> str:
    """GitHub's anchor rule (github-slugger, also used by Docusaurus and Hugo's default) over the
    heading as rendered: lower-case, drop punctuation, each space becomes a hyphen. Emphasis
    markers go, but an underscore inside a word (`max_tokens`) is text and stays."""
    text = "".join(ch for ch in plain_text(heading).lower() if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return text.replace(" ", "-")


@dataclass
class _Section:
    path: list[str]
    anchor: str  # the link fragment
    lines: list[str]
    slug: str = ""  # unique within the document, for chunk ids (two PDF sections may share a page)


def _sections(document: Document) -> list[_Section]:
    sections = [_Section([], "", [])]
    stack: list[tuple[int, str]] = []
    seen_anchors: dict[str, int] = {}
    in_fence = False
    for line in document.body.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading is None:
            sections[-1].lines.append(line)
            continue
        level, title = len(heading.group(1)), plain_text(heading.group(2))
        slug = slugify(heading.group(2)) or "section"
        count = seen_anchors.get(slug, 0)
        seen_anchors[slug] = count + 1
        slug = slug if count == 0 else f"{slug}-{count}"
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        sections.append(_Section([t for _, t in stack], heading.group(3) or slug, [], slug))
    return sections


def _split_long(block: str, limit: int) -> list[str]:
    """A block longer than the limit is cut between list items or table rows (a table's header
    rows are repeated in every piece so each piece still says what its columns are), or a
    paragraph between sentences. A line wrapped onto the next (hard-wrapped Markdown) stays with
    its item: a chunk that opens mid-sentence ("last day.") answers with a fragment. Code is cut
    at any line, and each piece is fenced as the whole block was: a piece that opened with the
    closing fence of the one before would read its prose as code and its code as prose."""
    if len(block) <= limit:
        return [block]
    lines = block.splitlines()
    header = lines[:2] if len(lines) > 2 and re.fullmatch(r"[|:\-\s]+", lines[1]) else []
    footer, fence = [], FENCE.match(lines[0])
    pieces, joiner = lines[len(header):], "\n"
    if fence:
        closed = len(lines) > 1 and lines[-1].strip().startswith(fence.group(1))
        header, footer, pieces = [lines[0]], [fence.group(1)], lines[1:-1] if closed else lines[1:]
    else:
        pieces = ["\n".join(item) for item in item_lines(pieces)]
        if len(pieces) == 1 and not header:
            pieces, joiner = re.split(r"(?<=[.!?])\s+", pieces[0]), " "
    out, current = [], []
    for piece in pieces:
        if current and len(joiner.join(header + current + [piece] + footer)) > limit:
            # An item that introduces the items indented below it ("- **External Detail -
            # #1280:**") goes with them: at the end of a piece it would introduce nothing.
            carried = [current.pop()] if not fence and len(current) > 1 and indent(piece) > indent(current[-1]) else []
            out.append(joiner.join(header + current + footer))
            current = carried
        current.append(piece)
    if current:
        out.append(joiner.join(header + current + footer))
    return out


def _windows(blocks: list[str], limit: int) -> list[str]:
    """Pack paragraphs into chunks up to `limit`; each new chunk repeats the previous paragraph
    when it is short, so a sentence that leans on its predecessor keeps its context."""
    blocks = [piece for block in blocks for piece in _split_long(block, limit)]
    chunks: list[list[str]] = []
    for block in blocks:
        if chunks and sum(len(b) + 2 for b in chunks[-1]) + len(block) <= limit:
            chunks[-1].append(block)
            continue
        overlap = [chunks[-1][-1]] if chunks and len(chunks[-1][-1]) <= limit // 3 else []
        chunks.append(overlap + [block])
    return ["\n\n".join(chunk) for chunk in chunks]


def chunk_document(document: Document, limit: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    chunks = []
    for section in _sections(document):
        # The heading path repeats the document title as its first entry when the file starts
        # with `# Title`; the citation shows "Title › Section", so drop the duplicate.
        path = section.path
        if path and document.title.lower().startswith(path[0].lower()):
            path = path[1:]
        section_name = HEADER_SEP.join(path)
        header = HEADER_SEP.join([document.title, *path])
        if document.keywords:  # searched and embedded with every chunk; never quoted in an answer
            header += f"\n({', '.join(document.keywords)})"
        slug = section.slug or "intro"
        for n, body in enumerate(_windows([p.strip() for p in paragraphs("\n".join(section.lines))], limit)):
            text = f"{header}\n\n{body}"
            chunk = Chunk(
                chunk_id=f"{document.source_id}::{slug}::{n}",
                source_id=document.source_id,
                title=document.title,
                section=section_name,
                anchor=section.anchor,
                url=document.url,
                chunk_index=n,
                body=body,
                text=text,
                status=document.status,
                effective_date=document.effective_date,
                authority=document.authority,
                superseded_by=document.superseded_by,
                links=document.links,
                path=document.path,
                audience=document.audience,
            )
            # The index stores a vector per sentence: a new way of cutting sentences re-embeds.
            chunk.content_hash = hashlib.sha256(repr((SPLITTER_VERSION, sorted(chunk.row().items()))).encode()).hexdigest()
            chunks.append(chunk)
    return chunks
