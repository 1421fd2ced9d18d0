"""The flow's contract: its nodes, its routes (one rewrite, the attempt limit, grounding), and the
controlled endings of bad input and failing dependencies. Deterministic cases inject a fake
retriever or generator through LangGraph's runtime context; the others run the real engine
over the bundled corpus."""
from rag_graph.flow.graph import build_graph
from flow_fakes import FakeRetriever, POLICY, chunk, run, unrelated  # noqa: F401 (fixtures too)


SPEC_NODES = {
    "prepare_query", "prepare_corpus_index", "retrieve_candidates", "rank_and_filter_context", "rerank_candidates",
    "decompose_question", "retrieve_sub_questions", "assess_context_quality", "expand_related_context", "rewrite_query", "build_augmented_prompt",
    "generate_answer", "validate_grounding", "finalize_answer", "finalize_insufficient_context",
    "finalize_failure",
}


FINAL_FIELDS = {"status", "answer", "citations", "confidence", "retrieval_attempts", "retrieved_sources",
                "grounding_status", "knowledge_gap", "closest", "notes", "hedged", "errors"}


class FakeGenerator:
    def __init__(self, draft):
        self.draft, self.calls = draft, 0

    def generate(self, question, context, prompt, parts):
        self.calls += 1
        return self.draft


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


def test_question_nobody_wrote_about_ends_in_insufficient_context_with_a_gap(engine):
    out = engine.ask("Can contractors work remotely?")
    assert out["status"] == "insufficient_context"
    assert out["citations"] == [] and out["confidence"] == 0
    assert out["retrieval_attempts"] == 2
    assert "contractors" in out["knowledge_gap"] and "Remote Work" in out["knowledge_gap"]
    # No citation, but the section the gap names, with its link, to read for oneself
    assert out["closest"]["section"] == "Remote Work › Working from another country"
    assert out["closest"]["url"] == "https://handbook.orrinfold.example/2025#working-from-another-country"


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
