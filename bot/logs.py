"""How the CLI and the server log: readable lines by default, one JSON object a line with
CITEBOT_LOG_FORMAT=json (for a log collector): time, level, logger, message, and the traceback
of an exception."""
from __future__ import annotations

import json
import logging
import os
from datetime import datetime, timezone

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# LanceDB's Rust core logs to stderr on its own ("No existing dataset at …" when a table is first
# created): only its errors are worth a line. Two copies of it, two variables, read when LanceDB
# is imported, so set on importing this module.
os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCEDB_LOG", "error")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
                 "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure(verbose: bool = False, log_format: str = "text") -> None:
    """Installs Citebot's own handler on the root logger, replacing the one an earlier call
    installed. A handler that someone else put there (a program embedding the CLI, a test that
    reads the records) stays, and so does the level they chose: their logging is theirs."""
    root = logging.getLogger()
    for ours in [h for h in root.handlers if getattr(h, "citebot", False)]:
        root.removeHandler(ours)
    if root.handlers:
        return
    handler = logging.StreamHandler()
    handler.citebot = True
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
