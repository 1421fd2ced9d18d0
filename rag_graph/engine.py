"""One Engine per process: the index, the embedder, the generator and the compiled graph,
shared by the CLI, `citebot eval` and the chat platforms; also the index job (`citebot index`)
and the flow's diagram (`citebot graph`), so that nothing outside rag_graph builds them.

The answering machinery (LanceDB, LangGraph, the generator, the secret detectors) is imported
where it is first used, not at the top: `citebot index` imports this module, and its everyday run
with nothing changed must answer from the last refresh's stamp without loading any of it."""
from __future__ import annotations

import dataclasses
import gc
import logging
import time
from typing import TYPE_CHECKING, Callable
from urllib.parse import urlparse

from .config import Settings
from .errors import IndexNotReady, RefreshError, RefreshInProgress
from .retrieval import published
from .retrieval.checked_embedder import EmbeddingError
from .retrieval.embeddings import Embedder
from .retrieval.reading import Reading
from .retrieval.scope import Scope
from .tuning import DEFAULT, Tuning

if TYPE_CHECKING:
    from .flow.deps import Deps
    from .flow.state import FinalOutput, State
    from .retrieval.index import Index, RefreshStats
    from .retrieval.sources import SyncReport

log = logging.getLogger(__name__)


def text_link_hosts(settings: Settings) -> tuple[str, ...]:
    """The hosts whose links an answer's text may show: those the admin lists (CITEBOT_LINK_HOSTS)
    and the host the admin's CITEBOT_SOURCE_URL publishes the documents on. Never a host a
    document names itself (its `url:`): anyone who can add a document could name any host."""
    template_host = urlparse(settings.source_url or "").hostname or ""
    template_host = "" if "{" in template_host else template_host
    return tuple(dict.fromkeys([*settings.link_hosts, *([template_host.lower()] if template_host else [])]))


# What the bot may catch and read: it reaches retrieval only through the Engine.
__all__ = ["Engine", "RefreshError", "RefreshInProgress", "Scope", "check_sources"]


def check_sources(settings: Settings) -> None:
    """Raise SourcesError, one line, when the sources file (CITEBOT_SOURCES) or a source's
    credentials are wrong."""
    from .retrieval.sources import load_sources

    load_sources(settings)


def _reading(settings: Settings) -> Reading:
    """Which files of the corpus folder are read (CITEBOT_EXCLUDE) and how (CITEBOT_STRICT_AUDIENCE)."""
    return Reading(settings.strict_audience, settings.exclude)


def _copy_folders(settings: Settings) -> None:
    """With sources, the folder sources' files reach the mirror before any refresh reads it."""
    if settings.sources_path:
        from .retrieval.sources import sync_folders

        sync_folders(settings)


class Engine:
    def __init__(self, settings: Settings, generator=None, tuning: Tuning = DEFAULT):
        """`tuning`: every weight and threshold (tuning.py); `citebot eval --tune` tries others."""
        from .answer.chat_model import ChatModelGenerator, Limits, load_chat_model
        from .answer.extractive import ExtractiveGenerator
        from .answer.rerank import load_reranker
        from .flow.deps import Deps
        from .scoring import deployment
        from .flow.graph import build_graph

        self.settings = settings
        self.index = self._open_index(settings)
        self.embedder = self.index.embedder
        if generator is None and settings.llm:
            limits = Limits(timeout=settings.llm_timeout, max_tokens=settings.llm_max_tokens)
            generator = ChatModelGenerator(load_chat_model(settings.llm, limits, settings.llm_base_url,
                                                           settings.llm_api_key), limits)
        elif generator is None:
            generator = ExtractiveGenerator(self.index.vocabulary, self.embedder, self.index.entities, tuning)
        self._offline = generator if isinstance(generator, ExtractiveGenerator) else None
        self.deps = Deps(retriever=self.index, embedder=self.embedder, generator=generator,
                         reranker=load_reranker(settings, generator), source_url=settings.source_url or "",
                         link_hosts=text_link_hosts(settings), tuning=tuning,
                         ranker_file=deployment.path_in(settings.state_dir))
        self.graph = build_graph()
        self._prompts: tuple[int | None, list[dict]] = (None, [])

    # --- the index job and the diagram: no answering machinery is built for them -------------

    @staticmethod
    def _open_index(settings: Settings) -> Index:
        from .retrieval.index import Index

        return Index(settings.db, Embedder(settings.embedding_model), settings.storage_options)

    @staticmethod
    def unchanged_index(settings: Settings) -> dict | None:
        """The everyday run of `citebot index`: when nothing the last refresh read has changed
        (the corpus folder, the model), that refresh's figures, read without opening LanceDB or
        loading the model; None when the index must be refreshed."""
        _copy_folders(settings)
        return published.unchanged(settings.db, settings.documents, Embedder(settings.embedding_model).model_name,
                                   _reading(settings))

    @classmethod
    def index_corpus(cls, settings: Settings) -> RefreshStats:
        """`citebot index`: re-index the corpus folder and publish the new version, which the
        serving replicas follow (atomic; raises RefreshError and the old version keeps serving)."""
        _copy_folders(settings)
        return cls._open_index(settings).refresh(settings.documents, _reading(settings))

    @classmethod
    def roll_back(cls, settings: Settings) -> int:
        """`citebot index --rollback`: serve the published version before the serving one again;
        returns that version."""
        return cls._open_index(settings).roll_back()

    @staticmethod
    def graph_mermaid() -> str:
        """The flow as a Mermaid diagram (`citebot graph`)."""
        from .flow.graph import build_graph

        return build_graph().get_graph().draw_mermaid()

    # --- serving ------------------------------------------------------------------------------

    def refresh(self) -> RefreshStats:
        """Re-index the documents as they are on disk: CITEBOT_CORPUS, or the sources' mirror
        (atomic; raises RefreshError and keeps serving on failure)."""
        _copy_folders(self.settings)
        return self.index.refresh(self.settings.documents, _reading(self.settings))

    def sync(self, only: str | None = None) -> SyncReport:
        """Fetch what changed in each source (CITEBOT_SOURCES), then refresh the index in the same
        atomic step as `refresh`; a failing source keeps its last good documents."""
        from .retrieval.sources import sync

        return sync(self.settings, self.refresh, only)

    def sources_status(self) -> list[dict]:
        """Each source's last sync, documents and last error (none without CITEBOT_SOURCES)."""
        from .retrieval.sources import sources_status

        return sources_status(self.settings)

    def follow_index(self) -> bool:
        """Serve the version the index's serving tag names now (another replica or the index job
        may have moved it); True when it moved. Raises when the index cannot be read."""
        return self.index.follow()

    @property
    def ready(self) -> bool:
        """An index version is published and can answer."""
        return self.index.ready

    @property
    def last_refresh(self) -> RefreshStats | None:
        """The last refresh this process made, if any."""
        return self.index.last_refresh

    def index_status(self) -> dict | None:
        """`{version, documents, chunks}` of the serving index, or None before the first build."""
        try:
            return self.index.metadata()
        except IndexNotReady:
            return None

    def visible(self, access: Scope | dict | None, source_ids: list[str] | None = None) -> tuple[int, set[str]]:
        """What a place may read of the serving index: how many documents, and which of
        `source_ids` (for counts and reports shown to someone who may not read everything)."""
        reader = self.index.scoped(access)
        documents = len({row["source_id"] for row in reader.fetch("chunk_index = 0", limit=10_000_000)})
        if not source_ids:
            return documents, set()
        quoted = ", ".join("'" + s.replace("'", "''") + "'" for s in set(source_ids))
        return documents, {row["source_id"] for row in reader.fetch(f"source_id IN ({quoted})", limit=10_000_000)}

    def _deps(self, access: Scope | dict | None) -> Deps:
        """The dependencies of one question: every read of the index goes through its scope."""
        if self.deps.retriever is not self.index:
            return self.deps  # a retriever swapped in whole (the fault tests' wrappers) is read as given
        from .answer.extractive import ExtractiveGenerator

        reader = self.index.scoped(access)
        # The offline writer reads term counts and names: those of the scope. It also answers
        # whenever the chat model cannot.
        offline = ExtractiveGenerator(reader.vocabulary, self.embedder, reader.entities, self.deps.tuning)
        if self.deps.generator is self._offline:
            return dataclasses.replace(self.deps, retriever=reader, generator=offline)
        return dataclasses.replace(self.deps, retriever=reader, fallback=offline)

    def writer_status(self) -> str | None:
        """The chat model and whether it is answering (its circuit breaker), for `status`; None
        when answers are written offline."""
        status = getattr(self.deps.generator, "status", None)
        if status is None:
            return None
        return f"{self.settings.llm or 'chat model'}: {status()}"

    def ranking_status(self) -> str:
        """Which weights rank the chunks: the shipped ones, or the deployment's own ranker
        (`citebot tune --feedback`), for `status`."""
        from .scoring import deployment

        return deployment.serving(self.deps.ranker_file)[1]

    def run(self, question: str, history: list[dict] | None = None,
            on_text: Callable[[str, list[dict]], None] | None = None, access: Scope | dict | None = None) -> State:
        """The whole final state: `citebot eval` reads the ranked chunks from it. With `on_text`,
        a chat model's answer is also handed over sentence by sentence while it is written, each
        grounded sentence with the citations it will have in the final answer.
        `access` is what the place that asked may read (`{audiences: [...], sources: [globs]}`,
        see scope.py); None means the documents meant for everyone."""
        from .flow.output import GENERIC_FAILURE, cited_ids, final_output

        graph_input = {"input": question, "history": history or [],
                       "retrieval_config": self.settings.retrieval.as_dict()}
        started = time.perf_counter()
        try:
            deps = self._deps(access)
            if on_text is None:
                # "v2": the final state from the "values" stream alone (v1 also streams every
                # node's update, which nothing here reads: ~0.5 ms a question, all in LangGraph).
                state = self.graph.invoke(graph_input, context=deps, version="v2").value
            else:
                state = self._stream(graph_input, on_text, deps)
        except EmbeddingError:
            # The evidence cannot be vetted without the model: a known fault, not a bug.
            log.exception("the embedding model failed during a question")
            return {"final_output": final_output({"errors": ["embedding_failed"]}, "failed", GENERIC_FAILURE)}
        except Exception:
            # A bug in a node must not reach the user as a stack trace: log it, answer politely.
            log.exception("graph run failed")
            return {"final_output": final_output({"errors": ["internal_error"]}, "failed", GENERIC_FAILURE)}
        # One line per question for operators: outcome and evidence ids, never the text itself.
        out = state["final_output"]
        log.info("question: status=%s quality=%s attempts=%d cited=%s %.0f ms", out["status"],
                 state.get("context_quality", "-"), out["retrieval_attempts"],
                 cited_ids(out["citations"]), (time.perf_counter() - started) * 1000)
        return state

    def ask(self, question: str, history: list[dict] | None = None,
            on_text: Callable[[str, list[dict]], None] | None = None, access: Scope | dict | None = None) -> FinalOutput:
        return self.run(question, history, on_text, access)["final_output"]

    def _stream(self, graph_input: dict, on_text: Callable[[str, list[dict]], None], deps: Deps) -> State:
        """LangGraph's "messages" stream carries the chat model's tokens from inside
        generate_answer; only the first draft streams (a retry's text could only contradict it)."""
        from .answer.chat_model import SentenceStream
        from .answer.redact import clean_for_user
        from .answer.support import SupportChecker, judge
        from .flow.output import cite, cleaned
        from .language.words import term_set

        state, checker, chunks = None, None, {}

        def support(text: str, cited: list[str]) -> list[str]:
            """Checked as validate_grounding will check it, resting on what it will cite: the
            chunks the sentence names when one of them supports it, else the one that does."""
            if checker is None:
                return []
            named = [i for i in cited if i in chunks]
            asked = state.get("question")  # a follow-up's borrowed subject, as validate_grounding reads it
            verdict = judge(checker, text, named, term_set(asked.carried) if asked else set())
            return (named if verdict.chunk_id in named else [verdict.chunk_id]) if verdict.kept else []

        def emit(text: str, ids: list[str]) -> None:  # with the citations the final answer gives them
            on_text(text, [cleaned(cite(chunks[i], deps.source_url), deps.link_hosts) for i in ids])

        sentences = SentenceStream(emit, lambda text: clean_for_user(text, [], deps.link_hosts), support)
        draft_id = None
        for mode, data in self.graph.stream(graph_input, context=deps, stream_mode=["messages", "values"]):
            if mode == "values":
                state = data
                if checker is None and state.get("context"):
                    checker = SupportChecker(state["context"], deps.embedder, deps.tuning)
                    chunks = {c["chunk_id"]: c for c in state["context"]}
                continue
            token, meta = data
            if meta.get("langgraph_node") == "generate_answer" and draft_id in (None, token.id):
                draft_id = token.id
                sentences.feed(token.content if isinstance(token.content, str) else "")
        return state

    def suggested_prompts(self, limit: int = 4) -> list[dict]:
        """Questions the corpus can answer, for Slack's Messages tab (cached per index version);
        drawn from documents meant for everyone, since anyone may open the tab."""
        from .answer.suggestions import suggested_prompts

        version = self.index.version
        if version is None:
            return []
        if self._prompts[0] != version:
            rows = self.index.scoped(None).fetch("chunk_index = 0", limit=1_000_000)
            self._prompts = (version, suggested_prompts(rows, limit))
        return self._prompts[1]

    def ask_cited(self, question: str, history: list[dict] | None = None,
                  access: Scope | dict | None = None,
                  on_text: Callable[[str, list[dict]], None] | None = None) -> tuple[FinalOutput, list[dict]]:
        """final_output plus the answer's sentences `[{text, chunk_ids}]`, each cleaned like the
        answer itself, for platforms that mark every sentence with the sources it rests on."""
        from .answer.redact import clean_for_user

        state = self.run(question, history, on_text, access)
        output = state["final_output"]
        if output["status"] != "answered":
            return output, []
        sentences = [{"text": clean_for_user(s["text"], [], self.deps.link_hosts), "chunk_ids": list(s.get("chunk_ids", []))}
                     for s in (state.get("draft_answer") or {}).get("sentences", [])]
        return output, [s for s in sentences if s["text"]]

    def embed(self, texts: list[str]):
        """Vectors of short texts with the index's own model (the gap report groups questions)."""
        return self.embedder.encode_passages(texts)

    def warm_up(self, many: bool = True) -> None:
        """Load the model, the word classes, the reranker, and what questions for everyone read of
        the index (its vocabulary, names and, where documents are restricted, the public full-text
        index) before the first real question (a reranker or doubt model that cannot load stops here,
        in one line).
        `many`: questions will follow one another; what only repays itself over many (every chunk's
        terms, 0.4 s on 18F) is done too. `citebot ask` answers one and skips it."""
        from .language.subject import names_a_subject
        from .scoring import doubt

        self.embedder.encode_query("warm up")
        doubt.shipped()  # a doubt model fitted on other features than the code's stops here, in one line
        if self.deps.reranker is not None:
            self.deps.reranker.warm_up()
        names_a_subject("warm")  # its dictionary loads on first use (0.4 s)
        if self.index.ready:
            try:
                self.index.warm_up(Scope(), terms=many)
            except IndexNotReady:  # an index to rebuild: the first question says so
                pass
        if many:
            # Start-up's garbage (checking the index, loading the model and the tables above) is
            # collected now, not by a full collection inside a question: 18F's eval ran one during
            # a question, 155-180 ms over 260,000 objects (2 ms a question on average).
            gc.collect()
