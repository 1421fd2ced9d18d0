"""`citebot eval`: retrieval and answer quality of the whole graph on a JSONL question set.

Every question goes through `Engine.run(question, history)`, the path a Slack thread takes, and
is scored on the chunks the graph ranked (the exact text that was embedded and ranked) and on
its `final_output`. The metric functions below are pure; `main` only runs and prints.

Keywords match case-insensitively as substrings. Per question:
- reciprocal rank: per keyword 1 / rank of the first top-k chunk containing it (0 if none),
  averaged over the keywords; MRR is its mean over questions;
- nDCG@k with binary relevance (a chunk is relevant when it contains any keyword); the ideal
  ordering is the same top-k list with its relevant chunks first, so it measures order;
- keyword coverage@k: share of keywords found somewhere in the top-k chunks;
- answer keyword recall: share of keywords found in the answer text.
Retrieval metrics and answer recall use the answerable questions that have keywords.

Each line may name its `split`, "dev" (tune on it) or "test" (only report it); `--split` scores one
half, and the default (all) also reports each half on its own. A line without a split counts in
"all" only.

`--baseline` adds the pipeline a tutorial builds (fixed 500-character windows with 200 overlap,
dense-only top-k, same embedding model, own LanceDB table in a temp folder), scored on the
retrieval metrics. It sees the question alone: a tutorial has no notion of thread history.
"""
from __future__ import annotations

import json
import math
import re
import tempfile
import time
from pathlib import Path

from ..config import Settings
from .question_sets import SPLITS, Case, QuestionSetError, load_cases, parse_case, select_split  # noqa: F401 (imported from here too)

RETRIEVAL_METRICS = ("mrr", "ndcg", "keyword_coverage", "avg_chunk_chars")
BASELINE_CHUNK_CHARS = 500
BASELINE_OVERLAP = 200


# ---- metrics (pure) -----------------------------------------------------------------------

def contains(text: str, keyword: str) -> bool:
    return keyword.casefold() in text.casefold()


def reciprocal_rank(texts: list[str], keywords: list[str]) -> float:
    """Mean over keywords of 1 / (1-based rank of the first text containing it), 0 when absent."""
    if not keywords:
        raise ValueError("reciprocal rank needs keywords")
    total = 0.0
    for keyword in keywords:
        rank = next((i for i, text in enumerate(texts, 1) if contains(text, keyword)), None)
        total += 1.0 / rank if rank else 0.0
    return total / len(keywords)


def ndcg(texts: list[str], keywords: list[str], k: int) -> float:
    """Binary-relevance nDCG@k; the ideal is the same top-k with its relevant chunks first."""
    relevance = [any(contains(text, keyword) for keyword in keywords) for text in texts[:k]]
    dcg = sum(1.0 / math.log2(rank + 1) for rank, relevant in enumerate(relevance, 1) if relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, sum(relevance) + 1))
    return dcg / ideal if ideal else 0.0


def keyword_coverage(texts: list[str], keywords: list[str]) -> float:
    if not keywords:
        raise ValueError("coverage needs keywords")
    return sum(any(contains(text, keyword) for text in texts) for keyword in keywords) / len(keywords)


def answer_recall(answer: str, keywords: list[str]) -> float:
    if not keywords:
        raise ValueError("answer recall needs keywords")
    return sum(contains(answer, keyword) for keyword in keywords) / len(keywords)


def abstained(output: dict) -> bool:
    return output.get("status") == "insufficient_context" and not output.get("citations")


def citations_valid(output: dict, context_ids: list[str]) -> bool:
    # a citation of a section names every chunk of it the answer rests on
    cited = {i for c in output.get("citations", []) for i in (c.get("chunk_ids") or [c["chunk_id"]])}
    return cited <= set(context_ids)


def percentile(values: list[float], p: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def score_retrieval(case: Case, texts: list[str], k: int) -> dict:
    """Retrieval scores of one question on its ranked chunk texts (None where not applicable)."""
    top = texts[:k]
    scored = case.answerable and bool(case.keywords)
    return {
        "rr": reciprocal_rank(top, case.keywords) if scored else None,
        "ndcg": ndcg(top, case.keywords, k) if scored else None,
        "keyword_coverage": keyword_coverage(top, case.keywords) if scored else None,
        "chunk_chars": [len(text) for text in top],
    }


def score_question(case: Case, texts: list[str], output: dict, context_ids: list[str], k: int,
                   latency_ms: float) -> dict:
    scores = score_retrieval(case, texts, k)
    scores.update({
        # what the asker reads: the answer and the notes shown with it
        "answer_recall": answer_recall(" ".join([output.get("answer", ""), *(output.get("notes") or [])]), case.keywords)
        if case.answerable and case.keywords else None,
        "answered": output.get("status") == "answered" if case.answerable else None,
        "abstained": abstained(output) if not case.answerable else None,
        # of every answer given: said with "I'm not sure…" first (the doubt model, scoring/doubt.py)
        "hedged": bool(output.get("hedged")) if output.get("status") == "answered" else None,
        "citations_valid": citations_valid(output, context_ids),
        "latency_ms": latency_ms,
    })
    return scores


def _mean(values) -> float | None:
    values = [float(v) for v in values if v is not None]
    return sum(values) / len(values) if values else None


def aggregate(scores: list[dict]) -> dict:
    """Summary metrics of a list of per-question scores (from score_question or score_retrieval)."""
    chars = [n for s in scores for n in s["chunk_chars"]]
    summary = {
        "questions": len(scores),
        "mrr": _mean(s["rr"] for s in scores),
        "ndcg": _mean(s["ndcg"] for s in scores),
        "keyword_coverage": _mean(s["keyword_coverage"] for s in scores),
        "avg_chunk_chars": sum(chars) / len(chars) if chars else None,
    }
    if scores and "latency_ms" in scores[0]:
        latencies = [s["latency_ms"] for s in scores]
        summary.update({
            "answer_recall": _mean(s["answer_recall"] for s in scores),
            "answerable": sum(s["answered"] is not None for s in scores),
            "answered_rate": _mean(s["answered"] for s in scores),
            "hedged_rate": _mean(s.get("hedged") for s in scores),
            "unanswerable": sum(s["abstained"] is not None for s in scores),
            "abstention_rate": _mean(s["abstained"] for s in scores),
            "invalid_citations": sum(not s["citations_valid"] for s in scores),
            "latency_p50_ms": percentile(latencies, 50),
            "latency_p95_ms": percentile(latencies, 95),
        })
    if scores and "cpu_ms" in scores[0]:  # the figure a busy machine moves least (see evaluate)
        summary["cpu_ms_per_question"] = _mean(s["cpu_ms"] for s in scores)
    return summary


def by_category(cases: list[Case], scores: list[dict]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for case, score in zip(cases, scores):
        groups.setdefault(case.category, []).append(score)
    return {category: aggregate(group) for category, group in sorted(groups.items())}


def by_split(cases: list[Case], scores: list[dict]) -> dict[str, dict]:
    """Each half's own summary (overall and per category); lines without a split are left out."""
    halves = {}
    for split in SPLITS:
        chosen = [i for i, case in enumerate(cases) if case.split == split]
        if chosen:
            half_scores = [scores[i] for i in chosen]
            halves[split] = {"overall": aggregate(half_scores),
                             "by_category": by_category([cases[i] for i in chosen], half_scores)}
    return halves


def ratios(ours: dict, baseline: dict) -> dict:
    return {name: (ours[name] / baseline[name] if ours.get(name) is not None and baseline.get(name) else None)
            for name in RETRIEVAL_METRICS}


# ---- the tutorial baseline ----------------------------------------------------------------

def fixed_windows(text: str, size: int = BASELINE_CHUNK_CHARS, overlap: int = BASELINE_OVERLAP) -> list[str]:
    """Fixed-size character windows, each starting `size - overlap` after the previous one."""
    if not 0 <= overlap < size:
        raise ValueError("overlap must be smaller than the window")
    text = text.strip()
    if len(text) <= size:
        return [text] if text else []
    step = size - overlap
    return [text[start:start + size] for start in range(0, len(text) - overlap, step)]


class Baseline:
    """Fixed windows over each document body, dense-only cosine top-k, in a temp LanceDB table."""

    def __init__(self, corpus_dir: Path, embedder):
        import lancedb

        from ..retrieval.ingest import load_corpus

        started = time.perf_counter()
        self.embedder = embedder
        corpus = load_corpus(corpus_dir)
        rows = [{"chunk_id": f"{document.source_id}#{n}", "source_id": document.source_id, "text": window}
                for document in corpus.documents for n, window in enumerate(fixed_windows(document.body))]
        vectors = embedder.encode([row["text"] for row in rows])
        for row, vector in zip(rows, vectors):
            row["vector"] = vector
        self._folder = tempfile.TemporaryDirectory(prefix="citebot-baseline-")
        self.table = lancedb.connect(self._folder.name).create_table("baseline", data=rows)
        self.stats = {"documents": len(corpus.documents), "chunks": len(rows), "embedded": len(rows),
                      "seconds": round(time.perf_counter() - started, 3)}

    def search(self, question: str, k: int) -> list[dict]:
        vector = self.embedder.encode([question])[0]
        rows = self.table.search(vector).distance_type("cosine").limit(k).to_list()
        return [{name: row[name] for name in ("chunk_id", "source_id", "text")} for row in rows]

    def close(self) -> None:
        self._folder.cleanup()


# ---- running and reporting ----------------------------------------------------------------

def _settings(args) -> Settings:
    corpus = Path(args.corpus) if getattr(args, "corpus", None) else None
    db = getattr(args, "db", None)
    if db is None and corpus is not None:
        # Evaluating another corpus must not overwrite the index the bot serves from.
        slug = re.sub(r"[^a-z0-9]+", "-", corpus.resolve().name.lower()).strip("-") or "corpus"
        db = str(Path(".citebot") / "eval" / slug)
    # The flow runs as the bot runs it: raising top_k to score deeper would search wider and
    # change answers (it turned a decline into an answer on one question of 1,100).
    return Settings.from_env(corpus=corpus, db=db)


def evaluate(engine, cases: list[Case], k: int, access=None) -> tuple[list[dict], list[dict]]:
    """Run every question through the graph, as asked in the place whose scope is `access`
    (None: documents for everyone): (report entries, per-question scores)."""
    entries, all_scores = [], []
    for case in cases:
        # The process's CPU time beside the wall time: on a machine other work shares, the wall
        # time of one question swings 2x between runs, its CPU time (all threads) far less.
        started, cpu = time.perf_counter(), time.process_time()
        state = engine.run(case.question, case.history, access=access)
        latency_ms = (time.perf_counter() - started) * 1000
        cpu_ms = (time.process_time() - cpu) * 1000
        ranked = state.get("ranked_chunks", [])[:k]
        output = state["final_output"]
        context_ids = [c["chunk_id"] for c in state.get("context", [])]
        scores = dict(score_question(case, [c["text"] for c in ranked], output, context_ids, k, latency_ms),
                      cpu_ms=cpu_ms)
        entries.append({
            "question": case.question, "category": case.category, "split": case.split, "history": case.history,
            "answerable": case.answerable, "keywords": case.keywords,
            "retrieved": [{name: c[name] for name in ("chunk_id", "source_id", "text")} for c in ranked],
            "context": context_ids,
            "final_output": output, "latency_ms": round(latency_ms, 1), "cpu_ms": round(cpu_ms, 1),
            "scores": {name: value for name, value in scores.items() if name not in ("chunk_chars", "cpu_ms")},
        })
        all_scores.append(scores)
    return entries, all_scores


def summarize(cases: list[Case], scores: list[dict], k: int, baseline_scores: list[dict] | None = None,
              baseline_index: dict | None = None, split: str = "all") -> dict:
    summary = {"k": k, "split": split, "overall": aggregate(scores), "by_category": by_category(cases, scores),
               "by_split": by_split(cases, scores)}
    if baseline_scores is not None:
        summary["baseline"] = {"index": baseline_index, "overall": aggregate(baseline_scores),
                               "by_category": by_category(cases, baseline_scores)}
        summary["vs_baseline"] = ratios(summary["overall"], summary["baseline"]["overall"])
    return summary


_COLUMNS = [("n", "questions", "{:d}"), ("MRR", "mrr", "{:.3f}"), ("nDCG@{k}", "ndcg", "{:.3f}"),
            ("cov@{k}", "keyword_coverage", "{:.3f}"), ("ans_rec", "answer_recall", "{:.3f}"),
            ("answered", "answered_rate", "{:.1%}"), ("hedged", "hedged_rate", "{:.1%}"), ("abstain", "abstention_rate", "{:.1%}"),
            ("bad_cit", "invalid_citations", "{:d}"), ("chars", "avg_chunk_chars", "{:.0f}"),
            ("p50_ms", "latency_p50_ms", "{:.0f}"), ("p95_ms", "latency_p95_ms", "{:.0f}"),
            ("cpu_ms", "cpu_ms_per_question", "{:.0f}")]


def format_table(summary: dict) -> str:
    k = summary["k"]
    header = ["category"] + [title.format(k=k) for title, _, _ in _COLUMNS]

    def row(name: str, metrics: dict, formats=None) -> list[str]:
        cells = [name]
        for _, key, fmt in _COLUMNS:
            value = metrics.get(key)
            cells.append("-" if value is None else (formats or {}).get(key, fmt).format(value))
        return cells

    overall = [row("OVERALL", summary["overall"])]
    if len(summary["by_split"]) > 1:
        overall += [row(f"OVERALL {split}", half["overall"]) for split, half in summary["by_split"].items()]
    groups = [[row(name, metrics) for name, metrics in summary["by_category"].items()], overall]
    if "baseline" in summary:
        ratio = dict(summary["vs_baseline"], questions=None)
        groups.append([row("baseline", summary["baseline"]["overall"]),
                       row("ours/base", ratio, {key: "{:.2f}x" for key in RETRIEVAL_METRICS})])
    everything = [header] + [r for group in groups for r in group]
    widths = [max(len(r[i]) for r in everything) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(cells, widths)))

    rule = "-" * len(line(header))
    lines = [line(header)]
    for group in groups:
        lines += [rule] + [line(r) for r in group]
    return "\n".join(lines)


def main(args) -> int:
    import sys

    from ..engine import Engine
    from ..tuning import tuned

    # Callers built before --split existed pass no split: they mean every question.
    split = getattr(args, "split", "all")
    try:
        cases = select_split(load_cases(args.tests), split)
    except QuestionSetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not cases:
        print(f"error: {args.tests}: no questions in the {split} split", file=sys.stderr)
        return 2
    try:  # `--tune NAME=VALUE`: other weights for this run, without a code edit
        tuning = tuned(getattr(args, "tune", None) or [])
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    settings = _settings(args)
    args.k = args.k or settings.top_k  # scored over the chunks the flow ranks (CITEBOT_TOP_K)
    engine = Engine(settings, tuning=tuning)
    stats = engine.refresh()
    engine.warm_up()
    entries, scores = evaluate(engine, cases, args.k, getattr(args, "access", None))

    baseline_scores = baseline_index = None
    if args.baseline:
        baseline = Baseline(settings.corpus, engine.embedder)
        try:
            baseline_scores = [score_retrieval(case, [row["text"] for row in baseline.search(case.question, args.k)], args.k)
                               for case in cases]
            baseline_index = baseline.stats
        finally:
            baseline.close()
        for entry, theirs in zip(entries, baseline_scores):
            entry["baseline_scores"] = {name: value for name, value in theirs.items() if name != "chunk_chars"}

    summary = summarize(cases, scores, args.k, baseline_scores, baseline_index, split)
    index = {"documents": stats.documents, "chunks": stats.chunks, "embedded": stats.embedded,
             "seconds": round(stats.seconds, 3), "version": stats.version, "db": settings.db,
             "corpus": str(settings.corpus), "retrieval_top_k": settings.retrieval.top_k}
    print(f"{args.tests}: {len(cases)} questions ({split}) over {settings.corpus} "
          f"({stats.documents} documents, {stats.chunks} chunks; k={args.k})")
    print(format_table(summary))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"summary": summary, "index": index, "questions": entries},
                                  indent=2, ensure_ascii=False, default=str))
        print(f"report written to {out}")
    return 0
