"""The chapters read like a textbook: checked on their MyST sources (fast; no execution).

- Front matter: learning goals, prerequisites, reading and run time.
- Sections numbered "N.k" in chapter N; exercises, summary and references unnumbered.
- What the HTML shows: a visible code cell (no hide-input / hide-cell / remove-input tag, and
  not a worked solution, which sits in a collapsed dropdown) has at most 15 lines unless it is tagged `lesson-code` (the text says why it is worth
  reading); no code cell at all, collapsed or not, has more than 30 lines (longer logic
  belongs in lecturekit, with a test), on every page including the errata appendix; no code
  line is longer than 88 characters (nothing scrolls sideways).
- Figures: every figure cell has a `fig-...` name and a caption in its `mystnb: figure:`
  metadata, and the prose refers to it with {numref}. (tests/test_book_build.py checks the
  built HTML: every output image is inside a numbered, captioned, referenced figure.)
- Exercises carry a difficulty mark and at least one collapsed hint before the solution.
- Erratum boxes are collapsed; source-note codes ("seed 004", "(004 ...", CATALOGUE) appear
  only in the errata appendix.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("ch[0-9][0-9]_*.md"))
READER_PAGES = CHAPTERS + [p for p in [ROOT / "chapters" / "appendix_fast.md",
                                       ROOT / "chapters" / "course_guide.md"] if p.is_file()]
# Collapsed in the HTML: verification cells, and worked solutions (inside the solution dropdown).
HIDDEN = {"hide-input", "hide-cell", "remove-input", "remove-cell", "solution"}
MAX_VISIBLE_LINES = 15
MAX_CELL_LINES = 30
CODE_PAGES = READER_PAGES + [p for p in [ROOT / "chapters" / "appendix_errata.md"] if p.is_file()]
MAX_LINE = 88
UNNUMBERED = {"Exercises", "Summary", "References", "Further reading"}


def _id(path: Path) -> str:
    return path.stem


def _cells(path: Path):
    return jupytext.read(path).cells


def _chapter_number(path: Path) -> int:
    return int(re.match(r"ch(\d\d)_", path.name).group(1))


def _markdown(path: Path) -> str:
    return "\n".join(c.source for c in _cells(path) if c.cell_type == "markdown")


@pytest.mark.parametrize("path", CHAPTERS, ids=_id)
def test_front_matter(path):
    text = _markdown(path)
    head = text[: text.find("\n## ")] if "\n## " in text else text
    missing = [item for item in ("**Learning goals.**", "**Prerequisites.**", "**Reading time**",
                                 "**run time**") if item not in head]
    assert not missing, f"{path.name}: the front matter (before the first section) lacks {missing}"
    goals = head[head.index("**Learning goals.**"):].split("\n\n")[0]
    assert len(re.findall(r"^\s*[-*] ", goals, re.M)) >= 3, (
        f"{path.name}: list at least three learning goals as bullets")


@pytest.mark.parametrize("path", CHAPTERS, ids=_id)
def test_sections_are_numbered_by_chapter(path):
    number = _chapter_number(path)
    bad = []
    for line in _markdown(path).splitlines():
        match = re.match(r"^## (.*)$", line)
        if not match or match.group(1).strip() in UNNUMBERED:
            continue
        if not re.match(rf"{number}\.\d+ \S", match.group(1)):
            bad.append(line)
    assert not bad, f"{path.name}: sections must read '## {number}.k Title':\n" + "\n".join(bad)


@pytest.mark.parametrize("path", READER_PAGES, ids=_id)
def test_visible_code_cells_are_short_and_narrow(path):
    long_cells, wide_lines = [], []
    for index, cell in enumerate(c for c in _cells(path) if c.cell_type == "code"):
        tags = set(cell.metadata.get("tags", []))
        lines = cell.source.rstrip().splitlines()
        if not tags & HIDDEN and "lesson-code" not in tags and len(lines) > MAX_VISIBLE_LINES:
            long_cells.append(f"code cell {index} ({len(lines)} lines): {lines[0][:60]}")
        wide_lines += [f"code cell {index}: {line[:60]}... ({len(line)} characters)"
                       for line in lines if len(line) > MAX_LINE]
    assert not long_cells, (f"{path.name}: visible code cells over {MAX_VISIBLE_LINES} lines "
                            "(hide plumbing, move helpers into lecturekit, or tag lesson-code):\n"
                            + "\n".join(long_cells))
    assert not wide_lines, f"{path.name}: code lines over {MAX_LINE} characters:\n" + "\n".join(wide_lines)


@pytest.mark.parametrize("path", CODE_PAGES, ids=_id)
def test_no_code_cell_is_longer_than_a_screen(path):
    long_cells = []
    for index, cell in enumerate(c for c in _cells(path) if c.cell_type == "code"):
        lines = cell.source.rstrip().splitlines()
        if len(lines) > MAX_CELL_LINES:
            long_cells.append(f"code cell {index} ({len(lines)} lines): {lines[0][:60]}")
        elif any(len(line) > MAX_LINE for line in lines):
            long_cells.append(f"code cell {index}: a line over {MAX_LINE} characters")
    assert not long_cells, (f"{path.name}: code cells over {MAX_CELL_LINES} lines or "
                            f"{MAX_LINE} characters (move the logic into lecturekit, "
                            "with a test):\n" + "\n".join(long_cells))


@pytest.mark.parametrize("path", READER_PAGES, ids=_id)
def test_figures_are_named_captioned_and_referenced(path):
    text = _markdown(path)
    names, problems = [], []
    for index, cell in enumerate(c for c in _cells(path) if c.cell_type == "code"):
        figure = cell.metadata.get("mystnb", {}).get("figure")
        if figure is None:
            continue
        name, caption = figure.get("name", ""), str(figure.get("caption", ""))
        if not name.startswith("fig-"):
            problems.append(f"code cell {index}: figure name {name!r} does not start with fig-")
        if len(caption.strip()) < 40:
            problems.append(f"code cell {index}: figure {name} needs a caption saying what to see")
        if not re.search(rf"\{{numref\}}`(?:[^`<]*<)?{re.escape(name)}>?`", text):
            problems.append(f"figure {name} is never referenced with {{numref}} in the text")
        names.append(name)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"{path.name}: figure names used twice: {duplicates}"
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def _exercise_blocks(source: str) -> list[tuple[str, str]]:
    """(title line, text up to the solution) of every {exercise} in a MyST source."""
    blocks = []
    for match in re.finditer(r"^(`{3,}|:{3,})\{exercise\}(.*)$", source, re.M):
        rest = source[match.end():]
        end = re.search(r"^(`{3,}|:{3,})\{solution(-start)?\}", rest, re.M)
        blocks.append((match.group(2).strip(), rest[: end.start()] if end else rest))
    return blocks


@pytest.mark.parametrize("path", CHAPTERS, ids=_id)
def test_exercises_have_difficulty_and_hints(path):
    source = path.read_text(encoding="utf-8")
    blocks = _exercise_blocks(source)
    assert len(blocks) >= 4, f"{path.name}: {len(blocks)} exercises, at least 4 expected"
    problems = []
    for title, body in blocks:
        if not re.match(r"★{1,3}(\s|$)", title):
            problems.append(f"exercise {title!r}: start its title with ★, ★★ or ★★★")
        if not re.search(r"\{admonition\}\s*Hint", body):
            problems.append(f"exercise {title!r}: no hint admonition before its solution")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", CHAPTERS, ids=_id)
def test_erratum_boxes_are_collapsed(path):
    source = path.read_text(encoding="utf-8")
    problems = []
    for match in re.finditer(r"^(`{3,}|:{3,})\{admonition\}\s*Erratum.*$", source, re.M):
        options = source[match.end(): match.end() + 200].lstrip("\n").splitlines()[:3]
        if not any(re.match(r":class:.*\bdropdown\b", line) for line in options):
            problems.append(match.group(0))
    assert not problems, f"{path.name}: erratum boxes without :class: dropdown:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", READER_PAGES, ids=_id)
def test_source_note_codes_only_in_the_errata_appendix(path):
    text = path.read_text(encoding="utf-8")
    found = re.findall(r".{0,30}(?:\bseed 00\d|\(00\d\b|\b00\d §|CATALOGUE).{0,30}", text)
    assert not found, f"{path.name}: source-note codes on the reader's page: {found[:5]}"
