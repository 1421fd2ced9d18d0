"""The labeled sentences `citebot tune` fits the sentence scorer on, built from the question
sets in eval/ by one command:

    python -m rag_graph.tools.sentence_labels --out .citebot/labels --db DIR

Every question is asked through the real flow (`Engine.run`, with its thread history); the
offline writer's pool for the context the flow assembled (the question and parts the flow gave
the writer) is measured (`answer.choice.measure`) and each sentence labeled with the share of
the question's keywords its text holds (`citebot eval`'s matching). One `<set>.sentences.jsonl`
per set, reused while the set file is unchanged (`--force` rebuilds).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..answer.choice import measured_pool
from .evaluation import contains
from .labels import build_sets, read_labeled, record_set, set_options


def label_case(engine, case) -> dict:
    state = engine.run(case.question, case.history)
    question = state.get("question")  # as the flow read it: the asker's words apart from what was borrowed
    context, parts = state.get("context") or [], state.get("sub_questions") or []
    pool = []
    if context and engine._offline is not None and question is not None and question.own:
        pool = [{"text": c.text, "chunk_id": c.chunk_id, **m,
                 "label": round(sum(contains(c.text, k) for k in case.keywords) / len(case.keywords), 4)
                 if case.answerable and case.keywords else 0.0}
                for c, m in zip(*measured_pool(engine._offline, question, context))]
    output = state.get("final_output") or {}
    return {"question": case.question, "category": case.category, "split": case.split,
            "answerable": case.answerable, "keywords": case.keywords, "parts": len(parts),
            "status": output.get("status"), "answer": output.get("answer", ""), "pool": pool}


def build_set(name: str, db: Path, out: Path, force: bool) -> Path | None:
    return record_set(name, db, out, force, ".sentences.jsonl", label_case)


def load(out: Path, names=None) -> list[dict]:
    """The labeled questions (with their writer's pool) of every set built into `out`."""
    return read_labeled(out, ".sentences.jsonl", names)


def main(argv: list[str] | None = None) -> int:
    build_sets(set_options(__doc__.splitlines()[0]).parse_args(argv), build_set)
    return 0


if __name__ == "__main__":
    sys.exit(main())
