"""A short follow-up with no word pointing back ("which status codes get retried?" after a
question on undici's RetryAgent) stays on its thread: it only makes sense with the thread's
subject. The thread reader learned the opposite while the dev turns held 7 follow-ups of that
shape to 26 new subjects; the eval's dev halves now hold 33 more, written from the documents.

The turn is one of undici-threads' dev turns, asked over the undici docs npm installs (the eval's
corpus, `rag_graph.tools.eval_all.CORPORA`); skipped where npm is not installed."""
import pytest

from rag_graph.config import Settings
from rag_graph.engine import Engine
from rag_graph.tools.eval_all import CORPORA

UNDICI = CORPORA["undici"]
RETRY = [{"role": "user", "content": "how many times does undici's RetryAgent retry by default?"},
         {"role": "assistant", "content": "maxRetries defaults to 5, with a minimum wait of 500 ms that grows by a "
                                          "timeoutFactor of 2."}]


@pytest.fixture(scope="module")
def undici(tmp_path_factory):
    if not UNDICI.is_dir():
        pytest.skip(f"no undici docs at {UNDICI} (installed with npm)")
    engine = Engine(Settings(corpus=UNDICI, db=str(tmp_path_factory.mktemp("undici") / "lancedb")))
    engine.refresh()
    engine.warm_up()
    return engine


def test_a_short_follow_up_with_no_word_pointing_back_keeps_the_thread(undici):
    question = "which status codes get retried?"
    state = undici.run(question, RETRY)
    assert state["retrieval_query"] != question and "retry" in state["retrieval_query"].lower()
    assert "429" in state["final_output"]["answer"]
    cited = {c["source_id"] for c in state["final_output"]["citations"]}
    assert any("retry" in source.lower() for source in cited)
