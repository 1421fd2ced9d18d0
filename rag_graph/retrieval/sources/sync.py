"""`citebot sync`: fetch what changed in each source into the mirror, then refresh the index from
the mirror in one atomic step (Index.refresh). A source that fails keeps its last good documents
in the mirror and never stops the others; its error is kept for `status`."""
from __future__ import annotations

import importlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ...config import Settings
from ...errors import RefreshError, RefreshInProgress
from .base import Changes, SourceError, redact
from .mirror import Mirror
from .settings import FolderSource, SourcesError, load_sources
from .state import SourceState

log = logging.getLogger(__name__)

_MODULES = {"folder": "folder", "git": "git", "web": "web", "confluence": "confluence",
            "sharepoint": "sharepoint", "onedrive": "sharepoint", "google_drive": "google_drive"}


@dataclass
class SourceReport:
    name: str
    type: str
    error: str | None = None
    added: int = 0
    changed: int = 0
    removed: int = 0
    documents: int = 0
    restricted: dict[str, list[str]] = field(default_factory=dict)  # mirror path -> source groups
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SyncReport:
    sources: list[SourceReport]
    refresh: object | None = None  # RefreshStats
    refresh_error: str | None = None

    @property
    def failed(self) -> list[SourceReport]:
        return [s for s in self.sources if s.error]

    def as_dict(self) -> dict:
        return {"sources": [s.as_dict() for s in self.sources],
                "refresh": self.refresh.as_dict() if self.refresh else None, "refresh_error": self.refresh_error}


def _state_path(settings: Settings, name: str) -> Path:
    return settings.sync_dir / "state" / f"{name}.json"


def _in_place(settings: Settings) -> bool:
    """Without a sources file the CITEBOT_CORPUS folder is indexed where it is, as it always was."""
    return settings.sources_path is None


def sync(settings: Settings, refresh: Callable[[], object], only: str | None = None,
         sources: list | None = None) -> SyncReport:
    """Fetch every source (or the one named `only`), then refresh the index from the mirror."""
    sources = load_sources(settings) if sources is None else sources
    if only is not None and only not in {s.name for s in sources}:
        raise SourcesError(f"no source named {only!r} in CITEBOT_SOURCES (sources: {', '.join(s.name for s in sources)})")
    reports = []
    if not _in_place(settings):
        reports = [_sync_one(settings, source) for source in sources if only in (None, source.name)]
    report = SyncReport(reports)
    try:
        report.refresh = refresh()  # the index from settings.documents
    except RefreshInProgress:
        raise
    except RefreshError as error:
        report.refresh_error = str(error)
    return report


def sync_folders(settings: Settings) -> None:
    """Copy the local folder sources into the mirror (no network): a refresh then indexes a file
    saved in one of them (a verified answer in CITEBOT_CORPUS) as it would without sources."""
    if not _in_place(settings):
        for source in load_sources(settings):
            if source.type == "folder":
                _sync_one(settings, source)


def _sync_one(settings: Settings, source) -> SourceReport:
    started = time.time()
    report = SourceReport(source.name, source.type)
    path = _state_path(settings, source.name)
    state = SourceState.load(path)
    config = json.dumps(source.model_dump(mode="json"), sort_keys=True)
    # A changed setting (another branch, space or site) fetches everything again; what the new
    # listing lacks is removed, only once that listing succeeded.
    given = state if state.config == config else SourceState(files={})
    state.last_sync = started
    try:
        changes = _fetcher(settings, source).fetch(given)
        _apply(Mirror(settings.sync_dir / "mirror", source.name), state, changes, report,
               full=changes.full or given is not state)
        state.cursor, state.config, state.notes = changes.cursor, config, changes.notes
        state.last_success, state.last_error = started, None
    except Exception as error:  # any failure of one source: it keeps its last good documents
        message = error if isinstance(error, (SourceError, OSError, ValueError)) else f"{type(error).__name__}: {error}"
        state.last_error = report.error = redact(str(message)).splitlines()[0][:300] if str(message) else type(error).__name__
        log.warning("source %s failed, its last good documents stay: %s", source.name, report.error)
    report.seconds = round(time.time() - started, 2)
    report.documents = len(state.files)
    report.restricted = dict(state.restricted)
    report.notes = list(state.notes)
    state.last_counts = {"added": report.added, "changed": report.changed, "removed": report.removed}
    state.save(path)
    return report


def _fetcher(settings: Settings, source):
    module = importlib.import_module(f"{__package__}.{_MODULES[source.type]}")
    return module.Fetcher(source, settings)


def _apply(mirror: Mirror, state: SourceState, changes: Changes, report: SourceReport, full: bool) -> None:
    seen = set(changes.keep)
    for document in changes.upserts:
        seen.add(document.key)
        old = state.files.get(document.key)
        if old and old != document.path:
            mirror.remove(old)
            state.restricted.pop(old, None)
        if mirror.put(document) or old != document.path:
            if old is None:
                report.added += 1
            else:
                report.changed += 1
        state.files[document.key] = document.path
        if document.restricted:
            state.restricted[document.path] = sorted(document.restricted)
        else:
            state.restricted.pop(document.path, None)
    gone = [k for k in changes.deletes if k not in seen]
    if full:
        gone += [k for k in state.files if k not in seen]
    for key in dict.fromkeys(gone):
        relative = state.files.pop(key, None)
        if relative is not None:
            mirror.remove(relative)
            state.restricted.pop(relative, None)
            report.removed += 1


def sources_status(settings: Settings) -> list[dict]:
    """Each source's last sync as `status` shows it: when, documents, last counts, last error."""
    if _in_place(settings):
        return []
    out = []
    for source in load_sources(settings):
        state = SourceState.load(_state_path(settings, source.name))
        out.append({"name": source.name, "type": source.type, "last_sync": state.last_sync,
                    "last_success": state.last_success, "documents": len(state.files),
                    "restricted": len(state.restricted), **state.last_counts, "error": state.last_error})
    return out


__all__ = ["FolderSource", "SourceReport", "SyncReport", "sources_status", "sync"]
