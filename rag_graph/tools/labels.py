"""The labeled set `citebot tune` learns from, built from the question sets in eval/ by one
command: `python -m rag_graph.tools.labels --out .citebot/labels --db DIR`.

Every question is asked through the real flow (`Engine.run`, with its thread history), and
the candidates its ranking step sees are measured (`scoring.features.signals`) and labeled:
a candidate's `label` is the share of the question's keywords its text holds, matched as
`citebot eval` matches them (case-insensitive substrings). Unanswerable questions keep their
candidates unlabeled (all 0) and `answerable: false`. One JSONL file per set, reused while the
set file and the flow's code are unchanged (`--force` rebuilds): measuring is the slow part.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path

from ..config import Settings
from ..scoring import followup
from ..scoring.features import signals
from ..scoring.relevance import by_relevance
from .eval_all import CORPORA, ROOT, SETS
from .evaluation import answer_recall, contains, load_cases

FORMAT = 2  # of the labeled files: a cached file of another format is rebuilt (2: turns carry their split)
HEAD = 20  # candidates measured per question, best by relevance first (late interaction re-orders the first 10)


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def label_case(engine, case, vocabulary) -> dict:
    """One question's record: its candidates' signals and labels, and how the flow answered.
    The engine ranks HEAD chunks: those late interaction re-orders (put back in order of
    relevance, the order it receives them in) and the next ones by relevance."""
    state = engine.run(case.question, case.history)
    query = state.get("retrieval_query") or case.question
    ranked, reordered = state.get("ranked_chunks") or [], engine.deps.tuning.late_candidates
    head = by_relevance(ranked[:reordered]) + ranked[reordered:HEAD]
    measured = signals(query, head, vocabulary, engine.embedder) if head else []
    output = state.get("final_output") or {}
    labels = [sum(contains(c["text"], k) for k in case.keywords) / len(case.keywords)
              if case.answerable and case.keywords else 0.0 for c in head]
    return {
        "question": case.question, "category": case.category, "split": case.split,
        "answerable": case.answerable, "keywords": case.keywords, "history_turns": len(case.history),
        "query": query, "normalized": state.get("normalized_query") or case.question,
        "status": output.get("status"), "answer": output.get("answer", ""),
        "answer_recall": answer_recall(output.get("answer", ""), case.keywords)
        if case.answerable and case.keywords else None,
        "candidates": [{"chunk_id": c["chunk_id"], "text": c["text"], "label": round(label, 4), **m}
                       for c, label, m in zip(head, labels, measured)],
    }


NEW_TOPIC = "new_topic"  # the category of a turn that starts a new subject inside a thread
NEW_TOPICS = 2  # stand-alone questions asked after another thread, per written follow-up (the negatives)


def new_topic_cases(cases: list) -> list:
    """Stand-alone answerable questions of the set, each asked after another follow-up's thread
    (pairs chosen by position, the same on every build): a new subject in a thread, which must
    be answered as if asked alone."""
    threads = [case for case in cases if case.history and case.category != NEW_TOPIC]
    alone = [case for case in cases if not case.history and case.answerable]
    if not threads or not alone:
        return []
    step = max(1, len(alone) // (NEW_TOPICS * len(threads)))
    chosen = alone[::step][:NEW_TOPICS * len(threads)]
    return [dataclasses.replace(case, history=threads[n % len(threads)].history, category=NEW_TOPIC)
            for n, case in enumerate(chosen)]


def thread_turns(engine, cases: list) -> list[dict]:
    """The turns of a set's threads, each with the signals of `scoring.followup.row` and a
    label: 0 for a new subject, written as such (category "new_topic": "I lost my YubiKey, what
    do I do?" after a question on meals) or one of the set's stand-alone questions asked after
    another follow-up's thread (the pairs are chosen by position, the same on every build); 1
    for every other turn with history, a follow-up as the set wrote it."""
    gazetteer, reader, vocabulary = engine.index.entities(), engine.index.scoped(None), engine.index.vocabulary()

    def search(question: str) -> list[dict]:
        return reader.search(question, mode="hybrid", top_k=1)

    turns = [case for case in cases if case.history] + new_topic_cases(cases)
    return [{"question": case.question, "history": case.history, "label": int(case.category != NEW_TOPIC),
             "split": case.split,
             "signals": followup.measure(case.question, case.history, gazetteer, engine.embedder, search, vocabulary)}
            for case in turns]


def build_set(name: str, db: Path, out: Path, force: bool) -> Path | None:
    corpus = CORPORA[SETS[name]]
    tests = ROOT / "eval" / f"{name}.jsonl"
    target, turns = out / f"{name}.jsonl", out / f"{name}.turns.jsonl"
    stamp = json.dumps({"stamp": f"{file_hash(tests)}:{HEAD}:{FORMAT}"})
    # the turns are measured again whenever the thread reader's signals change
    turn_stamp = json.dumps({"stamp": f"{file_hash(tests)}:{FORMAT}:{','.join(followup.MEASURES)}"})
    if not corpus.is_dir():
        print(f"skipped {name}: no corpus at {corpus}")
        return None
    fresh = {path: path.exists() and not force and path.read_text().split("\n", 1)[0] == expected
             for path, expected in ((target, stamp), (turns, turn_stamp))}
    if all(fresh.values()):
        print(f"{name}: cached")
        return target
    from ..engine import Engine

    settings = Settings.from_env(corpus=corpus, db=str(db / SETS[name]))
    engine = Engine(settings.model_copy(update={"top_k": HEAD}))
    engine.refresh()
    engine.warm_up()
    cases = load_cases(tests)
    out.mkdir(parents=True, exist_ok=True)
    if not fresh[turns]:
        lines = [json.dumps({"set": name, "corpus": SETS[name], **turn}, ensure_ascii=False)
                 for turn in thread_turns(engine, cases)]
        turns.write_text("\n".join([turn_stamp, *lines]) + "\n")
    if not fresh[target]:
        vocabulary = engine.index.vocabulary()
        lines = [json.dumps({"set": name, "corpus": SETS[name], **label_case(engine, case, vocabulary)},
                            ensure_ascii=False) for case in cases]
        target.write_text("\n".join([stamp, *lines]) + "\n")
    print(f"{name}: {len(cases)} questions labeled")
    return target


def record_set(name: str, db: Path, out: Path, force: bool, suffix: str, record) -> Path | None:
    """Ask every question of set `name` through the flow once and write `record(engine, case)`
    per question to out/<name><suffix>, stamped with the set file's hash: reused while the set
    is unchanged (`force` rebuilds). The writer's tools (sentence_labels, tune_inclusion,
    lead_choice) record their pools this way."""
    corpus = CORPORA[SETS[name]]
    tests = ROOT / "eval" / f"{name}.jsonl"
    target = out / f"{name}{suffix}"
    stamp = json.dumps({"stamp": file_hash(tests)})
    if not corpus.is_dir():
        print(f"skipped {name}: no corpus at {corpus}")
        return None
    if target.exists() and not force and target.read_text().split("\n", 1)[0] == stamp:
        print(f"{name}: cached")
        return target
    from ..engine import Engine

    engine = Engine(Settings.from_env(corpus=corpus, db=str(db / SETS[name])))
    engine.refresh()
    engine.warm_up()
    cases = load_cases(tests)
    out.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"set": name, "corpus": SETS[name], **record(engine, case)}, ensure_ascii=False)
             for case in cases]
    target.write_text("\n".join([stamp, *lines]) + "\n")
    print(f"{name}: {len(cases)} questions recorded", flush=True)
    return target


def writer_choice(engine, case):
    """Ask `case` through the flow and return (question, context, the extractive writer's
    `_chosen`) for a one-part question the writer picked sentences for, else None (no context,
    no writer, a multi-part question, nothing chosen). The writer-pool tools record from it."""
    return chosen_in(engine, engine.run(case.question, case.history))


def chosen_in(engine, state, parts: bool = False):
    """`writer_choice` of a flow state already run (what the writer was given in it); with
    `parts`, a multi-part question's too, chosen as if it had one part (its pool is the same)."""
    question, context = state.get("question"), state.get("context") or []
    writer = engine._offline
    if (not context or writer is None or question is None or not question.own
            or state.get("sub_questions") and not parts):
        return None
    chosen = writer._chosen(question, context, [])
    return None if chosen is None else (question, context, chosen)


def write_new_topic_sets(folder: Path, names=None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names or SETS:
        cases = new_topic_cases(load_cases(ROOT / "eval" / f"{name}.jsonl"))
        if cases:
            (folder / f"{name}.jsonl").write_text("".join(
                json.dumps({"question": c.question, "keywords": c.keywords, "category": c.category,
                            "history": c.history, "split": c.split}, ensure_ascii=False) + "\n" for c in cases))


def read_labeled(out: Path, suffix: str, names=None) -> list[dict]:
    """The records of every set built into `out` as `<set><suffix>` (or of the named sets),
    each file's first line (the stamp of what it was built from) left out."""
    records = []
    for name in names or SETS:
        path = out / f"{name}{suffix}"
        if path.exists():
            records += [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
    return records


def load_turns(out: Path, names=None) -> list[dict]:
    """The labeled thread turns of every set built into `out` (or of the named sets)."""
    return read_labeled(out, ".turns.jsonl", names)


def load(out: Path, names=None) -> list[dict]:
    """The labeled questions of every set built into `out` (or of the named sets)."""
    return read_labeled(out, ".jsonl", names)


def set_options(description: str) -> argparse.ArgumentParser:
    """The options of every command that labels the sets (this one and sentence_labels)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=".citebot/labels", help="folder for one labeled JSONL per set")
    parser.add_argument("--db", default=".citebot/eval-indexes", help="folder for one index per corpus")
    parser.add_argument("--only", nargs="*", help="set names (default: all)")
    parser.add_argument("--force", action="store_true", help="rebuild sets already labeled")
    return parser


def build_sets(args: argparse.Namespace, build) -> None:
    """`build(name, db, out, force)` for every set `--only` names (all without it)."""
    for name in SETS:
        if not args.only or name in args.only:
            build(name, Path(args.db), Path(args.out), args.force)


def main(argv: list[str] | None = None) -> int:
    parser = set_options(__doc__.splitlines()[0])
    parser.add_argument("--new-topic-sets", metavar="DIR",
                        help="also write each set's new-subject-in-a-thread questions as a set for `citebot eval`")
    args = parser.parse_args(argv)
    if args.new_topic_sets:
        write_new_topic_sets(Path(args.new_topic_sets), args.only)
    build_sets(args, build_set)
    return 0


if __name__ == "__main__":
    sys.exit(main())
