"""A sentence as the answer shows it: its words without markdown, a code block as code."""
from __future__ import annotations

import re

from ..language.markdown import FENCE, code_of, link_labels, without_emphasis

_ZERO_WIDTH = re.compile(r"[\u200b-\u200d\u2060\ufeff]")
# A code span keeps its backticks (a command or a path reads as code in Slack and Teams); the rest
# loses its emphasis marks. A lone backtick is no span.
_CODE_SPAN = re.compile(r"(`[^`\n]+`)|[^`]+|`")


def join_sentences(texts: list[str]) -> str:
    """An answer's sentences as one text: a space between two, none beside a code block's own lines."""
    out = ""
    for text in texts:
        out += text if not out or out.endswith("\n") or text.startswith("\n") else " " + text
    return out.strip("\n")


def clean_sentence(sentence: str) -> str:
    """A sentence as the answer shows it: its words without markup. A code block (alone, or
    after the sentence that leads in to it) is shown as code, line by line, on lines of its own."""
    lines = sentence.split("\n")
    fence = next((at for at, line in enumerate(lines) if FENCE.match(line)), len(lines))
    code = _ZERO_WIDTH.sub("", code_of("\n".join(lines[fence:])))
    if not code.strip():  # no code block ("```npm ci```" on one line is inline code)
        return _clean_prose(sentence)
    lead = "\n".join(lines[:fence]).strip()
    return (_clean_prose(lead) if lead else "") + f"\n```\n{code}\n```\n"


def _clean_prose(sentence: str) -> str:
    text = link_labels(sentence)
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", text)
    text = re.sub(r"^\[[ xX]\]\s+", "", text)  # a checklist's box ("- [ ] Publish the post")
    text = text.strip().strip("|").replace(" | ", " — ")
    text = re.sub(r"\\([\\`*_{}\[\]()#+.!|-])", r"\1", text)  # markdown's escapes: "\*Note:" is "*Note:"
    text = re.sub(r"```+[\w+#.-]*", "", text)  # triple backticks inline, language and all: "```bash npm ci ```" is "npm ci"
    text = _CODE_SPAN.sub(lambda m: m.group(1) or without_emphasis(m.group(0)), text)
    text = _ZERO_WIDTH.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"(?<=[^\W\d_]) : ", ": ", text)  # a definition list's "Term\n: definition"
    # A list item that runs on into the next ("Jury leave, and") ends where it stands.
    text = re.sub(r"(?:[,;]?\s+(?:and|or))?\s*[,;]+$|[,;]?\s+(?:and|or)$", "", text)
    if text and not re.search(r"[.!?:][\"”’')\]]*$", text):  # "…not “performing work.”" has its end
        text += "."
    return text
