"""Leave one corpus out, end to end: for each corpus, fit the models on the other corpora
(`citebot tune --exclude`) and run `citebot eval` on that corpus's sets with them (today: the thread reader), so every
figure is of documents the fit never saw. `--hand` runs the same sets with the hand weights
instead (the "before" column). Compare two runs with `python -m rag_graph.tools.compare_reports`.

    python -m rag_graph.tools.loco --labels .citebot/labels --db DIR --out DIR [--hand] [--sets DIR]

`--sets` names a folder of extra sets per question set (`<set>.jsonl`, such as the
new-subject-in-a-thread sets `rag_graph.tools.labels --new-topic-sets` writes), run beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from ..scoring import followup
from ..scoring.learned import MODEL_ENV
from . import tune
from .eval_all import CORPORA, ROOT, SETS


def fold_models(corpus: str, labels: Path, folder: Path, hand: bool) -> Path:
    """The models the held-out run of `corpus` reads: fitted without it, or the hand weights."""
    folder.mkdir(parents=True, exist_ok=True)
    if hand:
        (folder / followup.MODEL_FILE.name).write_text(json.dumps(tune.hand_gate().as_dict()))
        return folder
    args = argparse.Namespace(labels=str(labels), out=str(folder), check=False, exclude=[corpus])
    if tune.run(args) != 0:
        raise SystemExit(f"cannot fit the models without {corpus}")
    return folder


def evaluate(tests: Path, corpus: str, db: Path, out: Path, models: Path) -> str:
    command = [sys.executable, "-m", "bot.cli", "eval", "--tests", str(tests), "--corpus", str(CORPORA[corpus]),
               "--db", str(db / corpus), "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, MODEL_ENV: str(models)})
    lines = (done.stdout + done.stderr).strip().splitlines()
    return "\n".join(lines[-4:]) if done.returncode else next((line for line in lines if line.startswith("OVERALL")), "")


def threads_of(tests: Path, target: Path) -> Path:
    """A copy of the set with only its questions that come with thread history."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = [line for line in tests.read_text().splitlines() if line.strip() and json.loads(line).get("history")]
    target.write_text("\n".join(lines) + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", default=".citebot/labels")
    parser.add_argument("--db", default=".citebot/eval-indexes", help="folder for one index per corpus")
    parser.add_argument("--out", required=True, help="folder for the reports and each fold's models")
    parser.add_argument("--hand", action="store_true", help="the hand weights in every fold (the before column)")
    parser.add_argument("--sets", help="folder of extra <set>.jsonl files to run beside the sets")
    parser.add_argument("--only", nargs="*", help="corpora (default: all)")
    parser.add_argument("--threads-only", action="store_true",
                        help="only the questions asked in a thread (the others never meet the thread reader)")
    args = parser.parse_args(argv)
    out, db = Path(args.out), Path(args.db)
    for corpus in sorted(set(SETS.values())):
        if (args.only and corpus not in args.only) or not CORPORA[corpus].is_dir():
            continue
        models = fold_models(corpus, Path(args.labels), out / "models" / corpus, args.hand)
        for name in (n for n, c in SETS.items() if c == corpus):
            tests = ROOT / "eval" / f"{name}.jsonl"
            if args.threads_only:
                tests = threads_of(tests, out / "sets" / f"{name}.jsonl")
            runs = [(tests, out / f"{name}.json")]
            extra = Path(args.sets) / f"{name}.jsonl" if args.sets else None
            if extra is not None and extra.exists():
                runs.append((extra, out / f"{name}.new-topics.json"))
            for tests, report in runs:
                print(f"== {report.stem} ({corpus} held out): {evaluate(tests, corpus, db, report, models)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
