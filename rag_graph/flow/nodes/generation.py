"""Assembling the context the answer may use, and drafting the answer."""
from __future__ import annotations

import logging

from langgraph.runtime import Runtime

from ..deps import Deps
from ...answer.prompt import render_prompt
from ...answer.injection import quarantine
from ...answer.resilience import WriterUnavailable
from ..state import State

log = logging.getLogger(__name__)


def build_augmented_prompt(state: State, runtime: Runtime[Deps]) -> dict:
    context = state["ranked_chunks"][:runtime.context.tuning.context_size]
    have = {c["chunk_id"] for c in context}
    context += [c for c in state.get("related_chunks", []) if c["chunk_id"] not in have]
    # Document text is data: paragraphs that give orders never reach the generator or grounding.
    context = [quarantine(c) for c in context]
    sources = {c["source_id"]: {"title": c["title"], "url": c.get("url", ""), "status": c.get("status", ""),
                                "effective_date": c.get("effective_date", ""), "authority": c.get("authority")}
               for c in context}
    return {
        "context": context,
        "chunks": [c["chunk_id"] for c in context],
        "documents": list(sources),
        "source_metadata": sources,
        # A follow-up reaches the model with its conversation and as it was searched; a second
        # draft (after a rejected first) is told so, and never repeats the first prompt.
        "augmented_prompt": render_prompt(state["normalized_query"], context, state.get("parts") or [],
                                          state.get("history") or [], state.get("retrieval_query", ""),
                                          retry=state.get("grounding_status") in ("unsupported", "partially_supported")),
    }


def generate_answer(state: State, runtime: Runtime[Deps]) -> dict:
    # The question as the user asked it (plus a resolved follow-up's subject) steers sentence choice.
    question, parts = state["question"], state.get("parts") or []
    unavailable = False
    try:
        draft = runtime.context.generator.generate(question, state["context"], state["augmented_prompt"], parts)
    except WriterUnavailable:
        if runtime.context.fallback is None:
            raise
        # The chat model is down, too slow or failing: the offline writer answers, with a note.
        draft = runtime.context.fallback.generate(question, state["context"], state["augmented_prompt"], parts)
        unavailable = True
    if not isinstance(draft, dict) or not isinstance(draft.get("sentences"), list):
        log.warning("generator returned a malformed draft: %r", type(draft))
        return {"draft_answer": {"answer": "", "sentences": []}, "errors": [*state["errors"], "generation_malformed"]}
    return {"draft_answer": draft, "writer_unavailable": unavailable}
