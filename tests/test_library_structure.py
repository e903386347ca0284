"""The shape of lecturekit, read from its sources (fast, nothing executed).

- **Layers** (``../shared/DESIGN.md``): every module has a layer, and imports only from its
  own layer or below. 1: validation, activations, the sampler, Gaussian expectations,
  losses, small helpers; 2: the network description and the kernel recursion; 3: the
  engines (tangent kernels, Hessians, training, regression); 4: the chapter modules;
  5: plotting, exploration, the notebook helpers and the exercise checks. A chapter module
  may build on another chapter's model (catapult on quadratic), never on layer 5.
  A new module fails until it is given a layer here.
- **Private names stay private**: no module imports another module's ``_name`` (as
  ``from .m import _name`` or as ``m._name``). A package-private module (``_validation``,
  ``regions._networks``) holds names for the package, and those are public names.
- **Chapter modules use the engines**: a layer-4 module that differentiates (``jax.grad``,
  ``jvp``, ``jacrev``, ...) or draws random numbers (``jax.random.normal``, ...) itself is
  listed in ``OWN_DERIVATIVES`` / ``OWN_DRAWS`` with the reason; anything new fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lecturekit"
SOURCES = sorted(PACKAGE.rglob("*.py"))

LAYERS: dict[str, int] = {
    # 1: checks, elementwise functions, the one sampler, Gaussian expectations, helpers
    "__init__": 1,
    "_validation": 1,
    "activations": 1,
    "sampling": 1,
    "gaussian": 1,
    "losses": 1,
    "symbolic": 1,
    "stats": 1,
    "datasets": 1,
    "figure_checks": 1,
    # 2: networks and their infinite-width kernels
    "nets": 2,
    "kernels": 2,
    # 3: the engines
    "tangent": 3,
    "hessian": 3,
    "training": 3,
    "regression": 3,
    # 4: the chapter modules
    "criticality": 4,
    "quadratic": 4,
    "implicit_bias": 4,
    "regions": 4,
    "arrangements": 4,
    "shallow": 4,
    "heads": 4,
    "hessian_structure": 4,
    "kernel_change": 4,
    "linearity": 4,
    "catapult": 4,
    "feature_learning": 4,
    "loss_hessian": 4,
    "collapse": 4,
    "path_counting": 4,
    "random_matrices": 4,
    "deep_linear": 4,
    "gp": 4,
    "approximation": 4,
    # 5: figures, widgets, notebook set-up, exercise checks
    "plotting": 5,
    "explore": 5,
    "notebook": 5,
    "exercises": 5,
}

DERIVATIVES = {"grad", "value_and_grad", "jacfwd", "jacrev", "jacobian", "hessian", "jvp",
               "vjp", "linearize", "linear_transpose"}
KEY_HANDLING = {"key", "PRNGKey", "split", "fold_in", "key_data", "wrap_key_data", "clone",
                "key_impl"}

# layer-4 module -> why it takes derivatives with JAX itself rather than through
# tangent / hessian / training
OWN_DERIVATIVES: dict[str, str] = {
    "heads": "the Jacobian of an output head g (softmax, ...) with respect to the network's "
    "outputs, a k x k' matrix per example, chained into the network's own per-layer "
    "terms; no derivative in the parameters is taken here",
}
# layer-4 module -> why it draws random numbers itself rather than through sampling
OWN_DRAWS: dict[str, str] = {}


def _module(path: Path) -> str:
    """'regions/line' for lecturekit/regions/line.py; the top-level name is the layer key."""
    return path.relative_to(PACKAGE).with_suffix("").as_posix()


def _top(module: str) -> str:
    return module.split("/")[0]


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _imports(path: Path, tree: ast.AST | None = None) -> list[tuple[str, list[str], int]]:
    """(imported lecturekit module, imported names, line) for every relative import."""
    module = _module(path)
    package = module.split("/")[:-1]
    found = []
    for node in ast.walk(tree or _tree(path)):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = package[: len(package) - (node.level - 1)]
            if node.module is None:  # from . import nets as _nets
                for alias in node.names:
                    found.append(("/".join([*base, alias.name]), [], node.lineno))
            else:
                target = "/".join([*base, *node.module.split(".")])
                found.append((target, [a.name for a in node.names], node.lineno))
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_aliases(path: Path, tree: ast.AST) -> dict[str, str]:
    """Local name -> lecturekit module, for ``from . import x as _x``."""
    module = _module(path)
    package = module.split("/")[:-1]
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0 and node.module is None:
            base = package[: len(package) - (node.level - 1)]
            for alias in node.names:
                aliases[alias.asname or alias.name] = "/".join([*base, alias.name])
    return aliases


def private_name_uses(path: Path, source: str | None = None) -> list[str]:
    """Every use in ``path`` (or in ``source`` placed there) of another module's private name."""
    module = _module(path)
    tree = _tree(path) if source is None else ast.parse(source)
    out = []
    for target, names, line in _imports(path, tree):
        if target == module:
            continue
        out += [f"line {line}: from {target} import {n}" for n in names if _is_private(n)]
    aliases = _module_aliases(path, tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and _is_private(node.attr)):
            out.append(f"line {node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return out


def _jax_calls(path: Path, names: set[str], *, random: bool) -> list[str]:
    """Lines calling jax.<name> (random=False) or jax.random.<draw> (random=True)."""
    out = []
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner, attr = node.func.value, node.func.attr
        if random:
            if (isinstance(owner, ast.Attribute) and owner.attr == "random"
                    and isinstance(owner.value, ast.Name) and owner.value.id == "jax"
                    and attr not in KEY_HANDLING):
                out.append(f"line {node.lineno}: jax.random.{attr}")
        elif isinstance(owner, ast.Name) and owner.id == "jax" and attr in names:
            out.append(f"line {node.lineno}: jax.{attr}")
    return out


# ------------------------------------------------------------------------------ layers
def test_every_module_has_a_layer():
    missing = sorted({_top(_module(p)) for p in SOURCES} - set(LAYERS))
    assert not missing, f"give these modules a layer in LAYERS: {missing}"


@pytest.mark.parametrize("path", SOURCES, ids=_module)
def test_imports_go_down(path):
    own = LAYERS[_top(_module(path))]
    upward = [f"line {line}: {target} (layer {LAYERS[_top(target)]})"
              for target, _, line in _imports(path)
              if _top(target) in LAYERS and LAYERS[_top(target)] > own]
    assert not upward, f"{_module(path)} (layer {own}) imports from above:\n" + "\n".join(upward)


def test_no_import_cycles():
    graph = {_module(p): {t for t, _, _ in _imports(p) if (PACKAGE / f"{t}.py").is_file()
                          or (PACKAGE / t / "__init__.py").is_file()} for p in SOURCES}
    state: dict[str, int] = {}

    def visit(node, trail):
        if state.get(node) == 1:
            raise AssertionError("import cycle: " + " -> ".join([*trail, node]))
        if state.get(node) == 2:
            return
        state[node] = 1
        for nxt in graph.get(node, ()):
            visit(nxt, [*trail, node])
        state[node] = 2

    for node in graph:
        visit(node, [])


# ------------------------------------------------------------------------------ private names
@pytest.mark.parametrize("path", SOURCES, ids=_module)
def test_no_private_names_across_modules(path):
    uses = private_name_uses(path)
    assert not uses, (f"{_module(path)} uses private names of other modules (make the "
                      "engine function public, or move the helper):\n" + "\n".join(uses))


# ------------------------------------------------------------------------------ engines
CHAPTER_MODULES = [p for p in SOURCES if LAYERS[_top(_module(p))] == 4]


@pytest.mark.parametrize("path", CHAPTER_MODULES, ids=_module)
def test_chapter_modules_differentiate_through_the_engines(path):
    key = _module(path)
    calls = _jax_calls(path, DERIVATIVES, random=False)
    if key in OWN_DERIVATIVES:
        assert calls, f"{key} is listed in OWN_DERIVATIVES but takes no derivative: remove it"
        return
    assert not calls, (f"{key} takes derivatives itself; use tangent / hessian / training, "
                       "or list it in OWN_DERIVATIVES with the reason:\n" + "\n".join(calls))


@pytest.mark.parametrize("path", CHAPTER_MODULES, ids=_module)
def test_chapter_modules_draw_through_the_sampler(path):
    key = _module(path)
    calls = _jax_calls(path, set(), random=True)
    if key in OWN_DRAWS:
        assert calls, f"{key} is listed in OWN_DRAWS but draws nothing: remove it"
        return
    assert not calls, (f"{key} draws random numbers itself; use lecturekit.sampling, or "
                       "list it in OWN_DRAWS with the reason:\n" + "\n".join(calls))


# ------------------------------------------------------------------------------ the checks reject
PRIVATE_IMPORT = "from .training import _descend\n"
PRIVATE_ATTRIBUTE = "from . import hessian as _hessian\nx = _hessian._top_eigenvalue(f)\n"
PUBLIC = "from . import hessian as _hessian\nfrom ._validation import check_real\nx = _hessian.top_eigenvalue(f)\n"


def test_the_private_name_check_rejects_both_spellings():
    where = PACKAGE / "catapult.py"  # the snippets are read as if they were this module
    assert len(private_name_uses(where, PRIVATE_IMPORT)) == 1
    assert len(private_name_uses(where, PRIVATE_ATTRIBUTE)) == 1
    assert private_name_uses(where, PUBLIC) == []


# ------------------------------------------------------------------------------ rendered docs
PRIVATE_ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|obj):`~?[\w.]*?(?:^|\.)_[a-z]\w*`")


def test_rendered_docstrings_link_no_private_name():
    """The API reference renders module docstrings and public names' docstrings; a role
    pointing at a private name there cannot resolve, and the nitpicky build fails on it
    (ten minutes later). Private functions' own docstrings are not rendered."""
    found = []
    for path in SOURCES:
        tree = _tree(path)
        docs = [(1, ast.get_docstring(tree, clean=False) or "")]
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not _is_private(node.name):
                docs.append((node.lineno, ast.get_docstring(node, clean=False) or ""))
        found += [f"{_module(path)}:{line}: {m.group(0)}" for line, doc in docs
                  for m in PRIVATE_ROLE.finditer(doc)]
    assert not found, "links to private names in rendered docstrings:\n" + "\n".join(found)
