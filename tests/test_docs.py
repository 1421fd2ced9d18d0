"""The docs point at what is in the repository: every rule's test exists under the name the docs
give, and no document points outside the repository."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
LINK = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")}


def links() -> list[tuple[str, str, str]]:
    return [(doc.name, file, name) for doc in DOCS for file, name in LINK.findall(doc.read_text())]


def test_the_rules_page_links_its_rules_to_tests():
    assert sum(1 for doc, _, _ in links() if doc == "how-answers-are-made.md") >= 100


@pytest.mark.parametrize("doc, file, name", links())
def test_every_test_a_document_names_exists(doc, file, name):
    path = ROOT / file
    assert path.exists(), f"{doc} names {file}, which does not exist"
    assert name in defined_tests(path), f"{doc} names {file}::{name}, which does not exist"


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.name)
def test_no_document_points_outside_the_repository(doc):
    assert not re.search(r"\.\./shared|/work/|SPEC\.md|ARCHITECTURE\.md", doc.read_text())
