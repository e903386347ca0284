"""The PDF of the book (`make pdf`, scripts/make_pdf.py), printed from the built HTML.

The `book` fixture (tests/conftest.py) builds the HTML book once per session; `make test`
then prints a sample of it, as `make pdf` prints the whole book (same script, same
options, nothing executed again): the front page, a chapter, an appendix and two pages of
the API reference, one page of each part of the table of contents, which takes seconds
instead of the minutes of the whole book. The PDF must hold every printed page (its title
in the text and in the bookmarks, under its part), typeset mathematics (no TeX source
outside code), the figures, page numbers, links that work inside the document, the book's
title in its metadata, and stay small: at most 50 kB a page, so that the whole book (about
300 pages) stays under 15 MB.
"""

from __future__ import annotations

import functools
import logging
import re
import resource
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from html_pages import soup

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parent.parent
PDF = ROOT / "_build" / "pdf" / "sample.pdf"
# One page of each part of the table of contents (the front page has none).
SAMPLE = ("intro", "chapters/ch01_initialization", "chapters/appendix_notation", "api/index",
          "api/nets")
BYTES_PER_PAGE = 50_000
# TeX a reader should never see: a command (\frac, \alpha), display or inline delimiters.
RAW_TEX = re.compile(r"\\[A-Za-z]+|\$\$|\\[()\[\]]")

sys.path.insert(0, str(ROOT / "scripts"))
import make_pdf  # noqa: E402


def squeeze(text: str) -> str:
    """Text without whitespace, ligatures spelled out (the PDF's text has "\ufb02uctuations")."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def print_book(html: Path, out: Path, book_timings: list[str], *extra: str) -> Path:
    """Run scripts/make_pdf.py as `make pdf` does; the PDF."""
    start, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_pdf.py"), "--html", str(html), "--out", str(out), *extra],
        cwd=ROOT, capture_output=True, text=True,
    )
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = f"{used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime:.1f} s CPU"
    # make_pdf.py reads Chromium's time from /proc before closing it: the processes Chromium
    # leaves are reaped by init, so this process's rusage misses most of it
    reported = re.search(r"([0-9.]+) CPU-s with Chromium", result.stdout)
    if reported:
        cpu = f"{reported[1]} s CPU with Chromium"
    book_timings.append(f"make_pdf.py ({out.name}): {time.perf_counter() - start:.1f} s wall, {cpu}")
    assert result.returncode == 0, f"make_pdf.py failed:\n{(result.stdout + result.stderr)[-6000:]}"
    return out


class Printed:
    """A printed PDF read back with pypdf: its pages' text, bookmarks and images."""

    def __init__(self, path: Path) -> None:
        from pypdf import PdfReader

        logging.getLogger("pypdf").setLevel(logging.ERROR)
        self.reader = PdfReader(str(path))
        self.texts = [page.extract_text() for page in self.reader.pages]
        self.text = "\n".join(self.texts)
        self.bookmarks: list[tuple[int, str, int]] = []  # (depth, title, page index)

        def walk(items, depth):
            for item in items:
                if isinstance(item, list):
                    walk(item, depth + 1)
                else:
                    self.bookmarks.append((depth, item.title, self.reader.get_destination_page_number(item)))

        walk(self.reader.outline, 0)


@pytest.fixture(scope="module")
def printed(book, book_timings) -> Printed:
    return Printed(print_book(book, PDF, book_timings, "--only", *SAMPLE))


def sample_pages() -> list[str]:
    """The sample's pages in the order of the table of contents (all of them exist)."""
    pages = [docname for docname, _ in make_pdf.toc_pages() if docname in SAMPLE]
    assert sorted(pages) == sorted(SAMPLE), f"not in _toc.yml: {set(SAMPLE) - set(pages)}"
    return pages


@functools.lru_cache(maxsize=None)
def page_titles(book: Path) -> list[tuple[str, str]]:
    """(docname, title) of every printed page, as the HTML shows it."""
    titles = []
    for docname in sample_pages():
        tree = soup(book / f"{docname}.html")
        titles.append((docname, make_pdf._heading_text(tree.select_one("article.bd-article h1"))))
    return titles


def test_every_page_title_is_in_the_text_and_the_bookmarks(printed, book):
    text = squeeze(printed.text)
    bookmarks = {squeeze(title) for _, title, _ in printed.bookmarks}
    missing_text = [title for _, title in page_titles(book) if squeeze(title) not in text]
    missing_marks = [title for _, title in page_titles(book) if squeeze(title) not in bookmarks]
    assert not missing_text, f"titles not in the PDF's text: {missing_text}"
    assert not missing_marks, f"titles not in the PDF's bookmarks: {missing_marks}"
    # the chapters and appendices in reading order, each under its part, with their sections
    titles = {squeeze(t) for _, t in page_titles(book)}
    pages = [page for depth, title, page in printed.bookmarks if squeeze(title) in titles]
    assert pages == sorted(pages), pages
    parts = [title for depth, title, _ in printed.bookmarks if depth == 0]
    assert {"Chapters", "Appendices", "API reference"} <= set(parts), parts
    # chapters and appendices have sections (API reference pages list functions, not sections)
    prose = [docname for docname, _ in page_titles(book) if not docname.startswith("api/")]
    assert sum(depth == 2 for depth, _, _ in printed.bookmarks) >= 5 * len(prose) // 2


def test_page_count_and_page_numbers(printed, book):
    count = len(printed.reader.pages)
    pages = len(page_titles(book))
    assert 4 * pages <= count <= 200, f"{count} pages for {pages} pages of the book"
    # the footer's page number is the last line of every page's text
    numbered = [i + 1 for i, text in enumerate(printed.texts) if text.strip().splitlines()[-1].strip() == str(i + 1)]
    assert len(numbered) >= 0.95 * count, f"only {len(numbered)} of {count} pages end with their number"


def test_no_raw_tex_outside_code(printed, book):
    """Every line of the text with TeX in it is a line of a code cell or of its output
    (of the printed pages: a line of code elsewhere in the book does not excuse it)."""
    code = "".join(
        squeeze(element.get_text())
        for docname in sample_pages()
        for element in soup(book / f"{docname}.html").find_all("pre")
    )
    raw = [f"page {index + 1}: {line.strip()[:100]}"
           for index, text in enumerate(printed.texts) for line in text.splitlines()
           if RAW_TEX.search(line) and squeeze(line) not in code]
    assert not raw, "TeX source in the PDF's text:\n" + "\n".join(raw[:30])


def test_figures_are_embedded(printed, book):
    sources = set()
    for docname in sample_pages():
        article = soup(book / f"{docname}.html").select_one("article.bd-article")
        sources |= {img["src"].rsplit("/", 1)[-1] for img in article.find_all("img", src=True)}
    assert sources, "the book has no figures?"
    embedded = 0
    for page in printed.reader.pages:
        objects = (page.get("/Resources") or {}).get("/XObject")
        if objects:
            embedded += sum(obj.get_object().get("/Subtype") == "/Image" for obj in objects.get_object().values())
    assert embedded >= len(sources), f"{embedded} images in the PDF, {len(sources)} figures in the book"


def test_links_stay_inside_the_pdf(printed):
    """The contents and the cross-references are links to places in the PDF; none to the
    local server the pages were printed from."""
    internal, local = 0, []
    for page in printed.reader.pages:
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            action = annotation.get("/A") or {}
            if "/Dest" in annotation or action.get("/S") == "/GoTo":
                internal += 1
            uri = str(action.get("/URI", ""))
            if "127.0.0.1" in uri or "localhost" in uri:
                local.append(uri)
    assert not local, local[:10]
    # The sample has 96: the contents' entries (its five pages and their sections) and
    # Chapter 1's references to its sections, figures, equations and bibliography.
    assert internal >= 60, internal


def test_the_pdf_is_small(printed):
    """Figures are embedded as they are, shadows are not rasterized, and the many small
    objects of the tagged structure are packed (a page used to weigh about 200 kB)."""
    size = PDF.stat().st_size
    count = len(printed.reader.pages)
    assert size <= BYTES_PER_PAGE * count, f"{size / 1e6:.1f} MB for {count} pages"


def test_metadata_and_bookmarks_pane(printed):
    assert printed.reader.metadata.title.startswith("Wide Neural Networks")
    assert printed.reader.page_mode == "/UseOutlines"


def test_missing_chromium_is_explained(tmp_path, book):
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_pdf.py"), "--html", str(book), "--out",
         str(tmp_path / "x.pdf"), "--only", "intro"],
        cwd=ROOT, capture_output=True, text=True, env={"CHROMIUM": str(tmp_path / "no-chromium"), "PATH": ""},
    )
    assert result.returncode != 0
    assert "Chromium is missing" in result.stderr and "make browser-deps" in result.stderr, result.stderr
