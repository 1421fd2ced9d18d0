"""Amounts, percentages and durations in a text: what two sources on one rule disagree about."""
from __future__ import annotations

import re

_VALUE = re.compile(
    r"(?:[$£€]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:%|percent|days?|weeks?|months?|years?|hours?))",
    re.I)


def values(text: str) -> dict[str, str]:
    """Amounts, percentages and durations (comparison key -> as written): what two sources on
    the same rule disagree about."""
    found = {}
    for value in _VALUE.findall(text):
        written = re.sub(r"\s+", " ", value)
        found.setdefault(written.lower().rstrip("s"), written)
    return found
