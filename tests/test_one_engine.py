"""One engine per idea (issues #15 and #28), checked on the sources: fast, no execution.

Two allowlists, in ``tests/one_engine_allowlist.py``, name every exception with its reason:

- ``DERIVATIVE_LOOPS``: every loop that takes a derivative. Gradient descent and its
  relatives belong to the engines of layer 3 (``training``, ``tangent``, ``hessian``,
  ``regression``); a loop elsewhere that takes a derivative is a second engine unless
  the list says why it is not;
- ``RANDOM_SITES``: every random-number draw outside ``lecturekit/sampling.py``.

Both are checked in the library (each ``lecturekit/**/*.py`` one unit) and in the
chapters (all code cells of one ``chapters/*.md`` together one unit). A site is keyed
by (relative path, top-level function or ``Class.method``, ``<module>`` at module
level), or for a chapter by (chapter stem, top-level function, or the first name the
cell assigns). A new site fails until it is listed or moved into its engine; an entry
that matches no site fails too, so the lists stay true.

What counts as a loop that takes a derivative (on the ideas, not on code shapes):

- a loop is a ``for``/``while`` statement, a comprehension or generator expression, a
  call of ``lax.scan``/``fori_loop``/``while_loop``/``lax.map``/``associative_scan``,
  ``functools.reduce``, builtin ``map``, ``itertools.accumulate``/``starmap``, an ODE
  integrator (``solve_ivp``, ``odeint``), ``scipy.optimize.minimize``, a recursive
  function, or a call that hands a derivative-taking function to a loop of the unit's
  own (a home-made ``iterate(step, ...)``). A function argument counts whether it is
  given by position or by keyword (``scan(f=step)``), wrapped (``partial``, ``jit``,
  ``vmap``) or written as a lambda;
- it takes a derivative when its body (or the function it hands over) refers to a
  derivative operator of JAX (``grad``, ``value_and_grad``, ``vjp``, ``jvp``,
  ``jacrev``, ``jacfwd``, ``jacobian``, ``hessian``, ``linearize``,
  ``linear_transpose``; as ``jax.grad``, after ``from jax import grad``, or under an
  alias), to a name bound anywhere in the unit to a derivative function
  (``g = jax.grad(loss)``, ``step = jax.jit(step_fn)``, ``_, pullback = jax.vjp(f, x)``,
  ``@jax.grad def ...``, ``step = make_step(loss)`` for a factory that returns one,
  ``step = Step()`` for a class whose ``__call__`` takes one), or to a function or
  method of the unit whose body takes a derivative, directly or through the unit's
  own calls (a fixed point). Names are resolved by Python's scopes (a parameter
  ``step`` is not the module's ``step``); a value (``g = jax.grad(loss)(p)``) is not
  a derivative function. Imports are not followed: calling an engine
  (``training.descend``) in a sweep is using it. Hand-written gradients (NumPy
  formulas) are invisible to this check.

Random-number sites: any reference to a drawing function of ``jax.random`` (all but
key handling) however it is imported, anything in ``numpy.random`` (a generator made
is a site; its draws follow from it), the standard library's ``random`` and SciPy's
``.rvs``.

The other engines are checked by shape: Gauss–Hermite nodes only in
``lecturekit/gaussian.py``, a Lanczos iteration (a function named ``*lanczos*`` that
holds a loop statement or a loop call) only in ``lecturekit/hessian.py``, the backward
pass of ``nets.MLP`` (a function named ``*backprop*``/``*backward*``) only in
``lecturekit/nets.py``.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import jupytext
import pytest
from one_engine_allowlist import DERIVATIVE_LOOPS, RANDOM_SITES

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = sorted((ROOT / "lecturekit").rglob("*.py"))
PAGES = sorted((ROOT / "chapters").glob("*.md"))

# ------------------------------------------------------------------------ vocabulary
_OPERATORS = (
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "jacobian",
    "hessian",
    "linearize",
    "linear_transpose",
)
DERIVATIVES = frozenset(f"jax.{name}" for name in _OPERATORS)
# Operators whose result is a derivative function; vjp and linearize return a tuple
# whose second element is one (jvp returns values only).
RETURNS_FUNCTION = frozenset(f"jax.{name}" for name in _OPERATORS if name != "jvp")
RETURNS_PAIR = frozenset({"jax.vjp", "jax.linearize"})
# Calls that return their function argument wrapped: a wrapped derivative is one too.
WRAPPERS = frozenset(
    {
        "jax.jit",
        "jax.vmap",
        "jax.pmap",
        "jax.checkpoint",
        "jax.remat",
        "jax.named_call",
        "jax.tree_util.Partial",
        "functools.partial",
        "partial",
        "staticmethod",
        "classmethod",
        "functools.wraps",
        "functools.cache",
        "functools.lru_cache",
    }
)
# Loops written as calls: qualified name -> (positions, keywords) of the function
# arguments the loop calls again and again.
LOOP_CALLS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "jax.lax.scan": ((0,), ("f",)),
    "jax.lax.fori_loop": ((2,), ("body_fun",)),
    "jax.lax.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "jax.lax.map": ((0,), ("f",)),
    "jax.lax.associative_scan": ((0,), ("fn",)),
    "functools.reduce": ((0,), ("function",)),
    "reduce": ((0,), ("function",)),
    "map": ((0,), ("func",)),
    "itertools.accumulate": ((1,), ("func",)),
    "itertools.starmap": ((0,), ("function",)),
    "scipy.integrate.solve_ivp": ((0,), ("fun", "jac")),
    "scipy.integrate.odeint": ((0,), ("func", "Dfun")),
    "jax.experimental.ode.odeint": ((0,), ("func",)),
    "scipy.optimize.minimize": ((0,), ("fun", "jac", "hess", "hessp")),
}
# Names distinctive enough to be JAX's loops under any prefix (``lax.scan`` in a
# snippet without its import).
LOOP_NAMES = {
    "scan": "jax.lax.scan",
    "fori_loop": "jax.lax.fori_loop",
    "while_loop": "jax.lax.while_loop",
}
# jax.random without its draws.
KEY_HANDLING = frozenset(
    {
        "key",
        "PRNGKey",
        "split",
        "fold_in",
        "key_data",
        "wrap_key_data",
        "clone",
        "key_impl",
        "default_prng_impl",
        "KeyArray",
        "PRNGKeyArray",
    }
)
HERMITE_NODES = {"hermgauss", "hermegauss", "roots_hermite", "roots_hermitenorm"}
MODULE_LEVEL = "<module>"


def is_random_draw(qualified: str) -> bool:
    """True if ``qualified`` (imports resolved) names a source of random numbers."""
    parts = qualified.split(".")
    if parts[:2] == ["jax", "random"]:
        return len(parts) == 3 and parts[2] not in KEY_HANDLING
    if parts[:2] == ["numpy", "random"]:
        return len(parts) > 2
    if parts[:2] == ["scipy", "stats"]:
        return parts[-1] == "rvs"
    return parts[0] == "random" and len(parts) > 1


# ------------------------------------------------------------------------ units
@dataclass(frozen=True)
class Site:
    key: tuple[str, str]  # (path or chapter stem, owner): the allowlists' key
    where: str  # "line 12" or "cell 3, line 4"
    what: str  # "for loop", "jax.lax.scan", "jax.random.normal", ...


@dataclass(frozen=True)
class _Refs:
    """What a piece of code refers to: its names (each resolved to the scope that binds
    it, as ``(scope, name)``) and dotted names (``self.step``), the same with imports
    resolved, and attributes of objects that are not imports (candidate methods)."""

    names: frozenset
    qualified: frozenset[str]
    attributes: frozenset[str]


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _loop_parts(node: ast.AST) -> tuple[str, list[ast.AST]] | None:
    """(kind, the parts evaluated again and again) of a loop statement or comprehension."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return "for loop", node.body + node.orelse
    if isinstance(node, ast.While):
        return "while loop", [node.test, *node.body, *node.orelse]
    if isinstance(node, tuple(_COMPREHENSIONS)):
        heads = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        first, *rest = node.generators
        return _COMPREHENSIONS[type(node)], [*heads, *first.ifs, *rest]
    return None


_COMPREHENSIONS = {
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.GeneratorExp: "generator expression",
    ast.DictComp: "dict comprehension",
}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MODULE = 0  # the module scope (one for all cells of a chapter)


class Unit:
    """One library module or all code cells of one chapter, parsed once.

    Names are resolved to the scope that binds them, as Python does (a parameter
    ``step`` is not the module's ``step``); attributes (``self.step``) by name only.
    """

    def __init__(
        self,
        name: str,
        cells: list[tuple[int | None, ast.Module]],
        module_owner: bool = True,
    ):
        self.name = name
        self.cells = cells
        self.owner: dict[ast.AST, str] = {}
        self.where: dict[ast.AST, str] = {}
        for index, tree in cells:
            fallback = MODULE_LEVEL if module_owner else _cell_name(tree, index)
            self._assign_owners(tree, index, fallback)
        self._scopes()
        self.aliases = self._aliases()
        self._refs_cache: dict[int, _Refs] = {}
        self._taint()

    @classmethod
    def from_source(cls, source: str, name: str = "snippet") -> Unit:
        return cls(name, [(None, ast.parse(source))])

    def nodes(self) -> list[ast.AST]:
        if not hasattr(self, "_nodes"):
            self._nodes = [node for _, tree in self.cells for node in ast.walk(tree)]
        return self._nodes

    # -- where a node is
    def _assign_owners(self, tree: ast.Module, index: int | None, fallback: str):
        def mark(node: ast.AST, owner: str):
            for sub in ast.walk(node):
                self.owner[sub] = owner
                line = getattr(sub, "lineno", None)
                if line is not None:
                    self.where[sub] = (
                        f"line {line}"
                        if index is None
                        else f"cell {index}, line {line}"
                    )

        for statement in tree.body:
            if isinstance(statement, _FUNCTIONS):
                mark(statement, statement.name)
            elif isinstance(statement, ast.ClassDef):
                mark(statement, statement.name)
                for item in statement.body:
                    if isinstance(item, _FUNCTIONS):
                        mark(item, f"{statement.name}.{item.name}")
            else:
                mark(statement, fallback)

    def _scopes(self):
        """The scope of every node, each scope's parent, kind and local names."""
        self.scope: dict[ast.AST, int] = {}
        self.parent: dict[int, int | None] = {_MODULE: None}
        self.kind: dict[int, str] = {_MODULE: "module"}
        self.locals: dict[int, set[str]] = {_MODULE: set()}
        declared: dict[int, set[str]] = {}

        def open_scope(node, scope, kind):
            self.parent[id(node)], self.kind[id(node)] = scope, kind
            self.locals[id(node)] = set()
            return id(node)

        def visit(node, scope):
            self.scope[node] = scope
            if isinstance(node, (*_FUNCTIONS, ast.Lambda)):
                inner = open_scope(node, scope, "function")
                if not isinstance(node, ast.Lambda):
                    self.locals[scope].add(node.name)
                    for outer in [*node.decorator_list, node.returns]:
                        if outer is not None:
                            visit(outer, scope)
                arguments = node.args
                for default in [*arguments.defaults, *arguments.kw_defaults]:
                    if default is not None:
                        visit(default, scope)
                for arg in [
                    *arguments.posonlyargs,
                    *arguments.args,
                    *arguments.kwonlyargs,
                    arguments.vararg,
                    arguments.kwarg,
                ]:
                    if arg is not None:
                        self.locals[inner].add(arg.arg)
                        self.scope[arg] = inner
                        if arg.annotation is not None:
                            visit(arg.annotation, scope)
                self.scope[arguments] = inner
                for statement in (
                    node.body if isinstance(node.body, list) else [node.body]
                ):
                    visit(statement, inner)
            elif isinstance(node, ast.ClassDef):
                inner = open_scope(node, scope, "class")
                self.locals[scope].add(node.name)
                for outer in [*node.bases, *node.keywords, *node.decorator_list]:
                    visit(outer, scope)
                for statement in node.body:
                    visit(statement, inner)
            elif isinstance(node, tuple(_COMPREHENSIONS)):
                inner = open_scope(node, scope, "comprehension")
                for i, generator in enumerate(node.generators):
                    self.scope[generator] = inner
                    visit(generator.iter, scope if i == 0 else inner)
                    for part in [generator.target, *generator.ifs]:
                        visit(part, inner)
                heads = (
                    [node.key, node.value]
                    if isinstance(node, ast.DictComp)
                    else [node.elt]
                )
                for head in heads:
                    visit(head, inner)
            else:
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    self.locals[scope].add(node.id)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    self.locals[scope].update(
                        (a.asname or a.name).partition(".")[0] for a in node.names
                    )
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    declared.setdefault(scope, set()).update(node.names)
                for child in ast.iter_child_nodes(node):
                    visit(child, scope)

        for _, tree in self.cells:
            visit(tree, _MODULE)
        for scope, names in declared.items():
            self.locals[scope] -= names

    def resolve(self, name: str, scope: int) -> tuple[int, str]:
        """``(scope, name)`` of the binding a name refers to from ``scope``: the
        innermost scope that binds it, skipping enclosing class bodies."""
        current, first = scope, True
        while current is not None:
            if (first or self.kind[current] != "class") and name in self.locals[
                current
            ]:
                return current, name
            current, first = self.parent[current], False
        return _MODULE, name

    def _key(self, node: ast.AST):
        """What a reference or a binding target is: ``(scope, name)`` for a name,
        the dotted name for an attribute chain, else None."""
        if isinstance(node, ast.Name):
            return self.resolve(node.id, self.scope[node])
        return _dotted(node)

    # -- imports
    def _aliases(self) -> dict[str, str]:
        """Local name -> what it names, from imports and from plain re-bindings of an
        imported name (``jr = jax.random``, ``g = jax.grad``)."""
        aliases: dict[str, str] = {}
        for node in self.nodes():
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.partition(".")[0]
                        aliases[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        rebindings = [
            (node.targets[0].id, node.value)
            for node in self.nodes()
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, (ast.Name, ast.Attribute))
        ]
        for _ in range(3):  # chains of re-bindings
            for name, value in rebindings:
                dotted = _dotted(value)
                root = dotted.partition(".")[0] if dotted else None
                if root in aliases and root != name:
                    aliases[name] = self._resolve_import(dotted, aliases)
        return aliases

    @staticmethod
    def _resolve_import(dotted: str, aliases: dict[str, str]) -> str:
        root, dot, rest = dotted.partition(".")
        return aliases.get(root, root) + dot + rest

    def qualified(self, node: ast.AST) -> str | None:
        """``jax.random.normal`` for ``jr.normal`` after ``import jax.random as jr``."""
        dotted = _dotted(node)
        return None if dotted is None else self._resolve_import(dotted, self.aliases)

    def refs(self, parts: list[ast.AST]) -> _Refs:
        names, qualified, attributes = set(), set(), set()
        for part in parts:
            for node in ast.walk(part):
                if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(
                    node.ctx, ast.Load
                ):
                    continue
                dotted = _dotted(node)
                if dotted is None:  # f(x).step, d["k"].step
                    attributes.add(node.attr)
                    continue
                names.add(self._key(node))
                qualified.add(self._resolve_import(dotted, self.aliases))
                if (
                    isinstance(node, ast.Attribute)
                    and dotted.partition(".")[0] not in self.aliases
                ):
                    attributes.add(node.attr)
        return _Refs(frozenset(names), frozenset(qualified), frozenset(attributes))

    def _cached_refs(self, node: ast.AST) -> _Refs:
        if id(node) not in self._refs_cache:
            self._refs_cache[id(node)] = self.refs([node])
        return self._refs_cache[id(node)]

    # -- derivatives
    def _taint(self):
        """Fixed point: the unit's names bound to derivative functions (its functions
        whose body takes a derivative among them), the methods among them, and the
        factories (such functions that return a function, and classes whose instances
        are such functions: ``__call__`` takes a derivative)."""
        self.derivative_names: set = set()
        self.derivative_methods: set[str] = set()
        self.factories: set = set()
        self.defs = [n for n in self.nodes() if isinstance(n, _FUNCTIONS)]
        self.looping_defs = {
            self._key_of_def(d)
            for d in self.defs
            if any(self._is_loop(n) for n in ast.walk(d))
        }
        returning = {
            self._key_of_def(d) for d in self.defs if self._returns_function(d)
        }
        classes = {id(n): n for n in self.nodes() if isinstance(n, ast.ClassDef)}
        bindings = self._bindings()
        changed = True
        while changed:
            changed = False
            for definition in self.defs:
                if self.takes_derivative(self._cached_refs(definition)):
                    key = self._key_of_def(definition)
                    changed |= self._add(key, definition.name)
                    if definition.name == "__call__" and self._in_class(key):
                        cls = classes[key[0]]
                        key = self.resolve(cls.name, self.scope[cls])
                    if (key in returning or definition.name == "__call__") and (
                        key not in self.factories
                    ):
                        self.factories.add(key)
                        changed = True
            for key, value in bindings:
                if self.is_derivative_function(value):
                    changed |= self._add(key, key[1] if self._in_class(key) else None)

    def _key_of_def(self, definition: ast.AST) -> tuple[int, str]:
        return self.resolve(definition.name, self.scope[definition])

    def _in_class(self, key) -> bool:
        return isinstance(key, tuple) and self.kind[key[0]] == "class"

    def _add(self, key, method: str | None) -> bool:
        """Record a derivative function (and a method's name); True if it is new."""
        new = key not in self.derivative_names
        self.derivative_names.add(key)
        if method and self._in_class(key) and method not in self.derivative_methods:
            self.derivative_methods.add(method)
            new = True
        return new

    def _bindings(self) -> list[tuple[object, ast.AST]]:
        """(key, value) of every binding in the unit; a tuple unpacked from a tuple binds
        element by element, and from ``jax.vjp``/``jax.linearize`` only the function."""
        found = []

        def bind(target, value):
            if isinstance(target, ast.Starred):
                target = target.value
            if isinstance(target, (ast.Tuple, ast.List)):
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                    target.elts
                ):
                    for t, v in zip(target.elts, value.elts):
                        bind(t, v)
                elif (
                    isinstance(value, ast.Call)
                    and len(target.elts) >= 2
                    and self.qualified(value.func) in RETURNS_PAIR
                ):
                    bind(target.elts[1], value)
                else:
                    for t in target.elts:
                        bind(t, value)
                return
            if isinstance(target, ast.Subscript):  # d["g"] = jax.grad(f)
                target = target.value
            key = self._key(target)
            if key is not None:
                found.append((key, value))

        for node in self.nodes():
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value:
                bind(node.target, node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                bind(node.target, node.iter)  # for g in (grad_f, grad_h): ...
        return found

    @staticmethod
    def _returns_function(definition: ast.AST) -> bool:
        inner = {
            n.name
            for n in ast.walk(definition)
            if n is not definition and isinstance(n, _FUNCTIONS)
        }
        for node in ast.walk(definition):
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                while isinstance(value, ast.Call) and value.args:  # jax.jit(step)
                    value = value.args[0]
                if isinstance(value, ast.Lambda) or (
                    isinstance(value, ast.Name) and value.id in inner
                ):
                    return True
        return False

    def takes_derivative(self, refs: _Refs) -> bool:
        return bool(
            refs.qualified & DERIVATIVES
            or refs.names & self.derivative_names
            or refs.attributes & self.derivative_methods
        )

    def is_derivative_function(self, node: ast.AST | None) -> bool:
        """True if the value of ``node`` is (or holds) a function that takes a
        derivative when called."""
        if isinstance(node, ast.Lambda):
            return self.takes_derivative(self._cached_refs(node))
        if isinstance(node, ast.Name):
            return (
                self.qualified(node) in DERIVATIVES
                or self._key(node) in self.derivative_names
            )
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted and (
                self.qualified(node) in DERIVATIVES or dotted in self.derivative_names
            ):
                return True
            return (
                dotted is None or dotted.partition(".")[0] not in self.aliases
            ) and node.attr in self.derivative_methods
        if isinstance(node, ast.Call):
            callee = self.qualified(node.func)
            if callee in RETURNS_FUNCTION:
                return True
            if callee in WRAPPERS:
                return any(self.is_derivative_function(a) for a in _arguments(node))
            return (
                isinstance(node.func, ast.Name)
                and self._key(node.func) in self.factories
            )
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(self.is_derivative_function(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.is_derivative_function(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self.is_derivative_function(
                node.body
            ) or self.is_derivative_function(node.orelse)
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self.is_derivative_function(node.value)
        return False

    # -- loops
    def loop_call(self, node: ast.AST) -> str | None:
        """The qualified name of a loop written as a call, else None."""
        if not isinstance(node, ast.Call):
            return None
        callee = self.qualified(node.func)
        if callee in LOOP_CALLS:
            return callee
        return LOOP_NAMES.get(callee.rpartition(".")[2]) if callee else None

    def _is_loop(self, node: ast.AST) -> bool:
        return _loop_parts(node) is not None or self.loop_call(node) is not None

    def is_iteration(self, node: ast.AST) -> bool:
        """A loop that can carry a state: a statement or a loop call, no comprehension."""
        return (
            isinstance(node, (ast.For, ast.AsyncFor, ast.While))
            or self.loop_call(node) is not None
        )

    def derivative_loops(self) -> list[Site]:
        found = []

        def site(node, what):
            found.append(Site((self.name, self.owner[node]), self.where[node], what))

        for node in self.nodes():
            parts = _loop_parts(node)
            if parts and self.takes_derivative(self.refs(parts[1])):
                site(node, parts[0])
            loop = self.loop_call(node)
            if loop and any(map(self.is_derivative_function, _looped(node, loop))):
                site(node, loop)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and self._key(node.func) in self.looping_defs
                and any(map(self.is_derivative_function, _arguments(node)))
            ):
                site(node, f"a derivative handed to {node.func.id}, which loops")
            if isinstance(node, _FUNCTIONS) and self._recurses_with_derivative(node):
                site(node, f"recursion of {node.name}")
        return found

    def _recurses_with_derivative(self, definition: ast.AST) -> bool:
        body = self.refs(definition.body)
        key = self._key_of_def(definition)
        if self._in_class(key):
            return definition.name in self.derivative_methods & body.attributes
        return key in self.derivative_names and key in body.names

    # -- randomness
    def random_sites(self) -> list[Site]:
        annotations = {id(n) for a in self._annotations() for n in ast.walk(a)}
        return [
            Site((self.name, self.owner[node]), self.where[node], qualified)
            for node in self.nodes()
            if isinstance(node, (ast.Name, ast.Attribute))
            and id(node) not in annotations
            and isinstance(node.ctx, ast.Load)
            and (qualified := self.qualified(node)) is not None
            and is_random_draw(qualified)
        ]

    def _annotations(self):
        """Type annotations (``rng: np.random.Generator`` names a type, draws nothing)."""
        for node in self.nodes():
            if isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation:
                yield node.annotation
            elif isinstance(node, _FUNCTIONS) and node.returns:
                yield node.returns


def _arguments(call: ast.Call) -> list[ast.AST]:
    return [*call.args, *(k.value for k in call.keywords)]


def _looped(call: ast.Call, loop: str) -> list[ast.AST]:
    """The arguments a loop call calls again and again (all of them after ``*args``)."""
    positions, keywords = LOOP_CALLS[loop]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return _arguments(call)
    return [a for i, a in enumerate(call.args) if i in positions] + [
        k.value for k in call.keywords if k.arg in keywords
    ]


def _cell_name(tree: ast.Module, index: int) -> str:
    """The first name a chapter cell assigns at its top level (else the first it
    defines), to key the cell's top-level loops and draws."""

    def assigned(statements):
        for statement in statements:
            if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                continue
            if isinstance(statement, ast.Assign):
                targets = statement.targets
            elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
                targets = [statement.target]
            else:
                targets = []
            for target in targets:
                yield from (
                    n.id
                    for n in ast.walk(target)
                    if isinstance(n, ast.Name) and n.id.strip("_")
                )
            for field in ("body", "orelse", "finalbody"):
                yield from assigned(getattr(statement, field, []))

    names = [*assigned(tree.body)]
    names += [s.name for s in tree.body if isinstance(s, (*_FUNCTIONS, ast.ClassDef))]
    return names[0] if names else f"cell {index}"


@functools.cache
def library_unit(path: Path) -> Unit:
    return Unit(
        _relative(path), [(None, ast.parse(path.read_text(), filename=str(path)))]
    )


@functools.cache
def chapter_unit(path: Path) -> Unit:
    cells = []
    code = (c for c in jupytext.read(path).cells if c.cell_type == "code")
    for index, cell in enumerate(code):
        source = "\n".join(
            line
            for line in cell.source.splitlines()
            if not line.lstrip().startswith(("%", "!"))
        )
        cells.append((index, ast.parse(source, filename=f"{path.name} cell {index}")))
    return Unit(path.stem, cells, module_owner=False)


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def all_units() -> list[Unit]:
    return [library_unit(p) for p in LIBRARY] + [chapter_unit(p) for p in PAGES]


@functools.cache
def derivative_loop_sites() -> tuple[Site, ...]:
    return tuple(site for unit in all_units() for site in unit.derivative_loops())


@functools.cache
def random_sites() -> tuple[Site, ...]:
    return tuple(
        site
        for unit in all_units()
        if unit.name != "lecturekit/sampling.py"
        for site in unit.random_sites()
    )


# ------------------------------------------------------------------------ the allowlists
def _unlisted(sites, allowed: dict, what: str, fix: str) -> str:
    missing: dict[tuple[str, str], list[Site]] = {}
    for site in sites:
        if site.key not in allowed:
            missing.setdefault(site.key, []).append(site)
    if not missing:
        return ""
    header = (
        f"{what} not in tests/one_engine_allowlist.py: {fix}, or add the entry "
        "with an honest reason:"
    )
    lines = [header]
    for key, found in missing.items():
        lines.append(f'    {key!r}: "why this is not a second engine",')
        lines += [f"        # {s.where}: {s.what}" for s in found]
    return "\n".join(lines)


def _stale(sites, allowed: dict, name: str) -> str:
    used = {site.key for site in sites}
    stale = [key for key in allowed if key not in used]
    if not stale:
        return ""
    return (
        f"entries of {name} that match no site any more (remove them):\n"
        + "\n".join(f"    {key!r}" for key in stale)
    )


def test_every_loop_that_takes_a_derivative_is_listed():
    message = _unlisted(
        derivative_loop_sites(),
        DERIVATIVE_LOOPS,
        "loops that take a derivative",
        "move the loop into its engine (training.descend, tangent, "
        "hessian, regression)",
    )
    if message:
        pytest.fail(message, pytrace=False)


def test_every_random_draw_is_listed():
    message = _unlisted(
        random_sites(),
        RANDOM_SITES,
        "random draws outside lecturekit/sampling.py",
        "draw through lecturekit.sampling (standard_normal, ...)",
    )
    if message:
        pytest.fail(message, pytrace=False)


def test_every_allowlist_entry_still_matches_a_site():
    message = "\n".join(
        m
        for m in (
            _stale(derivative_loop_sites(), DERIVATIVE_LOOPS, "DERIVATIVE_LOOPS"),
            _stale(random_sites(), RANDOM_SITES, "RANDOM_SITES"),
        )
        if m
    )
    if message:
        pytest.fail(message, pytrace=False)


def test_every_allowlist_entry_has_a_reason():
    for key, reason in {**DERIVATIVE_LOOPS, **RANDOM_SITES}.items():
        assert isinstance(key, tuple) and len(key) == 2, key
        assert len(reason.split()) >= 4 and reason.endswith("."), (key, reason)


# ------------------------------------------------------------------------ engines by shape
def test_the_library_has_its_engines():
    for module in ("sampling", "gaussian", "training", "hessian", "nets"):
        assert (ROOT / "lecturekit" / f"{module}.py").is_file(), (
            f"lecturekit/{module}.py is missing"
        )


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def test_one_quadrature_rule():
    offenders = [
        f"{unit.name} {unit.where[node]}: {_callee(node)}"
        for unit in all_units()
        if unit.name != "lecturekit/gaussian.py"
        for node in unit.nodes()
        if isinstance(node, ast.Call) and _callee(node) in HERMITE_NODES
    ]
    assert not offenders, (
        "Gauss–Hermite nodes computed outside lecturekit/gaussian.py:\n"
        + "\n".join(offenders)
    )


def test_one_lanczos():
    offenders = [
        f"{unit.name} {unit.where[node]} {node.name}"
        for unit in map(library_unit, LIBRARY)
        if unit.name != "lecturekit/hessian.py"
        for node in unit.defs
        if "lanczos" in node.name.lower()
        and any(unit.is_iteration(n) for n in ast.walk(node))
    ]
    assert not offenders, (
        "Lanczos iterations outside lecturekit/hessian.py (a *lanczos* "
        "function may call hessian's, not loop):\n" + "\n".join(offenders)
    )


def test_one_backward_pass():
    offenders = [
        f"{unit.name} {unit.where[node]} {node.name}"
        for unit in map(library_unit, LIBRARY)
        if unit.name != "lecturekit/nets.py"
        for node in unit.defs
        if any(word in node.name.lower() for word in ("backprop", "backward"))
    ]
    assert not offenders, (
        "backward passes outside lecturekit/nets.py (use net.backward):\n"
        + "\n".join(offenders)
    )


# ------------------------------------------------------------------------ the checks on snippets
def loops_in(source: str) -> list[tuple[str, str, str]]:
    """(owner, where, what) of every loop that takes a derivative in ``source``."""
    return [
        (s.key[1], s.where, s.what) for s in Unit.from_source(source).derivative_loops()
    ]


def draws_in(source: str) -> list[tuple[str, str, str]]:
    return [
        (s.key[1], s.where, s.what) for s in Unit.from_source(source).random_sites()
    ]


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
# The evasions of issue #28, one per snippet: each is a loop that takes a derivative.
EVASIONS = {
    "a gradient bound to a name outside the loop": (
        """
import jax
g = jax.grad(loss)
for _ in range(10):
    params = params - 0.1 * g(params)
""",
        [("<module>", "line 4", "for loop")],
    ),
    "a helper called from the loop body": (
        """
import jax
def update(p):
    return p - 0.1 * jax.grad(loss)(p)
def train(p):
    while True:
        p = update(p)
""",
        [("train", "line 6", "while loop")],
    ),
    "the helper's helper, defined after the loop": (
        """
def train(p):
    for _ in range(3):
        p = update(p)
def update(p):
    return p - 0.1 * slope(p)
def slope(p):
    return jax.value_and_grad(loss)(p)[1]
""",
        [("train", "line 3", "for loop")],
    ),
    "scan(f=step)": (
        """
from jax import lax, grad
def step(p, _):
    return p - 0.1 * grad(loss)(p), None
p, _ = lax.scan(f=step, init=p, xs=None, length=10)
""",
        [("<module>", "line 5", "jax.lax.scan")],
    ),
    "fori_loop(body_fun=...) over functools.partial": (
        """
import functools, jax
@jax.jit
def step(i, p, lr):
    return p - lr * jax.grad(loss)(p)
p = jax.lax.fori_loop(0, 10, body_fun=functools.partial(step, lr=0.1), init_val=p)
""",
        [("<module>", "line 6", "jax.lax.fori_loop")],
    ),
    "jacrev": (
        """
import jax
J = [jax.jacrev(f)(x) for x in xs]
""",
        [("<module>", "line 3", "list comprehension")],
    ),
    "jvp under an alias": (
        """
from jax import jvp as push
for v in basis:
    columns.append(push(f, (x,), (v,))[1])
""",
        [("<module>", "line 3", "for loop")],
    ),
    "a list comprehension": (
        """
import jax
value_and_grad = jax.value_and_grad(loss)
losses = [value_and_grad(p)[0] for p in checkpoints]
""",
        [("<module>", "line 4", "list comprehension")],
    ),
    "functools.reduce": (
        """
import functools
from jax import grad
final = functools.reduce(lambda p, _: p - 0.1 * grad(loss)(p), range(100), p0)
""",
        [("<module>", "line 4", "functools.reduce")],
    ),
    "reduce over a named step": (
        """
from functools import reduce
import jax
step = jax.jit(lambda p, _: p - 0.1 * jax.grad(loss)(p))
final = reduce(step, range(100), p0)
""",
        [("<module>", "line 5", "functools.reduce")],
    ),
    "a method of the unit's class": (
        """
import jax
class Trainer:
    def step(self, p):
        return p - 0.1 * jax.grad(self.loss)(p)
    def fit(self, p):
        for _ in range(10):
            p = self.step(p)
        return p
""",
        [("Trainer.fit", "line 7", "for loop")],
    ),
    "@jax.grad on a function": (
        """
import jax
@jax.grad
def slope(p):
    return loss(p)
while t < 10:
    p, t = p - 0.1 * slope(p), t + 1
""",
        [("<module>", "line 6", "while loop")],
    ),
    "a pullback from jax.vjp": (
        """
import jax
_, pullback = jax.vjp(f, x)
rows = list(map(pullback, basis))
""",
        [("<module>", "line 4", "map")],
    ),
    "a step made by a factory": (
        """
import jax
def make_step(loss):
    def step(p):
        return p - 0.1 * jax.grad(loss)(p)
    return jax.jit(step)
step = make_step(loss)
for _ in range(10):
    p = step(p)
""",
        [("<module>", "line 8", "for loop")],
    ),
    "tree_map of a gradient in a loop": (
        """
import jax
grads = jax.grad(loss)
for _ in range(10):
    p = jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, grads(p))
""",
        [("<module>", "line 4", "for loop")],
    ),
    "itertools.accumulate": (
        """
import itertools, jax
path = list(itertools.accumulate(range(9), lambda p, _: p - jax.grad(loss)(p), initial=p0))
""",
        [("<module>", "line 3", "itertools.accumulate")],
    ),
    "a home-made loop helper": (
        """
import jax
def iterate(f, x, n):
    for _ in range(n):
        x = f(x)
    return x
p = iterate(lambda p: p - 0.1 * jax.grad(loss)(p), p0, 100)
""",
        [("<module>", "line 7", "a derivative handed to iterate, which loops")],
    ),
    "a gradient stored on self": (
        """
import jax
class Fit:
    def __init__(self, loss):
        self.slope = jax.jit(jax.grad(loss))
    def run(self, p):
        return [p := p - 0.1 * self.slope(p) for _ in range(10)]
""",
        [("Fit.run", "line 7", "list comprehension")],
    ),
    "a callable object": (
        """
import jax
class Step:
    def __call__(self, p):
        return p - 0.1 * jax.grad(loss)(p)
step = Step()
p = jax.lax.fori_loop(0, 10, lambda i, p: step(p), p0)
""",
        [("<module>", "line 7", "jax.lax.fori_loop")],
    ),
    "recursion": (
        """
import jax
def descend(p, n):
    return p if n == 0 else descend(p - jax.grad(loss)(p), n - 1)
""",
        [("descend", "line 3", "recursion of descend")],
    ),
    "a gradient flow through an ODE solver": (
        """
import jax, scipy.integrate
flow = scipy.integrate.solve_ivp(lambda t, p: -jax.grad(loss)(p), (0, 1), p0)
""",
        [("<module>", "line 3", "scipy.integrate.solve_ivp")],
    ),
}
RANDOM_EVASIONS = {
    "an alias of jax.random": (
        """
import jax.random as jr
x = jr.uniform(key, (3,))
""",
        [("<module>", "line 3", "jax.random.uniform")],
    ),
    "a draw imported by name": (
        """
from jax.random import normal
def init(key):
    return normal(key, (3, 3))
""",
        [("init", "line 4", "jax.random.normal")],
    ),
    "a NumPy generator": (
        """
import numpy as np
rng = np.random.default_rng(0)
""",
        [("<module>", "line 3", "numpy.random.default_rng")],
    ),
    "jax.random under a re-binding": (
        """
import jax
rnd = jax.random
draw = jax.vmap(lambda k: rnd.bernoulli(k, 0.5))
""",
        [("<module>", "line 4", "jax.random.bernoulli")],
    ),
    "the standard library and SciPy": (
        """
import random, scipy.stats
a = random.gauss(0, 1)
b = scipy.stats.norm.rvs(size=3)
""",
        [
            ("<module>", "line 3", "random.gauss"),
            ("<module>", "line 4", "scipy.stats.norm.rvs"),
        ],
    ),
}
LEGITIMATE = {
    "a sweep that calls the training engine": """
import jax
from lecturekit import training
for width in widths:
    params = training.descend(loss, net.init(jax.random.key(width)), lr=0.1, steps=100)
""",
    "a derivative taken outside any loop": """
import jax
g = jax.grad(loss)(params)
slope = jax.value_and_grad(loss)
norms = [float(abs(x)) for x in g]
""",
    "a scan without derivatives": """
import jax
def step(r, _):
    return 0.5 * r, r
out = jax.lax.scan(step, 1.0, None, length=3)
total = jax.lax.scan(lambda c, x: (c + x, None), 0.0, xs, length=3)
""",
    "key splitting in a loop": """
import jax
keys = []
for i in range(4):
    key, sub = jax.random.split(key)
    keys.append(jax.random.fold_in(sub, i))
""",
    "a gradient handed to a function that does not loop": """
import jax
def norm_of(f, x):
    return jnp.linalg.norm(f(x))
size = norm_of(jax.grad(loss), x)
""",
    "the old snippet: derivatives and loops side by side": """
def step(p, _):
    return p - jax.grad(loss)(p), None
def recursion(r):
    def step(r, _):
        return 0.5 * r, r
    return jax.lax.scan(step, r, None, length=3)
g = jax.grad(loss)(params)
out = jax.lax.scan(lambda c, x: (c + x, None), 0.0, xs)
""",
}


def test_the_old_copies_are_found():
    assert loops_in(COPIED_LOOP) == [("fit", "line 6", "jax.lax.scan")]
    assert loops_in(PYTHON_LOOP) == [("<module>", "line 2", "for loop")]
    assert loops_in(FORI_LOOP) == [("<module>", "line 3", "jax.lax.fori_loop")]


@pytest.mark.parametrize("name", EVASIONS)
def test_each_evasion_is_found(name):
    source, expected = EVASIONS[name]
    assert loops_in(source) == expected


@pytest.mark.parametrize("name", RANDOM_EVASIONS)
def test_each_random_draw_is_found(name):
    source, expected = RANDOM_EVASIONS[name]
    assert draws_in(source) == expected


@pytest.mark.parametrize("name", LEGITIMATE)
def test_legitimate_code_is_not_flagged(name):
    assert loops_in(LEGITIMATE[name]) == []
    assert draws_in(LEGITIMATE[name]) == []


def test_chapter_sites_are_keyed_by_function_or_first_assigned_name():
    cells = [
        (0, ast.parse("import jax\nxs = [jax.grad(f)(x) for x in grid]")),
        (1, ast.parse("def fit(p):\n    for _ in range(3):\n        p = step(p)")),
        (2, ast.parse("step = jax.jit(jax.grad(loss))")),
    ]
    sites = Unit("ch00_test", cells, module_owner=False).derivative_loops()
    assert [(s.key, s.where, s.what) for s in sites] == [
        (("ch00_test", "xs"), "cell 0, line 2", "list comprehension"),
        (("ch00_test", "fit"), "cell 1, line 2", "for loop"),
    ]
