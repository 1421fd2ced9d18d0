"""ChatModelGenerator: any langchain-core chat model writes the answer from the prompt; its
output is parsed into cited sentences, and the grounding check, not the model's good will,
decides what reaches the user. Document text reaches it fenced as untrusted data (prompt.py)."""
from __future__ import annotations

import re
from typing import Callable

from ..language.words import words

_CITATION = re.compile(r"\[([^\[\]\s]+::[^\[\]\s]*::\d+)\]")
INSUFFICIENT = "INSUFFICIENT_CONTEXT"  # the prompt's agreed reply when the documents don't answer
_SENTENCE_END = re.compile(r"(?<=[.!?\]])\s+(?=[A-Z0-9\"“])")


class ChatModelGenerator:
    """Wraps a langchain-core `BaseChatModel`. Its output is parsed into cited sentences; the
    grounding check, not the model's good will, decides what reaches the user."""

    def __init__(self, model):
        self.model = model

    def generate(self, question: str, context: list[dict], prompt: str, parts: list[str] = ()) -> dict:
        # The prompt already lists the parts of a multi-part question.
        from langchain_core.messages import HumanMessage

        reply = self.model.invoke([HumanMessage(content=prompt)])
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        if not text.strip() or INSUFFICIENT in text:
            return {"answer": "", "sentences": []}
        out = cited_sentences(_SENTENCE_END.split(text.strip()))
        return {"answer": " ".join(s["text"] for s in out), "sentences": out}


def cited_sentences(pieces: list[str]) -> list[dict]:
    """Model output cut at sentence ends -> `{"text", "chunk_ids"}`, the brackets moved out of the text."""
    out = []
    for sentence in pieces:
        ids = list(dict.fromkeys(_CITATION.findall(sentence)))
        bare = re.sub(r"\s*\[[^\[\]]*\]", "", sentence).strip()
        if words(bare):
            out.append({"text": bare, "chunk_ids": ids})
    return out


class SentenceStream:
    """A chat model's tokens -> whole sentences as `ChatModelGenerator` will cut them, each sent to
    `emit` once the next one has begun (its end is then certain) and cleaned as the final answer
    will be (redacted, links limited). The last sentence is left to the final answer, and nothing
    streams once INSUFFICIENT_CONTEXT appears. A draft that then fails grounding has shown only
    its first sentences, which the caller replaces with the final answer."""

    def __init__(self, emit: Callable[[str], None], clean: Callable[[str], str]):
        self.emit, self.clean = emit, clean
        self.text, self.sent = "", 0

    def feed(self, token: str) -> None:
        self.text += token
        pieces = _SENTENCE_END.split(self.text.strip())[:-1]
        if INSUFFICIENT in self.text:
            return
        for sentence in cited_sentences(pieces[self.sent:]):
            self.emit(self.clean(sentence["text"]))
        self.sent = max(self.sent, len(pieces))


def load_chat_model(spec: str):
    """`CITEBOT_LLM=provider:model`, resolved by LangChain's `init_chat_model` (install the
    provider's package, e.g. `pip install langchain langchain-openai`)."""
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as error:
        raise RuntimeError(
            f"CITEBOT_LLM={spec!r} needs the `langchain` package and the provider's integration; "
            "unset CITEBOT_LLM to use the offline extractive answers") from error
    return init_chat_model(spec)
