"""The access file as it is now. Grants follow the file: `reload` (the slash command, the Teams
command) re-reads it, and so does the first question after the file changes on disk (its
modification time, size or inode). A file that fails validation is refused with its error: the
grants loaded before keep serving, the admin is told (the reload reply, `status`), and the error
is logged once. One holder per file per process, so Slack and Teams always grant alike."""
from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from pathlib import Path

from bot.access import Access, AccessError

log = logging.getLogger(__name__)


class AccessFile:
    def __init__(self, path: Path | str | None):
        """Raises AccessError when the file cannot be used at start: nothing to fall back on."""
        self.path = Path(path) if path else None
        self.access = Access()
        self.loaded_at: float | None = None  # epoch seconds
        self.digest = ""  # sha256 of the bytes the grants came from
        self.problem: str | None = None  # why the file on disk is not the one serving
        self._stamp: tuple | None = None
        self._lock = threading.Lock()
        self.reload()

    def reload(self) -> Access:
        """Re-read and validate the file now; on AccessError the current grants stay."""
        with self._lock:
            return self._load(self._stamp_now())

    def current(self) -> Access:
        """The grants to use for a question: the file's, re-read when it changed since."""
        if self.path is None:
            return self.access
        stamp = self._stamp_now()
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    try:
                        self._load(stamp)
                        log.warning("%s changed on disk: access rules reloaded", self.path)
                    except AccessError as error:
                        self._stamp = stamp  # said once per change, not once per question
                        log.error("%s; the access rules loaded before keep serving", error)
        return self.access

    def __getattr__(self, name: str):
        """Everything Access answers (for_channel, for_user, place, channels, …), from the current file."""
        if name.startswith("_") or name in ("path", "access"):
            raise AttributeError(name)
        return getattr(self.current(), name)

    def describe(self) -> str:
        """One line for an admin's `status`."""
        if self.path is None:
            return "no access file (CITEBOT_ACCESS unset): every place sees the documents for everyone"
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.loaded_at or 0))
        line = f"access file {self.path.name} loaded {when}, sha256 {self.digest[:12]}"
        return line + (f"; the file on disk was refused ({self.problem})" if self.problem else "")

    def _stamp_now(self) -> tuple | None:
        try:
            status = os.stat(self.path) if self.path else None
        except OSError:
            return None
        return (status.st_mtime_ns, status.st_size, status.st_ino) if status else None

    def _load(self, stamp: tuple | None) -> Access:
        if self.path is None:
            return self.access
        try:
            data = self.path.read_bytes()
            access = Access.parse(data.decode("utf-8"), self.path)
        except OSError as error:
            self.problem = f"cannot read {self.path} ({error.strerror or error})"
            raise AccessError(f"CITEBOT_ACCESS: {self.problem}") from None
        except UnicodeDecodeError:
            self.problem = f"{self.path} is not UTF-8 text"
            raise AccessError(f"CITEBOT_ACCESS: {self.problem}") from None
        except AccessError as error:
            self.problem = str(error).removeprefix("CITEBOT_ACCESS: ")
            raise
        self.access, self.loaded_at, self.problem = access, time.time(), None
        self.digest, self._stamp = hashlib.sha256(data).hexdigest(), stamp
        return access


_files: dict[Path | None, AccessFile] = {}
_files_guard = threading.Lock()


def access_file(path: Path | str | None) -> AccessFile:
    """The process's holder of the access file at `path` (created, and validated, on first use)."""
    key = Path(path).resolve() if path else None
    with _files_guard:
        if key not in _files:
            _files[key] = AccessFile(path)
        return _files[key]
