"""Optional rerankers (CITEBOT_RERANKER) through the real flow: an Engine over the bundled
corpus's LanceDB table orders its evidence with a real cross-encoder (a tiny BERT built and
trained here, loaded through sentence-transformers from a folder) or with a chat model behind a
local OpenAI-compatible server (tests/chat_server.py), and the answer follows the new order.
A reranker that fails leaves the order as it was and the reply says so; a setting that cannot
work is one line."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from chat_server import ChatServer
from conftest import BUNDLED_CORPUS, ROOT
from rag_graph.config import Settings, SettingsError
from rag_graph.engine import Engine
from rag_graph.retrieval.embeddings import bundled_model_path

QUESTION = "How many days per week can employees work remotely?"
BEST = "hr-handbook-2025::remote-work::0"  # what the ranking puts first, and the answer cites
PREFERRED = "hr-handbook-2025::home-office-support::0"  # what the trained cross-encoder prefers
NOTE = "the reranker was unavailable"


def reranking(engine: Engine, reranker: str, **settings) -> Engine:
    return Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db, reranker=reranker, **settings))


@pytest.fixture(scope="module")
def cross_encoder(engine, tmp_path_factory):
    """A cross-encoder of 2 layers and hidden size 32 with the bundled model's WordPiece
    tokenizer, trained for a few steps on this question's candidates to score the home-office
    section highest and the remote-work sections lowest (its weights start random, so its order
    is only predictable once trained), saved as a folder."""
    torch.manual_seed(0)
    ranked = engine.run(QUESTION)["ranked_chunks"]
    assert ranked[0]["chunk_id"] == BEST and PREFERRED in [c["chunk_id"] for c in ranked]
    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    model = BertForSequenceClassification(BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, num_labels=1))
    wanted = torch.tensor([1.0 if c["chunk_id"] == PREFERRED else 0.0 if "::remote-work::" in c["chunk_id"] else 0.5
                           for c in ranked])
    pairs = tokenizer([QUESTION] * len(ranked), [c["text"] for c in ranked], truncation=True, padding=True,
                      return_tensors="pt")
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(80):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(**pairs).logits.squeeze(-1), wanted)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    folder = tmp_path_factory.mktemp("cross-encoder")
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_cross_encoder_reorders_the_evidence_and_the_answer_follows(engine, cross_encoder):
    before = engine.ask(QUESTION)
    reranked = reranking(engine, f"cross-encoder:{cross_encoder}")
    reranked.warm_up()  # loads the model once, before the first question
    state = reranked.run(QUESTION)
    output = state["final_output"]
    assert [c["chunk_id"] for c in before["citations"]] == [BEST]
    assert state["ranked_chunks"][0]["chunk_id"] == PREFERRED
    assert "::remote-work::" not in " ".join(c["chunk_id"] for c in state["context"])
    # the preferred chunk leads the answer (another chunk that scores almost as well may follow it:
    # tests/answer/test_runner_up.py)
    assert output["status"] == "answered" and output["citations"][0]["chunk_id"] == PREFERRED, output
    assert "home office stipend" in output["answer"] and not output["notes"]


def test_a_reranker_setting_that_is_not_one_is_one_line():
    for value, says in (("bm25", "must be llm or cross-encoder:<model name or folder>"),
                        ("cross-encoder:", "must be llm or cross-encoder:"),
                        ("llm", "needs CITEBOT_LLM")):
        with pytest.raises(SettingsError) as error:
            Settings.from_env(reranker=value)
        message = str(error.value)
        assert message.startswith("CITEBOT_RERANKER ") and says in message and "\n" not in message, message


def test_a_cross_encoder_that_will_not_load_is_one_line(engine, tmp_path):
    missing, broken = tmp_path / "no-such-model", tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    for folder, says in ((missing, "no such folder, and the model hub is not used (HF_HUB_OFFLINE=1)"),
                         (bundled_model_path(), "is not a cross-encoder"),  # an embedding model
                         (broken, "cannot be loaded")):
        with pytest.raises(SettingsError) as error:
            reranking(engine, f"cross-encoder:{folder}").warm_up()
        message = str(error.value)
        assert message.startswith(f"CITEBOT_RERANKER=cross-encoder:{folder} ") and says in message, message
        assert "\n" not in message


def test_the_cli_says_a_hub_name_cannot_be_reached_offline_in_one_line(engine, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(engine.settings.db, db)  # the index as built: nothing to embed again
    result = subprocess.run([sys.executable, "-m", "bot.cli", "ask", QUESTION], capture_output=True, text=True,
                            cwd=ROOT, timeout=300,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "CITEBOT_DB": str(db),
                                 "CITEBOT_CORPUS": str(BUNDLED_CORPUS),
                                 "CITEBOT_RERANKER": "cross-encoder:cross-encoder/ms-marco-MiniLM-L6-v2"})
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert errors == ["error: CITEBOT_RERANKER=cross-encoder:cross-encoder/ms-marco-MiniLM-L6-v2 cannot be loaded: "
                      "no such folder, and the model hub is not used (HF_HUB_OFFLINE=1); set it to a cross-encoder's "
                      "folder (or a hub name where the hub can be reached), or leave it empty"], result.stderr[-2000:]


# --- CITEBOT_RERANKER=llm: the chat model ranks the top candidates in one call ----------------

def ranking_prompts(server: ChatServer) -> list[str]:
    return [p for p in server.prompts() if '<document number="' in p]


def test_the_chat_model_ranks_in_one_call_and_its_order_is_used(engine):
    with ChatServer("good") as server:
        server.script = ["3, 1"]  # the ranking call comes first: passage 3 best, then 1, the rest after
        chat = reranking(engine, "llm", llm="openai:test-model", llm_base_url=server.base_url)
        state = chat.run(QUESTION)
        prompts = server.prompts()
        ranking_call = json.loads(server.requests[0])
    [asked] = ranking_prompts(server)
    shown = [c["chunk_id"] for c in engine.run(QUESTION)["ranked_chunks"]]
    order = [c["chunk_id"] for c in state["ranked_chunks"]]
    assert asked == prompts[0] and len(prompts) == 2  # one ranking call, then the answer's
    assert asked.count('<document number="') == 5 and "Question: " + QUESTION in asked
    assert ranking_call.get("max_completion_tokens", ranking_call.get("max_tokens")) == 32
    assert order[:5] == [shown[2], shown[0], shown[1], shown[3], shown[4]] and order[5:] == shown[5:]
    # The writer reads the documents in that order: its first document is the ranking's first.
    assert prompts[1].index(f'chunk_id="{shown[2]}"') < prompts[1].index(f'chunk_id="{shown[0]}"')
    assert state["final_output"]["status"] == "answered" and not state["final_output"]["notes"]


def test_the_chat_model_ranking_by_the_question_is_read(engine):
    with ChatServer("good") as server:  # the fake ranks as a model following the prompt would
        state = reranking(engine, "llm", llm="openai:test-model", llm_base_url=server.base_url).run(QUESTION)
    assert state["reranker_unavailable"] == "" and len(ranking_prompts(server)) == 1
    assert state["ranked_chunks"][0]["chunk_id"] == BEST
    assert [c["chunk_id"] for c in state["final_output"]["citations"]] == [BEST]


@pytest.mark.parametrize("reply", ["I think the first one is the most useful.", "0, 9, 42", ""])
def test_a_ranking_that_cannot_be_read_keeps_the_order_and_says_so(engine, reply):
    with ChatServer("good") as server:
        server.script = [reply]
        state = reranking(engine, "llm", llm="openai:test-model", llm_base_url=server.base_url).run(QUESTION)
    assert [c["chunk_id"] for c in state["ranked_chunks"]] == [c["chunk_id"] for c in engine.run(QUESTION)["ranked_chunks"]]
    output = state["final_output"]
    assert output["status"] == "answered" and [c["chunk_id"] for c in output["citations"]] == [BEST]
    assert any(NOTE in note for note in output["notes"]), output["notes"]


@pytest.mark.parametrize("mode", ["hang", "500"])
def test_a_hanging_or_failing_server_keeps_the_order_within_the_rankers_time(engine, mode):
    with ChatServer(mode) as server:
        chat = reranking(engine, "llm", llm="openai:test-model", llm_base_url=server.base_url, llm_timeout=4)
        started = time.perf_counter()
        output = chat.ask(QUESTION)
        waited = time.perf_counter() - started
    assert output["status"] == "answered" and [c["chunk_id"] for c in output["citations"]] == [BEST], output
    assert any(NOTE in note for note in output["notes"]) and any("writer was unavailable" in n for n in output["notes"])
    # The ranking's share (1 s) plus the answer's own timeout (4 s) plus the offline answer.
    assert waited < 1 + 4 + 5, waited


def test_an_open_circuit_skips_the_ranking_call(engine):
    with ChatServer("500") as server:
        chat = reranking(engine, "llm", llm="openai:test-model", llm_base_url=server.base_url, llm_timeout=4)
        for _ in range(2):
            chat.ask(QUESTION)  # the ranking's and the answer's failures count: the circuit opens
        calls = len(server.requests)
        output = chat.ask(QUESTION)
        assert len(server.requests) == calls  # neither the ranking nor the answer called the server
    assert output["status"] == "answered" and any(NOTE in note for note in output["notes"])


def test_a_ranking_that_failed_is_not_tried_again_after_a_rewrite(engine):
    with ChatServer("500") as server:
        chat = reranking(engine, "llm", llm="openai:test-model", llm_base_url=server.base_url, llm_timeout=4)
        state = chat.run("What is the company's policy on bringing horses to work?")
    assert state["retrieval_attempts"] == 2  # the question was searched again, after a rewrite…
    assert len(ranking_prompts(server)) == 1  # …and ranked once: one wait per question


def test_a_ranking_still_being_written_at_its_deadline_is_abandoned(engine):
    with ChatServer("drip") as server:  # every word in time for the client, the reply far too slow
        server.script = ["1, 2, 3, 4, 5"]
        chat = reranking(engine, "llm", llm="openai:test-model", llm_base_url=server.base_url, llm_timeout=4)
        state = chat.run(QUESTION)
    # Our deadline (TimeoutError), not the client's read timeout (APITimeoutError): each word came in time.
    assert state["reranker_unavailable"] == "the chat model did not rank: TimeoutError", state["reranker_unavailable"]
    assert [c["chunk_id"] for c in state["ranked_chunks"]] == [c["chunk_id"] for c in engine.run(QUESTION)["ranked_chunks"]]
    assert any(NOTE in note for note in state["final_output"]["notes"])


def test_the_ranking_prompt_holds_no_secret_no_internal_field_and_no_orders(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "tests/fixtures/injected_corpus", corpus)
    shutil.copy(ROOT / "tests/fixtures/redaction_corpus/access.md", corpus / "access.md")
    with ChatServer("good") as server:
        chat = Engine(Settings(corpus=corpus, db=str(tmp_path / "db"), llm="openai:test-model",
                               llm_base_url=server.base_url, reranker="llm"))
        chat.refresh()
        for question in ("what is the staging database login for the release job?",
                         "What is the daily meal allowance on business travel?", "How much does a monthly parking permit cost?"):
            chat.ask(question)
        asked = "\n".join(ranking_prompts(server))
    assert asked.count("Ranking:") == 3 and "release" in asked and "$75 per day" in asked and "$40" in asked  # the sections went…
    for secret in ("Tr0ub4dor&3xyz", "xoxb-123456789012", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "ghp_aB3dE5fG7hI9",
                   "internal_notes", "owner_email", "PWNED-", "canary-owner", "CANARY-INJ"):
        assert secret not in asked, secret  # …but no secret, no internal field and no order to the model
