"""Markdown structure as a reader sees it: sentences, list items and their lead-ins, table rows, code
blocks, link labels. The index stores a vector per sentence, so how text is cut is versioned."""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import takewhile

from .words import words

LIST_ITEM = re.compile(r"\s*([-*+]|\d+[.)]|\|)\s")


# A sentence keeps its closing quote or bracket (…not officially “performing work.”), and
# does not end at an abbreviation ("around March (e.g. Google Docs)", "1800 G St. NW").
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"”’)]))(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bSt\.)"
                           r"(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)\s+(?=[\"“(]?[A-Z0-9$£€])")


MD_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)[^)]*\)")  # a markdown link or image: (label, target)


def link_labels(markdown: str) -> str:
    """The text as a reader sees it: each link or image is its label; its address is not text."""
    return MD_LINK.sub(r"\1", markdown)


# Emphasis, code and strike-through marks. An underscore inside a word ("node_modules",
# "first_last@gsa.gov", "NODE_ENV") is text: CommonMark never opens emphasis there.
_EMPHASIS = re.compile(r"[*`]+|~~|(?<![^\W_])_+|_+(?![^\W_])")


def without_emphasis(markdown: str) -> str:
    return _EMPHASIS.sub("", markdown)


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


ROW_CHARS = 300  # a table row longer than this is answered cell by cell ("Lead SRE (L4) — Leadership: …")


def _table_sentences(lines: list[str]) -> list[str]:
    """One sentence per table row, each value paired with its column header, so that
    "Storage | 10 GB | 100 GB | 1 TB" still says which plan gets 1 TB."""
    rows = [line for line in lines if line.strip()]
    if len(rows) < 3 or not re.fullmatch(r"[|:\-\s]+", rows[1]):
        return [" — ".join(_cells(row)) for row in rows]
    header = _cells(rows[0])
    out = []
    for row in rows[2:]:
        cells = _cells(row)
        if sum(map(len, cells)) > ROW_CHARS:  # a wide row of prose: one sentence per cell
            label = cells[0].strip("*_ ")
            out.extend(f"{header[n]} — {label}: {value}" if label else f"{header[n]}: {value}"
                       for n, value in enumerate(cells[1:len(header)], 1) if value)
        elif header[0]:
            out.append("; ".join(f"{h}: {v}" for h, v in zip(header, cells) if v))
        else:  # first column names the row: "Storage — Starter: 10 GB; Team: 100 GB; …"
            out.append(f"{cells[0]} — " + "; ".join(f"{h}: {v}" for h, v in zip(header[1:], cells[1:]) if v))
    return out


_ORDERED = re.compile(r"\s*(\d+)[.)]\s")


def item_starts(lines: list[str]) -> list[bool]:
    """Which lines of a block open a list item or a table row. A number that hard wrapping put
    at a line's start ("…manager of the Platform team in\n2023. She owns…") opens none: as in
    CommonMark, only "1." starts a list inside a paragraph."""
    out, in_list = [], False
    for line in lines:
        ordered = _ORDERED.match(line)
        starts = bool(LIST_ITEM.match(line)) and (in_list or not out or not ordered or ordered[1] == "1")
        out.append(starts)
        in_list = in_list or starts
    return out


def item_lines(lines: list[str]) -> list[list[str]]:
    """Lines grouped into list items and table rows, each with the lines it wraps onto
    (hard-wrapped Markdown); lines before the first item form one group."""
    items: list[list[str]] = []
    for line, starts in zip(lines, item_starts(lines)):
        if items and not starts:
            items[-1].append(line)
        else:
            items.append([line])
    return items


def _items(lines: list[str]) -> list[str]:
    return [" ".join(line.strip() for line in item) for item in item_lines(lines)]


def _table_lines(lines: list[str]) -> list[str]:
    """The lines of a block that are table rows (two or more of them make a table)."""
    return [line for line in lines if line.lstrip().startswith("|")]


@lru_cache(maxsize=4096)
def lists(text: str) -> dict[str, tuple[str, ...]]:
    """Each lead-in sentence ending in ":" (as `sentences` gives it) -> every item of the list
    right after it, short ones too ("- Grief"), which `sentences` leaves out."""
    out, previous = {}, ""
    for block, code in _blocks(text):
        lines = block.splitlines()
        if lines and not code and any(item_starts(lines)):
            table = _table_lines(lines)
            items = _table_sentences(table) if len(table) >= 2 else _items(lines)  # a table's rows, not its rule
            if LIST_ITEM.match(lines[0]):
                if previous.endswith(":"):
                    out[previous] = tuple(items)
            elif items[0].endswith(":"):  # the lead-in opens the list's own block
                out[items[0]] = tuple(items[1:])
            if len(table) < 2:
                out.update(_nested(item_lines(lines)))
        found = sentences(block)
        previous = found[-1] if found else ""
    return out


def indent(line: str) -> int:
    """How far a line is indented: how deep a list item is nested."""
    return len(line) - len(line.lstrip())


def _nested(groups: list[list[str]]) -> dict[str, tuple[str, ...]]:
    """An item that introduces the items indented below it -> those items ("- Three to five
    weeks in advance for:" / "  - Conference events that cost more than $2,500"). The ":" may
    be missing ("- Ten days to two weeks" / "  - Conference events that cost less than $2500");
    an item that is a whole sentence of its own ("1. Send an email to … within 1 hour.") only
    has details below it."""
    out = {}
    for at, group in enumerate(groups):
        text = " ".join(line.strip() for line in group)
        if LIST_ITEM.match(group[0]) and not re.search(r"[.!?;,][\"”’')\]*_]*$", text):
            children = list(takewhile(lambda g: indent(g[0]) > indent(group[0]), groups[at + 1:]))
            if children:
                out[text] = tuple(" ".join(line.strip() for line in child) for child in children)
    return out


@lru_cache(maxsize=4096)
def lead_ins(text: str) -> dict[str, str]:
    """Each list item (as `sentences` gives it) -> the sentence that leads in to its list, the
    nearest one for an item of a nested list."""
    return {item: lead for lead, items in lists(text).items() for item in items}


@lru_cache(maxsize=4096)
def opening_items(text: str) -> frozenset[str]:
    """The items (as `sentences` gives them) of a list that opens the text with no sentence
    leading in to it: under "## What is not reimbursed" the heading is what says what they are."""
    blocks = _blocks(text)
    if not blocks or blocks[0][1]:
        return frozenset()
    lines = blocks[0][0].splitlines()
    if not LIST_ITEM.match(lines[0]) or len(_table_lines(lines)) >= 2:
        return frozenset()
    return frozenset(_items(lines))


@lru_cache(maxsize=4096)
def table_sentences(text: str) -> frozenset[str]:
    """The sentences `sentences` makes of the text's tables: rows, or the cells of wide rows."""
    tables = (_table_lines(block.splitlines()) for block, code in _blocks(text) if not code)
    return frozenset(sentence for table in tables if len(table) >= 2 for sentence in _table_sentences(table))


FENCE = re.compile(r"^\s*(`{3,}|~{3,})")  # a code fence, and the run of backticks or tildes that closes it


SPLITTER_VERSION = 2  # bump when `sentences` cuts a text differently: the index stores each sentence's vector


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks; a fenced code block stays whole, blank lines and all."""
    blocks, current, in_fence = [], [], False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _blocks(text: str) -> list[tuple[str, bool]]:
    """Paragraphs, with each fenced code block apart from the text it follows without a blank
    line ("Run:\n```\nnpm ci\n```"): (block, is code). A fence left open (a chunk cut inside
    the code) runs to the end."""
    out = []
    for block in paragraphs(text):
        current, in_fence = [], False
        for line in block.splitlines():
            opens = FENCE.match(line) and not in_fence
            if opens and current:
                out.append(("\n".join(current), False))
                current = []
            current.append(line)
            if FENCE.match(line):
                in_fence = not in_fence
                if not in_fence:  # closed
                    out.append(("\n".join(current), True))
                    current = []
        if current:
            out.append(("\n".join(current), in_fence))
    return out


def code_of(block: str) -> str:
    """A fenced code block's code: its lines without the fences and the language tag, and
    without the indentation they share."""
    lines = [line for line in block.strip("\n").splitlines() if not FENCE.match(line)]
    shared = min((indent(line) for line in lines if line.strip()), default=0)
    return "\n".join(line[shared:].rstrip() for line in lines).strip("\n")


def is_code(sentence: str) -> bool:
    """A fenced code block, which `sentences` gives as one sentence with its lines as written."""
    return bool(FENCE.match(sentence))


@lru_cache(maxsize=4096)
def sentences(text: str) -> tuple[str, ...]:
    """Sentences of a markdown body; list items and table rows count as sentences of their own,
    and so does a fenced code block, whose lines stay lines (a command is not prose)."""
    out = []
    for block, code in _blocks(text):
        if code:
            if words(code_of(block)):  # not an empty fence
                out.append(block.strip())
            continue
        lines = block.splitlines()
        table = _table_lines(lines)
        if len(table) >= 2:
            prose = [line for line in lines if line not in table]
            out.extend(sentences("\n".join(prose)) if prose else [])
            out.extend(_table_sentences(table))
            continue
        if any(item_starts(lines)):
            out.extend(_items(lines))
            continue
        out.extend(part.strip() for part in _SENTENCE_END.split(" ".join(l.strip() for l in lines)))
    # A line of one or two words says nothing, unless it leads in to a code block ("Grant access:").
    return tuple(s for at, s in enumerate(out)
                 if is_code(s) or len(words(s)) >= 3 and not re.fullmatch(r"[|\s:-]+", s)
                 or words(s) and s.endswith(":") and at + 1 < len(out) and is_code(out[at + 1]))


def own_heading(section: str) -> str:
    """The chunk's own heading: the last of its heading path ("Travel comp time › Using it" -> "Using it")."""
    return section.split("›")[-1].strip()
