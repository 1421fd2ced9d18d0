"""The chat-model path against a real OpenAI-compatible HTTP server (tests/chat_server.py) through
LangChain's ChatOpenAI, as `CITEBOT_LLM=openai:<model>` + `CITEBOT_LLM_BASE_URL` set it up: the
answer a model writes, the bytes it is sent, and what a user gets when the server hangs, rate
limits, fails or is down (the offline answer with a note, within the timeout), the circuit
breaker, and one-line errors for settings that cannot work — in process, in the CLI and in Slack."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "bot"))
from bot.slack.render import PLACEHOLDER  # noqa: E402
from bot_harness import QUESTION, fake, start_bot  # noqa: F401 (fixtures)
from chat_server import ChatServer  # noqa: E402
from conftest import BUNDLED_CORPUS, ROOT
from rag_graph.config import Settings
from rag_graph.engine import Engine
from servers import free_port

pytest.importorskip("langchain_openai", reason="pip install 'citebot[llm]'")

FALLBACK = "the answer writer was unavailable"
INTERNAL_NOTE = "Approved by the leadership team on 2024-12-10"  # the 2025 handbook's internal_notes
SLACK = "how long until we have to get an expense claim in?"


def chat_engine(engine: Engine, base_url: str, timeout: float = 20.0, db: str | None = None) -> Engine:
    settings = Settings(corpus=BUNDLED_CORPUS, db=db or engine.settings.db, llm="openai:test-model",
                        llm_base_url=base_url, llm_timeout=timeout)
    return Engine(settings)


def offline(output: dict) -> bool:
    return any(FALLBACK in note.lower() for note in output["notes"])


def test_a_model_that_never_cites_still_answers_with_the_chunk_that_supports_it(engine):
    with ChatServer("good") as server:
        output = chat_engine(engine, server.base_url).ask(QUESTION)
        request = json.loads(server.requests[0])
    assert output["status"] == "answered" and output["citations"] and not offline(output), output
    assert output["answer"] in server.prompts()[0]  # the model's sentence, shown
    assert request.get("max_completion_tokens", request.get("max_tokens")) == 400 and request["model"] == "test-model"


def test_the_bytes_sent_hold_no_internal_field_and_no_secret(engine, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED_CORPUS, corpus)
    shutil.copy(ROOT / "tests/fixtures/redaction_corpus/access.md", corpus / "access.md")
    with ChatServer("good") as server:
        chat = Engine(Settings(corpus=corpus, db=str(tmp_path / "db"), llm="openai:test-model",
                               llm_base_url=server.base_url))
        chat.refresh()
        chat.ask(QUESTION)
        chat.ask("what is the staging database login for the release job?")
        chat.ask("which token does the release bot post with?")
        sent = b"".join(server.requests)
    assert len(server.requests) >= 3 and b"release" in sent  # the secret-bearing section was sent…
    for secret in (INTERNAL_NOTE, "Tr0ub4dor&3xyz", "xoxb-123456789012", "AKIAIOSFODNN7EXAMPLE",
                   "wJalrXUtnFEMI", "ghp_aB3dE5fG7hI9", "internal_notes", "owner_email", "people-ops@orrinfold.example"):
        assert secret.encode() not in sent, secret  # …but never the secret itself nor internal fields


def test_a_hanging_server_gets_the_offline_answer_within_the_timeout(engine):
    with ChatServer("hang") as server:
        chat = chat_engine(engine, server.base_url, timeout=3)
        chat.ask("warm up")  # models loaded; the breaker counts this failure too
        started = time.perf_counter()
        output = chat.ask(QUESTION)
        waited = time.perf_counter() - started
    assert output["status"] == "answered" and offline(output) and "3 days a week" in output["answer"], output
    assert waited < 3 + 5, waited  # the timeout plus the offline answer


def test_rate_limits_are_retried_after_retry_after_a_bounded_number_of_times_then_answered_offline(engine):
    with ChatServer("429", retry_after=1) as server:
        started = time.perf_counter()
        output = chat_engine(engine, server.base_url, timeout=20).ask(QUESTION)
        waited = time.perf_counter() - started
    assert len(server.requests) == 3, len(server.requests)  # never the SDK's own retries on top
    assert waited >= 2  # Retry-After: 1, twice
    assert output["status"] == "answered" and offline(output), output


def test_server_errors_are_retried_then_answered_offline_and_refused_falls_back_at_once(engine):
    with ChatServer("500") as server:
        output = chat_engine(engine, server.base_url).ask(QUESTION)
    assert len(server.requests) == 3 and offline(output), output
    chat = chat_engine(engine, f"http://127.0.0.1:{free_port()}/v1")
    chat.ask("warm up")
    started = time.perf_counter()
    output = chat.ask(QUESTION)
    assert offline(output) and output["citations"] and time.perf_counter() - started < 5, output


def test_the_circuit_breaker_opens_after_repeated_failures_and_closes_when_the_model_answers(engine):
    with ChatServer("500") as server:
        chat = chat_engine(engine, server.base_url)
        chat.deps.generator.limits = type(chat.deps.generator.limits)(backoff=0.01)
        assert chat.writer_status() == "openai:test-model: available"
        for _ in range(3):
            assert offline(chat.ask(QUESTION))
        calls = len(server.requests)
        output = chat.ask(QUESTION)
        assert offline(output) and len(server.requests) == calls  # skipped: no request at all
        assert "unavailable after 3 failures" in chat.writer_status()
        chat.deps.generator.breaker.cooldown = 0.2
        time.sleep(0.3)
        server.mode = "good"
        output = chat.ask(QUESTION)
    assert not offline(output) and len(server.requests) == calls + 1, output
    assert chat.writer_status() == "openai:test-model: available"


def _citebot(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1", **env})


def test_the_cli_answers_offline_when_the_endpoint_hangs(engine, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(engine.settings.db, db)
    with ChatServer("hang") as server:
        result = _citebot("ask", QUESTION, env={"CITEBOT_DB": str(db), "CITEBOT_CORPUS": str(BUNDLED_CORPUS),
                                                 "CITEBOT_LLM": "openai:test-model", "CITEBOT_LLM_TIMEOUT": "2",
                                                 "CITEBOT_LLM_BASE_URL": server.base_url})
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "3 days a week" in result.stdout and FALLBACK in result.stdout.lower()


@pytest.mark.parametrize("spec, env, says", [
    ("nosuch:model", {}, "unknown provider"),
    ("anthropic:claude-haiku-4-5", {}, "pip install langchain-anthropic"),
    ("openai:gpt-4o-mini", {"OPENAI_API_KEY": ""}, "set OPENAI_API_KEY"),
])
def test_a_chat_model_setting_that_cannot_work_is_one_line(tmp_path, spec, env, says):
    result = _citebot("ask", QUESTION, env={"CITEBOT_DB": str(tmp_path / "db"), "CITEBOT_LLM": spec,
                                             "CITEBOT_CORPUS": str(BUNDLED_CORPUS), **env})
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: CITEBOT_LLM={spec}") and says in lines[0]


def _thread_reply(fake, ts: str, timeout: float = 60) -> str:
    """The text of the bot's answer in a thread, however it was delivered (posted, or streamed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [m for m in fake.thread("C1", ts) if m.get("bot_id") == "BBOT" and m.get("text") != PLACEHOLDER]
        if done and not fake.calls("chat.startStream") or fake.calls("chat.stopStream") or fake.calls("chat.postMessage"):
            if done:
                return done[-1]["text"]
        time.sleep(0.1)
    raise AssertionError("no answer in the thread")


def test_slack_gets_the_offline_answer_when_the_model_hangs_and_the_written_one_when_it_answers(
        engine, start_bot, fake):
    with ChatServer("hang") as server:
        chat = chat_engine(engine, server.base_url, timeout=3)
        bot = start_bot(chat)
        bot.mention(QUESTION, ts="1700000100.000100")
        first = _thread_reply(fake, "1700000100.000100")
        assert FALLBACK in first.lower() and "3 days a week" in first, first
        server.mode = "good"
        bot.mention(SLACK, ts="1700000200.000100")
        written = _thread_reply(fake, "1700000200.000100")
    assert FALLBACK not in written.lower() and written.split(" (Note")[0] in " ".join(server.prompts()[-1].split())
