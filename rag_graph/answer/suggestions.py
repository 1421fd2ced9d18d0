"""What a newcomer could ask: prompts drawn from the corpus itself. The most central current
documents (the most linked to by other documents, then the broadest) each suggest a question
about their longest section."""
from __future__ import annotations

from collections import Counter

MAX_TITLE = 75  # Slack shows a prompt's title on one line


def suggested_prompts(rows: list[dict], limit: int = 4) -> list[dict]:
    """Chunk rows (source_id, title, section, chunk_index, status, superseded_by, links) ->
    up to `limit` `{"title", "message"}` prompts, one per document."""
    documents: dict[str, dict] = {}
    for row in rows:
        if row.get("status", "current") != "current" or row.get("superseded_by"):
            continue  # never suggest what an archived or replaced document says
        doc = documents.setdefault(row["source_id"], {"title": row["title"], "links": set(), "sections": Counter()})
        doc["links"].update(row.get("links") or [])
        if row.get("section"):
            top = row["section"].split(" › ")[0]
            doc["sections"][top] += 1  # chunks per top-level section: how much it has to say
    inbound = Counter(target for source, doc in documents.items() for target in doc["links"]
                      if target != source and target in documents)
    ranked = sorted(documents, key=lambda s: (-inbound[s], -len(documents[s]["sections"]), documents[s]["title"]))
    prompts = []
    for source in ranked[:limit]:
        doc = documents[source]
        section = max(sorted(doc["sections"]), key=doc["sections"].__getitem__, default="")
        message = (f"What does the {doc['title']} say about {section}?" if section
                   else f"What is in the {doc['title']}?")
        prompts.append({"title": (section or doc["title"])[:MAX_TITLE], "message": message})
    return prompts
