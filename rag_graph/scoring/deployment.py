"""A deployment's own chunk ranker. `citebot tune --feedback` fits it on the deployment's 👍/👎
records together with the labeled eval questions and writes it into the state folder
(CITEBOT_STATE_DIR, never the repository) only when it beat the shipped hand weights on held-out
feedback without losing on the public sets. Without the file the flow ranks by the hand
weights (`scoring.late.standing`), exactly as shipped.

The flow looks for the file at every question (one stat; the file itself is read once per
version), so deleting it rolls back at the next question. A file that cannot be used (fitted on
another feature list, damaged) is refused with one log line, and the hand weights serve."""
from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from .features import FEATURES, rows, signals
from .learned import ModelError, Ranker, linear, read

log = logging.getLogger(__name__)

FILE = "ranker.json"  # in the state folder
SHIPPED = "the shipped hand weights"


def path_in(state_dir: str | Path | None) -> Path | None:
    return Path(state_dir) / FILE if state_dir else None


@lru_cache(maxsize=4)
def _load(path: str, stamp: float) -> tuple[Ranker | None, str]:
    try:
        data = read(path)
        model = linear(data, FEATURES, path)
        candidates = data.get("candidates")
        if not isinstance(candidates, int) or candidates < 2:
            raise ModelError(f"{path}: `candidates` must be a whole number of 2 or more")
    except ModelError as error:
        log.warning("the deployment ranker is refused, %s serve: %s", SHIPPED, error)
        return None, f"{SHIPPED} (the deployment ranker was refused: {error})"
    held = data.get("held_out_feedback") or {}
    return (Ranker(model.features, model.mean, model.scale, model.coef, model.intercept, candidates),
            f"the deployment ranker {path}, fitted {data.get('fitted', '?')} on {data.get('feedback_records', '?')} "
            f"feedback records (held-out feedback {held.get('shipped', '?')} -> {held.get('fitted', '?')})")


def serving(path: str | Path | None) -> tuple[Ranker | None, str]:
    """The deployment ranker at `path` (None when there is none or it was refused) and a line
    saying which weights rank the chunks."""
    if path is None:
        return None, SHIPPED
    try:
        stamp = os.stat(path).st_mtime
    except OSError:
        return None, SHIPPED
    return _load(str(path), stamp)


def order(query: str, head: list[dict], vocabulary, embedder, model: Ranker) -> list[dict]:
    """`head` (candidates with their late-interaction scores) as the model orders them."""
    scores = model.scores(rows(signals(query, head, vocabulary, embedder)))
    return [head[i] for i in np.argsort(-scores, kind="stable")]


def rerank(query: str, ranked: list[dict], vocabulary, embedder, path: str | Path | None) -> list[dict]:
    """The ranking with its best `candidates` re-ordered by the deployment ranker, if one serves."""
    model, _ = serving(path)
    if model is None or len(ranked) < 2:
        return ranked
    return order(query, ranked[:model.candidates], vocabulary, embedder, model) + ranked[model.candidates:]
