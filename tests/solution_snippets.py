"""What the solutions of a chapter say, as snippets to search for in an edition without them.

Used by tests/test_nosolutions.py (the HTML book built with SOLUTIONS=0) and
tests/test_assignments.py (nbgrader's released notebooks). The solutions are those that
scripts/make_student.py's `nbgrader_source()` marks as nbgrader solution cells: every code
cell tagged `solution` and the prose of every `{solution}` / `{solution-start}` block. A
snippet is
- a line of solution code (at least 12 characters without spaces), or
- a run of at least 4 plain words of solution prose (no math, markup or quotes, which the
  HTML renders differently),
that does not occur in the book's sources outside solutions, on any page (so "return out"
shared with a demonstration cell, or code the errata appendix shows too, is not taken for
a leak). Comparison ignores whitespace.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

_MARKERS = (make_student.BEGIN, make_student.END)
_PLAIN_RUN = re.compile(r"[A-Za-z][A-Za-z0-9 ,;:()]{24,}[A-Za-z0-9)]")
_MARKUP = re.compile(r"\$[^$]*\$|`[^`]*`|\{[^}]*\}|\*\*?|\[[^\]]*\]\([^)]*\)")


def squeeze(text: str) -> str:
    """`text` without whitespace (the HTML and the notebooks break and indent differently)."""
    return re.sub(r"\s+", "", text)


def chapters_with_exercises() -> list[Path]:
    return [path for path in make_student.chapter_paths() if make_student.has_exercises(path)]


def _solution_cells(path: Path):
    source, _ = make_student.nbgrader_source(jupytext.read(path), path.name)
    solutions, public = [], []
    for cell in source.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            text = cell.source
            if cell.cell_type == "code":  # the comment above the region is not the solution
                text = text.split(make_student.BEGIN, 1)[1]
            text = "\n".join(line for line in text.splitlines() if line.strip() not in _MARKERS)
            solutions.append((cell.cell_type, text))
        else:
            public.append(cell.source)
    return solutions, "\n".join(public)


@functools.lru_cache(maxsize=None)
def public_text() -> str:
    """Everything the book's sources say outside solutions (every page), squeezed."""
    texts = []
    for path in sorted((ROOT / "chapters").glob("*.md")) + sorted(ROOT.glob("*.md")):
        if path.name in {"README.md", "LICENSE-TEXT.md"}:
            continue
        nb = jupytext.read(path)
        texts.append(_solution_cells(path)[1] if make_student.is_chapter(nb) else path.read_text(encoding="utf-8"))
    return squeeze("\n".join(texts))


@functools.lru_cache(maxsize=None)
def snippets(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(code snippets, prose snippets) of the solutions of the chapter `path`, squeezed."""
    solutions, _ = _solution_cells(path)
    public = public_text()
    code, prose = [], []
    for kind, text in solutions:
        if kind == "code":
            for line in text.splitlines():
                line = line.split("  #")[0].strip()
                if len(squeeze(line)) >= 12 and not line.startswith("#") and squeeze(line) not in public:
                    code.append(squeeze(line))
        else:
            for run in _PLAIN_RUN.findall(_MARKUP.sub("\n", text)):
                if len(run.split()) >= 4 and squeeze(run) not in public:
                    prose.append(squeeze(run))
    return tuple(dict.fromkeys(code)), tuple(dict.fromkeys(prose))


def found(snippet_list, text: str) -> list[str]:
    """The snippets that occur in `text` (squeezed here)."""
    text = squeeze(text)
    return [snippet for snippet in snippet_list if snippet in text]
