"""The Jupyter Book builds with warnings as errors and its HTML works offline (`make test`).

The `book` fixture (tests/conftest.py) builds the book once per session; it needs the
local MathJax copy: run `make mathjax` (or `make test`) first. These tests read the HTML
files; tests/test_browser.py opens them in Chromium.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from html_pages import links_by_target, resources, soup

pytestmark = pytest.mark.book

# Content delivery networks; a link to a project's home page is fine, a resource from these is not.
CDN = re.compile(r"cdn\.jsdelivr|unpkg\.com|cdnjs|googleapis|polyfill\.io")
ROOT = Path(__file__).resolve().parent.parent


def _pages(book: Path) -> list[Path]:
    return sorted(book.rglob("*.html"))


def test_chapter_pages_exist(book):
    assert (book / "index.html").is_file()
    assert (book / "chapters" / "ch01_initialization.html").is_file()


def test_mathjax_is_served_locally(book):
    page = (book / "chapters" / "ch01_initialization.html").read_text(encoding="utf-8")
    sources = [urlsplit(src).path for src in resources(book / "chapters" / "ch01_initialization.html").loaded
               if "mathjax" in src.lower()]
    assert sources == ["../_static/mathjax/tex-mml-chtml.js"], sources
    assert "window.MathJax" in page or "MathJax =" in page, "MathJax configuration missing"
    assert (book / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert any((book / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))


def test_no_cdn_or_remoteresources(book):
    offenders = []
    for path in book.rglob("*"):
        if path.suffix in {".html", ".js", ".css", ".json", ".txt"} and path.is_file():
            for match in CDN.finditer(path.read_text(encoding="utf-8", errors="replace")):
                offenders.append(f"{path.relative_to(book)}: {match.group(0)}")
    for page in _pages(book):
        for url in resources(page).loaded + resources(page).images:
            if urlsplit(url).scheme in {"http", "https"} or url.startswith("//"):
                offenders.append(f"{page.relative_to(book)} loads {url}")
    assert not offenders, "\n".join(offenders[:50])


def test_images_resolve(book):
    missing = []
    for page in _pages(book / "chapters"):
        for src in resources(page).images:
            if src.startswith("data:"):
                continue
            target = (page.parent / unquote(urlsplit(src).path)).resolve()
            if not target.is_file():
                missing.append(f"{page.relative_to(book)}: {src}")
    assert not missing, "\n".join(missing)


def _chapter_pages(book: Path) -> list[Path]:
    return sorted((book / "chapters").glob("*.html"))


def test_every_figure_is_numbered_captioned_and_referenced(book):
    """A figure a cell draws sits in a numbered <figure> with a caption, and the page's text
    links to it (the `mystnb: figure:` metadata of the cell and a {numref} in the prose)."""
    problems = []
    for page in _chapter_pages(book):
        tree = soup(page)
        links_to = links_by_target(tree)
        name = page.name
        for image in tree.select("div.cell_output img"):
            figure = image.find_parent("figure")
            if figure is None:
                problems.append(f"{name}: an output image outside a numbered figure "
                                f"({image.get('src', '')[-20:]}): add mystnb figure metadata")
                continue
            number = figure.select_one("figcaption .caption-number")
            text = figure.select_one("figcaption .caption-text")
            if number is None or not re.fullmatch(r"Figure (\d+\.)?\d+\s*", number.get_text()):
                problems.append(f"{name}: figure {figure.get('id')} is not numbered")
            if text is None or len(text.get_text(strip=True)) < 40:
                problems.append(f"{name}: figure {figure.get('id')} has no caption saying what to see")
            target = figure.get("id")
            links = links_to.get(f"#{target}", [])
            if not target or not [a for a in links if a.find_parent("figure") is None]:
                problems.append(f"{name}: figure {target} is not referenced from the text")
    assert not problems, "\n".join(problems)


def test_figures_and_exercises_are_numbered_per_chapter(book):
    """Chapter N's figures and exercises are N.1, N.2, ... in page order, and the text's
    references carry the same numbers (scripts/chapter_numbers_ext.py); other pages number
    from 1. Rejects Sphinx's book-wide sequence ("Figure 70" in Chapter 9)."""
    problems = []
    for page in _chapter_pages(book):
        chapter = re.match(r"ch(\d+)_", page.name)
        prefix = f"{int(chapter.group(1))}." if chapter else ""
        tree = soup(page)
        links_to = links_by_target(tree)
        for kind, selector in (("Figure", "figure figcaption .caption-number"),
                               ("Exercise", "p.admonition-title > .caption-number")):
            found = [" ".join(tag.get_text().split()) for tag in tree.select(selector)
                     if tag.get_text().startswith(kind)]
            expected = [f"{kind} {prefix}{k}" for k in range(1, len(found) + 1)]
            if found != expected:
                problems.append(f"{page.name}: {found} != {expected}")
        for figure in tree.select("figure[id]"):
            number = figure.select_one("figcaption .caption-number")
            if number is None:
                continue
            for link in links_to.get(f"#{figure['id']}", []):
                text = link.get_text(" ", strip=True)
                if link.find_parent("figure") is None and re.search(r"\d", text) \
                        and " ".join(number.get_text().split()) not in text:
                    problems.append(f"{page.name}: reference '{text}' to {figure['id']}")
    assert any(page.name.startswith("ch09") for page in _chapter_pages(book))
    assert not problems, "\n".join(problems)


def test_numref_doctrees_are_loaded_once_per_page():
    """scripts/numref_doctrees_ext.py: the view of the environment loads a page's doctree
    once and passes everything else through; the method it overrides still exists in
    Sphinx with the environment as its first argument (were it renamed, the override
    would silently do nothing)."""
    import inspect

    from sphinx.domains.std import StandardDomain

    sys.path.insert(0, str(ROOT / "scripts"))
    from numref_doctrees_ext import StandardDomainKeepingDoctrees, _DoctreesKept

    class Environment:
        toc_fignumbers = {"a": {"figure": {"fig-1": (9, 3)}}}
        loads: list[str] = []

        def get_doctree(self, docname):
            self.loads.append(docname)
            return object()

    kept = _DoctreesKept(Environment())
    first, again, other = kept.get_doctree("a"), kept.get_doctree("a"), kept.get_doctree("b")
    assert first is again and other is not first
    assert Environment.loads == ["a", "b"]
    assert kept.toc_fignumbers["a"]["figure"]["fig-1"] == (9, 3)
    overridden = vars(StandardDomain).get("_resolve_numref_xref")
    assert callable(overridden) and list(inspect.signature(overridden).parameters)[:2] == ["self", "env"]
    assert "_resolve_numref_xref" in vars(StandardDomainKeepingDoctrees)


def test_no_page_shows_stderr(book):
    """No executed cell shows anything on stderr: a warning, a log line or a figure check
    (myst-nb gives such an output the class ``stderr``)."""
    shown = {page.relative_to(book).as_posix(): len(soup(page).select("div.output.stderr"))
             for page in _pages(book)}
    assert not {page: count for page, count in shown.items() if count}, shown


def headless_environment() -> dict[str, str]:
    """The variables the Makefile's HEADLESS sets for the chapters' headless executions."""
    # Not the options of a `make test` that runs this test (MAKEFLAGS: -j2, its jobserver).
    outside = {name: value for name, value in os.environ.items() if name not in {"MAKEFLAGS", "MFLAGS"}}
    printed = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", "print-headless: ; @echo $(HEADLESS)",
         "print-headless"], cwd=ROOT, env=outside, capture_output=True, text=True, check=True).stdout
    return dict(item.split("=", 1) for item in shlex.split(printed))


def test_headless_executions_write_no_xla_log(tmp_path):
    """A chapter that the book build executes itself keeps its file descriptor 2 in the cell
    outputs (ipykernel forwards it outside pytest), so XLA's C++ log must stay silent there.
    On a CPU whose LLVM target has tuning flags (+prefer-no-gather), loading a program from
    the persistent cache logs "cpu_aot_loader ... could lead to execution errors such as
    SIGILL" (two lines a program) unless HEADLESS sets TF_CPP_MIN_LOG_LEVEL; this runs one
    program twice with HEADLESS's variables, compiled and stored, then loaded. On a CPU
    without such flags nothing is logged either way."""
    environment = os.environ | headless_environment() | {"JAX_COMPILATION_CACHE_DIR": str(tmp_path)}
    program = "import jax, jax.numpy as jnp; print(jax.jit(lambda x: jnp.sin(x) * 2)(jnp.ones(3)))"
    runs = [subprocess.run([sys.executable, "-c", program], env=environment, capture_output=True,
                           text=True, check=True) for _ in range(2)]
    assert any(tmp_path.rglob("*")), "the first run stored no program in the persistent cache"
    assert [run.stderr for run in runs] == ["", ""], runs[1].stderr[:500]
