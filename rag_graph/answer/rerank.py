"""Optional rerankers (CITEBOT_RERANKER, off by default): after the ranking, a cross-encoder or
the configured chat model orders the top chunks again, and the answer is written from that
order. A reranker only orders: it never adds or drops a chunk, nor decides whether the documents
answer. Whatever goes wrong (a model that will not load, a chat model that is down, slow or
answers nonsense, its circuit open) raises RerankUnavailable, and the flow keeps the ranking as
it was."""
from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable, Protocol

from ..config import Settings, SettingsError
from ..tuning import Tuning
from .injection import quarantine
from .prompt import render_ranking_prompt
from .resilience import Breaker, is_transient, refused, status_of

log = logging.getLogger(__name__)

# The chat model ranks within this share of CITEBOT_LLM_TIMEOUT, the rest being the answer's; a
# ranking is a few numbers, so few tokens.
LLM_SHARE = 0.25
RANKING_TOKENS = 32


class RerankUnavailable(RuntimeError):
    """The reranker could not order this question's chunks; the reason is one line for the log."""


class Reranker(Protocol):
    def rerank(self, question: str, chunks: list[dict], tuning: Tuning) -> list[dict]: ...

    def warm_up(self) -> None: ...


def load_reranker(settings: Settings, generator=None) -> Reranker | None:
    """The reranker CITEBOT_RERANKER names (None: none). `llm` ranks with CITEBOT_LLM through a
    client of its own (a shorter timeout, few tokens) and shares the answer writer's circuit
    breaker: one endpoint, one verdict on whether it is up."""
    spec = settings.reranker
    if not spec:
        return None
    if spec == "llm":
        from .chat_model import Limits, load_chat_model

        limits = Limits(timeout=settings.llm_timeout * LLM_SHARE, max_tokens=RANKING_TOKENS)
        model = load_chat_model(settings.llm, limits, settings.llm_base_url, settings.llm_api_key)
        return ChatModelReranker(model, getattr(generator, "breaker", None) or Breaker(), limits.timeout)
    return CrossEncoderReranker(spec.split(":", 1)[1].strip())


class CrossEncoderReranker:
    """`sentence_transformers.CrossEncoder` reads the question with each chunk and scores the
    pair; the chunks are ordered by that score. The model is loaded once per process, when first
    needed (the Engine's warm-up loads it before the first question)."""

    def __init__(self, model: str):
        self.model = model

    def warm_up(self) -> None:
        _cross_encoder(self.model).predict([("warm up", "warm up")], show_progress_bar=False)

    def rerank(self, question: str, chunks: list[dict], tuning: Tuning) -> list[dict]:
        try:
            model = _cross_encoder(self.model)
            scores = model.predict([(question, c["text"]) for c in chunks], show_progress_bar=False)
        except Exception as error:  # a model that will not load or run: the ranking stays
            raise RerankUnavailable(str(error).splitlines()[0] if isinstance(error, SettingsError)
                                    else f"the cross-encoder failed: {type(error).__name__}") from error
        order = sorted(range(len(chunks)), key=lambda i: -float(scores[i]))
        return [{**chunks[i], "rerank_score": round(float(scores[i]), 4)} for i in order]


_load_lock = threading.Lock()


@lru_cache(maxsize=2)
def _cross_encoder(name: str):
    """The CrossEncoder, or SettingsError in one line naming CITEBOT_RERANKER."""
    with _load_lock:
        from sentence_transformers import CrossEncoder

        from transformers.utils import logging as transformers_logging

        setting = f"CITEBOT_RERANKER=cross-encoder:{name}"
        if Path(name, "config.json").is_file():  # a folder: its kind is known before loading it
            _check_kind(setting, json.loads(Path(name, "config.json").read_text()).get("architectures"))
        transformers_logging.disable_progress_bar()  # a log line per load, not a progress bar
        try:
            model = CrossEncoder(name, device="cpu")
        except Exception as error:
            offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
            reason = ("no such folder, and the model hub is not used (HF_HUB_OFFLINE=1)"
                      if offline and not Path(name).is_dir() else _first_line(error))
            raise SettingsError(f"{setting} cannot be loaded: {reason}; set it to a cross-encoder's folder "
                                "(or a hub name where the hub can be reached), or leave it empty") from None
        _check_kind(setting, getattr(model.model.config, "architectures", None))
        return model


def _check_kind(setting: str, kinds: list[str] | None) -> None:
    # An embedding model loads as a CrossEncoder too, with a scoring head of random weights: it
    # would order at random.
    if not any(kind.endswith("ForSequenceClassification") for kind in kinds or []):
        raise SettingsError(f"{setting} is not a cross-encoder (its config names {kinds or 'no architecture'}, "
                            "not a ...ForSequenceClassification model); set it to a cross-encoder's folder")


class ChatModelReranker:
    """The configured chat model reads the top chunks (numbered, each cut short, masked and
    fenced as data) and replies with their numbers, best first, in one call of one attempt
    within `timeout`: a ranking is worth less than the answer's own time."""

    def __init__(self, model, breaker: Breaker, timeout: float, clock: Callable[[], float] = time.monotonic):
        self.model, self.breaker, self.timeout, self.clock = model, breaker, timeout, clock

    def warm_up(self) -> None:
        pass  # nothing to load; the endpoint is the answer writer's

    def rerank(self, question: str, chunks: list[dict], tuning: Tuning) -> list[dict]:
        if not self.breaker.allows():
            raise RerankUnavailable("the chat model is skipped while its circuit is open: " + self.breaker.last_error)
        shown = chunks[: tuning.llm_rerank_candidates]
        prompt = render_ranking_prompt(question, [quarantine(c) for c in shown], tuning.llm_rerank_words)
        try:
            reply = self._ask(prompt)
        except Exception as error:
            reason = f"{type(error).__name__}" + (f" {status_of(error)}" if status_of(error) else "")
            if refused(error) or is_transient(error):  # the endpoint is in trouble, not the ranking
                self.breaker.failed(reason)
            raise RerankUnavailable(f"the chat model did not rank: {reason}") from error
        self.breaker.succeeded()
        order = ranking(reply, len(shown))
        if not order:
            raise RerankUnavailable(f"the chat model's ranking could not be read: {reply.strip()[:80]!r}")
        rest = [i for i in range(len(shown)) if i not in order]  # left unranked: after, as they were
        return [shown[i] for i in order + rest] + chunks[len(shown):]

    def _ask(self, prompt: str) -> str:
        """The reply, streamed so that one still being written at the deadline is abandoned."""
        from langchain_core.messages import HumanMessage

        deadline, text = self.clock() + self.timeout, ""
        for chunk in self.model.stream([HumanMessage(content=prompt)]):
            text += chunk.content if isinstance(chunk.content, str) else ""
            if self.clock() > deadline:
                raise TimeoutError(f"still ranking after {self.timeout:.0f} s")
        return text


def ranking(reply: str, count: int) -> list[int]:
    """"2, 1, 3" -> [1, 0, 2]: the passage numbers a reply names, first mention first, those out
    of range dropped. A reply naming no passage reads as no ranking ([])."""
    numbers = [int(n) - 1 for n in re.findall(r"\b\d{1,3}\b", reply)]
    return list(dict.fromkeys(n for n in numbers if 0 <= n < count))


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: " + ((str(error).strip().splitlines() or [""])[0][:160])
