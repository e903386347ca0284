"""Sphinx extension: figures, tables and exercises numbered per chapter ("Figure 9.3").

The chapters sit in an unnumbered part of the table of contents (each title says
"Chapter N" itself, and automatic section numbers would print twice), so Sphinx numbers
every enumerable object -- figures, tables, code listings, sphinx-exercise's exercises --
in one sequence through the whole book: the third figure of Chapter 9 came out as
"Figure 70". This extension renumbers them after Sphinx has assigned its numbers, keeping
the order within each page:

- on a chapter page (``chapters/chNN_*``): N.1, N.2, ... for each kind of object, so the
  third figure of Chapter 9 is "Figure 9.3" and its first exercise "Exercise 9.1";
- on every other page (appendices, course guide): 1, 2, ..., restarting on each page.

References made with ``{numref}`` and the captions read the same table
(``env.toc_fignumbers``), so they agree with each other.

Sphinx's own numbers are kept beside ours (``env.book_wide_fignumbers``) and put back
just before its toctree collector numbers the book again: it rewrites a page whose
numbers differ from those of the last build, and compared with our per-page numbers
every chapter with a figure differed on every build, so `make book` rewrote them all
even when nothing had changed.
"""

from __future__ import annotations

import copy
import re

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

CHAPTER_PAGE = re.compile(r"(?:^|/)ch(\d+)_[^/]*$")


def restore_book_wide_numbers(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Put Sphinx's numbers of the last build back in ``env.toc_fignumbers``, for its
    toctree collector to compare its new numbers with."""
    if hasattr(env, "book_wide_fignumbers"):
        env.toc_fignumbers = copy.deepcopy(env.book_wide_fignumbers)
    return []


def renumber_per_page(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Rewrite ``env.toc_fignumbers``: per-page numbers, prefixed by the chapter number."""
    env.book_wide_fignumbers = copy.deepcopy(env.toc_fignumbers)
    for docname, by_kind in env.toc_fignumbers.items():
        chapter = CHAPTER_PAGE.search(docname)
        prefix = (int(chapter.group(1)),) if chapter else ()
        for numbers in by_kind.values():
            in_page_order = sorted(numbers, key=numbers.__getitem__)
            for position, object_id in enumerate(in_page_order, start=1):
                numbers[object_id] = (*prefix, position)
    return []     # Sphinx's own collector already asked for every renumbered page


def setup(app: Sphinx) -> dict:
    # before and after the toctree collector (priority 500), which assigns the book-wide
    # numbers and compares them with the last build's
    app.connect("env-get-updated", restore_book_wide_numbers, priority=100)
    app.connect("env-get-updated", renumber_per_page, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
