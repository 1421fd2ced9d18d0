"""What an optional reranker (CITEBOT_RERANKER) adds to a question's time: each question of a set
asked with no reranker and with each reranker given, over one index, and the milliseconds per
question printed (the reranker's own call, and the whole question). A figure, not a test:

    python -m rag_graph.tools.bench_rerank --db DIR --corpus DIR --cross-encoder tiny minilm \
        [--reranker llm --llm openai:any --llm-base-url http://127.0.0.1:8080/v1] [--calls-only]

`--cross-encoder tiny|minilm` builds a cross-encoder in a temporary folder with the bundled
model's tokenizer: `tiny` of 2 layers and hidden size 32 (the tests' size), `minilm` of the
bundled all-MiniLM-L6-v2's own weights and a new scoring head (the shape of the common
ms-marco-MiniLM-L6-v2 cross-encoder). Their order means nothing; their time is what is measured.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

from ..config import Settings
from ..engine import Engine
from ..retrieval.embeddings import bundled_model_path
from .question_sets import load_cases


def build_cross_encoder(kind: str, folder: Path) -> Path:
    """A cross-encoder folder (random scoring head) of the given size."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    bundled = bundled_model_path()
    tokenizer = AutoTokenizer.from_pretrained(bundled)
    if kind == "tiny":
        model = BertForSequenceClassification(BertConfig(
            vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, num_labels=1))
    else:
        model = BertForSequenceClassification.from_pretrained(bundled, num_labels=1)
    model.save_pretrained(folder / kind)
    tokenizer.save_pretrained(folder / kind)
    return folder / kind


class _Timed:
    """The reranker, with the time of each of its calls kept."""

    def __init__(self, reranker):
        self.reranker, self.seconds = reranker, []

    def warm_up(self) -> None:
        self.reranker.warm_up()

    def rerank(self, question, chunks, tuning):
        started = time.perf_counter()
        try:
            return self.reranker.rerank(question, chunks, tuning)
        finally:
            self.seconds.append(time.perf_counter() - started)


def measure(settings: Settings, questions: list[str]) -> dict:
    engine = Engine(settings)
    engine.warm_up()
    timed = _Timed(engine.deps.reranker) if engine.deps.reranker else None
    if timed:
        engine.deps = dataclasses.replace(engine.deps, reranker=timed)
    engine.ask(questions[0])  # the first question pays for lazy loads; it is not counted
    if timed:
        timed.seconds.clear()
    whole, fell_back = [], 0
    for question in questions:
        started = time.perf_counter()
        state = engine.run(question)
        whole.append(time.perf_counter() - started)
        fell_back += bool(state.get("reranker_unavailable"))
    calls = timed.seconds if timed else [0.0]
    return {"question_ms": 1000 * statistics.median(whole), "rerank_ms": 1000 * statistics.median(calls),
            "rerank_max_ms": 1000 * max(calls), "kept_order": fell_back}


def measure_calls(base: Settings, spec: str, questions: list[str]) -> dict:
    """The reranker's own call alone, on the chunks an offline run ranked for each question (no
    answer is written with the chat model: a slow model's answers would take the hour)."""
    from ..answer.rerank import RerankUnavailable, load_reranker

    offline = Engine(base.model_copy(update={"llm": None, "reranker": None}))
    offline.warm_up()
    reranker = load_reranker(base.model_copy(update={"reranker": spec}))
    reranker.warm_up()
    seconds, fell_back = [], 0
    for question in questions:
        state = offline.run(question)
        started = time.perf_counter()
        try:
            reranker.rerank(state["retrieval_query"], state["ranked_chunks"], offline.deps.tuning)
        except RerankUnavailable as error:
            fell_back += 1
            print(f"  kept the order for {question!r}: {error}")
        seconds.append(time.perf_counter() - started)
    return {"question_ms": 0.0, "rerank_ms": 1000 * statistics.median(seconds),
            "rerank_max_ms": 1000 * max(seconds), "kept_order": fell_back}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="an index already built (nothing is written to it)")
    parser.add_argument("--corpus", default="corpus")
    parser.add_argument("--set", default="eval/corpus.jsonl", help="questions (JSONL, `question` field)")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--cross-encoder", nargs="*", default=[], choices=["tiny", "minilm"])
    parser.add_argument("--reranker", nargs="*", default=[], help="CITEBOT_RERANKER values to measure")
    parser.add_argument("--llm", help="CITEBOT_LLM for --reranker llm (the writer too, with and without it)")
    parser.add_argument("--llm-base-url")
    parser.add_argument("--llm-timeout", type=float, default=20.0)
    parser.add_argument("--calls-only", action="store_true",
                        help="time only each reranker's call, on the chunks an offline run ranked")
    args = parser.parse_args(argv)
    questions = [case.question for case in load_cases(args.set)][: args.questions]
    base = Settings(corpus=Path(args.corpus), db=args.db, llm=args.llm, llm_base_url=args.llm_base_url,
                    llm_timeout=args.llm_timeout)
    with tempfile.TemporaryDirectory(prefix="citebot-rerank-bench-") as scratch:
        specs = [f"cross-encoder:{build_cross_encoder(kind, Path(scratch))}" for kind in args.cross_encoder]
        if args.calls_only:
            rows = [("none", {"question_ms": 0.0, "rerank_ms": 0.0, "rerank_max_ms": 0.0, "kept_order": 0})]
            rows += [(spec, measure_calls(base, spec, questions)) for spec in specs + args.reranker]
        else:
            rows = [("none", measure(base, questions))]
            rows += [(spec, measure(base.model_copy(update={"reranker": spec}), questions))
                     for spec in specs + args.reranker]
    print(f"{len(questions)} questions of {args.set}, median ms per question (writer: {args.llm or 'offline'})")
    print(f"{'reranker':<40} {'question':>9} {'added':>7} {'rerank':>7} {'max':>7} {'kept order':>10}")
    for name, row in rows:
        shown = name if len(name) <= 40 else "cross-encoder:…" + name[-25:]
        whole, added = (("-", "-") if args.calls_only else
                        (f"{row['question_ms']:.0f}", f"{row['question_ms'] - rows[0][1]['question_ms']:.0f}"))
        print(f"{shown:<40} {whole:>9} {added:>7} {row['rerank_ms']:>7.0f} {row['rerank_max_ms']:>7.0f} "
              f"{row['kept_order']:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
