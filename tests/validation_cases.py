"""The table behind tests/test_validation_properties.py and tests/test_no_mutation.py.

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

MODULES = (activations, criticality, figure_checks, gp, hessian, implicit_bias, kernels, linearity, nets, notebook, plotting,
           quadratic, regions, regression, stats, symbolic, tangent, training)

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
SHALLOW = training.shallow((2, 3))


def ntk_net(width: int) -> nets.MLP:
    return nets.mlp((3, width, 1), "relu")


def shallow_params() -> dict[str, np.ndarray]:
    return dict(zip("wbv", np.random.default_rng(6).standard_normal((3, SHALLOW.units))))


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


CASES = [
    # ------------------------------------------------------------------ activations, nets
    case("activations.get", activations.get, lambda: dict(activation="relu"), activation=ACT),
    case("nets.mlp", nets.mlp, lambda: dict(widths=(3, 4, 1), activation="erf", w_std=1.0, b_std=0.1, out_w_std=1.0,
                                             out_b_std=0.0, parameterization="ntk", output_activation=None),
         widths=Custom((((3, 0, 1), VALUE_ERR), ((3, -2, 1), VALUE_ERR), ((3, 1), VALUE_ERR), ("abc", TYPE_ERR),
                        ((3, 2.5, 1), TYPE_ERR), (None, TYPE_ERR), (5, TYPE_ERR))),
         activation=ACT, w_std=NONNEG, b_std=NONNEG, out_w_std=NONNEG, out_b_std=NONNEG,
         parameterization=Choice(), output_activation=Choice(optional=True)),
    case("MLP.init", NET.init, lambda: dict(key=KEY), key=Key()),
    case("MLP.apply", NET.apply, lambda: dict(params=mlp_params(NET), x=x53()),
         params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("MLP.forward", NET.forward, lambda: dict(params=mlp_params(NET), x=x53()),
         params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("MLP.check_params", NET.check_params, lambda: dict(params=mlp_params(NET)), params=Params(structured=True)),
    case("MLP.nngp", NET_STD.nngp, lambda: dict(x1=x53(), x2=x53()[:2]),
         x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True)),
    case("MLP.kernels", NET.kernels, lambda: dict(x1=x53(), x2=x53()[:2]),
         x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True)),
    # ------------------------------------------------------------------ kernels
    case("kernels.gauss_hermite_rule", kernels.gauss_hermite_rule, lambda: dict(nodes=8), nodes=Int(1)),
    case("kernels.relu_nngp_sphere", kernels.relu_nngp_sphere, lambda: dict(xi=np.linspace(-1, 1, 5)),
         xi=Arr(lo=-1.0, hi=1.0)),
    case("kernels.relu_ntk_sphere", kernels.relu_ntk_sphere, lambda: dict(xi=np.linspace(-1, 1, 5)),
         xi=Arr(lo=-1.0, hi=1.0)),
    case("kernels.dual_expectations", kernels.dual_expectations,
         lambda: dict(activation="tanh", k11=np.array([1.0, 2.0, 0.5]), k12=np.array([0.5, -1.0, 0.1]),
                      k22=np.array([1.0, 1.0, 0.5]), quadrature=False, nodes=8),
         activation=ACT, k11=Arr(lo=0.0, fixed=(0,)), k22=Arr(lo=0.0, fixed=(0,)),
         k12=Arr(fixed=(0,), extra=((np.array([5.0, 0.0, 0.0]), VALUE_ERR),)), nodes=Int(2)),
    case("kernels.dual_fn", kernels.dual_fn, lambda: dict(activation="relu", quadrature=True, nodes=8),
         activation=ACT, nodes=Int(2)),
    case("kernels.mlp_kernels", kernels.mlp_kernels,
         lambda: dict(x1=x53(), x2=x53()[:2], depth=2, activation="erf", w_std=1.2, b_std=0.1, out_w_std=1.0,
                      out_b_std=0.0),
         x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True), depth=Int(1), activation=ACT,
         w_std=NONNEG, b_std=NONNEG, out_w_std=NONNEG, out_b_std=NONNEG),
    # ------------------------------------------------------------------ tangent
    case("tangent.empirical_ntk[mlp]", tangent.empirical_ntk,
         lambda: dict(f=NET.apply, params=mlp_params(NET), x1=x53(), x2=x53()[:2]),
         f=Fn(), params=Params(structured=True), x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True)),
    case("tangent.empirical_ntk[generic]", tangent.empirical_ntk,
         lambda: dict(f=linear_model, params=tree3(), x1=x53(), x2=None),
         f=Fn(), params=Params(), x1=Arr(ndim=2, fixed=(1,))),
    case("tangent.jacobian_ntk", tangent.jacobian_ntk,
         lambda: dict(f=linear_model, params=tree3(), x1=x53(), x2=x53()[:2]),
         f=Fn(), params=Params(), x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True)),
    case("tangent.vector_product_ntk", tangent.vector_product_ntk,
         lambda: dict(f=linear_model, params=tree3(), x1=x53(), x2=x53()[:2], chunk=2),
         f=Fn(), params=Params(), x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True),
         chunk=Int(1)),
    case("tangent.linearize", tangent.linearize, lambda: dict(f=linear_model, params0=tree3()),
         f=Fn(), params0=Params()),
    # ------------------------------------------------------------------ hessian
    case("hessian.hvp", hessian.hvp, lambda: dict(f=scalar_loss, params=tree3(), v=tree3()),
         f=Fn(), params=Params(structured=True), v=Params(structured=True)),
    case("hessian.lanczos", hessian.lanczos,
         lambda: dict(matvec=diag_matvec, v0=np.ones(6), tol=1e-8, max_iter=10, keep_basis=False, min_iter=2,
                      check_every=2, args=()),
         matvec=Fn(), v0=Arr(ndim=1, nonempty=True, extra=((np.zeros(6), VALUE_ERR),)), tol=POS, max_iter=Int(1),
         min_iter=Int(1), check_every=Int(1), args=Custom((([1], TYPE_ERR), ("a", TYPE_ERR)))),
    case("hessian.normal_stream", hessian.normal_stream, lambda: dict(key=KEY, size=5), key=Key(), size=Int(1)),
    case("hessian.spectral_norm", hessian.spectral_norm,
         lambda: dict(f=scalar_loss, params=tree3(), key=KEY, tol=1e-8, max_iter=20),
         f=Fn(), params=Params(), key=Key(optional=True), tol=POS, max_iter=Int(1)),
    case("hessian.top_eigenpairs", hessian.top_eigenpairs,
         lambda: dict(f=scalar_loss, params=tree3(), k=2, key=KEY, tol=1e-8, max_iter=20),
         f=Fn(), params=Params(), k=Int(1, extra=((10, VALUE_ERR),)), key=Key(optional=True), tol=POS,
         max_iter=Int(1)),
    case("hessian.dense_hessian", hessian.dense_hessian, lambda: dict(f=scalar_loss, params=tree3(), max_params=10),
         f=Fn(), params=Params(), max_params=Int(1, extra=((2, VALUE_ERR),))),
    # ------------------------------------------------------------------ training
    case("training.mse_loss", training.mse_loss, lambda: dict(f=linear_model, x=x53(), y=np.arange(5.0)),
         f=Fn(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=(1, 2), fixed=(0,))),
    case("training.descend", training.descend, lambda: dict(loss_fn=scalar_loss, params=tree3(), lr=0.01, steps=3),
         loss_fn=Fn(), params=Params(), lr=POS, steps=Int(0)),
    case("training.descend_observed", training.descend_observed,
         lambda: dict(loss_fn=scalar_loss, params=tree3(), lr=0.01, steps=4, every=2, observe=lambda p: p["w"]),
         loss_fn=Fn(), params=Params(), lr=POS, steps=Int(0), every=Int(1), observe=Fn()),
    case("training.snapshot_steps", training.snapshot_steps, lambda: dict(steps=10, every=3),
         steps=Int(0), every=Int(1)),
    case("training.gradient_descent", training.gradient_descent,
         lambda: dict(f=linear_model, params=tree3(), lr=0.05, steps=4, x=x53(), y=np.arange(5.0), snapshot_every=2,
                      kernel_x=x53()[:2]),
         f=Fn(), params=Params(), lr=POS, steps=Int(0),
         x=Arr(ndim=2, fixed=(0, 1), optional=True, extra=((None, VALUE_ERR),)),
         y=Arr(ndim=(1, 2), fixed=(0,), optional=True, extra=((None, VALUE_ERR),)),
         snapshot_every=Int(1, optional=True), kernel_x=Arr(ndim=2, fixed=(1,), optional=True)),
    case("training.relative_kernel_change", training.relative_kernel_change,
         lambda: dict(k_t=np.stack([spd(), 2 * spd()]), k_0=spd()),
         k_t=Arr(min_ndim=2, fixed=(-1, -2)), k_0=Arr(ndim=2, fixed=(0, 1), extra=((np.zeros((4, 4)), VALUE_ERR),))),
    case("training.standard_normal", training.standard_normal, lambda: dict(key=KEY, shape=(2, 3)),
         key=Key(), shape=Custom((((2, -1), VALUE_ERR), ((2.5,), TYPE_ERR), (None, TYPE_ERR), ("ab", TYPE_ERR),
                                  (3, TYPE_ERR)))),
    case("training.init_many", training.init_many, lambda: dict(net=NET, key=KEY, count=2),
         net=Net(extra=((NET_STD, VALUE_ERR),)), key=Key(), count=Int(1)),
    case("training.init_one", training.init_one, lambda: dict(net=NET, key=KEY),
         net=Net(extra=((NET_STD, VALUE_ERR),)), key=Key()),
    case("training.sub_network", training.sub_network, lambda: dict(params=mlp_params(NET), width=2, block=1),
         params=Params(structured=True), width=Int(1, extra=((3, VALUE_ERR),)), block=Int(0, extra=((2, VALUE_ERR),))),
    case("training.ntk_errors", training.ntk_errors,
         lambda: dict(make_net=ntk_net, widths=(2, 4), seeds=2, key=KEY, x=x53()[:3], theory=spd(3), nested=False),
         make_net=Fn(), widths=Custom((((), VALUE_ERR), ((2, 0), VALUE_ERR), ((2.5,), TYPE_ERR), (None, TYPE_ERR),
                                       ("ab", TYPE_ERR), (3, TYPE_ERR))),
         seeds=Int(1), key=Key(), x=Arr(ndim=2, fixed=(0, 1)), theory=Arr(ndim=2, fixed=(0, 1))),
    case("training.shallow", training.shallow,
         lambda: dict(widths=(2, 3), activation=("relu", "tanh"), scale=2.0, readout=(True, False)),
         widths=Custom((((), VALUE_ERR), ((2, 0), VALUE_ERR), ((2.5,), TYPE_ERR), (None, TYPE_ERR), ("ab", TYPE_ERR),
                        (3, TYPE_ERR))),
         activation=Custom((("no-such-activation", VALUE_ERR), (("relu",), VALUE_ERR), (("relu", 3), TYPE_ERR),
                            (3, TYPE_ERR), (None, TYPE_ERR))),
         scale=POS, readout=Custom((((True,), VALUE_ERR), ("yes", TYPE_ERR), (None, TYPE_ERR), (1.5, TYPE_ERR)))),
    case("training.shallow_kernel_change", training.shallow_kernel_change,
         lambda: dict(sh=SHALLOW, params=shallow_params(), x=np.array([[-1.0], [0.0], [0.5]]),
                      y=np.array([0.5, -0.2, 0.3]), lr=0.1, steps=3),
         sh=Custom((("sh", TYPE_ERR), (None, TYPE_ERR), (NET, TYPE_ERR))), params=Params(structured=True),
         x=Arr(ndim=2, fixed=(0, 1)), y=Arr(ndim=1, fixed=(0,)), lr=POS, steps=Int(1)),
    # ------------------------------------------------------------------ regression
    case("regression.kernel_regression", regression.kernel_regression,
         lambda: dict(k_train=spd(), y=np.arange(4.0), k_test_train=spd()[:2], ridge=0.1),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), k_test_train=Arr(ndim=2, fixed=(1,), optional=True),
         ridge=NONNEG),
    case("regression.kernel_coefficients", regression.kernel_coefficients,
         lambda: dict(k_train=spd(), y=np.arange(4.0), ridge=0.0),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), ridge=NONNEG),
    case("regression.rkhs_norm_squared", regression.rkhs_norm_squared,
         lambda: dict(k_train=spd(), coefficients=np.arange(4.0)),
         k_train=Arr(ndim=2, fixed=(0, 1)), coefficients=Arr(ndim=(1, 2), fixed=(0,))),
    case("regression.gradient_flow_predictor", regression.gradient_flow_predictor,
         lambda: dict(k_train=spd(), y=np.arange(4.0), t=np.array([0.0, 1.0, 10.0]), k_test_train=spd()[:2],
                      f0_train=np.ones(4), f0_test=np.ones(2)),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), t=Arr(lo=0.0), k_test_train=Arr(ndim=2, fixed=(1,), optional=True),
         f0_train=Arr(fixed=(0,), optional=True), f0_test=Arr(fixed=(0,), optional=True)),
    case("regression.gradient_flow_train_loss", regression.gradient_flow_train_loss,
         lambda: dict(k_train=spd(), y=np.arange(4.0), t=np.array([0.0, 1.0]), f0_train=np.ones(4)),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), t=Arr(lo=0.0), f0_train=Arr(fixed=(0,), optional=True)),
    case("regression.gradient_descent_predictor", regression.gradient_descent_predictor,
         lambda: dict(k_train=spd(), y=np.arange(4.0), lr=0.5, steps=3, k_test_train=spd()[:2], f0_train=np.ones(4),
                      f0_test=np.ones(2)),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), lr=POS, steps=Int(0),
         k_test_train=Arr(ndim=2, fixed=(1,), optional=True), f0_train=Arr(fixed=(0,), optional=True),
         f0_test=Arr(fixed=(0,), optional=True)),
    # ------------------------------------------------------------------ gp
    case("gp.cholesky", gp.cholesky, lambda: dict(matrix=spd(), jitter=0.0, max_tries=2),
         matrix=Arr(ndim=2, fixed=(0,), nonempty=True, extra=((spd() + np.triu(np.ones((4, 4)), 1), VALUE_ERR),)),
         jitter=NONNEG, max_tries=Int(0)),
    case("gp.posterior", gp.posterior,
         lambda: dict(k_train=spd(), k_cross=spd(5)[:2, :4], k_test=spd(2), y=np.arange(4.0), noise=0.1, jitter=0.0),
         k_train=KERNEL, k_cross=Arr(ndim=2, fixed=(0, 1)), k_test=Arr(ndim=2, fixed=(0, 1)),
         y=Arr(ndim=1, fixed=(0,)), noise=NONNEG, jitter=NONNEG),
    case("gp.log_marginal_likelihood", gp.log_marginal_likelihood,
         lambda: dict(k_train=spd(), y=np.arange(4.0), noise=0.1, jitter=0.0),
         k_train=KERNEL, y=Arr(ndim=1, fixed=(0,)), noise=NONNEG, jitter=NONNEG),
    case("gp.sample_prior", gp.sample_prior, lambda: dict(key=KEY, kernel=spd(), num_samples=2, jitter=1e-10),
         key=Key(), kernel=Arr(ndim=2, fixed=(0,), nonempty=True), num_samples=Int(1), jitter=NONNEG),
    case("gp.posterior_z_scores", gp.posterior_z_scores,
         lambda: dict(key=KEY, kernel=spd(5), n_train=3, noise=0.1, num_draws=2, jitter=1e-10),
         key=Key(), kernel=Arr(ndim=2, fixed=(0, 1), nonempty=True, extra=((spd(5) + np.triu(np.ones((5, 5)), 1), VALUE_ERR),)),
         n_train=Int(1, extra=((5, VALUE_ERR),)), noise=NONNEG, num_draws=Int(1), jitter=NONNEG),
    # ------------------------------------------------------------------ stats, symbolic, notebook
    case("stats.fit_loglog", stats.fit_loglog, lambda: dict(x=np.array([1.0, 2.0, 4.0]), y=np.array([3.0, 2.0, 1.1])),
         x=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, extra=((np.array([1.0]), VALUE_ERR),)),
         y=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True)),
    case("stats.fit_loglog_slope", stats.fit_loglog_slope,
         lambda: dict(x=np.array([1.0, 2.0, 4.0]), y=np.array([3.0, 2.0, 1.1])),
         x=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True), y=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True)),
    case("stats.mean_and_stderr", stats.mean_and_stderr, lambda: dict(samples=x53(), axis=0),
         samples=Arr(extra=((np.ones((1, 3)), VALUE_ERR),)), axis=Int(-2, extra=((2, VALUE_ERR),))),
    case("symbolic.gaussian_density", symbolic.gaussian_density, lambda: dict(z=sp.Symbol("z"), variance=2),
         z=SYMBOL, variance=Custom(((-1, VALUE_ERR), (0, VALUE_ERR), ("v", TYPE_ERR), (None, TYPE_ERR),
                                    (float("nan"), VALUE_ERR), (sp.oo, VALUE_ERR), (sp.I, VALUE_ERR)))),
    case("symbolic.gaussian_expectation", symbolic.gaussian_expectation,
         lambda: dict(expr=sp.Symbol("z") ** 2, z=sp.Symbol("z"), variance=3, lower=-sp.oo, upper=sp.oo),
         expr=Custom((("z**2", TYPE_ERR), (None, TYPE_ERR), (float("nan"), VALUE_ERR))), z=SYMBOL,
         variance=Custom(((-2, VALUE_ERR), (None, TYPE_ERR))),
         lower=Custom(((sp.oo, VALUE_ERR), ("a", TYPE_ERR))), upper=Custom(((-sp.oo, VALUE_ERR), (None, TYPE_ERR)))),
    case("symbolic.assert_identity", symbolic.assert_identity,
         lambda: dict(lhs=sp.sin(sp.Symbol("t")) ** 2, rhs=1 - sp.cos(sp.Symbol("t")) ** 2),
         lhs=Custom((("x", TYPE_ERR), (None, TYPE_ERR))), rhs=Custom((("x", TYPE_ERR), (None, TYPE_ERR)))),
    # smoke=False: setup changes JAX's global configuration (its argument is a bool: nothing to mutate)
    case("notebook.setup", notebook.setup, lambda: dict(float64=True), smoke=False,
         float64=Custom((("yes", TYPE_ERR), (1, TYPE_ERR), (None, TYPE_ERR)))),
    # smoke=False: install() changes IPython's display formatter (a no-op outside IPython)
    case("figure_checks.install", figure_checks.install, lambda: dict(), smoke=False),
    case("figure_checks.problems", figure_checks.problems, lambda: dict(fig=plt.figure()),
         cleanup=close_figures, fig=Custom((("figure", TYPE_ERR), (None, TYPE_ERR), (np.zeros(3), TYPE_ERR)))),
    case("figure_checks.report", figure_checks.report, lambda: dict(fig=plt.figure()),
         cleanup=close_figures, fig=Custom((("figure", TYPE_ERR), (None, TYPE_ERR)))),
    # ------------------------------------------------------------------ criticality
    case("criticality.gauss_hermite", criticality.gauss_hermite, lambda: dict(nodes=8), nodes=Int(1)),
    case("criticality.gaussian_expectation", criticality.gaussian_expectation,
         lambda: dict(fn=jnp.tanh, variance=np.array([0.5, 1.0]), nodes=8), fn=Fn(), variance=Arr(lo=0.0),
         nodes=Int(1)),
    case("criticality.variance_map", criticality.variance_map,
         lambda: dict(variance=np.array([0.5, 1.0]), activation="tanh", c_w=1.5, c_b=0.1, nodes=8),
         variance=Arr(lo=0.0), activation=ACT, c_w=NONNEG, c_b=NONNEG, nodes=Int(1)),
    case("criticality.variance_trajectory", criticality.variance_trajectory,
         lambda: dict(k0=np.array([1.0, 2.0]), depth=3, activation="tanh", c_w=np.array([1.0, 2.0]),
                      c_b=np.array([0.0, 0.1]), nodes=8),
         k0=Arr(lo=0.0, fixed=(0,)), depth=Int(0), activation=ACT, c_w=Arr(lo=0.0, fixed=(0,)),
         c_b=Arr(lo=0.0, fixed=(0,)), nodes=Int(1)),
    case("criticality.fixed_point", criticality.fixed_point,
         lambda: dict(activation="tanh", c_w=1.5, c_b=0.1, k0=1.0, iterations=5, nodes=8),
         activation=ACT, c_w=Arr(lo=0.0), c_b=Arr(lo=0.0), k0=Arr(lo=0.0), iterations=Int(1), nodes=Int(1)),
    case("criticality.chi_parallel", criticality.chi_parallel,
         lambda: dict(variance=np.array([0.5, 1.0]), activation="tanh", c_w=1.5, nodes=8),
         variance=Arr(lo=0.0), activation=ACT, c_w=Arr(lo=0.0), nodes=Int(1)),
    case("criticality.chi_perp", criticality.chi_perp,
         lambda: dict(variance=np.array([0.5, 1.0]), activation="tanh", c_w=1.5, nodes=8),
         variance=Arr(lo=0.0), activation=ACT, c_w=Arr(lo=0.0), nodes=Int(1)),
    case("criticality.covariance_map", criticality.covariance_map,
         lambda: dict(k11=np.array([1.0, 2.0]), k12=np.array([0.5, -1.0]), k22=np.array([1.0, 1.0]),
                      activation="relu", c_w=2.0, c_b=0.0, nodes=4),
         k11=Arr(lo=0.0, fixed=(0,)), k12=Arr(fixed=(0,), extra=((np.array([3.0, 0.0]), VALUE_ERR),)),
         k22=Arr(lo=0.0, fixed=(0,)), activation=ACT, c_w=NONNEG, c_b=NONNEG, nodes=Int(2)),
    case("criticality.correlation_map", criticality.correlation_map,
         lambda: dict(rho=np.array([-0.5, 0.9]), variance=np.array([1.0, 2.0]), activation="erf", c_w=1.0, c_b=0.1,
                      nodes=4),
         rho=Arr(lo=-1.0, hi=1.0, fixed=(0,)), variance=Arr(lo=0.0, fixed=(0,)), activation=ACT, c_w=NONNEG,
         c_b=NONNEG, nodes=Int(2)),
    case("criticality.kernel_trajectory", criticality.kernel_trajectory,
         lambda: dict(k11=np.array([1.0, 2.0]), k12=np.array([0.5, -1.0]), k22=np.array([1.0, 1.0]), depth=2,
                      activation="relu", c_w=2.0, c_b=0.0, nodes=4),
         k11=Arr(lo=0.0, fixed=(0,)), k12=Arr(fixed=(0,), extra=((np.array([3.0, 0.0]), VALUE_ERR),)),
         k22=Arr(lo=0.0, fixed=(0,)), depth=Int(0), activation=ACT, c_w=NONNEG, c_b=NONNEG, nodes=Int(2)),
    # smoke=False: a root search (slow to compile) whose arguments are numbers and a tuple, nothing
    # to mutate; its valid calls run in tests/test_criticality.py and test_validation_properties.py
    case("criticality.critical_weight_variance", criticality.critical_weight_variance,
         lambda: dict(activation="erf", c_b=0.0, bracket=(0.5, 2.0), iterations=50, nodes=16, xtol=1e-6), smoke=False,
         activation=ACT, c_b=NONNEG, iterations=Int(1), nodes=Int(1), xtol=POS,
         bracket=Custom(((3, TYPE_ERR), ((1.0,), TYPE_ERR), ((2.0, 1.0), VALUE_ERR), ((-1.0, 2.0), VALUE_ERR),
                         ((1.0, np.nan), VALUE_ERR), ("ab", TYPE_ERR)))),
    case("criticality.correlation_slope", criticality.correlation_slope,
         lambda: dict(rho=np.array([-0.5, 0.9]), variance=np.array([1.0, 2.0]), activation="erf", c_w=1.0, c_b=0.1,
                      nodes=4),
         rho=Arr(lo=-1.0, hi=1.0, fixed=(0,)), variance=Arr(lo=0.0, fixed=(0,)), activation=ACT, c_w=NONNEG,
         c_b=NONNEG, nodes=Int(2)),
    case("criticality.layer_mean_squares", criticality.layer_mean_squares,
         lambda: dict(key=KEY, n0=2, width=3, depth=2, count=2, v_first=2.0, v_hidden=2.0, activation="relu"),
         key=Key(), n0=Int(1), width=Int(1), depth=Int(1), count=Int(1), v_first=NONNEG, v_hidden=NONNEG,
         activation=ACT),
    case("criticality.sample_network_kernels", criticality.sample_network_kernels,
         lambda: dict(key=KEY, x=x53()[:2], width=3, depth=2, count=2, max_width=4, activation="relu", c_w=2.0,
                      c_b=0.0),
         key=Key(), x=Arr(ndim=2, nonempty=True), width=Int(1, extra=((5, VALUE_ERR),)), depth=Int(1), count=Int(1),
         max_width=Int(1, optional=True, extra=((2, VALUE_ERR),)), activation=ACT, c_w=NONNEG, c_b=NONNEG),
    case("criticality.relu_layer_factor_moments", criticality.relu_layer_factor_moments,
         lambda: dict(width=4, orders=3), width=Int(1), orders=Int(1)),
    case("criticality.relu_output_excess_kurtosis", criticality.relu_output_excess_kurtosis,
         lambda: dict(width=np.array([2.0, 8.0]), depth=3), width=Arr(lo=1.0), depth=Int(1)),
    case("criticality.relu_output_mixture", criticality.relu_output_mixture,
         lambda: dict(key=KEY, width=4, depth=2, count=5, k1=2.0),
         key=Key(), width=Int(1), depth=Int(1), count=Int(1), k1=POS),
    # ------------------------------------------------------------------ linearity
    case("linearity.head_fn", linearity.head_fn, lambda: dict(head="softmax"), head=HEAD),
    case("linearity.model", linearity.model, lambda: dict(net=NET_K, head="swish"),
         net=Net(extra=((nets.mlp((3, 4, 1), output_activation="tanh"), VALUE_ERR),)), head=HEAD),
    case("linearity.init_params", linearity.init_params, lambda: dict(net=NET_K, key=KEY),
         net=Net(extra=((NET_STD, VALUE_ERR),)), key=Key()),
    case("linearity.head_ntk", linearity.head_ntk,
         lambda: dict(net=NET_K, params=mlp_params(NET_K), x=x53()[:3], head="softmax"),
         net=Net(), params=Params(structured=True), x=Arr(ndim=2, fixed=(1,)), head=HEAD),
    case("linearity.relative_change", linearity.relative_change,
         lambda: dict(kernels=np.stack([spd(), 2 * spd()]), reference=spd()),
         kernels=Arr(ndim=3, nonempty=True, fixed=(1, 2)),
         reference=Arr(ndim=2, fixed=(0, 1), optional=True, extra=((np.zeros((4, 4)), VALUE_ERR),))),
    case("linearity.gradient_descent", linearity.gradient_descent,
         lambda: dict(loss=scalar_loss, params0=tree3(), lr=0.01, steps=4, record_every=2, record=lambda p: p["b"]),
         loss=Fn(), params0=Params(), lr=POS, steps=Int(1, extra=((5, VALUE_ERR),)), record_every=Int(1),
         record=Fn(optional=True)),
    case("linearity.synthetic_classes", linearity.synthetic_classes,
         lambda: dict(key=KEY, n=6, d=3, classes=2, noise=0.5),
         key=Key(), n=Int(1), d=Int(1), classes=Int(2), noise=NONNEG),
    case("linearity.cross_entropy", linearity.cross_entropy,
         lambda: dict(logits=x53(), onehot=np.eye(3)[[0, 1, 2, 0, 1]]),
         logits=Arr(ndim=2, fixed=(0, 1)), onehot=Arr(ndim=2, fixed=(0, 1))),
    case("linearity.square_loss", linearity.square_loss, lambda: dict(outputs=x53(), targets=x53() + 1.0),
         outputs=Arr(ndim=2, fixed=(0, 1)), targets=Arr(ndim=2, fixed=(0, 1))),
    case("linearity.norm_221", linearity.norm_221,
         lambda: dict(tensor=np.random.default_rng(4).standard_normal((2, 3, 3))),
         tensor=Arr(ndim=3, nonempty=True, extra=((np.ones((1, 1, 17)), VALUE_ERR),))),
    case("linearity.layer_output_gradients", linearity.layer_output_gradients,
         lambda: dict(net=NET, params=mlp_params(NET), x=np.array([1.0, -0.5, 0.2])),
         net=Net(), params=Params(structured=True), x=Arr(ndim=1, fixed=(0,))),
    case("linearity.kernel_change_run", linearity.kernel_change_run,
         lambda: dict(net=NET_K, keys=jax.random.split(KEY, 2), x=x53()[:3], targets=np.eye(2)[[0, 1, 0]],
                      train_head="linear", loss="square", kernel_heads=("linear",), lr=0.1, steps=2,
                      record_every=1, scales=np.array([1.0, 2.0])),
         net=Net(), keys=Keys(), x=Arr(ndim=2, fixed=(0, 1)), targets=Arr(ndim=2, fixed=(0, 1)), train_head=HEAD,
         loss=Choice(), kernel_heads=Custom((("linear", TYPE_ERR), (("no-such-head",), VALUE_ERR))), lr=POS,
         steps=Int(1), record_every=Int(1, extra=((3, VALUE_ERR),)),
         scales=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True)),
    case("linearity.kernel_change_runs", linearity.kernel_change_runs,
         lambda: dict(net=NET_K, keys=jax.random.split(KEY, 2), x=x53()[:3], targets=np.eye(2)[[0, 1, 0]],
                      configs=[dict(train_head="linear", loss="cross_entropy", kernel_heads=("softmax",))], lr=0.1,
                      steps=2, record_every=1, scales=np.array([1.0, 0.5])),
         net=Net(), keys=Keys(), x=Arr(ndim=2, fixed=(0, 1)), targets=Arr(ndim=2, fixed=(0, 1)),
         configs=Custom((([], VALUE_ERR), ("abc", VALUE_ERR), ([{"train_head": "linear"}], VALUE_ERR))), lr=POS,
         steps=Int(1), record_every=Int(1), scales=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True)),
    case("linearity.one_hidden_layer_hessian_eigenvalues", linearity.one_hidden_layer_hessian_eigenvalues,
         lambda: dict(v=np.array([0.5, -1.0, 2.0]), z=np.array([0.1, 0.3, -0.2]), scale=1.5),
         v=Arr(ndim=1, fixed=(0,), nonempty=True), z=Arr(ndim=1, fixed=(0,), nonempty=True), scale=POS),
    case("linearity.one_hidden_layer_hessian_norm", linearity.one_hidden_layer_hessian_norm,
         lambda: dict(v=np.array([0.5, -1.0, 2.0]), z=np.array([0.1, 0.3, -0.2]), scale=1.5),
         v=Arr(ndim=1, fixed=(0,), nonempty=True), z=Arr(ndim=1, fixed=(0,), nonempty=True), scale=POS),
    case("linearity.mlp_hessian_norm", linearity.mlp_hessian_norm,
         lambda: dict(net=NET_TANH, params=mlp_params(NET_TANH), x=np.array([1.0, -0.5, 0.2])),
         net=Net(extra=((NET, VALUE_ERR), (NET_K, VALUE_ERR),
                        (nets.mlp((3, 4, 1), "tanh", parameterization="standard"), VALUE_ERR))),
         params=Params(structured=True), x=Arr(ndim=1, fixed=(0,))),
    case("linearity.gaussian_max_abs_moments", linearity.gaussian_max_abs_moments,
         lambda: dict(m=np.array([1.0, 5.0, 50.0])),
         m=Arr(ndim=(0, 1), nonempty=True, lo=1.0, extra=((np.array([2.5]), VALUE_ERR),))),
    case("linearity.max_block_norm_moments", linearity.max_block_norm_moments,
         lambda: dict(m=np.array([1.0, 5.0, 50.0]), scale=1.5),
         m=Arr(ndim=(0, 1), nonempty=True, lo=1.0, extra=((np.array([2.5]), VALUE_ERR),)), scale=POS),
    case("linearity.relu_kernel_split", linearity.relu_kernel_split,
         lambda: dict(m=3, key=KEY, x=x53(), y=np.arange(5.0), lr=0.1, steps=3),
         m=Int(1), key=Key(), x=Arr(ndim=2, fixed=(0,), nonempty=True), y=Arr(ndim=1, fixed=(0,)), lr=POS,
         steps=Int(1)),
    case("linearity.tanh_net_gradient", linearity.tanh_net_gradient,
         lambda: dict(w=np.array([0.5, -1.0, 2.0]), v=np.array([1.0, 0.5, -0.3]), x=0.7),
         w=Arr(ndim=1, fixed=(0,), nonempty=True), v=Arr(ndim=1, fixed=(0,), nonempty=True), x=Real()),
    case("linearity.tanh_net_hvp", linearity.tanh_net_hvp,
         lambda: dict(w=np.array([0.5, -1.0, 2.0]), v=np.array([1.0, 0.5, -0.3]), x=0.7, u=np.arange(6.0)),
         w=Arr(ndim=1, fixed=(0,), nonempty=True), v=Arr(ndim=1, fixed=(0,), nonempty=True), x=Real(),
         u=Arr(ndim=1, fixed=(0,))),
    case("linearity.bottleneck_mixed_block_norm", linearity.bottleneck_mixed_block_norm,
         lambda: dict(net=NET_BOTTLENECK, params=mlp_params(NET_BOTTLENECK), x=np.array([0.5, -1.0])),
         net=Net(extra=((NET_TANH, VALUE_ERR), (nets.mlp((2, 3, 1, 3, 1), "relu"), VALUE_ERR))),
         params=Params(structured=True), x=Arr(ndim=1, fixed=(0,))),
    case("linearity.first_units_width_sweep", linearity.first_units_width_sweep,
         lambda: dict(x=np.array([-1.0, 0.0, 1.0]), y=np.array([0.5, -0.2, 0.3]), x_eval=np.linspace(-1.0, 1.0, 4),
                      widths=(2, 4), key=KEY, max_width=4, lr=0.1, steps=3, w_scale=2.0),
         x=Arr(ndim=1, fixed=(0,), nonempty=True), y=Arr(ndim=1, fixed=(0,)), x_eval=Arr(ndim=1, nonempty=True),
         widths=Custom((((), VALUE_ERR), ((2, 8), VALUE_ERR), ((2, 0), VALUE_ERR), ((2.5,), TYPE_ERR), (None, TYPE_ERR),
                        ("ab", TYPE_ERR), (3, TYPE_ERR))),
         key=Key(), max_width=Int(1, extra=((3, VALUE_ERR),)), lr=POS, steps=Int(1), w_scale=POS),
    # ------------------------------------------------------------------ quadratic
    case("quadratic.quadratic_model", quadratic.quadratic_model, lambda: dict(f=linear_model, params0=tree3()),
         f=Fn(), params0=Params()),
    case("quadratic.taylor_terms", quadratic.taylor_terms,
         lambda: dict(f=linear_model, params0=tree3(), params={"w": np.ones(3), "b": np.zeros(1)}, x=x53()),
         f=Fn(), params0=Params(), params=Params(structured=True), x=Arr()),
    case("quadratic.perturbative_minimizer", quadratic.perturbative_minimizer,
         lambda: dict(phi=np.random.default_rng(5).standard_normal((4, 2)),
                      psi=np.stack([np.eye(4), np.diag([1.0, 2.0, 0.0, -1.0])]), y=np.array([1.0, -1.0])),
         phi=Arr(ndim=2, fixed=(0, 1), extra=((np.ones((1, 2)), VALUE_ERR),)), psi=Arr(ndim=3, fixed=(0, 1, 2)),
         y=Arr(ndim=1, fixed=(0,))),
    case("quadratic.catapult_constants", quadratic.catapult_constants,
         lambda: dict(net=NET_CAT, params=mlp_params(NET_CAT), x=np.array([1.0, 0.5, -0.5]), y=0.3),
         net=Net(extra=((NET_TANH, VALUE_ERR),)), params=Params(structured=True), x=Arr(ndim=1, fixed=(0,)), y=Real()),
    case("quadratic.catapult_recursion", quadratic.catapult_recursion,
         lambda: dict(r0=0.5, lam0=1.0, c=0.01, y=0.2, eta=1.5, steps=5),
         r0=Arr(ndim=0), lam0=Arr(ndim=0, lo=0.0), c=Arr(ndim=0, lo=0.0), y=Arr(ndim=0),
         eta=Arr(ndim=0, lo=0.0, lo_open=True), steps=Int(1)),
    case("quadratic.catapult_sweep", quadratic.catapult_sweep,
         lambda: dict(r0=0.5, lam0=1.0, c=0.01, y=0.2, etas=np.array([0.5, 3.0]), steps=5),
         r0=Arr(ndim=0), lam0=Arr(ndim=0, lo=0.0), c=Arr(ndim=0, lo=0.0), y=Arr(ndim=0),
         etas=Arr(ndim=1, lo=0.0, lo_open=True), steps=Int(1)),
    case("quadratic.classify_regime", quadratic.classify_regime,
         lambda: dict(losses=np.array([1.0, 2.0, 1e-12]), lams=np.array([3.0, 2.0, 1.5]), tol=1e-8),
         losses=Arr(ndim=1, fixed=(0,), finite=False, extra=((np.array([1.0]), VALUE_ERR),)),
         lams=Arr(ndim=1, fixed=(0,), finite=False, optional=True), tol=POS),
    case("quadratic.catapult_peak", quadratic.catapult_peak, lambda: dict(losses=np.array([1.0, 5.0, 0.1])),
         losses=WIDE_Q),
    case("quadratic.catapult_duration", quadratic.catapult_duration,
         lambda: dict(lams=np.array([3.0, 2.5, 1.0]), eta=1.0, level=0.5),
         lams=WIDE_Q, eta=POS, level=Real(lo=0.0, lo_open=True, hi=1.0)),
    case("quadratic.gd_one_point", quadratic.gd_one_point,
         lambda: dict(f=linear_model, params0=tree3(), x=x53()[:2], y=np.array([0.5, -0.5]), eta=0.1, steps=3),
         f=Fn(), params0=Params(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)), eta=POS, steps=Int(1)),
    case("quadratic.gd_sweep", quadratic.gd_sweep,
         lambda: dict(f=linear_model, params0=tree3(), x=x53()[:2], y=np.array([0.5, -0.5]),
                      etas=np.array([0.1, 0.2]), steps=3),
         f=Fn(), params0=Params(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)),
         etas=Arr(ndim=1, lo=0.0, lo_open=True), steps=Int(1)),
    case("quadratic.lanczos_top_eigenvalue", quadratic.lanczos_top_eigenvalue,
         lambda: dict(matvec=diag_matvec, v0=np.ones(4), num_iter=3),
         matvec=Fn(), v0=Arr(ndim=1, nonempty=True), num_iter=Int(1)),
    case("quadratic.top_hessian_eigenvalue", quadratic.top_hessian_eigenvalue,
         lambda: dict(loss_fn=scalar_loss, params=tree3(), key=KEY, num_iter=3),
         loss_fn=Fn(), params=Params(), key=Key(), num_iter=Int(2)),
    case("quadratic.gd_with_sharpness", quadratic.gd_with_sharpness,
         lambda: dict(f=linear_model, params0=tree3(), x=x53(), y=np.arange(5.0), eta=0.05, steps=4, every=2, key=KEY,
                      num_iter=3),
         f=Fn(), params0=Params(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)), eta=POS,
         steps=Int(1, extra=((5, VALUE_ERR),)), every=Int(1), key=Key(), num_iter=Int(2)),
    # ------------------------------------------------------------------ implicit_bias
    case("implicit_bias.q", implicit_bias.q, lambda: dict(z=np.linspace(-3, 3, 4)), z=Arr()),
    case("implicit_bias.Q", implicit_bias.Q,
         lambda: dict(beta=np.array([1.0, -2.0, 0.0]), alpha=0.5, theta0=np.array([1.0, 2.0, 0.5])),
         beta=Arr(min_ndim=1, fixed=(-1,)), alpha=POS, theta0=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True)),
    case("implicit_bias.train_diagonal_net", implicit_bias.train_diagonal_net,
         lambda: dict(X=regression_problem()[0], y=regression_problem()[1], alpha=1.0, theta0=np.ones(4),
                      step_scale=0.1, tol=1e-3, max_steps=10_000),
         X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)), alpha=POS,
         theta0=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True), step_scale=Real(lo=0.0, lo_open=True, hi=1.0),
         tol=POS, max_steps=Int(1)),
    case("implicit_bias.argmin_Q", implicit_bias.argmin_Q,
         lambda: dict(X=regression_problem()[0], y=regression_problem()[1], alpha=1.0, theta0=np.ones(4), tol=1e-10),
         X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)), alpha=POS,
         theta0=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True), tol=POS),
    case("implicit_bias.argmin_Q_primal", implicit_bias.argmin_Q_primal,
         lambda: dict(X=regression_problem()[0], y=regression_problem()[1], alpha=1.0, theta0=np.ones(4)),
         X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)), alpha=POS,
         theta0=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True)),
    case("implicit_bias.sparse_regression_problem", implicit_bias.sparse_regression_problem,
         lambda: dict(key=KEY, n=3, d=5, k=2),
         key=Key(), n=Int(1), d=Int(1, extra=((1, VALUE_ERR),)), k=Int(1, extra=((6, VALUE_ERR),))),
    case("implicit_bias.min_l1_interpolant", implicit_bias.min_l1_interpolant,
         lambda: dict(X=regression_problem()[0], y=regression_problem()[1]),
         X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,))),
    case("implicit_bias.min_weighted_l2_interpolant", implicit_bias.min_weighted_l2_interpolant,
         lambda: dict(X=regression_problem()[0], y=regression_problem()[1], theta0=np.ones(4)),
         X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)),
         theta0=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True)),
    case("implicit_bias.hard_margin_svm", implicit_bias.hard_margin_svm,
         lambda: dict(X=separable()[0], y=separable()[1], support_tol=1e-7),
         X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,), extra=((np.array([1.0, 0.5, -1.0, -1.0]), VALUE_ERR),)),
         support_tol=NONNEG),
    case("implicit_bias.angle", implicit_bias.angle, lambda: dict(u=np.array([1.0, 0.0]), v=np.array([1.0, 1.0])),
         u=Arr(min_ndim=1, fixed=(-1,), extra=((np.zeros(2), VALUE_ERR),)),
         v=Arr(min_ndim=1, fixed=(-1,), extra=((np.zeros(2), VALUE_ERR),))),
    case("implicit_bias.train_linear_classifier", implicit_bias.train_linear_classifier,
         lambda: dict(X=separable()[0], y=separable()[1], checkpoints=[1, 3], loss="logistic", lr=0.1,
                      w0=np.zeros(2)),
         X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)),
         checkpoints=Custom((([3, 1], VALUE_ERR), ([1.5], TYPE_ERR), ("ab", TYPE_ERR), ([], VALUE_ERR),
                             ([-1, 2], VALUE_ERR), (None, TYPE_ERR))),
         loss=Choice(), lr=Real(lo=0.0, lo_open=True, optional=True), w0=Arr(ndim=1, fixed=(0,), optional=True)),
    case("implicit_bias.batch_second_moment_trace", implicit_bias.batch_second_moment_trace,
         lambda: dict(theta=np.ones(3), X=x53(), y=np.arange(5.0), batch=2.0),
         theta=Arr(min_ndim=1, fixed=(-1,)), X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)),
         batch=Real(lo=0.0, lo_open=True, extra=((6.0, VALUE_ERR),))),
    case("implicit_bias.sgd_least_squares_fdr", implicit_bias.sgd_least_squares_fdr,
         lambda: dict(key=KEY, X=x53(), y=np.arange(5.0), lr=0.01, batch=2.0, steps=4, burn_in=2, chains=2,
                      center=np.zeros(3)),
         key=Key(), X=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)), lr=POS,
         batch=Real(lo=0.0, lo_open=True, extra=((6.0, VALUE_ERR),)), steps=Int(1),
         burn_in=Int(0, extra=((4, VALUE_ERR),)), chains=Int(1), center=Arr(ndim=1, fixed=(0,), optional=True)),
    case("implicit_bias.circle_model", implicit_bias.circle_model,
         lambda: dict(theta=np.array([0.0, 1.0]), kappa=0.5),
         theta=Arr(), kappa=Real(extra=((1.0, VALUE_ERR), (-1.5, VALUE_ERR)))),
    case("implicit_bias.circle_sgd_occupation", implicit_bias.circle_sgd_occupation,
         lambda: dict(key=KEY, kappa=0.5, lr=0.1, label_sd=1.0, tilt_sd=0.1, steps=4, burn_in=1, chains=2),
         key=Key(), kappa=Real(extra=((1.0, VALUE_ERR),)), lr=POS, label_sd=NONNEG, tilt_sd=NONNEG, steps=Int(1),
         burn_in=Int(0, extra=((4, VALUE_ERR),)), chains=Int(1)),
    case("implicit_bias.circle_chain_stationary", implicit_bias.circle_chain_stationary,
         lambda: dict(kappa=0.5, lr=0.1, label_sd=1.0, tilt_sd=0.1, grid=32),
         kappa=Real(extra=((-1.0, VALUE_ERR),)), lr=POS, label_sd=NONNEG, tilt_sd=POS, grid=Int(16)),
    case("implicit_bias.circle_fokker_planck", implicit_bias.circle_fokker_planck,
         lambda: dict(theta=np.linspace(-np.pi, np.pi, 9), kappa=0.5, lr=0.1, label_sd=1.0, tilt_sd=0.1),
         theta=Arr(ndim=1, extra=((np.array([0.0, 1.0]), VALUE_ERR), (np.array([0.0, 2.0, 1.0]), VALUE_ERR))),
         kappa=Real(extra=((1.0, VALUE_ERR), (-1.5, VALUE_ERR))), lr=POS, label_sd=NONNEG, tilt_sd=POS),
    case("implicit_bias.two_speed_transition_matrix", implicit_bias.two_speed_transition_matrix,
         lambda: dict(n_per_half=4, slow=1, fast=2), n_per_half=Int(2), slow=Int(1), fast=Int(1)),
    case("implicit_bias.two_speed_chain_stationary", implicit_bias.two_speed_chain_stationary,
         lambda: dict(n_per_half=4, slow=1, fast=2), n_per_half=Int(2, extra=((5, VALUE_ERR),)), slow=Int(1),
         fast=Int(1)),
    case("implicit_bias.two_speed_walk_occupation", implicit_bias.two_speed_walk_occupation,
         lambda: dict(key=KEY, n_per_half=4, walkers=3, steps=5, burn_in=1, slow=1, fast=2),
         key=Key(), n_per_half=Int(2), walkers=Int(1), steps=Int(1), burn_in=Int(0, extra=((5, VALUE_ERR),)),
         slow=Int(1), fast=Int(1)),
    # ------------------------------------------------------------------ regions
    *[case(f"regions.{fn.__name__}", fn,
           lambda: dict(net=NET_1D, params=mlp_params(NET_1D), a=-2.0, b=2.0, exact=False),
           net=Net(extra=((nets.mlp((1, 3, 1), "tanh"), VALUE_ERR), (NET_2D, VALUE_ERR),
                          (nets.mlp((1, 3, 2), "relu"), VALUE_ERR))),
           params=Params(structured=True), a=Custom((("a", TYPE_ERR), (None, TYPE_ERR), (np.nan, VALUE_ERR), (3.0, VALUE_ERR))),
           b=Custom((("b", TYPE_ERR), (True, TYPE_ERR), (np.nan, VALUE_ERR), (-3.0, VALUE_ERR))))
      for fn in (regions.trace_1d, regions.breakpoints_1d, regions.count_pieces_1d)],
    case("regions.random_params", regions.random_params, lambda: dict(net=NET_1D, key=KEY, count=2),
         net=Net(), key=Key(), count=Int(1)),
    case("regions.draw_params", regions.draw_params, lambda: dict(net=NET_1D, key=KEY, count=2),
         net=Net(), key=Key(), count=Int(1)),
    case("regions.line_counts", regions.line_counts,
         lambda: dict(net=NET_1D, params=mlp_params(NET_1D), radius=1.5),
         net=Net(extra=((nets.mlp((1, 3, 1), "tanh"), VALUE_ERR), (NET_2D, VALUE_ERR),
                        (nets.mlp((1, 3, 2), "relu"), VALUE_ERR))),
         params=Params(structured=True), radius=POS),
    case("regions.tent", regions.tent, lambda: dict(x=np.array([0.25, 0.75, 2.0])),
         x=Custom((("a", TYPE_ERR), (None, TYPE_ERR), (np.nan, VALUE_ERR), (np.array([0.1, np.nan]), VALUE_ERR),
                   (np.array([1j]), TYPE_ERR), (True, TYPE_ERR)))),
    case("regions.sawtooth", regions.sawtooth, lambda: dict(depth=2), depth=Int(1)),
    case("regions.zaslavsky", regions.zaslavsky, lambda: dict(n=3, d=2), n=Int(0), d=Int(1)),
    case("regions.count_cells", regions.count_cells,
         lambda: dict(normals=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), offsets=np.array([0.0, 0.5, -1.0])),
         normals=Arr(ndim=2, fixed=(0,), extra=((np.array([["a", 1]], dtype=object), TYPE_ERR),)),
         offsets=Arr(ndim=1, fixed=(0,))),
    case("regions.characteristic_polynomial", regions.characteristic_polynomial,
         lambda: dict(normals=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), offsets=np.array([0.0, 0.5, -1.0]),
                      max_subsets=100),
         normals=Arr(ndim=2, fixed=(0,), extra=((np.array([["a", 1]], dtype=object), TYPE_ERR),)),
         offsets=Arr(ndim=1, fixed=(0,)), max_subsets=Int(1, extra=((2, VALUE_ERR),))),
    case("regions.zaslavsky_cells", regions.zaslavsky_cells,
         lambda: dict(normals=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), offsets=np.array([0.0, 0.5, -1.0])),
         normals=Arr(ndim=2, fixed=(0,), extra=((np.array([["a", 1]], dtype=object), TYPE_ERR),)),
         offsets=Arr(ndim=1, fixed=(0,))),
    case("regions.hidden_lines", regions.hidden_lines, lambda: dict(net=NET_2D, params=mlp_params(NET_2D), exact=True),
         net=Net(extra=((NET_TANH, VALUE_ERR),)), params=Params(structured=True)),
    case("regions.count_regions_2d_shallow", regions.count_regions_2d_shallow,
         lambda: dict(net=NET_2D, params=mlp_params(NET_2D)),
         net=Net(extra=((NET_2D_DEEP, VALUE_ERR), (NET_1D, VALUE_ERR))), params=Params(structured=True)),
    case("regions.activation_regions_2d", regions.activation_regions_2d,
         lambda: dict(net=NET_2D_DEEP, params=mlp_params(NET_2D_DEEP), box=(-1.0, 1.0, -2.0, 2.0), tol=1e-12),
         net=Net(extra=((NET_1D, VALUE_ERR),)), params=Params(structured=True),
         box=Custom(((3, TYPE_ERR), ((0.0, 1.0, 0.0), TYPE_ERR), ((1.0, 0.0, 0.0, 1.0), VALUE_ERR),
                     ((0.0, 1.0, 0.0, np.nan), VALUE_ERR), ("abcd", TYPE_ERR))), tol=NONNEG),
    case("regions.activation_patterns", regions.activation_patterns,
         lambda: dict(net=NET_2D_DEEP, params=mlp_params(NET_2D_DEEP), x=x53()[:, :2]),
         net=Net(extra=((NET_TANH, VALUE_ERR),)), params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("regions.pattern_map_2d", regions.pattern_map_2d,
         lambda: dict(net=NET_2D, params=mlp_params(NET_2D), box=(-1.0, 1.0, -1.0, 1.0), resolution=4),
         net=Net(extra=((NET_1D, VALUE_ERR),)), params=Params(structured=True),
         box=Custom(((None, TYPE_ERR), ((0.0, 0.0, 0.0, 1.0), VALUE_ERR))), resolution=Int(2)),
    case("regions.plot_regions_2d", regions.plot_regions_2d, lambda: dict(regions=regions_2d(), seed=0, linewidth=0.3),
         cleanup=close_figures,
         regions=Custom((("r", TYPE_ERR), (None, TYPE_ERR),
                         (regions.Regions2D([], np.zeros((0, 3), bool), np.zeros((0, 2))), VALUE_ERR))),
         seed=Int(0), linewidth=NONNEG),
    # ------------------------------------------------------------------ plotting
    case("plotting.use_book_style", plotting.use_book_style, lambda: {}),
    case("plotting.loglog_sweep", plotting.loglog_sweep,
         lambda: dict(x=np.array([1.0, 2.0, 4.0]), y=np.array([1.0, 0.7, 0.5]), yerr=np.array([0.1, 0.1, 0.05])),
         cleanup=close_figures,
         x=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, nonempty=True), y=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True),
         yerr=Arr(ndim=(1, 2), fixed=(0,), lo=0.0, optional=True)),
    case("plotting.kernel_heatmap", plotting.kernel_heatmap, lambda: dict(matrix=spd()), cleanup=close_figures,
         matrix=Arr(ndim=2, nonempty=True)),
    case("plotting.phase_diagram", plotting.phase_diagram,
         lambda: dict(x=np.array([1.0, 2.0, 3.0]), y=np.array([0.5, 1.0]),
                      values=np.array([[0.5, 1.5, 2.0], [0.8, 1.2, np.nan]]), levels=(1.0,)),
         cleanup=close_figures,
         x=Arr(ndim=1, fixed=(0,), nonempty=True), y=Arr(ndim=1, fixed=(0,), nonempty=True),
         values=Arr(ndim=2, fixed=(0, 1), finite=False, lo=0.0, lo_open=True,
                    extra=((np.array([[0.5, np.inf, 2.0], [0.8, 1.2, 1.0]]), VALUE_ERR),)),
         levels=Custom((("a", TYPE_ERR), ([], VALUE_ERR), ([np.nan], VALUE_ERR)))),
]
