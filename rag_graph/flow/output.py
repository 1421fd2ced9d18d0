"""The one place `final_output` is shaped, and the citation of a chunk: what every ending of
the flow (and the Engine, when the flow itself fails) hands back."""
from __future__ import annotations

from ..answer.links import citation_url
from ..answer.redact import clean_for_user
from .state import Citation, FinalOutput, State

FAILURE_MESSAGES = {
    "index_unavailable": "The knowledge base isn't available right now (it may not have been indexed yet). "
                         "Please try again later or tell an admin.",
    "index_empty": "The knowledge base is empty right now, so I have nothing to answer from.",
}
GENERIC_FAILURE = "Something went wrong while I was looking this up. Please try again in a minute."


def cleaned(c: Citation, trusted: tuple[str, ...] = ()) -> Citation:
    """A citation as users may see it: titles and headings are document text too, and a heading
    can carry a link or a secret."""
    return {**c, "title": clean_for_user(c["title"], [], trusted),
            "section": clean_for_user(c["section"], [], trusted)}


def final_output(state: State, status: str, answer: str, citations=(), confidence: float = 0.0,
                 knowledge_gap: str | None = None, closest: Citation | None = None,
                 trusted: tuple[str, ...] = (), notes: list[str] = ()) -> FinalOutput:
    # A document names its own `url:`, so a cited host proves nothing: links inside the text are
    # kept only for the hosts the admin trusts (CITEBOT_LINK_HOSTS and CITEBOT_SOURCE_URL's host);
    # the citation's own link stays clickable as the citation.
    return {
        "status": status,
        "answer": clean_for_user(answer, [], trusted),
        "citations": [cleaned(c, trusted) for c in citations],
        "confidence": round(confidence, 2),
        "retrieval_attempts": state.get("retrieval_attempts", 0),
        "retrieved_sources": list(dict.fromkeys(c["source_id"] for c in state.get("retrieved_chunks", []))),
        "grounding_status": state.get("grounding_status", "not_checked"),
        "knowledge_gap": clean_for_user(knowledge_gap, []) if knowledge_gap else None,
        "closest": cleaned(closest, trusted) if closest else None,
        "notes": [clean_for_user(note, [], trusted) for note in notes],
        "hedged": False,  # finalize_answer: an answer the doubt model expects to be wrong
        # Error codes only: details (stack traces, rows) stay in the log.
        "errors": [error.split(":")[0] if not error.startswith("invalid_input") else error
                   for error in state.get("errors", [])],
    }


def cite(chunk: dict, source_url: str) -> Citation:
    """Where a chunk is: its document and section, and a link down to the section."""
    return {"source_id": chunk["source_id"], "title": chunk["title"], "section": chunk.get("section", ""),
            "chunk_id": chunk["chunk_id"], "chunk_ids": [chunk["chunk_id"]],
            "url": citation_url(chunk.get("url", ""), source_url, chunk.get("path", ""), chunk.get("anchor", ""))}


def cite_all(chunks: list[dict], source_url: str) -> list[Citation]:
    """The answer's sources, one per section link, in the order first cited: two chunks of one
    section are one source to the reader ("Employee Handbook 2025 › Remote Work" once), and the
    citation keeps both chunk ids for feedback."""
    merged: dict[tuple[str, str, str], Citation] = {}
    for chunk in chunks:
        citation = cite(chunk, source_url)
        key = (citation["title"], citation["section"], citation["url"])
        if key in merged:
            merged[key]["chunk_ids"].append(chunk["chunk_id"])
        else:
            merged[key] = citation
    return list(merged.values())


def cited_ids(citations: list[Citation]) -> list[str]:
    """Every chunk the citations rest on, in citation order."""
    return [i for c in citations for i in (c.get("chunk_ids") or [c["chunk_id"]])]
