"""Shared test configuration.

Hypothesis runs derandomized (the same examples on every run, so CI cannot flake on a
rare draw) with no deadline (JAX compiles on first call) and no example database.

The `book` fixture builds the Jupyter Book once per session for every test marked
`book` (tests/test_book_build.py checks the HTML files, tests/test_browser.py opens
them in Chromium). Their wall times are printed at the end of the session.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("book", derandomize=True, deadline=None, database=None, print_blob=True)
settings.load_profile("book")

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
MATHJAX_SOURCE = ROOT / ".build-deps" / "html_extra" / "_static" / "mathjax" / "tex-mml-chtml.js"
_TIMINGS = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def book_timings(pytestconfig) -> list[str]:
    """Lines such as "jupyter-book build: 12.3 s wall", printed in the session's summary."""
    return pytestconfig.stash.setdefault(_TIMINGS, [])


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    timings = config.stash.get(_TIMINGS, [])
    if timings:
        terminalreporter.section("book build and browser times")
        for line in timings:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def book_build():
    """`build_book` (below), for book tests that build another edition of the book."""
    return build_book


@pytest.fixture(scope="session")
def book(book_timings) -> Path:
    """Build the book with warnings as errors (`jupyter-book build -W -n`); the HTML folder.

    The build executes every chapter through jupyter-cache, so a rebuild after a passing
    run (or after `make test-notebooks`, which fills the same cache) is fast.
    """
    if not MATHJAX_SOURCE.is_file():
        pytest.fail(f"{MATHJAX_SOURCE.relative_to(ROOT)} is missing: run `make mathjax` first")
    output = build_book([], label="jupyter-book build", timings=book_timings)
    if os.environ.get("BOOK_FROM_NBVAL_CACHE") == "1":  # set by `make test`, after nbval
        executed = executed_chapters(output)
        assert not executed, ("the book build executed chapters that nbval had executed (a "
                              "chapter runs at most twice in `make test`; did nbval fail on it?):\n"
                              + "\n".join(executed))
    return HTML


def executed_chapters(output: str) -> list[str]:
    """The "Executing notebook" lines of a build's output, except those of pages that
    declare `mystnb: execution_mode: force` (the course guide, whose tables are read from
    the chapter files, is executed by every build, by design)."""
    forced = [str(p) for p in (ROOT / "chapters").glob("*.md")
              if re.search(r"^mystnb:\n\s+execution_mode: force", p.read_text(encoding="utf-8")[:800], re.M)]
    return [line for line in output.splitlines() if "Executing notebook" in line
            and not any(line.startswith(page) for page in forced)]


def build_book(options: list[str], *, label: str, timings: list[str]) -> str:
    """Write the API reference pages (scripts/api_reference.py, as `make book` does), then
    run `jupyter-book build -W -n --keep-going [options] ROOT`; its output.

    Fails the test if the build fails or Sphinx warns; records the wall and CPU time in
    `timings` under `label`.
    """
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    api = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_reference.py")],
                         cwd=ROOT, capture_output=True, text=True)
    assert api.returncode == 0, f"scripts/api_reference.py failed:\n{api.stdout}{api.stderr}"
    start, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        [str(jupyter_book), "build", "-W", "-n", "--keep-going", *options, str(ROOT)],
        cwd=ROOT, capture_output=True, text=True,
    )
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime
    timings.append(f"{label}: {time.perf_counter() - start:.1f} s wall, {cpu:.1f} s CPU")
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{label} failed:\n{output[-8000:]}"
    # Sphinx's "path:line: WARNING: ..." lines (not the kernels' "[IPKernelApp] WARNING | ...").
    warnings = [line for line in output.splitlines() if re.search(r"(^|: )(WARNING|ERROR|CRITICAL): ", line)]
    assert not warnings, "\n".join(warnings)
    return output
