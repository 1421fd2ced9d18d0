"""Sentence choice as a learned decision: the writer's pool labeled from the real flow, the fit
`citebot tune` measures against the hand score, and the rule that keeps the hand score."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from rag_graph.scoring.sentences import FEATURES, order, rows
from rag_graph.tools import sentence_labels, tune, tune_sentences
from rag_graph.tools.evaluation import Case

from test_learned_decisions import _labels, _records, _turns


def _sentence(label: float, hand: float, **signals) -> dict:
    measured = {"hand": hand, "lexical": hand / 2, "coverage": 0.4, "own_coverage": 0.4, "heading": 0.0,
                "similarity": 0.5, "late": 0.5, "chunk_rank": 0, "relevance_place": 0, "standing": 0.5,
                "position": 1, "chars": 120, "typed": False, "titled": False, "list_item": False,
                "tabular": False, "code": False, "with_list": False, "lead_in": False, "pointer": False,
                "example": False, "leans_back": False}
    return {"text": f"{label} {hand}", "chunk_id": "c", "label": label, **measured, **signals}


def _questions(corpora=("a", "b", "c"), per_corpus=10) -> list[dict]:
    """Pools where the answering sentence holds the kind of answer asked for (a date for "when")
    but scores below two that only share words: the hand order puts it third."""
    return [{"corpus": corpus, "split": "dev" if n % 2 else "test", "answerable": True, "keywords": ["kw"],
             "pool": [_sentence(0.0, 2.0 + n / 100), _sentence(0.0, 1.9), _sentence(1.0, 1.8, typed=True)]}
            for corpus in corpora for n in range(per_corpus)]


def test_the_fit_learns_a_choice_the_hand_score_misses():
    records = _questions()
    assert tune_sentences.held(records, None) == 0.0
    assert tune_sentences.held(records, tune_sentences.fit(records)) == 1.0
    folds = tune_sentences.loco(records)
    assert all(row["hand"] == 0.0 and row["learned"] == 1.0 for row in folds.values())
    assert tune_sentences.fit(records).as_dict() == tune_sentences.fit(records).as_dict()  # reproducible


def test_the_sentence_put_first_passes_over_an_example():
    """The writer's `_pick` skips an example ("For example: …") for its best sentence."""
    record = {"pool": [_sentence(0.0, 3.0, example=True), _sentence(1.0, 2.0)]}
    assert tune_sentences.first_held(record, None) == 1.0


def test_the_hand_order_is_the_writers_sort():
    rng = np.random.default_rng(0)
    measured = [_sentence(0.0, float(h)) for h in rng.uniform(0, 3, 12)]
    measured[5]["hand"] = measured[2]["hand"]  # a tie keeps the pool's order
    assert order(measured, None) == sorted(range(12), key=lambda at: -measured[at]["hand"])
    assert len(rows(measured)[0]) == len(FEATURES)


def test_tune_reports_sentence_choice_and_ships_only_a_winner(tmp_path, capsys):
    folder = tmp_path / "labels"
    _labels(folder, _records(), _turns())
    (folder / "corpus.sentences.jsonl").write_text(
        "\n".join([json.dumps({"stamp": "x"})] + [json.dumps(r) for r in _questions()]) + "\n")
    args = argparse.Namespace(labels=str(folder), out=str(tmp_path / "models"), check=False, exclude=[])
    assert tune.run(args) == 0
    out = capsys.readouterr().out
    assert "keywords held by the sentence put first" in out
    assert "sentence choice: the fit beats the hand score" in out  # this fit wins; the real one has not
    assert not (tmp_path / "models" / "sentences.json").exists()


def test_a_questions_sentences_are_labeled_from_the_real_flow(engine):
    """The writer's pool for the context the flow assembled, measured and labeled by keyword."""
    case = Case(question="How many days per week can employees work remotely?", keywords=["3 days"],
                category="policy")
    record = sentence_labels.label_case(engine, case)
    pool = record["pool"]
    assert record["status"] == "answered" and pool
    assert all(np.isfinite(row).all() for row in rows(pool))
    assert any(s["label"] == 1.0 for s in pool) and any(s["label"] == 0.0 for s in pool)
    assert all((s["label"] == 1.0) == ("3 days" in s["text"].lower()) for s in pool)
    assert pool[order(pool, None)[0]]["label"] == 1.0  # the writer's own best holds it, as its answer does
    assert "3 days" in record["answer"].lower()
