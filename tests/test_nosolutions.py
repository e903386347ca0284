"""The edition without solutions (`make book SOLUTIONS=0`, `make pdf SOLUTIONS=0`).

Built after the `book` fixture (tests/conftest.py) from the same execution cache, with the
configuration scripts/edition_config.py derives: warnings are errors, and no chapter may be
executed again. Its pages must hold no solution, in text or code (every solution cell of the
sources is searched for, tests/solution_snippets.py), and keep every exercise, hint and
check cell of the full edition; so must its PDF (printed for two chapters).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import executed_chapters
from html_pages import texts
from solution_snippets import chapters_with_exercises, found, snippets, squeeze
from test_pdf import Printed, print_book

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "_build" / "nosolutions"
CONFIG = OUTPUT / "_config.yml"
PDF = ROOT / "_build" / "pdf" / "sample-nosolutions.pdf"
CHAPTERS = chapters_with_exercises()
PRINTED = [chapter for chapter in CHAPTERS if chapter.stem in ("ch01_initialization", "ch04_catapult")]


@pytest.fixture(scope="module")
def nosolutions(book, book_timings, book_build) -> Path:
    """Build the edition without solutions as `make book SOLUTIONS=0` does; its HTML folder."""
    subprocess.run([sys.executable, str(ROOT / "scripts" / "edition_config.py"), "--out", str(CONFIG)],
                   cwd=ROOT, check=True, capture_output=True)
    output = book_build(["--path-output", str(OUTPUT), "--config", str(CONFIG)],
                        label="jupyter-book build SOLUTIONS=0", timings=book_timings)
    executed = executed_chapters(output)
    assert not executed, "the edition without solutions executed chapters again:\n" + "\n".join(executed)
    return OUTPUT / "_build" / "html"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_in_the_pages(nosolutions, book, chapter):
    code, prose = snippets(chapter)
    assert code and prose, f"{chapter.name}: no solution found in the sources"
    # the search finds every snippet in the full edition ...
    full_all, full_prose = texts(book / "chapters" / f"{chapter.stem}.html")
    assert found(code, full_all) == list(code), "solution code missing from the full edition"
    assert found(prose, full_prose) == list(prose), "solution prose missing from the full edition"
    # ... and none in any page of the edition without solutions
    for page in sorted(nosolutions.rglob("*.html")):
        text, prose_text = texts(page)
        leaks = found(code, text) + found(prose, prose_text)
        assert not leaks, f"{page.relative_to(nosolutions)} holds solutions of {chapter.name}: {leaks[:5]}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_hints_and_checks_are_kept(nosolutions, book, chapter):
    def counts(html: Path) -> dict[str, int]:
        page = html.read_text(encoding="utf-8")
        text = squeeze(texts(html).everything)
        return {
            "exercises": len(re.findall(r'<div class="exercise[ "]', page)),
            "hints": len(re.findall(r'<p class="admonition-title">Hint', page)),
            "checks": len(re.findall(r"\.check_\w+\(", text)),
            "solutions": len(re.findall(r'<div class="solution[ "]', page)),
        }

    full = counts(book / "chapters" / f"{chapter.stem}.html")
    without = counts(nosolutions / "chapters" / f"{chapter.stem}.html")
    assert full["exercises"] >= 1 and full["checks"] >= 1 and full["solutions"] >= 1, full
    assert without == {**full, "solutions": 0}, (without, full)


def test_no_source_copies_or_links(nosolutions):
    assert not (nosolutions / "_sources").exists(), "the sources (with the solutions) were copied"
    linked = [page.name for page in nosolutions.rglob("*.html") if "_sources/" in page.read_text(encoding="utf-8")]
    assert not linked, f"pages linking _sources/: {linked}"


def test_the_pdf_without_solutions(nosolutions, book_timings):
    """Printed as `make pdf SOLUTIONS=0` prints it, for two chapters (the whole edition takes
    minutes; what the PDF shows is what the HTML pages checked above hold)."""
    printed = Printed(print_book(nosolutions, PDF, book_timings, "--edition", "Edition without solutions",
                                 "--only", *(f"chapters/{chapter.stem}" for chapter in PRINTED)))
    assert "Edition without solutions" in printed.texts[0]
    assert "Solution to" not in printed.text
    assert "Exercise" in printed.text and ".check_" in printed.text
    leaks = {chapter.stem: found(snippets(chapter)[0], printed.text) for chapter in PRINTED}
    assert not any(leaks.values()), leaks
