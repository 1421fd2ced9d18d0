"""Every answer sentence must cite selected chunks, and those chunks must support it and hold
what the question is about."""
from __future__ import annotations

import logging

import numpy as np
from langgraph.runtime import Runtime

from ..deps import Deps
from ...tuning import DEFAULT, Tuning
from ..output import cite_all
from ..state import State
from ...answer.clean import join_sentences
from ...answer.support import SupportChecker, answers, judge
from ...language.words import term_set
from ...scoring.missing import foreign_terms, uncovered_terms
from ...scoring.relevance import by_relevance
from ..gap import describe_gap

log = logging.getLogger(__name__)


def supported_sentences(sentences: list[dict], context: list[dict], embedder,
                        tuning: Tuning = DEFAULT, carried: str = "") -> tuple[list[dict], list[dict]]:
    """(kept, dropped): each sentence a chat model wrote is kept when a selected chunk supports
    it (answer/support.py), citing the chunks it named when one of them does, else the chunk
    that does. A sentence that names none borrows the citation of the next one that does
    ("…each week. Approval is needed [a]." cites a for both), and failing that any selected
    chunk may support it: a model that never cites is still usable. A citation of a chunk that
    was not selected counts for nothing. In a follow-up, the chunk's sentence the written one
    rests on must hold a word of the subject it borrowed (`carried`): "who has to approve it?"
    after a question about remote work is not answered by the glossary's "Approver" entry."""
    checker = SupportChecker(context, embedder, tuning)
    known = {c["chunk_id"] for c in context}
    subject = term_set(carried)
    named = [[i for i in s.get("chunk_ids") or [] if i in known] for s in sentences]
    kept, dropped = [], []
    for at, sentence in enumerate(sentences):
        prefer = named[at] or next((ids for ids in named[at + 1:] if ids), [])
        verdict = judge(checker, sentence["text"], prefer, subject)
        if not verdict.kept:
            dropped.append({**sentence, "reason": verdict.reason})
            continue
        ids = named[at] if verdict.chunk_id in named[at] else [verdict.chunk_id]
        kept.append({**sentence, "chunk_ids": ids})
    return kept, dropped


def sentence_support(sentence: str, cited: list[dict], embedder, tuning: Tuning = DEFAULT) -> bool:
    """A sentence the offline writer quoted (cleaned, joined to its list's lead-in, labelled with
    its section): most of its words are the source's (tuning.lexical_support), or it is close in
    meaning (semantic_support) with enough of its words still the source's (paraphrase_floor)."""
    own = term_set(sentence)
    if not own:
        return False
    source = set().union(*(term_set(c["text"]) for c in cited))
    lexical = len(own & source) / len(own)
    if lexical >= tuning.lexical_support:
        return True
    if lexical < tuning.paraphrase_floor:
        return False
    sources = embedder.encode_passages([c["text"] for c in cited])  # vectors stored at index time
    return float(np.max(sources @ embedder.encode([sentence])[0])) >= tuning.semantic_support


def validate_grounding(state: State, runtime: Runtime[Deps]) -> dict:
    """A draft a chat model wrote keeps the sentences a selected chunk supports and is declined
    when none is left; a draft of quotes (the offline writer's) is grounded when every sentence
    is supported by the chunks it cites."""
    if state["errors"]:
        return {"grounding_status": "not_checked"}
    selected = {c["chunk_id"]: c for c in state["context"]}
    draft = state["draft_answer"]
    sentences = draft.get("sentences", [])
    fabricated = [i for s in sentences for i in s.get("chunk_ids") or [] if i not in selected]
    if fabricated:
        log.warning("draft cited chunks that were not selected: %s", fabricated)
    if draft.get("written"):
        supported, dropped = supported_sentences(sentences, state["context"], runtime.context.embedder,
                                                runtime.context.tuning, state["question"].carried)
        if dropped:  # reasons only: the text may be the model's invention
            log.info("grounding dropped %d of %d sentences: %s", len(dropped), len(sentences),
                     [s["reason"] for s in dropped])
        question = state["question"].text  # a follow-up with the subject it borrowed
        if supported and not answers(question, [s["text"] for s in supported], runtime.context.embedder,
                                     runtime.context.tuning):
            log.info("grounding: the %d supported sentences do not answer the question", len(supported))
            supported = []
        complete = bool(supported)
    else:
        supported = [s for s in sentences if s.get("chunk_ids") and not set(s["chunk_ids"]) - set(selected)
                     and sentence_support(s["text"], [selected[i] for i in s["chunk_ids"]], runtime.context.embedder,
                                          runtime.context.tuning)]
        dropped = [s for s in sentences if s not in supported]
        complete = bool(sentences) and not dropped
    cited = [selected[chunk_id] for chunk_id in dict.fromkeys(i for s in supported for i in s["chunk_ids"])]
    missing = unheld_subject(state, cited, runtime) if cited else []
    if missing:
        status = "unsupported"  # true sentences, but not about what was asked
    elif complete:
        status = "grounded"
    else:
        status = "partially_supported" if supported else "unsupported"
    citations = cite_all(cited, runtime.context.source_url)
    update = {"grounding_status": status, "citations": citations if status == "grounded" else []}
    if status == "grounded" and dropped:  # only what is supported is shown
        update["draft_answer"] = {**draft, "answer": join_sentences([s["text"] for s in supported]),
                                  "sentences": supported}
    if missing:
        update["knowledge_gap"] = describe_gap(state, missing, runtime.context.tuning)
    return update


def unheld_subject(state: State, cited: list[dict], runtime: Runtime[Deps]) -> list[str]:
    """The question's subject, when the evidence holds it only in chunks the answer does not
    cite: "can I bring my dog to the office?" found a case study about returning to the office
    and, among the top chunks, a glossary entry that says "eat your own dog food"; the answer
    quoted the case study. Words the top chunks lack were judged before the answer was drafted
    (`assess_context_quality`); only the ones the answer left behind are judged here, by the
    same test: a weighty word whose absence the cited evidence does not explain by a synonym."""
    vocabulary, tuning = runtime.context.retriever.vocabulary(), runtime.context.tuning
    question = state["normalized_query"]
    judged = by_relevance(state["ranked_chunks"])[: tuning.judged_chunks]
    left_behind = set(uncovered_terms(question, cited, vocabulary, tuning)) - set(uncovered_terms(question, judged, vocabulary, tuning))
    if not left_behind:
        return []
    searched = (state.get("query_rewrites") or [state["retrieval_query"]])[-1]
    return [word for word in foreign_terms(question, searched, cited, vocabulary, runtime.context.embedder, tuning)
            if word in left_behind]
