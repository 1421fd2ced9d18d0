"""How the grounding check treats sentences a chat model might write:
`python -m rag_graph.tools.grounding_eval --db-root DIR [--set eval/grounding/sentences.jsonl]
[--tune NAME=VALUE]`. eval/grounding/held_out.jsonl (other corpora) and eval/grounding/fresh.jsonl
(other sections, written before it was first scored) set no threshold.

Each labelled sentence (`kind`: paraphrase, wrong_number, flipped_negation, swapped_name, injected, pleasantry)
is checked against the context the flow selects for its question (the answer's evidence, as a
chat model would receive it, uncited). A paraphrase should be kept; everything else dropped.
Prints the share of each kind kept and every sentence judged against its label. `--db-root` holds
one index per corpus (`bundled`, `37signals`, … as `rag_graph.tools.eval_all` names them), built
from the corpus on first use.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from ..answer.support import SupportChecker
from ..config import Settings
from ..engine import Engine
from ..tuning import DEFAULT, Tuning, tuned
from .eval_all import CORPORA, ROOT

SHOULD_KEEP = ("paraphrase",)


def context_of(engine: Engine, question: str) -> list[dict]:
    """The chunks the flow would hand a writer for this question."""
    state = engine.run(question)
    return state.get("context") or state.get("ranked_chunks", [])[:DEFAULT.context_size]


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def engines_for(rows: list[dict], db_root: Path, engines: dict | None = None) -> dict[str, Engine]:
    """One engine per corpus the rows name, its index in `db_root` (built on first use)."""
    engines = {} if engines is None else engines
    for corpus in sorted({row["corpus"] for row in rows} - set(engines)):
        engine = Engine(Settings(corpus=CORPORA[corpus], db=str(db_root / corpus)))
        if not engine.ready:
            engine.refresh()
        engines[corpus] = engine
    return engines


def judge(rows: list[dict], engines: dict[str, Engine], tuning: Tuning = DEFAULT, model="shipped") -> list[dict]:
    contexts: dict[tuple[str, str], SupportChecker] = {}
    out = []
    for row in rows:
        key = (row["corpus"], row["question"])
        if key not in contexts:
            engine = engines[row["corpus"]]
            contexts[key] = SupportChecker(context_of(engine, row["question"]), engine.embedder, tuning, model)
        verdict = contexts[key].check(row["sentence"])
        out.append({**row, "kept": verdict.kept, "reason": verdict.reason, "chunk_id": verdict.chunk_id,
                    "closeness": round(verdict.closeness, 3)})
    return out


def summary(judged: list[dict]) -> dict:
    by_kind = defaultdict(list)
    for row in judged:
        by_kind[row["kind"]].append(row["kept"])
    kept = [k for row in judged if row["kind"] in SHOULD_KEEP for k in [row["kept"]]]
    wrong = [not row["kept"] for row in judged if row["kind"] not in SHOULD_KEEP]
    return {"kinds": {kind: {"sentences": len(v), "kept": sum(v)} for kind, v in sorted(by_kind.items())},
            "paraphrases_kept": round(sum(kept) / max(1, len(kept)), 3),
            "wrong_dropped": round(sum(wrong) / max(1, len(wrong)), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default=str(ROOT / "eval" / "grounding" / "sentences.jsonl"))
    parser.add_argument("--db-root", default=".citebot/eval-indexes", help="one index folder per corpus")
    parser.add_argument("--json", help="write every judged sentence here")
    parser.add_argument("--tune", action="append", default=[], metavar="NAME=VALUE",
                        help="try another value of a field of rag_graph/tuning.py (written_semantic_support=0.65)")
    parser.add_argument("--rules", action="store_true", help="the rules alone decide (not the shipped learned decision)")
    args = parser.parse_args(argv)
    rows = load(Path(args.set))
    engines = engines_for(rows, Path(args.db_root))
    started = time.perf_counter()
    judged = judge(rows, engines, tuned(args.tune), None if args.rules else "shipped")
    for row in judged:
        if row["kept"] != (row["kind"] in SHOULD_KEEP):
            print(f"{'KEPT' if row['kept'] else 'DROPPED'} {row['kind']}: {row['sentence']}  "
                  f"({row['reason']}, closeness {row['closeness']})")
    result = summary(judged)
    print(json.dumps(result, indent=1))
    print(f"{len(judged)} sentences in {time.perf_counter() - started:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(judged, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
