"""The syntaxes of docs sites, rendered as a reader sees them: reference links, 11ty/Liquid
shortcodes, setext headings, admonitions, GitHub alerts, footnotes, HTML and MDX."""
from __future__ import annotations

import re
from html import unescape
from typing import Callable

from ..authoring import INTERNAL

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
        if INTERNAL in (match["title"] or ""):
            return ""  # an internal box: its title carries the marker (authoring.py)
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
    body = _SUMMARY.sub(lambda m: f"\n\n**{inline_text(m.group(1))}**\n\n", body)
    body = _IMAGE.sub(lambda m: m.group(1) or "", _AUTOLINK.sub(r"\1", body))
    body = _LINE_BREAK.sub(" ", body)
    body = _LIST_ITEM_TAG.sub("- ", body)
    body = _characters(_HTML_TAG.sub("", body))
    return re.sub(r"\n[ \t]+\n", "\n\n", body)  # the lines a removed tag stood on


def inline_text(html: str) -> str:
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
