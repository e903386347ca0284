"""The real chapters' student editions: stubs explain themselves and check cells reach real checks.

Cheap by design: the student notebooks are built in memory and only the stub cells are
executed (each alone, in a fresh namespace); the check cells are parsed, not run (running a
chapter takes about a minute; `make test` runs the chapters with their solutions under nbval).
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import importlib.util
import inspect
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)



@functools.lru_cache(maxsize=None)
def read(chapter: Path):
    return jupytext.read(chapter)


# the executable pages that set exercises (chapters, and appendices such as appendix_fast)
CHAPTERS = [p for p in make_student.chapter_paths() if "{exercise}" in p.read_text()]


def check_module(stem: str) -> str:
    """The lecturekit.exercises module of a page: ch03_transition... -> ch03, appendix_fast -> fast."""
    match = re.fullmatch(r"(ch\d\d)_\w+|appendix_(\w+)", stem)
    assert match, f"{stem}: no exercise-check module name for this page"
    return match[1] or match[2]
STUB_MESSAGE = re.compile(r"^Exercise (?P<label>\S+): write your solution in this cell \(see the exercise text above\)")
EXERCISE_LABEL = re.compile(r"^`{3,}\{exercise\}[^\n]*\n(?::[a-z-]+:[^\n]*\n)*?:label:\s*(\S+)", re.MULTILINE)


def code_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def is_stub(cell) -> bool:
    return make_student.STUB_TAG in cell.metadata.get("tags", [])


@functools.lru_cache(maxsize=None)
def editions(chapter: Path):
    """(original code cells, student code cells), aligned: make_student keeps code cells in order."""
    original = code_cells(read(chapter))
    student, _ = make_student.make_student_notebook(copy.deepcopy(read(chapter)), chapter.name)
    student = code_cells(student)
    assert len(original) == len(student), chapter.name
    return original, student


def check_calls(source: str):
    """The calls `<...>.chNN.check_name(...)` in a cell: (module name, function name, call node)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("check_"):
            owner = node.func.value
            module = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
            yield module, node.func.attr, node


def bound_names(source: str) -> set[str]:
    """Names a cell binds at top level by `def` or assignment."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


@pytest.fixture(params=CHAPTERS, ids=lambda p: p.stem)
def chapter(request) -> Path:
    return request.param


def test_chapters_have_exercise_stubs():
    assert len(CHAPTERS) >= 6, CHAPTERS
    for path in CHAPTERS:
        assert any(is_stub(cell) for cell in editions(path)[1]), f"{path.name} has no coding exercise"


def test_stubs_raise_a_helpful_not_implemented_error(chapter):
    labels = EXERCISE_LABEL.findall(chapter.read_text())
    assert labels, f"no {{exercise}} with a :label: in {chapter.name}"
    original, student = editions(chapter)
    for index, cell in enumerate(student):
        if not is_stub(cell):
            continue
        with pytest.raises(NotImplementedError) as stub:
            exec(compile(cell.source, f"<{chapter.stem} stub {index}>", "exec"), {})  # a fresh namespace
        message = str(stub.value)
        match = STUB_MESSAGE.match(message)
        assert match, message
        assert match["label"] in labels, (match["label"], labels)
        # what the check call takes from the solution is announced; nothing of the solution leaks
        following = student[index + 1].source if index + 1 < len(student) and not is_stub(student[index + 1]) else ""
        needed = [arg.id for _, _, call in check_calls(following) for arg in call.args
                  if isinstance(arg, ast.Name) and arg.id in bound_names(original[index].source)]
        for name in needed:
            assert re.search(rf"\b{re.escape(name)}\b", message), (name, message)
        if needed:
            assert "then run the cell below, which checks it" in message, message
        assert original[index].source.strip() not in cell.source


def test_check_cells_call_existing_checks(chapter):
    number = check_module(chapter.stem)
    module = importlib.import_module(f"lecturekit.exercises.{number}")
    original, student = editions(chapter)
    calls = []
    for index, cell in enumerate(student):
        if not is_stub(cell) or index + 1 == len(student) or is_stub(student[index + 1]):
            continue
        for owner, name, node in check_calls(student[index + 1].source):
            assert owner == number, f"{chapter.name} calls {owner}.{name}, not a check of {number}"
            check = getattr(module, name, None)
            assert callable(check), f"{chapter.name}: lecturekit.exercises.{number} has no {name}"
            placeholders = [None] * len(node.args)
            inspect.signature(check).bind(*placeholders, **{kw.arg: None for kw in node.keywords})
            calls.append(name)
    # every check of the chapter's module is reached from a cell that follows a stub
    defined = sorted(name for name in dir(module) if name.startswith("check_"))
    assert sorted(calls) == defined, (calls, defined)
