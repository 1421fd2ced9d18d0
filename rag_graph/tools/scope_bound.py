"""How much do hidden documents move the answers of people who may not read them?

    python -m rag_graph.tools.scope_bound --set 18f-handbook --out DIR [--share 0.2]

A document with an audience must leave other people's answers as if it were not indexed:
every read of a question is filtered inside the index, and the keyword leg ranks with the
scope's own BM25 statistics (retrieval/scoped_text.py). This tool checks the whole on a real
corpus: it copies the set's corpus twice, marks every `1/share`-th markdown document restricted
in one copy (a `name.md.yml` sidecar with an audience nobody holds) and deletes those documents
from the other, asks every question of the set as someone without that audience in both, and
counts the answers, citations and top-5 chunk lists that differ. Any difference is the hidden
documents at work (before scoped_text.py, on 18F with 50 of 246 pages hidden: 1 answer and 4 of
86 top-5 lists).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from .eval_all import CORPORA, ROOT, SETS

AUDIENCE = "scope-bound-probe"  # a group no question holds
TOP = 5


def prepare(corpus: Path, folder: Path, every: int) -> tuple[Path, Path, list[str]]:
    """Two copies of `corpus`: one with every `every`-th markdown document restricted, one without them."""
    hidden, removed = folder / "hidden", folder / "removed"
    for copy in (hidden, removed):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(corpus, copy)
    chosen = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.md"))[::every]
    for relative in chosen:
        sidecar = hidden / f"{relative}.yml"
        meta = yaml.safe_load(sidecar.read_text()) if sidecar.is_file() else {}
        sidecar.write_text(yaml.safe_dump({**(meta or {}), "audience": [AUDIENCE]}))
        (removed / relative).unlink()
        (removed / f"{relative}.yml").unlink(missing_ok=True)
    return hidden, removed, chosen


def run_eval(tests: Path, corpus: Path, db: Path, out: Path) -> dict:
    command = [sys.executable, "-m", "bot.cli", "eval", "--tests", str(tests), "--corpus", str(corpus),
               "--db", str(db), "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"citebot eval failed on {corpus}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return json.loads(out.read_text())


def differences(hidden: dict, removed: dict) -> dict:
    """Per question, which of answer / citations / top-5 chunks differ between the two runs."""
    def key(entry: dict) -> str:
        return entry["question"] + "".join(f" | {turn['content']}" for turn in entry.get("history") or [])

    theirs = {key(entry): entry for entry in removed["questions"]}
    counts = {"questions": 0, "answer": 0, "citations": 0, "top5": 0}
    changed = []
    for entry in hidden["questions"]:
        other = theirs.get(key(entry))
        if other is None:
            continue
        counts["questions"] += 1
        moved = [name for name, a, b in (
            ("answer", entry["final_output"]["answer"], other["final_output"]["answer"]),
            ("citations", _cited(entry), _cited(other)),
            ("top5", _top(entry), _top(other))) if a != b]
        for name in moved:
            counts[name] += 1
        if moved:
            changed.append({"question": entry["question"], "differs_in": moved})
    counts["mrr_hidden"], counts["mrr_removed"] = (report["summary"]["overall"].get("mrr") for report in (hidden, removed))
    return {"counts": counts, "changed": changed}


def _cited(entry: dict) -> list[str]:
    return [c.get("chunk_id") or c.get("url") for c in entry["final_output"].get("citations", [])]


def _top(entry: dict) -> list[str]:
    return [c["chunk_id"] if isinstance(c, dict) else c for c in entry.get("retrieved", [])[:TOP]]


def measure(corpus: Path, tests: Path, out: Path, every: int) -> dict:
    """Both runs and their differences, also written to `out/scope_bound.json`."""
    out.mkdir(parents=True, exist_ok=True)
    hidden, removed, chosen = prepare(corpus, out, every)
    result = differences(run_eval(tests, hidden, out / "db-hidden", out / "hidden.json"),
                         run_eval(tests, removed, out / "db-removed", out / "removed.json"))
    result["hidden_documents"] = len(chosen)
    (out / "scope_bound.json").write_text(json.dumps(result, indent=2))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", required=True, choices=sorted(SETS), help="question set (its corpus is used)")
    parser.add_argument("--out", required=True, help="folder for the two corpora, indexes and reports")
    parser.add_argument("--share", type=float, default=0.2, help="share of markdown documents hidden (default 0.2)")
    args = parser.parse_args(argv)
    if not 0 < args.share <= 0.5:
        print("error: --share must be above 0 and at most 0.5", file=sys.stderr)
        return 2
    corpus = CORPORA[SETS[args.set]]
    if not corpus.is_dir():
        print(f"error: no corpus for {args.set} at {corpus}", file=sys.stderr)
        return 2
    result = measure(corpus, ROOT / "eval" / f"{args.set}.jsonl", Path(args.out), max(1, round(1 / args.share)))
    counts = result["counts"]
    print(f"{args.set}: {result['hidden_documents']} documents hidden; of {counts['questions']} questions asked without "
          f"their audience, {counts['answer']} answers, {counts['citations']} citation lists and "
          f"{counts['top5']} top-{TOP} chunk lists differ from an index without them "
          f"(MRR {counts['mrr_hidden']} vs {counts['mrr_removed']})")
    for row in result["changed"]:
        print(f"  {', '.join(row['differs_in'])}: {row['question'][:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
