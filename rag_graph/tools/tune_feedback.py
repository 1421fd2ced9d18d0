"""`citebot tune --feedback`: a deployment's own chunk ranker, learned from its 👍/👎 records.

A vote labels the chunk the answer cites first, for the question as it was asked:
- 👍: that chunk is right for the question (it should stay above the other candidates);
- 👎 with the reason "wrong" or "not what I asked": it is wrong (the others should pass it);
- any other 👎 ("outdated", "incomplete", no reason) says nothing about the ranking: ignored.
Each usable question is asked again through the real flow, with the hand weights, and its
candidates measured as `tools.labels` measures the eval questions. Questions asked inside a
thread are left out (asked alone they are another question), and so are records whose cited
chunk is no longer among the question's candidates (the documents changed).

The fit is tune.fit's pairwise logistic regression on the eval labels (the dev halves of the
sets built by `python -m rag_graph.tools.labels`) plus the feedback, the feedback weighing as
much as all the eval pairs together. The newest questions (HELD_OUT of them) are held out.
The model is written to the state folder (`scoring/deployment.py` reads it) only if it scores
better than the shipped hand weights on the held-out feedback AND loses no more than
PUBLIC_LOSS of MRR on either half of the eval sets (the dev half's questions are in the fit,
and the votes pull away from them; each corpus's test figure is printed, not a guard: one
corpus's 30 test questions move by 0.02 on a single question); otherwise nothing is
written and the reason is printed. Deleting the file rolls back."""
from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..scoring import deployment
from ..scoring.features import FEATURES, rows, signals
from ..scoring.learned import Ranker
from ..scoring.relevance import by_relevance
from . import tune

MIN_RECORDS = 20  # usable votes, fewer say too little to validate anything on
HELD_OUT = 0.3  # share of the questions, newest first, the fit is validated on
NEGATIVE_REASONS = ("wrong", "not_asked")  # bot/gaps.REASONS: the cited source was not the answer
PUBLIC_LOSS = 0.02  # MRR each half of the eval sets may lose, at most (per corpus: reported)
# The votes' pairs weigh this much against all the eval pairs together, and C (logistic
# regression's inverse penalty) holds the correction of the hand order small. Chosen on a
# simulated deployment of the bundled corpus (96 votes, 29 held out; docs/measuring.md):
# weight 1 moved the held-out votes as far (0.759 -> 0.810) but lost 0.030 MRR on the eval dev
# half; 0.5 -> 0.805 and -0.011 / -0.009 (dev / test), and cited the right section for 2 more of
# 124 questions, none fewer; C 0.001 or weight 0.3 moved no cited section at all.
FEEDBACK_WEIGHT = 0.5
C = 0.003
# The eval pairs' total weight, whatever their number: that of the dev pairs of all 15 labeled
# sets (6,618), so C holds the correction as firmly when only the bundled corpus's sets are
# labeled (656 pairs), as on a clean clone without the public handbooks.
PAIR_MASS = 6600.0
HAND_SCALE = 100.0  # the hand score's column, scaled so its coefficient is all but unpenalised
HEAD = 20  # candidates asked for per question, as tools.labels does


class Refused(Exception):
    """Nothing is written; the message says why, in one line."""


def usable(records: list[dict]) -> tuple[list[dict], Counter]:
    """The votes that label a ranking (each with `sign` +1 / -1), and why the others do not."""
    kept, skipped = [], Counter()
    for record in records:
        vote, reason = record.get("vote"), record.get("reason") or ""
        if "history" not in record:
            skipped["recorded before votes kept their thread turns"] += 1
        elif record.get("history"):
            skipped["asked inside a thread"] += 1
        elif record.get("status") != "answered" or not record.get("chunk_ids") or not record.get("question"):
            skipped["not an answer with a source"] += 1
        elif vote == "helpful":
            kept.append({**record, "sign": 1})
        elif vote == "not_helpful" and reason in NEGATIVE_REASONS:
            kept.append({**record, "sign": -1})
        else:
            skipped["a 👎 for another reason than wrong / not what I asked"] += 1
    return kept, skipped


def labeled(engine, record: dict, vocabulary) -> dict | None:
    """The question asked again: its candidates measured, labeled from the vote; None when the
    cited chunk is not among the candidates the ranker re-orders."""
    state = engine.run(record["question"])
    ranked = state.get("ranked_chunks") or []
    late = engine.deps.tuning.late_candidates
    head = by_relevance(ranked[:late]) + ranked[late:HEAD]
    cited = record["chunk_ids"][0]
    if cited not in [c["chunk_id"] for c in head[:tune.CANDIDATES]]:
        return None
    query = state.get("retrieval_query") or record["question"]
    measured = signals(query, head, vocabulary, engine.embedder)
    good = (lambda c: c["chunk_id"] == cited) if record["sign"] > 0 else (lambda c: c["chunk_id"] != cited)
    return {"question": record["question"], "time": str(record.get("time") or ""), "sign": record["sign"],
            "cited": cited, "candidates": [{"chunk_id": c["chunk_id"], "text": c["text"], "label": float(good(c)), **m}
                                           for c, m in zip(head, measured)]}


def held_out(labeled_: list[dict]) -> tuple[list[dict], list[dict]]:
    """(train, held out): the newest HELD_OUT of the questions (by their last vote, the file
    being oldest first) held out, every vote on a question on the same side, so the check never
    scores a question the fit has seen."""
    last = {record["question"].strip().lower(): n for n, record in enumerate(labeled_)}
    questions = sorted(last, key=last.get)
    held = set(questions[len(questions) - max(1, round(HELD_OUT * len(questions))):])
    return ([r for r in labeled_ if r["question"].strip().lower() not in held],
            [r for r in labeled_ if r["question"].strip().lower() in held])


def score(records: list[dict], model: Ranker) -> float:
    """Mean over the votes: 1 / the cited chunk's rank for a 👍, 1 - that for a 👎."""
    values = []
    for record in records:
        head = record["candidates"][:model.candidates]
        order = list(np.argsort(-model.scores(rows(head)), kind="stable"))
        rank = 1 + order.index(next(i for i, c in enumerate(head) if c["chunk_id"] == record["cited"]))
        values.append(1 / rank if record["sign"] > 0 else 1 - 1 / rank)
    return sum(values) / len(values)


def fit(public: list[dict], feedback: list[dict], c: float | None = None, weight: float | None = None) -> Ranker:
    """tune.fit's pairwise fit on the public questions and the votes, learned as a correction
    of the hand order: the pair's difference in hand score is a column of its own, scaled up
    so the penalty barely touches it, and the other columns' coefficients are pulled towards
    0. Little evidence leaves the hand order; only what the votes insist on moves it. The
    votes' pairs weigh FEEDBACK_WEIGHT times all the public pairs together."""
    from sklearn.linear_model import LogisticRegression

    c, weight = C if c is None else c, FEEDBACK_WEIGHT if weight is None else weight
    cut = tune.CANDIDATES
    table = np.asarray([row for r in tune.scored(public) + feedback for row in rows(r["candidates"][:cut])])
    mean, scale = table.mean(axis=0), table.std(axis=0)
    scale[scale < 1e-9] = 1.0
    public_diffs, public_signs = tune.pairs(public, cut)
    voted = [dict(r, answerable=True, keywords=["vote"]) for r in feedback]  # tune.pairs reads labels only
    vote_diffs, vote_signs = tune.pairs(voted, cut)
    if not len(vote_diffs):
        raise Refused("the votes give no pair of a right and a wrong chunk to learn from")
    diffs = np.vstack([public_diffs, vote_diffs])
    hand = tune.hand_ranker().coef
    columns = np.hstack([diffs / scale, HAND_SCALE * (diffs @ hand)[:, None]])
    weights = np.concatenate([np.full(len(public_diffs), PAIR_MASS / max(len(public_diffs), 1)),
                              np.full(len(vote_diffs), weight * PAIR_MASS / len(vote_diffs))])
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=5000).fit(
        columns, np.concatenate([public_signs, vote_signs]), sample_weight=weights)
    correction, on_hand = model.coef_[0][:-1], model.coef_[0][-1]
    # hand . x = (hand * scale) . (x - mean) / scale + a constant, which no order depends on
    return Ranker(FEATURES, mean, scale, correction + on_hand * HAND_SCALE * hand * scale, 0.0, cut)


def public_check(dev: list[dict], test: list[dict], model: Ranker) -> dict[str, dict]:
    """MRR of the hand weights and of the model on each half of the eval sets, and on each
    corpus's test half."""
    groups = {"dev half": dev, "test half": test,
              **{f"{corpus} test half": [r for r in test if r["corpus"] == corpus] for corpus in sorted({r["corpus"] for r in test})}}
    return {name: {"questions": len(tune.scored(held)), "shipped": round(tune.mrr(held, tune.hand_ranker()), 4),
                   "fitted": round(tune.mrr(held, model), 4)} for name, held in groups.items() if tune.scored(held)}


def halves(public: list[dict]) -> tuple[list[dict], list[dict]]:
    """The eval sets' (dev, test) halves, or Refused when one has no labeled question."""
    dev = [r for r in public if r.get("split") == "dev"]
    test = [r for r in public if r.get("split") == "test"]
    if not tune.scored(dev) or not tune.scored(test):
        raise Refused("no labeled eval questions to check against (both halves are needed): build them with "
                      "`python -m rag_graph.tools.labels --out DIR --db DIR` and pass --labels DIR")
    return dev, test


def decide(train: list[dict], held: list[dict], public: list[dict]) -> dict:
    """The model and its figures, or Refused with the reason."""
    dev, test = halves(public)
    model = fit(dev, train)
    shipped, fitted = score(held, tune.hand_ranker()), score(held, model)
    public_ = public_check(dev, test, model)
    figures = {"held_out_feedback": {"records": len(held), "shipped": round(shipped, 4), "fitted": round(fitted, 4)},
               "eval_mrr": public_}
    print(f"held-out feedback ({len(held)} votes): shipped {shipped:.3f}, fitted {fitted:.3f}")
    for name, row in public_.items():
        print(f"eval sets, {name} ({row['questions']} questions): MRR shipped {row['shipped']:.3f}, fitted {row['fitted']:.3f}")
    if fitted <= shipped:
        raise Refused(f"on the held-out feedback the fit scores {fitted:.3f}, no better than the shipped weights' "
                      f"{shipped:.3f}")
    for half in ("dev half", "test half"):
        row = public_[half]
        if row["fitted"] < row["shipped"] - PUBLIC_LOSS:
            raise Refused(f"the fit loses more than {PUBLIC_LOSS} MRR on the eval sets' {half} "
                          f"({row['shipped']:.3f} -> {row['fitted']:.3f})")
    return {"model": model, **figures}


def run(args, settings, votes: list[dict], where: str) -> int:
    """`citebot tune --feedback [FILE]` on the `votes` read from `where` (the bot's feedback log,
    oldest first): 0 when a model was written, 1 when it was refused."""
    from ..engine import Engine
    from .labels import load

    records, skipped = usable(votes)
    if len(records) < MIN_RECORDS:
        print(f"refused: {len(records)} usable votes in {where}, at least {MIN_RECORDS} are needed"
              f"{_skipped(skipped)}; nothing written")
        return 1
    public = load(Path(args.labels))
    try:
        halves(public)  # before the votes are asked again, the slow part
    except Refused as why:
        print(f"refused: {why}; nothing written")
        return 1
    engine = Engine(settings.model_copy(update={"top_k": HEAD}))
    if not engine.ready:
        print(f"error: no index at {settings.db}: run `citebot index` first", file=sys.stderr)
        return 2
    engine.deps.ranker_file = None  # the votes are measured against the hand ranking, as they were cast
    engine.warm_up()
    vocabulary = engine.index.vocabulary()
    measured = [m for r in records if (m := labeled(engine, r, vocabulary)) is not None]
    if len(records) > len(measured):
        skipped["the cited chunk is no longer among the question's candidates"] += len(records) - len(measured)
    print(f"{len(measured)} votes labeled from {where}{_skipped(skipped)}")
    train, held = held_out(measured)
    target = deployment.path_in(settings.state_dir)
    try:
        if len(measured) < MIN_RECORDS:
            raise Refused(f"{len(measured)} usable votes, at least {MIN_RECORDS} are needed")
        result = decide(train, held, public)
    except Refused as why:
        print(f"refused: {why}; nothing written, {deployment.serving(target)[1]} serve")
        return 1
    model = result.pop("model")
    data = {**model.as_dict(), "candidates": model.candidates, "command": "citebot tune --feedback",
            "fitted": datetime.now(timezone.utc).isoformat(timespec="seconds"), "feedback_records": len(train),
            "data_hash": _hash(votes), **result}
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(target.name + ".tmp")
    scratch.write_text(json.dumps(data, indent=1) + "\n")
    scratch.replace(target)  # the flow never reads half a file
    print(f"written: {target} (delete it to go back to the shipped weights)")
    return 0


def _hash(votes: list[dict]) -> str:
    return hashlib.sha256(json.dumps(votes, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _skipped(skipped: Counter) -> str:
    return (" (left out: " + "; ".join(f"{n} {why}" for why, n in skipped.most_common()) + ")") if skipped else ""
