#!/usr/bin/env python3
"""Write the student edition of the chapters: notebooks with the exercise solutions removed.

    python scripts/make_student.py [--out student] [chapters/chNN_name.md ...]

For readers working alone (a course uses `make assignments`, scripts/make_assignments.py).
Both editions start from the same nbgrader source notebook, `nbgrader_source()`, which reads
a MyST chapter (jupytext) and marks its solutions the way nbgrader expects:
- each code cell tagged `solution` becomes an nbgrader solution cell: a comment naming the
  exercise (cell metadata key `exercise`, else the label of the enclosing
  `{solution-start}` block) and the names the next code cell needs from it (the names the
  solution defines at top level, imports aside, and that cell uses), then the solution
  between `### BEGIN SOLUTION` and `### END SOLUTION`;
- solution prose (markdown cells tagged `solution`, the text of `{solution}` directives, and
  everything between `{solution-start}` and `{solution-end}`) becomes markdown answer cells
  of its own (nbgrader's manually graded answers, worth 0 points: a teacher may read them);
  the directive fences are dropped;
- the code cell after a solution that calls `exercises.<page>.check_*` (or asserts) is an
  autograded test cell, worth the number of stars of the exercise's title (at least 1 point);
- every other cell is read-only (nbgrader `locked`).
A code cell inside a gated solution block must be tagged `solution` (otherwise its code
would be given away); the script stops with an error naming the cell if it is not.

The student edition is then what nbgrader's own `ClearSolutions` preprocessor makes of that
notebook, with one change of stub: the solution region of a code cell becomes
`raise NotImplementedError("Exercise <label>: write your solution in this cell ...")`, which
says what to write, and each removed prose solution leaves one line
"*(Solution removed in the student edition.)*". Stub cells keep their tags, with `solution`
replaced by `exercise-stub`; the nbgrader metadata is removed, so the notebooks open as plain
notebooks.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import sys
from pathlib import Path

import jupytext
import nbformat
from nbgrader.preprocessors import ClearSolutions

ROOT = Path(__file__).resolve().parent.parent
SOLUTION_TAG = "solution"
STUB_TAG = "exercise-stub"
PLACEHOLDER = "*(Solution removed in the student edition.)*"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
NBGRADER_SCHEMA = 3
# transient metadata of the source notebook, removed from every edition
_PART = "solution_part"  # which solution (0, 1, ...) a solution cell belongs to
_STUB = "student_stub"  # the code that replaces the solution region in the student edition
# a cell that tests a solution: it calls a lecturekit.exercises check, or asserts
_CHECK = re.compile(r"\.check_\w+\s*\(|^\s*assert\b", re.MULTILINE)
_EXERCISE = re.compile(
    r"^ {0,3}(`{3,}|:{3,})\{exercise(?:-start)?\}(?P<title>[^\n]*)\n(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)",
    re.MULTILINE,
)

_OPEN = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|:{3,})\{(?P<name>solution-start|solution-end|solution)\}(?P<argument>.*)$"
)


class StudentEditionError(ValueError):
    """A chapter's solutions cannot be removed safely (malformed or untagged solution)."""


def _stub_parts(label: str | None, names: list[str] | tuple[str, ...] = ()) -> tuple[str, str]:
    """(comment, message) of the stub that replaces a solution: what to write, and where."""
    name = f"Exercise {label}" if label else "This exercise"
    if names:
        listed = ", ".join(names)
        message = (
            f"{name}: write your solution in this cell (see the exercise text above), defining "
            f"{listed}; then run the cell below, which checks it."
        )
        comment = (
            f"# {name}: replace the line below with your solution (define {listed}),\n"
            "# then run the cell that follows, which checks it.\n"
        )
    else:
        message = f"{name}: write your solution in this cell (see the exercise text above), then run it."
        comment = f"# {name}: replace the line below with your solution, then run this cell.\n"
    return comment, message


def stub_source(label: str | None, names: list[str] | tuple[str, ...] = ()) -> str:
    """Source of the code cell that replaces a solution cell in the student edition.

    `names` are the variables or functions the following (check) cell needs from it.
    """
    comment, message = _stub_parts(label, names)
    return comment + f"raise NotImplementedError({json.dumps(message, ensure_ascii=False)})"


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:  # IPython syntax (magics, `!cmd`): no names can be read from it
        return None


def _defined_names(source: str) -> list[str]:
    """Top-level names bound by `source` (assignments, defs, classes; not imports), in order."""
    tree = _parse(source)
    if tree is None:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = [node.name]
        elif isinstance(node, ast.Assign):
            found = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            found = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        else:
            found = []
        names.extend(n for n in found if n not in names)
    return names


def _used_names(source: str) -> set[str]:
    tree = _parse(source)
    return set() if tree is None else {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def needed_names(solution: str, following: str) -> list[str]:
    """Names that `solution` defines and the cell `following` it uses, in definition order."""
    used = _used_names(following)
    return [name for name in _defined_names(solution) if name in used]


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(line) - len(line.lstrip(" ")) <= 3 and len(stripped) >= len(fence) and set(
        stripped
    ) == {fence[0]}


class _Splitter:
    """Splits markdown text into public and solution parts, tracking solution blocks across
    cells: `{solution-start}`...`{solution-end}` (gated, may span cells) and `{solution}`."""

    def __init__(self) -> None:
        self.gated = False  # between {solution-start} and {solution-end}
        self.label: str | None = None  # the exercise label given to the current {solution-start}
        self.fence: str | None = None  # inside a solution directive's fence
        self.body = False  # that fence is a {solution} directive: its content is solution prose
        self.body_started = False  # past the directive's options (":class: dropdown")
        self.after_fence_gated = False
        self.part = -1  # index of the current (or last) solution

    @property
    def inside(self) -> bool:
        return self.gated or self.fence is not None

    def new_part(self) -> int:
        self.part += 1
        return self.part

    def split(self, text: str, where: str, tagged: bool = False) -> list[tuple[str, int | None, str]]:
        """The segments ("public" or "solution", solution index or None, text) of `text`;
        all of a cell tagged `solution` is solution prose."""
        segments: list[list] = []

        def emit(kind: str, line: str) -> None:
            part = self.part if kind == "solution" else None
            if segments and segments[-1][0] == kind and segments[-1][1] == part:
                segments[-1][2].append(line)
            else:
                segments.append([kind, part, [line]])

        if tagged and not self.inside:
            self.new_part()  # a solution of its own, outside any block
        for line in text.splitlines():
            if self.fence is not None:
                if _closes(line, self.fence):
                    self.fence, self.gated, self.body = None, self.after_fence_gated, False
                elif self.body and (self.body_started or not re.match(r"^\s*:[\w-]+:", line)):
                    self.body_started = True
                    emit("solution", line)
                continue
            match = _OPEN.match(line)
            if match:
                name = match["name"]
                if name == "solution-end":
                    if not self.gated:
                        raise StudentEditionError(f"{where}: {{solution-end}} without {{solution-start}}")
                    self.after_fence_gated = False
                    self.label = None
                else:
                    if self.gated:
                        raise StudentEditionError(f"{where}: {{{name}}} inside a gated solution")
                    self.new_part()
                    self.after_fence_gated = name == "solution-start"
                    self.label = (match["argument"].strip() or None) if self.after_fence_gated else None
                    self.body, self.body_started = name == "solution", False
                self.fence = match["fence"]
                continue
            emit("solution" if (self.gated or tagged) else "public", line)
        return [(kind, part, "\n".join(lines).strip("\n")) for kind, part, lines in segments]


def exercise_points(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Points of each exercise label: the stars that start its title (★★ -> 2), at least 1."""
    text = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    points = {}
    for match in _EXERCISE.finditer(text + "\n"):
        label = re.search(r":label:\s*(\S+)", match["options"])
        if label:
            title = match["title"].strip()
            points[label[1]] = max(1, len(title) - len(title.lstrip("★")))
    return points


def _nbgrader(grade_id: str, *, solution: bool = False, grade: bool = False, locked: bool = False,
              points: int | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": NBGRADER_SCHEMA,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def nbgrader_source(nb: nbformat.NotebookNode, name: str = "notebook") -> tuple[nbformat.NotebookNode, int]:
    """The nbgrader source notebook of a chapter (see the module docstring) and its number of
    solution code cells. Raises StudentEditionError for malformed or untagged solutions."""
    points = exercise_points(nb)
    splitter = _Splitter()
    cells: list[nbformat.NotebookNode] = []
    ids: set[str] = set()
    solutions = 0
    awaiting_check: str | None = None  # the label of the last solution code cell, until a code cell

    def unique(grade_id: str) -> str:
        grade_id = re.sub(r"[^A-Za-z0-9_-]", "-", grade_id)[:60]
        candidate, n = grade_id, 1
        while candidate in ids:
            n += 1
            candidate = f"{grade_id}-{n}"
        ids.add(candidate)
        return candidate

    def add(cell: nbformat.NotebookNode, grade_id: str, **nbgrader) -> None:
        cell.id = unique(grade_id)
        cell.metadata["nbgrader"] = _nbgrader(cell.id, **nbgrader)
        cells.append(cell)

    for index, cell in enumerate(nb.cells):
        where = f"{name}, cell {index + 1}"
        tags = list(cell.metadata.get("tags", []))
        metadata = {key: value for key, value in cell.metadata.items() if key != "nbgrader"}
        if cell.cell_type == "code":
            if SOLUTION_TAG in tags:
                part = splitter.part if splitter.gated else splitter.new_part()
                label = metadata.get("exercise") or (splitter.label if splitter.gated else None)
                following = _next_code_cell(nb.cells, index)
                names = needed_names(cell.source, following.source) if following is not None else []
                comment, message = _stub_parts(label, names)
                source = f"{comment}{BEGIN}\n{cell.source.rstrip()}\n{END}"
                new = nbformat.v4.new_code_cell(source, metadata=metadata)
                new.metadata[_PART] = part
                new.metadata[_STUB] = f"raise NotImplementedError({json.dumps(message, ensure_ascii=False)})"
                add(new, f"{label or 'exercise'}-solution", solution=True)
                solutions += 1
                awaiting_check = label or ""
                continue
            if splitter.inside:
                raise StudentEditionError(
                    f"{where}: code cell inside a {{solution-start}}...{{solution-end}} block is "
                    f"not tagged `{SOLUTION_TAG}`; tag it, or move it after {{solution-end}}"
                )
            new = nbformat.v4.new_code_cell(cell.source, metadata=metadata)
            if awaiting_check is not None and _CHECK.search(cell.source):
                label = awaiting_check or "exercise"
                add(new, f"{label}-check", grade=True, locked=True, points=points.get(awaiting_check, 1))
            else:
                add(new, f"cell-{index + 1}", locked=True)
            awaiting_check = None
        elif cell.cell_type == "markdown":
            is_tagged = SOLUTION_TAG in tags
            plain = {key: value for key, value in metadata.items() if key != "tags"}
            if [t for t in tags if t != SOLUTION_TAG]:
                plain["tags"] = [t for t in tags if t != SOLUTION_TAG]
            for kind, part, text in splitter.split(cell.source, where, tagged=is_tagged):
                if not text.strip():
                    continue
                new = nbformat.v4.new_markdown_cell(text, metadata=dict(plain))
                if kind == "public":
                    add(new, f"cell-{index + 1}", locked=True)
                else:
                    new.metadata[_PART] = part
                    # nbgrader requires markdown answers to be graded: by hand, 0 points (the checks carry them)
                    add(new, f"{splitter.label or 'exercise'}-answer-{index + 1}", solution=True, grade=True, points=0)
        else:  # a raw cell: kept, or instructor-only text when it belongs to a solution
            if SOLUTION_TAG in tags or splitter.inside:
                part = splitter.part if splitter.inside else splitter.new_part()
                new = nbformat.v4.new_markdown_cell(cell.source)
                new.metadata[_PART] = part
                add(new, f"answer-{index + 1}", solution=True, grade=True, points=0)
            else:
                cells.append(cell)
    if splitter.inside:
        raise StudentEditionError(f"{name}: solution block not closed by the end of the notebook")
    source = nbformat.v4.new_notebook(metadata=copy.deepcopy(nb.metadata))
    source.metadata.pop("jupytext", None)  # not paired with the MyST sources
    source.cells = cells
    return source, solutions


def without_private_metadata(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """`nb` without the transient keys nbgrader_source() adds for the student edition."""
    for cell in nb.cells:
        cell.metadata.pop(_PART, None)
        cell.metadata.pop(_STUB, None)
    return nb


class _StudentStubs(ClearSolutions):
    """nbgrader's ClearSolutions with the stub of each code cell taken from its metadata:
    a NotImplementedError that names the exercise and what to define."""

    def _replace_solution_region(self, cell: nbformat.NotebookNode, language: str) -> bool:
        if cell.cell_type == "code" and _STUB in cell.metadata:
            self.code_stub = {language: cell.metadata[_STUB]}
        return super()._replace_solution_region(cell, language)


def make_student_notebook(nb: nbformat.NotebookNode, name: str = "notebook") -> tuple[nbformat.NotebookNode, int]:
    """Return the student edition of `nb` and the number of stub cells in it."""
    source, stubs = nbgrader_source(nb, name)
    language = source.metadata.setdefault("kernelspec", {}).get("language", "python")
    cleared, _ = _StudentStubs(text_stub=PLACEHOLDER, code_stub={language: ""}).preprocess(source, {})
    cells, placeholders = [], set()
    for cell in cleared.cells:
        part = cell.metadata.pop(_PART, None)
        cell.metadata.pop(_STUB, None)
        cell.metadata.pop("nbgrader", None)
        if part is not None and cell.cell_type == "markdown":
            if part in placeholders:
                continue  # one placeholder stands for a whole solution
            placeholders.add(part)
        if part is not None and cell.cell_type == "code":
            tags = cell.metadata.get("tags", [])
            cell.metadata["tags"] = [t for t in tags if t != SOLUTION_TAG] + [STUB_TAG]
        cells.append(cell)
    cleared.cells = cells
    return cleared, stubs


def _next_code_cell(cells: list, index: int) -> nbformat.NotebookNode | None:
    """The first code cell after `cells[index]`, unless it is itself a solution."""
    for cell in cells[index + 1:]:
        if cell.cell_type == "code":
            return None if SOLUTION_TAG in cell.metadata.get("tags", []) else cell
    return None


def is_chapter(nb: nbformat.NotebookNode) -> bool:
    return "kernelspec" in nb.metadata


def has_exercises(path: Path) -> bool:
    """Whether the MyST file has an `{exercise}` directive (not just the word)."""
    return _EXERCISE.search(path.read_text(encoding="utf-8") + "\n") is not None


def is_chapter_file(path: Path) -> bool:
    """Whether a MyST file is a chapter, read from its front matter without parsing the
    notebook (a kernelspec, as the Makefile's CHAPTERS; the same as :func:`is_chapter` of
    the notebook jupytext reads)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].rstrip() != "---":
        return False
    for line in lines[1:]:
        if line.rstrip() == "---":
            return False
        if line.startswith("kernelspec:"):
            return True
    return False


def chapter_paths() -> list[Path]:
    """The chapters in chapters/, sorted (:func:`is_chapter_file`)."""
    return [path for path in sorted((ROOT / "chapters").glob("*.md")) if is_chapter_file(path)]


def chapter_sources(sources: list[Path] | None = None) -> list[tuple[Path, nbformat.NotebookNode]]:
    """(path, notebook) of the given MyST files, or of every chapter in chapters/."""
    found = []
    for source in sources or chapter_paths():
        nb = jupytext.read(source)
        if is_chapter(nb):
            found.append((source, nb))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", type=Path, help="MyST chapters (default: chapters/*.md)")
    parser.add_argument("--out", type=Path, default=ROOT / "student", help="output folder (default: student/)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    written = 0
    for source, nb in chapter_sources(args.sources):
        student, stubs = make_student_notebook(nb, source.name)
        target = args.out / f"{source.stem}.ipynb"
        nbformat.validate(student)
        nbformat.write(student, target)
        print(f"{target}: {stubs} exercise stub(s)")
        written += 1
    if written == 0:
        print("no chapters found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except StudentEditionError as error:
        sys.exit(f"make_student: {error}")
