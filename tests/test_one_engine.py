"""One engine per idea (issue #15), checked on the sources: fast, no execution.

Each test names the engine, where it lives, and the shape of the copy it rejects:

- random normal draws: only ``lecturekit/sampling.py`` calls ``jax.random.normal``; no chapter
  defines a function that draws normals (a sampler of its own);
- Gauss–Hermite nodes: only ``lecturekit/gaussian.py`` computes them (NumPy's ``hermgauss`` /
  ``hermegauss``, SciPy's ``roots_hermite``/``roots_hermitenorm``), in the library and in
  the chapters;
- gradient descent: outside ``lecturekit/training.py`` no loop (``for``/``while``, or a
  function handed to ``lax.scan``/``fori_loop``/``while_loop``) takes a gradient
  (``jax.grad``/``value_and_grad``/``jax.vjp``), in the library and in the chapters;
- Lanczos: only ``lecturekit/hessian.py`` runs a Lanczos iteration (a function named
  ``*lanczos*`` elsewhere may call it, but holds no loop);
- the backward pass of ``nets.MLP``: only ``lecturekit/nets.py`` defines a function named
  ``*backprop*``/``*backward*``.

A deliberate exception is listed in ``ALLOWED`` with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = sorted((ROOT / "lecturekit").rglob("*.py"))
PAGES = sorted((ROOT / "chapters").glob("*.md"))

LOOP_CALLEES = {"scan", "fori_loop", "while_loop"}
GRAD_CALLEES = {"grad", "value_and_grad", "vjp"}
HERMITE_NODES = {"hermgauss", "hermegauss", "roots_hermite", "roots_hermitenorm"}
# (relative path, function name) -> why this loop that takes gradients is not a second
# gradient-descent engine.
ALLOWED: dict[tuple[str, str], str] = {}


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _calls(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def _takes_gradient(node: ast.AST) -> bool:
    return any(_callee(call) in GRAD_CALLEES for call in _calls(node))


def _enclosing_functions(tree: ast.AST) -> dict[ast.AST, str]:
    """Map every node to the name of the outermost function that contains it ('' at top level)."""
    owner: dict[ast.AST, str] = {}

    def visit(node, name):
        for child in ast.iter_child_nodes(node):
            inner = name or (child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else "")
            owner[child] = inner
            visit(child, inner)

    visit(tree, "")
    return owner


def gradient_loops(tree: ast.AST) -> list[tuple[str, int]]:
    """(enclosing function, line) of every loop in ``tree`` that takes a gradient."""
    definitions = sorted((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)),
                         key=lambda n: n.lineno)

    def resolve(arg, line):  # a function passed by name: its closest definition above the call
        if not isinstance(arg, ast.Name):
            return arg
        above = [d for d in definitions if d.name == arg.id and d.lineno <= line]
        return above[-1] if above else None

    owner = _enclosing_functions(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and _takes_gradient(node):
            found.append((owner.get(node, ""), node.lineno))
        if isinstance(node, ast.Call) and _callee(node) in LOOP_CALLEES:
            bodies = [resolve(a, node.lineno) for a in node.args]
            if any(isinstance(b, (ast.FunctionDef, ast.Lambda)) and _takes_gradient(b)
                   for b in bodies):
                found.append((owner.get(node, ""), node.lineno))
    return found


def _library_tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), filename=str(path))


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _chapter_code(path: Path) -> list[tuple[int, ast.AST]]:
    cells = []
    for index, cell in enumerate(c for c in jupytext.read(path).cells if c.cell_type == "code"):
        source = "\n".join(line for line in cell.source.splitlines()
                           if not line.lstrip().startswith(("%", "!")))
        cells.append((index, ast.parse(source)))
    return cells


def _is_normal_draw(call: ast.Call) -> bool:
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "normal"
            and isinstance(func.value, ast.Attribute) and func.value.attr == "random")


# ------------------------------------------------------------------------------ library
def test_the_library_has_its_engines():
    for module in ("sampling", "gaussian", "training", "hessian", "nets"):
        assert (ROOT / "lecturekit" / f"{module}.py").is_file(), f"lecturekit/{module}.py is missing"


def test_one_sampler_in_the_library():
    offenders = [f"{_relative(p)}:{call.lineno}" for p in LIBRARY if p.name != "sampling.py"
                 for call in _calls(_library_tree(p)) if _is_normal_draw(call)]
    assert not offenders, ("random normal draws outside lecturekit/sampling.py "
                           "(use sampling.standard_normal):\n" + "\n".join(offenders))


def test_one_quadrature_rule():
    offenders = [f"{_relative(p)}:{call.lineno} {_callee(call)}" for p in LIBRARY
                 if p.name != "gaussian.py" for call in _calls(_library_tree(p))
                 if _callee(call) in HERMITE_NODES]
    offenders += [f"{_relative(p)} cell {i}: {_callee(call)}" for p in PAGES
                  for i, tree in _chapter_code(p) for call in _calls(tree)
                  if _callee(call) in HERMITE_NODES]
    assert not offenders, ("Gauss–Hermite nodes computed outside lecturekit/gaussian.py:\n"
                           + "\n".join(offenders))


def test_one_gradient_descent_loop_in_the_library():
    offenders = []
    for path in LIBRARY:
        if path.name == "training.py":
            continue
        for function, line in gradient_loops(_library_tree(path)):
            if (_relative(path), function) not in ALLOWED:
                offenders.append(f"{_relative(path)}:{line} in {function or 'module'}")
    assert not offenders, ("gradient loops outside lecturekit/training.py "
                           "(call training.descend):\n" + "\n".join(offenders))


def test_one_lanczos():
    offenders = []
    for path in LIBRARY:
        if path.name == "hessian.py":
            continue
        for node in ast.walk(_library_tree(path)):
            if isinstance(node, ast.FunctionDef) and "lanczos" in node.name.lower():
                loops = [n for n in ast.walk(node) if isinstance(n, (ast.For, ast.While))
                         or (isinstance(n, ast.Call) and _callee(n) in LOOP_CALLEES)]
                if loops:
                    offenders.append(f"{_relative(path)}:{node.lineno} {node.name}")
    assert not offenders, "Lanczos iterations outside lecturekit/hessian.py:\n" + "\n".join(offenders)


def test_one_backward_pass():
    offenders = [f"{_relative(p)}:{node.lineno} {node.name}" for p in LIBRARY if p.name != "nets.py"
                 for node in ast.walk(_library_tree(p)) if isinstance(node, ast.FunctionDef)
                 and any(word in node.name.lower() for word in ("backprop", "backward"))]
    assert not offenders, ("backward passes outside lecturekit/nets.py (use net.backward):\n"
                           + "\n".join(offenders))


# ------------------------------------------------------------------------------ chapters
@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_no_chapter_defines_a_sampler_or_a_gradient_loop(path):
    offenders = []
    for index, tree in _chapter_code(path):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)) and any(
                    _is_normal_draw(call) for call in _calls(node)):
                offenders.append(f"cell {index}: a function that draws normals (a sampler)")
        offenders += [f"cell {index}, line {line}: a loop that takes gradients"
                      for _, line in gradient_loops(tree)]
    assert not offenders, (f"{path.name}: use net.init_many / sampling.standard_normal and "
                           "training.descend:\n" + "\n".join(offenders))


# ------------------------------------------------------------------------------ the checks reject copies
COPIED_LOOP = """
def fit(loss, params, lr, steps):
    def step(p, _):
        g = jax.grad(loss)(p)
        return p - lr * g, None
    return jax.lax.scan(step, params, None, length=steps)[0]
"""
FORI_LOOP = """
grad = jax.grad(loss)
w = jax.lax.fori_loop(0, 100, lambda _, v: v - lr * grad(v), w)
"""
PYTHON_LOOP = """
for _ in range(10):
    params = params - 0.1 * jax.grad(loss)(params)
"""
NOT_A_LOOP = """
def step(p, _):
    return p - jax.grad(loss)(p), None
def recursion(r):
    def step(r, _):
        return 0.5 * r, r
    return jax.lax.scan(step, r, None, length=3)
g = jax.grad(loss)(params)
out = jax.lax.scan(lambda c, x: (c + x, None), 0.0, xs)
"""


def test_the_gradient_loop_check_finds_copies_and_only_copies():
    assert gradient_loops(ast.parse(COPIED_LOOP)) == [("fit", 6)]
    assert [line for _, line in gradient_loops(ast.parse(PYTHON_LOOP))] == [2]
    assert [line for _, line in gradient_loops(ast.parse(FORI_LOOP))] == [3]
    assert gradient_loops(ast.parse(NOT_A_LOOP)) == []
