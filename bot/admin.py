"""The admin commands every platform offers (`status`, `reload`, `help`): who may reload,
running one reload at a time, and what the admin is told. Platform adapters decide how the words
reach the admin and add platform-specific admin checks (Slack's workspace admins)."""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Callable

from rag_graph.config import Settings
from rag_graph.errors import RefreshError, RefreshInProgress

from bot.gaps import gap_log, report_text, topics
from bot.shared import SharedState
from bot.sources import status_lines

if TYPE_CHECKING:
    from rag_graph.engine import RefreshStats

log = logging.getLogger(__name__)

COMMANDS = ("status", "reload", "gaps", "help")
REFUSED = "Sorry, only Citebot admins can reload the documents. Ask an admin if something looks out of date."
GAPS_REFUSED = "Sorry, only Citebot admins can see what readers could not find."
GAPS_SHOWN = 5  # topics in chat; `citebot gaps` prints them all
GAPS_WINDOW = timedelta(days=30)
BUSY = "A reload is already running. I'll keep serving the current documents; try again when it has finished."


@dataclass(frozen=True)
class Markup:
    """How a platform writes what the admin commands say: the wording is shared, the markup is
    not (Slack mrkdwn and shortcodes; Teams markdown and emoji)."""

    escape: Callable[[str], str] = lambda text: text  # for text that came from elsewhere
    bold: str = "*{}*"
    command: str = "/citebot {}"  # how a user types a subcommand
    warning: str = ":warning:"
    done: str = ":white_check_mark:"
    ask: str = "Mention me in a channel (`@citebot how many days can I work remotely?`) or send me a DM"


def help_text(markup: Markup) -> str:
    command = markup.command.format
    return (f"{markup.bold.format('Citebot')} answers questions from the company's documents and links the "
            "sections it used.\n"
            f"• {markup.ask}. Ask follow-ups in the same thread; no need to mention me again.\n"
            f"• `{command('status')}`: index version, documents, chunks, last reload\n"
            f"• `{command('reload')}`: re-read the documents after they changed (admins only)\n"
            f"• `{command('gaps')}`: what readers asked and could not find, last 30 days (admins only)\n"
            f"• `{command('help')}`: this message")


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
    def __init__(self, settings: Settings, engine, shared: SharedState, markup: Markup = Markup()):
        self.settings, self.engine, self.markup, self.shared = settings, engine, markup, shared
        # One reload at a time across the process's platforms, every replica and the index job.
        self._reloading = shared.reload_lock

    def is_listed(self, user_id: str) -> bool:
        return user_id in self.settings.admin_user_ids

    def status(self) -> str:
        meta = self.engine.index_status()
        if meta:
            index = f"index version {meta['version']}, {meta['documents']} documents, {meta['chunks']} chunks"
        else:
            index = f"no index yet (an admin can run `{self.markup.command.format('reload')}`)"
        stats = self.engine.last_refresh
        last = f"{_when(stats.finished_at)}: {describe(stats)}" if stats else "not since this process started"
        sources = "".join(f"\n• Source {self.markup.escape(line)}" for line in status_lines(self.engine))
        return (f"{self.markup.bold.format('Citebot ' + _app_version())}\n• {index}\n• Last reload: {last}"
                f"\n• Shared state: {self.markup.escape(self.shared.describe())}{sources}")

    def help(self) -> str:
        return help_text(self.markup)

    def gaps(self, user_id: str, allowed: bool) -> str:
        """The most asked topics the documents could not answer (groups questions with the
        model, so it runs after the platform acknowledged the command)."""
        if not allowed:
            return GAPS_REFUSED
        log.info("gap report requested by %s", user_id)
        found = topics(gap_log(self.settings, self.shared).read(GAPS_WINDOW), self.engine.embed)
        title = self.markup.bold.format("What readers could not find (last 30 days)")
        return f"{title}\n{self.markup.escape(report_text(found, limit=GAPS_SHOWN, bold=self.markup.bold))}"

    def reload(self, user_id: str, allowed: bool, respond: Callable[[str], object]) -> None:
        """Runs after the platform acknowledged the command; every message goes to the admin
        alone through `respond`. `allowed` is the platform's verdict on `user_id`."""
        if not allowed:
            respond(REFUSED)
            return

        def started() -> None:
            respond("Reloading the documents… the current index keeps answering meanwhile.")
            log.info("reload requested by %s", user_id)

        try:
            report = self._reloading.run(self.engine.sync, started)  # the sources (CITEBOT_SOURCES), then the index
            if report is not None and report.refresh_error:
                raise RefreshError(report.refresh_error)
        except RefreshInProgress:  # a refresh started elsewhere (e.g. at start-up)
            report = None
        except RefreshError as error:
            log.warning("reload by %s failed: %s", user_id, error)
            kept = "" if "keeps serving" in str(error) else " The previous index keeps serving."
            respond(f"{self.markup.warning} Reload failed: {self.markup.escape(str(error))}{kept}")
            return
        except Exception:
            ref = uuid.uuid4().hex[:8]
            log.exception("[%s] reload failed", ref)
            respond(f"{self.markup.warning} Reload failed unexpectedly; the previous index keeps serving. Reference `{ref}`.")
            return
        if report is None:
            respond(BUSY)
            return
        stats = report.refresh
        skipped = "".join(f"\n• {self.markup.escape(note)}" for note in stats.skipped[:5])
        skipped = f"\nNot indexed:{skipped}" if skipped else ""
        failed = "".join(f"\n• {s.name}: {self.markup.escape(s.error)}" for s in report.failed)
        failed = f"\n{self.markup.warning} Sources that failed (their last good documents stay):{failed}" if failed else ""
        respond(f"{self.markup.done} Reloaded: {describe(stats)}.{skipped}{failed}")
