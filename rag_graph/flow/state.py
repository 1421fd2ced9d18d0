"""The graph state (field names are part of the contract in SPEC.md) and the final_output shape."""
from __future__ import annotations

from typing import Literal, TypedDict

from ..language.question import Question

Status = Literal["answered", "insufficient_context", "failed"]
Quality = Literal["sufficient", "weak", "contradictory", "missing"]
Grounding = Literal["grounded", "unsupported", "partially_supported", "not_checked"]


class Turn(TypedDict):
    role: Literal["user", "assistant"]
    content: str


class Citation(TypedDict):
    source_id: str
    title: str
    section: str
    chunk_id: str  # the first (best) chunk cited of the section
    chunk_ids: list[str]  # every chunk of the section the answer rests on: what feedback is about
    url: str  # document url with the section anchor, "" when the document has no url


class FinalOutput(TypedDict):
    status: Status
    answer: str
    citations: list[Citation]
    confidence: float
    retrieval_attempts: int
    retrieved_sources: list[str]
    grounding_status: Grounding
    knowledge_gap: str | None
    closest: Citation | None  # a decline's nearest section, the one its knowledge gap names
    # Said about an answer, apart from it: how a typo was read, a superseded source that
    # disagreed, a writer that was unavailable. Each a phrase; the chat adapters show them apart.
    notes: list[str]
    # An answer the doubt model expects to be wrong (scoring/doubt.py): given all the same, and
    # the chat adapters say first that the bot is not sure. False for every other reply.
    hedged: bool
    errors: list[str]


class State(TypedDict, total=False):
    input: str
    normalized_query: str
    retrieval_query: str
    query_rewrites: list[str]
    sub_questions: list[str]  # the parts of a multi-part question, each searched on its own
    question: Question  # read once (prepare_query): the asker's own words apart from what a follow-up borrowed
    parts: list[Question]  # the sub-questions as read: each part's words apart from what it borrowed
    history: list[Turn]
    corpus_name: str
    # The corpus itself lives in the index; per question the state only names what was used.
    documents: list[str]  # source ids behind the selected context
    chunks: list[str]  # chunk ids of the selected context
    index_metadata: dict
    retrieval_strategy: Literal["semantic", "keyword", "hybrid"]
    retrieval_config: dict
    retrieval_attempts: int
    retrieved_chunks: list[dict]
    ranked_chunks: list[dict]
    reranker_unavailable: str  # why CITEBOT_RERANKER could not order the ranking ("" when it did)
    related_chunks: list[dict]
    context: list[dict]  # the chunks the answer may cite, best first
    source_metadata: dict[str, dict]  # source_id -> public metadata
    context_quality: Quality
    contradictions: list[dict]
    knowledge_gap: str | None
    augmented_prompt: str
    writer_unavailable: bool  # the chat model could not answer: the offline writer did
    draft_answer: dict  # {"answer": str, "sentences": [{"text": str, "chunk_ids": [str]}]}
    citations: list[Citation]
    grounding_status: Grounding
    confidence: float
    errors: list[str]
    final_output: FinalOutput
