"""The student edition (scripts/make_student.py): solutions become stubs, prose solutions go."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

HEADER = """\
---
jupytext:
  formats: ipynb,md:myst
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---
"""

# A small chapter with the three ways a solution can appear: a gated sphinx-exercise
# block around a tagged code cell and tagged prose, a {solution} directive with prose
# only, and a tagged code cell without an `exercise` label.
SYNTHETIC = HEADER + textwrap.dedent(
    """
    # A synthetic chapter

    ```{code-cell} ipython3
    import math
    ```

    ```{exercise}
    :label: ex-answer

    Set `answer` to the square of 6.
    ```

    ````{solution-start} ex-answer
    :class: dropdown
    ````

    +++ {"tags": ["solution"]}

    SECRET-PROSE: square six.

    ```{code-cell} ipython3
    :exercise: ex-answer
    :tags: [solution, hide-output]

    answer = 6 ** 2  # SECRET-CODE
    ```

    Still part of the solution: SECRET-GATED.

    ```{solution-end}
    ```

    ```{code-cell} ipython3
    assert answer == 36, answer
    ```

    ```{exercise}
    :label: ex-prose

    Explain why $\\sqrt{2}$ is irrational.
    ```

    ```{solution} ex-prose
    :class: dropdown

    SECRET-DIRECTIVE: suppose $\\sqrt{2} = p/q$ in lowest terms.
    ```

    Kept text after the solutions.

    ```{code-cell} ipython3
    :tags: [solution]

    root = math.sqrt(2)  # SECRET-UNLABELLED
    ```

    ```{code-cell} ipython3
    assert abs(root**2 - 2) < 1e-12, root
    ```
    """
)


@pytest.fixture
def chapter(tmp_path: Path) -> Path:
    path = tmp_path / "chapters" / "ch99_synthetic.md"
    path.parent.mkdir()
    path.write_text(SYNTHETIC)
    return path


def build(chapter: Path, out: Path) -> nbformat.NotebookNode:
    assert make_student.main(["--out", str(out), str(chapter)]) == 0
    return nbformat.read(out / f"{chapter.stem}.ipynb", as_version=4)


def stubs(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if "exercise-stub" in c.metadata.get("tags", [])]


def test_solution_code_becomes_labelled_stub(chapter, tmp_path):
    nb = build(chapter, tmp_path / "student")
    labelled, unlabelled = stubs(nb)
    assert "Exercise ex-answer: write your solution in this cell" in labelled.source
    assert "NotImplementedError" in labelled.source
    assert labelled.metadata["tags"] == ["hide-output", "exercise-stub"]
    assert labelled.metadata["exercise"] == "ex-answer"
    assert "This exercise: write your solution in this cell" in unlabelled.source
    assert all(c.cell_type == "code" and not c.outputs for c in (labelled, unlabelled))


def test_solution_prose_is_removed(chapter, tmp_path):
    nb = build(chapter, tmp_path / "student")
    text = "\n".join(c.source for c in nb.cells)
    assert "SECRET" not in text, text
    assert "solution-start" not in text and "solution-end" not in text
    assert text.count(make_student.PLACEHOLDER) == 2, text  # one per removed solution
    assert "Set `answer` to the square of 6." in text and "Kept text after the solutions." in text
    assert "jupytext" not in nb.metadata and nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize(
    "body, message",
    [
        ("```{solution-start} ex\n```\n\n```{code-cell} ipython3\nx = 1\n```\n\n```{solution-end}\n```\n",
         "not tagged `solution`"),
        ("```{solution-start} ex\n```\n\nprose\n", "not closed"),
        ("```{solution-end}\n```\n", "without {solution-start}"),
    ],
)
def test_malformed_solutions_are_rejected(tmp_path, body, message):
    path = tmp_path / "bad.md"
    path.write_text(HEADER + "\n" + body)
    with pytest.raises(make_student.StudentEditionError, match=message):
        make_student.make_student_notebook(jupytext.read(path), path.name)


def test_stub_takes_the_gated_label_and_lists_what_the_check_needs(tmp_path):
    body = (
        "```{code-cell} ipython3\nimport math\n```\n\n"
        "```{solution-start} ex-gated\n:class: dropdown\n```\n\n"
        "```{code-cell} ipython3\n:tags: [solution]\n\nimport math\nhelper = 2\n"
        "def area(r):\n    return math.pi * r**helper\n```\n\n```{solution-end}\n```\n\n"
        "```{code-cell} ipython3\nassert abs(area(1.0) - math.pi) < 1e-12\n```\n"
    )
    path = tmp_path / "gated.md"
    path.write_text(HEADER + "\n" + body)
    nb, count = make_student.make_student_notebook(jupytext.read(path), path.name)
    (stub,) = stubs(nb)
    assert count == 1 and "exercise" not in stub.metadata
    with pytest.raises(NotImplementedError, match="^Exercise ex-gated: write your solution in this cell") as error:
        exec(stub.source, {})
    # the check cell uses `math` (a module: not announced) and `area`; `helper` stays inside the solution
    assert "defining area; then run the cell below, which checks it." in str(error.value)


def execute(nb: nbformat.NotebookNode, cwd: Path) -> None:
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()


def test_stub_raises_and_pasted_solution_runs(chapter, tmp_path):
    student = build(chapter, tmp_path / "student")
    with pytest.raises(CellExecutionError) as failure:
        execute(student, tmp_path)
    assert failure.value.ename == "NotImplementedError"
    assert "Exercise ex-answer: write your solution in this cell" in failure.value.evalue

    # Code cells keep their order, so the learner's "solution" can be pasted back by position.
    original = [c for c in jupytext.read(chapter).cells if c.cell_type == "code"]
    solved = nbformat.read(tmp_path / "student" / f"{chapter.stem}.ipynb", as_version=4)
    code = [c for c in solved.cells if c.cell_type == "code"]
    assert len(code) == len(original)
    for cell, source in zip(code, original):
        if "exercise-stub" in cell.metadata.get("tags", []):
            cell.source = source.source
    execute(solved, tmp_path)


def chapter_sources() -> list[Path]:
    return [p for p in sorted((ROOT / "chapters").glob("*.md")) if make_student.is_chapter(jupytext.read(p))]


def test_real_chapters(tmp_path):
    sources = chapter_sources()
    assert sources, "no chapters found in chapters/"
    assert make_student.main(["--out", str(tmp_path)]) == 0
    for source in sources:
        original = [c for c in jupytext.read(source).cells if c.cell_type == "code"]
        student = nbformat.read(tmp_path / f"{source.stem}.ipynb", as_version=4)
        code = [c for c in student.cells if c.cell_type == "code"]
        assert len(code) == len(original), source.name
        for before, after in zip(original, code):
            is_solution = "solution" in before.metadata.get("tags", [])
            is_stub = "exercise-stub" in after.metadata.get("tags", [])
            assert is_solution == is_stub, (source.name, before.source[:80])
            if is_stub:
                assert "raise NotImplementedError(" in after.source and before.source not in after.source
        n_solutions = sum("solution" in c.metadata.get("tags", []) for c in original)
        assert len(stubs(student)) == n_solutions, source.name
        text = "\n".join(c.source for c in student.cells if c.cell_type == "markdown")
        assert "{solution-start}" not in text and "{solution}" not in text, source.name


def test_chapters_are_found_from_the_front_matter(tmp_path):
    """is_chapter_file reads only the front matter and agrees with the parsed notebook on
    every page; a kernelspec line in the body does not make a chapter."""
    pages = sorted((ROOT / "chapters").glob("*.md"))
    found = [make_student.is_chapter_file(page) for page in pages]
    assert found == [make_student.is_chapter(jupytext.read(page)) for page in pages]
    assert any(found) and not all(found)  # chapters, and prose pages such as the notation
    assert make_student.chapter_paths() == [page for page, chapter in zip(pages, found) if chapter]
    body = tmp_path / "body.md"
    body.write_text("---\ntitle: not a chapter\n---\n\nkernelspec: in the text\n", encoding="utf-8")
    assert not make_student.is_chapter_file(body)
