"""How often an answered reply is wrong, and whether what the flow knows when it answers could
tell: `python -m rag_graph.tools.wrong_answers`.

    python -m rag_graph.tools.wrong_answers --reports DIR                       # true figures of a run
    python -m rag_graph.tools.wrong_answers --out .citebot/labels --db DIR      # + record signals, separate

`eval/judged/replies-dev.jsonl` holds a person's judgment of answered dev-half replies (right /
partial / wrong, docs/measuring.md "Judged replies"). With `--reports` (the folder `eval_all`
wrote) it prints, per corpus, the answered dev replies by judgment and how many replies that miss
every keyword are right, and how many wrong, right and partial answers were given hedged
(`final_output["hedged"]`, scoring/doubt.py); a judgment whose reply hash no longer matches the reply is counted as
stale, not used. With `--out`/`--db` it asks every question through the flow (`labels.record_set`,
cached per set), records the signals the flow computed for each answer (`SIGNALS`), and reports
each signal's ROC AUC for wrong against right and a logistic model fitted with each corpus left
out: on the held-out corpus, how many wrong and how many right answers the model's threshold
(set on the other corpora to flag at most a tenth of their right answers) would flag. `--fit`
writes the flow's model (scoring/doubt.json); the flow gives a flagged answer hedged.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

from ..scoring.doubt import FEATURES, FIT_COMMAND, MODEL_FILE, measure
from ..scoring.learned import MODEL_DIR
from .eval_all import ROOT, SETS

JUDGED = ROOT / "eval" / "judged" / "replies-dev.jsonl"
SUFFIX = ".replies.jsonl"
JUDGMENTS = ("right", "partial", "wrong")
# The signals recorded per answered reply: what the flow's doubt model reads.
SIGNALS = FEATURES
# Declining may cost at most this share of the right answers of the corpora a threshold is set on.
RIGHT_DECLINED = 0.10
# The share of right answers the shipped threshold is set to flag (on every corpus's
# out-of-corpus odds); a flagged answer is given hedged. Of the measured shares, each corpus held
# out, only 5 % flagged at least 1/3 of the wrong answers and at most 1/10 of the right ones when
# it was chosen (20 of 57 wrong, 13 of 248 right; 2 %: 13 of 57 wrong; 10 %: 29 of 57 wrong but 26
# of 248 right, more than a tenth). Refitted on the replies of 0d111e2 (52 wrong, 246 right: 10
# judgments stale): 5 % 18 / 52 wrong, 14 / 246 right; 2 % 15 / 52, 7 / 246; 10 % 22 / 52,
# 23 / 246. Refitted on the replies of c217f9a (judge40k: the 10 stale re-judged, 40 more
# all-keyword replies judged; 57 wrong, 246 right): 5 % 20 / 57 wrong, 13 / 246 right; 2 % 14 / 57,
# 7 / 246; 10 % 28 / 57, 26 / 246 (more than a tenth). The table's "declined" columns count the
# answers a threshold flags.
SHIPPED_SHARE = 0.05


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
                         "recall": q["scores"].get("answer_recall"), "hedged": bool(output.get("hedged"))})
    return rows


def judge(rows: list[dict], judged: dict[tuple, dict]) -> list[dict]:
    """Each row with its judgment: the person's when the reply is the one judged, "stale" when
    the reply changed since, "keyword" for an unjudged reply holding every keyword (of 80 such
    replies judged, two samples of 40, 78 were right, 1 partial, 1 wrong), None for an unjudged
    one that misses a keyword."""
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
        record["signals"] = measure(state, output, engine.index.vocabulary(), engine.embedder)
    return record


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


def write_model(rows: list[dict], path: Path, command: str) -> dict:
    """Fit the doubt model on every corpus's rows, set its threshold on their out-of-corpus odds
    to decline SHIPPED_SHARE of the right answers, and write it with its origin and its figures
    with each corpus held out (scoring/doubt.py reads it)."""
    used = _fitted(rows)
    model = fit(used)
    scaler, regression = model[0], model[-1]
    table = held_out(rows, SHIPPED_SHARE)
    data = json.dumps([[r["set"], r["question"], r["history"], r["judgment"], [r["signals"][n] for n in SIGNALS]]
                       for r in used], ensure_ascii=False)
    written = {
        "command": command, "data_hash": hashlib.sha256(data.encode()).hexdigest()[:16],
        "fitted_on": [str(JUDGED.relative_to(ROOT)), "answered dev replies of the 15 sets of tools/eval_all.py"],
        "rows": {"wrong": sum(r["judgment"] == "wrong" for r in used), "right": sum(r["judgment"] == "right" for r in used)},
        "share_of_right_declined": SHIPPED_SHARE,
        "threshold": round(threshold(out_of_corpus(used), [r["judgment"] == "wrong" for r in used], SHIPPED_SHARE), 6),
        "held_out": {corpus: {k: (round(v, 3) if k == "auc" else v) for k, v in c.items()} for corpus, c in table.items()},
        "features": list(SIGNALS), "mean": [round(float(v), 6) for v in scaler.mean_],
        "scale": [round(float(v), 6) for v in scaler.scale_],
        "coef": [round(float(v), 6) for v in regression.coef_[0]],
        "intercept": round(float(regression.intercept_[0]), 6),
    }
    path.write_text(json.dumps(written, indent=1) + "\n")
    return written


def print_hedged(rows: list[dict]) -> bool:
    """Per corpus: how many of the wrong, right (judged or holding every keyword) and partial
    answers were given hedged (final_output["hedged"], scoring/doubt.py). True when at least 1/3
    of the wrong and at most 1/10 of the right ones were (in-sample: the model was fitted on
    these dev replies)."""
    table: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        kind = "right" if row["judgment"] in ("right", "keyword") else row["judgment"]
        for name in (row["corpus"], "all"):
            table[name][kind] += 1
            table[name][f"{kind} hedged"] += row["hedged"]
    print("\n| corpus | wrong hedged | right hedged | partial hedged |\n|---|---|---|---|")
    for name in sorted(table, key=lambda n: (n == "all", n)):
        c = table[name]
        print(f"| {name} | " + " | ".join(f"{c[k + ' hedged']} / {c[k]}" for k in ("wrong", "right", "partial")) + " |")
    total = table["all"]
    met = total["wrong hedged"] * 3 >= total["wrong"] and total["right hedged"] * 10 <= total["right"]
    print(f"\n>= 1/3 of wrong and <= 1/10 of right hedged (dev, in-sample): {'yes' if met else 'no'}")
    return met


def main(argv: list[str] | None = None) -> int:
    from .labels import build_sets, read_labeled, set_options

    parser = set_options(__doc__.splitlines()[0])
    parser.add_argument("--reports", type=Path, help="a folder of eval_all reports: print the judged figures")
    parser.add_argument("--judged", type=Path, default=JUDGED, help="the judged replies")
    parser.add_argument("--check", action="store_true", help="separate what is recorded, record nothing")
    parser.add_argument("--fit", action="store_true", help=f"write the flow's doubt model (scoring/{MODEL_FILE})")
    args = parser.parse_args(argv)
    judged = load_judged(args.judged)
    if args.reports:
        rows = judge(report_rows(args.reports), judged)
        print_figures(figures(rows))
        print_hedged(rows)
        return 0
    if not args.check:
        build_sets(args, build_set)
    records = [r for r in read_labeled(Path(args.out), SUFFIX, args.only)]
    for r in records:
        r.setdefault("corpus", SETS[r["set"]])
    rows = joined(records, judged)
    separate(rows)
    if args.fit:
        written = write_model(rows, MODEL_DIR / MODEL_FILE, FIT_COMMAND)
        print(f"\nwrote {MODEL_DIR / MODEL_FILE}: threshold {written['threshold']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
