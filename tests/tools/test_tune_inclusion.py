"""Judged labels for the writer's "one more sentence?" and the fit that learns from them
(rag_graph/tools/judged_inclusion.py, rag_graph/tools/tune_inclusion.py)."""
import json

import numpy as np
import pytest

from rag_graph.answer.extractive import inclusion
from rag_graph.answer.extractive.inclusion import FEATURES
from rag_graph.tools import judged_inclusion, tune_inclusion
from rag_graph.tools.judged_inclusion import ANSWERS, CONTEXT, DISTRACTOR


def _row(share, adds=0.0):
    row = [0.0] * len(FEATURES)
    row[FEATURES.index("share")], row[FEATURES.index("adds")] = share, adds
    return row


def _records():
    """Per question two pool sentences: the one adding the question's weight answers; the one
    scoring closest to the best is a sibling that holds a keyword all the same (the list's other
    item names the same thing), so keyword labels call both "adds the answer"."""
    records, judged = [], {}
    for corpus in ("a", "b", "c"):
        for split in ("dev", "test"):
            for n in range(12):
                question = f"{corpus} {split} question {n}"
                answer, sibling = f"answer {question}", f"sibling {question}"
                records.append({"set": corpus, "corpus": corpus, "split": split, "question": question,
                                "answerable": True, "keywords": ["k", "j"], "base": 1,
                                "reference": f"what answers {question}", "history": [],
                                "picked": [{"text": f"lead {question}", "section": "S"}],
                                "additions": [
                                    {"row": _row(0.5, 0.3 + 0.01 * n), "gain": 1, "kept": True, "text": answer,
                                     "section": "S"},
                                    {"row": _row(0.95 - 0.001 * n), "gain": 1, "kept": True, "text": sibling,
                                     "section": "S"}]})
                if split == "dev":
                    judged[(corpus, question, answer)] = ANSWERS
                    judged[(corpus, question, sibling)] = DISTRACTOR if n % 3 else CONTEXT
    return records, judged


def test_the_fit_learns_from_judgments_not_keywords():
    records, judged = _records()
    model = tune_inclusion.fit(records, judged)
    assert model.features == FEATURES and model.coef[FEATURES.index("adds")] > 0
    assert model.coef[FEATURES.index("share")] < 0  # the sibling scores closest to the best
    assert all(sign == 1 for r in records for _, sign in tune_inclusion.keyword_labeled(r))  # keywords can't tell


def test_the_report_counts_what_each_threshold_would_add_by_judgment_with_the_corpus_left_out():
    records, judged = _records()
    result = tune_inclusion.report(records, judged)
    assert result["auc_held_out"] == 1.0
    pooled = result["thresholds"]["0.5"]["pooled"]
    assert pooled[ANSWERS] == 36 and pooled[DISTRACTOR] == pooled[CONTEXT] == pooled["not judged"] == 0
    assert pooled["questions"] == 72 and pooled["learned"] == pytest.approx(pooled["hand"] + 36)
    assert set(result["thresholds"]["0.5"]["corpora"]) == {"a", "b", "c"}


def test_separability_scores_each_signal_and_both_fitted_models():
    records, judged = _records()
    result = tune_inclusion.separability(records, judged)
    assert result["answers"] == 36 and result["negatives"] == 24
    assert result["auc"]["adds"] == 1.0 and result["auc"]["share"] == 0.0
    assert result["auc"]["keyword gain"] == 0.5  # both hold a keyword: no signal
    assert result["auc"]["judged model"] == 1.0
    assert tune_inclusion.auc([1, 2, 2, 3], [False, True, False, True]) == pytest.approx(0.875)
    assert tune_inclusion.auc([1.0], [True]) is None


def test_the_model_written_loads_and_refits_the_same_from_the_same_judgments(tmp_path, capsys):
    assert tune_inclusion.main(["--out", str(tmp_path / "labels"), "--check"]) == 1
    assert "run without --check" in capsys.readouterr().err
    records, judged = _records()
    result = tune_inclusion.report(records, judged)
    path = tune_inclusion.write_model(result, records, judged, tmp_path / "inclusion.json")
    loaded = inclusion.load(path)
    assert loaded.features == FEATURES and np.allclose(loaded.coef, result["model"].coef, atol=1e-5)
    written = json.loads(path.read_text())
    assert written["data_hash"] == tune_inclusion.data_hash(records, judged) and written["auc_held_out"] == 1.0
    assert np.allclose(tune_inclusion.fit(records, judged).coef, loaded.coef, atol=1e-5)


def _recorded(records, folder):
    """The records written as tune_inclusion writes them, as the bundled corpus's set."""
    folder.mkdir()
    mine = [dict(r, set="corpus") for r in records if r["corpus"] == "a"]
    (folder / "corpus.inclusion.jsonl").write_text("\n".join(["{}", *map(json.dumps, mine)]) + "\n")


def test_the_rows_to_judge_are_the_dev_halves_quoted_and_offered_sentences_and_judgments_stay(tmp_path):
    records, _ = _records()
    records = [dict(r, set=r["set"].replace("a", "corpus").replace("b", "debian-devref")) for r in records]
    rows = judged_inclusion.rows_to_judge(records)
    assert rows and all(" dev " in row["question"] for row in rows)  # never a test half
    assert {row["set"] for row in rows} == {"corpus"}  # a set kept aside is never judged
    assert {row["role"] for row in rows} == {"quoted", "offered"}
    path = tmp_path / "judged.jsonl"
    assert judged_inclusion.write_candidates(records, path) == (len(rows), 0)
    lines = path.read_text().splitlines()
    assert "rule" in json.loads(lines[0])
    first = json.loads(lines[1])
    lines[1] = json.dumps({**first, "judgment": ANSWERS})
    gone = {**first, "text": "a sentence no model offers any more", "judgment": DISTRACTOR}
    path.write_text("\n".join([*lines, json.dumps(gone)]) + "\n")
    assert judged_inclusion.write_candidates(records, path) == (len(rows) + 1, 2)
    kept = judged_inclusion.read_judged(path)
    assert kept[(first["set"], first["question"], first["text"])] == ANSWERS
    assert kept[(gone["set"], gone["question"], gone["text"])] == DISTRACTOR


def test_a_judgment_of_no_known_kind_is_refused_with_the_question_named(tmp_path, capsys):
    records, _ = _records()
    path = tmp_path / "judged.jsonl"
    row = {"set": "a", "question": "why?", "text": "because", "judgment": "maybe"}
    path.write_text(json.dumps({"rule": "r"}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="'maybe' of 'why\\?'"):
        judged_inclusion.read_judged(path)
    _recorded(records, tmp_path / "labels")
    assert judged_inclusion.main(["--out", str(tmp_path / "labels"), "--judged", str(path)]) == 1
    assert "'maybe'" in capsys.readouterr().err and json.loads(path.read_text().splitlines()[1]) == row
