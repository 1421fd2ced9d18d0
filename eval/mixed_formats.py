"""The same questions asked of the bundled corpus as markdown and as a mixed-format copy.

    python eval/mixed_formats.py [--tests eval/corpus.jsonl] [--corpus corpus] [--keep DIR]

The copy is generated here, into a temporary folder, so no binary of unknown origin is committed:
documents are converted in turn to PDF (fpdf2; headings become bookmarks, as Word and LibreOffice
write them), Word (python-docx heading styles, lists, tables), HTML (heading ids as anchors) and
plain text; the rest stay markdown. Front matter becomes the file's own title and a sidecar
`name.ext.yml`. Prints both evaluations and exits 1 when a retrieval or answer figure of the
converted copy drops more than 0.03 below the markdown one.

The writers (`write_pdf`, `write_docx`, `write_html`) also build the test suite's fixtures.
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
FORMATS = (".pdf", ".docx", ".html", ".txt", ".md")  # the order documents are converted in
COMPARED = ("mrr", "ndcg", "keyword_coverage", "answer_recall", "answered_rate", "abstention_rate")
TOLERANCE = 0.03
PAGE_BREAK = "<!-- pagebreak -->"  # in fixture markdown: start a new page (PDF) / page break (Word)
# fpdf2's built-in fonts are Latin-1; the corpus uses a few typographic characters beyond it.
_LATIN1 = str.maketrans({"—": "-", "–": "-", "’": "'", "‘": "'", "“": '"', "”": '"', "›": ">", "…": "..."})

_markdown = MarkdownIt("commonmark").enable("table")


def _slug(text: str) -> str:
    from rag_graph.retrieval.ingest import slugify
    return slugify(text)


def to_html(markdown: str, title: str = "", ids: bool = True) -> str:
    """A standalone page; each heading gets its GitHub-style slug as id (the anchor markdown has)."""
    tokens = _markdown.parse(markdown)
    if ids:
        for opening, inline in zip(tokens, tokens[1:]):
            if opening.type == "heading_open":
                opening.attrSet("id", _slug(inline.content))
    body = _markdown.renderer.render(tokens, _markdown.options, {})
    return f"<!doctype html>\n<html><head><title>{title}</title></head>\n<body>\n{body}</body></html>\n"


def write_html(markdown: str, path: Path, title: str = "") -> None:
    path.write_text(to_html(markdown, title), encoding="utf-8")


def write_pdf(markdown: str, path: Path, title: str = "", password: str = "") -> None:
    """Headings become bookmarks (fpdf2 writes an outline entry per HTML heading)."""
    from fpdf import FPDF

    pdf = FPDF()
    family = _unicode_font(pdf)
    if family == "helvetica":
        markdown, title = markdown.translate(_LATIN1), title.translate(_LATIN1)
    pdf.set_title(title)
    if password:
        pdf.set_encryption(owner_password=password + "-owner", user_password=password)
    for page in markdown.split(PAGE_BREAK):
        pdf.add_page()
        html = re.sub(r"(?s).*<body>|</body>.*", "", to_html(page, ids=False))
        if family == "helvetica":
            html = html.encode("latin-1", "replace").decode("latin-1")
        pdf.write_html(html, font_family=family)
    pdf.output(str(path))


def _unicode_font(pdf) -> str:
    """DejaVu Sans where the system has it (text as the markdown has it), else fpdf2's Latin-1 Helvetica."""
    folder = Path("/usr/share/fonts/truetype/dejavu")
    files = {"": "DejaVuSans.ttf", "B": "DejaVuSans-Bold.ttf", "I": "DejaVuSans-Oblique.ttf",
             "BI": "DejaVuSans-BoldOblique.ttf"}
    if not all((folder / name).is_file() for name in files.values()):
        return "helvetica"
    for style, name in files.items():
        pdf.add_font("dejavu", style=style, fname=str(folder / name))
    return "dejavu"


def write_scanned_pdf(path: Path) -> None:
    """A page that is only a picture of text, as a scanner makes it: no text layer."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    image = Image.new("L", (600, 300), 255)
    ImageDraw.Draw(image).text((20, 20), "Travel policy: book economy class.", fill=0)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(image, x=10, y=10, w=180)
    pdf.output(str(path))


def write_docx(markdown: str, path: Path, title: str = "") -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = title
    tokens = _markdown.parse(markdown)
    lists: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists.append("List Bullet" if token.type == "bullet_list_open" else "List Number")
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif token.type == "heading_open":
            document.add_heading(_plain(tokens[i + 1]), level=int(token.tag[1]))
            i += 2
        elif token.type == "inline":
            document.add_paragraph(_plain(token), style=lists[-1] if lists else None)
        elif token.type in ("fence", "code_block"):
            document.add_paragraph(token.content.rstrip())
        elif token.type == "html_block" and PAGE_BREAK in token.content:
            document.add_page_break()
        elif token.type == "table_open":
            rows, i = _table_rows(tokens, i)
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for cells, row in zip(rows, table.rows):
                for text, cell in zip(cells, row.cells):
                    cell.text = text
        i += 1
    document.save(str(path))


def _plain(inline) -> str:
    parts = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


def _table_rows(tokens, i: int) -> tuple[list[list[str]], int]:
    rows, row = [], None
    while tokens[i].type != "table_close":
        if tokens[i].type == "tr_open":
            row = []
        elif tokens[i].type == "inline" and row is not None:
            row.append(_plain(tokens[i]))
        elif tokens[i].type == "tr_close":
            rows.append(row)
        i += 1
    return rows, i


def make_mixed_copy(source: Path, target: Path, rotate: int = 0) -> dict[str, int]:
    """Copy `source` to `target`, converting its markdown documents in turn to each format
    (`rotate` shifts which document gets which format)."""
    from rag_graph.retrieval.ingest import split_front_matter

    shutil.copytree(source, target)
    made: dict[str, int] = {}
    documents = sorted(p for p in target.rglob("*.md") if p.name not in ("README.md", "SOURCE.md"))
    for n, path in enumerate(documents):
        suffix = FORMATS[(n + rotate) % len(FORMATS)]
        try:
            meta, body = split_front_matter(path.read_text(encoding="utf-8"))
        except ValueError:
            continue  # the planted broken file stays as it is
        if suffix == ".md":
            made[suffix] = made.get(suffix, 0) + 1
            continue
        meta.setdefault("source_id", path.relative_to(target).with_suffix("").as_posix())
        converted = path.with_suffix(suffix)
        title = str(meta.get("title") or "")
        {".pdf": write_pdf, ".docx": write_docx, ".html": write_html,
         ".txt": lambda text, out, _title: out.write_text(text, encoding="utf-8")}[suffix](body, converted, title)
        converted.with_name(converted.name + ".yml").write_text(
            yaml.safe_dump(meta, allow_unicode=True, sort_keys=False), encoding="utf-8")
        path.unlink()
        made[suffix] = made.get(suffix, 0) + 1
    return made


def _evaluate(corpus: Path, tests: Path, k: int, db: Path) -> dict:
    from rag_graph.config import Settings
    from rag_graph.engine import Engine
    from rag_graph.tools.evaluation import aggregate, evaluate, load_cases

    settings = Settings.from_env(corpus=corpus, db=str(db))
    engine = Engine(settings)
    stats = engine.refresh()
    engine.warm_up()
    cases = load_cases(tests)
    _, scores = evaluate(engine, cases, k)
    # dev = odd lines, test = even lines of the question set (nothing is tuned here; both reported)
    return {"all": aggregate(scores), "dev": aggregate(scores[0::2]), "test": aggregate(scores[1::2]),
            "documents": stats.documents, "chunks": stats.chunks, "formats": stats.formats}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", default=str(ROOT / "eval" / "corpus.jsonl"))
    parser.add_argument("--corpus", default=str(ROOT / "corpus"))
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rotate", type=int, default=0, help="shift which document gets which format")
    parser.add_argument("--keep", help="write the mixed copy here instead of a temporary folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="citebot-mixed-") as scratch:
        mixed = Path(args.keep) if args.keep else Path(scratch) / "mixed"
        if mixed.exists():
            shutil.rmtree(mixed)
        made = make_mixed_copy(Path(args.corpus), mixed, args.rotate)
        print("mixed copy:", ", ".join(f"{n} {suffix}" for suffix, n in made.items()), f"({mixed})")
        results = {name: _evaluate(corpus, Path(args.tests), args.k, Path(scratch) / f"db-{name}")
                   for name, corpus in (("markdown", Path(args.corpus)), ("mixed", mixed))}
    print(f"{'':16}" + "".join(f"{name:>18}" for name in COMPARED))
    worst = 0.0
    for half in ("all", "dev", "test"):
        for name in ("markdown", "mixed"):
            row = results[name][half]
            print(f"{half + ' ' + name:16}" + "".join(f"{row.get(m) if row.get(m) is not None else float('nan'):>18.3f}"
                                                      for m in COMPARED))
        for metric in COMPARED:
            before, after = results["markdown"][half].get(metric), results["mixed"][half].get(metric)
            if before is not None and after is not None:  # every compared figure: higher is better
                worst = max(worst, before - after)
    print(f"files read per format (mixed): {results['mixed']['formats']}")
    print(f"largest drop: {worst:.3f} (allowed {TOLERANCE})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
