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

from bot.access import AccessError
from bot.access_file import access_file
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
WARNINGS_SHOWN = 20  # in chat; `citebot index` prints every one
BUSY = "A reload is already running. I'll keep serving the current documents; try again when it has finished."


@dataclass(frozen=True)
class Markup:
    """How a platform writes what the admin commands say: the wording is shared, the markup is
    not (Slack mrkdwn and shortcodes; Teams markdown and emoji)."""

    escape: Callable[[str], str] = lambda text: text  # for text that came from elsewhere
    # For what readers typed, shown inside our own markup (the gap report): no markup of theirs,
    # such as a Teams markdown link dressed as a message from Citebot, may take effect.
    user_text: Callable[[str], str] | None = None
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


_warned = []


def _deprecated() -> None:
    if not _warned:
        _warned.append(True)
        log.warning("ADMIN_USER_IDS is deprecated: list Slack ids in SLACK_ADMIN_IDS and Teams (Entra ID "
                    "object) ids in TEAMS_ADMIN_IDS, so an id of one platform is never taken on the other")


def is_private(record: dict) -> bool:
    """A gap asked in a Slack DM (channel D…) or a Teams personal chat (conversation a:…)."""
    return str(record.get("channel") or "").startswith(("D", "a:"))


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
    def __init__(self, settings: Settings, engine, shared: SharedState, markup: Markup = Markup(),
                 platform: str = "slack"):
        self.settings, self.engine, self.markup, self.shared = settings, engine, markup, shared
        self.platform = platform
        if settings.admin_user_ids:
            _deprecated()
        # One reload at a time across the process's platforms, every replica and the index job.
        self._reloading = shared.reload_lock
        self.access = access_file(settings.access_path)  # the grants every platform of the process uses

    def is_listed(self, user_id: str | None) -> bool:
        """Listed for this platform (SLACK_ADMIN_IDS, TEAMS_ADMIN_IDS), or in ADMIN_USER_IDS."""
        return bool(user_id) and user_id in self.settings.admin_ids(self.platform)

    def status(self, user_id: str | None = None, scope=None) -> str:
        """Admins see the whole index and the access file; anyone else counts only the documents
        the place they ask in (`scope`) may read: a count can betray a restricted document."""
        admin = self.is_listed(user_id)
        meta = self.engine.index_status()
        if meta and admin:
            index = f"index version {meta['version']}, {meta['documents']} documents, {meta['chunks']} chunks"
        elif meta:
            index = f"index version {meta['version']}, {self.engine.visible(scope)[0]} documents you can ask about here"
        else:
            index = f"no index yet (an admin can run `{self.markup.command.format('reload')}`)"
        stats = self.engine.last_refresh
        last = (("not since this process started" if not stats else
                 f"{_when(stats.finished_at)}: {describe(stats)}" if admin else _when(stats.finished_at)))
        access = f"\n• Access: {self.markup.escape(self.access.describe())}" if admin else ""
        sources = "".join(f"\n• Source {self.markup.escape(line)}" for line in status_lines(self.engine)) if admin else ""
        writer = self.engine.writer_status() if admin else None  # the chat model and its circuit breaker
        writer = f"\n• Answer writer: {self.markup.escape(writer)}" if writer else ""
        ranking = f"\n• Ranking: {self.markup.escape(self.engine.ranking_status())}" if admin else ""
        return (f"{self.markup.bold.format('Citebot ' + _app_version())}\n• {index}\n• Last reload: {last}"
                f"\n• Shared state: {self.markup.escape(self.shared.describe())}{sources}{access}{writer}{ranking}")

    def _warnings(self, notes: list[str]) -> str:
        """Every warning of the reload (files left out, front matter slips), so an authoring slip
        is seen by the admin who published it; past WARNINGS_SHOWN, where to read the rest."""
        shown = "".join(f"\n• {self.markup.escape(note)}" for note in notes[:WARNINGS_SHOWN])
        more = (f"\n• … and {len(notes) - WARNINGS_SHOWN} more: `citebot index` prints them all"
                if len(notes) > WARNINGS_SHOWN else "")
        return f"\nWarnings ({len(notes)}):{shown}{more}" if notes else ""

    def help(self) -> str:
        return help_text(self.markup)

    def gaps(self, user_id: str, allowed: bool) -> str:
        """The most asked topics the documents could not answer (groups questions with the
        model, so it runs after the platform acknowledged the command)."""
        if not allowed:
            return GAPS_REFUSED
        log.info("gap report requested by %s", user_id)
        records = gap_log(self.settings, self.shared).read(GAPS_WINDOW)
        if not self.settings.gaps_show_dms:  # what someone asked in private stays there
            records = [r for r in records if not is_private(r)]
        found = topics(records, self.engine.embed)
        # The nearest documents are named only when the admin may read them.
        shown = self.engine.visible(self.access.for_user(user_id), [d for t in found for d in t["nearest_documents"]])[1]
        found = [{**t, "nearest_documents": [d for d in t["nearest_documents"] if d in shown]} for t in found]
        title = self.markup.bold.format("What readers could not find (last 30 days)")
        inert = self.markup.user_text or self.markup.escape
        found = [{**topic, "topic": inert(topic["topic"]), "examples": [inert(e) for e in topic["examples"]],
                  "comments": [inert(c) for c in topic["comments"]],
                  "knowledge_gap": inert(topic["knowledge_gap"]) if topic["knowledge_gap"] else None,
                  "nearest_documents": [inert(d) for d in topic["nearest_documents"]]} for topic in found]
        return f"{title}\n{report_text(found, limit=GAPS_SHOWN, bold=self.markup.bold)}"

    def reload(self, user_id: str, allowed: bool, respond: Callable[[str], object]) -> None:
        """Runs after the platform acknowledged the command; every message goes to the admin
        alone through `respond`. `allowed` is the platform's verdict on `user_id`."""
        if not allowed:
            respond(REFUSED)
            return
        try:  # the access file first: an invalid one refuses the whole reload
            self.access.reload()
        except AccessError as error:
            log.warning("reload by %s refused: %s", user_id, error)
            respond(f"{self.markup.warning} Reload refused: {self.markup.escape(str(error))}. "
                    "The access rules and documents loaded before keep serving; fix the file and reload again.")
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
        failed = "".join(f"\n• {s.name}: {self.markup.escape(s.error)}" for s in report.failed)
        failed = f"\n{self.markup.warning} Sources that failed (their last good documents stay):{failed}" if failed else ""
        respond(f"{self.markup.done} Reloaded: {describe(stats)}; {self.markup.escape(self.access.describe())}."
                + self._warnings(stats.skipped) + failed)
