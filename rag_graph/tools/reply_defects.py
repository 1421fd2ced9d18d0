"""Defects a reader sees in the reply text, counted per set and half over eval report folders:
`python -m rag_graph.tools.reply_defects OLD [NEW]` (folders of `citebot eval` reports).

Only answered replies are read, and only what the user is shown: `final_output.answer` and its
citations, with the cited chunks' text as the report's `retrieved` list holds it.

- **dup_link**: the Sources list shows one section link twice (two citations with the same
  title › section and link): two chunks of one section cited apart.
- **bare_item**: a list or checklist item of a cited chunk shown as a sentence of its own without
  the line that introduces it: the sentence ending in ":" that leads in to the list, or the
  section heading when the list opens the section. Out of its list "Upgrades to business or
  first class, unless approved in advance by the CFO." reads as the opposite of "What is not
  reimbursed". **bare_short** counts those of fewer than `SHORT` words (a label, a checkbox:
  "Two YubiKeys registered.").
- **near_dup**: two sentences of one reply that say nearly the same (the share of the words
  they hold in common, Jaccard over content terms, at least `NEAR`): one passage of two versions
  or pages of a document.

`--examples` prints the replies behind the counts, of the dev halves only: the test halves
are judged by the figures alone, and the sets kept aside are never read.
"""
from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from ..answer.clean import clean_sentence
from ..language.markdown import LIST_ITEM, item_lines, lead_ins, own_heading, paragraphs, sentences
from ..language.words import term_set
from .eval_all import ASIDE

KINDS = ("dup_link", "bare_item", "bare_short", "near_dup")
SHORT = 8  # words: a label or a checkbox, not a sentence
FRAGMENT = 15  # words: an item under this is a clause or a label that leans on its list's lead-in
# An item that names what it defines ("retryAfter `boolean` (optional) - It enables…", "Credit
# hours: Yes…") carries its own subject: it reads alone.
_DEFINES = re.compile(r"^\W*(?:\S+\s+){0,5}?\S*(?:\s[-—–]\s|:\s)")
NEAR = 0.6  # Jaccard of content terms: "npm's built-in configuration file" / "npm builtin config file"
_LABEL = re.compile(r"^[^:\n]{1,80}:\s+")  # "Onboarding: …", the subject the writer puts before a sentence


def duplicate_links(output: dict) -> int:
    """How many Sources lines repeat one already shown."""
    seen = Counter((c.get("title"), c.get("section"), c.get("url")) for c in output.get("citations") or [])
    return sum(n - 1 for n in seen.values())


def _key(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", clean_sentence(text).lower()))


def _items(body: str, heading: str) -> list[tuple[str, str]]:
    """Each list item of a chunk's body with the line that introduces it ("" when none does):
    its lead-in sentence, or the heading when the list opens the body."""
    led = lead_ins(body)
    blocks = paragraphs(body)
    out = []
    for at, block in enumerate(blocks):
        for group in item_lines(block.splitlines()):
            if not LIST_ITEM.match(group[0]) or group[0].lstrip().startswith("|"):
                continue
            item = " ".join(line.strip() for line in group)
            lead = led.get(item, "")
            if not lead and at == 0:
                lead = heading
            out.append((item, lead))
    return out


def bare_items(output: dict, chunks: dict[str, str]) -> list[str]:
    """The list items the reply shows as a sentence of their own, without what introduces them:
    short ones (under `FRAGMENT` words) that do not name what they define."""
    answer = _key(output.get("answer") or "")
    said = sentences(output.get("answer") or "")
    alone = {_key(s) for s in said} | {_key(_LABEL.sub("", s)) for s in said}
    found = []
    for citation in output.get("citations") or []:
        text = chunks.get(citation.get("chunk_id"), "")
        head, _, body = text.partition("\n\n")
        for item, lead in _items(body, own_heading(head.splitlines()[0] if head else "")):  # not its keywords line
            shown = _key(item)
            if (len(shown.split()) < 2 or len(shown.split()) >= FRAGMENT or shown not in alone
                    or _DEFINES.match(clean_sentence(item))):
                continue
            if lead and _key(lead) and _key(lead) in answer:
                continue
            if lead:
                found.append(clean_sentence(item))
    return list(dict.fromkeys(found))


def near_duplicates(output: dict) -> list[tuple[str, str]]:
    """Pairs of sentences of the reply that say nearly the same."""
    said = [(s, term_set(s)) for s in sentences(output.get("answer") or "")]
    pairs = []
    for at, (one, a) in enumerate(said):
        for other, b in said[at + 1:]:
            if len(a) >= 3 and len(b) >= 3 and len(a & b) / len(a | b) >= NEAR:
                pairs.append((one, other))
    return pairs


def defects(entry: dict) -> dict[str, int]:
    """One report question's defects, by kind (all 0 unless it was answered)."""
    output = entry["final_output"]
    if output.get("status") != "answered":
        return dict.fromkeys(KINDS, 0)
    chunks = {c["chunk_id"]: c["text"] for c in entry.get("retrieved") or []}
    bare = bare_items(output, chunks)
    return {"dup_link": int(duplicate_links(output) > 0), "bare_item": int(bool(bare)),
            "bare_short": int(any(len(item.split()) < SHORT for item in bare)),
            "near_dup": int(bool(near_duplicates(output)))}


def count(folder: Path) -> dict[tuple[str, str], Counter]:
    """(set, half) -> answered replies and the replies with each defect."""
    out: dict[tuple[str, str], Counter] = {}
    for path in sorted(folder.glob("*.json")):
        report = json.loads(path.read_text())
        if "questions" not in report:
            continue
        for entry in report["questions"]:
            tally = out.setdefault((path.stem, entry.get("split") or "all"), Counter())
            tally["answered"] += entry["final_output"].get("status") == "answered"
            tally.update(defects(entry))
    return out


def table(old: dict, new: dict | None = None) -> str:
    """Markdown: per set and half, answered replies and each defect (OLD → NEW when both)."""
    rows = ["| set | half | answered | " + " | ".join(KINDS) + " |", "|---|---|---|" + "---|" * len(KINDS)]
    total_old, total_new = Counter(), Counter()

    def cell(key, kind):
        o = old.get(key, Counter())[kind]
        if new is None:
            return str(o)
        n = new.get(key, Counter())[kind]
        return str(n) if n == o else f"**{o} → {n}**"
    for key in sorted(set(new) if new is not None else set(old)):  # a run of some sets: those
        total_old.update(old.get(key, Counter()))
        total_new.update((new or {}).get(key, Counter()))
        aside = " (aside)" if key[0] in ASIDE else ""
        rows.append(f"| {key[0]}{aside} | {key[1]} | " + " | ".join(cell(key, k) for k in ("answered", *KINDS)) + " |")
    totals = {("all", ""): total_old}, {("all", ""): total_new}
    old, new = totals[0], (totals[1] if new is not None else None)
    rows.append("| **all** | | " + " | ".join(cell(("all", ""), k) for k in ("answered", *KINDS)) + " |")
    return "\n".join(rows)


def examples(folder: Path) -> str:
    """The dev halves' defective replies, to read (never a test half, never a set kept aside)."""
    lines = []
    for path in sorted(folder.glob("*.json")):
        if path.stem in ASIDE:
            continue
        report = json.loads(path.read_text())
        for entry in report.get("questions", []):
            if entry.get("split") != "dev" or entry["final_output"].get("status") != "answered":
                continue
            output = entry["final_output"]
            chunks = {c["chunk_id"]: c["text"] for c in entry.get("retrieved") or []}
            found = ([f"dup_link x{duplicate_links(output)}"] if duplicate_links(output) else []) \
                + [f"bare_item: {item}" for item in bare_items(output, chunks)] \
                + [f"near_dup: {a} / {b}" for a, b in near_duplicates(output)]
            if found:
                lines.append(f"{path.stem}: {entry['question']}\n  A: {output['answer']}\n  " + "\n  ".join(found))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_graph.tools.reply_defects", description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?")
    parser.add_argument("--examples", action="store_true", help="print the dev halves' defective replies")
    args = parser.parse_args(argv)
    if args.examples:
        print(examples(args.new or args.old))
        return 0
    print(table(count(args.old), count(args.new) if args.new else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
