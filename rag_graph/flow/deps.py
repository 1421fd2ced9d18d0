"""What the graph's nodes may call: injected per run through LangGraph's `context_schema`, so
tests hand in fakes without patching anything."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from ..answer.rerank import Reranker
from ..retrieval.checked_embedder import checked
from ..language.question import Question
from ..retrieval.entities import Gazetteer
from ..tuning import DEFAULT, Tuning


class Retriever(Protocol):
    def search(self, query: str, mode: str, top_k: int) -> list[dict]: ...

    def related(self, chunks: list[dict]) -> list[dict]: ...

    def metadata(self) -> dict: ...

    def vocabulary(self) -> tuple[dict[str, int], int]: ...

    def entities(self) -> Gazetteer: ...


class SentenceEmbedder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


class Generator(Protocol):
    # `question` as read (its own words apart from what a follow-up borrowed), `parts` the
    # sub-questions of a multi-part one; a chat model reads the prompt, which holds both.
    def generate(self, question: Question, context: list[dict], prompt: str, parts: list[Question]) -> dict: ...


@dataclass
class Deps:
    retriever: Retriever
    embedder: SentenceEmbedder
    generator: Generator
    # The offline writer that answers when the chat model cannot (answer/resilience.py); None: none.
    fallback: Generator | None = None
    # CITEBOT_RERANKER (answer/rerank.py): orders the ranked chunks again; None: the ranking stays.
    reranker: Reranker | None = None
    clock: Callable[[], float] = field(default=time.monotonic)
    source_url: str = ""  # CITEBOT_SOURCE_URL: links for documents without a front matter `url`
    link_hosts: tuple[str, ...] = ()  # CITEBOT_LINK_HOSTS: hosts whose links an answer may show
    tuning: Tuning = DEFAULT  # every weight and threshold (tuning.py)
    # Where a deployment's own chunk ranker would be (scoring/deployment.py); None: the hand weights.
    ranker_file: Path | None = None

    def __post_init__(self):
        # Nodes compare vectors to vet the evidence; a broken model must stop them, not fool them.
        self.embedder = checked(self.embedder)
