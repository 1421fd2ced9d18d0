"""The doubt model (rag_graph/scoring/doubt.py): an answer it expects to be wrong is given
hedged (its quote and sources kept, marked `hedged`); the shipped file says where it came from and what it
did held out; a file fitted on other features, or without a usable threshold, refuses to load."""
import json

import pytest

from rag_graph.scoring import doubt, learned


def test_the_shipped_model_names_its_origin_and_meets_the_bar_held_out():
    data = json.loads((learned.MODEL_DIR / doubt.MODEL_FILE).read_text())
    assert data["features"] == list(doubt.FEATURES)
    assert data["command"].startswith("python -m rag_graph.tools.wrong_answers") and data["data_hash"]
    held = data["held_out"].values()
    wrong, right = (sum(c.get(f"{kind} declined", 0) for c in held) for kind in ("wrong", "right"))
    assert wrong * 3 >= sum(c.get("wrong", 0) for c in held), "a third of the wrong answers declined, held out"
    assert right * 10 <= sum(c.get("right", 0) for c in held), "at most a tenth of the right ones"
    assert 0 < doubt.shipped().threshold < 1


@pytest.mark.parametrize("change", ["features", "threshold"])
def test_a_doubt_file_fitted_on_other_features_or_without_a_threshold_refuses_to_load(tmp_path, change):
    data = json.loads((learned.MODEL_DIR / doubt.MODEL_FILE).read_text())
    if change == "features":
        data["features"] = list(reversed(data["features"]))
    else:
        data["threshold"] = 1.5
    path = tmp_path / doubt.MODEL_FILE
    path.write_text(json.dumps(data))
    with pytest.raises(learned.ModelError, match="refit" if change == "features" else "threshold") as refused:
        doubt._cached(str(path), 0.0)
    assert "\n" not in str(refused.value) and str(path) in str(refused.value)  # one line naming the file


def test_the_odds_hold_for_any_signal_and_signals_that_are_no_numbers_are_doubted():
    model = doubt.shipped()
    measured = dict.fromkeys(doubt.FEATURES, 0.0)
    for huge in (1e308, -1e308):  # a retriever's absurd similarity: odds, not an OverflowError
        assert 0.0 <= model.odds({**measured, "similarity": huge}) <= 1.0
    assert model.doubts({**measured, "similarity": float("nan")})


DOG = "Can I bring my dog to the office?"


def test_an_answer_the_model_doubts_is_given_hedged_with_its_quote_and_sources(engine):
    """No document says whether dogs may come to the office; the flow answers from the
    badge-replacement sentence of the office's opening-hours section, and the doubt model marks
    it: the answer and its citation stay, the adapters say first that the bot is not sure."""
    output = engine.run(DOG, [])["final_output"]
    assert output["status"] == "answered" and output["hedged"] is True
    assert output["answer"] and output["confidence"] > 0
    assert output["citations"][0]["source_id"] == "office-facilities" and output["citations"][0]["url"]
    assert output["knowledge_gap"] is None and output["closest"] is None


def test_an_answer_the_model_trusts_is_given_unhedged(engine):
    output = engine.run("How many days per week can employees work remotely?", [])["final_output"]
    assert output["status"] == "answered" and "3 days" in output["answer"] and output["hedged"] is False


def test_the_hedge_never_turns_a_decline_into_an_answer(engine):
    """The doubt model reads only an answer about to be given: an unanswerable question is
    declined as before, and a decline is never hedged."""
    output = engine.run("Can contractors work remotely?", [])["final_output"]
    assert output["status"] == "insufficient_context" and output["hedged"] is False and not output["citations"]
