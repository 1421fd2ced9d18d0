"""`citebot tune --grounding [DB_ROOT]`: fit the learned accept/drop decision of the grounding
check (answer/support_learned.py) on the labelled sentences of eval/grounding/, and measure it
against the rules on sentences it was not fitted on.

Every sentence is measured against the context the flow selects for its question (as
`rag_graph.tools.grounding_eval` judges it): the rules' verdict, and each candidate chunk's
features. The decision is a logistic regression over one row per sentence: a sentence is kept
when one of its candidate chunks scores above even, so the row a sentence is fitted on is its
best-scoring candidate (chosen first by share of words + cosine, then by the model, refitted
until the choice settles: multiple-instance learning in its simplest form).

Honest figures: each of the three sets is scored by a model fitted on the other two (rotation),
beside the rules. The shipped model is fitted on FITTED_ON (sentences.jsonl and fresh.jsonl);
held_out.jsonl is never fitted on, so its rotation figure is the shipped model's held-out
figure. The model replaces the rules only when it wins on the rotation (`tune.learned_wins` on
the mean of paraphrases kept and wrong sentences dropped); the file says which decides.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ..answer.support import SupportChecker
from ..answer.support_learned import FEATURES, MODEL_FILE, measure, row
from ..scoring.learned import MODEL_DIR, Linear, linear
from .eval_all import ROOT
from .grounding_eval import SHOULD_KEEP, context_of, engines_for, load
from .tune import _round, learned_wins

SETS = ("sentences", "held_out", "fresh")
FITTED_ON = ("sentences", "fresh")
C = 1.0  # regularisation (scikit-learn's default)
ROUNDS = 8  # refits while the best candidate of a sentence changes


def measured(rows: list[dict], engines: dict) -> list[dict]:
    """Each sentence with its label, the rules' verdict and its candidates' features (6 decimals:
    the fit reproduces from the same figures)."""
    checkers, out = {}, []
    for sentence in rows:
        key = (sentence["corpus"], sentence["question"])
        if key not in checkers:
            engine = engines[sentence["corpus"]]
            checkers[key] = SupportChecker(context_of(engine, sentence["question"]), engine.embedder, model=None)
        checker = checkers[key]
        guard, candidates = measure(checker, sentence["sentence"])
        out.append({"kind": sentence["kind"], "keep": sentence["kind"] in SHOULD_KEEP,
                    "rules_kept": checker.ruled(sentence["sentence"]).kept, "guard": guard,
                    "candidates": [[round(v, 6) for v in row(c.values)] for c in candidates]})
    return out


def fit(records: list[dict], c: float = C) -> Linear:
    from sklearn.linear_model import LogisticRegression

    records = [r for r in records if r["candidates"]]
    tables = [np.asarray(r["candidates"]) for r in records]
    everything = np.vstack(tables)
    mean, scale = everything.mean(axis=0), everything.std(axis=0)
    scale[scale < 1e-9] = 1.0
    at = {name: FEATURES.index(name) for name in ("lexical", "closeness")}
    picks = [int(np.argmax(t[:, at["lexical"]] + t[:, at["closeness"]])) for t in tables]
    labels = [int(r["keep"]) for r in records]
    model = None
    for _ in range(ROUNDS):
        chosen = np.asarray([t[p] for t, p in zip(tables, picks)])
        fitted = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit((chosen - mean) / scale, labels)
        model = Linear(FEATURES, mean, scale, fitted.coef_[0], float(fitted.intercept_[0]))
        again = [int(np.argmax(model.scores(t.tolist()))) for t in tables]
        if again == picks:
            break
        picks = again
    return model


def kept(record: dict, model: Linear | None) -> bool:
    if model is None:
        return record["rules_kept"]
    return bool(record["candidates"]) and float(np.max(model.scores(record["candidates"]))) > 0


def figures(records: list[dict], model: Linear | None) -> dict:
    said = [kept(r, model) for r in records]
    good = [s for s, r in zip(said, records) if r["keep"]]
    wrong = [not s for s, r in zip(said, records) if not r["keep"]]
    kinds = {}
    for s, r in zip(said, records):
        kinds.setdefault(r["kind"], [0, 0])
        kinds[r["kind"]][0] += 1
        kinds[r["kind"]][1] += s
    out = {"paraphrases_kept": _round(sum(good) / max(1, len(good))), "wrong_dropped": _round(sum(wrong) / max(1, len(wrong)))}
    out["mean"] = _round((out["paraphrases_kept"] + out["wrong_dropped"]) / 2)
    return {**out, "kept_by_kind": {k: f"{v[1]}/{v[0]}" for k, v in sorted(kinds.items())}}


def rotation(by_set: dict[str, list[dict]], c: float = C) -> dict:
    """Each set scored by the rules and by a model fitted on the other sets."""
    table = {}
    for name, records in by_set.items():
        model = fit([r for other, rs in by_set.items() if other != name for r in rs], c)
        table[name] = {"sentences": len(records), "rules": figures(records, None), "learned": figures(records, model)}
    return table


def data_hash(by_set: dict[str, list[dict]]) -> str:
    return hashlib.sha256(json.dumps(by_set, sort_keys=True).encode()).hexdigest()[:16]


def report(table: dict) -> str:
    lines = ["grounding: paraphrases kept / wrong dropped, each set by a model fitted on the others",
             "set         n    rules          learned"]
    for name, row_ in table.items():
        r, l_ = row_["rules"], row_["learned"]
        lines.append(f"{name:<10} {row_['sentences']:>3}   {r['paraphrases_kept']:.3f} / {r['wrong_dropped']:.3f}   "
                     f"{l_['paraphrases_kept']:.3f} / {l_['wrong_dropped']:.3f}")
    return "\n".join(lines)


def run(db_root: str, out: str | None, check: bool) -> int:
    engines, by_set = {}, {}
    for name in SETS:
        rows = load(ROOT / "eval" / "grounding" / f"{name}.jsonl")
        by_set[name] = measured(rows, engines_for(rows, Path(db_root), engines))
    table = rotation(by_set)
    print(report(table))
    if check:
        return 0
    folds = {name: {"rules": row_["rules"]["mean"], "learned": row_["learned"]["mean"]} for name, row_ in table.items()}
    chosen = "learned" if learned_wins(folds, "rules", "learned") else "rules"
    model = fit([r for name in FITTED_ON for r in by_set[name]])
    data = {"command": "citebot tune --grounding DB_ROOT", "data_hash": data_hash(by_set),
            "fitted_on": [f"eval/grounding/{name}.jsonl" for name in FITTED_ON], "chosen": chosen,
            **model.as_dict(), "rotation": table}
    linear(data, FEATURES)  # what is written must load
    path = Path(out or MODEL_DIR) / MODEL_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"grounding: {chosen} decides, written to {path}")
    return 0
