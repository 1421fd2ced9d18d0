"""Whether a chat model, asked "does this evidence support this claim?", tells a faithful
paraphrase from a wrong one better than the support check's rules (answer/support.py):
`python -m rag_graph.tools.grounding_judge --url http://127.0.0.1:PORT/v1 --set eval/grounding/held_out.jsonl
--db-root DIR [--out judged.json]`.

Each labelled sentence of a set (see grounding_eval) is measured three ways against the context
the flow selects for its question: the rules' verdict, the learned decision's score (the
coefficients of rag_graph/scoring/grounding.json, whatever that file says decides) and the
model's judgement. The model gets one short prompt per sentence — the `evidence` context
sentences closest to it (cosine) and the claim — and answers yes or no at temperature 0; what is
read is the margin log P(yes) - log P(no) of its first token (from the server's top log
probabilities), so a threshold can be set on one set and measured on another. `--from FILE`
re-reads measured rows instead of asking again.

Printed, per set: kept % of paraphrases / dropped % of the rest for the rules, the judge alone
(margin > threshold), the judge behind the rules' guards (pleasantry, fragment, a number no chunk
holds, too few shared words: answer/support_learned.measure), the judge as a veto on what the
rules keep, and the judge deciding only where the learned score is within `--unsure` of even;
and the median milliseconds per judgement.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

from ..answer.support import SupportChecker
from ..answer.support_learned import FEATURES, measure, row
from ..scoring.learned import linear, model_file, read
from .grounding_eval import SHOULD_KEEP, context_of, engines_for, load

SYSTEM = "You check facts. Answer only yes or no."
ASK = "Evidence: {evidence}\nClaim: {claim}\nDoes the evidence support the claim? Answer yes or no."
FLOOR = -30.0  # a token outside the top log probabilities is at most this likely


def ask(url: str, claim: str, evidence: list[str], timeout: float = 120) -> tuple[float, str]:
    """(log P(yes) - log P(no) of the first token, the reply) for one claim."""
    body = {"model": "judge", "temperature": 0, "max_tokens": 2, "logprobs": True, "top_logprobs": 20,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": ASK.format(evidence=" ".join(evidence), claim=claim)}]}
    request = urllib.request.Request(url.rstrip("/") + "/chat/completions", json.dumps(body).encode(),
                                      {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        choice = json.load(response)["choices"][0]
    top = choice["logprobs"]["content"][0]["top_logprobs"]
    floor = min([t["logprob"] for t in top], default=FLOOR)

    def best(word: str) -> float:
        return max([t["logprob"] for t in top if t["token"].strip().lower() == word], default=floor)
    return best("yes") - best("no"), choice["message"]["content"]


def closest(checker: SupportChecker, claim: str, k: int) -> list[str]:
    """The `k` context sentences closest to the claim (cosine), closest first."""
    pool = [s for chunk in checker.chunks for s in checker._chunk_sentences(chunk)]
    pool = list(dict.fromkeys(pool))
    if not pool:
        return []
    key = "judge-pool"
    if key not in checker._vectors:
        checker._vectors[key] = checker.embed(pool)
    scores = checker._vectors[key] @ checker.embed([claim])[0]
    return [pool[i] for i in np.argsort(-scores)[:k]]


def learned_score(checker: SupportChecker, model, sentence: str) -> float | None:
    """The learned decision's best candidate score; None when a guard drops the sentence first."""
    guard, measured = measure(checker, sentence)
    if guard:
        return None
    return float(max(model.scores([row(m.values) for m in measured])))


def collect(rows: list[dict], engines: dict, url: str | None, k: int) -> list[dict]:
    path, _ = model_file("grounding.json")
    model = linear(read(path), FEATURES, path)
    checkers: dict[tuple[str, str], SupportChecker] = {}
    out = []
    for at, item in enumerate(rows):
        key = (item["corpus"], item["question"])
        if key not in checkers:
            engine = engines[item["corpus"]]
            checkers[key] = SupportChecker(context_of(engine, item["question"]), engine.embedder, model=None)
        checker = checkers[key]
        measured = {**item, "rules": checker.ruled(item["sentence"]).kept,
                    "learned": learned_score(checker, model, item["sentence"])}
        if url:
            evidence = closest(checker, item["sentence"], k)
            started = time.perf_counter()
            measured["margin"], measured["reply"] = ask(url, item["sentence"], evidence)
            measured["ms"] = round(1000 * (time.perf_counter() - started))
            measured["evidence"] = evidence
        out.append(measured)
        print(f"{at + 1}/{len(rows)}", file=sys.stderr, end="\r")
    return out


def rate(rows: list[dict], kept) -> str:
    good = [kept(r) for r in rows if r["kind"] in SHOULD_KEEP]
    bad = [not kept(r) for r in rows if r["kind"] not in SHOULD_KEEP]
    return f"{100 * sum(good) / max(1, len(good)):.1f} / {100 * sum(bad) / max(1, len(bad)):.1f}"


def report(rows: list[dict], threshold: float, unsure: float) -> dict:
    judged = [r for r in rows if "margin" in r]
    def says(r):
        return r["margin"] > threshold
    out = {"rules": rate(rows, lambda r: r["rules"]),
           "learned (> 0)": rate(rows, lambda r: r["learned"] is not None and r["learned"] > 0)}
    if judged:
        out.update({
            "judge alone": rate(judged, says),
            "judge behind the guards": rate(judged, lambda r: r["learned"] is not None and says(r)),
            "judge as veto on the rules": rate(judged, lambda r: r["rules"] and says(r)),
            f"judge where |learned| < {unsure}": rate(judged, lambda r: r["learned"] is not None and (
                says(r) if abs(r["learned"]) < unsure else r["learned"] > 0)),
            "ms per judgement (median)": statistics.median(r["ms"] for r in judged),
            "auc of the margin": round(auc(judged), 3)})
    return out


def pick(rows: list[dict], kept_by) -> float:
    """The threshold whose mean of kept % and dropped % is highest on `rows` (ties: the lowest)."""
    def score(t):
        good = [kept_by(r, t) for r in rows if r["kind"] in SHOULD_KEEP]
        bad = [not kept_by(r, t) for r in rows if r["kind"] not in SHOULD_KEEP]
        return sum(good) / max(1, len(good)) + sum(bad) / max(1, len(bad))
    candidates = sorted({r["margin"] for r in rows if "margin" in r})
    return max(candidates, key=lambda t: (score(t), -t), default=0.0)


def auc(rows: list[dict]) -> float:
    """How often a paraphrase's margin is above a wrong sentence's (0.5: no signal)."""
    good = [r["margin"] for r in rows if r["kind"] in SHOULD_KEEP]
    bad = [r["margin"] for r in rows if r["kind"] not in SHOULD_KEEP]
    pairs = [(g > b) + 0.5 * (g == b) for g in good for b in bad]
    return sum(pairs) / max(1, len(pairs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, help="eval/grounding/*.jsonl (repeatable)")
    parser.add_argument("--db-root", default=".citebot/eval-indexes")
    parser.add_argument("--url", help="an OpenAI-compatible endpoint (…/v1); without it only rules and learned")
    parser.add_argument("--evidence", type=int, default=3, help="context sentences shown to the judge")
    parser.add_argument("--threshold", type=float, default=0.0, help="keep when the margin is above this")
    parser.add_argument("--unsure", type=float, default=1.0, help="learned scores this close to 0 go to the judge")
    parser.add_argument("--out", help="write the measured rows here (one file per set: NAME.<set>.json)")
    parser.add_argument("--from", dest="source", help="read measured rows from NAME.<set>.json instead")
    parser.add_argument("--pick-on", help="with --from: set the threshold on this set's rows (NAME.<it>.json), "
                                          "the best mean of kept and dropped for the judge behind the guards")
    args = parser.parse_args(argv)
    if args.pick_on:
        rows = json.loads(Path(f"{args.source}.{Path(args.pick_on).stem}.json").read_text())
        args.threshold = pick(rows, lambda r, t: r["learned"] is not None and r["margin"] > t)
        print(f"threshold {args.threshold:.3f} (picked on {Path(args.pick_on).stem})")
    for name in args.set:
        stem = Path(name).stem
        if args.source:
            rows = json.loads(Path(f"{args.source}.{stem}.json").read_text())
        else:
            items = load(Path(name))
            rows = collect(items, engines_for(items, Path(args.db_root)), args.url, args.evidence)
            if args.out:
                Path(f"{args.out}.{stem}.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))
        print(stem, json.dumps(report(rows, args.threshold, args.unsure), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
