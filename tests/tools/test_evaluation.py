"""The eval metrics on hand-computed examples, the tests-file checks, and the bundled question set
as a regression guard through `citebot eval`'s own entry point."""
from __future__ import annotations

import json
import math
from argparse import Namespace
from pathlib import Path

import pytest

from rag_graph.tools.evaluation import (Case, QuestionSetError, abstained, aggregate, answer_recall, citations_valid,
                                  fixed_windows, format_table, keyword_coverage, load_cases, main, ndcg,
                                  percentile, ratios, reciprocal_rank, score_question, select_split, summarize)

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = ["Remote work policy", "Up to 3 DAYS a week", "Vacation: 25 days a year", "3 days, again"]


def test_reciprocal_rank_averages_the_first_hit_of_each_keyword():
    # "3 days" first at rank 2 (case-insensitive), "25 days" at rank 3, "pension" nowhere.
    assert reciprocal_rank(CHUNKS, ["3 days"]) == 0.5
    assert reciprocal_rank(CHUNKS, ["3 days", "25 days", "pension"]) == pytest.approx((1 / 2 + 1 / 3 + 0) / 3)
    assert reciprocal_rank(CHUNKS, ["remote"]) == 1.0
    with pytest.raises(ValueError):
        reciprocal_rank(CHUNKS, [])


def test_ndcg_rewards_relevant_chunks_ranked_first():
    # Relevant (any keyword): ranks 2, 3, 4. DCG = 1/log2(3) + 1/log2(4) + 1/log2(5);
    # the ideal puts those three first: 1 + 1/log2(3) + 1/2.
    dcg = 1 / math.log2(3) + 0.5 + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 0.5
    assert ndcg(CHUNKS, ["days"], k=10) == pytest.approx(dcg / ideal)  # ≈ 0.7328
    assert ndcg(CHUNKS, ["days"], k=10) == pytest.approx(0.7328, abs=1e-4)
    assert ndcg(CHUNKS, ["remote"], k=10) == 1.0
    assert ndcg(CHUNKS, ["pension"], k=10) == 0.0
    # Only the top k count: at k=2 one relevant chunk at rank 2 -> (1/log2 3) / 1.
    assert ndcg(CHUNKS, ["days"], k=2) == pytest.approx(1 / math.log2(3))


def test_coverage_and_answer_recall_count_keywords_found():
    assert keyword_coverage(CHUNKS[:2], ["3 days", "25 days"]) == 0.5
    assert keyword_coverage(CHUNKS, ["3 days", "25 days"]) == 1.0
    assert answer_recall("You get 25 Days of vacation.", ["25 days", "carry over"]) == 0.5


def test_abstention_needs_the_status_and_no_citations():
    assert abstained({"status": "insufficient_context", "citations": []})
    assert not abstained({"status": "insufficient_context", "citations": [{"chunk_id": "a"}]})
    assert not abstained({"status": "answered", "citations": []})


def test_citations_must_come_from_the_selected_context():
    output = {"citations": [{"chunk_id": "a"}, {"chunk_id": "b"}]}
    assert citations_valid(output, ["a", "b", "c"])
    assert not citations_valid(output, ["a"])
    assert citations_valid({"citations": []}, [])


def test_percentile_interpolates_between_ranks():
    values = [10, 20, 30, 40, 50]
    assert percentile(values, 50) == 30
    assert percentile(values, 95) == pytest.approx(48.0)  # position 3.8: 40 + 0.8 * 10
    assert percentile([7], 95) == 7
    assert percentile([], 50) is None


def test_aggregate_scores_each_metric_on_the_questions_it_applies_to():
    answerable = Case("How many remote days?", ["3 days"], "number")
    unanswerable = Case("Pet insurance?", [], "unanswerable", answerable=False)
    scores = [
        score_question(answerable, CHUNKS, {"status": "answered", "answer": "Up to 3 days.",
                                            "citations": [{"chunk_id": "c2"}]}, ["c2"], 10, 40.0),
        score_question(unanswerable, CHUNKS[:1], {"status": "insufficient_context", "answer": "I don't know",
                                                  "citations": []}, [], 10, 20.0),
        score_question(answerable, CHUNKS[2:], {"status": "answered", "answer": "25 days", "hedged": True,
                                                "citations": [{"chunk_id": "zz"}]}, ["c3"], 10, 60.0),
    ]
    summary = aggregate(scores)
    assert summary["hedged_rate"] == 0.5  # of the two answers given; a decline is never hedged
    assert summary["mrr"] == pytest.approx((1 / 2 + 1 / 2) / 2)  # rank 2 in both lists
    assert summary["answer_recall"] == 0.5
    assert summary["answered_rate"] == 1.0 and summary["answerable"] == 2
    assert summary["abstention_rate"] == 1.0 and summary["unanswerable"] == 1
    assert summary["invalid_citations"] == 1
    assert summary["avg_chunk_chars"] == pytest.approx(sum(map(len, CHUNKS + CHUNKS[:1] + CHUNKS[2:])) / 7)
    assert summary["latency_p50_ms"] == 40.0


def test_summary_compares_with_the_baseline_as_a_ratio():
    assert ratios({"mrr": 0.9, "ndcg": 0.8, "keyword_coverage": 1.0, "avg_chunk_chars": 400},
                  {"mrr": 0.6, "ndcg": 0.0, "keyword_coverage": 0.5, "avg_chunk_chars": 500}) == {
        "mrr": pytest.approx(1.5), "ndcg": None, "keyword_coverage": 2.0, "avg_chunk_chars": 0.8}


def test_fixed_windows_overlap_by_200_characters():
    text = "".join(chr(ord("a") + i % 26) for i in range(1100))
    windows = fixed_windows(text)
    assert [len(w) for w in windows] == [500, 500, 500]  # starts 0, 300, 600
    assert windows[1][:200] == windows[0][300:] and windows[2].endswith(text[-200:])
    assert fixed_windows("short") == ["short"] and fixed_windows("   ") == []


def test_tests_file_errors_name_the_line(tmp_path):
    path = tmp_path / "tests.jsonl"
    path.write_text('{"question": "q", "keywords": ["k"], "category": "fact"}\n\n'
                    '{"question": "q2", "keywords": "k", "category": "fact"}\n')
    with pytest.raises(QuestionSetError, match=r"tests.jsonl:3: 'keywords' must be a list"):
        load_cases(path)
    path.write_text('{"question": "q", "keywords": [], "category": "fact"}\n')
    with pytest.raises(QuestionSetError, match=r":1: an answerable question needs at least one keyword"):
        load_cases(path)
    path.write_text('{"question": "q", "category": "fact"\n')
    with pytest.raises(QuestionSetError, match=r":1: not valid JSON"):
        load_cases(path)
    path.write_text('{"question": "q", "keywords": ["k"], "category": "x", "history": [{"role": "bot"}]}\n')
    with pytest.raises(QuestionSetError, match=r":1: 'history'"):
        load_cases(path)


def test_every_question_set_is_valid_and_split_into_dev_and_test():
    paths = sorted((ROOT / "eval").glob("*.jsonl"))
    assert {path.name for path in paths} >= {"corpus.jsonl", "handbook.jsonl", "18f-handbook.jsonl"}
    for path in paths:
        cases = load_cases(path)
        assert any(case.history for case in cases) and any(not case.answerable for case in cases)
        assert all(case.split in ("dev", "test") for case in cases), path.name
        for category in {case.category for case in cases}:  # both halves see every kind of question
            assert {case.split for case in cases if case.category == category} == {"dev", "test"}, (path.name, category)


def test_a_split_must_be_dev_or_test(tmp_path):
    path = tmp_path / "tests.jsonl"
    path.write_text('{"question": "q", "keywords": ["k"], "category": "fact", "split": "train"}\n')
    with pytest.raises(QuestionSetError, match=r":1: 'split' must be one of dev, test"):
        load_cases(path)


SPLIT_CASES = [Case("q1", ["x"], "fact", split="dev"), Case("q2", ["x"], "fact", split="test"),
               Case("q3", ["x"], "number", split="dev"), Case("q4", ["x"], "fact")]


def test_select_split_keeps_one_half_and_all_keeps_every_line():
    assert [case.question for case in select_split(SPLIT_CASES, "dev")] == ["q1", "q3"]
    assert [case.question for case in select_split(SPLIT_CASES, "test")] == ["q2"]
    assert select_split(SPLIT_CASES, "all") == SPLIT_CASES  # q4 has no split: counted in "all" only


def test_summary_and_table_report_each_half_next_to_the_whole():
    chunks = {"q1": ["x"], "q2": ["y", "x"], "q3": ["x"], "q4": ["y"]}  # ranks 1, 2, 1, none
    scores = [score_question(case, chunks[case.question], {"status": "answered", "answer": "x", "citations": []},
                             [], 10, 5.0) for case in SPLIT_CASES]
    summary = summarize(SPLIT_CASES, scores, 10)
    assert summary["split"] == "all" and summary["overall"]["mrr"] == pytest.approx(2.5 / 4)
    assert set(summary["by_split"]) == {"dev", "test"}
    assert summary["by_split"]["dev"]["overall"]["mrr"] == 1.0
    assert summary["by_split"]["test"]["overall"]["mrr"] == 0.5
    assert set(summary["by_split"]["dev"]["by_category"]) == {"fact", "number"}
    rows = [line.split("  ")[0] for line in format_table(summary).splitlines() if not line.startswith("-")]
    assert rows == ["category", "fact", "number", "OVERALL", "OVERALL dev", "OVERALL test"]
    one_half = summarize(SPLIT_CASES[:1], scores[:1], 10, split="dev")
    assert "OVERALL dev" not in format_table(one_half)  # one half alone: its OVERALL row is that half


def test_eval_refuses_a_split_with_no_questions(tmp_path, capsys):
    path = tmp_path / "tests.jsonl"
    path.write_text('{"question": "q", "keywords": ["k"], "category": "fact", "split": "dev"}\n')
    args = Namespace(tests=str(path), corpus=None, db=None, k=10, out=None, baseline=False, split="test")
    assert main(args) == 2
    assert "no questions in the test split" in capsys.readouterr().err


def test_table_prints_every_category_and_the_baseline():
    cases = [Case("q", ["x"], "fact"), Case("r", [], "unanswerable", answerable=False)]
    scores = [score_question(case, ["x"], {"status": "answered", "answer": "x", "citations": []}, [], 10, 5.0)
              for case in cases]
    baseline = [{"rr": 0.5, "ndcg": 0.5, "keyword_coverage": 1.0, "chunk_chars": [1]},
                {"rr": None, "ndcg": None, "keyword_coverage": None, "chunk_chars": [1]}]
    table = format_table(summarize(cases, scores, 10, baseline, {}))
    lines = table.splitlines()
    assert [line.split()[0] for line in lines if not line.startswith("-")] == [
        "category", "fact", "unanswerable", "OVERALL", "baseline", "ours/base"]
    assert len({len(line) for line in lines}) == 1  # aligned
    assert "2.00x" in lines[-1]


def test_bundled_question_set_stays_above_the_regression_floor(engine, tmp_path):
    """Loose floors just under what the bundled corpus measures; a drop below one is a regression.
    Runs on the session's index of the bundled corpus (the refresh finds nothing to do)."""
    out = tmp_path / "report.json"
    args = Namespace(tests=str(ROOT / "eval" / "corpus.jsonl"), corpus=str(engine.settings.corpus),
                     db=engine.settings.db, k=10, out=str(out), baseline=False, split="all")
    assert main(args) == 0
    report = json.loads(out.read_text())
    overall = report["summary"]["overall"]
    assert set(report["summary"]["by_split"]) == {"dev", "test"}
    assert overall["mrr"] >= 0.85
    assert overall["answered_rate"] >= 0.75
    assert overall["abstention_rate"] >= 0.75
    assert overall["invalid_citations"] == 0
    assert overall["avg_chunk_chars"] <= 800
    question = report["questions"][0]
    assert {"question", "category", "split", "history", "retrieved", "final_output", "latency_ms", "cpu_ms"} <= set(question)
    # The process's CPU time per question, beside the wall time a busy machine moves
    assert 0 < overall["cpu_ms_per_question"] == pytest.approx(
        sum(q["cpu_ms"] for q in report["questions"]) / len(report["questions"]), abs=0.1)
    assert set(question["retrieved"][0]) == {"chunk_id", "source_id", "text"}
    assert report["index"]["chunks"] > 0


def test_eval_measures_the_flow_the_bot_runs(engine, tmp_path, monkeypatch):
    """The figures are of what users get: the eval searches no wider than the bot (CITEBOT_TOP_K)
    and scores the chunks it ranks, so `--k` deeper than that cannot change an answer."""
    monkeypatch.setenv("CITEBOT_TOP_K", "3")
    tests = tmp_path / "tests.jsonl"
    tests.write_text("\n".join(line for line in (ROOT / "eval" / "corpus.jsonl").read_text().splitlines()[:4]) + "\n")
    out = tmp_path / "report.json"
    args = Namespace(tests=str(tests), corpus=str(engine.settings.corpus), db=engine.settings.db,
                     k=None, out=str(out), baseline=False, split="all")
    assert main(args) == 0
    report = json.loads(out.read_text())
    assert report["summary"]["k"] == 3
    assert all(0 < len(question["retrieved"]) <= 3 for question in report["questions"])
    deeper = tmp_path / "deeper.json"
    assert main(Namespace(**{**vars(args), "k": 10, "out": str(deeper)})) == 0
    assert [q["final_output"] for q in json.loads(deeper.read_text())["questions"]] == \
        [q["final_output"] for q in report["questions"]]
