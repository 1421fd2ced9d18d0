"""Cutting a document into section chunks: a chunk never straddles two sections, knows its heading
path and GitHub-style anchor, and has a stable id `source_id::section-slug::n`. What is embedded
and full-text indexed is a short contextual header (title › section path) and the section text;
sections marked `<!-- internal -->` never reach a chunk."""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from ...language.markdown import (
    FENCE,
    SPLITTER_VERSION,
    indent,
    item_lines,
    link_labels,
    paragraphs,
    without_emphasis,
)
from ..authoring import INTERNAL
from .documents import Chunk, Document



MAX_CHUNK_CHARS = 700


HEADER_SEP = " › "


# A heading may name its anchor, `## Title {#anchor}` (Pandoc / kramdown / markdown-it-attrs
# syntax, as docs sites write it); the converters in loaders.py use it for HTML ids and PDF pages.
HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+\{#([^}\s]+)\})?\s*#*\s*$")


def drop_internal_sections(body: str) -> str:
    """Remove every section whose heading carries the internal mark, with its subsections."""
    kept, internal_level, in_fence = [], 0, False
    for line in body.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if internal_level and level > internal_level:
                continue
            internal_level = level if INTERNAL in heading.group(2) else 0
        if not internal_level:
            kept.append(line)
    return "\n".join(kept)


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
        heading = None if in_fence else HEADING.match(line)
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
