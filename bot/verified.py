"""Verified answers: an expert's reply, saved by someone allowed to vouch for it, becomes a
document of the corpus (CITEBOT_VERIFIED_DIR, default `<corpus>/verified`) that Citebot cites
like any other. Its front matter says who answered and when, when it is due for review, and who
may read it (the audience of the place it was asked in, so a restricted channel's answer stays
restricted). Until `review_by` an answer citing it carries "Verified by <expert> on <date>";
after that it loses the mark and `citebot gaps` lists it as due for review.

Only the fields the index stores (title, url, effective_date, authority, audience, source_id)
reach a chunk; `verified_by`, `verified_at` and `review_by` are read back from the file here."""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Callable, Iterable

import yaml

from rag_graph.config import Settings, SettingsError

SOURCE_PREFIX = "verified-"
# A conflict is won by current documents, then authority, then the newer date (the graph's rule).
# 3 is the handbook's own level: a verified answer beats older handbook pages and anything of less
# authority, while a handbook page written after it still wins.
AUTHORITY = 3
MAX_SLUG = 60


@dataclass(frozen=True)
class Verified:
    source_id: str
    question: str
    verified_by: str
    verified_at: date
    review_by: date
    audience: tuple[str, ...]
    url: str
    path: Path

    def current(self, today: date) -> bool:
        return today <= self.review_by

    @property
    def mark(self) -> str:
        return f"Verified by {self.verified_by} on {self.verified_at.isoformat()}"


def folder_of(settings: Settings) -> Path:
    """Where verified answers go; it must lie inside the corpus, or they would never be indexed."""
    corpus = Path(settings.corpus)
    folder = Path(settings.verified_dir) if settings.verified_dir else corpus / "verified"
    try:
        folder.resolve().relative_to(corpus.resolve())
    except ValueError:
        raise SettingsError(f"CITEBOT_VERIFIED_DIR must be a folder inside CITEBOT_CORPUS ({corpus}), "
                            f"got {settings.verified_dir}") from None
    return folder


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:MAX_SLUG].strip("-") or "answer"


def _front_matter(raw: str) -> dict:
    if not raw.startswith("---\n"):
        return {}
    end = raw.find("\n---", 4)
    try:
        meta = yaml.safe_load(raw[4:end]) if end > 0 else None
    except yaml.YAMLError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _day(value) -> date | None:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        return None


class VerifiedAnswers:
    def __init__(self, settings: Settings, today: Callable[[], date] = date.today):
        self.folder = folder_of(settings)
        self.days = settings.verified_days
        self.today = today

    def save(self, question: str, answer: str, expert: str, saved_by: str, audience: Iterable[str],
             permalink: str) -> Verified:
        """Writes the document (whole, then swapped in: the indexer never reads half a file)."""
        today = self.today()
        question = " ".join(question.split())
        digest = hashlib.sha1(f"{question}|{answer}|{today}".encode()).hexdigest()[:8]
        source_id = f"{SOURCE_PREFIX}{_slug(question)}-{digest}"
        meta = {"source_id": source_id, "title": question, "url": permalink or "",
                "effective_date": today.isoformat(), "authority": AUTHORITY,
                "verified_by": expert, "verified_at": today.isoformat(),
                "review_by": (today + timedelta(days=self.days)).isoformat(), "saved_by": saved_by}
        audience = sorted({a.strip().lower() for a in audience if a.strip()})
        if audience:
            meta["audience"] = audience  # none: the place sees only documents for everyone
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{source_id}.md"
        scratch = path.with_name("." + path.name + ".tmp")  # hidden: never indexed
        scratch.write_text("---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n\n"
                           + answer.strip() + "\n", encoding="utf-8")
        os.replace(scratch, path)
        return self._read(path)

    def _read(self, path: Path) -> Verified | None:
        try:
            meta = _front_matter(path.read_text(encoding="utf-8"))
        except OSError:
            return None
        at, review = _day(meta.get("verified_at")), _day(meta.get("review_by"))
        if not (meta.get("source_id") and meta.get("verified_by") and at and review):
            return None  # not one of ours, or damaged: it never carries the mark
        audience = meta.get("audience") or []
        return Verified(str(meta["source_id"]), str(meta.get("title") or ""), str(meta["verified_by"]), at, review,
                        tuple([audience] if isinstance(audience, str) else audience), str(meta.get("url") or ""), path)

    def all(self) -> list[Verified]:
        if not self.folder.is_dir():
            return []
        return [v for path in sorted(self.folder.glob("*.md")) if (v := self._read(path))]

    def marks(self, citations: list[dict]) -> list[str]:
        """"Verified by … on …" for each cited verified answer still within its review date."""
        cited = {c.get("source_id") for c in citations if str(c.get("source_id", "")).startswith(SOURCE_PREFIX)}
        if not cited:
            return []
        today = self.today()
        return [v.mark for v in self.all() if v.source_id in cited and v.current(today)]

    def due(self) -> list[Verified]:
        """Verified answers past their review date, the longest overdue first."""
        today = self.today()
        return sorted((v for v in self.all() if not v.current(today)), key=lambda v: v.review_by)


def due_text(due: list[Verified]) -> str:
    """The `citebot gaps` lines for verified answers due for review."""
    if not due:
        return ""
    lines = [f"{len(due)} verified answer(s) due for review (they no longer carry their mark):"]
    lines += [f"  - {v.question} (verified by {v.verified_by} on {v.verified_at}, review by {v.review_by}; "
              f"{v.path.name})" for v in due]
    return "\n".join(lines)
