"""The pool sentences the writer could add to an answer and the model that measures them
(rag_graph/answer/extractive/inclusion.py, fitted by rag_graph/tools/tune_inclusion.py)."""
import dataclasses
import json

import numpy as np
import pytest

from rag_graph.answer.extractive import inclusion
from rag_graph.answer.extractive.inclusion import FEATURES, additions
from rag_graph.answer.passages import Candidate
from rag_graph.scoring.learned import ModelError
from rag_graph.tools import tune_inclusion
from rag_graph.tuning import DEFAULT


def _candidate(score, rank, position=0, text="The cache lives in ~/.npm by default.", terms=("cach",)):
    return Candidate(score, score, rank, position, text, f"c{rank}", set(terms), frozenset())


def _write(shown):
    return " ".join(c.text for c in shown)


def _additions(pool, picked, asked=("cach",), tuning=DEFAULT):
    """Each chunk holds the question's words its sentences hold."""
    held = {}
    for c in pool:
        held.setdefault(c.rank, set()).update(set(asked) & c.terms)
    return additions(pool, picked, {"cach": 1.0}, held, {}, _write, tuning)[1]


def test_a_sentence_of_a_chunk_that_holds_a_word_of_the_question_no_shown_chunk_holds_is_never_offered():
    """"can I bring my dog?": a glossary's "eat your own dog food" would make "dog" seem answered;
    so would any other sentence of the glossary's chunk, since grounding reads the whole chunk."""
    best = _candidate(2.0, 0, text="Hybrid work means three office days.", terms=("offic",))
    glossary = _candidate(1.9, 1, text="Dogfooding: eat your own dog food.", terms=("dog", "food"))
    its_neighbour = _candidate(1.8, 1, position=1, text="Shipping means releasing to customers.", terms=("ship",))
    assert _additions([best, glossary, its_neighbour], [best], asked=("dog", "offic")) == []
    held = _candidate(1.9, 0, position=3, text="Dogs are welcome on Fridays.", terms=("dog",))
    assert [a.candidate for a in _additions([best, held], [best], asked=("dog", "offic"))] == [held]
    other = _candidate(1.7, 2, text="Office hours are nine to five.", terms=("offic",))
    assert [a.candidate for a in _additions([best, other], [best], asked=("dog", "offic"))] == [other]


def test_an_example_a_pointer_or_an_answer_over_the_room_is_never_offered():
    best = _candidate(2.0, 0)
    example = _candidate(1.9, 1, text="For example: npm cache clean --force.")
    pointer = _candidate(1.9, 2, text="See the [cache page](cache.md) for details.")
    long = _candidate(1.9, 3, text="The cache " + "is very large " * 40 + "indeed.")
    assert _additions([best, example, pointer, long], [best]) == []
    roomy = dataclasses.replace(DEFAULT, inclusion_chars=10_000)
    assert [a.candidate for a in _additions([best, long], [best], tuning=roomy)] == [long]


def test_a_model_fitted_on_other_features_refuses_to_load(tmp_path):
    data = json.loads(inclusion.MODEL_FILE.read_text())
    assert tuple(data["features"]) == FEATURES and inclusion.load(inclusion.MODEL_FILE).features == FEATURES
    for features in (FEATURES[:-1], FEATURES + ("extra",), (FEATURES[1], FEATURES[0], *FEATURES[2:])):
        path = tmp_path / f"m{len(features)}{features[0]}.json"
        path.write_text(json.dumps({**data, "features": list(features)}))
        with pytest.raises(ModelError, match="refit"):
            inclusion.load(path)
    with pytest.raises(ModelError, match="cannot read"):
        inclusion.load(tmp_path / "missing.json")


def test_each_offered_sentence_says_how_it_stands_to_the_question_and_the_lead():
    """A continuation of the lead shares its words; a sibling (another plan, the next rule) brings
    words neither the question nor the lead holds. And how much closer the answer comes to the
    question with it (one call of the model for all)."""
    lead = _candidate(2.0, 0, text="The Long Term policy replaces 60% of salary.", terms=("long", "term", "salari"))
    sibling = dataclasses.replace(_candidate(1.9, 0, position=2, text="The Short Term policy replaces 70% of salary pay.",
                                             terms=("short", "term", "salari", "pay")), heading=frozenset({"disabl", "long"}))
    found = additions([lead, sibling], [lead], {"long": 1.0, "term": 1.0}, {0: {"long", "term"}}, {}, _write,
                      DEFAULT, lambda texts: [len(t) / 1000 for t in texts])[1]  # the longer, the closer
    row = dict(zip(FEATURES, found[0].row))
    assert row["lead_overlap"] == pytest.approx(2 / 5)  # term, salari of {long, term, salari, short, pay}
    assert row["unasked"] == pytest.approx(2 / 4) and row["asked_share"] == pytest.approx(1 / 4)  # short, pay; term
    assert row["heading_asked"] == pytest.approx(1 / 2)
    assert found[0].closer == pytest.approx((len(sibling.text) + 1) / 1000)
