"""How often an answered reply is wrong, and whether what the flow knows when it answers could
tell: `python -m rag_graph.tools.wrong_answers`.

    python -m rag_graph.tools.wrong_answers --reports DIR                       # true figures of a run
    python -m rag_graph.tools.wrong_answers --out .citebot/labels --db DIR      # + record signals, separate

`eval/judged/replies-dev.jsonl` holds a person's judgment of answered dev-half replies (right /
partial / wrong, docs/measuring.md "Judged replies"). With `--reports` (the folder `eval_all`
wrote) it prints, per corpus, the answered dev replies by judgment and how many replies that miss
every keyword are right; a judgment whose reply hash no longer matches the reply is counted as
stale, not used. With `--out`/`--db` it asks every question through the flow (`labels.record_set`,
cached per set), records the signals the flow computed for each answer (`SIGNALS`), and reports
each signal's ROC AUC for wrong against right and a logistic model fitted with each corpus left
out: on the held-out corpus, how many wrong and how many right answers a decline at the model's
threshold (set on the other corpora to decline at most a tenth of their right answers) would turn
into "I don't know".
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

from .eval_all import ROOT, SETS

JUDGED = ROOT / "eval" / "judged" / "replies-dev.jsonl"
SUFFIX = ".replies.jsonl"
JUDGMENTS = ("right", "partial", "wrong")
# The signals recorded per answered reply, each a number the flow has when it answers.
SIGNALS = (
    "confidence", "similarity", "coverage", "subject_coverage", "relevance", "relevance_margin",
    "late", "late_margin", "cited_rank", "citations", "cited_sources", "retrieval_attempts",
    "rewrite_used", "follow_up", "borrowed", "parts", "contradictory", "grounded",
    "answer_coverage", "answer_subject_coverage", "kind_wanted", "kind_missing", "answer_chars",
    "section_match", "title_match",
)
# Declining may cost at most this share of the right answers of the corpora a threshold is set on.
RIGHT_DECLINED = 0.10


def history_hash(history: list[dict]) -> str:
    """A thread's turns, as a key: a question asked after other turns is another question."""
    text = json.dumps([[t["role"], t["content"]] for t in history or []], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def reply_hash(answer: str) -> str:
    """The reply a judgment was made on: a changed reply makes the judgment stale."""
    return hashlib.sha256((answer or "").encode()).hexdigest()[:12]


def key(name: str, question: str, history: list[dict] | str) -> tuple[str, str, str]:
    return name, question, history if isinstance(history, str) else history_hash(history)


def load_judged(path: Path = JUDGED) -> dict[tuple, dict]:
    """The judged rows by (set, question, history hash); the file's first line is its rule."""
    rows = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
    return {key(r["set"], r["question"], r["history"]): r for r in rows}


def report_rows(reports: Path) -> list[dict]:
    """The answered, answerable dev-half replies of a run's reports (the 15 sets of SETS)."""
    rows = []
    for name, corpus in SETS.items():
        path = reports / f"{name}.json"
        if not path.exists():
            continue
        for q in json.loads(path.read_text())["questions"]:
            output = q["final_output"]
            if q["split"] != "dev" or not q["answerable"] or output["status"] != "answered":
                continue
            rows.append({"set": name, "corpus": corpus, "question": q["question"],
                         "history": history_hash(q["history"]), "reply": reply_hash(output["answer"]),
                         "recall": q["scores"].get("answer_recall")})
    return rows


def judge(rows: list[dict], judged: dict[tuple, dict]) -> list[dict]:
    """Each row with its judgment: the person's when the reply is the one judged, "stale" when
    the reply changed since, "keyword" for an unjudged reply holding every keyword (of 40 such
    replies judged, 40 were right), None for an unjudged one that misses a keyword."""
    out = []
    for row in rows:
        found = judged.get(key(row["set"], row["question"], row["history"]))
        if found is not None:
            judgment = found["judgment"] if found["reply"] == row["reply"] else "stale"
        else:
            judgment = "keyword" if row["recall"] == 1 else None
        out.append({**row, "judgment": judgment})
    return out


def figures(rows: list[dict]) -> dict[str, Counter]:
    """Per corpus (and "all"): the answered dev replies by judgment, and the replies missing
    every keyword ("zero") and those of them judged right ("zero right")."""
    table: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        for name in (row["corpus"], "all"):
            table[name][row["judgment"]] += 1
            table[name]["answered"] += 1
            if row["recall"] == 0:
                table[name]["zero"] += 1
                table[name]["zero right"] += row["judgment"] == "right"
    return table


def print_figures(table: dict[str, Counter]) -> None:
    print("| corpus | answered | right (judged) | right (all keywords, not judged) | partial | wrong | "
          "stale / not judged | keyword-zero replies | of them right |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in sorted(table, key=lambda n: (n == "all", n)):
        c = table[name]
        print(f"| {name} | {c['answered']} | {c['right']} | {c['keyword']} | {c['partial']} | {c['wrong']} | "
              f"{c['stale']} / {c[None]} | {c['zero']} | {c['zero right']} |")


def auc(scores: list[float], positive: list[bool]) -> float:
    """ROC AUC: the chance a positive scores above a negative (ties count half)."""
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    if not pos or not neg:
        return float("nan")
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def record_case(engine, case) -> dict:
    """One dev-half question through the flow: its reply and, when answered, the signals of
    SIGNALS. A test-half question is not asked (nothing here may look at its answers)."""
    from .evaluation import answer_recall

    if case.split != "dev":
        return {"question": case.question, "split": case.split}
    state = engine.run(case.question, case.history)
    output = state.get("final_output") or {}
    record = {"question": case.question, "split": case.split, "answerable": case.answerable,
              "history": history_hash(case.history), "status": output.get("status"),
              "reply": reply_hash(output.get("answer", "")),
              "recall": answer_recall(output.get("answer", ""), case.keywords)
              if case.answerable and case.keywords else None}
    if output.get("status") == "answered":
        record["signals"] = measure(engine, state, bool(case.history))
    return record


def measure(engine, state, follow_up: bool) -> dict:
    """The SIGNALS of an answered state."""
    from ..answer.kinds import holds_answer, wanted_answer
    from ..language.markdown import sentences
    from ..language.words import terms_held, weighted_coverage
    from ..scoring.features import signals
    from ..scoring.missing import subject_weights
    from ..scoring.relevance import by_relevance, query_weights

    output, ranked = state["final_output"], state.get("ranked_chunks") or []
    vocabulary = engine.index.vocabulary()
    query = state.get("retrieval_query") or state["normalized_query"]
    own = state["question"].own if state.get("question") else state["normalized_query"]
    judged = by_relevance(ranked)
    best = judged[0] if judged else {}
    second = judged[1] if len(judged) > 1 else {}
    late = [float(c["late"]) for c in ranked[:2] if c.get("late") is not None]
    cited = [c["chunk_id"] for c in output["citations"]]
    order = [c["chunk_id"] for c in ranked]
    context = {c["chunk_id"]: c for c in state.get("context") or []}
    first = context.get(cited[0]) if cited else None
    measured = signals(query, [first], vocabulary, engine.embedder)[0] if first else {}
    answer = output["answer"]
    held = terms_held(own, answer)
    wanted = wanted_answer(own)
    return {
        "confidence": output["confidence"],
        "similarity": float(best.get("similarity") or 0), "coverage": float(best.get("coverage") or 0),
        "subject_coverage": weighted_coverage(subject_weights(query, vocabulary), terms_held(query, best.get("text", ""))),
        "relevance": float(best.get("relevance") or 0),
        "relevance_margin": float(best.get("relevance") or 0) - float(second.get("relevance") or 0),
        "late": late[0] if late else 0.0, "late_margin": late[0] - late[1] if len(late) == 2 else 0.0,
        "cited_rank": order.index(cited[0]) if cited and cited[0] in order else len(order),
        "citations": len(cited), "cited_sources": len({c["source_id"] for c in output["citations"]}),
        "retrieval_attempts": output["retrieval_attempts"], "rewrite_used": bool(state.get("query_rewrites")),
        "follow_up": follow_up, "borrowed": bool(state.get("question") and state["question"].carried),
        "parts": len(state.get("sub_questions") or []), "contradictory": state.get("context_quality") == "contradictory",
        "grounded": output["grounding_status"] == "grounded",
        "answer_coverage": weighted_coverage(query_weights(own, vocabulary), held),
        "answer_subject_coverage": weighted_coverage(subject_weights(own, vocabulary), held),
        "kind_wanted": bool(wanted),
        "kind_missing": bool(wanted) and not any(holds_answer(s, wanted) for s in sentences(answer) or [answer]),
        "answer_chars": math.log1p(len(answer)),
        "section_match": float(measured.get("section_match", 0)), "title_match": float(measured.get("title_match", 0)),
    }


def build_set(name: str, db: Path, out: Path, force: bool):
    from .labels import record_set

    return record_set(name, db, out, force, SUFFIX, record_case)


def joined(records: list[dict], judged: dict[tuple, dict]) -> list[dict]:
    """The answered dev records with their judgment (see `judge`; "keyword" counts as right)."""
    rows = [{"set": r["set"], "corpus": r["corpus"], "question": r["question"], "history": r["history"],
             "reply": r["reply"], "recall": r["recall"], "signals": r["signals"]}
            for r in records if r["split"] == "dev" and r["answerable"] and r["status"] == "answered"]
    return judge(rows, judged)


def matrix(rows: list[dict]):
    import numpy as np

    return np.array([[float(r["signals"][name]) for name in SIGNALS] for r in rows])


def fit(rows: list[dict], C: float = 0.1):
    """A logistic regression on standardized signals: the odds that an answer is wrong (right
    and keyword rows count as right). C: the regularization, strong for 300 rows and 25 signals."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(C=C, class_weight="balanced", max_iter=3000))
    return model.fit(matrix(rows), [r["judgment"] == "wrong" for r in rows])


def threshold(scores: list[float], wrong: list[bool], share: float) -> float:
    """The lowest score above which at most `share` of the right answers lie."""
    right = sorted((s for s, w in zip(scores, wrong) if not w), reverse=True)
    allowed = int(share * len(right))
    return right[allowed] if allowed < len(right) else -math.inf


def _fitted(rows: list[dict]) -> list[dict]:
    """The rows a model learns from: wrong, and right (judged, or holding every keyword)."""
    return [dict(r, judgment="right" if r["judgment"] == "keyword" else r["judgment"])
            for r in rows if r["judgment"] in ("right", "keyword", "wrong")]


def out_of_corpus(rows: list[dict]) -> list[float]:
    """Each row's odds from a model fitted without its corpus: what a threshold is set on, as a
    model's odds on the corpora it was fitted on are too kind to their right answers."""
    odds = [0.0] * len(rows)
    for corpus in {r["corpus"] for r in rows}:
        model = fit([r for r in rows if r["corpus"] != corpus])
        places = [n for n, r in enumerate(rows) if r["corpus"] == corpus]
        for n, p in zip(places, model.predict_proba(matrix([rows[n] for n in places]))[:, 1]):
            odds[n] = float(p)
    return odds


def held_out(rows: list[dict], share: float = RIGHT_DECLINED) -> dict[str, Counter]:
    """Each corpus left out: the model fitted on the others, its threshold set on their
    out-of-corpus odds to decline `share` of their right answers, then the held-out corpus's
    answers it would decline, by judgment, and its AUC there."""
    table: dict[str, Counter] = {}
    for corpus in sorted({r["corpus"] for r in rows}):
        train = [r for r in _fitted(rows) if r["corpus"] != corpus]
        bar = threshold(out_of_corpus(train), [r["judgment"] == "wrong" for r in train], share)
        test = [r for r in rows if r["corpus"] == corpus and r["judgment"] in ("right", "keyword", "partial", "wrong")]
        odds = fit(train).predict_proba(matrix(test))[:, 1] if test else []
        counts = Counter()
        for row, p in zip(test, odds):
            kind = "right" if row["judgment"] == "keyword" else row["judgment"]
            counts[kind] += 1
            counts[f"{kind} declined"] += bool(p > bar)
        counts["auc"] = auc(list(odds), [r["judgment"] == "wrong" for r in test]) if test else float("nan")
        table[corpus] = counts
    return table


def print_held_out(table: dict[str, Counter]) -> Counter:
    print("| held-out corpus | AUC | wrong declined | right declined | partial declined |\n|---|---|---|---|---|")
    total = Counter()
    for corpus, c in table.items():
        total.update({k: v for k, v in c.items() if k != "auc"})
        print(f"| {corpus} | {c['auc']:.3f} | {c['wrong declined']} / {c['wrong']} | "
              f"{c['right declined']} / {c['right']} | {c['partial declined']} / {c['partial']} |")
    print(f"| all | | {total['wrong declined']} / {total['wrong']} | {total['right declined']} / {total['right']} | "
          f"{total['partial declined']} / {total['partial']} |")
    return total


def separate(rows: list[dict], shares=(0.02, 0.05, RIGHT_DECLINED)) -> None:
    """Print each signal's AUC (wrong against right; below .5: lower for wrong answers) and the
    held-out decline table at each share of right answers the threshold may decline."""
    judged = [r for r in rows if r["judgment"] in ("right", "keyword", "wrong")]
    wrong = [r["judgment"] == "wrong" for r in judged]
    only = [r for r in judged if r["judgment"] != "keyword"]
    print(f"answered dev replies: {len(rows)}; judged wrong {sum(wrong)}, right {len(only) - sum(wrong)}"
          f" (+ {len(judged) - len(only)} holding every keyword, not judged)\n")
    print("| signal | AUC, wrong vs right (judged + all keywords) | AUC, judged only |\n|---|---|---|")
    for name in SIGNALS:
        a = auc([float(r["signals"][name]) for r in judged], wrong)
        b = auc([float(r["signals"][name]) for r in only], [r["judgment"] == "wrong" for r in only])
        print(f"| {name} | {a:.3f} | {b:.3f} |")
    for share in shares:
        print(f"\nLogistic regression on all signals, each corpus left out; threshold: {share:.0%} of the "
              "other corpora's right answers declined (their out-of-corpus odds):\n")
        total = print_held_out(held_out(rows, share))
        met = total["wrong declined"] * 3 >= total["wrong"] and total["right declined"] * 10 <= total["right"]
        print(f"\n>= 1/3 of wrong and <= 1/10 of right declined, held out: {'yes' if met else 'no'}")


def main(argv: list[str] | None = None) -> int:
    from .labels import build_sets, read_labeled, set_options

    parser = set_options(__doc__.splitlines()[0])
    parser.add_argument("--reports", type=Path, help="a folder of eval_all reports: print the judged figures")
    parser.add_argument("--judged", type=Path, default=JUDGED, help="the judged replies")
    parser.add_argument("--check", action="store_true", help="separate what is recorded, record nothing")
    args = parser.parse_args(argv)
    judged = load_judged(args.judged)
    if args.reports:
        print_figures(figures(judge(report_rows(args.reports), judged)))
        return 0
    if not args.check:
        build_sets(args, build_set)
    records = [r for r in read_labeled(Path(args.out), SUFFIX, args.only)]
    for r in records:
        r.setdefault("corpus", SETS[r["set"]])
    separate(joined(records, judged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
