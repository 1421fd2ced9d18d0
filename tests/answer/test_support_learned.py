"""The grounding check's learned accept/drop decision: fitted by `citebot tune --grounding`, read
from a JSON file (refused when fitted on other features), deciding behind the rules' guards; and
the rules' own generic mechanisms (a duration in another unit, a subject named by pronoun)."""
from __future__ import annotations

import json

import pytest

from rag_graph.answer import support_learned
from rag_graph.answer.support import SupportChecker
from rag_graph.answer.support_learned import FEATURES, MODEL_FILE, shipped, toggled
from rag_graph.scoring import learned
from rag_graph.tools import tune_grounding

REMOTE = ("Employees may work remotely up to 3 days a week with manager approval. Tuesday and Thursday "
          "are our company-wide anchor days: everyone who is not travelling or on leave is expected in the office. "
          "Working from home still has to be safe and secure.")
PARKING = ("The building has 20 reserved parking spaces for Orrinfold in the underground garage. They are shared "
           "on a first-come, first-served basis and cannot be booked, except for the 2 accessible spaces next to the lift.")
TIMEOUT = ("The keepAliveTimeout option sets how long an idle socket stays open; it defaults to 300000 ms. "
           "Connections are closed after that.")


def chunk(chunk_id: str, body: str) -> dict:
    return {"chunk_id": chunk_id, "title": "Handbook", "section": chunk_id, "body": body,
            "text": f"Handbook › {chunk_id}\n\n{body}"}


CHUNKS = [chunk("remote", REMOTE), chunk("parking", PARKING), chunk("timeout", TIMEOUT)]
FITTED = learned.linear(learned.read(learned.MODEL_DIR / MODEL_FILE), FEATURES)  # the coefficients in the package


@pytest.fixture(scope="module", params=["rules", "learned"])
def checker(request, embedder):
    return SupportChecker(CHUNKS, embedder, model=None if request.param == "rules" else FITTED)


@pytest.mark.parametrize("sentence, supported_by", [
    ("Staff can work from home for up to three days each week, provided their manager agrees.", "remote"),
    ("Tuesdays and Thursdays are anchor days when everyone is expected in the office.", "remote"),
    ("Employees may work remotely up to 5 days a week with manager approval.", None),  # a wrong number
    ("Employees may work remotely up to 3 days a week without manager approval.", None),  # a negation added
    ("Let me know if you have any other questions!", None),
    # the same duration in another unit is the document's; another duration is not
    ("An idle socket stays open for 5 minutes by default.", "timeout"),
    ("An idle socket stays open for 6 minutes by default.", None),
    # "They … cannot be booked": the sentence after the one holding the claim's words says it of them
    ("You can book a parking space in the underground garage in advance.", None),
])
def test_a_faithful_paraphrase_is_kept_and_a_wrong_claim_dropped(checker, sentence, supported_by):
    assert checker.check(sentence).chunk_id == supported_by


def _record(keep: bool, *candidates: dict) -> dict:
    base = dict.fromkeys(FEATURES, 0.0)
    return {"kind": "paraphrase" if keep else "wrong_number", "keep": keep, "rules_kept": False, "guard": "",
            "candidates": [[{**base, **c}[name] for name in FEATURES] for c in candidates]}


def _records() -> list[dict]:
    """Paraphrases whose best chunk holds most of their words; wrong claims that the evidence
    only negates or whose numbers stand elsewhere. A paraphrase's other chunk is far."""
    out = []
    for n in range(12):
        out.append(_record(True, {"lexical": 0.8 + n / 100, "closeness": 0.8}, {"lexical": 0.3, "closeness": 0.2}))
        out.append(_record(False, {"lexical": 0.8, "closeness": 0.8, "flip": 1.0}))
        out.append(_record(False, {"lexical": 0.7 + n / 100, "closeness": 0.7, "astray_numbers": 1.0}))
    return out


def test_the_fit_keeps_a_sentence_when_its_best_chunk_scores_above_even():
    model = tune_grounding.fit(_records())
    assert tune_grounding.kept(_record(True, {"lexical": 0.3, "closeness": 0.2}, {"lexical": 0.9, "closeness": 0.85}), model)
    assert not tune_grounding.kept(_record(False, {"lexical": 0.9, "closeness": 0.85, "flip": 1.0}), model)
    assert not tune_grounding.kept({**_record(True), "candidates": []}, model)  # no candidate chunk: dropped
    figures = tune_grounding.figures(_records(), model)
    assert figures["paraphrases_kept"] == 1.0 and figures["wrong_dropped"] == 1.0
    table = tune_grounding.rotation({"a": _records(), "b": _records(), "c": _records()})
    assert table["a"]["learned"]["mean"] == 1.0 and table["a"]["rules"]["paraphrases_kept"] == 0.0


def test_the_shipped_file_says_how_it_was_made_and_what_decides(embedder):
    data = learned.read(learned.MODEL_DIR / MODEL_FILE)
    assert data["command"].startswith("citebot tune --grounding") and len(data["data_hash"]) == 16
    assert data["fitted_on"] == ["eval/grounding/sentences.jsonl", "eval/grounding/fresh.jsonl"]
    assert set(data["rotation"]) == {"sentences", "held_out", "fresh"}
    # the flow decides as the file says: the fitted model only when it beat the rules held out
    assert (shipped() is not None) == (data["chosen"] == "learned")
    assert (SupportChecker(CHUNKS, embedder).model is not None) == (data["chosen"] == "learned")


def _write(folder, **changes) -> None:
    data = {**learned.read(learned.MODEL_DIR / MODEL_FILE), **changes}
    (folder / MODEL_FILE).write_text(json.dumps(data))


def test_a_model_fitted_on_other_features_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(learned.MODEL_ENV, str(tmp_path))
    _write(tmp_path, chosen="learned")
    assert shipped().features == FEATURES
    _write(tmp_path, chosen="rules")
    support_learned._cached.cache_clear()
    assert shipped() is None
    _write(tmp_path, chosen="learned", features=list(reversed(FEATURES)))
    support_learned._cached.cache_clear()
    with pytest.raises(learned.ModelError, match="refit it with `citebot tune`"):
        shipped()
    support_learned._cached.cache_clear()


def test_the_opposite_sentence_for_the_embedding_to_compare():
    assert toggled("Parking spaces cannot be booked.") == "Parking spaces can be booked."
    assert toggled("Employees may work remotely.") == "Employees may not work remotely."
    assert toggled("Uppercase variables don't work.") == "Uppercase variables do work."


def test_the_rules_guards_hold_whatever_the_model_says(embedder):
    """A model that would keep everything still cannot keep a number no chunk states, a
    pleasantry, or a sentence with too few of a chunk's words."""
    keep_all = learned.Linear(FEATURES, FITTED.mean, FITTED.scale, FITTED.coef * 0, 1.0)
    checker = SupportChecker(CHUNKS, embedder, model=keep_all)
    assert checker.check("Employees may work remotely up to 3 days a week with manager approval.").chunk_id == "remote"
    assert checker.check("Employees may work remotely up to 5 days a week with manager approval.").reason == "facts: 5"
    assert checker.check("Thanks, hope this helps!").reason == "pleasantry"
    assert checker.check("The cafeteria serves vegan lunches every Friday.").reason == "meaning"
