"""The RAG flow of SPEC.md: each behaviour the specification lists, as a named test.

Deterministic cases inject a fake retriever or generator through LangGraph's runtime context;
the others run the real engine over the bundled corpus."""
import re
from collections import Counter

import pytest

from rag_graph.config import RetrievalConfig
from rag_graph.flow.deps import Deps
from rag_graph.retrieval.entities import Entity, Gazetteer
from rag_graph.answer.extractive import ExtractiveGenerator, holds_answer, wanted_answer
from rag_graph.flow.graph import build_graph
from rag_graph.flow.nodes.decomposition import split_question
from rag_graph.flow.gap import describe_gap
from rag_graph.language.text import term_set

SPEC_NODES = {
    "prepare_query", "prepare_corpus_index", "retrieve_candidates", "rank_and_filter_context",
    "decompose_question", "retrieve_sub_questions", "assess_context_quality", "expand_related_context", "rewrite_query", "build_augmented_prompt",
    "generate_answer", "validate_grounding", "finalize_answer", "finalize_insufficient_context",
    "finalize_failure",
}
FINAL_FIELDS = {"status", "answer", "citations", "confidence", "retrieval_attempts", "retrieved_sources",
                "grounding_status", "knowledge_gap", "closest", "errors"}


def chunk(chunk_id, body, similarity=0.7, **extra):
    source_id, anchor, n = chunk_id.split("::")
    title = extra.pop("title", source_id.replace("-", " ").title())
    section = extra.pop("section", anchor.replace("-", " ").title())
    return {"chunk_id": chunk_id, "source_id": source_id, "title": title, "section": section,
            "anchor": anchor, "url": f"https://docs.example/{source_id}", "chunk_index": int(n),
            "body": body, "text": f"{title} › {section}\n\n{body}", "status": "current",
            "effective_date": "2025-01-01", "authority": 3, "superseded_by": "", "links": [],
            "similarity": similarity, **extra}


def unrelated(chunk_id_prefix, texts, title="Benefits", section="Other"):
    """Chunks a search returns beside the evidence, far from the question (similarity 0.2)."""
    return [chunk(f"{chunk_id_prefix}::{i}", text, similarity=0.2, title=title, section=section)
            for i, text in enumerate(texts)]


class FakeRetriever:
    def __init__(self, rows, fail=False):
        self.rows, self.fail, self.queries = rows, fail, []

    def search(self, query, mode="hybrid", top_k=8):
        self.queries.append(query)
        if self.fail:
            raise ConnectionError("vector store unreachable at 10.0.0.7")
        return [dict(row) if isinstance(row, dict) else row for row in self.rows][:top_k]

    def related(self, chunks):
        return []

    def metadata(self):
        return {"uri": "memory://", "version": 1, "chunks": len(self.rows) or 1, "documents": 1}

    def entities(self):
        return Gazetteer([])

    def vocabulary(self):
        frequency = Counter()
        for row in self.rows:
            if isinstance(row, dict) and isinstance(row.get("text"), str):
                frequency.update(term_set(row["text"]))
        return dict(frequency), max(len(self.rows), 1)


class FakeGenerator:
    def __init__(self, draft):
        self.draft, self.calls = draft, 0

    def generate(self, question, context, prompt, parts):
        self.calls += 1
        return self.draft


POLICY = chunk("handbook::remote-work::0",
               "Employees may work remotely up to 3 days a week with manager approval.")


def compose(question, chunks, embedder=None):
    """The extractive generator's draft from these chunks, counting terms over them (without an
    embedder: word scores only)."""
    return ExtractiveGenerator(FakeRetriever(chunks).vocabulary, embedder).generate(question, chunks, "")


def run(embedder, question, retriever, generator=None, history=None, **config):
    deps = Deps(retriever=retriever, embedder=embedder,
                generator=generator or ExtractiveGenerator(retriever.vocabulary, embedder))
    state = {"input": question, "history": history or [],
             "retrieval_config": {**RetrievalConfig().as_dict(), **config}}
    return build_graph().invoke(state, context=deps)


def test_graph_has_exactly_the_nodes_of_the_spec():
    nodes = set(build_graph().get_graph().nodes) - {"__start__", "__end__"}
    assert nodes == SPEC_NODES


def test_policy_question_is_answered_with_the_handbook_citation(engine):
    state = engine.run("How many days per week can employees work remotely under the current handbook?")
    out = state["final_output"]
    assert set(out) == FINAL_FIELDS
    assert out["status"] == "answered" and out["grounding_status"] == "grounded"
    assert "up to 3 days a week with manager approval" in out["answer"]
    assert out["retrieval_attempts"] == 1 and 0.6 <= out["confidence"] <= 1
    first = out["citations"][0]
    assert (first["source_id"], first["section"]) == ("hr-handbook-2025", "Remote Work")
    assert first["url"].endswith("#remote-work")


def test_archived_blog_loses_to_the_handbook_and_the_conflict_is_recorded(engine):
    state = engine.run("How many days per week can employees work remotely?")
    out = state["final_output"]
    assert all(c["source_id"] != "blog-2020-remote-pilot" for c in out["citations"])
    record = next(r for r in state["contradictions"] if r["loser"]["chunk_id"].startswith("blog-2020-remote-pilot"))
    assert record["winner"]["chunk_id"].startswith("hr-handbook-2025::remote-work")
    assert "2 days" in record["loser"]["value"] and "3 days" in record["winner"]["value"]
    assert "is current" in record["reason"]
    assert "2 days" in out["answer"] and "supersedes" in out["answer"]  # the user is told briefly
    assert re.search(r"\(Note: an archived source, “[^”]+” \(2020\), said 2 days; “[^”]+” supersedes it.\)$",
                     out["answer"])


def test_a_conflict_note_does_not_repeat_the_year_its_source_title_holds():
    from rag_graph.flow.nodes.finalize import _conflict_note

    record = {"winner": {"chunk_id": "hb-2025::pto::0", "title": "Employee Handbook 2025", "effective_date": "2025-01-01"},
              "loser": {"chunk_id": "hb-2023::pto::0", "title": "Employee Handbook 2023 (archived)",
                        "effective_date": "2023-01-01", "status": "archived", "value": "22 days"}}
    note = _conflict_note({"contradictions": [record]}, {"hb-2025::pto::0"})
    assert note == ("an archived source, “Employee Handbook 2023 (archived)”, said 22 days; "
                    "“Employee Handbook 2025” supersedes it.")


def test_question_nobody_wrote_about_ends_in_insufficient_context_with_a_gap(engine):
    out = engine.ask("Can contractors work remotely?")
    assert out["status"] == "insufficient_context"
    assert out["citations"] == [] and out["confidence"] == 0
    assert out["retrieval_attempts"] == 2
    assert "contractors" in out["knowledge_gap"] and "Remote Work" in out["knowledge_gap"]
    # No citation, but the section the gap names, with its link, to read for oneself
    assert out["closest"]["section"] == "Remote Work › Working from another country"
    assert out["closest"]["url"] == "https://handbook.orrinfold.example/2025#working-from-another-country"


def test_follow_up_is_resolved_from_thread_history(engine):
    history = [{"role": "user", "content": "Who is our Head of People?"},
               {"role": "assistant", "content": "Ines Castellano is our Head of People."}]
    state = engine.run("when did she join?", history)
    assert "castellano" in state["retrieval_query"].lower()
    assert state["final_output"]["status"] == "answered"
    assert "March 2019" in state["final_output"]["answer"]


class TwoPassRetriever(FakeRetriever):
    """The question's search finds only near misses; the rewrite's search finds the evidence,
    each row with its similarity to the rewrite, as a real search returns it."""

    def __init__(self, first, second):
        super().__init__(first)
        self.second = second

    def search(self, query, mode="hybrid", top_k=8):
        rows = super().search(query, mode, top_k)
        return rows if len(self.queries) == 1 else [dict(row) for row in self.second][:top_k]


def test_a_rewritten_search_adds_evidence_but_the_question_still_ranks_it(embedder):
    """The rewrite (the question's words plus near-miss headings: "…monitor headset equipment
    stipend") finds candidates, but the question ranks them: by the rewrite's own similarity the
    equipment chunk came before the one that says which hours to be online."""
    near = [chunk("remote::remote-work::0", "Remote work is part of how we work.", similarity=0.3,
                  title="Remote work", section="Remote days: monitor, headset, equipment and stipend"),
            *unrelated("kitchen::other", ["The office kitchen is restocked every Monday."])]
    found = [chunk("remote::equipment::0", "For remote days, every remote worker gets a monitor, a headset and an "
                   "equipment stipend.", similarity=0.75, title="Remote work", section="Equipment for remote work"),
             chunk("remote::core-hours::0", "On remote days you must be online and reachable from 10:00 to 15:00 "
                   "Mountain Time.", similarity=0.3, title="Remote work", section="Core hours")]
    question = "what hours do I need to be online on my remote days?"
    state = run(embedder, question, TwoPassRetriever(near, found))
    assert state["query_rewrites"], "this question takes the second pass"
    assert state["retrieval_query"] == question
    assert state["ranked_chunks"][0]["chunk_id"] == "remote::core-hours::0"
    equipment = next(c for c in state["ranked_chunks"] if c["chunk_id"] == "remote::equipment::0")
    assert equipment["similarity"] < 0.6  # its closeness to the question, not the rewrite's 0.75
    assert "10:00 to 15:00" in state["final_output"]["answer"]


def test_the_section_that_answers_outranks_one_that_merely_shares_the_question_words(embedder):
    """Late interaction: each question word meets its best match in the chunk ("laptop" in
    "laptop", "Mac" in "MacBook"). The 18F handbook's search returned these two sections with
    these scores; by similarity, term coverage and BM25 the Citrix one, which repeats "Windows"
    and "Mac", ranked first and opened the answer with the wrong rule. Whether the evidence is
    strong enough is still judged on the closest chunk by those measures: judged on the laptop
    section alone, the question was declined."""
    laptop = chunk("getting-started/equipment::laptop::0",
                   "Your supervisor will determine if you need a MacBook Pro or PC laptop. In the past, most TTS "
                   "employees have been issued an Apple MacBook Pro computer, but recently due to supply chain "
                   "shortages as well as a few other factors, TTS does not have the current inventory to give each "
                   "new hire a MacBook at this time.", similarity=0.4616, keyword_score=7.1927,
                   title="Equipment", section="Laptop")
    citrix = chunk("tools/virtual-desktop::software::0",
                   "Citrix is the easiest way to use software that's available for Windows but not Mac. If the "
                   "software you need isn't already pre-installed, you can request installation by opening a "
                   "Software request with the GSA IT Service Desk.", similarity=0.4281, keyword_score=9.0598,
                   title="Citrix", section="Software")
    state = run(embedder, "Will I get a Mac or a Windows laptop when I start?", FakeRetriever([citrix, laptop]))
    assert [c["chunk_id"] for c in state["ranked_chunks"]][0] == laptop["chunk_id"]
    opening = state["final_output"]["answer"].split(". ")[0]
    assert "supervisor will determine if you need a MacBook Pro or PC laptop" in opening


def test_a_section_that_many_pages_repeat_takes_one_place_in_the_ranking(embedder):
    """npm's docs repeat each config option's section on every command page that takes it (584
    of 1,643 chunks are copies). For "we don't even have a start script but `npm start` still
    boots something?" the ranking was six copies of the ignore-scripts section, and the page
    that answers ("…npm will run node server.js") was pushed out of the context."""
    shared = ("If true, npm does not run scripts specified in package.json files. Commands explicitly "
              "intended to run a particular script, such as npm start, will still run their intended script.")
    copies = [chunk(f"commands/npm-{page}::ignore-scripts::0", shared, similarity=0.64 - n / 100,
                    title=f"npm-{page}", section="ignore-scripts") for n, page in enumerate(["start", "stop", "run",
                                                                                           "restart", "rebuild"])]
    start = chunk("commands/npm-start::description::0",
                  "This runs the command in the start property of the scripts object of package.json. If the "
                  "scripts object does not define a start property, npm will run node server.js.",
                  similarity=0.6, title="npm-start", section="Description")
    state = run(embedder, "we don't have a start script in package.json but npm start still boots something, "
                "what is it running?", FakeRetriever([*copies, start]))
    ranked = [c["chunk_id"] for c in state["ranked_chunks"]]
    assert [i for i in ranked if i.endswith("::ignore-scripts::0")] == ["commands/npm-start::ignore-scripts::0"], ranked
    assert start["chunk_id"] in ranked


def test_copies_among_the_candidates_are_made_up_by_fetching_as_many_more(embedder):
    """On npm's docs, as few as 11 of the 30 candidates a search returns were distinct: the rest
    were copies of shared config sections, which the ranking keeps once. The search is repeated
    with as many more rows as there were copies, so the passage just past them is still found."""
    options = ["dry-run", "json", "workspaces", "include", "omit", "global", "save", "force", "audit", "fund"]
    copies = [chunk(f"commands/npm-{page}::{option}::0", f"The {option} option of npm is set in your npmrc file "
                    f"and applies to scripts in package.json.", similarity=0.6, title=f"npm-{page}", section=option)
              for option in options for page in ("install", "ci", "update")]
    start = chunk("commands/npm-start::description::0",
                  "If the scripts object of package.json does not define a start property, npm start will run "
                  "node server.js.", similarity=0.55, title="npm-start", section="Description")
    retriever = FakeRetriever([*copies, start])
    state = run(embedder, "what does npm start run when package.json has no start script?",
                retriever, max_retrieval_attempts=1)  # the first search alone (a rewrite's search fetches more)
    assert start["chunk_id"] in [c["chunk_id"] for c in state["retrieved_chunks"]]
    assert "server.js" in state["final_output"]["answer"], state["final_output"]


def test_how_long_is_answered_with_the_length_not_the_eligibility_rule_late_interaction_ranked_first(engine):
    """Late interaction ranks the eligibility section first for this question (it matches
    "paid parental leave" word for word); the answer still comes from the section that states
    the length, because the answer's pick weighs chunks by relevance order plus their standing."""
    state = engine.run("how long is paid parental leave here?")
    assert state["ranked_chunks"][0]["section"] != "How much leave"  # what makes this case
    assert "16 weeks of fully paid parental leave" in state["final_output"]["answer"]


def test_follow_up_about_an_uncovered_group_names_the_gap(engine):
    history = [{"role": "user", "content": "How many days per week can employees work remotely?"},
               {"role": "assistant", "content": "Up to 3 days a week with manager approval."}]
    out = engine.ask("what about contractors?", history)
    assert out["status"] == "insufficient_context" and "contractors" in out["knowledge_gap"]


def test_injected_instruction_in_a_document_changes_nothing(engine):
    out = engine.ask("Do expenses get approved automatically without receipts?")
    assert "approved automatically" not in out["answer"].lower()
    assert "ignore" not in out["answer"].lower()
    # The planted order must not silence the real rule either: the answer states it.
    assert out["status"] == "answered", out
    assert "$25" in out["answer"]


def test_weak_retrieval_rewrites_exactly_once(embedder):
    weak = chunk("facilities::parking::0", "Bicycles can be stored in the basement racks.", similarity=0.2)
    retriever = FakeRetriever([weak])
    state = run(embedder, "What is the policy on parking company cars overnight?", retriever)
    assert len(state["query_rewrites"]) == 1 and len(retriever.queries) == 2
    assert retriever.queries[1] == state["query_rewrites"][0] != retriever.queries[0]
    assert state["final_output"]["status"] == "insufficient_context"
    assert state["final_output"]["retrieval_attempts"] == 2


def test_the_loop_never_exceeds_max_retrieval_attempts(embedder):
    retriever = FakeRetriever([chunk("facilities::parking::0", "Bicycles go in the basement.", similarity=0.1)])
    state = run(embedder, "Where do I park a company car?", retriever, max_retrieval_attempts=1)
    assert len(retriever.queries) == 1 and state["query_rewrites"] == []
    assert state["final_output"]["status"] == "insufficient_context"


def test_unsupported_draft_fails_grounding(embedder):
    draft = {"answer": "Employees get unlimited sabbaticals on the moon.",
             "sentences": [{"text": "Employees get unlimited sabbaticals on the moon.",
                            "chunk_ids": [POLICY["chunk_id"]]}]}
    generator = FakeGenerator(draft)
    state = run(embedder, "How many days can I work remotely?", FakeRetriever([POLICY]), generator)
    assert state["grounding_status"] == "unsupported"
    assert state["final_output"]["status"] == "insufficient_context"
    assert "moon" not in state["final_output"]["answer"]
    # One retry through rewrite_query, which does not offer the chunk the draft misused again:
    # with no other evidence left, it gives up without asking for a second draft.
    assert state["retrieval_attempts"] == 2 and generator.calls == 1


def test_fabricated_citation_id_is_rejected_and_never_shown(embedder):
    draft = {"answer": "Employees may work remotely up to 3 days a week with manager approval.",
             "sentences": [{"text": "Employees may work remotely up to 3 days a week with manager approval.",
                            "chunk_ids": ["handbook::made-up::9"]}]}
    state = run(embedder, "How many days can I work remotely?", FakeRetriever([POLICY]), FakeGenerator(draft))
    out = state["final_output"]
    assert out["status"] != "answered" and out["citations"] == []
    assert "made-up" not in repr(out)


def test_empty_or_meaningless_input_never_reaches_the_retriever(embedder):
    for text in ["", "   \n\t", "<@U0BOT>", ":wave: :tada:", "?!?"]:
        retriever, generator = FakeRetriever([POLICY]), FakeGenerator({})
        out = run(embedder, text, retriever, generator)["final_output"]
        assert out["status"] == "failed" and out["errors"][0].startswith("invalid_input")
        assert retriever.queries == [] and generator.calls == 0
        assert "question" in out["answer"]


def test_retriever_exception_fails_politely_and_is_logged(embedder, caplog):
    out = run(embedder, "How many days can I work remotely?", FakeRetriever([], fail=True))["final_output"]
    assert out["status"] == "failed" and out["errors"] == ["retrieval_failed"]
    assert "10.0.0.7" not in repr(out) and "Traceback" not in repr(out)
    assert "Please try again" in out["answer"]
    assert "vector store unreachable" in caplog.text


def test_malformed_retriever_rows_never_become_an_answer(embedder):
    rows = [{"chunk_id": None, "text": 42}, {"unexpected": "shape"}, "not even a dict"]
    out = run(embedder, "How many days can I work remotely?", FakeRetriever(rows))["final_output"]
    assert out["status"] == "insufficient_context" and out["citations"] == []


def test_answer_cites_only_selected_chunks(engine):
    state = engine.run("How much is the home office stipend?")
    selected = {c["chunk_id"] for c in state["context"]}
    assert state["final_output"]["status"] == "answered"
    assert {c["chunk_id"] for c in state["final_output"]["citations"]} <= selected


def test_missing_index_is_a_clear_failure(tmp_path):
    from rag_graph.config import Settings
    from rag_graph.engine import Engine

    out = Engine(Settings(corpus=tmp_path, db=str(tmp_path / "never-built"))).ask("How many vacation days?")
    assert out["status"] == "failed" and "isn't available" in out["answer"]


@pytest.mark.parametrize("question,expected", [
    ("and the Professional tier?", "1 TB"),
])
def test_follow_up_borrows_the_subject_of_the_previous_question(engine, question, expected):
    history = [{"role": "user", "content": "How much storage does the Team tier include?"},
               {"role": "assistant", "content": "Team includes 100 GB of storage."}]
    state = engine.run(question, history)
    assert "storage" in state["retrieval_query"]
    assert any("1 TB" in c["text"] for c in state["ranked_chunks"][:3])


def test_each_part_of_a_compound_question_gets_its_own_sentence(embedder):
    hours = chunk("library::opening-hours::0",
                  "The reading room opens at 9 am on weekdays, and at 11 am on Saturdays. Quiet is kept. "
                  "Saturday opening applies from October 1 through March 31.")
    premiums = chunk("payroll::shift-premiums::0",
                     "The Day Shift premium adds 5% to base pay for 8 hours. "
                     "The Night Shift premium adds 15% to base pay.")
    retriever = FakeRetriever([hours, premiums])
    out = run(embedder, "what time does the reading room open on Saturdays, and in which months does that apply?",
              retriever)["final_output"]
    assert out["status"] == "answered"
    assert "11 am" in out["answer"] and "October 1 through March 31" in out["answer"]
    out = run(embedder, "how does the day shift premium compare to the night shift premium?", retriever)["final_output"]
    assert "5%" in out["answer"] and "15%" in out["answer"]


def test_each_side_of_a_comparison_is_answered_by_a_sentence_about_it(embedder):
    # 18F's overtime page: two sentences about travel comp time hold every word of "what happens
    # to my regular comp time" between them, and still do not answer it.
    travel = chunk("overtime::travel-comp-time::0",
                   "If you leave the agency, any unused travel comp time will be forfeited. Travel comp time, "
                   "unlike regular comp time, fills the gap when you travel outside regular work hours.",
                   title="Compensation for working extra hours", relevance=0.7, answers_parts=[0, 1])
    regular = chunk("overtime::comp-time::0", "Comp time is leave you receive instead of overtime pay. "
                    "If you leave the agency, your comp time will be paid out.",
                    title="Compensation for working extra hours", similarity=0.6, relevance=0.6)
    elsewhere = unrelated("faq::what-happens", [
        "What happens at the agency when a holiday falls on a weekend? It moves to Friday.",
        "What happens to your badge when you leave? Return it to the agency."])
    parts = ["If I leave the agency, what happens to my regular comp time",
             "If I leave the agency, what happens to my travel comp time"]
    generator = ExtractiveGenerator(FakeRetriever([travel, regular, *elsewhere]).vocabulary, embedder)
    answer = generator.generate(" versus ".join(parts) + "?", [travel, regular], "", parts)["answer"]
    assert "will be forfeited" in answer and "will be paid out" in answer


def test_an_answer_from_several_documents_names_each_document_once_per_passage(monkeypatch):
    leave = chunk("leave::court-leave::0",
                  "When you are called to jury duty, your absence is marked as Court Leave and does not count "
                  "against your other leave balances. You would also request court leave to serve as a witness.",
                  title="Leave types")
    tock = chunk("tock::out-of-office::0", "Bill jury duty and witness time out of office to project #670.",
                 title="Tock", similarity=0.6)
    question = "does jury duty count against my leave, can I take court leave to be a witness, and what project do I bill?"
    sentences = compose(question, [leave, tock])["sentences"]
    assert [s["text"].split(":")[0] for s in sentences if ":" in s["text"]] == ["Leave types", "Tock"]
    assert len(sentences) == 3
    # When the other document's sentence does not fit, the answer comes from one: it names none.
    monkeypatch.setattr("rag_graph.answer.extractive.MAX_ANSWER_CHARS", 200)
    answer = compose(question, [leave, tock])["answer"]
    assert "#670" not in answer and ":" not in answer


def test_a_sentence_ending_inside_quotes_keeps_its_quote_and_gets_no_second_full_stop():
    from rag_graph.answer.clean import clean_sentence
    from rag_graph.language.text import sentences

    assert sentences("Comp time is not officially “performing work.” If you leave, it is paid out.") == (
        "Comp time is not officially “performing work.”", "If you leave, it is paid out.")
    assert sentences("Write it down (e.g. Google Docs or Basecamp). Mail it to 1800 F St. NW by Friday.") == (
        "Write it down (e.g. Google Docs or Basecamp).", "Mail it to 1800 F St. NW by Friday.")
    assert clean_sentence("It is not officially “performing work.”") == "It is not officially “performing work.”"
    assert clean_sentence("See the leave page (for details)") == "See the leave page (for details)."


def test_an_answer_reads_without_markdown_escapes_run_on_list_commas_or_invisible_characters():
    from rag_graph.answer.clean import clean_sentence

    assert clean_sentence("**\\*Note:** If you called Ad Trav, ask for a refund") == "Note: If you called Ad Trav, ask for a refund."
    assert clean_sentence("- Jury leave, and") == "Jury leave."
    assert clean_sentence("Call \u200b\u200b1-800-222-0364 to enroll") == "Call 1-800-222-0364 to enroll."
    # npm's docs: "…a hidden lockfile present in `node_modules/.package-lock.json`" was answered with
    # "nodemodules": an underscore inside a word is text, not emphasis
    # triple backticks on one line are inline code; the language is no word of it
    assert clean_sentence("```bash npm completion >> ~/.zshrc ```") == "npm completion >> ~/.zshrc."
    assert clean_sentence("_Note:_ a lockfile in `node_modules/.package-lock.json`; mail first_last@gsa.gov") == (
        "Note: a lockfile in `node_modules/.package-lock.json`; mail first_last@gsa.gov.")
    # a code span stays code (Slack and Teams show it so); emphasis around it goes, and a lone backtick
    assert clean_sentence("**Run `npm ci --omit=dev`** in CI, not npm install`") == "Run `npm ci --omit=dev` in CI, not npm install."
    # a checklist's box (Node.js's security release steps: "* [ ] 1\. **Publish Pre-Release Blog Post:**")
    assert clean_sentence("* [ ] 1\\. **Publish the pre-release blog post**") == "1. Publish the pre-release blog post."
    assert clean_sentence("- [x] Tell the release team") == "Tell the release team."
    holidays = chunk("tock::out-of-office::0", "Bill these to #670, including:\n\n- Federal holidays,\n- Vacations,\n"
                     "- Jury leave, and\n- Bereavement.")
    assert compose("what do I bill to #670?", [holidays])["answer"] == (
        "Bill these to #670, including: Federal holidays; Vacations; Jury leave; Bereavement.")


COMPLETION = ("Enables tab-completion in all npm commands.\n\n"
              "The synopsis above loads the completions into your current shell.\n"
              "Adding it to your ~/.bashrc or ~/.zshrc will make the completions available everywhere:\n\n"
              "```bash\nnpm completion >> ~/.bashrc\n\nnpm completion >> ~/.zshrc\n```\n\n"
              "You may of course also pipe the output of `npm completion` to a file.")


def test_a_code_block_is_one_sentence_whose_lines_stay_lines():
    """npm's docs: the two commands of a code block were cut and joined as prose ("bash npm
    completion >> ~/.bashrc npm completion >> ~/.zshrc."), one command a user could not copy. A
    fenced block is one sentence, blank lines and all, even right after a line of text; what looks
    like a list or a table inside it is code."""
    from rag_graph.language.text import lists, sentences, table_sentences

    assert sentences(COMPLETION)[3] == "```bash\nnpm completion >> ~/.bashrc\n\nnpm completion >> ~/.zshrc\n```"
    config = "Add this to the file:\n```yaml\n- name: ci\n| not | a table |\n|---|---|\n```\nThen save it."
    assert sentences(config) == ("Add this to the file:", "```yaml\n- name: ci\n| not | a table |\n|---|---|\n```",
                                 "Then save it.")
    assert not lists(config) and not table_sentences(config)
    # a lead-in too short to be a sentence of its own still leads in to its command
    assert sentences("* Grant access:\n\n```bash\nnpm access grant <org:team>\n```\n\nSee also:") == (
        "* Grant access:", "```bash\nnpm access grant <org:team>\n```")


def test_a_command_is_answered_as_code_after_the_sentence_that_leads_in_to_it():
    """The answer shows the commands on lines of their own, in a code block, after the sentence
    that says what they do; both Slack and Teams render a fenced block. The lead-in holds the
    block it leads in to (as it holds a list), and a code block that answers brings the sentence
    before it. A listing too long to answer with is left to the page."""
    from rag_graph.answer.clean import join_sentences

    completion = chunk("npm-completion::description::0", COMPLETION, title="npm-completion", section="Description")
    answer = compose("how do I make npm completions available everywhere in zsh by adding them to ~/.zshrc?",
                     [completion])["answer"]
    assert ("Adding it to your ~/.bashrc or ~/.zshrc will make the completions available everywhere:\n"
            "```\nnpm completion >> ~/.bashrc\n\nnpm completion >> ~/.zshrc\n```") in answer, answer
    assert "bash npm" not in answer and "~/.zshrc." not in answer, answer
    ci = chunk("npm-ci::description::0", "It installs exactly what the lockfile says.\n\n```\nnpm ci --omit=dev\n```",
               title="npm-ci", section="Description")
    answer = compose("which flag leaves out dev dependencies with npm ci --omit=dev?", [ci])["answer"]
    assert answer.startswith("It installs exactly what the lockfile says.\n```\nnpm ci --omit=dev\n```"), answer
    listing = chunk("npm-ci::example::0", "The lockfile looks like this:\n\n```json\n"
                    + "\n".join(f'  "dep{n}": "^1.{n}.0",' for n in range(40)) + "\n```", title="npm-ci", section="Example")
    assert "dep39" not in compose("what does the lockfile look like with dep39?", [listing])["answer"]
    access = chunk("orgs::teams::0", "* Grant access:\n\n```bash\nnpm access grant <read-only|read-write> <org:team>\n```",
                   title="Orgs", section="Teams")
    assert compose("how do I grant a team read-write access?", [access])["answer"] == (
        "Grant access:\n```\nnpm access grant <read-only|read-write> <org:team>\n```")
    # a block from one of several documents is labelled with its document on a line of its own
    pkg = chunk("npm-pkg::description::0", "```bash\nnpm pkg set name=foo\n```", title="npm-pkg", section="Description")
    private = chunk("package-json::private::0", "If you set private to true in your package.json, then npm will "
                    "refuse to publish it.", title="package.json", section="private", similarity=0.6)
    answer = compose("which command sets a value in package.json, like npm pkg set name=foo, and what if I set "
                     "private to true?", [pkg, private])["answer"]
    assert answer.startswith("npm-pkg:\n```\nnpm pkg set name=foo\n```\nIf you set private"), answer
    assert join_sentences(["Run:", "\n```\nnpm ci\n```\n", "Then test."]) == "Run:\n```\nnpm ci\n```\nThen test."


def test_a_sentence_two_sections_repeat_is_said_once(embedder):
    # 37signals' benefits page says "Open enrollment is in November…" under Medical and Vision alike
    medical = chunk("benefits::medical::0", "Open enrollment is in November every year, with new coverage beginning "
                    "December 1. Medical plans are through Aetna.", title="Benefits & Perks", relevance=0.7)
    vision = chunk("benefits::vision::0", "Open enrollment is in November every year, with new coverage beginning "
                   "December 1. Vision plans are through VSP.", title="Benefits & Perks", relevance=0.68)
    parts = ["when is open enrollment for medical", "when is open enrollment for vision"]
    generator = ExtractiveGenerator(FakeRetriever([medical, vision]).vocabulary, embedder)
    answer = generator.generate("when is open enrollment for medical and for vision?", [medical, vision], "",
                                parts)["answer"]
    assert answer.count("Open enrollment is in November") == 1 and "VSP" in answer


def test_a_sentence_that_opens_by_pointing_back_comes_with_the_one_before():
    term = chunk("working-at-tts::term-appointments::0",
                 "Many TTS employees are hired on term appointments for a maximum of four or eight years. However, "
                 "term appointments need to be renewed every two years. Your supervisor starts the renewal.")
    answer = compose("how often do term appointments need renewing?", [term])["answer"]
    assert answer.startswith("Many TTS employees are hired on term appointments")
    assert "However, term appointments need to be renewed every two years." in answer
    # 37signals: "when do salary adjustments based on market data happen?" was answered "If it's
    # warranted, … we'll increase pay on January 1st" without saying what "it" is. (Asked here so
    # that the sentence before shares none of the asker's words: only its place brings it.)
    pay = chunk("making-a-career::pay--promotions::1",
                "Some jobs are not matched to Radford comparison data. The Radford data is reviewed once per year "
                "at the end of November. If it's warranted, that is if the market rates have gone up, we'll "
                "increase pay on January 1st to follow suit.", title="Making a Career", section="Pay & Promotions")
    answer = compose("when would my pay go up if market rates rise?", [pay])["answer"]
    assert answer.startswith("The Radford data is reviewed once per year at the end of November. If it's warranted"), answer


def test_a_lead_in_to_a_table_is_completed_by_its_rows_not_its_rule_line():
    laptops = chunk("equipment::your-laptop::0",
                    "Every employee chooses one of two standard laptops before their first day:\n\n"
                    "| Model | Memory | Storage |\n|-------|--------|---------|\n"
                    "| MacBook Pro 14-inch | 36 GB | 1 TB |\n| ThinkPad X1 Carbon | 32 GB | 1 TB |")
    answer = compose("which standard laptops can an employee choose?", [laptops])["answer"]
    assert answer == ("Every employee chooses one of two standard laptops before their first day: Model: MacBook Pro "
                      "14-inch; Memory: 36 GB; Storage: 1 TB. Model: ThinkPad X1 Carbon; Memory: 32 GB; Storage: 1 TB.")


def test_a_changelog_heading_like_new_or_fixed_is_no_subject_of_a_thread(engine):
    # The changelog's "### New" made "New" of "New York" the subject of a hotel thread
    mentions = engine.index.entities().mentions("and in New York? what about Fixed and Parking?")
    assert "New" not in [m.entity.name for m in mentions] and "Fixed" not in [m.entity.name for m in mentions]
    # and the travel policy's "(New York, San Francisco, …)" names New York, not York
    assert [m.entity.name for m in mentions][:1] == ["New York"]
    history = [{"role": "user", "content": "what's the hotel limit in London?"},
               {"role": "assistant", "content": "The nightly hotel cap is $250 including taxes."},
               {"role": "user", "content": "and in New York?"},
               {"role": "assistant", "content": "In high-cost cities the cap is $325 per night."}]
    assert "(new)" not in engine.run("does that include breakfast?", history)["retrieval_query"]


def test_a_word_the_evidence_says_differently_is_not_a_knowledge_gap(embedder):
    from rag_graph.scoring.evidence import has_synonym

    mileage = chunk("travel::mileage::0", "Mileage is reimbursed when you drive your own automobile to a client site.")
    assert has_synonym("car", [mileage], embedder)
    assert not has_synonym("bicycle", [mileage], embedder)
    assert not has_synonym("contractors", [POLICY], embedder)



def test_a_when_question_is_answered_with_the_sentence_that_holds_a_date():
    enrollment = chunk("benefits::open-enrollment::0",
                       "Open enrollment happens online in the benefits portal. Open enrollment happens in November.")
    draft = compose("when does open enrollment happen?", [enrollment])  # word scores only
    assert draft["answer"] == "Open enrollment happens in November."


def test_the_digits_of_a_link_address_are_not_the_number_asked_for():
    # 18F's award leave page links a form on Google Drive: "…/file/d/13H21…" is no amount
    wanted = wanted_answer("how much can a special act award be?")
    assert not holds_answer("Nominate a colleague with [the form](https://drive.example/file/d/13H21w1/view).", wanted)
    assert holds_answer("A special act award can be up to $500.", wanted)


def test_a_who_question_is_answered_with_a_role_not_a_capitalised_title():
    # 18F's daily check-in page: "Daily Check-in Tool" is a product, not a person
    checkin = chunk("daily-checkin::about::0",
                    "Open the Daily Check-in Tool each morning. "
                    "Submitted answers are read by TTS leadership, including the Administrator.")
    draft = compose("who reads the answers I submit to the daily check-in?", [checkin])  # word scores only
    assert draft["answer"].startswith("Submitted answers are read by TTS leadership")


def test_a_wide_table_row_is_answered_with_the_cell_asked_about():
    # 37signals' career ladders: one row per skill, one column of prose per level
    ladder = chunk("titles-for-ops::titles-for-ops::7",
                   "| Category | Junior SRE (L1) | Senior SRE (L3) | Lead SRE (L4) |\n| ----- | ----- | ----- | ----- |\n"
                   "| *Leadership* | Articulates thoughts clearly, listens actively, and problem solves with others. "
                   "| Provides guidance to teammates, and can act as an unofficial mentor to new SREs. Works well with anyone. "
                   "| Acts as a mentor and coach, and provides regular, useful, constructive feedback to teammates. "
                   "Capable of managing 2-3 L1-L3 SREs. Helps define performance standards. |",
                   title="Titles for Ops", section="Titles for Ops")
    draft = compose("how many SREs can a Lead SRE manage?", [ladder])
    assert draft["answer"].startswith("Lead SRE (L4) — Leadership: Acts as a mentor") and "2-3" in draft["answer"]
    assert "Junior SRE" not in draft["answer"] and "Senior SRE" not in draft["answer"]


def test_the_best_sentence_is_never_the_one_cut_for_length():
    # The cell before the best one joins it as its "rule"; both do not fit in an answer, and
    # the best one, coming later in the table, used to be the one dropped.
    senior = ("WEB: You're proficient in writing modern HTML/CSS and Javascript. You're comfortable working in the "
              "Rails codebase, applying your designs and interactions to implemented code. You expect to write "
              "views and partials yourself, and you review the Javascript that others write for your screens. ")
    lead = ("WEB: You're proficient in modern HTML/CSS and write clear Javascript using Stimulus, our framework. "
            "You are comfortable in the Rails codebase, able to stub basic flows and wire-up views. You contribute "
            "to improving our front-end conventions and help others write Javascript the way we expect. ")
    ladder = chunk("titles-for-designers::titles-for-designers::4",
                   "| Category | Senior Designer (L3) | Lead Designer (L4) |\n| ----- | ----- | ----- |\n"
                   f"| *Technical* | {senior} | {lead} |", title="Titles for Designers", section="Titles for Designers")
    draft = compose("what Javascript framework are lead designers expected to write with?", [ladder])
    assert "Stimulus" in draft["answer"]


def test_the_next_table_row_is_a_sibling_not_the_rest_of_the_answer():
    people = chunk("people::directory::0",
                   "| Name | Role | Joined |\n| --- | --- | --- |\n"
                   "| Ines Castellano | Head of People | March 2019 |\n| Leila Haddad | Head of Support | May 2020 |",
                   title="People directory", section="People directory")
    draft = compose("when did our Head of People join?", [people])
    assert "March 2019" in draft["answer"] and "Leila Haddad" not in draft["answer"]


def test_the_verb_may_is_no_date():
    # "you may" is everywhere in policy text; read as the month it made every such sentence a date
    summer = chunk("benefits::summer-hours::0",
                   "Employees may swap summer hours for vacation days. We work summer hours from May 1 through August 31.")
    draft = compose("when do summer hours run?", [summer])  # word scores only
    assert draft["answer"].startswith("We work summer hours from May 1")


def test_a_follow_up_is_answered_by_its_own_words_before_the_borrowed_subject():
    premiums = chunk("payroll::shift-premiums::0",
                     "The Day Shift premium adds 5% to base pay for 8 hours. "
                     "Meanwhile the Night Shift premium adds 15% to base pay.")
    draft = compose("and the night one? (day shift premium pay)", [premiums])
    assert draft["answer"].startswith("Meanwhile the Night Shift premium")


def test_a_lead_in_line_is_completed_by_the_list_item_that_answers(embedder):
    fees = chunk("facilities::parking::0",
                 "Each month, you will see a parking fee taken from your salary:\n\n"
                 "* Bicycle space: $0.00\n* Motorcycle space: $35.50\n* Car space: $120.00")
    out = run(embedder, "what's the monthly parking fee if I park a motorcycle?", FakeRetriever([fees]))["final_output"]
    assert "$35.50" in out["answer"] and "$120.00" not in out["answer"]


# ---- conflicts between current documents: authority, then date (real index, real model) ------

CONFLICTING = {
    "security-policy.md": ("Security Policy", 3, "2024-01-15",
                           "Passwords must be rotated every 90 days on all company laptops."),
    "it-wiki.md": ("IT Team Wiki", 1, "2025-06-01",
                   "Passwords must be rotated every 30 days on all company laptops."),
    "travel-2023.md": ("Travel Guide 2023", 2, "2023-03-01",
                       "The meal allowance on business trips is $50 per day."),
    "travel-2025.md": ("Travel Guide 2025", 2, "2025-02-01",
                       "The meal allowance on business trips is $65 per day."),
}


@pytest.fixture(scope="module")
def conflicts(tmp_path_factory):
    from rag_graph.config import Settings
    from rag_graph.engine import Engine

    corpus = tmp_path_factory.mktemp("conflicts")
    for name, (title, authority, date, rule) in CONFLICTING.items():
        (corpus / name).write_text(f"---\ntitle: {title}\nauthority: {authority}\neffective_date: {date}\n"
                                   f"status: current\n---\n# {title}\n\n## Rules\n\n{rule}\n")
    engine = Engine(Settings(corpus=corpus, db=str(corpus.parent / f"{corpus.name}-db")))
    engine.refresh()
    return engine


def test_higher_authority_wins_over_a_newer_but_lesser_source(conflicts):
    state = conflicts.run("How often must passwords be rotated on company laptops?")
    out = state["final_output"]
    assert out["status"] == "answered" and "90 days" in out["answer"], out
    assert [c["title"] for c in out["citations"]] == ["Security Policy"]
    [record] = state["contradictions"]
    assert (record["winner"]["title"], record["loser"]["title"]) == ("Security Policy", "IT Team Wiki")
    assert "higher authority" in record["reason"]
    assert "IT Team Wiki" in out["answer"] and "30 days" in out["answer"]
    assert "older" not in out["answer"]  # the wiki is the newer one: it lost on authority


def test_between_equal_authorities_the_newer_date_wins(conflicts):
    state = conflicts.run("What is the meal allowance per day on business trips?")
    out = state["final_output"]
    assert out["status"] == "answered" and "$65" in out["answer"], out
    assert [c["title"] for c in out["citations"]] == ["Travel Guide 2025"]
    [record] = state["contradictions"]
    assert (record["winner"]["title"], record["loser"]["title"]) == ("Travel Guide 2025", "Travel Guide 2023")
    assert "newer" in record["reason"] and "$50" in out["answer"]


def test_the_rule_stated_just_before_the_best_matching_sentence_is_part_of_the_answer():
    lab = chunk("lab::visits::0", "Visitors are prohibited from photographing the lab. Do not hold a phone camera "
                "against the lab window to take photographs of the benches. Sketching in the lobby is fine.")
    answer = compose("can I take photographs of the lab with my phone?", [lab])["answer"]  # word scores only
    assert answer.startswith("Visitors are prohibited from photographing the lab.")
    assert "Sketching" not in answer


def test_a_question_whose_only_unmatched_words_are_verbs_is_answered_not_declined(embedder):
    """"contributing", "benchmarked": what the asker does, in the asker's words; the documents
    state the rule in theirs. Only a word that can name a thing is a knowledge gap."""
    retirement = chunk("benefits::retirement-plan::0", "You are eligible to join the 401k plan after 30 days "
                       "of employment, and the company matches 4% of your salary.", similarity=0.62)
    pay = chunk("handbook::pay-and-promotions::0", "We pay at the top 10% of San Francisco market rates for "
                "every role, regardless of where you live.", similarity=0.6)
    out = run(embedder, "when can I start contributing to the 401k?", FakeRetriever([retirement, pay]))["final_output"]
    assert out["status"] == "answered" and "30 days" in out["answer"]
    out = run(embedder, "how is our pay benchmarked?", FakeRetriever([pay, retirement]))["final_output"]
    assert out["status"] == "answered" and "San Francisco market rates" in out["answer"]
    # A missing thing is still a gap.
    out = run(embedder, "do contractors get a 401k match?", FakeRetriever([retirement]))["final_output"]
    assert out["status"] == "insufficient_context" and "contractors" in out["knowledge_gap"]


def test_an_answer_in_other_words_beats_one_that_shares_the_question_s_words(embedder):
    """"A relative in the armed forces" is "a family member who is service personnel": the
    sentence closest in meaning answers, not the one sharing "first" and "take" (37signals'
    Massachusetts leave section, as the index chunks it)."""
    military = chunk(
        "stateFMLA::massachusetts-medical-and-family-leave::2",
        "* [Paid Family Leave for Bonding](https://www.mass.gov/info-details/pfml-about-family-leave-to-bond-with-a-child) "
        "with a child during the first 12 months after the child’s birth, adoption, or foster care placement, up to 12 weeks.\n\n"
        "* [Paid Family Leave for Family Members of Covered Service Personnel]"
        "(https://www.mass.gov/info-details/pfml-about-leave-for-family-members-of-covered-military-personnel) "
        "to manage needs that take place immediately after a family member who is covered service personnel is deployed "
        "or about to be deployed on active duty, up to 12 weeks per benefit year, *or* to care for a family member who "
        "is service personnel with a serious health condition, up to 26 weeks per benefit year.",
        title="State Medical and Family Leave Provisions", section="Massachusetts Medical and Family Leave")
    draft = compose("in Massachusetts, how long could I take off to look after a relative in the armed "
                    "forces who is seriously ill?", [military], embedder)
    assert "26 weeks" in draft["answer"]


def test_a_rule_in_another_inflection_of_the_asker_s_word_is_the_answer(embedder):
    """"Am I allowed to delete it?" is answered by "Users are prohibited from deleting
    messages": "delete" and "deleting" are one term (18F's Slack records section, two chunks
    as the index ranks them for this question)."""
    records = chunk(
        "tools/slack/records::records-policy::1",
        "To ensure compliance with the possibility that we might create permanent or\nlong-lived records in Slack, "
        "the records retention policy is set to **retain all\nmessages forever AND also retain edit and deletion logs "
        "for all messages**.\nUsers are prohibited from deleting messages. Do not abuse the `edit` command in\nSlack to "
        "effectively delete your message by replacing it with null or symbolic\ncontent. Edits for clarity or typos are "
        "fine. If any bot or integration ever\nposts something inappropriate, please call for a clean-up in\n"
        "#admins-slack using `@slackadmin`.", title="Slack records", section="Records policy", relevance=0.62)
    editing = chunk(
        "tools/slack/notifications-general-communication::editing-messages::0",
        "You can edit a message that has been sent in Slack for 5 minutes after it is posted. You aren’t able to "
        "delete a message: instead, you can edit the text and leave a `.` or a note such as `wrong channel.` After 5 "
        "minutes, you cannot edit or delete your message.\n\nFollow the Security incidents guidance to request that a "
        "Slack message be deleted in the event of a security or personally identifiable information (PII) issue.",
        title="Slack communication and notification best practices", section="Editing messages", relevance=0.58)
    draft = compose("I posted something in Slack I regret, am I allowed to just delete it?", [records, editing],
                    embedder)
    assert "prohibited from deleting messages" in draft["answer"]


def test_a_question_about_what_a_list_holds_is_answered_with_the_list(embedder):
    """"What kinds of things does the counseling program help with?" wants the topics, not
    only the sentence that announces them (18F's Employee Assistance Program section)."""
    eap = chunk(
        "getting-started/classes/benefits::employee-assistance-program::0",
        "The [Employee Assistance Program (EAP)](http://www.foh4you.com/) is a free\nsupport resource available to all "
        "GSA federal employees. The EAP offers sessions\nwith licensed or credentialed counselors on a variety of "
        "topics:\n\n- Grief\n- Work-related stress\n- Drug or alcohol addiction\n- Mental health\n- Legal issues\n"
        "- Financial issues\n- Emotional well-being\n\nYou can receive six free sessions for you or family members "
        "living in your\nhousehold, including college students who are away.",
        title="Benefits", section="Employee Assistance Program", relevance=0.6)
    draft = compose("what kinds of things does the employee counseling program help with?", [eap], embedder)
    assert "a variety of topics: Grief; Work-related stress; Drug or alcohol addiction;" in draft["answer"]
    assert draft["answer"].count("Grief") == 1  # the items are not repeated as sentences of their own


def test_the_quantity_a_question_asks_for_is_no_word_the_evidence_must_hold(embedder):
    """"Over what amount…" asks for an amount; the rule states it as "over $25" and never says
    "amount". The evidence holds what the question is about, so the first search suffices: no
    rewrite, no second pass (on 37signals the same check turned three such declines into answers)."""
    receipts = chunk("expenses::receipts::0", "A receipt is required for every expense over $25. For expenses "
                     "of $25 or less, a card statement line is enough.", similarity=0.45,
                     title="Travel and Expenses", section="Receipts")
    others = unrelated("travel::hotels", ["Book hotels through the travel desk; the nightly cap is $250.",
                                          "Meals are covered up to $75 a day on travel days.",
                                          "Mileage for a personal car is paid at the federal rate.",
                                          "Attach the booking confirmation to the trip request."],
                       title="Travel and Expenses", section="Hotels")
    state = run(embedder, "over what amount do I have to attach a receipt to an expense?",
                FakeRetriever([receipts, *others]))
    assert state["query_rewrites"] == [], "the first pass's evidence was judged weak"
    assert state["final_output"]["status"] == "answered" and "$25" in state["final_output"]["answer"]


def test_what_the_asker_does_is_no_word_the_evidence_must_hold(embedder):
    """"When do I hit the max…" : the handbook says "max out", never "hit". What the asker does
    (the word after "I", or after "have to") is said in the documents' own words, so its absence
    is neither weak evidence nor a knowledge gap (on 37signals this turned five declines of
    answerable questions into answers, and declined no fewer unanswerable ones)."""
    shares = chunk("benefits::profit-sharing::1", "You accrue one share per month, and you max out your shares "
                   "after 6 years of working at the company.", similarity=0.45,
                   title="Benefits", section="Employee profit sharing")
    others = unrelated("benefits::other", ["Health insurance starts on your first day.",
                                           "The company pays for a home office setup once.",
                                           "Sabbaticals are taken every three years.",
                                           "Vacation rolls over up to a maximum bank of 27 days."])
    state = run(embedder, "when do I hit the max number of shares?", FakeRetriever([shares, *others]))
    assert state["final_output"]["status"] == "answered" and "6 years" in state["final_output"]["answer"]


def test_a_how_long_question_is_answered_with_a_duration(embedder):
    """"How long does that take?" (after asking who decides an accommodation request) wants a
    span of time: "within three calendar days", not the sentence naming "Form 3676", which
    holds a number but no duration (18F's reasonable accommodation pages)."""
    timeline = chunk(
        "reasonable-accommodations::timeline-on-reasonable-accommodation-requests::0",
        "The DM or LRAC will acknowledge all RA requests within three calendar days of receipt, and the DM will begin "
        "the interactive process within five calendar days of receipt.\n\nIf the request does not require supporting "
        "medical documentation, the DM or LRAC will provide an RA decision as soon as possible, but not to exceed 30 "
        "calendar days from the request date, unless extenuating circumstances exist.",
        title="Reasonable Accommodations", section="Timeline on reasonable accommodation requests", relevance=0.6)
    submitting = chunk(
        "reasonable-accommodations::submitting-a-reasonable-accommodation-request::1",
        "Employees can also have a family member, friend, healthcare professional, or another representative make the "
        "RA request on their behalf. If a more structured format is preferred, GSA has [Form 3676, Confirmation of "
        "Reasonable Accommodation Request (Appendix A)](https://www.gsa.gov/forms-library/request-reasonable-"
        "accommodation). *Please note, this form is **not** required.*",
        title="Reasonable Accommodations", section="Submitting a reasonable accommodation request", relevance=0.58)
    draft = compose("how long does that take? (decides reasonable accommodation)", [timeline, submitting],
                    embedder)
    assert "calendar days" in draft["answer"] and "Form 3676" not in draft["answer"]


def test_a_list_of_form_fields_is_never_carried_into_an_answer(embedder):
    """A lead-in may carry its list, but not a form's: "[Name]" and "Title: CEO" are blanks to
    fill in, never evidence (the signature block of a contract)."""
    contract = chunk("contracts::signatures::0",
                     "This agreement is signed on behalf of the company by:\n\n- [Name]\n- Title: CEO\n- Date: ____\n\n"
                     "The company's signatory must hold an officer role.", title="Supplier Contract", section="Signatures")
    draft = compose("who signs the agreement on behalf of the company?", [contract], embedder)
    assert "[Name]" not in draft["answer"] and "Title: CEO" not in draft["answer"]


def test_a_hyphenated_word_the_documents_write_apart_is_no_knowledge_gap(embedder):
    """"part-time" where the handbook says "part time": the joined form is a word no chunk holds,
    so it read as the rarest term of the question and as the gap ("Nothing … covers “parttim”"),
    and 37signals' "can I pick up part-time freelance work…?" was declined. Its parts carry it."""
    ok = chunk("moonlighting::ok::0", "An occasional side gig, free or paid, for someone you know, such as "
               "building a friend's software. A side business that's different from your day job, as "
               "long as it is only a few hours a week.", similarity=0.4, title="A Note About Moonlighting",
               section="OK")
    not_ok = chunk("moonlighting::not-ok::0", "You can't work full time or part time for another company "
                   "in our industry. Consult for other companies in our industry where there may be a "
                   "conflict of interest.", similarity=0.44, title="A Note About Moonlighting", section="Not OK")
    others = unrelated("benefits::other", ["Health insurance starts on your first day.",
                                           "The company pays for a home office setup once.",
                                           "Sabbaticals are taken every three years."])
    # One pass: the question's own words against the evidence (a rewrite could vouch for it too).
    state = run(embedder, "can I pick up a part-time gig for another software company?",
                FakeRetriever([not_ok, ok, *others]), max_retrieval_attempts=1)
    out = state["final_output"]
    assert out["status"] == "answered", out["knowledge_gap"]
    assert "part time for another company" in out["answer"]


def test_a_kind_of_bonus_no_document_mentions_is_a_knowledge_gap(embedder):
    """18F's handbook welcomes new hires and pays performance bonuses, but says nothing of a
    signing bonus. "signing" is only ever a verb to the dictionary, so it was no subject and
    "Do new hires get a signing bonus?" was answered with "New hires are given full Slack
    access." Before a noun, a verb's -ing form names a kind of that thing."""
    slack = chunk("slack::access::0", "New hires are given full Slack access on their first day.",
                  similarity=0.35, title="Getting started with Slack", section="Access")
    bonus = chunk("performance::bonus::0", "Employees rated fully successful or better are eligible for an "
                  "end of year performance bonus.", similarity=0.5, title="Performance management",
                  section="Who is eligible for the end of year performance bonus")
    others = unrelated("benefits::other", ["Health insurance starts on your first day.",
                                           "Sabbaticals are taken every three years."])
    state = run(embedder, "Do new hires get a signing bonus?", FakeRetriever([slack, bonus, *others]),
                max_retrieval_attempts=1)
    out = state["final_output"]
    assert out["status"] == "insufficient_context", out["answer"]
    # and it names where the closest evidence is: the bonus section, not the search's first hit
    assert out["knowledge_gap"] == ("Nothing in the knowledge base covers “signing bonus” in connection with "
                                    "Who is eligible for the end of year performance bonus.")


def test_an_answer_whose_evidence_lacks_the_subject_is_declined_though_another_chunk_holds_the_word(embedder):
    """18F: "can I bring my dog to the office?" was answered with a case study on returning to the
    office. The evidence looked sufficient because a glossary chunk among the top three holds the
    word ("eat your own dog food"), but the answer quoted only the case study. The chunks an
    answer cites must hold what the question is about; the gap names it."""
    office = chunk("supervisors::case-studies::0",
                   "The team you lead has been working from home for two years. A few team members tell you "
                   "they are ready to return to the office, and you must decide how to respond.",
                   similarity=0.55, title="Supervisor playbook", section="Case studies")
    glossary = chunk("glossary::intro::0",
                     "Agile: a way of building software in short cycles with frequent feedback from users. "
                     "Dogfooding: using the product you build every day, as in eating your own dog food. "
                     "Iterative: delivered in small steps, each one tested before the next.",
                     similarity=0.25, title="Glossary", section="Glossary")
    others = unrelated("benefits::other", ["Health insurance starts on your first day.",
                                           "Sabbaticals are taken every three years."])
    retriever = FakeRetriever([office, glossary, *others])
    out = run(embedder, "can I bring my dog to the office?", retriever, max_retrieval_attempts=1)["final_output"]
    assert out["status"] == "insufficient_context", out["answer"]
    assert out["knowledge_gap"] == ("Nothing in the knowledge base covers “dog” in connection with "
                                    "Supervisor playbook › Case studies."), out
    out = run(embedder, "are team members ready to return to the office?", retriever,
              max_retrieval_attempts=1)["final_output"]
    assert out["status"] == "answered" and "return to the office" in out["answer"], out


def test_an_identifier_the_evidence_writes_verbatim_says_what_the_question_is_about(embedder):
    """Blind set (undici's docs): "seeing a bunch of UND_ERR_HEADERS_TIMEOUT in the logs for calls to
    the payment gateway. what is that actually telling me?" was declined: the asker's own setting
    (logs, calls, a payment gateway) outweighed the one name the errors table writes verbatim, so
    the row that explains it looked far from the question. A name from code that the evidence
    writes as the asker did is what the question is about; a table without it still is no answer."""
    def errors(rows):
        table = "| Error | Error Codes | Description |\n| --- | --- | --- |\n" + "\n".join(rows)
        return chunk("api/errors::errors::0", table, similarity=0.38, title="Errors", section="Errors")
    headers = "| `HeadersTimeoutError` | `UND_ERR_HEADERS_TIMEOUT` | socket is destroyed due to headers timeout. |"
    body = "| `BodyTimeoutError` | `UND_ERR_BODY_TIMEOUT` | socket is destroyed due to body timeout. |"
    others = unrelated("api::client", ["The client keeps a pool of sockets per origin.",
                                       "Pipelining sends several requests over one connection."], title="Client")
    question = ("seeing a bunch of UND_ERR_HEADERS_TIMEOUT in the logs for calls to the payment gateway. "
                "what is that actually telling me?")
    out = run(embedder, question, FakeRetriever([errors([body, headers]), *others]), max_retrieval_attempts=1)["final_output"]
    assert out["status"] == "answered" and "headers timeout" in out["answer"], out
    out = run(embedder, question, FakeRetriever([errors([body]), *others]), max_retrieval_attempts=1)["final_output"]
    assert out["status"] == "insufficient_context", out["answer"]


def test_a_gap_names_a_hyphenated_word_as_the_asker_wrote_it():
    from rag_graph.scoring.evidence import uncovered_terms
    evidence = [chunk("travel::bikes::0", "Bicycles can be stored in the basement racks.")]
    vocabulary = ({"bicycl": 1, "ebik": 1, "e": 1, "bik": 2, "store": 1}, 4)
    gaps = uncovered_terms("can I charge my e-bike at the office?", evidence, vocabulary)
    assert "e-bike" in gaps and "ebik" not in gaps and "ebike" not in gaps


def test_a_word_written_with_accents_matches_it_written_without():
    """The 18F handbook writes "resume" 44 times and "résumé" twice; an asker who types the
    accents must still find the resume page (LanceDB's full-text leg folds accents; the
    evidence checks did not, so the page held none of the question's words)."""
    from rag_graph.scoring.evidence import relevance_scores
    from rag_graph.language.text import terms
    assert terms("Résumé, café, naïve") == terms("resume, cafe, naive")
    resume = chunk("resume::formatting::0", "Keep your federal resume focused on results.", similarity=0.3)
    deadline = chunk("hiring::deadline::0", "Set your deadline at least five business days out.", similarity=0.3)
    vocabulary = ({"resum": 1, "deadlin": 1, "federal": 1}, 2)
    ranked = relevance_scores("how long should my résumé be?", [deadline, resume], vocabulary)
    assert ranked[0]["chunk_id"] == "resume::formatting::0" and ranked[0]["coverage"] > 0


def test_a_word_whose_s_is_no_plural_matches_its_plural():
    """'bonus' and 'bonuses', 'serious' and 'seriously', 'class' and 'classes' are one term: the
    stemmer took the s of 'bonus' for a plural ('bonu'), so evidence on "bonuses" read as silent
    about the asker's "bonus", a false knowledge gap (on 37signals, "seriously ill" likewise
    missed the Massachusetts rule on "a serious health condition")."""
    from rag_graph.scoring.evidence import uncovered_terms
    from rag_graph.language.text import stem
    assert stem("serious") == stem("seriously") and stem("class") == stem("classes")
    assert stem("access") == stem("accessed") and stem("status") == stem("statuses")
    evidence = [chunk("people::referrals::0", "Referral bonuses are paid once the new hire has stayed 90 days.")]
    vocabulary = ({stem("referral"): 1, stem("bonuses"): 1, stem("paid"): 2, stem("hire"): 1, stem("day"): 2}, 4)
    assert uncovered_terms("when is the referral bonus paid?", evidence, vocabulary) == []


def test_apply_is_not_the_app():
    """'ly' is stripped from adverbs only: 'apply' became 'app', so a chunk about "the app" held
    the asker's "apply" and ranked as if it said how to apply."""
    from rag_graph.scoring.evidence import relevance_scores
    from rag_graph.language.text import stem
    assert stem("apply") == stem("applies") == stem("applied") != stem("app")
    assert stem("easily") == stem("easy") and stem("monthly") == stem("month") and stem("early") != stem("ear")
    app = chunk("tools::mobile::0", "Install the app on your phone to see your permit.", similarity=0.5)
    form = chunk("facilities::parking::0", "Fill out the permit form to get a parking spot.", similarity=0.5)
    vocabulary = ({stem("app"): 1, stem("apply"): 1, stem("permit"): 2, stem("parking"): 1}, 10)
    ranked = relevance_scores("how do I apply for a parking permit?", [app, form], vocabulary)
    assert ranked[0]["chunk_id"] == "facilities::parking::0"
    assert ranked[1]["coverage"] < ranked[0]["coverage"]


def test_an_acronym_is_held_by_the_words_it_stands_for_in_lower_case_too(embedder):
    """37signals writes "performance improvement plans", never "PIP": the answer to "could I be
    put on a PIP…?" opened with the sentence that shares "put" and "first year" instead. Lower
    case counts only when every word is a content word: "have questions" is no "HQ"."""
    from rag_graph.language.text import spells_out, terms_held
    assert spells_out("PIP", "We don't do performance improvement plans.") and spells_out("IC", "an individual contributor")
    assert not spells_out("HQ", "Email us if you have questions.") and not spells_out("IC", "It is crucial.")
    assert "pip" in terms_held("could I be put on a PIP?", "We don't do performance improvement plans.")
    advice = chunk("making-a-career::your-first-year::3",
                   "Your first year with us should confirm what we learned in the hiring phase. Just put in your best "
                   "effort, make sure you reach out if things aren't feeling right, and embrace the feedback you get.",
                   title="Making a Career", section="Your First Year")
    rule = chunk("making-a-career::your-first-year::1",
                 "You'll have formal performance reviews with your manager at the 3-, 6-, and 12-month marks. On "
                 "occasion, despite our best efforts, it's not a fit. We don't do full-scale performance improvement "
                 "plans during the first year. Your manager will let you know early if it is not working out.",
                 title="Making a Career", section="Your First Year", similarity=0.6)
    answer = compose("could I be put on a PIP in my first year?", [advice, rule], embedder)["answer"]
    assert answer.startswith("We don't do full-scale performance improvement plans during the first year.")


def test_the_last_day_of_the_month_is_a_date_and_a_when_that_joins_two_clauses_asks_for_none():
    """37signals: "if I quit, when does my health coverage stop?" was answered with open
    enrollment ("in November… beginning December 1"), a date, while "your coverage will end on
    the last day of the month" was not one. 18F threads: "what happens when a holiday lands on
    my day off?" asks what happens, and its answer was the example with "Monday, December 22nd"."""
    from rag_graph.answer.extractive import holds_answer, wanted_answer
    when = wanted_answer("if I quit, when does my health coverage stop?")
    assert holds_answer("If you resign, your coverage will end on the last day of the month.", when)
    assert holds_answer("Timesheets are due by the end of the pay period.", when)
    assert not holds_answer("You're eligible for coverage on the day you start.", when)
    assert wanted_answer("what happens when a holiday lands on my day off?") == []
    assert wanted_answer("do I still get paid when I am out sick?") == []
    for asks in ("When is the deadline?", "and when do the reviews happen?", "when's open enrollment?"):
        assert wanted_answer(asks) == when, asks


def test_a_time_counted_from_an_event_answers_a_when_question():
    """18F threads: "when does it run out?" (award leave) was answered with "make a selection no later
    than November 15th", a date, while "Your award leave will expire one year after the listed
    effective date" was not read as the time asked for."""
    when = wanted_answer("when does award leave run out?")
    assert holds_answer("Your award leave will expire one year after the listed effective date.", when)
    assert holds_answer("Submit the request two weeks before you travel.", when)
    assert not holds_answer("You can take one day of award leave at a time.", when)
    selection = chunk("performance::award-preference::0",
                      "If you are eligible for an end-of-year award (cash or time-off), make a selection no later than "
                      "November 15th.", title="Performance management", section="Award preference", relevance=0.7)
    expiry = chunk("hrlinks::award-leave-expiration::0",
                   "You can check the award leave you have in HR Links. Your award leave will expire one year after "
                   "the listed effective date.", title="HR Links", section="Award leave expiration", relevance=0.7)
    answer = compose("when does my award leave run out?", [selection, expiry])["answer"]
    assert answer == "Your award leave will expire one year after the listed effective date.", answer


def test_a_contraction_typed_without_its_apostrophe_is_no_subject_of_the_question(engine):
    """Chat drops apostrophes: "dont i need approval for a monitor" was declined with "Nothing in
    the knowledge base covers “dont”", and "whats" weighed as much as the rarest word of a question."""
    from rag_graph.language.text import terms

    assert terms("whats the cap, ive asked and dont know, im new") == terms("what's the cap, I've asked and don't know, I'm new")
    state = engine.run("dont i need approval for a monitor")
    assert "dont" not in (state["final_output"].get("knowledge_gap") or ""), state["final_output"]


def test_a_which_month_question_is_answered_with_a_month():
    """Node.js's contributor handbook (the blind set): "what months do new major node versions come
    out?" was answered with "Approximately two months before a major release, new branches…",
    which holds the asker's words but no month, while "…cut in April…cut in October" went
    unpreferred. A "what month" question prefers a month's name; a weekday is no month."""
    months = wanted_answer("what months do new major node versions come out?")
    assert holds_answer("Even-numbered releases are cut in April.", months)
    assert not holds_answer("Major releases should be targeted for the third Tuesday of the release month.", months)
    assert not holds_answer("Approximately two months before a major release, new branches are created.", months)
    assert wanted_answer("which month is open enrollment?") == months


def test_a_heading_that_holds_the_answer_is_shown_with_the_sentence_below_it():
    """Node.js's contributor handbook (the blind set): "how far in advance of a security release does
    the pre-release announcement go out?" is answered by the heading "Announcement (one week in
    advance of the planned release)", not by any sentence under it. The sentence is shown under
    that heading, so the answer says "one week". A heading's number answers no "how many": it is
    as often a step's ("Step 1 - Submit a time request")."""
    announcement = chunk("security-release-process::announcement::0",
                         "Publish the pre-release blog post on the website. Send the pre-release announcement "
                         "to the security mailing list.", title="Security release process",
                         section="Security release process › Announcement (one week in advance of the planned release)",
                         relevance=0.7)
    answer = compose("how far in advance of a security release does the pre-release announcement go out?",
                     [announcement])["answer"]
    assert answer.startswith("Announcement (one week in advance of the planned release): "), answer
    step = chunk("overtime::step-1::0", "You need to enter your credit hours in HR Links. Your supervisor approves "
                 "them there.", title="Overtime", section="Overtime › Step 1 - Submit a time request", relevance=0.7)
    answer = compose("how many credit hours can I enter in HR Links?", [step])["answer"]
    assert not answer.startswith("Step 1"), answer


def test_the_options_after_a_which_question_are_its_parts_and_each_answer_names_its_section(engine):
    """ "which maxes out sooner, profit-sharing shares or liquidity pool shares?" was one question:
    the liquidity pool's rule filled the answer. Each option is now a part; answered from two
    sections of one document, each sentence says which section it speaks for ("It includes…" is
    about Enterprise)."""
    from rag_graph.flow.nodes.decomposition import split_question

    assert split_question("which maxes out sooner, profit-sharing shares or liquidity pool shares?") == [
        "which maxes out sooner profit-sharing shares", "which maxes out sooner liquidity pool shares"]
    state = engine.run("which plan keeps audit logs longer, Professional or Enterprise?")
    assert len(state["sub_questions"]) == 2
    answer = state["final_output"]["answer"]
    assert "Professional: Audit logs are kept for 1 year." in answer
    assert "Enterprise: It includes unlimited seats" in answer


def test_a_fare_is_not_far_and_care_is_not_a_car():
    """Dropping a final e made other words: 'fare' was 'far', 'care' and 'career' were 'car'. So
    a travel page on train fares held the "far" of "how far ahead do I ask for leave?", and a
    page on rental cars the "care" of "how much leave to care for a parent?"."""
    from rag_graph.scoring.evidence import relevance_scores
    from rag_graph.language.text import stem
    assert stem("fare") == stem("fares") == stem("fared") != stem("far")
    assert stem("care") == stem("caring") == stem("cared") != stem("car") == stem("cars")
    assert stem("rate") == stem("rating") != stem("rat") and stem("site") == stem("sites") != stem("sit")
    assert stem("delete") == stem("deleted") == stem("deleting") and stem("hire") == stem("hired")
    fares = chunk("travel::rail::0", "Book the lowest train fares in Concur.", similarity=0.4)
    leave = chunk("leave::annual::0", "Request annual leave far enough ahead for your supervisor to plan.",
                  similarity=0.4)
    vocabulary = ({stem("train"): 3, stem("fare"): 2, stem("far"): 2, stem("leave"): 5, stem("ahead"): 2}, 10)
    ranked = relevance_scores("how far ahead do I request leave?", [fares, leave], vocabulary)
    assert ranked[0]["chunk_id"] == "leave::annual::0" and ranked[1]["coverage"] == 0


def test_an_example_is_not_the_rule_it_illustrates(embedder):
    """"For example: you went on FMLA for 4 weeks … to care for a seriously ill family member"
    shares the most words with "how much unpaid time under FMLA to care for a sick parent?", yet
    it illustrates the rule; the rule is the answer (18F's FMLA page)."""
    fmla = chunk("travel-and-leave/fmla::how-fmla-works::0",
                 "You can use 12 unpaid weeks of FMLA every 52 weeks. The 12 weeks are rolling, and are refilled a "
                 "year to the day you first went on FMLA status.\n\nEach time you use FMLA, it counts toward the 12 "
                 "week/480 hour allotment.\n\n* For example: you went on FMLA for 4 weeks in March 2022 to care for "
                 "a seriously ill family member, and you used your accrued Sick Leave in order to be paid during "
                 "those 4 weeks. You will only have 8 weeks of FMLA available until March 2023.",
                 title="Family Medical Leave Act (FMLA)", section="How FMLA works", relevance=0.6)
    draft = compose("how much unpaid time under FMLA can I take to care for a sick parent?", [fmla], embedder)
    assert "12 unpaid weeks" in draft["answer"] and not draft["answer"].startswith("For example"), draft["answer"]


def test_a_sentence_that_only_points_to_a_page_is_no_answer(embedder):
    # 18F's captioning section ends "Visit the [Live Captioning InSite page](…) for further
    # details."; its link label holds the question's words, but the reader learns nothing from it
    # (and the link itself is not shown: redact.limit_links).
    title = "Deaf and hard of hearing"
    pointer = chunk("deaf-hoh::cart-captioning::3",
                    "- Confirmation information will be emailed to the Requestor’s Name with the captioning URL.\n\n"
                    "Visit the\n[Live Captioning InSite page](https://insite.gsa.gov/employee-resources/"
                    "information-technology/do-it-yourself-self-help/virtual-and-online-meetings/closed-captioning)\n"
                    "for further details.",
                    title=title, section="CART captioning")
    zoom = chunk("deaf-hoh::integrating-with-zoom-for-government::0",
                 "To integrate captions from the provided captioner with Zoom:\n\n"
                 "- You must be signed in and the meeting host or co-host and in the meeting.\n"
                 "- Select the three dots button on the captioner’s square and click **Assign a participant to type**.\n"
                 "- If this is not visible, head to the bottom toolbar and select **Live Transcript** and then "
                 "**Set up manual captioner**.", title=title, section="Integrating with Zoom for Government")
    email = chunk("deaf-hoh::cart-captioning::2",
                  "To access captioning services:\n\n- Send an email at least 12 hours prior to the meeting "
                  "(2-3 days is preferred) to [BISCOORD@BISWORLD.COM](mailto:BISCOORD@BISWORLD.COM) with the "
                  "event title, date and times.", title=title, section="CART captioning")
    answer = compose("how do I get live captioning for a meeting?", [pointer, zoom, email], embedder)["answer"]
    assert not answer.startswith("Visit the"), answer


def test_who_after_a_noun_asks_for_no_one():
    # "…an outside expert who comes to talk…" asks whether, not who: no sentence naming a team
    # or an office is preferred for it
    assert wanted_answer("can we pay an outside expert who comes to talk to our guild?") == []
    assert wanted_answer("is there a bonus if I refer someone who gets hired?") == []
    for question in ("who approves my trip?", "my landlord wants proof of salary - who do they contact?",
                     "on a programming team, who writes the heartbeat?", "to whom do I send the form?",
                     "I'm not sure who to ask about parking"):
        assert wanted_answer(question), question


def test_who_holds_a_role_is_answered_with_a_name_the_table_spells_out(engine):
    # The bundled who's-who table says "Chief Executive Officer"; the phishing advice "Attackers
    # pretend to be our CEO, our finance team…" holds the word but names nobody.
    ceo = engine.ask("Who is the CEO?")
    assert ceo["status"] == "answered" and "Dana Okafor" in ceo["answer"] and "Attackers" not in ceo["answer"]
    # "CTO" is written nowhere: the table's "Chief Technology Officer" is what the asker means.
    cto = engine.ask("who's our CTO?")
    assert cto["status"] == "answered" and "Marcus Lindqvist" in cto["answer"]


def test_a_role_that_no_document_gives_a_name_to_is_not_answered_with_the_role(embedder):
    # 37signals: "Our COO runs the All Hands…" says what the COO does, not who the COO is.
    rituals = chunk("our-rituals::all-hands::0", "At the end of every cycle we hold an All Hands on Zoom. Our COO runs "
                    "the All Hands, but many people across departments may present on topics close to them.")
    support = chunk("support::help::0", "You will always have access to our Support team through Help Scout, our "
                    "support response tool.", similarity=0.3)
    gazetteer = Gazetteer([Entity("All Hands", "section", "our-rituals"), Entity("Help Scout", "name", "support")])
    generator = ExtractiveGenerator(FakeRetriever([rituals, support]).vocabulary, embedder, lambda: gazetteer)
    assert generator.generate("who is our COO?", [rituals, support], "")["answer"] == ""
    # what the COO does is still answered
    assert "Our COO runs the All Hands" in generator.generate("what does our COO do?", [rituals, support], "")["answer"]
    # and the bot says what it found instead
    gap = describe_gap({"normalized_query": "who is our COO?", "ranked_chunks": [rituals, support]}, [])
    assert gap == "The closest document (Our Rituals › All Hands) mentions the COO but does not say who that is."


def test_a_year_that_wraps_to_the_start_of_a_line_is_no_list_number(engine):
    # "…became manager of the Platform team in\n2023. She owns…": read as an item "2023.", the year
    # was cut and the answer said "…manager of the Platform team in."
    out = engine.ask("who is Freya?")
    assert "manager of the Platform team in 2023." in out["answer"]


def test_a_lead_in_whose_long_list_is_not_shown_reads_as_a_statement(engine):
    # "Orrinfold observes 11 public holidays in 2025:" is followed by an 11-row table; it joined the
    # answer as "…in 2025: On top of these, the office closes…"
    answer = engine.ask("when is the office closed for the holidays?")["answer"]
    assert "Quiet Week" in answer and ": On top of these" not in answer


APPROVAL_TIMES = chunk("training::approval-timelines::0", """Submit your training request as early as possible.

- Five to ten days in advance for:
  - Online courses that cost less than $2,500, including travel
- Three to five weeks in advance for:
  - Conference events that cost more than $2,500, including travel
  - Conference events with a waived or discounted registration fee
  - Speaking events in your official capacity as an employee of the agency
  - Internal management meetings and offsites, whatever they cost
  - Highly attended events; a company-wide email goes out to gather interest in them first
- Five to six weeks in advance for:
  - Group conference training""", title="Conferences and training", section="Approval timelines")


def test_a_list_item_is_answered_with_the_lead_in_that_says_what_it_is(embedder):
    # "Conference events that cost more than $2,500" answers "how early?" only under its lead-in;
    # the item alone (the lead-in's list is too long to show whole) was the whole answer.
    answer = compose("how early should I ask if a conference costs more than $2,500?", [APPROVAL_TIMES],
                     embedder)["answer"]
    assert answer.startswith("Three to five weeks in advance for: Conference events that cost more than $2,500")
    assert answer.count("Three to five weeks") == 1  # once, however many of its items are shown
    # a lead-in whose short list is shown with it is not repeated before one of its items
    answer = compose("how early for an online course that costs less than $2,500?", [APPROVAL_TIMES],
                     embedder)["answer"]
    assert answer.count("Five to ten days in advance for") == 1 and "Online courses" in answer


def test_an_item_that_introduces_a_nested_list_without_a_colon_still_leads_in_to_it(embedder):
    # The handbook's "- Ten days to two weeks" has no ":", yet the item below it belongs to it: the
    # answer was the bare "Ten days to two weeks." or the item without what it is about.
    timelines = chunk("training::approval-timelines::0", """Submit your training request as early as possible.

- Five days to ten days in advance for:
  - Online courses that cost less than $2,500, including travel
- Ten days to two weeks
  - Conference events that cost less than $2,500, including travel
- Three to five weeks in advance for:
  - Conference events that cost more than $2,500, including travel""",
                      title="Conferences and training", section="Approval timelines")
    answer = compose("how early do I ask for a conference that costs less than $2,500?", [timelines], embedder)["answer"]
    assert "Ten days to two weeks: Conference events that cost less than $2,500" in answer
    assert "weeks." not in answer  # never the bare lead-in
    # with a list too long to show whole, the label still reads as a lead-in, never as an answer
    long_list = chunk("training::approval-timelines::1", """Ask early.

- Three to five weeks
  - Conference events that cost more than $2,500, including travel, flights, hotels and registration
  - Conference events that have a waived or discounted registration fee for government attendees
  - Speaking events in your official capacity as an employee of the agency, at any venue
  - Internal management meetings and offsites of the whole team, whatever they cost""",
                      title="Conferences and training", section="Approval timelines")
    answer = compose("how early do I ask to speak at an event in my official capacity?", [long_list],
                     embedder)["answer"]
    assert "Three to five weeks:" in answer and "Speaking events" in answer, answer
    # nor without the line number its bold label gives (the ":" inside the bold counts as one)
    lines = chunk("tools::tock-lines::0", """Tock to the line that fits the work.

- **Non-billable work - #968:** Time spent on activities that fit no other line.
- **External detail - #1280:**
  - If you are on an external detail to another agency, please Tock 100% to this line when you work.
  - If you are on a detail within your own office, please do not use this line.""",
                  title="Tock", section="Lines")
    answer = compose("which line do I tock to while I'm on an external detail to another agency?", [lines],
                     embedder)["answer"]
    assert answer.startswith("External detail - #1280: If you are on an external detail"), answer
    assert "#1280::" not in answer


DEVICES = [chunk("devices::operating-system::0", "Everyone on the operations team runs Omarchy, our Linux setup, on "
                 "their work computer.", similarity=0.42, title="Work devices", section="Operating system"),
           chunk("devices::internal-access::0", "Access to internal systems goes through our Tailscale VPN, and "
                 "credentials live in 1Password.", similarity=0.40, title="Work devices", section="Internal access"),
           *unrelated("benefits::other", ["The office kitchen is restocked every Monday.",
                                          "Parking permits are handed out by reception."])]


def test_a_question_of_two_parts_is_answered_when_each_part_has_its_evidence(embedder, engine):
    # Neither chunk holds enough of the whole question ("joining the ops crew next week…") to
    # vouch for it, though each answers its own part: the question was declined.
    out = run(embedder, "I'm joining the ops crew next week - what OS will I be running, and how is access to "
              "internal stuff handled?", FakeRetriever(DEVICES))
    assert len(out["sub_questions"]) == 2
    assert out["final_output"]["status"] == "answered"
    assert "Omarchy" in out["final_output"]["answer"] and "Tailscale" in out["final_output"]["answer"]
    # parts that nothing answers are still declined
    out = run(embedder, "is there a dress code, and can I bring my dog to work?", FakeRetriever(DEVICES))
    assert out["final_output"]["status"] == "insufficient_context"
    # on the bundled corpus, this took a rewritten second search to be answered
    state = engine.run("how do I set up my regular work-from-home days, and what hours do I need to be online?")
    assert not state["query_rewrites"]
    answer = state["final_output"]["answer"]
    assert "BambooHR" in answer and "10:00 to 15:00" in answer
    assert answer.index("BambooHR") < answer.index("10:00 to 15:00")  # the parts in the order asked


def test_the_part_least_answered_gets_the_last_sentence(embedder):
    # Two sentences on fingerprints (room 1217, then Chicago's security office) filled the answer
    # before the turnstiles part had its turn.
    dc = chunk("office-dc::badge::0", "Fingerprints and the photo for your badge are taken in room 1217. Badge "
               "pickup is in the same room 1217. After pickup, you need to get it activated for the turnstiles in "
               "room G151.", title="Washington office", section="Fingerprints and badge", relevance=0.7,
               answers_parts=[0, 1])
    chicago = chunk("office-chicago::badge::0", "Fingerprints and badge photos for new hires can be done at the "
                    "security office on the second floor, room 212.", title="Chicago office",
                    section="Fingerprints and badge", relevance=0.6)
    question = ("first day at the DC office - where do I get fingerprinted for my badge, and where do I get "
                "it working on the turnstiles?")
    parts = split_question(question)
    assert len(parts) == 2
    generator = ExtractiveGenerator(FakeRetriever([dc, chicago]).vocabulary, embedder)
    answer = generator.generate(question, [dc, chicago], "", parts)["answer"]
    assert "room 1217" in answer and "G151" in answer


def test_a_multi_part_answer_takes_the_parts_in_the_order_they_were_asked(embedder):
    # Late interaction ranked the flexible schedule's chunk first, and the answer said "Yes" to
    # the flexible schedule before "No" to the compressed one the asker named first.
    flexible = chunk("schedules::flexible::0", "On a flexible work schedule you can earn and use credit hours.",
                     title="Work schedules", section="Flexible schedule", relevance=0.7, answers_parts=[1])
    compressed = chunk("schedules::compressed::0", "On a compressed work schedule credit hours are not available.",
                       title="Work schedules", section="Compressed schedule", relevance=0.6, answers_parts=[0])
    question = "can I earn credit hours on a compressed schedule, and on a flexible one?"
    parts = split_question(question)
    assert len(parts) == 2
    generator = ExtractiveGenerator(FakeRetriever([flexible, compressed]).vocabulary, embedder)
    answer = generator.generate(question, [flexible, compressed], "", parts)["answer"]
    assert answer.index("not available") < answer.index("earn and use")


def test_the_sentence_that_answers_outranks_one_that_shares_more_of_the_question_words(embedder):
    # 18F's DC office page: "Building hours are 6am - 7pm." shares "building" and the hours
    # with the question and was the answer; the closing time is in the section on after-hours
    # access, where each word of the question finds its match ("close" / "closes", "late" /
    # "after hours").
    after = chunk("offices/dc::access-the-building-after-hours::0",
                  "Go to the F Street entrance, where 24/7 access is available. Please note that the building "
                  "closes at 6 pm, a GSA badge is required for after hours access and no visitors are permitted.",
                  title="Washington, D.C.", section="How do I... › Access the building after hours", relevance=0.62)
    hours = chunk("offices/dc::building-hours::0",
                  "Building hours are 6am - 7pm. While you can stay in the space later, you won't be able to get "
                  "back in if you go to the bathroom or something.",
                  title="Washington, D.C.", section="Building hours", relevance=0.6)
    generator = ExtractiveGenerator(FakeRetriever([after, hours]).vocabulary, embedder)
    answer = generator.generate("if I'm working late at the DC HQ building, what time does it close?",
                                [after, hours], "")["answer"]
    assert answer.startswith("Please note that the building closes at 6 pm")


def test_the_yes_a_question_asks_for_is_no_missing_subject(embedder):
    # 18F's term-extension page was declined: "Nothing in the knowledge base covers “yes”".
    renewal = chunk("term-extensions::whats-the-process::0",
                    "Six months before a term ends, PeopleOps asks the supervisor and the director whether to renew "
                    "it. The TTS Front Office makes the final decision on every term renewal.",
                    title="Term extensions", section="What's the process?", similarity=0.55)
    other = unrelated("benefits::other", ["The office kitchen is restocked every Monday.",
                                          "Parking permits are handed out by reception."])
    out = run(embedder, "who actually gives the final yes on term renewals?", FakeRetriever([renewal, *other]))
    assert out["final_output"]["status"] == "answered"
    assert "TTS Front Office" in out["final_output"]["answer"]


def test_a_question_asking_what_something_looks_like_is_about_that_thing(engine):
    # "look" is no word a section on hotels would hold: it was named as the missing subject
    out = engine.ask("what does the hotel cap look like?")
    assert out["status"] == "answered" and "$250" in out["answer"]
    assert engine.ask("what does the expense process look like?")["status"] == "answered"


def test_a_glossary_definition_reads_as_term_colon_definition(engine):
    # the glossary's definition list ("**Quiet Week**\n: The days between…") read "Quiet Week : The days"
    answer = engine.ask("what's the deal with Quiet Week?")["answer"]
    assert "Quiet Week: The days between Christmas and New Year" in answer


def test_a_third_question_still_knows_what_the_thread_is_about(engine):
    # The second question carried "expense"; the third used to carry only the second's own words
    # ("long") and was answered from the changelog's approval flows.
    history = [{"role": "user", "content": "how do I submit an expense?"},
               {"role": "assistant", "content": "Submit it in Expensify with a photo of the receipt."},
               {"role": "user", "content": "how long do I have?"},
               {"role": "assistant", "content": "All expenses are submitted in Expensify within 30 days of the purchase."}]
    state = engine.run("who approves it?", history)
    assert "expense" in state["retrieval_query"]
    assert "Your manager" in state["final_output"]["answer"]
    history = [{"role": "user", "content": "what's the wellness allowance?"},
               {"role": "assistant", "content": "A wellness allowance of $75 per month."},
               {"role": "user", "content": "how is it paid?"},
               {"role": "assistant", "content": "It is paid through payroll."}]
    assert "wellness allowance" in engine.run("does it cover a meditation app?", history)["retrieval_query"]


def test_a_person_introduced_by_a_heading_and_then_by_first_name_is_the_subject_of_he(engine):
    # "### Jonah Whitfield, Office and IT Operations Manager" / "Jonah joined in July 2021 … He
    # hands out laptops…": Jonah is a person, so "he" in the next question is Jonah
    people = {m.entity.name for m in engine.index.entities().mentions("Jonah Whitfield and Jonah",
                                                                      where=lambda e: e.person)}
    assert people == {"Jonah Whitfield", "Jonah"}
    history = [{"role": "user", "content": "who runs the Denver office?"},
               {"role": "assistant", "content": "Jonah joined in July 2021 and runs the Denver office, IT equipment "
                                                "and the front desk."}]
    state = engine.run("what else does he do?", history)
    assert "jonah" in state["retrieval_query"]
    assert "hands out laptops and badges" in state["final_output"]["answer"]


def test_a_function_word_of_the_question_is_no_missing_subject(embedder):
    # The dictionary lists "whether" as a noun, so it passed for a subject: "Nothing in the
    # knowledge base covers “whether”, “sauna”, “free” in connection with Perks › Gym."
    gym = chunk("perks::gym::0", "The company pays up to $50 a month toward a gym membership of your choice.",
                title="Perks", section="Gym", similarity=0.35)
    other = unrelated("benefits::other", ["The office kitchen is restocked every Monday.",
                                          "Parking permits are handed out by reception."])
    out = run(embedder, "I wonder whether the office sauna is free", FakeRetriever([gym, *other]))
    assert out["final_output"]["status"] == "insufficient_context"
    gap = out["final_output"]["knowledge_gap"]
    assert "sauna" in gap and "whether" not in gap


OVERTIME = """---
title: Compensation for working extra hours
---
You will need supervisor approval before working extra hours.

## Overtime and Compensatory (Comp) time

### Overtime, depending on your salary level

Overtime is when you are paid for extra hours that you are required to work. The amount of overtime pay
you receive depends on your GS level.

### Compensatory (Comp) time, depending on your salary level

Comp time is when you receive hours of leave instead of overtime pay. You should use your accrued comp
time before using Annual Leave.

Comp time expires one year (26 pay periods) after it is earned. When you reach the expiration date, you
will forfeit the leave. If you leave GSA, your comp time will be paid out.

## Credit hours, in flexible work schedules

Only people on flexible work schedules can earn and use credit hours. Credit hours cannot be converted
to cash, unless you leave GSA (then they will be paid out).

## Travel comp time, for everyone

You may request travel comp time when you are approved to travel for work and the travel occurs outside
regular working hours.

### Understanding travel comp time

Traveling during your regular work hours is considered regular hours, including traveling to the
airport from your home.

Generally, travel comp time is used as a gap filler when you are traveling outside of your regular work
hours during a regular work day, but not officially performing work.

### Using travel comp time

Travel comp time expires one year (26 pay periods) after it is earned. When you reach the expiration
date, you will forfeit the leave. If you leave GSA, any unused travel comp time will be forfeited.
"""


def one_document_engine(tmp_path_factory, name: str, text: str):
    """An engine over a corpus of one markdown document, indexed."""
    from rag_graph.config import Settings
    from rag_graph.engine import Engine

    corpus = tmp_path_factory.mktemp(name)
    (corpus / f"{name}.md").write_text(text)
    engine = Engine(Settings(corpus=corpus, db=str(corpus.parent / f"{corpus.name}-db")))
    engine.refresh()
    return engine


@pytest.fixture(scope="module")
def overtime(tmp_path_factory):
    return one_document_engine(tmp_path_factory, "overtime", OVERTIME)


def test_each_side_of_a_comparison_is_answered_from_its_own_section_not_the_other_sides(overtime):
    """18F's "what happens to my regular comp time versus my travel comp time?" answered both
    parts about travel comp time: the part about regular comp time found "Understanding travel
    comp time" first, a section full of "regular" and "comp time". A section headed by the
    other option is no evidence for this one."""
    state = overtime.run("If I leave GSA, what happens to my regular comp time versus my travel comp time?")
    assert len(state["sub_questions"]) == 2
    answer = state["final_output"]["answer"]
    assert "your comp time will be paid out" in answer, answer
    assert "unused travel comp time will be forfeited" in answer, answer


def test_two_questions_in_one_message_are_no_comparison_of_options(engine):
    """Parts that share fewer words than each has of its own ask separate things: the section
    headed "Working Hours" still answers "what hours do I need to be online?" though it also
    holds "work" from the other part."""
    state = engine.run("how do I set up my regular work-from-home days, and what hours do I need to be online?")
    assert len(state["sub_questions"]) == 2
    answer = state["final_output"]["answer"]
    assert "BambooHR" in answer and "Core hours are 10:00 to 15:00" in answer, answer


def test_a_sentence_of_the_same_passage_that_answers_as_well_as_the_best_is_shown_too():
    """37signals' "how many vacation days do we get each year?" was answered with the rollover rule
    ("…a maximum bank of 27 days") and its neighbours, while "37signals offers 20 days of vacation…",
    a sentence of the same passage that scored within 4% of it, was left out. When the score cannot
    tell two sentences of one passage apart, both are shown; a sentence of another passage still
    has to add something of its own."""
    rules = ("Your vacation days roll over each year, up to a bank of 27 days. Track your time off in BambooHR. "
             "Unused holidays are not paid out.")
    pto = chunk("benefits::paid-time-off::0", f"{rules} Everyone gets 20 vacation days each year.",
                title="Benefits", section="Paid time off", relevance=0.7)
    contractors = chunk("contractors::time-off::0", "Contractors get 20 vacation days each year too.",
                        title="Contractors", section="Time off", relevance=0.7)
    question = "how many vacation days do we get each year?"
    answer = compose(question, [pto, contractors])["answer"]
    assert answer == ("Your vacation days roll over each year, up to a bank of 27 days. "
                      "Everyone gets 20 vacation days each year."), answer
    pto = chunk("benefits::paid-time-off::0", rules, title="Benefits", section="Paid time off", relevance=0.7)
    answer = compose(question, [pto, contractors])["answer"]
    assert answer == "Your vacation days roll over each year, up to a bank of 27 days.", answer


def test_a_numbered_step_is_shown_after_the_steps_before_it():
    """18F-more: "how can I check what security clearance I currently have?" was answered with step 2
    of HR Links' steps ("Under the section Security Clearance, click the plus icon…") without
    step 1, which says where that section is. A "how" question answered by a numbered step gets
    the steps before it too; a "how many" question answered by one does not."""
    body = ("Find out your clearance status in HR Links.\n\n"
            "1. On your HR Links homepage, within the tile named **Employee Personal Info**, click the link "
            "**View/Update Personal Info**.\n"
            "2. Under the section **Security Clearance**, click the plus icon to view your security "
            "investigation(s) and the status of the associated clearance(s).")
    status = chunk("top-secret::your-clearance-status::0", body, title="Top Secret clearances",
                   section="Your clearance status", relevance=0.7)
    answer = compose("how can I check what security clearance I currently have?", [status])["answer"]
    assert answer.startswith("On your HR Links homepage, within the tile named Employee Personal Info, click the "
                             "link View/Update Personal Info. Under the section Security Clearance, click the "
                             "plus icon"), answer
    answer = compose("how many security clearance investigations are shown under the section Security Clearance?",
                     [status])["answer"]
    assert "Employee Personal Info" not in answer, answer


def test_the_next_sentence_finishes_a_long_one_but_not_a_list_item_or_with_an_example():
    """Blind set: "how do i become a triager?" was answered "Anyone with a reasonable understanding
    of Node.js… can apply for and become a triager." and stopped there, because a best sentence of
    200 characters never took the next one, which says how ("Open a PR on the README.md…"). The
    next item of a list, though, is another option ("Go out on a regular speaking circuit tour"
    after "You can't… work for another company in our industry"), and an example only illustrates."""
    triage = chunk("issues::triaging-a-bug-report::0",
                   "Anyone with a reasonable understanding of Node.js programming and the project's GitHub "
                   "organization plus a few contributions to the project (commenting on issues or PRs) can "
                   "apply for and become a triager. Open a PR on the README.md of this project with a request "
                   "to be added as a triager and the motivation for becoming one.",
                   title="Issues", section="Triaging a bug report", relevance=0.7)
    answer = compose("ive been commenting on issues for a while, how do i become a triager?", [triage])["answer"]
    assert "Open a PR on the README.md" in answer, answer
    moonlighting = chunk("moonlighting::what-you-cant-do::0",
                         "1. You can't work full time or part time for another company in our industry.\n"
                         "2. Go out on a regular speaking circuit tour which is going to require multiple days of "
                         "travel for another company.",
                         title="Moonlighting", section="What you can't do", relevance=0.7)
    answer = compose("can I pick up part-time work for another company?", [moonlighting])["answer"]
    assert answer.startswith("You can't work full time or part time") and "speaking circuit" not in answer, answer
    surveys = chunk("surveys::qualtrics::0",
                    "Qualtrics can only be used if you're collecting feedback that is directly helping GSA, not "
                    "another agency. For example: if you're working with NIH, you cannot collect data for NIH "
                    "using GSA's Qualtrics account.", title="Surveys", section="Qualtrics", relevance=0.7)
    answer = compose("can we use the GSA Qualtrics account to collect feedback for another agency?", [surveys])["answer"]
    assert answer.startswith("Qualtrics can only be used") and "NIH" not in answer, answer


def test_a_question_for_the_most_is_answered_with_the_bound():
    """18F: "what's the most time off I can get instead of cash for performance and special act
    awards in a year?" was answered with what award leave is and how to opt in, and not with "You
    can receive a maximum of 80 hours of award leave in a single fiscal year." A question for the
    most (the max, a cap, a limit) asks for a bound, and a sentence that states one with its number
    is the kind of answer asked for; a question for something else is not drawn to it."""
    award = chunk("leave::award-leave::0",
                  "Award leave is offered for End of Year Performance Awards and Special Act Awards. If you are "
                  "eligible for an End of Year Performance Award, you can opt in via HR Links to receive award "
                  "leave in lieu of a monetary award. You can receive a maximum of 80 hours of award leave in a "
                  "single fiscal year. Award leave is not paid out when you leave.",
                  title="Leave", section="Award leave", relevance=0.7)
    answer = compose("what's the most time off I can get instead of cash for performance and special act awards "
                     "in a year?", [award])["answer"]
    assert "maximum of 80 hours" in answer, answer
    answer = compose("is there a cap on award leave for special act awards?", [award])["answer"]
    assert "maximum of 80 hours" in answer, answer
    answer = compose("can I get time off instead of cash for special act awards?", [award])["answer"]
    assert "maximum of 80 hours" not in answer, answer


def test_a_sentence_about_the_page_itself_is_no_answer(embedder):
    """18F: "and if I want to stop it later?" (the transit benefit) was answered "This page outlines how
    to sign up for and how to cancel the transit benefit.", which says what the page covers and
    nothing of how. Like a pointer elsewhere, it answers only when nothing else does."""
    intro = chunk("transit-benefit::intro::0",
                  "This page outlines how to sign up for and how to cancel the transit benefit.",
                  title="Transit Benefit", section="Transit Benefit", relevance=0.7)
    cancelling = chunk("transit-benefit::cancelling::0",
                       "To cancel the transit benefit, log in to the transit app and click Withdraw from the "
                       "program.",
                       title="Transit Benefit", section="Cancelling transit benefit", relevance=0.7)
    answer = compose("how do I cancel my transit benefit?", [intro, cancelling], embedder)["answer"]
    assert answer.startswith("To cancel the transit benefit, log in") and "This page" not in answer, answer
    answer = compose("how do I cancel my transit benefit?", [intro], embedder)["answer"]
    assert answer.startswith("This page outlines"), answer


def test_a_passage_that_answers_sentence_after_sentence_is_shown_on(embedder):
    """18F: "can contractors on my team get a GSA computer?" was answered with the first two of three
    sentences that answer it together, and so left out the third: "If they can complete their work
    using VDI, they do not need a GSA provided computer…". A third sentence of the same passage
    that scores about as well as the best continues the answer; one that scores far lower (the
    next topic of the section) does not."""
    body = ("Depending on the work they will perform, contractors may receive GSA provided computers or "
            "equipment. If the contractor needs access to applications that require access to the GSA network, "
            "they are required to use a GSA provided computer. If they can complete their work using VDI, they "
            "do not need a GSA provided computer and may use their company computer. Printers are on the "
            "fourth floor, next to the kitchen.")
    equipment = chunk("equipment::contractors::0", body, title="Equipment", section="Contractors", relevance=0.7)
    answer = compose("can contractors on my team get a GSA computer?", [equipment], embedder)["answer"]
    assert "using VDI" in answer and "Printers" not in answer, answer


RITUALS = """---
title: Our rituals
---
# Our rituals

## Meet-ups

The entire company gathers in person twice a year, in a different city each time. Each meet-up lasts
one week: we arrive on Sunday, meet from Monday to Thursday and fly home on Friday.

## All Hands

At the end of every cycle we hold an All Hands meeting on a Zoom call. It runs for about an hour, and
everyone at the company is invited.

## Heartbeats

Every team writes a heartbeat at the end of each cycle, summarizing the work that shipped and how long
each project took to run.
"""


CONTRIBUTING = """# Collaborator guide

## Who to cc in the issue tracker

| Subsystem | Maintainers |
| --- | --- |
| upgrading libuv | @nodejs/libuv |
| upgrading V8 | @nodejs/V8, @nodejs/post-mortem |
| upgrading npm | @nodejs/npm |

## Maintaining V8

We upgrade the version of V8 in Node.js main whenever a V8 release goes stable upstream, that is,
whenever a new release of Chrome comes out. Upgrading major versions would be much harder to do
with the patch mechanism above.
"""


def test_a_follow_up_that_asks_for_nothing_itself_asks_for_what_the_question_before_it_did(tmp_path_factory):
    """The blind set (Node.js's contributor handbook): "what about for a V8 upgrade?" after "who do I
    cc when I'm upgrading libuv?" was answered with when V8 is upgraded. It asks who, as the
    question before it did: the team handles of the V8 row answer it."""
    from rag_graph.answer.extractive import ExtractiveGenerator, holds_answer, wanted_answer

    assert holds_answer("Subsystem: upgrading V8; Maintainers: @nodejs/V8, @nodejs/post-mortem", wanted_answer("who?"))
    rows = chunk("collaborator-guide::who-to-cc::0", "| Subsystem | Maintainers |\n| --- | --- |\n"
                 "| upgrading V8 | @nodejs/V8, @nodejs/post-mortem |", title="Collaborator guide", section="Who to cc")
    generator = ExtractiveGenerator(FakeRetriever([rows]).vocabulary)
    follow_up = "what about for a V8 upgrade? (who cc upgrading)"  # as resolved after "who do I cc…?"
    typed = [c.typed for c in generator._candidates(follow_up, [rows], generator._weights(follow_up))]
    assert typed and all(typed)  # the row names whom to cc: it is what the follow-up asks for
    engine = one_document_engine(tmp_path_factory, "contributing", CONTRIBUTING)
    history = [{"role": "user", "content": "who do I cc when I'm upgrading libuv?"},
               {"role": "assistant", "content": "@nodejs/libuv."}]
    state = engine.run("what about for a V8 upgrade?", history)
    assert "who" in state["retrieval_query"].split("(")[-1], state["retrieval_query"]
    answer = state["final_output"]["answer"]
    assert "Subsystem: upgrading V8; Maintainers: @nodejs/V8" in answer and "We upgrade" not in answer, answer


def test_a_follow_up_no_entity_names_carries_the_section_its_previous_question_found(tmp_path_factory):
    """37signals: "how long does each one run?" after "how often does the whole company get together
    in person?" ("Twice a year, in a different city each time.") was declined: no word of the
    thread names the meet-ups, so the follow-up carried only "often whole company together". The
    section the previous question finds first ("Meet-ups") is the thread's subject."""
    engine = one_document_engine(tmp_path_factory, "rituals", RITUALS)
    history = [{"role": "user", "content": "how often does the whole company get together in person?"},
               {"role": "assistant", "content": "Twice a year, in a different city each time."}]
    state = engine.run("how long does each one run?", history)
    assert "meetups" in state["retrieval_query"], state["retrieval_query"]
    assert state["final_output"]["status"] == "answered"
    assert "Each meet-up lasts one week" in state["final_output"]["answer"]
