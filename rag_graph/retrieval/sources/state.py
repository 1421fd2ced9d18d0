"""Each source's sync state, one JSON file per source beside the mirror: the cursor to fetch from
next time, which mirror file holds which upstream document, and what the last sync did. Written
whole to a temporary file and renamed, so a crash leaves the old state or the new one."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class SourceState:
    cursor: dict = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # upstream key -> path below the source's mirror folder
    restricted: dict[str, list[str]] = field(default_factory=dict)  # path -> source groups it is limited to
    last_sync: float | None = None  # epoch seconds of the last attempt
    last_success: float | None = None
    last_error: str | None = None
    last_counts: dict[str, int] = field(default_factory=dict)  # added, changed, removed
    notes: list[str] = field(default_factory=list)
    config: str = ""  # the source's settings as last synced: a changed setting starts again

    @classmethod
    def load(cls, path: Path) -> "SourceState":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(self), indent=1, ensure_ascii=False), encoding="utf-8")
        os.replace(temporary, path)
