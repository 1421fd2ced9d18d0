"""CITEBOT_LOG_FORMAT=json: every line `citebot` logs is one JSON object a collector can read,
and LanceDB's own "No existing dataset" notice no longer reaches the terminal."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_index_logs_json_lines_when_asked(corpus_copy, tmp_path):
    env = {**os.environ, "CITEBOT_LOG_FORMAT": "json", "CITEBOT_CORPUS": str(corpus_copy),
           "CITEBOT_DB": str(tmp_path / "db"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "index"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    # A first build's version number is not 1, and the line says why.
    assert "(serving index version " in done.stdout and "versions count LanceDB's writes" in done.stdout
    records = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    skipped = [r for r in records if "malformed-front-matter.md" in r["message"]]
    assert skipped and skipped[0]["level"] == "WARNING" and skipped[0]["logger"].startswith("rag_graph")
    assert {"time", "level", "logger", "message"} <= set(skipped[0])
    assert "No existing dataset" not in done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("20") and " WARNING " in line]
