"""What the admin is told about the sources (CITEBOT_SOURCES) and how `citebot serve` keeps them
in sync: the sync report, the `status` lines, the periodic sync (CITEBOT_SYNC_MINUTES)."""
from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone

from rag_graph.config import Settings
from rag_graph.errors import RefreshError

from bot.access import Access
from bot.shared import SharedState

log = logging.getLogger(__name__)


def _when(epoch: float | None) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if epoch else "never"


def report_lines(report: SyncReport, access: Access) -> list[str]:
    """One line per source, then the documents nobody may read (their source groups are mapped by
    no group of the access file), then the index refresh."""
    lines = []
    for source in report.sources:
        counts = (f"{source.documents} documents ({source.added} added, {source.changed} changed, "
                  f"{source.removed} removed) in {source.seconds:.1f} s")
        lines.append(f"{source.name} ({source.type}): " + (f"FAILED, kept {source.documents} documents: {source.error}"
                                                          if source.error else counts))
        lines += [f"  note: {note}" for note in source.notes[:5]]
        for path, groups in sorted(source.restricted.items()):
            if len(access.unmapped(groups)) == len(groups):
                lines.append(f"  visible to nobody: {source.name}/{path} (limited to {', '.join(groups)}, "
                             "which no group of CITEBOT_ACCESS maps in source_groups)")
    if report.refresh is not None:
        stats = report.refresh
        lines.append(f"index: {stats.documents} documents, {stats.chunks} chunks, {stats.embedded} embedded, "
                     f"{stats.deleted} deleted (version {stats.version})")
    if report.refresh_error:
        lines.append(f"index: not refreshed: {report.refresh_error}")
    return lines


def status_lines(engine) -> list[str]:
    """`status`: each source's last sync, documents and last error."""
    return [f"{s['name']} ({s['type']}): last sync {_when(s['last_sync'])}, {s['documents']} documents"
            + (f", last error: {s['error']}" if s["error"] else "")
            + (f" (last good sync {_when(s['last_success'])})" if s["error"] and s["last_success"] else "")
            for s in engine.sources_status()]


def sync_locked(engine, shared: SharedState, access: Access) -> list[str] | None:
    """One sync under the reload lock every replica shares; None when another holds it."""
    report = shared.reload_lock.run(engine.sync)
    return None if report is None else report_lines(report, access)


def keep_in_sync(engine, shared: SharedState, settings: Settings, stop: threading.Event | None = None) -> None:
    """Sync every CITEBOT_SYNC_MINUTES (the first one right away) until `stop` is set."""
    stop = stop or threading.Event()
    seconds = settings.sync_minutes * 60
    # Sources synced less than an interval ago (at start-up, or by the process before a restart)
    # are synced again when the interval is up.
    last = min((s["last_sync"] or 0 for s in engine.sources_status()), default=0)
    stop.wait(max(0.0, last + seconds - time.time()))
    while not stop.is_set():
        try:
            lines = sync_locked(engine, shared, Access.load(settings.access_path))
            if lines is None:
                log.info("a reload is running elsewhere; the sources are synced at the next interval")
            else:
                for line in lines:
                    (log.warning if "FAILED" in line or "nobody" in line else log.info)("sync: %s", line)
        except RefreshError as error:
            log.warning("sync: %s", error)
        except Exception:
            log.exception("sync failed; the current index keeps serving")
        stop.wait(seconds)


def start(engine, shared: SharedState, settings: Settings) -> threading.Event | None:
    """The periodic sync thread, when there are sources and an interval."""
    if settings.sources_path is None or settings.sync_minutes <= 0:
        return None
    stop = threading.Event()
    threading.Thread(target=keep_in_sync, args=(engine, shared, settings, stop), daemon=True,
                     name="citebot-sync").start()
    return stop
