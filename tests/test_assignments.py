"""The nbgrader course (`make assignments`, scripts/make_assignments.py).

The source notebooks are checked for every chapter with exercises (cheap: no execution).
Then nbgrader runs end to end in a temporary course directory, on an assignment made of
Chapter 1's first cell (its imports) and its first two exercises, text, hints, solutions
and checks as they are in the chapter: `nbgrader generate_assignment` releases it, and
`nbgrader autograde` grades two submissions, the released notebook as it is (0 points) and
the released notebook with the solutions pasted into its stubs (full marks). The rest of
the chapter is left out so that the test executes no experiment (the unit stage must not
hide a chapter's execution); that every chapter's solutions pass its checks is what nbval
shows, executing the chapters with their solutions, and that every released stub fails
its check is tests/test_student_exercises.py's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import pytest

from solution_snippets import chapters_with_exercises, found, make_student, snippets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_assignments  # noqa: E402

CHECK_CALL = re.compile(r"\bexercises\.\w+\.check_\w+\s*\(")
CHAPTER = "ch01_initialization"
CHAPTERS = chapters_with_exercises()
GRADED_EXERCISES = 2


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("course")
    written = make_assignments.write_course(course)
    assert {path.parent.name for path in written} == {path.stem for path in CHAPTERS}
    return course


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """Run nbgrader in the course directory, with the venv's tools (alembic) on PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "TQDM_DISABLE": "1"}
    result = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), *args], cwd=course,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{(result.stdout + result.stderr)[-6000:]}"
    return result


def grading(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_source_notebooks(course, chapter):
    nb = nbformat.read(course / "source" / chapter.stem / f"{chapter.stem}.ipynb", as_version=4)
    nbformat.validate(nb)
    solutions = [c for c in nb.cells if c.cell_type == "code" and grading(c).get("solution")]
    checks = [c for c in nb.cells if c.cell_type == "code" and grading(c).get("grade")]
    assert solutions and checks, chapter.name
    for cell in solutions:
        assert make_student.BEGIN in cell.source and make_student.END in cell.source, cell.source[:200]
        assert not grading(cell)["locked"]
    for cell in checks:
        assert grading(cell)["locked"] and grading(cell)["points"] >= 1
        assert ".check_" in cell.source or "assert" in cell.source, cell.source
    # every exercise's check is graded: the check_* calls of the chapter are all test cells
    calls = sum(len(CHECK_CALL.findall(c.source)) for c in nb.cells if c.cell_type == "code")
    assert calls == sum(len(CHECK_CALL.findall(c.source)) for c in checks), chapter.name
    # the rest is read-only, and nothing is lost: the code cells are those of the chapter
    others = [c for c in nb.cells if not grading(c).get("solution")]
    assert all(grading(c).get("locked") for c in others if c.cell_type in ("code", "markdown"))
    original = make_student.chapter_sources([chapter])[0][1]
    assert len([c for c in nb.cells if c.cell_type == "code"]) == len(
        [c for c in original.cells if c.cell_type == "code"])
    assert (course / "nbgrader_config.py").is_file()


def solved(released: nbformat.NotebookNode, source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The released notebook with each stub replaced by the source's solution code."""
    answers = {grading(c)["grade_id"]: c.source for c in source.cells if grading(c).get("solution")}
    nb = nbformat.from_dict(released)
    for cell in nb.cells:
        if cell.cell_type == "code" and grading(cell).get("solution"):
            code = answers[grading(cell)["grade_id"]].split(make_student.BEGIN, 1)[1]
            cell.source = code.replace(make_student.END, "").strip()
    return nb


def first_exercises(chapter: Path, count: int, folder: Path) -> Path:
    """A MyST page with the chapter's first code cell and its first `count` exercises (each
    up to its check cell), written as `folder/<chapter name>`."""
    nb = jupytext.read(chapter)
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    start = next(i for i, c in enumerate(nb.cells)
                 if c.cell_type == "markdown" and c.source.lstrip().startswith("## Exercises"))
    checks = [i for i, c in enumerate(nb.cells[start:], start)
              if c.cell_type == "code" and CHECK_CALL.search(c.source)]
    assert len(checks) >= count, f"{chapter.name} has fewer than {count} exercise checks"
    nb.cells = [nb.cells[first_code], *nb.cells[start:checks[count - 1] + 1]]
    page = folder / chapter.name
    jupytext.write(nb, page, fmt="md:myst")
    return page


@pytest.fixture(scope="module")
def short_course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("short-course")
    page = first_exercises(ROOT / "chapters" / f"{CHAPTER}.md", GRADED_EXERCISES,
                           tmp_path_factory.mktemp("pages"))
    assert [path.parent.name for path in make_assignments.write_course(course, [page])] == [CHAPTER]
    return course


def test_release_and_autograde(short_course):
    course = short_course
    start = time.perf_counter()
    nbgrader(course, "generate_assignment", CHAPTER, "--create", "--force")
    released_path = course / "release" / CHAPTER / f"{CHAPTER}.ipynb"
    released = nbformat.read(released_path, as_version=4)
    source = nbformat.read(course / "source" / CHAPTER / f"{CHAPTER}.ipynb", as_version=4)

    # no solution is released: no code line and no prose of any solution
    code, prose = snippets(ROOT / "chapters" / f"{CHAPTER}.md")
    text = "\n".join(cell.source for cell in released.cells)
    assert not found(code, text) and not found(prose, text), (found(code, text), found(prose, text))
    assert len(CHECK_CALL.findall(text)) == GRADED_EXERCISES, text
    assert make_student.BEGIN not in text and "raise NotImplementedError()" in text
    assert all(not cell.get("outputs") for cell in released.cells if cell.cell_type == "code")

    for student, notebook in (("unsolved", released), ("solved", solved(released, source))):
        folder = course / "submitted" / student / CHAPTER
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{CHAPTER}.ipynb")
    nbgrader(course, "autograde", CHAPTER, "--create")

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {}
        for student in ("unsolved", "solved"):
            submission = gradebook.find_submission(CHAPTER, student)
            scores[student] = (submission.code_score, submission.max_code_score)
    max_points = sum(grading(c)["points"] for c in source.cells if c.cell_type == "code" and grading(c).get("grade"))
    assert max_points == 3  # a ★ exercise (1 point) and a ★★ one (2 points)
    assert scores["unsolved"] == (0, max_points), scores
    assert scores["solved"] == (max_points, max_points), scores
    shutil.rmtree(course / "autograded", ignore_errors=True)
    print(f"nbgrader release + autograde of two submissions: {time.perf_counter() - start:.0f} s")
