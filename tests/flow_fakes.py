"""What the flow's tests share: chunk rows as the index returns them, a fake retriever and
generator given through the graph's dependencies, and runs of the graph or the extractive
writer over them."""
import pytest

from collections import Counter
from rag_graph.config import RetrievalConfig
from rag_graph.flow.deps import Deps
from rag_graph.retrieval.entities import Gazetteer
from rag_graph.answer.extractive import ExtractiveGenerator
from rag_graph.flow.graph import build_graph
from rag_graph.language.words import term_set
from rag_graph.tuning import DEFAULT


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


POLICY = chunk("handbook::remote-work::0",
               "Employees may work remotely up to 3 days a week with manager approval.")


def compose(question, chunks, embedder=None, tuning=DEFAULT):
    """The extractive generator's draft from these chunks, counting terms over them (without an
    embedder: word scores only)."""
    return ExtractiveGenerator(FakeRetriever(chunks).vocabulary, embedder, tuning=tuning).generate(question, chunks, "")


def run(embedder, question, retriever, generator=None, history=None, **config):
    deps = Deps(retriever=retriever, embedder=embedder,
                generator=generator or ExtractiveGenerator(retriever.vocabulary, embedder))
    state = {"input": question, "history": history or [],
             "retrieval_config": {**RetrievalConfig().as_dict(), **config}}
    return build_graph().invoke(state, context=deps)


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
