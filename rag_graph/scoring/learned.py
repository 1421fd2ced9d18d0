"""Models fitted by `citebot tune` on the labeled questions of eval/, shipped as JSON beside
this module (coefficients, the feature list, the command that made them, a hash of their
training data and their cross-validated figures; no pickle). Nothing is fitted at question
time: reading a model is one dot product.

A model whose feature list is not the code's (a feature added, renamed or reordered since it
was fitted) would read its coefficients against the wrong columns: loading refuses it."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import SettingsError

MODEL_DIR = Path(__file__).parent
# Evaluation tooling points the flow at another folder of fitted models (one per held-out
# corpus, `citebot tune --exclude`); the bot itself reads the files shipped beside this module.
MODEL_ENV = "CITEBOT_MODEL_DIR"


class ModelError(SettingsError):
    """A model file that cannot be used; the message names the file and what is wrong (the CLI
    prints it as one line, as it does a bad setting)."""


@dataclass(frozen=True)
class Linear:
    """A linear score over named features, standardised as they were at fitting time."""
    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def scores(self, table: list[list[float]]) -> np.ndarray:
        if not table:
            return np.zeros(0)
        return ((np.asarray(table, dtype=float) - self.mean) / self.scale) @ self.coef + self.intercept

    def as_dict(self) -> dict:
        return {"features": list(self.features), "mean": self.mean.round(6).tolist(),
                "scale": self.scale.round(6).tolist(), "coef": self.coef.round(6).tolist(),
                "intercept": round(float(self.intercept), 6)}


@dataclass(frozen=True)
class Ranker(Linear):
    """A chunk ranker: a linear score over `scoring.features.rows`, re-ordering the best
    `candidates` chunks by relevance."""
    candidates: int = 10


def linear(data: dict, expected: tuple[str, ...], where: str = "model", refit: str = "citebot tune") -> Linear:
    """The linear model a file's data holds, if it was fitted on the `expected` features; `refit`
    is the command that fits it again."""
    try:
        features = tuple(data["features"])
        if features != expected:
            raise ModelError(f"{where} was fitted on features {list(features)}, the code computes "
                             f"{list(expected)}: refit it with `{refit}`")
        arrays = [np.asarray(data[name], dtype=float) for name in ("mean", "scale", "coef")]
        if any(a.shape != (len(expected),) for a in arrays) or not all(np.isfinite(a).all() for a in arrays):
            raise ModelError(f"{where}: mean, scale and coef must be {len(expected)} finite numbers each")
        if (arrays[1] <= 0).any():
            raise ModelError(f"{where}: every scale must be positive")
        return Linear(features, *arrays, float(data["intercept"]))
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, ModelError):
            raise
        raise ModelError(f"{where}: not a model file of `citebot tune` ({error!r})") from None


def read(path: str | Path) -> dict:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ModelError(f"cannot read the model file {path}: {error}") from None
    return data if isinstance(data, dict) else {}


def model_file(name: str) -> tuple[str, float]:
    """Where the flow reads the model called `name`, and that file's version (its mtime)."""
    path = Path(os.environ.get(MODEL_ENV) or MODEL_DIR) / name
    try:
        return str(path), path.stat().st_mtime
    except OSError as error:
        raise ModelError(f"cannot read the model file {path}: {error.strerror}") from None
