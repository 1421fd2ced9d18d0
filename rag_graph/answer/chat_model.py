"""ChatModelGenerator: any langchain-core chat model writes the answer from the prompt; its
output is parsed into cited sentences, and the grounding check, not the model's good will,
decides what reaches the user. Document text reaches it fenced as untrusted data (prompt.py)."""
from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Callable

from ..language.words import words
from .resilience import Breaker, WriterUnavailable, is_transient, refused, retry_after, status_of
from .support import is_pleasantry

log = logging.getLogger(__name__)

MAX_SENTENCES = 10
INSUFFICIENT = "INSUFFICIENT_CONTEXT"  # the prompt's agreed reply when the documents don't answer
_SENTENCE_END = re.compile(r"(?<=[.!?\]\)])\s+(?=[A-Z0-9\"“])")
_CHUNK_ID = r"[^\s\[\](),;]+::[^\s\[\](),;]*::\d+"
# A citation as models write it: "[a]", "[a, b]", "[a][b]", "(a)", "(source: a)", "【a】".
_CITATION = re.compile(rf"\s*[\[(【]\s*(?:sources?:\s*|chunk(?:_id)?:?\s*)?{_CHUNK_ID}(?:\s*[,;]\s*{_CHUNK_ID})*\s*[\])】]", re.I)


@dataclass(frozen=True)
class Limits:
    """How long one answer may wait for the model, and how much it may write."""
    timeout: float = 20.0  # seconds for the whole answer, retries included (CITEBOT_LLM_TIMEOUT)
    max_tokens: int = 400  # three sentences with citations fit in ~200 (CITEBOT_LLM_MAX_TOKENS)
    max_attempts: int = 3  # calls per answer on a 429, a 5xx or a timeout
    backoff: float = 0.5  # seconds before the second call, doubled for each one after


class ChatModelGenerator:
    """Wraps a langchain-core `BaseChatModel`. Its output is parsed into cited sentences; the
    grounding check, not the model's good will, decides what reaches the user. A call that
    fails is retried within `limits` (honouring Retry-After); when the model cannot answer in
    time, `WriterUnavailable` tells the flow to answer offline, and after repeated failures the
    breaker skips the model for a while."""

    def __init__(self, model, limits: Limits = Limits(), breaker: Breaker | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        self.model, self.limits, self.clock, self.sleep = model, limits, clock, sleep
        self.breaker = breaker or Breaker(clock=clock)

    def status(self) -> str:
        return self.breaker.describe()

    def generate(self, question, context: list[dict], prompt: str, parts=()) -> dict:
        # The prompt already lists the parts of a multi-part question.
        if not self.breaker.allows():
            raise WriterUnavailable("circuit open: " + self.breaker.last_error)
        text = self._reply(prompt)
        if not text.strip() or INSUFFICIENT in text:
            return {"answer": "", "sentences": []}
        # An answer is three sentences; a reply ten times as long is read no further.
        out = cited_sentences(_SENTENCE_END.split(text.strip())[:MAX_SENTENCES])
        # "written": in the model's words, so grounding checks each sentence's facts and meaning.
        return {"answer": " ".join(s["text"] for s in out), "sentences": out, "written": True}

    def _reply(self, prompt: str) -> str:
        deadline = self.clock() + self.limits.timeout
        for attempt in range(1, self.limits.max_attempts + 1):
            try:
                text = self._write(prompt, deadline)
            except Exception as error:
                reason = _describe(error)
                wait = retry_after(error)
                wait = self.limits.backoff * 2 ** (attempt - 1) if wait is None else wait
                if (refused(error) or not is_transient(error) or attempt == self.limits.max_attempts
                        or self.clock() + wait >= deadline):
                    self.breaker.failed(reason)
                    log.warning("chat model unavailable after %d call(s): %s", attempt, reason)
                    raise WriterUnavailable(reason) from error
                log.info("chat model call %d failed (%s); again in %.1f s", attempt, reason, wait)
                self.sleep(wait)
            else:
                self.breaker.succeeded()
                return text
        raise AssertionError("unreachable")

    def _write(self, prompt: str, deadline: float) -> str:
        """The model's reply, streamed (LangGraph hands the tokens to a streaming caller); a reply
        still being written at the deadline is abandoned."""
        from langchain_core.messages import HumanMessage

        text = ""
        for chunk in self.model.stream([HumanMessage(content=prompt)]):
            text += _text_of(chunk.content)
            if self.clock() > deadline:
                raise TimeoutError(f"still writing after {self.limits.timeout:.0f} s")
        return text


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content or [])


def _describe(error: BaseException) -> str:
    status = status_of(error)
    return f"{type(error).__name__}" + (f" {status}" if status else "") + (": connection refused" if refused(error) else "")


def cited_sentences(pieces: list[str]) -> list[dict]:
    """Model output cut at sentence ends -> `{"text", "chunk_ids"}`, the citations (in any of
    the forms models write them) moved out of the text, and pleasantries left out."""
    out = []
    for sentence in pieces:
        ids = [i for cited in _CITATION.findall(sentence) for i in re.findall(_CHUNK_ID, cited)]
        bare = _CITATION.sub("", sentence).strip()
        bare = re.sub(r"\s+([.!?,;:])", r"\1", bare)
        if words(bare) and not is_pleasantry(bare):
            out.append({"text": bare, "chunk_ids": list(dict.fromkeys(ids))})
    return out


class SentenceStream:
    """A chat model's tokens -> whole sentences as `ChatModelGenerator` will cut them, each sent to
    `emit` with the chunk ids it rests on once the next one has begun (its end is then certain),
    only when `support` finds chunks for it (the grounding check, against the answer's context:
    `support(text, cited ids)` -> the ids, [] when unsupported), and cleaned as the final answer
    will be (redacted, links limited). The last sentence is left to the final answer, and nothing
    streams once INSUFFICIENT_CONTEXT appears. The final answer replaces what streamed."""

    def __init__(self, emit: Callable[[str, list[str]], None], clean: Callable[[str], str],
                 support: Callable[[str, list[str]], list[str]] = lambda text, cited: []):
        self.emit, self.clean, self.support = emit, clean, support
        self.text, self.sent = "", 0

    def feed(self, token: str) -> None:
        self.text += token
        pieces = _SENTENCE_END.split(self.text.strip())[:-1]
        if INSUFFICIENT in self.text:
            return
        for sentence in cited_sentences(pieces[self.sent:]):
            if ids := self.support(sentence["text"], sentence["chunk_ids"]):
                self.emit(self.clean(sentence["text"]), ids)
        self.sent = max(self.sent, len(pieces))


# Providers whose LangChain class takes `timeout`, `max_retries` and `max_tokens` under those
# names; Ollama's takes the limits its own way. Any other provider gets the limits it accepts.
_OLLAMA = "ollama"
_DOCS = "docs/chat-model.md"


def load_chat_model(spec: str, limits: Limits = Limits(), base_url: str | None = None, api_key: str | None = None):
    """`CITEBOT_LLM=provider:model`, resolved by LangChain's `init_chat_model`, with the limits
    set on the client (its own retries off: ChatModelGenerator retries within the answer's
    time). `base_url` points the `openai` provider at any OpenAI-compatible server (Ollama,
    vLLM, llama.cpp, LM Studio). A setting that cannot work raises SettingsError: one line
    naming the setting and the fix."""
    from ..config import SettingsError

    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        raise SettingsError(f"CITEBOT_LLM={spec} needs LangChain: pip install 'citebot[llm]' "
                            "(or unset CITEBOT_LLM for offline answers)") from None
    provider = spec.split(":", 1)[0] if ":" in spec else ""
    kwargs: dict = {"timeout": limits.timeout, "max_retries": 0, "max_tokens": limits.max_tokens}
    if provider == _OLLAMA:
        kwargs = {"num_predict": limits.max_tokens, "client_kwargs": {"timeout": limits.timeout}}
    if base_url:
        if provider == _OLLAMA:
            kwargs["base_url"] = base_url
        else:
            # A local server wants no key, but the OpenAI client refuses to start without one.
            kwargs.update(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused")
    elif api_key:
        kwargs["api_key"] = api_key
    try:
        return init_chat_model(spec, **kwargs)
    except ImportError as error:
        package = re.search(r"pip install ([\w.-]+)", str(error))
        fix = f"pip install {package.group(1)}" if package else "pip install 'citebot[llm]'"
        raise SettingsError(f"CITEBOT_LLM={spec} needs the provider's package: {fix}") from None
    except ValueError as error:
        if "infer model provider" in str(error) or "Unsupported" in str(error):
            raise SettingsError(f"CITEBOT_LLM={spec}: unknown provider; write provider:model, e.g. openai:gpt-4o-mini "
                                f"or ollama:llama3.2 (providers in {_DOCS})") from None
        raise SettingsError(f"CITEBOT_LLM={spec}: {_first_line(error)}") from None
    except Exception as error:
        if re.search(r"api[_ ]?key|credential", str(error), re.I):
            variable = f"{provider.upper()}_API_KEY" if provider else "the provider's API key variable"
            raise SettingsError(f"CITEBOT_LLM={spec} needs an API key: set {variable} (or CITEBOT_LLM_API_KEY); "
                                "a local server needs none with CITEBOT_LLM_BASE_URL") from None
        raise SettingsError(f"CITEBOT_LLM={spec}: {_first_line(error)}") from None


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
