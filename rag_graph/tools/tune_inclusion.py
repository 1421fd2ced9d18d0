"""Fit "does this pool sentence answer?" (answer/extractive/inclusion.py) on judged sentences:

    python -m rag_graph.tools.tune_inclusion --out .citebot/labels --db DIR   # record + fit
    python -m rag_graph.tools.tune_inclusion --out .citebot/labels --check    # fit, print, write nothing
    python -m rag_graph.tools.tune_inclusion --out .citebot/labels --separate # what tells them apart

Every question is asked through the real flow (`Engine.run`, with its history); for the context
the flow gave the writer, the answer as picked and each pool sentence that could join it
(`writer.additions`) are recorded with their signals, text and section, and what the answer with
it holds of the question's keywords. One `<set>.inclusion.jsonl` per set (`--force` rebuilds;
rebuild after changing the writer). The label is a person's judgment (eval/judged/, written with
`rag_graph.tools.judged_inclusion candidates`): 1 for a sentence that answers, 0 for context and
distractors; a sentence nobody judged is left out. Keyword labels are not used: they call the
list's other item or the next rule "adds the answer" as often as the answer, and a model fitted
on them picks distractors four times as often as answers. Measured with each corpus left out of
the fit: AUC (answers against distractors) and, per threshold, what the best-odds addition of each
answer would be (judged answers / context / distractors / not judged) and the keywords held.
Written to rag_graph/scoring/inclusion.json with the command, a hash of the data and the figures.
`--separate` prints, over the judged sentences, the AUC of each signal alone and of the model
fitted on keyword labels and on judgments (each corpus left out), answers against distractors.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np

from ..answer.extractive.inclusion import FEATURES, MODEL_FILE
from ..scoring.learned import Linear
from .eval_all import ROOT
from .evaluation import contains
from .judged_inclusion import (
    ANSWERS,
    CONTEXT,
    DISTRACTOR,
    JUDGED,
    judged_options,
    key,
    recorded,
)
from .labels import record_set, writer_choice

SUFFIX = ".inclusion.jsonl"
C = 0.1  # stronger than scikit-learn's 1.0: ~50 answering sentences for 22 signals (held-out AUC .683 at 1.0, .716 at 0.1)
THRESHOLDS = (0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def held(answer: str, keywords: list[str]) -> int:
    return sum(contains(answer, k) for k in keywords)


def label_case(engine, case) -> dict:
    record = {"question": case.question, "split": case.split, "answerable": case.answerable,
              "keywords": case.keywords, "base": 0, "additions": []}
    choice = writer_choice(engine, case)
    if choice is None:
        return record
    question, context, chosen = choice
    answer, found = engine._offline.additions(question, context, chosen)
    base = held(answer, case.keywords)
    record.update(base=base, answer=answer, reference=case.reference_answer,
                  history=[turn.get("content", "") for turn in case.history if turn.get("role") == "user"],
                  picked=[{"text": c.text, "section": section(context, c)} for c in chosen[0]])
    record["additions"] = [{"row": [round(v, 6) for v in a.row], "closer": round(a.closer, 6),
                            "gain": held(a.answer, case.keywords) - base,
                            "kept": all(contains(a.answer, k) for k in case.keywords if contains(answer, k)),
                            "text": a.candidate.text, "section": section(context, a.candidate)}
                           for a in found]
    return record


def section(context: list[dict], candidate) -> str:
    """Where a sentence stands: its chunk's title and section, as a reader sees them."""
    chunk = context[candidate.rank]
    return " › ".join(part for part in (chunk.get("title"), chunk.get("section")) if part)


def build_set(name: str, db: Path, out: Path, force: bool) -> Path | None:
    return record_set(name, db, out, force, SUFFIX, label_case)


def labeled(record: dict, judged: dict) -> list[tuple[list[float], int]]:
    """(signals, 1 if judged to answer else 0) for the record's judged additions."""
    out = []
    for addition in record["additions"]:
        judgment = judged.get(key(record["set"], record["question"], addition["text"]))
        if judgment:
            out.append((addition["row"], int(judgment == ANSWERS)))
    return out


def keyword_labeled(record: dict) -> list[tuple[list[float], int]]:
    """(signals, 1 if the answer with it holds a keyword more and loses none): what reply40e fitted."""
    if not record["answerable"] or not record["keywords"]:
        return []
    return [(a["row"], int(a["gain"] > 0 and a["kept"])) for a in record["additions"]]


def fit(records: list[dict], judged: dict, c: float = C) -> Linear:
    return fit_pairs([pair for r in records for pair in labeled(r, judged)], c)


def fit_pairs(pairs: list[tuple[list[float], int]], c: float = C) -> Linear:
    from sklearn.linear_model import LogisticRegression

    table = np.asarray([row for row, _ in pairs], dtype=float)
    signs = np.asarray([sign for _, sign in pairs])
    mean, scale = table.mean(axis=0), table.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=c, max_iter=5000).fit((table - mean) / scale, signs)
    return Linear(FEATURES, mean, scale, model.coef_[0], float(model.intercept_[0]))


def auc(scores: list[float], positive: list[bool]) -> float | None:
    """ROC AUC: the chance a positive scores above a negative (ties count half); None without both."""
    pos = sorted(s for s, p in zip(scores, positive) if p)
    neg = sorted(s for s, p in zip(scores, positive) if not p)
    if not pos or not neg:
        return None
    below = np.searchsorted(neg, pos, side="left")
    ties = np.searchsorted(neg, pos, side="right") - below
    return float((below + 0.5 * ties).sum() / (len(pos) * len(neg)))


def judged_rows(records: list[dict], judged: dict, negatives: tuple[str, ...]) -> list[tuple[dict, dict, bool]]:
    """(record, addition, answers?) for each addition judged ANSWERS or one of `negatives`."""
    out = []
    for record in records:
        for addition in record["additions"]:
            judgment = judged.get(key(record["set"], record["question"], addition["text"]))
            if judgment == ANSWERS or judgment in negatives:
                out.append((record, addition, judgment == ANSWERS))
    return out


def separability(records: list[dict], judged: dict, negatives: tuple[str, ...] = (DISTRACTOR,)) -> dict:
    """How well each signal alone, closeness and the keyword gain, and the models fitted on keyword
    labels and on judgments (each scored by the model fitted without its corpus) tell the judged
    answers from `negatives`: ROC AUC, 0.5 = no signal."""
    rows = judged_rows(records, judged, negatives)
    truth = [answers for _, _, answers in rows]
    columns = {name: [a["row"][n] for _, a, _ in rows] for n, name in enumerate(FEATURES)}
    columns["closer"] = [a.get("closer", 0.0) for _, a, _ in rows]
    columns["keyword gain"] = [float(a["gain"] > 0 and a["kept"]) for _, a, _ in rows]
    corpora = sorted({r["corpus"] for r in records})
    for name, labels in (("keyword model", keyword_labeled), ("judged model", lambda r: labeled(r, judged))):
        models = {}
        for corpus in corpora:
            pairs = [pair for r in records if r["corpus"] != corpus for pair in labels(r)]
            if len({sign for _, sign in pairs}) == 2:
                models[corpus] = fit_pairs(pairs)
        if len(models) == len(corpora):
            columns[name] = [float(models[r["corpus"]].scores([a["row"]])[0]) for r, a, _ in rows]
    return {"answers": sum(truth), "negatives": len(truth) - sum(truth),
            "auc": {name: auc(values, truth) for name, values in columns.items()}}


def print_separability(records: list[dict], judged: dict) -> None:
    for name, negatives in (("distractor", (DISTRACTOR,)), ("context or distractor", (CONTEXT, DISTRACTOR))):
        result = separability(records, judged, negatives)
        print(f"answers ({result['answers']}) against {name} ({result['negatives']}), ROC AUC:")
        for feature, value in sorted(result["auc"].items(), key=lambda item: -abs((item[1] or 0.5) - 0.5)):
            print(f"  {feature:16} {'-' if value is None else f'{value:.3f}'}")


def best_addition(model: Linear, record: dict, threshold: float) -> dict | None:
    """The addition with the best odds when they reach the threshold (what a writer would add)."""
    if not record["additions"]:
        return None
    odds = [1 / (1 + math.exp(-s)) for s in model.scores([a["row"] for a in record["additions"]])]
    best = max(range(len(odds)), key=odds.__getitem__)
    return record["additions"][best] if odds[best] >= threshold else None


def measure(records: list[dict], model: Linear, threshold: float, judged: dict) -> dict:
    """Keywords held with and without the addition (answerable questions, as eval counts them),
    and the additions of the dev halves by judgment."""
    out = {"questions": 0, "hand": 0.0, "learned": 0.0, "added": 0, ANSWERS: 0, "context": 0, DISTRACTOR: 0,
           "not judged": 0}
    for record in records:
        addition = best_addition(model, record, threshold)
        gain = 0
        if addition is not None:
            out["added"] += 1
            gain = addition["gain"]
            if record["split"] == "dev":
                out[judged.get(key(record["set"], record["question"], addition["text"])) or "not judged"] += 1
        if record["answerable"] and record["keywords"]:
            out["questions"] += 1
            out["hand"] += record["base"] / len(record["keywords"])
            out["learned"] += (record["base"] + gain) / len(record["keywords"])
    return {name: round(value, 2) if isinstance(value, float) else value for name, value in out.items()}


def report(records: list[dict], judged: dict) -> dict:
    """The model fitted on every judged sentence; each corpus measured with a model fitted on the
    others: AUC (answers against distractors), and per threshold what it would add."""
    held_out, scores, truth = {}, [], []
    for corpus in sorted({r["corpus"] for r in records}):
        mine, others = [r for r in records if r["corpus"] == corpus], [r for r in records if r["corpus"] != corpus]
        if not any(labeled(r, judged) for r in others):
            continue
        model = held_out[corpus] = fit(others, judged)
        for record in mine:
            for addition in record["additions"]:
                judgment = judged.get(key(record["set"], record["question"], addition["text"]))
                if judgment in (ANSWERS, DISTRACTOR):
                    scores.append(float(model.scores([addition["row"]])[0]))
                    truth.append(judgment == ANSWERS)
    thresholds = {}
    for threshold in THRESHOLDS:
        per = {corpus: measure([r for r in records if r["corpus"] == corpus], model, threshold, judged)
               for corpus, model in held_out.items()}
        pooled = {name: round(sum(row[name] for row in per.values()), 2) for name in next(iter(per.values()))}
        thresholds[str(threshold)] = {"pooled": pooled, "corpora": per}
    held_auc = auc(scores, truth)
    return {"model": fit(records, judged), "auc_held_out": None if held_auc is None else round(held_auc, 3),
            "thresholds": thresholds}


def data_hash(records: list[dict], judged: dict) -> str:
    data = {"records": records, "judged": sorted([*k, v] for k, v in judged.items())}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def write_model(result: dict, records: list[dict], judged: dict, path: Path) -> Path:
    path.write_text(json.dumps({
        "command": "python -m rag_graph.tools.tune_inclusion --out .citebot/labels --db DIR",
        "labels": str(JUDGED.relative_to(ROOT)), "data_hash": data_hash(records, judged), "fitted_on": "judged dev",
        "auc_held_out": result["auc_held_out"],
        "thresholds": {t: row["pooled"] for t, row in result["thresholds"].items()},
        **result["model"].as_dict()}, indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = judged_options(__doc__.splitlines()[0], "fit and print; write no model")
    parser.add_argument("--model", default=str(MODEL_FILE), help="where the fitted model is written")
    parser.add_argument("--separate", action="store_true", help="print what tells answers from distractors")
    args = parser.parse_args(argv)
    records, judged = recorded(args, SUFFIX, build_set, record=not args.separate)
    if not any(labeled(r, judged) for r in records):
        print(f"no judged additions in {args.out} (judgments: {args.judged}): run without --check to record them",
              file=sys.stderr)
        return 1
    if args.separate:
        print_separability(records, judged)
        return 0
    result = report(records, judged)
    print(f"held out, AUC answers against distractors: {result['auc_held_out']}")
    for threshold, row in result["thresholds"].items():
        p = row["pooled"]
        print(f"odds >= {threshold}: added {p['added']}, dev judged {p[ANSWERS]} answer / {p['context']} context / "
              f"{p[DISTRACTOR]} distractor / {p['not judged']} not judged; keywords held {p['hand']} -> {p['learned']} "
              f"of {p['questions']}; " + ", ".join(f"{c} {r['hand'] / (r['questions'] or 1):.3f} -> "
                                                    f"{r['learned'] / (r['questions'] or 1):.3f}"
                                                    for c, r in row["corpora"].items()))
    if not args.check:
        print(f"written {write_model(result, records, judged, Path(args.model))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
