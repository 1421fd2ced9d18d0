"""`citebot tune`'s sentence scorer: which sentence of the writer's pool answers the question.

Fitted on the labeled sentences of `rag_graph.tools.sentence_labels` (each pool sentence's share
of the question's keywords) as a pairwise logistic regression within a question (for each
sentence that holds a keyword and each that holds none, the difference of their rows): the
writer needs the order of one question's sentences, not a score comparable across questions.

Measured as the writer uses it: the share of the question's keywords held by the sentence it
puts first (its best, an example skipped as `_pick` skips it), on the questions whose pool holds
a keyword at all, fitted on the dev halves and scored on the test halves, and leave one corpus
out. The fit replaces the hand score only when it wins both ways (`tune.learned_wins` on the
corpora, and on the test halves).
"""
from __future__ import annotations

import numpy as np

from ..scoring.learned import Linear
from ..scoring.sentences import FEATURES, order, rows

C = 1.0  # regularisation of the logistic regression (scikit-learn's default)


def choosable(records: list[dict]) -> list[dict]:
    """The answerable questions whose writer's pool holds a sentence with a keyword."""
    return [r for r in records if r["answerable"] and r["keywords"] and any(s["label"] > 0 for s in r["pool"])]


def pairs(records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    diffs, signs = [], []
    for record in choosable(records):
        table = np.asarray(rows(record["pool"]))
        labels = [s["label"] for s in record["pool"]]
        for i, good in enumerate(labels):
            for j, bad in enumerate(labels):
                if good > bad:  # each pair once in each direction: no intercept is needed
                    diffs += [table[i] - table[j], table[j] - table[i]]
                    signs += [1, 0]
    return np.asarray(diffs).reshape(-1, len(FEATURES)), np.asarray(signs)


def fit(records: list[dict], c: float = C) -> Linear:
    from sklearn.linear_model import LogisticRegression

    table = np.asarray([row for r in choosable(records) for row in rows(r["pool"])])
    mean, scale = table.mean(axis=0), table.std(axis=0)
    scale[scale < 1e-9] = 1.0
    diffs, signs = pairs(records)
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=5000).fit(diffs / scale, signs)
    return Linear(FEATURES, mean, scale, model.coef_[0], 0.0)


def first_held(record: dict, model: Linear | None) -> float:
    """The share of the keywords the sentence put first holds (an example is passed over)."""
    pool = record["pool"]
    ranked = order(pool, model)
    best = next((at for at in ranked if not pool[at]["example"]), ranked[0])
    return pool[best]["label"]


def held(records: list[dict], model: Linear | None) -> float | None:
    values = [first_held(r, model) for r in choosable(records)]
    return round(sum(values) / len(values), 4) if values else None


def loco(records: list[dict], c: float = C) -> dict[str, dict]:
    """Per corpus: keywords held by the first sentence, hand score and a fit on the other corpora."""
    table = {}
    for corpus in sorted({r["corpus"] for r in records}):
        mine = [r for r in records if r["corpus"] == corpus]
        rest = [r for r in records if r["corpus"] != corpus]
        if choosable(mine) and choosable(rest):
            table[corpus] = {"questions": len(choosable(mine)), "hand": held(mine, None),
                             "learned": held(mine, fit(rest, c))}
    return table


def halves(records: list[dict], c: float = C) -> dict:
    """Fitted on the dev halves, scored on both (dev: how well it fits; test: what it predicts)."""
    dev = [r for r in records if r.get("split") == "dev"]
    test = [r for r in records if r.get("split") == "test"]
    if not choosable(dev) or not choosable(test):
        return {}
    model = fit(dev, c)
    return {"dev_questions": len(choosable(dev)), "test_questions": len(choosable(test)),
            "dev_hand": held(dev, None), "dev_learned": held(dev, model),
            "test_hand": held(test, None), "test_learned": held(test, model)}


def report(folds: dict, split: dict) -> str:
    lines = ["sentence choice: keywords held by the sentence put first, fitted on the other corpora",
             "corpus       n    hand   learned"]
    for corpus, row in folds.items():
        lines.append(f"{corpus:<10} {row['questions']:>4}   {row['hand']:.3f}   {row['learned']:.3f}")
    if split:
        lines.append(f"dev (fit)  {split['dev_questions']:>4}   {split['dev_hand']:.3f}   {split['dev_learned']:.3f}")
        lines.append(f"test       {split['test_questions']:>4}   {split['test_hand']:.3f}   {split['test_learned']:.3f}")
    return "\n".join(lines)
