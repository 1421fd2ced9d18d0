"""What Citebot remembers of a conversation it cannot read back. Slack threads are re-read from
conversations.replies; Teams gives a bot no way to read a thread, so the Teams adapter records
each exchange here and passes the turns to the graph the same way. Behind a small interface so a
shared store (several replicas: RedisMemory) can replace the in-process one."""
from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from typing import Callable, Protocol

MAX_TURN_CHARS = 2000  # as for Slack threads: one pasted log must not crowd out the question


class ConversationMemory(Protocol):
    def turns(self, key: str) -> list[dict]:
        """The remembered `{role, content}` turns of the conversation, oldest first."""

    def add(self, key: str, question: str, answer: str) -> None:
        """Record one exchange: the user's question and what Citebot answered."""

    def note_answer(self, answer_id: str, record: dict) -> None:
        """What an answer was about (ref, status, question, chunk ids), for feedback on it."""

    def answer(self, answer_id: str) -> dict | None:
        ...


def _exchange(question: str, answer: str) -> list[dict]:
    return [{"role": "user", "content": question[:MAX_TURN_CHARS]},
            {"role": "assistant", "content": answer[:MAX_TURN_CHARS]}]


class _Expiring:
    """An ordered map whose entries expire `ttl` seconds after their last write, at most
    `max_size` of them (least recently written forgotten first)."""

    def __init__(self, ttl: float, max_size: int, clock: Callable[[], float]):
        self.ttl, self.max_size, self._clock = ttl, max_size, clock
        self._items: OrderedDict[str, tuple[float, object]] = OrderedDict()

    def get(self, key: str):
        item = self._items.get(key)
        if item is None or item[0] <= self._clock() - self.ttl:
            return None
        return item[1]

    def put(self, key: str, value) -> None:
        now = self._clock()
        self._items.pop(key, None)
        self._items[key] = (now, value)
        while self._items and (len(self._items) > self.max_size
                               or next(iter(self._items.values()))[0] <= now - self.ttl):
            self._items.popitem(last=False)


class InProcessMemory:
    """Bounded and expiring: the last `max_turns` exchanges of at most `max_conversations`
    conversations, each forgotten `ttl` seconds after its last exchange."""

    def __init__(self, max_turns: int = 8, ttl: float = 24 * 3600, max_conversations: int = 10_000,
                 clock: Callable[[], float] = time.monotonic):
        self.max_turns = max_turns
        self._conversations = _Expiring(ttl, max_conversations, clock)
        self._answers = _Expiring(ttl, max_conversations, clock)
        self._lock = threading.Lock()

    def turns(self, key: str) -> list[dict]:
        with self._lock:
            return list(self._conversations.get(key) or [])

    def add(self, key: str, question: str, answer: str) -> None:
        exchange = _exchange(question, answer)
        with self._lock:
            turns = (self._conversations.get(key) or []) + exchange
            self._conversations.put(key, turns[-2 * self.max_turns:] if self.max_turns > 0 else [])

    def note_answer(self, answer_id: str, record: dict) -> None:
        with self._lock:
            self._answers.put(answer_id, dict(record))

    def answer(self, answer_id: str) -> dict | None:
        with self._lock:
            return self._answers.get(answer_id)


class RedisMemory:
    """The same memory in Redis, shared by replicas: a list of turns per conversation and a key per
    answer, each expiring `ttl` seconds after its last write. While Redis is unreachable, this
    process's `local` memory serves (bot/shared.py)."""

    def __init__(self, shared, prefix: str, local: InProcessMemory, ttl: int = 24 * 3600):
        self.shared, self.prefix, self.local, self.ttl = shared, prefix, local, ttl
        self.max_turns = local.max_turns

    def turns(self, key: str) -> list[dict]:
        return self.shared.run(lambda r: [json.loads(t) for t in r.lrange(self.prefix + "turns:" + key, 0, -1)],
                               lambda: self.local.turns(key))

    def add(self, key: str, question: str, answer: str) -> None:
        if self.max_turns <= 0:
            return
        name = self.prefix + "turns:" + key

        def append(r) -> None:
            with r.pipeline() as pipe:  # MULTI/EXEC: another replica never sees half an exchange
                pipe.rpush(name, *(json.dumps(turn, ensure_ascii=False) for turn in _exchange(question, answer)))
                pipe.ltrim(name, -2 * self.max_turns, -1)
                pipe.expire(name, self.ttl)
                pipe.execute()

        self.shared.run(append, lambda: self.local.add(key, question, answer))

    def note_answer(self, answer_id: str, record: dict) -> None:
        self.shared.run(lambda r: r.set(self.prefix + "answer:" + answer_id, json.dumps(record), ex=self.ttl),
                        lambda: self.local.note_answer(answer_id, record))

    def answer(self, answer_id: str) -> dict | None:
        def read(r):
            stored = r.get(self.prefix + "answer:" + answer_id)
            return json.loads(stored) if stored else None

        return self.shared.run(read, lambda: self.local.answer(answer_id))
