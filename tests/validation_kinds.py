"""Argument kinds, shared small inputs and ``case``, for the per-module tables in tests/cases/.

``CASES`` lists every public lecturekit function (and the MLP methods) with a factory of
valid keyword arguments (small NumPy arrays, parameters as lists of dicts) and a description
of each argument: what kind of object it must be, its number of dimensions, which of its
axes must match other arguments, its allowed range. ``bad_values`` turns such a description
and a valid value into corrupted values, each with the exception it must raise: ``TypeError``
for the wrong kind of object, ``ValueError`` for a value of the right kind that is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import sympy as sp
from hypothesis import strategies as st

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from lecturekit import (  # noqa: E402
    activations, criticality, figure_checks, gp, hessian, implicit_bias, kernels, linearity, nets, notebook, plotting, quadratic,
    regions, regression, stats, symbolic, tangent, training,
)

jax.config.update("jax_enable_x64", True)

# ---------------------------------------------------------------------------------- argument kinds


@dataclass(frozen=True)
class Arr:
    """An array argument. ``ndim``: allowed number(s) of dimensions (None: any); ``fixed``: axes
    whose length is tied to another argument; values must lie in [lo, hi] (open ends with
    lo_open/hi_open) and be finite if ``finite``; ``extra``: further (bad value, exception)."""

    ndim: int | tuple[int, ...] | None = None
    fixed: tuple[int, ...] = ()
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    finite: bool = True
    optional: bool = False
    nonempty: bool = False
    min_ndim: int = 0
    extra: tuple = ()


@dataclass(frozen=True)
class Int:
    minimum: int = 1
    optional: bool = False
    extra: tuple = ()


@dataclass(frozen=True)
class Real:
    lo: float | None = None
    lo_open: bool = False
    hi: float | None = None
    optional: bool = False
    extra: tuple = ()


@dataclass(frozen=True)
class Fn:
    optional: bool = False


@dataclass(frozen=True)
class Key:
    optional: bool = False


@dataclass(frozen=True)
class Keys:
    """A 1-D array of PRNG keys."""


@dataclass(frozen=True)
class Net:
    extra: tuple = ()


@dataclass(frozen=True)
class Params:
    """A parameter pytree; ``structured``: its structure is checked (against a network or a reference)."""

    structured: bool = False


@dataclass(frozen=True)
class Choice:
    """A string naming one of several options (an activation, a head, a loss...)."""

    optional: bool = False


@dataclass(frozen=True)
class Custom:
    """An argument with hand-written bad values: (value, expected exception)."""

    bad: tuple


TYPE_ERR, VALUE_ERR = TypeError, ValueError


def _finite_values(spec: Arr, valid: np.ndarray, data) -> list[tuple[Any, type]]:
    out = []
    if valid.size == 0:
        return out
    index = data.draw(st.integers(0, valid.size - 1), label="position")
    for bad in (np.nan, np.inf, -np.inf):
        arr = np.array(valid, dtype=float)
        arr.flat[index] = bad
        out.append((arr, VALUE_ERR))
    return out


def _ndim_values(spec: Arr, valid: np.ndarray) -> list[tuple[Any, type]]:
    out = []
    if spec.ndim is not None:
        allowed = (spec.ndim,) if isinstance(spec.ndim, int) else spec.ndim
        out.append((np.asarray(valid).reshape((1,) * (max(allowed) + 1 - valid.ndim) + valid.shape), VALUE_ERR))
        if min(allowed) > 0:
            out.append((np.asarray(valid).reshape(-1)[0] if valid.size else 0.0, VALUE_ERR))
    elif spec.min_ndim > 0:
        out.append((np.asarray(valid).reshape(-1)[0], VALUE_ERR))
    return out


def _shape_values(spec: Arr, valid: np.ndarray, data) -> list[tuple[Any, type]]:
    out = []
    for axis in spec.fixed:
        extra = data.draw(st.integers(1, 3), label=f"extra length on axis {axis}")
        pad = [(0, 0)] * valid.ndim
        pad[axis] = (0, extra)
        out.append((np.pad(valid, pad, mode="edge"), VALUE_ERR))
    if spec.nonempty:
        out.append((np.zeros((0,) + valid.shape[1:]), VALUE_ERR))
    return out


def _range_values(spec: Arr, valid: np.ndarray, data) -> list[tuple[Any, type]]:
    out = []
    if valid.size == 0:
        return out
    index = data.draw(st.integers(0, valid.size - 1), label="position")
    margin = data.draw(st.floats(0.01, 100.0), label="margin")
    if spec.lo is not None:
        arr = np.array(valid, dtype=float)
        arr.flat[index] = spec.lo if spec.lo_open else spec.lo - margin
        out.append((arr, VALUE_ERR))
    if spec.hi is not None:
        arr = np.array(valid, dtype=float)
        arr.flat[index] = spec.hi + margin
        out.append((arr, VALUE_ERR))
    return out


def bad_values(spec: Any, valid: Any, data) -> list[tuple[Any, type]]:
    """Corrupted versions of the valid value ``valid`` of an argument described by ``spec``."""
    none = [] if getattr(spec, "optional", False) else [(None, TYPE_ERR)]
    if isinstance(spec, Arr):
        v = np.asarray(valid)
        out = [("abc", TYPE_ERR), ({"a": 1}, TYPE_ERR), (np.array([1, "a"], dtype=object), TYPE_ERR),
               (v.astype(complex) + 1j, TYPE_ERR), (np.ones(v.shape, dtype=bool), TYPE_ERR)]
        out += none
        out += _ndim_values(spec, v) + _shape_values(spec, v, data) + _range_values(spec, v, data)
        out += _finite_values(spec, v, data) if spec.finite else []
        return out + list(spec.extra)
    if isinstance(spec, Int):
        below = spec.minimum - data.draw(st.integers(1, 1000), label="below minimum")
        out = [(spec.minimum - 1, VALUE_ERR), (below, VALUE_ERR), (2.5, TYPE_ERR), ("3", TYPE_ERR),
               (True, TYPE_ERR), (np.float64(3.0), TYPE_ERR)]
        return out + none + list(spec.extra)
    if isinstance(spec, Real):
        margin = data.draw(st.floats(0.01, 100.0), label="margin")
        out = [(np.nan, VALUE_ERR), (np.inf, VALUE_ERR), (-np.inf, VALUE_ERR), ("0.1", TYPE_ERR), (1j, TYPE_ERR),
               (True, TYPE_ERR), (np.ones(2), (TYPE_ERR, VALUE_ERR))]
        if spec.lo is not None:
            out.append((spec.lo if spec.lo_open else spec.lo - margin, VALUE_ERR))
        if spec.hi is not None:
            out.append((spec.hi + margin, VALUE_ERR))
        return out + none + list(spec.extra)
    if isinstance(spec, Fn):
        return [(3, TYPE_ERR), ("f", TYPE_ERR)] + none
    if isinstance(spec, Key):
        return [(0, TYPE_ERR), ("key", TYPE_ERR), (np.array([0, 1]), TYPE_ERR), (jnp.zeros(2), TYPE_ERR),
                (jax.random.split(jax.random.key(0), 2), TYPE_ERR)] + none
    if isinstance(spec, Keys):
        return [(jax.random.key(0), TYPE_ERR), ("keys", TYPE_ERR), (np.array([0, 1]), TYPE_ERR), (None, TYPE_ERR)]
    if isinstance(spec, Net):
        return [("net", TYPE_ERR), (3, TYPE_ERR), (None, TYPE_ERR)] + list(spec.extra)
    if isinstance(spec, Params):
        leaves, treedef = jax.tree_util.tree_flatten(valid)
        index = data.draw(st.integers(0, len(leaves) - 1), label="leaf")

        def with_leaf(new):
            changed = [np.array(leaf) for leaf in leaves]
            changed[index] = new(changed[index])
            return jax.tree_util.tree_unflatten(treedef, changed)

        def put(value):
            def put_value(a):
                a = np.array(a, dtype=float)
                a.flat[0] = value
                return a
            return put_value

        out = [(None, VALUE_ERR), ([], VALUE_ERR), (with_leaf(lambda a: a.astype(int)), TYPE_ERR),
               (with_leaf(lambda a: a.astype(complex)), TYPE_ERR), (with_leaf(lambda a: a.astype(bool)), TYPE_ERR),
               (with_leaf(put(np.nan)), VALUE_ERR), (with_leaf(put(np.inf)), VALUE_ERR)]
        if spec.structured:
            if isinstance(valid, list):
                out.append((valid[:-1], VALUE_ERR))
            out.append((with_leaf(lambda a: np.concatenate([a.ravel(), [0.0]])), VALUE_ERR))
        return out
    if isinstance(spec, Choice):
        return [("no-such-option", VALUE_ERR), (3, TYPE_ERR)] + none
    if isinstance(spec, Custom):
        return list(spec.bad)
    raise AssertionError(f"unknown spec {spec!r}")


# ---------------------------------------------------------------------------------- shared small inputs
RNG = np.random.default_rng(0)
KEY = jax.random.key(0)


def mlp_params(net: nets.MLP, seed: int = 0) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"W": rng.standard_normal((a, b)), "b": rng.standard_normal(b)}
            for a, b in zip(net.widths[:-1], net.widths[1:])]


NET = nets.mlp((3, 4, 1), "relu")
NET_TANH = nets.mlp((3, 4, 1), "tanh")
NET_K = nets.mlp((3, 4, 2), "tanh")
NET_STD = nets.mlp((3, 4, 1), "relu", parameterization="standard")
NET_1D = nets.mlp((1, 3, 3, 1), "relu")
NET_2D = nets.mlp((2, 3, 1), "relu")
NET_2D_DEEP = nets.mlp((2, 3, 3, 1), "relu")
NET_CAT = nets.mlp((3, 6, 1), "relu", w_std=1.0)
NET_BOTTLENECK = nets.mlp((2, 3, 1, 3, 1), "tanh")


def ntk_net(width: int) -> nets.MLP:
    return nets.mlp((3, width, 1), "relu")


def x53() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((5, 3))


def spd(n: int = 4) -> np.ndarray:
    a = np.random.default_rng(2).standard_normal((n, n + 1))
    return a @ a.T / n + np.eye(n)


def linear_model(p, x):
    return x @ p["w"] + p["b"][0]


def scalar_loss(p):
    return jnp.sum(p["w"] ** 2 * p["b"][0]) + jnp.sum(p["w"] ** 4)


def tree3() -> dict[str, np.ndarray]:
    return {"w": np.array([0.5, -1.0, 2.0]), "b": np.array([1.5])}


def diag_matvec(v):
    return jnp.arange(1.0, v.shape[0] + 1.0) * v


def regression_problem():
    X = np.random.default_rng(3).standard_normal((2, 4))
    return X, X @ np.array([1.0, 0.0, -0.5, 0.0])


def separable():
    X = np.array([[2.0, 0.5], [1.0, 1.5], [-1.5, -0.5], [-0.5, -2.0]])
    return X, np.array([1.0, 1.0, -1.0, -1.0])


def regions_2d():
    return regions.activation_regions_2d(NET_2D, mlp_params(NET_2D))


ACT = Choice()
POS = Real(lo=0.0, lo_open=True)
NONNEG = Real(lo=0.0)
KERNEL = Arr(ndim=2, fixed=(0, 1), nonempty=True)
SYMBOL = Custom(((sp.Symbol("z") ** 2, TYPE_ERR), ("z", TYPE_ERR), (1.0, TYPE_ERR), (None, TYPE_ERR)))
HEAD = Custom(((3, TYPE_ERR), ("no-such-head", VALUE_ERR), (None, TYPE_ERR)))
WIDE_Q = Arr(ndim=1, finite=False, nonempty=True)


@dataclass
class Case:
    """One public function, a factory of valid keyword arguments, and what each argument must be."""

    name: str
    fn: Callable
    valid: Callable[[], dict[str, Any]]
    specs: dict[str, Any]
    smoke: bool = True  # run the valid call in the no-mutation test
    cleanup: Callable[[], None] | None = None


def case(name, fn, valid, /, smoke=True, cleanup=None, **specs):
    return Case(name, fn, valid, specs, smoke, cleanup)


def close_figures():
    plt.close("all")
