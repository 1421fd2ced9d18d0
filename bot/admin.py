"""The admin commands every platform offers (`status`, `reload`, `help`): who may reload,
running one reload at a time, and what the admin is told. Platform adapters decide how the words
reach the admin and add platform-specific admin checks (Slack's workspace admins)."""
from __future__ import annotations

import logging
import threading
import uuid
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version

from typing import Callable

from rag_graph.config import Settings
from rag_graph.engine import RefreshError, RefreshInProgress, RefreshStats

log = logging.getLogger(__name__)

HELP = ("*Citebot* answers questions from the company's documents and links the sections it used.\n"
        "• Mention me in a channel (`@citebot how many days can I work remotely?`) or send me a DM. "
        "Ask follow-ups in the same thread; no need to mention me again.\n"
        "• `/citebot status`: index version, documents, chunks, last reload\n"
        "• `/citebot reload`: re-read the documents after they changed (admins only)\n"
        "• `/citebot help`: this message")
REFUSED = "Sorry, only Citebot admins can reload the documents. Ask an admin if something looks out of date."
BUSY = "A reload is already running. I'll keep serving the current documents; try again when it has finished."


def _app_version() -> str:
    try:
        return version("citebot")
    except PackageNotFoundError:
        return "dev"


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def describe(stats: RefreshStats) -> str:
    return (f"{stats.documents} documents, {stats.chunks} chunks, {stats.embedded} re-embedded, "
            f"{stats.deleted} removed in {stats.seconds:.1f} s (index version {stats.version})")


class Admin:
    def __init__(self, settings: Settings, engine, escape: Callable[[str], str] = lambda text: text):
        self.settings, self.engine = settings, engine
        self.escape = escape  # the platform's markup escaping for text that came from elsewhere
        self._reloading = threading.Lock()  # taken before "Reloading…" is said, so nobody hears it twice

    def is_listed(self, user_id: str) -> bool:
        return user_id in self.settings.admin_user_ids

    def status(self) -> str:
        meta = self.engine.index_status()
        if meta:
            index = f"index version {meta['version']}, {meta['documents']} documents, {meta['chunks']} chunks"
        else:
            index = "no index yet (an admin can run `/citebot reload`)"
        stats = self.engine.last_refresh
        last = f"{_when(stats.finished_at)}: {describe(stats)}" if stats else "not since this process started"
        return f"*Citebot {_app_version()}*\n• {index}\n• Last reload: {last}"

    def reload(self, user_id: str, allowed: bool, respond: Callable[[str], object]) -> None:
        """Runs after the platform acknowledged the command; every message goes to the admin
        alone through `respond`. `allowed` is the platform's verdict on `user_id`."""
        if not allowed:
            respond(REFUSED)
            return
        if not self._reloading.acquire(blocking=False):
            respond(BUSY)
            return
        try:
            respond("Reloading the documents… the current index keeps answering meanwhile.")
            log.info("reload requested by %s", user_id)
            stats = self.engine.refresh()
        except RefreshInProgress:  # a refresh started elsewhere (e.g. at start-up)
            respond(BUSY)
        except RefreshError as error:
            log.warning("reload by %s failed: %s", user_id, error)
            kept = "" if "keeps serving" in str(error) else " The previous index keeps serving."
            respond(f":warning: Reload failed: {self.escape(str(error))}{kept}")
        except Exception:
            ref = uuid.uuid4().hex[:8]
            log.exception("[%s] reload failed", ref)
            respond(f":warning: Reload failed unexpectedly; the previous index keeps serving. Reference `{ref}`.")
        else:
            skipped = "".join(f"\n• {self.escape(note)}" for note in stats.skipped[:5])
            skipped = f"\nNot indexed:{skipped}" if skipped else ""
            respond(f":white_check_mark: Reloaded: {describe(stats)}.{skipped}")
        finally:
            self._reloading.release()
