"""What the nodes read of the retriever: its rows, checked, and its vocabulary and gazetteer,
which a question can do without."""
from __future__ import annotations

import logging
import math

from langgraph.runtime import Runtime

from ..retrieval.entities import Gazetteer
from .deps import Deps

log = logging.getLogger(__name__)

REQUIRED_FIELDS = ("chunk_id", "source_id", "title", "text", "body")
NUMERIC_FIELDS = ("chunk_index", "authority")  # optional, but numbers when present


def well_formed(row) -> bool:
    """Text fields are non-empty strings and scores are numbers: ranking does arithmetic on them."""
    return (isinstance(row, dict)
            and all(isinstance(row.get(name), str) and row.get(name) for name in REQUIRED_FIELDS)
            and _is_number(row.get("similarity"))
            and all(row.get(name) is None or _is_number(row[name]) for name in NUMERIC_FIELDS))


def _is_number(value) -> bool:
    # NaN compares false with everything, so a NaN score would slip past every threshold.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_outdated(chunk: dict) -> bool:
    return chunk.get("status", "current") != "current" or bool(chunk.get("superseded_by"))


def text_key(chunk: dict) -> str:
    """What a copy of a chunk on another page shares with it: its body, whitespace aside."""
    return " ".join(chunk["body"].split())


def corpus_vocabulary(runtime: Runtime[Deps]) -> dict[str, int]:
    try:
        return runtime.context.retriever.vocabulary()[0]
    except Exception:  # no index yet: nothing to correct against, and prepare_corpus_index says so
        log.debug("no vocabulary; the question is searched as typed", exc_info=True)
        return {}


def corpus_gazetteer(runtime: Runtime[Deps]) -> Gazetteer | None:
    try:
        return runtime.context.retriever.entities()
    except Exception:  # no index yet, or a retriever without one: follow-ups fall back to words
        log.debug("no gazetteer; questions are resolved from their words alone", exc_info=True)
        return None
