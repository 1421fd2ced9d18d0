"""The README's other commands, run as a user runs them: `citebot demo` on the bundled corpus,
`citebot eval --baseline` and a short `citebot bench` on a small corpus of our own."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from bot.cli import DEMO_QUESTIONS, main
from conftest import BUNDLED_CORPUS

SMALL = {  # our own three-document corpus: a policy, a benefit and a fact nobody else states
    "leave.md": "# Leave Policy\n\n## Annual Leave\n\nStaff receive 27 days of annual leave each year.\n\n"
                "## Carry Over\n\nUp to 4 unused days carry over to the next year.\n",
    "bikes.md": "# Bike Scheme\n\n## Eligibility\n\nAnyone on a permanent contract may lease a bicycle "
                "through the cycle-to-work scheme.\n",
    "kitchen.md": "# Kitchen\n\n## Cleaning\n\nThe shared fridge is emptied every Friday at 4 pm.\n",
}
QUESTIONS = [
    {"question": "How many days of annual leave do staff get?", "keywords": ["27 days"], "category": "fact"},
    {"question": "When is the shared fridge emptied?", "keywords": ["Friday"], "category": "fact"},
    {"question": "Is there a company helicopter?", "keywords": [], "category": "unanswerable", "answerable": False},
]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    corpus = folder / "corpus"
    corpus.mkdir()
    for name, text in SMALL.items():
        (corpus / name).write_text(text)
    questions = folder / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return corpus, questions


def test_demo_answers_the_first_question_with_a_citation(engine, tmp_path, capsys):
    shutil.copytree(engine.settings.db, tmp_path / "db")  # the demo's refresh then embeds nothing
    assert main(["demo", "--corpus", str(BUNDLED_CORPUS), "--db", str(tmp_path / "db")]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Indexed 20 documents")
    blocks = printed.split("Q: ")[1:]
    assert [block.splitlines()[0] for block in blocks] == DEMO_QUESTIONS
    first = blocks[0]
    assert "up to 3 days a week" in first and "[answered," in first
    assert re.search(r"Sources:\n  - Employee Handbook 2025 › Remote Work <https://\S+#remote-work>", first)
    assert "[insufficient_context," in blocks[1] and "contractors" in blocks[1]  # the follow-up's gap
    assert "Median answer time" in printed


def test_eval_with_baseline_scores_both_pipelines(small, tmp_path, capsys):
    corpus, questions = small
    out = tmp_path / "report.json"
    assert main(["eval", "--tests", str(questions), "--corpus", str(corpus), "--db", str(tmp_path / "db"),
                 "--k", "3", "--out", str(out), "--baseline"]) == 0
    table = capsys.readouterr().out
    assert re.search(r"^baseline\s", table, re.M) and re.search(r"^ours/base\s", table, re.M)
    summary = json.loads(out.read_text())["summary"]
    assert summary["overall"]["answered_rate"] == 1.0 and summary["overall"]["abstention_rate"] == 1.0
    baseline = summary["baseline"]
    assert baseline["index"]["chunks"] >= len(SMALL)  # the baseline built its own fixed-window table
    assert 0 < baseline["overall"]["mrr"] <= 1
    assert summary["vs_baseline"]["mrr"] == pytest.approx(summary["overall"]["mrr"] / baseline["overall"]["mrr"])


def test_bench_short_mode_measures_every_step_but_scale(small, tmp_path, capsys):
    corpus, questions = small
    out = tmp_path / "bench.json"
    assert main(["bench", "--corpus", str(corpus), "--questions", str(questions), "--db", str(tmp_path),
                 "--skip-scale", "--repeat", "1", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    [measured] = results["corpora"]  # the one corpus asked for
    assert measured["indexing"]["chunks"] >= len(SMALL) and results["scale"] == "skipped"
    assert measured["queries"]["questions"] == len(QUESTIONS)
    assert measured["word_batch"]["runs"] == 40 and 0 < measured["word_batch"]["p50_ms"] <= measured["word_batch"]["p95_ms"]
    assert results["serve"]["status"] == "ok" and results["serve"]["peak_rss_mb"] > 0
    assert results["ask"]["status"] == "ok" and len(results["ask"]["runs"]) == 3
    table = capsys.readouterr().out
    assert "skipped (--skip-scale)" in table and "synonym check's 16 words" in table and "serve peak RSS" in table and "citebot ask, start to answer" in table
