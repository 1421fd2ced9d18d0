"""Every question set in eval/ over its corpus, one report each: `python -m rag_graph.tools.eval_all`.

The sets and where their corpora live (the public handbooks sit beside the repository in
`../shared/corpora`; Node.js, npm and undici docs come with Debian's `nodejs` package, the Developer's
Reference with `developers-reference`, the Administrator's Handbook with `debian-handbook`). A set whose corpus is missing on this machine is skipped with
a line saying so. Reports go to `--out`
(one `<set>.json` each) and indexes to `--db` (one table per corpus, reused between runs).
Compare two runs with `python -m rag_graph.tools.compare_reports OLD_DIR NEW_DIR`.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("CITEBOT_SHARED_CORPORA", ROOT.parent / "shared" / "corpora"))
CORPORA = {
    "bundled": ROOT / "corpus",
    "37signals": SHARED / "37signals-handbook",
    "18f": SHARED / "18f-handbook",
    "nodejs": Path("/usr/share/doc/nodejs/contributing"),
    "npm": Path("/usr/lib/node_modules/npm/docs/content"),
    "undici": Path("/usr/lib/node_modules/npm/node_modules/undici/docs/docs"),
    "devref": Path("/usr/share/developers-reference"),
    "admin-handbook": Path("/usr/share/doc/debian-handbook/html/en-US"),
}
SETS = {  # question set -> corpus
    "corpus": "bundled",
    "handbook": "37signals",
    "37signals-threads": "37signals",
    "18f-handbook": "18f",
    "18f-handbook-more": "18f",
    "18f-threads": "18f",
    "18f-threads-more": "18f",
    "37signals-threads-more": "37signals",
    "corpus-threads": "bundled",
    "nodejs-contributing": "nodejs",
    "npm-docs": "npm",
    "undici-docs": "undici",
    "nodejs-threads": "nodejs",
    "npm-threads": "npm",
    "undici-threads": "undici",
}
# Sets kept aside: measured here, never labeled or fitted on (tools.labels, tune and loco read SETS
# only), so they keep saying how the bot does on documents, or questions, nobody tuned it for.
ASIDE = {"debian-devref": "devref", "debian-handbook": "admin-handbook", "npm-docs-aside": "npm"}
# Docs sites read from their HTML pages only, without the pages that are not text of their own.
# The Developer's Reference: not the whole book again as one page, its table of contents, its search
# form (the package also ships it as PDF and its sources as .txt). The Administrator's Handbook
# (one page per section): not index.html, the whole book's table of contents.
NOT_PAGES = {"devref": ("developers-reference.html", "index.html", "search.html"),
             "admin-handbook": ("index.html",)}


def corpus_folder(corpus: str, db: Path) -> Path:
    """The folder a corpus is read from: its place on this machine, but for a docs site installed
    with its other renderings, whose pages (the site as debian.org publishes it) are copied beside
    the indexes, away from the other copies of the same text, the images and style sheets."""
    folder = CORPORA[corpus]
    if corpus not in NOT_PAGES or not folder.is_dir():
        return folder
    pages = db / f"{corpus}-pages"
    pages.mkdir(parents=True, exist_ok=True)
    for page in folder.glob("*.html"):
        if page.name not in NOT_PAGES[corpus]:
            shutil.copy2(page, pages / page.name)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the reports")
    parser.add_argument("--db", default=".citebot/eval-indexes", help="folder for one index per corpus")
    parser.add_argument("--only", nargs="*", help="set names (default: all)")
    args = parser.parse_args(argv)
    out, db = Path(args.out), Path(args.db)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, corpus in {**SETS, **ASIDE}.items():
        if args.only and name not in args.only:
            continue
        if not CORPORA[corpus].is_dir():
            print(f"skipped {name}: no corpus at {CORPORA[corpus]}")
            continue
        folder = corpus_folder(corpus, db)
        command = [sys.executable, "-m", "bot.cli", "eval", "--tests", str(ROOT / "eval" / f"{name}.jsonl"),
                   "--corpus", str(folder), "--db", str(db / corpus), "--out", str(out / f"{name}.json")]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        lines = (done.stdout + done.stderr).strip().splitlines()
        print(f"== {name}: " + ("\n".join(lines[-4:]) if done.returncode else next(
            (line for line in lines if line.startswith("OVERALL")), lines[-1] if lines else "")))
        failed += done.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
