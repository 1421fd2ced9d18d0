"""The canary suite: restricted documents (tests/fixtures/access_corpus, `audience:`) hold unique
canary strings. Asked directly, by paraphrase, by follow-up, in a multi-part question and through a
conflict with a public document, from allowed and disallowed channels and DMs, a canary appears
only where allowed; elsewhere the answer is the one an index without the restricted documents
gives: an honest "I don't know" that names nothing of them. Through the Engine for every form and
place, and end to end through the Slack app against FakeSlack for the channel and DM cases."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.access import Access
from bot.slack.render import PLACEHOLDER
from bot_harness import ADMIN, fake, mrkdwn_of, start_bot  # noqa: F401 (fixtures)
from teams_harness import ADMIN_AAD, connector, start_teams  # noqa: F401 (fixtures)
from rag_graph.config import Settings
from rag_graph.engine import Engine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = FIXTURES / "access_corpus"
ACCESS_FILE = FIXTURES / "access.yml"
PEOPLE_OPS = "people-ops"  # the folder of the documents for people-ops, which the twin corpus leaves out
SEVERANCE, LEAVE_PILOT, BREACH = "ZEPHYRQUILL", "MARLINFROST", "OSPREYLANTERN"
# What would betray a restricted document: its canaries, ids, titles and the memo's figure.
TRACES = (SEVERANCE, LEAVE_PILOT, BREACH, "severance-procedure", "Severance Procedure", "leave-memo",
          "Leave Memo", "People Partners", "20 weeks", "breach-runbook", "Breach Response", "11 weeks")

FORMS = {  # form -> (question, history asked before it in the same place, or None)
    "direct": ("What is the severance approval code?", None),
    "paraphrase": ("Which code signs off a termination payout agreement?", None),
    "follow-up": ("and what code approves it?", "How is severance pay calculated?"),
    "multi-part": ("How many days can I work remotely, and what is the severance approval code?", None),
    "conflict": ("How many weeks of paid parental leave do parents get?", None),
}
CANARY = {"conflict": LEAVE_PILOT}
MEMBERS = {"S0PEOPLE": {"U0MEMBER"}}
HR_AAD = "6f1c2e0a-0000-4000-8000-00000000beef"  # people-ops in tests/fixtures/access.yml
PLACES = {  # place -> (how the bot resolves it, may it read people-ops documents)
    "#hr-team channel": (lambda a: a.for_channel("C0HRTEAM"), True),
    "#general channel": (lambda a: a.for_channel("C0GENERAL"), False),
    "#eng-help channel (engineering/**)": (lambda a: a.for_channel("C0ENGHELP"), False),
    "DM, people-ops by user group": (lambda a: a.for_user("U0MEMBER", lambda g: MEMBERS.get(g, ())), True),
    "DM, security lead": (lambda a: a.for_user("U0SECLEAD"), False),
    "DM, anyone else": (lambda a: a.for_user("U0OTHER", lambda g: MEMBERS.get(g, ())), False),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    engine = Engine(Settings(corpus=CORPUS, db=str(tmp_path_factory.mktemp("access") / "lancedb")))
    engine.refresh()
    return engine


@pytest.fixture(scope="module")
def public_twin(tmp_path_factory) -> Engine:
    """The same corpus without the people-ops documents: what a place that may not read them must
    answer, asked in the same scope (so the security runbook stays for the security lead only)."""
    corpus = tmp_path_factory.mktemp("public") / "corpus"
    shutil.copytree(CORPUS, corpus)
    shutil.rmtree(corpus / PEOPLE_OPS)
    twin = Engine(Settings(corpus=corpus, db=str(tmp_path_factory.mktemp("twin") / "lancedb")))
    twin.refresh()
    return twin


def ask(engine: Engine, form: str, scope) -> dict:
    """The final state of the form's question in a place, after its history in the same place."""
    question, before = FORMS[form]
    history = []
    if before:
        first = engine.ask(before, access=scope)
        history = [{"role": "user", "content": before}, {"role": "assistant", "content": first["answer"]}]
    return engine.run(question, history, access=scope)


def visible(state: dict) -> str:
    """Everything a reader could see or a later node could pass on."""
    return json.dumps([state["final_output"], state.get("contradictions", [])], ensure_ascii=False)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("form", FORMS)
def test_a_canary_appears_only_where_its_document_is_allowed(engine, public_twin, place, form):
    resolve, allowed = PLACES[place]
    scope = resolve(Access.load(ACCESS_FILE))
    state = ask(engine, form, scope)
    canary = CANARY.get(form, SEVERANCE)
    if allowed:
        assert canary in state["final_output"]["answer"]
        return
    text = visible(state)
    assert not [trace for trace in TRACES if trace in text and not (trace in (BREACH, "breach-runbook", "Breach Response")
                                                                     and "security" in scope.audiences)]
    # No hint either: exactly what an index that never held the people-ops documents answers
    # (for the channel limited to engineering/**, the same index limited the same way).
    twin = ask(public_twin, form, scope)["final_output"]
    output = state["final_output"]
    assert (output["status"], output["answer"], output["notes"], output["citations"], output["knowledge_gap"],
            output["closest"]) == \
           (twin["status"], twin["answer"], twin["notes"], twin["citations"], twin["knowledge_gap"], twin["closest"])
    if form in ("direct", "paraphrase", "follow-up"):
        assert output["status"] == "insufficient_context" and output["answer"].startswith("I don't know")


def test_the_allowed_side_of_a_conflict_names_the_public_document_it_overrides(engine):
    state = engine.run(FORMS["conflict"][0], access={"audiences": ["people-ops"]})
    assert [c["loser"]["title"] for c in state["contradictions"]] == ["Parental Leave"]
    public = engine.run(FORMS["conflict"][0])
    assert "16 weeks" in public["final_output"]["answer"] and public["contradictions"] == []


def test_a_channel_limited_to_a_folder_answers_only_from_it(engine):
    scope = {"sources": ["engineering/**"]}
    assert "15 minutes" in engine.ask("How fast must a page be acknowledged?", access=scope)["answer"]
    assert engine.ask("How many days can I work remotely?", access=scope)["status"] == "insufficient_context"
    # a restricted document inside the folder stays restricted
    assert BREACH not in json.dumps(engine.ask("What is the ceremony phrase for the vault master key?",
                                               access=scope))
    assert BREACH in engine.ask("What is the ceremony phrase for the vault master key?",
                                access={"audiences": ["security"]})["answer"]


def test_every_read_of_a_question_is_filtered_inside_the_index(engine):
    public, hr = engine.index.scoped(None), engine.index.scoped({"audiences": ["people-ops"]})
    # a prefilter: the best match is restricted, yet a permitted row still fills the top 1
    for mode in ("hybrid", "semantic", "keyword"):
        [row] = public.search("severance approval code", mode=mode, top_k=1)
        assert row["source_id"] not in ("severance-procedure", "leave-memo-2026"), mode
        assert hr.search("severance approval code", mode=mode, top_k=1)[0]["source_id"] == "severance-procedure"
    # a public section linking to a restricted document does not pull it in
    chunk = {"chunk_id": "parental-leave::length-of-leave::0", "source_id": "parental-leave",
             "anchor": "length-of-leave", "links": ["leave-memo-2026"], "superseded_by": ""}
    assert "leave-memo-2026" in {r["source_id"] for r in engine.index.related([chunk])}
    assert "leave-memo-2026" not in {r["source_id"] for r in public.related([chunk])}
    # nor do its words or names reach the term counts and the gazetteer
    assert "zephyrquill" in hr.vocabulary()[0] and "zephyrquill" not in public.vocabulary()[0]
    assert hr.entities().mentions("the Severance Procedure") and not public.entities().mentions("the Severance Procedure")


def test_suggested_prompts_come_only_from_public_documents(engine):
    prompts = json.dumps(engine.suggested_prompts(limit=10))
    assert prompts != "[]" and not [trace for trace in TRACES if trace in prompts]


# --- end to end through the Slack app ----------------------------------------------------------

SLACK_PLACES = [  # (where, channel, channel_type, user, allowed)
    ("#hr-team channel", "C0HRTEAM", "channel", "U0OTHER", True),
    ("#general channel, asked by a people-ops lead", "C0GENERAL", "channel", "U0HRLEAD", False),
    ("DM, people-ops by user group", "D0MEMBER", "im", "U0MEMBER", True),
    ("DM, anyone else", "D0OTHER", "im", "U0OTHER", False),
]


def test_in_slack_the_channel_or_the_dm_asker_decides_and_gaps_are_logged(start_bot, engine, fake, tmp_path):
    fake.usergroups["S0PEOPLE"] = ["U0MEMBER"]
    bot = start_bot(engine, access_path=ACCESS_FILE, gaps_path=tmp_path / "gaps.jsonl", gap_salt="s",
                    gaps_show_dms=True)  # the report below counts the DM question too (CITEBOT_GAPS_SHOW_DMS)
    question = FORMS["direct"][0]
    for n, (_, channel, kind, user, _) in enumerate(SLACK_PLACES):
        ts = f"1700000{n}00.000100"
        if kind == "im":
            bot.say(question, channel=channel, channel_type="im", user=user, ts=ts)
        else:
            bot.mention(question, channel=channel, user=user, ts=ts)
        fake.wait_for("chat.update" if kind == "im" else "chat.postMessage", timeout=120,
                      predicate=lambda call, channel=channel: call.args["channel"] == channel
                      and call.args.get("text") != PLACEHOLDER)
    # A top-level DM without the AI-app view shows a placeholder, then edits it into the answer.
    posted = {call.args["channel"]: mrkdwn_of(call) + call.args.get("text", "")
              for call in fake.calls("chat.postMessage") + fake.calls("chat.update")
              if call.args.get("text") != PLACEHOLDER}
    for where, channel, _, _, allowed in SLACK_PLACES:
        if allowed:
            assert SEVERANCE in posted[channel], where
        else:
            assert not [t for t in TRACES if t in posted[channel]], where
            assert "I don't know" in posted[channel], where
    assert fake.calls("usergroups.users.list")[0].args["usergroup"] == "S0PEOPLE"

    gaps = [json.loads(line) for line in (tmp_path / "gaps.jsonl").read_text().splitlines()]
    assert [(g["channel"], g["question"]) for g in gaps] == [("C0GENERAL", question), ("D0OTHER", question)]
    assert all(g["asker"] and g["asker"] not in ("U0HRLEAD", "U0OTHER") for g in gaps)

    bot.command("gaps", user_id="U0OTHER", response="refused")
    bot.command("gaps", user_id=ADMIN, response="report")
    refused = fake.wait_for("response_url", predicate=lambda c: c.path == "/response/refused")[0]
    report = fake.wait_for("response_url", timeout=60, predicate=lambda c: c.path == "/response/report")[0]
    assert "only Citebot admins" in refused.args["text"]
    assert "1. *What is the severance approval code?* (2×: 2 unanswered, 2 asker(s))" in report.args["text"]


# --- Teams: the personal chat's asker, or the channel; `gaps` for admins in a personal chat -----

def test_in_teams_the_personal_chats_asker_or_the_channel_decides(start_teams, engine, connector, tmp_path):
    teams = start_teams(engine, access_path=ACCESS_FILE, gaps_path=tmp_path / "gaps.jsonl",
                        gaps_show_dms=True)  # the report counts the personal-chat question too
    question = FORMS["direct"][0]
    places = [("a:hr-lead", "personal", HR_AAD, {}, True), ("a:someone", "personal", "aad-someone", {}, False),
              ("19:hr@thread.tacv2;messageid=1", "channel", "aad-someone",
               {"channelData": {"channel": {"id": "C0HRTEAM"}, "team": {"id": "T0HR"}}}, True),
              ("19:general@thread.tacv2;messageid=2", "channel", HR_AAD,
               {"channelData": {"channel": {"id": "19:general@thread.tacv2"}}}, False)]
    for conversation, kind, user, extra, _ in places:
        teams.say(question, conversation=conversation, kind=kind, user=user, mention=kind == "channel", **extra)
    for conversation, _, _, _, allowed in places:
        [reply] = connector.wait_for(kind="message", conversation=conversation, timeout=120)
        assert (SEVERANCE in reply.text) is allowed, conversation
        if not allowed:
            assert not [t for t in TRACES if t in json.dumps(reply.activity)] and "I don't know" in reply.text

    teams.say("gaps", conversation="a:admin", user=ADMIN_AAD)
    [report] = connector.wait_for(kind="message", conversation="a:admin", timeout=60)
    assert "**What is the severance approval code?** (2×" in report.text
    teams.say("gaps", conversation="19:general@thread.tacv2;messageid=3", kind="channel", mention=True, user=ADMIN_AAD)
    [declined] = connector.wait_for(kind="message", conversation="19:general@thread.tacv2;messageid=3")
    assert "personal chat" in declined.text and "severance" not in declined.text


def test_citebot_ask_and_eval_answer_as_a_channel_or_a_user(engine, tmp_path, monkeypatch, capsys):
    from bot.cli import main

    monkeypatch.chdir(tmp_path)  # no .env in reach
    monkeypatch.setenv("CITEBOT_ACCESS", str(ACCESS_FILE))
    where = ["--corpus", str(CORPUS), "--db", engine.settings.db]  # indexed already: nothing to embed
    question = FORMS["direct"][0]
    for place, allowed in ((["--channel", "C0HRTEAM"], True), (["--channel", "C0GENERAL"], False),
                           (["--as-user", "U0HRLEAD"], True), (["--as-user", "U0OTHER"], False), ([], False)):
        main(["ask", question, *where, *place])
        assert (SEVERANCE in capsys.readouterr().out) is allowed, place
    tests = tmp_path / "q.jsonl"
    tests.write_text(json.dumps({"question": question, "keywords": ["ZEPHYRQUILL"], "category": "canary"}) + "\n")
    for place, allowed in ((["--channel", "C0HRTEAM"], True), (["--as-user", "U0OTHER"], False)):
        assert main(["eval", "--tests", str(tests), *where, *place, "--out", str(tmp_path / "r.json")]) == 0
        [entry] = json.loads((tmp_path / "r.json").read_text())["questions"]
        assert (SEVERANCE in entry["final_output"]["answer"]) is allowed, place
