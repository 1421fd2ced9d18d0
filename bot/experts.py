"""Asking an expert, whatever the platform: the escalations Citebot made (one per question in a
thread, however many clicks), the experts' replies it relayed, and who may save a reply as a
verified answer. Kept in the shared records (a JSON-lines file beside the gap log, or Redis when
replicas share state), so a restart or another replica still relays a reply to the asker.

The platform adapters post and render; this module decides."""
from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable

from rag_graph.config import Settings

from bot.access import Access
from bot.shared import SharedState
from bot.verified import Verified, VerifiedAnswers

# A click claims its question for this long across replicas; after that the stored record decides.
CLAIM_SECONDS = 24 * 3600
REINDEX_WAIT = 120.0  # seconds a save waits for a running reload before indexing its document
# What the clicker alone is told, on every platform.
NO_EXPERTS = "No experts are set up for this channel, so there is no one I can ask."
SAVE_REFUSED = "Only the {group} experts and Citebot admins can save an answer as verified."
ALREADY_SAVED = "This answer was saved as a verified answer already."
GONE = "I no longer have this question on record, so I can't do that."


def question_key(platform: str, place: str, thread: str, question: str) -> str:
    """One escalation per question asked in a thread: the same words in the same thread are the
    same question, whichever answer's button was clicked."""
    words = " ".join(question.lower().split())
    return f"{platform}|{place}|{thread}|{hashlib.sha1(words.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class ExpertReply:
    """An expert's reply as relayed to the asker's thread: who answered, and what."""

    expert: str
    text: str
    name: str = ""  # how the platform showed the expert (Teams sends it; Slack is asked at save time)


class Escalations:
    def __init__(self, settings: Settings, shared: SharedState):
        path = settings.gaps_path.with_name("escalations.jsonl")
        self.store = shared.records("escalations", path, lambda record: record.get("key"))
        self.claims = shared.seen(ttl=CLAIM_SECONDS)
        self._lock = threading.Lock()  # read-modify-write of one record at a time in this process

    def get(self, key: str) -> dict | None:
        return next((r for r in self.store.all() if r.get("key") == key), None)

    def claim(self, key: str) -> bool:
        """True for the first click on this question (here or on another replica), else False."""
        return self.get(key) is None and self.claims.first_time(("escalation", key))

    def release(self, key: str) -> None:
        """The claimed escalation could not be posted: the next click tries again."""
        self.claims.forget(("escalation", key))

    def open(self, record: dict) -> dict:
        record = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "replies": [],
                  "saved": [], **record}
        self.store.put(record)
        return record

    def for_expert_thread(self, channel: str, thread: str) -> dict | None:
        """The escalation whose post in the experts' channel started `thread`."""
        return next((r for r in self.store.all()
                     if r.get("experts_channel") == channel and r.get("experts_thread") == thread), None)

    def add_reply(self, key: str, reply: ExpertReply) -> int:
        """Records a relayed reply; its position is what the save button names."""
        with self._lock:
            record = self.get(key)
            record["replies"].append(reply.__dict__)
            self.store.put(record)
            return len(record["replies"]) - 1

    def mark_saved(self, key: str, position: int) -> bool:
        """False when that reply was saved already (a second click, here or elsewhere)."""
        if not self.claims.first_time(("saved", key, position)):
            return False
        with self._lock:
            record = self.get(key)
            if position in record["saved"]:
                return False
            record["saved"].append(position)
            self.store.put(record)
        return True

    def unmark_saved(self, key: str, position: int) -> None:
        """The claimed save wrote nothing: the next click tries again."""
        with self._lock:
            record = self.get(key)
            if record and position in record["saved"]:
                record["saved"].remove(position)
                self.store.put(record)
        self.claims.forget(("saved", key, position))


def may_verify(access: Access, place: str, user: str, admins: Iterable[str],
               members: Callable[[str], Iterable[str]] = lambda usergroup: ()) -> bool:
    """Members of the place's expert group (by id or through a Slack user group) and admins."""
    experts = access.place(place).experts
    if user in set(admins):
        return True
    return bool(experts) and experts.group.lower() in access.for_user(user, members).audiences


def claim_save(escalations: Escalations, access: Access, key, position, user: str | None, admins: Iterable[str],
               members: Callable[[str], Iterable[str]] = lambda usergroup: ()) -> tuple[dict | None, str | None]:
    """A "Save as verified answer" click: the escalation record it may save, or why not (the
    clicker's message). A click without a known clicker, or on a reply no longer on record, is
    refused; the first allowed click claims the save, so two clicks save once."""
    record = escalations.get(str(key))
    if not record or not isinstance(position, int) or not 0 <= position < len(record["replies"]):
        return None, GONE
    if not may_verify(access, record["channel"], user or "", admins, members):
        return None, SAVE_REFUSED.format(group=record["group"])
    if not escalations.mark_saved(record["key"], position):
        return None, ALREADY_SAVED
    return record, None


def save_verified(escalations: Escalations, verified: VerifiedAnswers, engine, shared: SharedState, record: dict,
                  position: int, expert_name: str, saved_by: str, permalink: str) -> Verified:
    """Writes the reply as a verified answer for the place's audience and indexes it at once.
    A write that fails gives the claim back, so the clicker's "try again later" can work."""
    reply = record["replies"][position]
    try:
        saved = verified.save(record["question"], reply["text"], expert_name, saved_by, record["audience"], permalink)
    except Exception:
        escalations.unmark_saved(record["key"], position)
        raise
    wait_and_reindex(engine, shared)
    return saved


def wait_and_reindex(engine, shared: SharedState) -> None:
    """Index the corpus now that a verified answer was written: only its chunks are embedded.
    A reload running elsewhere may have read the folder before the file existed, so we wait for
    it and index after it rather than skip."""
    deadline = time.monotonic() + REINDEX_WAIT
    while shared.reload_lock.run(engine.refresh) is None:
        if time.monotonic() > deadline:
            raise TimeoutError("a reload has held the index for over two minutes")
        time.sleep(0.5)
