"""The chat-model judge measurement (rag_graph/tools/grounding_judge.py): what it reads without a
model (the rules' verdict and the learned score, the guards first), how it sets a threshold and
scores a margin. Its questions to a real model are asked in tests/test_real_model.py (`make test-llm`)."""
from __future__ import annotations

from rag_graph.tools.grounding_judge import auc, collect, pick, rate, report

QUESTION = "How many days per week can employees work remotely?"


def _row(kind: str, margin: float, learned: float | None = 1.0, rules: bool = True) -> dict:
    return {"kind": kind, "margin": margin, "learned": learned, "rules": rules, "ms": 10}


def test_a_paraphrase_is_measured_and_a_number_no_section_states_stops_at_the_guard(engine):
    rows = [{"corpus": "bundled", "question": QUESTION, "kind": "paraphrase",
             "sentence": "Staff can work from home for up to three days each week, provided their manager agrees."},
            {"corpus": "bundled", "question": QUESTION, "kind": "wrong_number",
             "sentence": "Employees may work remotely up to 5 days a week with manager approval."}]
    paraphrase, wrong = collect(rows, {"bundled": engine}, url=None, k=3)
    assert paraphrase["rules"] and paraphrase["learned"] is not None
    assert not wrong["rules"] and wrong["learned"] is None  # the model is never asked about "5 days"
    assert "margin" not in paraphrase  # no endpoint, no judgement


def test_the_threshold_is_the_one_that_best_separates_the_set_it_is_picked_on():
    rows = [_row("paraphrase", -0.2), _row("paraphrase", -0.5), _row("wrong_number", -0.9), _row("injected", -1.4)]
    threshold = pick(rows, lambda r, t: r["margin"] > t)
    assert -0.9 <= threshold < -0.5
    assert rate(rows, lambda r: r["margin"] > threshold) == "100.0 / 100.0"
    assert auc(rows) == 1.0 and auc([_row("paraphrase", -1.0), _row("injected", -1.0)]) == 0.5


def test_a_sentence_the_guards_drop_stays_dropped_whatever_the_judge_says():
    rows = [_row("wrong_number", 5.0, learned=None, rules=False), _row("paraphrase", 5.0)]
    figures = report(rows, threshold=0.0, unsure=1.0)
    assert figures["judge alone"] == "100.0 / 0.0"
    assert figures["judge behind the guards"] == figures["judge as veto on the rules"] == "100.0 / 100.0"
