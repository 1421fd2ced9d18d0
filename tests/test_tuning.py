"""Every weight and threshold lives in one Tuning (rag_graph/tuning.py) that reaches the whole
flow through the Engine: other values change the answers without a code edit, and a value that
is no field, or of the wrong kind, is one line naming it."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rag_graph.engine import Engine
from rag_graph.tuning import DEFAULT, Tuning, tuned

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "how many paid sick days do I have?"  # two sentences by default (see the eval reports)


def test_overrides_are_parsed_by_the_type_of_each_field():
    changed = tuned(["max_sentences=1", "late_weight=1.5", "relevance_weights=0.6,0.3,0.1"])
    assert (changed.max_sentences, changed.late_weight, changed.relevance_weights) == (1, 1.5, (0.6, 0.3, 0.1))
    assert dataclasses.replace(changed, max_sentences=3, late_weight=2.0, relevance_weights=(0.59, 0.35, 0.06)) == DEFAULT


@pytest.mark.parametrize("override, named", [
    ("max_sentence=1", "max_sentences"),  # a typo names the fields there are
    ("max_sentences=one", "max_sentences takes int"),
    ("relevance_weights=0.6,0.4", "relevance_weights takes tuple"),
    ("late_weight", "NAME=VALUE"),
])
def test_a_bad_override_is_one_error_naming_it(override, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        tuned([override])


def test_every_field_says_where_it_came_from():
    """A field without a comment above it is a weight without an origin."""
    lines = (ROOT / "rag_graph" / "tuning.py").read_text().splitlines()
    names = {f.name for f in dataclasses.fields(Tuning)}
    for at, line in enumerate(lines):
        field = line.strip().split(":")[0]
        if line.startswith("    ") and field in names:
            above = next(lines[i] for i in range(at - 1, 0, -1) if not lines[i].strip().split(":")[0] in names)
            assert above.strip().startswith("#"), f"{field} has no comment giving its origin"


def test_the_engine_hands_its_tuning_to_the_whole_flow(engine):
    """The same question, same index: a shorter room for the answer keeps its best sentence only; a bar no
    evidence can clear turns the answer into an "I don't know"."""
    default = engine.ask(QUESTION)
    assert default["status"] == "answered" and len(engine.ask_cited(QUESTION)[1]) >= 2
    short = Engine(engine.settings, tuning=Tuning(max_answer_chars=80))
    assert short.ask(QUESTION)["status"] == "answered"
    assert [s["text"] for s in short.ask_cited(QUESTION)[1]] == ["Everyone gets 10 paid sick days per year, separate from vacation."]
    strict = Engine(engine.settings, tuning=Tuning(strong_similarity=1.01, strong_coverage=1.01))
    assert strict.ask(QUESTION)["status"] == "insufficient_context"


def test_citebot_eval_refuses_an_unknown_weight_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bot.cli", "eval", "--tests", str(ROOT / "eval" / "corpus.jsonl"),
                           "--corpus", str(ROOT / "corpus"), "--db", str(tmp_path / "db"), "--tune", "no_such=1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "no_such" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_router_reads_the_tuning_of_the_run_not_the_default():
    """Whether the evidence is fragmented (and its sections are fetched whole) is decided with
    the run's fragmented_margin: two sections 0.1 apart in relevance are one answer's evidence
    by default, and fragmented under a wider margin."""
    from types import SimpleNamespace

    from rag_graph.flow.graph import route_by_quality

    state = {"context_quality": "sufficient", "ranked_chunks": [
        {"source_id": "handbook", "anchor": "sick-leave", "chunk_index": 0, "relevance": 0.80},
        {"source_id": "handbook", "anchor": "vacation", "chunk_index": 0, "relevance": 0.70}]}
    def run(tuning):
        return SimpleNamespace(context=SimpleNamespace(tuning=tuning))
    assert route_by_quality(state, run(DEFAULT)) == "answer"
    assert route_by_quality(state, run(dataclasses.replace(DEFAULT, fragmented_margin=0.2))) == "expand"
