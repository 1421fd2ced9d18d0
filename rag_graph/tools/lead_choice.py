"""What the writer's lead sentence is, judged, and what would tell a better one:

    python -m rag_graph.tools.lead_choice --out .citebot/labels --db DIR         # record + measure
    python -m rag_graph.tools.lead_choice --out .citebot/labels --check --fit    # + the held-out ranking model

Every question is asked through the real flow (`Engine.run`, with its history); for the context
the flow gave the writer, the pool (its best few sentences, best first) is recorded with each
sentence's signals (`answer/extractive/lead.py` FEATURES) and which one the answer leads with.
One `<set>.lead.jsonl` per set (`--force` rebuilds; rebuild after changing the writer).
Measured on the DEV halves against the sentences a person judged (eval/judged/): how many leads
are distractors, how many of those have a sentence judged to answer in the pool (in the lead's
chunk or another, and its place in the writer's order), and, over those pairs, how well each
signal alone tells the answering sentence from the distractor lead (ROC AUC; .5 = no signal).
`--fit` fits a ranking model over those signals on every dev question's pairs of judged pool
sentences (one that answers against a distractor, both ways round) and measures, with each corpus
left out of the fit, what moving the sentence it ranks first ahead of the lead would do when it
out-ranks the lead by each margin: the dev leads it swaps, by judgment before and after, and the
keywords the lead holds (dev and test halves, aggregate). Nothing is written: end to end, the
model at margin 1.0 lost an 18F test half 0.027 of answer recall (docs/measuring.md).
The pool is recorded in the order of the writer's own score; its lead is the one `pick` takes
from that order (its first sentence that is no example)."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np

from ..answer.extractive.lead import FEATURES, rows
from ..answer.passages import EXAMPLE
from ..language.words import terms
from ..scoring.learned import Linear
from .evaluation import contains
from .judged_inclusion import ANSWERS, DISTRACTOR, judged_options, key, recorded
from .labels import record_set, writer_choice
from .tune_inclusion import auc

SUFFIX = ".lead.jsonl"
C = 0.1  # ~40 questions' pairs for 16 signals: regularised harder than scikit-learn's 1.0
MARGINS = (0.5, 1.0, 1.5, 2.0, 3.0)


def record_case(engine, case) -> dict:
    record = {"question": case.question, "split": case.split, "keywords": case.keywords, "pool": []}
    choice = writer_choice(engine, case)
    if choice is None:
        return record
    question, _, (picked, pool, _, weights, closeness) = choice
    table = rows(pool, closeness, weights, set(terms(question.own)))
    record["lead"] = next((n for n, c in enumerate(pool) if not EXAMPLE.match(c.text)), -1)
    record["picked"] = [c.text for c in picked]
    record["pool"] = [{"text": c.text, "rank": c.rank, "position": c.position, "row": [round(v, 6) for v in row],
                       "keywords": sum(contains(c.text, k) for k in case.keywords)}
                      for c, row in zip(pool, table)]
    return record


def build_set(name: str, db: Path, out: Path, force: bool) -> Path | None:
    return record_set(name, db, out, force, SUFFIX, record_case)


def judgments(record: dict, judged: dict) -> list[str | None]:
    return [judged.get(key(record["set"], record["question"], c["text"])) for c in record["pool"]]


def leads(records: list[dict], judged: dict) -> dict:
    """Over the dev records with a lead in the pool: the leads by judgment, and for each
    distractor lead whether a pool sentence judged to answer stands in its chunk or another, and
    at which place of the writer's order; plus the (distractor lead, answering sentence) pairs."""
    counts, where, places, pairs = Counter(), Counter(), Counter(), []
    for record in records:
        if record["split"] != "dev" or record.get("lead", -1) < 0:
            continue
        said = judgments(record, judged)
        lead = record["pool"][record["lead"]]
        counts[said[record["lead"]] or "not judged"] += 1
        if said[record["lead"]] != DISTRACTOR:
            continue
        answering = [n for n, s in enumerate(said) if s == ANSWERS]
        where["an answering sentence in the pool" if answering else "none judged to answer in the pool"] += 1
        for n in answering:
            where["same chunk" if record["pool"][n]["rank"] == lead["rank"] else "other chunk"] += 1
            places[n] += 1
            pairs.append((lead["row"], record["pool"][n]["row"]))
    return {"leads": dict(counts), "distractor leads": dict(where), "places": dict(sorted(places.items())),
            "pairs": pairs}


def pair_auc(pairs: list[tuple[list[float], list[float]]]) -> dict[str, float | None]:
    """Per signal: how well it ranks the answering sentence above the distractor lead (AUC over
    both groups' values)."""
    out = {}
    for n, name in enumerate(FEATURES):
        values = [lead[n] for lead, _ in pairs] + [answer[n] for _, answer in pairs]
        out[name] = auc(values, [False] * len(pairs) + [True] * len(pairs))
    return out


def pairs(records: list[dict], judged: dict) -> tuple[np.ndarray, np.ndarray]:
    """Row differences of every dev question's (answering, distractor) pool sentences, both ways
    round (1 when the first answers)."""
    table, signs = [], []
    for record in records:
        if record["split"] != "dev" or not record["pool"]:
            continue
        said = judgments(record, judged)
        found = [np.asarray(c["row"], dtype=float) for c in record["pool"]]
        for a in (n for n, s in enumerate(said) if s == ANSWERS):
            for d in (n for n, s in enumerate(said) if s == DISTRACTOR):
                table += [found[a] - found[d], found[d] - found[a]]
                signs += [1, 0]
    return np.asarray(table).reshape(-1, len(FEATURES)), np.asarray(signs)


def fit(records: list[dict], judged: dict) -> Linear:
    from sklearn.linear_model import LogisticRegression

    table, signs = pairs(records, judged)
    scale = table.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=C, fit_intercept=False, max_iter=5000).fit(table / scale, signs)
    return Linear(FEATURES, np.zeros(len(FEATURES)), scale, model.coef_[0], 0.0)


def swapped(record: dict, model: Linear, margin: float) -> int:
    """The pool place the model's lead takes (the recorded lead when none out-ranks it by margin)."""
    scores = model.scores([c["row"] for c in record["pool"]])
    best = max((n for n, c in enumerate(record["pool"]) if not EXAMPLE.match(c["text"])), key=lambda n: scores[n])
    return best if scores[best] - scores[record["lead"]] > margin else record["lead"]


def held_out(records: list[dict], judged: dict) -> dict:
    """Per margin, each corpus's records read by the model fitted without that corpus: the dev
    leads swapped (judgment before -> after, "-" not judged) and the keywords the lead holds."""
    models = {corpus: fit([r for r in records if r["corpus"] != corpus], judged)
              for corpus in sorted({r["corpus"] for r in records})}
    out = {}
    for margin in MARGINS:
        moves, held = Counter(), Counter()
        for record in (r for r in records if r["pool"] and r.get("lead", -1) >= 0):
            new = swapped(record, models[record["corpus"]], margin)
            held[f"{record['split']} before"] += record["pool"][record["lead"]]["keywords"]
            held[f"{record['split']} after"] += record["pool"][new]["keywords"]
            if record["split"] == "dev" and new != record["lead"]:
                said = judgments(record, judged)
                moves[f"{said[record['lead']] or '-'} -> {said[new] or '-'}"] += 1
        out[str(margin)] = {"swaps": dict(moves.most_common()), "lead keywords": dict(sorted(held.items()))}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = judged_options(__doc__.splitlines()[0], "measure what is recorded; record nothing")
    parser.add_argument("--fit", action="store_true", help="fit the lead ranking model and measure it held out")
    args = parser.parse_args(argv)
    records, judged = recorded(args, SUFFIX, build_set)
    if not records:
        print(f"nothing recorded in {args.out}: run without --check", file=sys.stderr)
        return 1
    found = leads(records, judged)
    print(f"dev leads by judgment: {found['leads']}")
    print(f"distractor leads: {found['distractor leads']}; answering sentence's place in the pool: {found['places']}")
    if found["pairs"]:
        print("answering pool sentence against the distractor lead, ROC AUC per signal:")
        for name, value in sorted(pair_auc(found["pairs"]).items(), key=lambda item: -abs((item[1] or .5) - .5)):
            print(f"  {name:16} {'-' if value is None else f'{value:.3f}'}")
    if args.fit:
        figures = held_out(records, judged)
        for margin, row in figures.items():
            print(f"margin {margin}, each corpus held out: dev leads swapped {row['swaps']}; "
                  f"lead keywords {row['lead keywords']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
