#!/usr/bin/env python3
"""Write the student edition of the chapters: notebooks with the exercise solutions removed.

    python scripts/make_student.py [--out student] [chapters/chNN_name.md ...]

Reads the MyST chapters (default: every `chapters/*.md` with a kernelspec) with jupytext and
writes `<out>/<name>.ipynb` where
- each code cell tagged `solution` becomes a stub that raises NotImplementedError with a
  message naming the exercise (cell metadata key `exercise`, else the label of the enclosing
  `{solution-start}` block) and the names the next code cell needs from it (the names the
  solution defines at top level, imports aside, and that cell uses); its tags are kept,
  with `solution` replaced by `exercise-stub`;
- solution prose is removed: markdown cells tagged `solution`, the text of `{solution}`
  directives, and everything between `{solution-start}` and `{solution-end}`
  (sphinx-exercise gated solutions). Each removed solution leaves one line
  "*(Solution removed in the student edition.)*".
A code cell inside a gated solution block must be tagged `solution` (otherwise its code
would be given away); the script stops with an error naming the cell if it is not.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTION_TAG = "solution"
STUB_TAG = "exercise-stub"
PLACEHOLDER = "*(Solution removed in the student edition.)*"

_OPEN = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|:{3,})\{(?P<name>solution-start|solution-end|solution)\}(?P<argument>.*)$"
)


class StudentEditionError(ValueError):
    """A chapter's solutions cannot be removed safely (malformed or untagged solution)."""


def stub_source(label: str | None, names: list[str] | tuple[str, ...] = ()) -> str:
    """Source of the code cell that replaces a solution cell.

    `names` are the variables or functions the following (check) cell needs from it.
    """
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


class _Remover:
    """Removes solution text from a sequence of markdown cells, tracking gated blocks."""

    def __init__(self) -> None:
        self.gated = False  # between {solution-start} and {solution-end}
        self.label: str | None = None  # the exercise label given to the current {solution-start}
        self.fence: str | None = None  # inside a solution directive's fence
        self.after_fence_gated = False
        self.placeholder_shown = False  # one placeholder stands for the current solution

    def placeholder(self) -> list[str]:
        if self.placeholder_shown:
            return []
        self.placeholder_shown = True
        return [PLACEHOLDER]

    def content_kept(self) -> None:
        self.placeholder_shown = False

    @property
    def inside(self) -> bool:
        return self.gated or self.fence is not None

    def markdown(self, text: str, where: str, keep: bool = True) -> str:
        """Return `text` without its solution blocks; with keep=False only track the blocks."""
        out: list[str] = []
        for line in text.splitlines():
            if self.fence is not None:
                if _closes(line, self.fence):
                    self.fence, self.gated = None, self.after_fence_gated
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
                    out.extend(self.placeholder())
                    self.after_fence_gated = name == "solution-start"
                    if self.after_fence_gated:
                        self.label = match["argument"].strip() or None
                self.fence = match["fence"]
                continue
            if self.gated or not keep:
                continue
            out.append(line)
            if line.strip():
                self.content_kept()
        return "\n".join(out).strip("\n")


def make_student_notebook(nb: nbformat.NotebookNode, name: str = "notebook") -> tuple[nbformat.NotebookNode, int]:
    """Return the student edition of `nb` and the number of stub cells in it."""
    remover = _Remover()
    cells = []
    stubs = 0
    for index, cell in enumerate(nb.cells):
        where = f"{name}, cell {index + 1}"
        tags = list(cell.metadata.get("tags", []))
        is_solution = SOLUTION_TAG in tags
        if cell.cell_type == "code":
            if is_solution:
                metadata = dict(cell.metadata)
                metadata["tags"] = [t for t in tags if t != SOLUTION_TAG] + [STUB_TAG]
                label = metadata.get("exercise") or (remover.label if remover.gated else None)
                following = _next_code_cell(nb.cells, index)
                names = needed_names(cell.source, following.source) if following is not None else []
                cells.append(nbformat.v4.new_code_cell(stub_source(label, names), metadata=metadata))
                stubs += 1
                continue
            if remover.inside:
                raise StudentEditionError(
                    f"{where}: code cell inside a {{solution-start}}...{{solution-end}} block is "
                    f"not tagged `{SOLUTION_TAG}`; tag it, or move it after {{solution-end}}"
                )
            remover.content_kept()
            cells.append(cell)
            continue
        if cell.cell_type == "markdown":
            text = remover.markdown(cell.source, where, keep=not is_solution)
        elif is_solution or remover.inside:  # a raw cell that belongs to a solution
            text = ""
        else:
            text = cell.source
            remover.content_kept()
        if is_solution or (cell.cell_type != "markdown" and remover.inside):
            text = "\n".join(remover.placeholder())
            tags = [t for t in tags if t != SOLUTION_TAG]
            cell = nbformat.v4.new_markdown_cell(text, metadata={**cell.metadata, "tags": tags})
            if not tags:
                del cell.metadata["tags"]
        if text.strip():
            cell.source = text
            cells.append(cell)
    if remover.inside:
        raise StudentEditionError(f"{name}: solution block not closed by the end of the notebook")
    nb.cells = cells
    nb.metadata.pop("jupytext", None)  # the student copy is not paired with the sources
    return nb, stubs


def _next_code_cell(cells: list, index: int) -> nbformat.NotebookNode | None:
    """The first code cell after `cells[index]`, unless it is itself a solution."""
    for cell in cells[index + 1:]:
        if cell.cell_type == "code":
            return None if SOLUTION_TAG in cell.metadata.get("tags", []) else cell
    return None


def is_chapter(nb: nbformat.NotebookNode) -> bool:
    return "kernelspec" in nb.metadata


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", type=Path, help="MyST chapters (default: chapters/*.md)")
    parser.add_argument("--out", type=Path, default=ROOT / "student", help="output folder (default: student/)")
    args = parser.parse_args(argv)
    sources = args.sources or sorted((ROOT / "chapters").glob("*.md"))
    args.out.mkdir(parents=True, exist_ok=True)
    written = 0
    for source in sources:
        nb = jupytext.read(source)
        if not is_chapter(nb):
            continue
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
