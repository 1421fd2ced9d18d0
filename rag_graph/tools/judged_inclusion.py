"""Judged labels for the writer's "one more sentence?" decision (answer/extractive/inclusion.py):

    python -m rag_graph.tools.judged_inclusion --out .citebot/labels   # add the rows to judge

Keyword labels ("does the answer with this sentence hold a keyword it lacked?") cannot tell the
sentence that answers from its sibling: a list's other item, the other group's rule, the
section's next rule hold the same words. A person can, from the question's reference answer.
`candidates` reads what `tune_inclusion` recorded (the flow's answer as picked and the pool
sentences that may join it) and writes, for every DEV-half question (never a test half, never a
set kept aside), the sentences the answer already quotes and the three the shipped model gives
the best odds, into JUDGED: every row already there is kept with its judgment, new rows are
added with "judgment": null. Each row is judged once, by reading the question, its thread and
its reference answer: ANSWERS / CONTEXT / DISTRACTOR (the rule is the file's first line).
`python -m rag_graph.tools.tune_inclusion --separate` measures what tells them apart."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from ..answer.extractive.inclusion import shipped
from .eval_all import ROOT, SETS
from .labels import build_sets, read_labeled, set_options

JUDGED = ROOT / "eval" / "judged" / "inclusion-dev.jsonl"
SUFFIX = ".inclusion.jsonl"
OFFERED = 3  # pool sentences per question to judge: the shipped model's best odds
ANSWERS, CONTEXT, DISTRACTOR = "answers", "context", "distractor"
RULE = ("answers: the sentence states all or part of what the reference answer says in reply to THIS question "
        "(its thread read), in any words, or one step of it; context: on the subject and case asked about, true, "
        "but says none of it - it qualifies the answer (who it is for, a condition, how it is counted), defines "
        "the subject or points to where the details are; distractor: anything else a reply would show - another "
        "case, group, item, option, level or subject than the one asked about, a value of the kind asked for that "
        "belongs to something else, or the section's rule on another point. Judged by one annotator (judge40) from "
        "question, thread and reference answer only, before any model score or keyword label was seen; dev halves only")


def key(set_name: str, question: str, text: str) -> tuple[str, str, str]:
    return set_name, question, text


def read_judged(path: Path = JUDGED) -> dict[tuple[str, str, str], str]:
    """Judgment per (set, question, sentence text); rows not yet judged are left out."""
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return read_judged_rows([row for row in rows if "set" in row], path)


def read_judged_rows(rows: list[dict], path: Path) -> dict[tuple[str, str, str], str]:
    out = {}
    for row in rows:
        if not row.get("judgment"):
            continue
        if row["judgment"] not in (ANSWERS, CONTEXT, DISTRACTOR):
            raise ValueError(f"{path}: judgment {row['judgment']!r} of {row['question']!r} is none of "
                             f"{ANSWERS}, {CONTEXT}, {DISTRACTOR}")
        out[key(row["set"], row["question"], row["text"])] = row["judgment"]
    return out


def odds(additions: list[dict]) -> list[float]:
    model = shipped()
    return [1 / (1 + math.exp(-s)) for s in model.scores([a["row"] for a in additions])] if additions else []


def rows_to_judge(records: list[dict]) -> list[dict]:
    """Per dev-half answerable question: the sentences its answer quotes, and the OFFERED pool
    sentences the shipped model gives the best odds of joining."""
    rows = []
    for record in records:
        if record["split"] != "dev" or record["set"] not in SETS or not record.get("reference"):
            continue
        common = {"set": record["set"], "question": record["question"], "thread": record.get("history", []),
                  "reference": record["reference"]}
        for sentence in record.get("picked", []):
            rows.append({**common, "role": "quoted", "text": sentence["text"], "section": sentence["section"]})
        chances = odds(record["additions"])
        best = sorted(range(len(chances)), key=lambda n: -chances[n])[:OFFERED]
        for n in best:
            addition = record["additions"][n]
            rows.append({**common, "role": "offered", "text": addition["text"], "section": addition["section"]})
    seen, unique = set(), []
    for row in rows:
        if key(row["set"], row["question"], row["text"]) not in seen:
            seen.add(key(row["set"], row["question"], row["text"]))
            unique.append(row)
    return unique


def write_candidates(records: list[dict], path: Path = JUDGED) -> tuple[int, int]:
    """The rows to judge added to `path`; every row already there stays, with its judgment (a row
    the shipped model no longer offers keeps telling the fit what a person saw). (rows, judged)."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    rows = [json.loads(line) for line in lines if line.strip()]
    rows = [row for row in rows if "set" in row]
    seen = {key(row["set"], row["question"], row["text"]) for row in rows}
    rows += [{**row, "judgment": None} for row in rows_to_judge(records)
             if key(row["set"], row["question"], row["text"]) not in seen]
    read_judged_rows(rows, path)  # a judgment of no known kind is refused before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"rule": RULE}), *(json.dumps(row, ensure_ascii=False) for row in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(rows), sum(1 for row in rows if row["judgment"])


def judged_options(description: str, check: str) -> argparse.ArgumentParser:
    """The options of a tool that records the sets and measures them against the judged sentences
    (tune_inclusion, lead_choice, answer_place): the labeling options, `--judged` and `--check`."""
    parser = set_options(description)
    parser.add_argument("--judged", default=str(JUDGED), help="the judged sentences")
    parser.add_argument("--check", action="store_true", help=check)
    return parser


def recorded(args: argparse.Namespace, suffix: str, build, record: bool = True) -> tuple[list[dict], dict]:
    """Record the sets with `build` (unless `--check`, or `record` is false), then read back their
    records and the judgments."""
    if record and not args.check:
        build_sets(args, build)
    return read_labeled(Path(args.out), suffix, args.only), read_judged(Path(args.judged))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".citebot/labels", help="where tune_inclusion recorded the sets")
    parser.add_argument("--judged", default=str(JUDGED), help="the judged labels file")
    args = parser.parse_args(argv)
    records = read_labeled(Path(args.out), SUFFIX)
    if not records:
        print(f"nothing recorded in {args.out}: run python -m rag_graph.tools.tune_inclusion first", file=sys.stderr)
        return 1
    try:
        rows, judged = write_candidates(records, Path(args.judged))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{args.judged}: {rows} rows, {judged} judged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
