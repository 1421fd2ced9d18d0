"""A chat model that streams, for the paths a paid LLM would take: it answers with the first
sentences (two unless told) of the first document in its prompt, each citing that document's chunk id, and
`_stream`s the reply a word at a time, as a provider's SDK delivers tokens."""
from __future__ import annotations

import re
import time

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult


class TwoSentenceModel(BaseChatModel):
    streamed_tokens: int = 0
    sentences: int = 2  # how many of the document's sentences it writes
    pause: float = 0.0  # seconds it takes after each sentence while streaming (a model writing)
    tail: str = ""  # written after the sentences, e.g. INSUFFICIENT_CONTEXT

    @property
    def _llm_type(self) -> str:
        return "two-sentence-fake"

    def _reply(self, messages) -> str:
        chunk_id, body = re.search(r'<document chunk_id="([^"]+)"[^>]*>\n(.*?)\n</document>',
                                   messages[-1].content, re.S).groups()
        sentences = re.split(r"(?<=[.!?])\s+", " ".join(body.split()))[:self.sentences]
        return " ".join([*(f"{sentence} [{chunk_id}]" for sentence in sentences), *([self.tail] if self.tail else [])])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self._reply(messages)))])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        for token in re.findall(r"\S+\s*", self._reply(messages)):
            if self.pause and re.search(r"\]\s*$", token):
                time.sleep(self.pause)  # after a sentence's citation
            self.streamed_tokens += 1
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
