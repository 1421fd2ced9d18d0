"""A question set for `citebot eval`: one JSON object per line (question, keywords, category,
and optionally history, answerable, reference_answer, split), read into Cases; a line that
cannot be used is one QuestionSetError naming the file and line."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

SPLITS = ("dev", "test")


class QuestionSetError(ValueError):
    """The question set cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Case:
    question: str
    keywords: list[str]
    category: str
    history: list[dict] = field(default_factory=list)
    answerable: bool = True
    reference_answer: str | None = None
    split: str | None = None


def parse_case(line: str, where: str) -> Case:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise QuestionSetError(f"{where}: not valid JSON ({error.msg})") from None
    if not isinstance(row, dict):
        raise QuestionSetError(f"{where}: expected a JSON object, got {type(row).__name__}")
    missing = [name for name in ("question", "keywords", "category") if name not in row]
    if missing:
        raise QuestionSetError(f"{where}: missing field(s) {', '.join(missing)}")
    if not isinstance(row["question"], str) or not row["question"].strip():
        raise QuestionSetError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(row["keywords"], list) or not all(isinstance(k, str) and k.strip() for k in row["keywords"]):
        raise QuestionSetError(f"{where}: 'keywords' must be a list of non-empty strings")
    if not isinstance(row["category"], str) or not row["category"].strip():
        raise QuestionSetError(f"{where}: 'category' must be a non-empty string")
    answerable = row.get("answerable", True)
    if not isinstance(answerable, bool):
        raise QuestionSetError(f"{where}: 'answerable' must be true or false")
    history = row.get("history", [])
    if not isinstance(history, list) or not all(
            isinstance(turn, dict) and turn.get("role") in ("user", "assistant") and isinstance(turn.get("content"), str)
            for turn in history):
        raise QuestionSetError(f"{where}: 'history' must be a list of {{role: user|assistant, content: str}} turns")
    if answerable and not row["keywords"]:
        raise QuestionSetError(f"{where}: an answerable question needs at least one keyword")
    reference = row.get("reference_answer")
    if reference is not None and not isinstance(reference, str):
        raise QuestionSetError(f"{where}: 'reference_answer' must be a string")
    split = row.get("split")
    if split is not None and split not in SPLITS:
        raise QuestionSetError(f"{where}: 'split' must be one of {', '.join(SPLITS)}")
    return Case(question=row["question"], keywords=row["keywords"], category=row["category"],
                history=history, answerable=answerable, reference_answer=reference, split=split)


def load_cases(path: str | Path) -> list[Case]:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise QuestionSetError(f"cannot read tests file {path}: {error.strerror}") from None
    cases = [parse_case(line, f"{path}:{number}") for number, line in enumerate(lines, 1) if line.strip()]
    if not cases:
        raise QuestionSetError(f"{path}: no questions")
    return cases


def select_split(cases: list[Case], split: str) -> list[Case]:
    """The questions of one half ("dev" or "test"), or every question ("all")."""
    return cases if split == "all" else [case for case in cases if case.split == split]
