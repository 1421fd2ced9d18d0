"""Authoring slips never publish restricted text (issue: fail closed, finding 2). Each slip the
review found either still hides the text or leaves the document out, and every one is a warning
in `citebot index`'s output and in the reload reply. Through `citebot index` and
`citebot ask --channel` on a corpus of slips, as an admin would meet them."""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main

ROOT = Path(__file__).resolve().parent.parent
SALARY = "251,000 EUR"  # each restricted text below quotes its own canary
ACCESS = "groups:\n  people-ops:\n    slack_users: [U0HR]\nchannels:\n  C0HRTEAM: {groups: [people-ops]}\n"


def page(title: str, front: str, body: str) -> str:
    return f"---\ntitle: {title}\n{front}---\n# {title}\n\n{body}\n"


SLIPS = {
    # the internal marker written every way a writer writes it
    "compact.md": page("Compact marker", "", "## Office plants\n\nWater the office plants on Mondays.\n\n"
                       "## Band CANARYCOMPACT <!--internal-->\n\nThe CANARYCOMPACT band tops out at 251,000 EUR."),
    "upper.md": page("Upper marker", "", "## Desk booking\n\nBook desks in the app.\n\n"
                     "## Band CANARYUPPER <!-- INTERNAL -->\n\nThe CANARYUPPER band tops out at 251,000 EUR."),
    "spaced.md": page("Spaced marker", "", "## Lockers\n\nLockers are on floor 2.\n\n"
                      "## Band CANARYSPACED <!--  internal  -->\n\nThe CANARYSPACED band tops out at 251,000 EUR."),
    "html-heading.md": page("HTML heading", "", "## Parking\n\nParking is free.\n\n"
                            "<h2>Band CANARYHTMLHEAD <!-- internal --></h2>\n\nThe CANARYHTMLHEAD band tops out at 251,000 EUR."),
    "admonition.md": page("Admonition", "", "## Coffee\n\nCoffee is free.\n\n"
                          '!!! note "Band CANARYADMON <!-- internal -->"\n    The CANARYADMON band tops out at 251,000 EUR.\n'),
    "page.html": ("<html><head><title>HTML page</title></head><body><h1>HTML page</h1><h2>Bikes</h2><p>Bikes go in the "
                  "basement.</p><h2>Band CANARYHTMLPAGE <!-- Internal --></h2><p>The CANARYHTMLPAGE band tops out at "
                  "251,000 EUR.</p></body></html>"),
    "stray.md": page("Stray marker", "", "## Band CANARYSTRAY\n\n<!-- internal -->\nThe CANARYSTRAY band tops out at 251,000 EUR."),
    # audiences that cannot be read
    "no-value.md": page("No value", "audience:\n", "## Band CANARYNOVALUE\n\nThe CANARYNOVALUE band tops out at 251,000 EUR."),
    "empty-list.md": page("Empty list", "audience: []\n", "## Band CANARYEMPTY\n\nThe CANARYEMPTY band tops out at 251,000 EUR."),
    "audiences.md": page("Plural key", "audiences: [people-ops]\n", "## Band CANARYPLURAL\n\nThe CANARYPLURAL band tops out at 251,000 EUR."),
    "capital.md": page("Capital key", "Audience: people-ops\n", "## Band CANARYCAPITAL\n\nThe CANARYCAPITAL band tops out at 251,000 EUR."),
    "groups.md": page("Groups key", "groups: [people-ops]\n", "## Band CANARYGROUPS\n\nThe CANARYGROUPS band tops out at 251,000 EUR."),
    # a sidecar beside a markdown file is read
    "sidecar.md": page("Sidecar", "", "## Band CANARYSIDECAR\n\nThe CANARYSIDECAR band tops out at 251,000 EUR."),
    "sidecar.md.yml": "audience: people-ops\n",
    # a near miss of a key that is not about access: indexed, with a warning
    "titel.md": "---\ntitel: Lunch\n---\n# Lunch\n\n## Lunch hours\n\nLunch is served from noon to 2 pm.\n",
    # a restricted folder
    "people-ops/.citebot.yml": "audience: [people-ops]\n",
    "people-ops/bands.md": page("Folder bands", "", "## Band CANARYFOLDER\n\nThe CANARYFOLDER band tops out at 199,000 EUR."),
}
CANARIES = ["CANARYCOMPACT", "CANARYUPPER", "CANARYSPACED", "CANARYHTMLHEAD", "CANARYADMON", "CANARYHTMLPAGE",
            "CANARYSTRAY", "CANARYNOVALUE", "CANARYEMPTY", "CANARYPLURAL", "CANARYCAPITAL", "CANARYGROUPS",
            "CANARYSIDECAR"]  # CANARYFOLDER: public with a warning unless CITEBOT_STRICT_AUDIENCE


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("slips")
    for name, text in SLIPS.items():
        (root / "kb" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "kb" / name).write_text(text, encoding="utf-8")
    (root / "access.yml").write_text(ACCESS)
    return root


def _env(root: Path, strict: bool) -> dict:
    return {"CITEBOT_CORPUS": str(root / "kb"), "CITEBOT_DB": str(root / ("strict" if strict else "db")),
            "CITEBOT_ACCESS": str(root / "access.yml"), "CITEBOT_STRICT_AUDIENCE": "1" if strict else "0"}


def citebot(root: Path, *args: str, strict: bool = False) -> subprocess.CompletedProcess:
    """`citebot index` as an admin runs it: its own process, its warnings on its own output."""
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **_env(root, strict), "PYTHONPATH": str(ROOT)})


def ask(root: Path, *args: str, strict: bool = False) -> str:
    """`citebot ask …`'s output (in this process: the model loads once for the module)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in _env(root, strict).items():
            patch.setenv(name, value)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["ask", *args]) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def indexed(corpus) -> str:
    done = citebot(corpus, "index")
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_no_slip_reaches_the_index_for_everyone(corpus, indexed):
    shown = ask(corpus, "--channel", "C0GENERAL", "--json", "What does each band top out at? " + " ".join(CANARIES))
    for canary in CANARIES:
        assert canary not in shown, (canary, shown[:600])
    assert SALARY not in shown


def test_every_slip_is_a_warning_in_citebot_index(indexed):
    for name, words in [("stray.md", "outside a heading"), ("no-value.md", "audience has no value"),
                        ("empty-list.md", "audience is empty"), ("audiences.md", "`audiences`"),
                        ("capital.md", "`Audience`"), ("groups.md", "`groups`"), ("titel.md", "did you mean `title`"),
                        ("people-ops/bands.md", "CITEBOT_STRICT_AUDIENCE")]:
        lines = [line for line in indexed.splitlines() if name in line]
        assert lines and words in " ".join(lines), (name, indexed[-3000:])


def test_the_rest_of_a_document_with_an_internal_section_is_still_answered(corpus, indexed):
    assert "Mondays" in ask(corpus, "When should I water the office plants?")


def test_a_sidecar_beside_markdown_restricts_it(corpus, indexed):
    question = "What does the CANARYSIDECAR band top out at?"
    assert "CANARYSIDECAR" not in ask(corpus, "--channel", "C0GENERAL", question)
    allowed = ask(corpus, "--channel", "C0HRTEAM", question)
    assert "CANARYSIDECAR" in allowed and SALARY in allowed, allowed


def test_strict_audience_makes_a_restricted_folder_inherit(corpus, indexed):
    done = citebot(corpus, "index", strict=True)
    assert done.returncode == 0 and "CITEBOT_STRICT_AUDIENCE" not in done.stdout + done.stderr
    question = "What does the CANARYFOLDER band top out at?"
    assert "CANARYFOLDER" not in ask(corpus, "--channel", "C0GENERAL", question, strict=True)
    allowed = ask(corpus, "--channel", "C0HRTEAM", question, strict=True)
    assert "CANARYFOLDER" in allowed and "199,000 EUR" in allowed, allowed

