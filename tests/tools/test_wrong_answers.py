"""Judged replies and what separates wrong answers (rag_graph/tools/wrong_answers.py): the judged
file covers dev halves only, a changed reply makes its judgment stale, and the held-out decline
table counts what a model fitted on the other corpora would decline."""
import json
import random

from rag_graph.tools import wrong_answers
from rag_graph.tools.eval_all import ROOT, SETS
from rag_graph.tools.question_sets import Case
from rag_graph.tools.question_sets import load_cases


def test_every_judged_reply_is_an_answered_dev_question_of_a_labeled_set():
    lines = wrong_answers.JUDGED.read_text().splitlines()
    assert "rule" in json.loads(lines[0])
    rows = [json.loads(line) for line in lines[1:]]
    keys = {(r["set"], r["question"], r["history"]) for r in rows}
    assert len(keys) == len(rows), "one judgment per question and thread"
    assert {r["judgment"] for r in rows} <= set(wrong_answers.JUDGMENTS)
    for name in {r["set"] for r in rows}:
        assert name in SETS, f"{name} is not a labeled set (an aside set is never judged)"
        dev = {(c.question, wrong_answers.history_hash(c.history)) for c in load_cases(ROOT / "eval" / f"{name}.jsonl")
               if c.split == "dev"}
        for r in rows:
            if r["set"] == name:
                assert (r["question"], r["history"]) in dev, f"not a dev-half question of {name}: {r['question']}"


def _row(question, judgment_reply="a", reply="a", recall=0.0, corpus="c"):
    return {"set": "s", "corpus": corpus, "question": question, "history": wrong_answers.history_hash([]),
            "reply": wrong_answers.reply_hash(reply), "recall": recall}


def test_a_judgment_of_another_reply_is_stale_and_counts_as_neither_right_nor_wrong():
    judged = {("s", q, wrong_answers.history_hash([])): {"judgment": j, "reply": wrong_answers.reply_hash("a")}
              for q, j in (("same", "wrong"), ("changed", "wrong"), ("zero but right", "right"))}
    rows = wrong_answers.judge([_row("same"), _row("changed", reply="b"), _row("zero but right"),
                                _row("all keywords", recall=1.0), _row("missed, not judged", recall=0.5)], judged)
    assert [r["judgment"] for r in rows] == ["wrong", "stale", "right", "keyword", None]
    table = wrong_answers.figures(rows)["all"]
    assert (table["wrong"], table["stale"], table["right"], table["keyword"], table[None]) == (1, 1, 1, 1, 1)
    assert (table["zero"], table["zero right"]) == (3, 1)


def test_the_hedged_table_counts_a_reports_hedged_answers_by_judgment(tmp_path, capsys):
    name = next(iter(SETS))
    questions = [{"question": f"q{n}", "history": [], "split": "dev", "answerable": True,
                  "scores": {"answer_recall": 0.0 if n < 3 else 1.0},
                  "final_output": {"status": "answered", "answer": f"a{n}", "hedged": n in (0, 3)}} for n in range(13)]
    questions.append({**questions[3], "question": "test half", "split": "test"})  # never counted
    (tmp_path / f"{name}.json").write_text(json.dumps({"questions": questions}))
    judged = {(name, f"q{n}", wrong_answers.history_hash([])): {"judgment": "wrong", "reply": wrong_answers.reply_hash(f"a{n}")}
              for n in range(3)}
    rows = wrong_answers.judge(wrong_answers.report_rows(tmp_path), judged)
    assert wrong_answers.print_hedged(rows)  # 1 of 3 wrong, 1 of 10 right
    assert "| all | 1 / 3 | 1 / 10 | 0 / 0 |" in capsys.readouterr().out
    rows[4]["hedged"] = True  # a second right answer hedged: more than a tenth
    assert not wrong_answers.print_hedged(rows)


def test_auc_counts_pairs_and_ties():
    assert wrong_answers.auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert wrong_answers.auc([0.1, 0.9], [True, False]) == 0.0
    assert wrong_answers.auc([0.5, 0.5], [True, False]) == 0.5


def _signals(rng, wrong: bool, telling: bool) -> dict:
    row = {name: rng.random() for name in wrong_answers.SIGNALS}
    if telling:  # a wrong answer's best chunk shares little of the question's subject
        row["subject_coverage"] = rng.uniform(0.0, 0.45) if wrong else rng.uniform(0.4, 1.0)
    return row


def _corpora(telling: bool) -> list[dict]:
    rng = random.Random(7)
    rows = []
    for corpus in ("a", "b", "c"):
        for n in range(60):
            wrong = n < 15
            rows.append({"corpus": corpus, "judgment": "wrong" if wrong else ("right" if n % 2 else "keyword"),
                         "signals": _signals(rng, wrong, telling)})
    return rows


def test_held_out_declines_the_wrong_answers_a_signal_tells_and_few_right_ones():
    table = wrong_answers.held_out(_corpora(telling=True))
    assert set(table) == {"a", "b", "c"}
    wrong = sum(c["wrong declined"] for c in table.values())
    right = sum(c["right declined"] for c in table.values())
    assert wrong >= 30 and right <= 0.15 * 135  # 45 wrong, 135 right (keyword rows count as right)


def test_held_out_declines_no_more_than_chance_when_nothing_tells():
    table = wrong_answers.held_out(_corpora(telling=False))
    wrong = sum(c["wrong declined"] for c in table.values())
    assert wrong < 15, "noise must not decline a third of the wrong answers"


def test_an_answered_reply_is_recorded_with_every_signal_and_a_test_half_is_not_asked(engine):
    case = Case(question="How many days per week can employees work remotely?", keywords=["3 days"],
                category="fact", split="dev")
    record = wrong_answers.record_case(engine, case)
    assert record["status"] == "answered" and record["reply"] == wrong_answers.reply_hash(
        engine.run(case.question, [])["final_output"]["answer"])
    assert set(record["signals"]) == set(wrong_answers.SIGNALS)
    assert all(isinstance(v, (int, float, bool)) for v in record["signals"].values())

    class Unaskable:
        def run(self, *args, **kwargs):
            raise AssertionError("a test-half question was asked")

    assert wrong_answers.record_case(Unaskable(), Case(question="q", keywords=["k"], category="fact",
                                                       split="test")) == {"question": "q", "split": "test"}
