"""The runner-up chunk's answer: when another chunk's best sentence scores almost as well as the
best sentence of all, the answer quotes it too (rag_graph/answer/extractive/runner_up.py).

tests/fixtures/undici_client_docs holds undici's `Client` page, unchanged (Matteo Collina and undici
contributors, MIT License)."""
import dataclasses
import shutil
from pathlib import Path

import pytest

from rag_graph.answer.extractive.runner_up import runner_up
from rag_graph.answer.passages import Candidate
from rag_graph.config import Settings
from rag_graph.engine import Engine
from rag_graph.tuning import DEFAULT

UNDICI_DOCS = Path(__file__).parent.parent / "fixtures" / "undici_client_docs"
OFF = dataclasses.replace(DEFAULT, runner_up_share=2.0)  # never: no sentence scores twice the best


def _candidate(score: float, rank: int, position: int = 0, text: str = "A sentence on the cache.",
               terms=("cach",)) -> Candidate:
    return Candidate(score, score, rank, position, text, f"c{rank}", set(terms), frozenset())


def _runner_up(pool, picked, asked=("cach",)):
    return runner_up(pool, picked, pool, set(asked), DEFAULT)


@pytest.fixture(scope="module")
def undici_index(tmp_path_factory) -> Settings:
    folder = tmp_path_factory.mktemp("undici")
    shutil.copytree(UNDICI_DOCS, folder / "corpus")
    settings = Settings(corpus=folder / "corpus", db=str(folder / "lancedb"))
    Engine(settings).refresh()
    return settings


def test_the_answer_quotes_the_chunk_that_ranked_second_when_it_scores_almost_as_well(undici_index):
    """A dev conversation of the undici set: after the default keepAliveTimeout, "what's the upper
    limit?" was answered with keepAliveTimeoutThreshold and maxFragments, from the chunk ranked
    first; the limit (keepAliveMaxTimeout, "Defaults to 10 minutes") is the best sentence of the
    chunk before it, within a few per cent of the best."""
    history = [{"role": "user", "content": "what's the default keepAliveTimeout on an undici Client?"},
               {"role": "assistant", "content": "4e3 ms (4 seconds): a socket without active requests times out "
                                                "after that, unless keep-alive hints from the server override it."}]
    engine = Engine(undici_index)
    engine.warm_up()
    out = engine.run("what's the upper limit?", history)["final_output"]
    assert out["status"] == "answered", out
    assert "Defaults to 10 minutes" in out["answer"], out["answer"]
    assert len(out["answer"]) <= DEFAULT.max_answer_chars
    # each quote cites its chunk (two chunks of one section are one source line, with both ids)
    assert len({i for c in out["citations"] for i in c["chunk_ids"]}) >= 2, out["citations"]
    alone = Engine(undici_index, tuning=OFF)
    alone.warm_up()
    assert "10 minutes" not in alone.run("what's the upper limit?", history)["final_output"]["answer"]


def test_the_runner_up_is_the_best_sentence_of_a_chunk_not_shown_yet():
    best, same_chunk, other = _candidate(2.0, 0), _candidate(1.9, 0, 1), _candidate(1.7, 1)
    pool = [best, same_chunk, other]
    assert _runner_up(pool, [best]) is other  # the best's own chunk is not a second source
    assert _runner_up(pool, [best, other]) is None  # its chunk is quoted already


def test_a_chunk_well_behind_or_an_example_is_no_runner_up():
    best = _candidate(2.0, 0)
    assert _runner_up([best, _candidate(1.5, 1)], [best]) is None  # 75 % of the best: the best wins
    example = _candidate(1.9, 1, text="For example: npm cache clean --force.")
    pointer = _candidate(1.9, 2, text="See the [cache page](cache.md) for details.")
    assert _runner_up([best, example, pointer, _candidate(1.7, 3)], [best]).rank == 3
    typed = dataclasses.replace(best, typed=True)  # the best holds the kind of answer asked for
    assert _runner_up([typed, _candidate(1.9, 1)], [typed]) is None
    assert _runner_up([_candidate(-0.5, 0), _candidate(-0.4, 1)], []) is None  # nothing scored


def test_a_runner_up_that_brings_a_word_of_the_question_the_shown_chunks_lack_stays_out():
    """"can I bring my dog to the office?": the best sentence is a case study's on returning to the
    office; a glossary's "eat your own dog food" would make "dog" seem answered."""
    asked = ("bring", "dog", "offic")
    best = _candidate(2.0, 0, text="The team came back to the office in May.", terms=("offic",))
    glossary = _candidate(1.8, 1, text="Dogfooding: eat your own dog food.", terms=("dog",))
    assert _runner_up([best, glossary], [best], asked) is None
    # the best's chunk holds "dog" elsewhere: the runner-up brings no word it lacks
    dogs = _candidate(0.5, 0, 3, "Dogs stayed home.", terms=("dog",))
    assert runner_up([best, glossary], [best], [best, glossary, dogs], set(asked), DEFAULT) is glossary
