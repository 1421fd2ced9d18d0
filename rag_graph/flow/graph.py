"""The flow of SPEC.md as a LangGraph StateGraph: nodes, edges and the small routers between them.

prepare_query ─▶ prepare_corpus_index ─▶ decompose_question ─▶ retrieve_candidates ─▶ rank_and_filter_context
  ─▶ rerank_candidates (CITEBOT_RERANKER; without one it changes nothing)
  ─┬─ one question ─────────────────────────────────────▶ assess_context_quality
   └─ several parts ─▶ retrieve_sub_questions ─▶ assess_context_quality
assess_context_quality ──────┬─ sufficient ─────────────────────────▶ build_augmented_prompt
                             ├─ fragmented ─▶ expand_related_context ─▶ build_augmented_prompt
                             ├─ weak, attempts left ─▶ rewrite_query ─▶ retrieve_candidates
                             └─ weak, attempts spent ─▶ finalize_insufficient_context
build_augmented_prompt ─▶ generate_answer ─▶ validate_grounding ─┬─ grounded ─▶ finalize_answer
                                                                 ├─ retry ─▶ rewrite_query
                                                                 ├─ give up ─▶ finalize_insufficient_context
                                                                 └─ error ─▶ finalize_failure
"""
from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from ..tuning import DEFAULT, Tuning
from .deps import Deps
from .nodes.decomposition import decompose_question, has_sub_questions, retrieve_sub_questions
from .nodes.finalize import finalize_answer, finalize_failure, finalize_insufficient_context
from .nodes.generation import build_augmented_prompt, generate_answer
from .nodes.grounding import validate_grounding
from .nodes.quality import assess_context_quality, rank_and_filter_context
from .nodes.query import prepare_query, rewrite_query
from .nodes.rerank import rerank_candidates
from .nodes.retrieval import expand_related_context, prepare_corpus_index, retrieve_candidates
from .state import State


def question_is_valid(state: State) -> str:
    return "invalid" if "final_output" in state else "valid"


def no_errors(state: State) -> str:
    return "failed" if state.get("errors") else "ok"


def can_rewrite(state: State) -> bool:
    return (not state.get("query_rewrites")
            and state["retrieval_attempts"] < state["retrieval_config"]["max_retrieval_attempts"])


def route_by_quality(state: State, runtime: Runtime[Deps]) -> str:
    if state["context_quality"] in ("weak", "missing"):
        return "rewrite" if can_rewrite(state) else "give_up"
    return "expand" if evidence_is_fragmented(state, runtime.context.tuning) else "answer"


def evidence_is_fragmented(state: State, tuning: Tuning = DEFAULT) -> bool:
    """The best chunk continues a longer section, or the top chunks come from several sections
    that are about equally relevant (within tuning.fragmented_margin)."""
    ranked = state["ranked_chunks"]
    best, margin = ranked[0], tuning.fragmented_margin
    close = [c for c in ranked[1:3] if c["relevance"] >= best["relevance"] - margin]
    return best.get("chunk_index", 0) > 0 or any(
        (c["source_id"], c.get("anchor")) != (best["source_id"], best.get("anchor")) for c in close)


def route_by_grounding(state: State) -> str:
    if state.get("errors"):
        return "error"
    if state["grounding_status"] == "grounded":
        return "grounded"
    return "retry" if can_rewrite(state) else "give_up"


def build_graph():
    """The compiled flow. Dependencies arrive per run: `graph.invoke(input, context=Deps(...))`."""
    graph = StateGraph(State, context_schema=Deps)
    graph.add_node("prepare_query", prepare_query)
    graph.add_node("prepare_corpus_index", prepare_corpus_index)
    graph.add_node("decompose_question", decompose_question)
    graph.add_node("retrieve_candidates", retrieve_candidates)
    graph.add_node("rank_and_filter_context", rank_and_filter_context)
    graph.add_node("rerank_candidates", rerank_candidates)
    graph.add_node("retrieve_sub_questions", retrieve_sub_questions)
    graph.add_node("assess_context_quality", assess_context_quality)
    graph.add_node("expand_related_context", expand_related_context)
    graph.add_node("rewrite_query", rewrite_query)
    graph.add_node("build_augmented_prompt", build_augmented_prompt)
    # No retry policy: the chat model's calls are retried within the answer's time by
    # ChatModelGenerator, which hands over to the offline writer when they fail.
    graph.add_node("generate_answer", generate_answer)
    graph.add_node("validate_grounding", validate_grounding)
    graph.add_node("finalize_answer", finalize_answer)
    graph.add_node("finalize_insufficient_context", finalize_insufficient_context)
    graph.add_node("finalize_failure", finalize_failure)

    graph.add_edge(START, "prepare_query")
    graph.add_conditional_edges("prepare_query", question_is_valid,
                                {"valid": "prepare_corpus_index", "invalid": END})
    graph.add_conditional_edges("prepare_corpus_index", no_errors,
                                {"ok": "decompose_question", "failed": "finalize_failure"})
    graph.add_edge("decompose_question", "retrieve_candidates")
    graph.add_conditional_edges("retrieve_candidates", no_errors,
                                {"ok": "rank_and_filter_context", "failed": "finalize_failure"})
    graph.add_edge("rank_and_filter_context", "rerank_candidates")
    graph.add_conditional_edges("rerank_candidates", has_sub_questions,
                                {"whole": "assess_context_quality", "parts": "retrieve_sub_questions"})
    graph.add_edge("retrieve_sub_questions", "assess_context_quality")
    graph.add_conditional_edges("assess_context_quality", route_by_quality, {
        "answer": "build_augmented_prompt", "expand": "expand_related_context",
        "rewrite": "rewrite_query", "give_up": "finalize_insufficient_context"})
    graph.add_edge("expand_related_context", "build_augmented_prompt")
    graph.add_edge("rewrite_query", "retrieve_candidates")
    graph.add_edge("build_augmented_prompt", "generate_answer")
    graph.add_edge("generate_answer", "validate_grounding")
    graph.add_conditional_edges("validate_grounding", route_by_grounding, {
        "grounded": "finalize_answer", "retry": "rewrite_query",
        "give_up": "finalize_insufficient_context", "error": "finalize_failure"})
    for end in ("finalize_answer", "finalize_insufficient_context", "finalize_failure"):
        graph.add_edge(end, END)
    return graph.compile()
