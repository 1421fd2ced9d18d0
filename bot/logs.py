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
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[handler], force=True)
