"""A deployment learns its own chunk ranker from its 👍/👎 votes (`citebot tune --feedback`):
votes cast through Slack's recording path on the real flow's answers over the bundled corpus,
the fit validated on the newest votes and on the eval labels, written into the deployment's
state folder only when it wins, read by the flow, and gone when the file is deleted."""
from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from bot import cli
from bot.admin import Admin
from bot.answering import Answering, Question
from bot.feedback import FeedbackLog
from bot.gaps import GapLog
from bot.shared import SharedState
from bot.slack.listeners.feedback import record_from_click
from bot.slack.render import render
from rag_graph.config import Settings
from rag_graph.engine import Engine
from rag_graph.scoring import deployment
from rag_graph.tools import labels, tune, tune_feedback
from rag_graph.tools.evaluation import load_cases
from rag_graph.tuning import DEFAULT
from conftest import BUNDLED_CORPUS, ROOT

QUESTIONS = Path(__file__).parent.parent / "fixtures" / "deployment-votes.jsonl"
# Never voted on: the hand weights cite the Who's-who entry of the engineering manager; the
# section on running an incident says who runs one. Votes on other questions whose answers
# cited a document's opening paragraph or the wrong neighbour teach the ranker to pass them.
UNSEEN = ("who runs an incident?", "Running an incident")


def cast(log: FeedbackLog, reply, helpful: bool, voter: str, reason: str = "wrong") -> dict:
    """A click on the answer's 👍/👎 as Slack sends it, then (for a 👎) the reason chosen."""
    buttons = render(reply)["blocks"][-1]["elements"][0]
    value = buttons["positive_button" if helpful else "negative_button"]["value"]
    body = {"user": {"id": voter}, "channel": {"id": "C1"}, "message": {"ts": "1.0"}}
    record = log.append(record_from_click(body, {"value": value}))
    return record if helpful else log.append({**record, "reason": reason, "user": voter})


def cited(engine: Engine, question: str) -> str:
    citations = engine.ask(question)["citations"]
    return citations[0]["section"] if citations else ""


@pytest.fixture(scope="module")
def deployment_(engine, tmp_path_factory):
    """The bundled corpus deployed with a state folder of its own: the eval labels of its
    question sets, and one vote on each answer its people got (👍 when the cited section is the
    one that answers, 👎 "wrong" when not), in the order they were asked."""
    root = tmp_path_factory.mktemp("deployment")
    state, folder = root / "state", root / "labels"
    # The ranker is measured by the chunk the answer cites first: without the writer's runner-up
    # (answer/extractive/runner_up.py), which quotes a second chunk and may cite it first.
    one_chunk = dataclasses.replace(DEFAULT, runner_up_share=2.0)
    own = Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db, state_dir=state), tuning=one_chunk)
    own.warm_up()
    measuring = Engine(own.settings.model_copy(update={"top_k": labels.HEAD}))
    vocabulary = measuring.index.vocabulary()
    folder.mkdir()
    for name in ("corpus", "corpus-threads"):  # the eval sets of the bundled corpus
        rows_ = [json.dumps({"set": name, "corpus": "bundled", **labels.label_case(measuring, case, vocabulary)})
                 for case in load_cases(ROOT / "eval" / f"{name}.jsonl")]
        (folder / f"{name}.jsonl").write_text("\n".join([json.dumps({"stamp": "test"}), *rows_]) + "\n")
    log, answering = FeedbackLog(state / "feedback.jsonl"), Answering(own, GapLog(state / "gaps.jsonl"))
    right = {}
    for n, line in enumerate(QUESTIONS.read_text().splitlines()):
        asked = json.loads(line)
        reply = answering.answer(Question("slack", "C1", f"U{n}", asked["question"], [], None))
        if reply.status == "answered":
            right[reply.ref] = asked["section"] in reply.output["citations"][0]["section"]
            cast(log, reply, right[reply.ref], f"U{n}")
    return SimpleNamespace(engine=own, state=state, labels=folder, votes=state / "feedback.jsonl", right=right)


def tune_on(votes: Path, where, monkeypatch) -> int:
    monkeypatch.setenv("CITEBOT_STATE_DIR", str(where.state))
    return cli.main(["tune", "--feedback", str(votes), "--labels", str(where.labels),
                     "--corpus", str(BUNDLED_CORPUS), "--db", where.engine.settings.db])


def test_votes_teach_the_deployment_to_cite_the_right_section(deployment_, monkeypatch, capsys):
    question, section = UNSEEN
    assert section not in cited(deployment_.engine, question)  # the hand weights cite another section
    assert not all(deployment_.right.values()) and sum(deployment_.right.values()) > 20
    assert tune_on(deployment_.votes, deployment_, monkeypatch) == 0
    said = capsys.readouterr().out
    model = deployment_.state / deployment.FILE
    assert "written: " + str(model) in said and "held-out feedback" in said
    data = json.loads(model.read_text())
    figures = data["held_out_feedback"]
    assert figures["fitted"] > figures["shipped"] and data["command"] == "citebot tune --feedback"
    assert not list(ROOT.glob("rag_graph/**/" + deployment.FILE))  # never into the repository
    try:
        assert section in cited(deployment_.engine, question)
        assert deployment_.engine.ranking_status().startswith("the deployment ranker " + str(model))
    finally:
        model.unlink()  # the roll back: the next question is ranked by the shipped weights
    assert section not in cited(deployment_.engine, question)
    assert deployment_.engine.ranking_status() == deployment.SHIPPED


def test_contradicting_votes_are_refused_and_nothing_is_written(deployment_, tmp_path, monkeypatch, capsys):
    """Every answer voted 👍 by one person and 👎 "wrong" by another: the votes teach nothing,
    the fit cannot beat the shipped weights on the held-out ones, and nothing is written."""
    votes = tmp_path / "feedback.jsonl"
    log = FeedbackLog(votes)
    for record in FeedbackLog(deployment_.votes).read():
        log.append(record)
        flipped = {"vote": "not_helpful", "reason": "wrong"} if record["vote"] == "helpful" else {"vote": "helpful", "reason": ""}
        log.append({**record, **flipped, "user": record["user"] + "-other"})
    assert tune_on(votes, deployment_, monkeypatch) == 1
    said = capsys.readouterr().out.splitlines()
    assert said[-1].startswith("refused: on the held-out feedback the fit scores")
    assert said[-1].endswith("nothing written, the shipped hand weights serve")
    assert not (deployment_.state / deployment.FILE).exists()


def test_too_few_votes_is_one_clear_line(deployment_, tmp_path, monkeypatch, capsys):
    votes = tmp_path / "feedback.jsonl"
    kept = deployment_.votes.read_text().splitlines()[:12]
    old = [json.dumps({k: v for k, v in json.loads(line).items() if k != "history"}) for line in kept[:3]]
    votes.write_text("\n".join(old + kept[3:] + ["{damaged"]) + "\n")
    assert tune_on(votes, deployment_, monkeypatch) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith(f"refused: 9 usable votes in {votes}, at least {tune_feedback.MIN_RECORDS} are needed")
    assert "3 recorded before votes kept their thread turns" in line and line.endswith("nothing written")


def test_votes_that_only_a_thread_or_another_reason_explain_are_left_out():
    base = {"status": "answered", "question": "q?", "chunk_ids": ["a::b::0"], "history": 0}
    records = [{**base, "vote": "helpful"}, {**base, "vote": "not_helpful", "reason": "wrong"},
               {**base, "vote": "not_helpful", "reason": "not_asked"}, {**base, "vote": "not_helpful", "reason": "outdated"},
               {**base, "vote": "not_helpful"}, {**base, "vote": "helpful", "history": 2},
               {**base, "vote": "helpful", "status": "insufficient_context", "chunk_ids": []}]
    kept, skipped = tune_feedback.usable(records)
    assert [r["sign"] for r in kept] == [1, -1, -1]
    assert skipped == {"a 👎 for another reason than wrong / not what I asked": 2, "asked inside a thread": 1,
                       "not an answer with a source": 1}


def test_the_newest_questions_are_held_out_with_every_vote_on_them():
    votes = [{"question": q} for q in "abcdefghij"] + [{"question": "C"}]
    train, held = tune_feedback.held_out(votes)
    assert sorted(r["question"].lower() for r in held) == ["c", "c", "i", "j"]
    assert [r["question"] for r in train] == list("abdefgh")


def _public(n=12) -> list[dict]:
    """Eval questions whose answer is the most relevant candidate: the hand order is right."""
    def candidate(name, label, relevance):
        return {"chunk_id": name, "text": name, "label": label, "similarity": relevance, "coverage": 0.3,
                "subject_coverage": 0.3, "keyword_score": 1.0, "late": 0.5, "relevance": relevance, "fused": 0.5,
                "title_match": 0.0, "section_match": 0.0, "chunk_index": 1, "chars": 400, "number_wanted_held": 0.0}
    return [{"corpus": "c", "split": "dev" if n_ % 2 else "test", "answerable": True, "keywords": [f"kw{n_}"],
             "candidates": [candidate(f"kw{n_} answer", 1.0, 0.6), candidate(f"other {n_}", 0.0, 0.5)]}
            for n_ in range(n)]


def test_a_fit_that_loses_on_the_eval_sets_is_refused(monkeypatch):
    """Votes that say the most relevant chunk is always wrong: the fit wins on the held-out
    votes, but would lose the eval questions, so it is refused."""
    monkeypatch.setattr(tune_feedback, "FEEDBACK_WEIGHT", 20.0)
    monkeypatch.setattr(tune_feedback, "C", 1.0)
    votes = [{**record, "question": f"q{n}", "sign": -1, "cited": record["candidates"][0]["chunk_id"],
              "candidates": [{**c, "label": float(c["label"] == 0)} for c in record["candidates"]]}
             for n, record in enumerate(_public(30))]
    train, held = tune_feedback.held_out(votes)
    with pytest.raises(tune_feedback.Refused, match=r"loses more than 0.02 MRR on the eval sets' dev half \(1.000 -> 0.500\)"):
        tune_feedback.decide(train, held, _public())


def test_a_deployment_ranker_of_other_features_is_refused_and_the_shipped_weights_serve(engine, tmp_path, caplog):
    questions = ["how long is paid parental leave here?", "where can I park at the office?"]
    shipped = [[c["chunk_id"] for c in engine.run(q)["ranked_chunks"]] for q in questions]
    weights = tune.hand_ranker()
    (tmp_path / deployment.FILE).write_text(json.dumps({**weights.as_dict(), "features": weights.features[::-1],
                                                        "candidates": 10}))
    own = Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db, state_dir=tmp_path))
    with caplog.at_level(logging.WARNING, logger="rag_graph.scoring.deployment"):
        assert [[c["chunk_id"] for c in own.run(q)["ranked_chunks"]] for q in questions] == shipped
    [warning] = [r for r in caplog.records if r.name == "rag_graph.scoring.deployment"]
    assert "refit it with `citebot tune`" in warning.getMessage() and "\n" not in warning.getMessage()
    status = Admin(own.settings.model_copy(update={"slack_admin_ids": ("UADMIN",)}), own, SharedState(None)).status("UADMIN")
    assert "• Ranking: the shipped hand weights (the deployment ranker was refused: " in status


def test_the_hand_weights_as_a_deployment_ranker_rank_as_the_flow_does(engine, tmp_path):
    """The file format and the flow's reading of it agree: the hand weights written as a
    deployment ranker leave every ranking as it was."""
    weights = tune.hand_ranker()
    (tmp_path / deployment.FILE).write_text(json.dumps({**weights.as_dict(), "candidates": weights.candidates}))
    own = Engine(Settings(corpus=BUNDLED_CORPUS, db=engine.settings.db, state_dir=tmp_path))
    assert own.ranking_status().startswith("the deployment ranker")
    for question in ["how many vacation days do I get?", "who approves my expense report?"]:
        assert ([c["chunk_id"] for c in own.run(question)["ranked_chunks"]]
                == [c["chunk_id"] for c in engine.run(question)["ranked_chunks"]])


def test_without_labeled_eval_sets_nothing_is_asked_or_written(deployment_, tmp_path, monkeypatch, capsys):
    """The eval sets are what keeps a fit from losing elsewhere: without them, one line, before
    any vote is asked again."""
    where = SimpleNamespace(**{**vars(deployment_), "labels": tmp_path})
    assert tune_on(deployment_.votes, where, monkeypatch) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith("refused: no labeled eval questions to check against") and line.endswith("nothing written")
    assert not (deployment_.state / deployment.FILE).exists()
