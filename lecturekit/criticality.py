"""Signal propagation at initialization: variance and correlation maps, fixed points,
criticality.

Convention (NTK parameterization; the functions take the stds ``w_std`` = sigma_w and
``b_std`` = sigma_b, and the formulas below write C_w = w_std^2, C_b = b_std^2): a wide
fully connected network propagates the covariance of the pre-activations of two inputs
layer by layer,

    K^(l+1)_ab = C_b + C_w E[phi(u) phi(v)],  (u, v) ~ N(0, [[K_aa, K_ab], [K_ab,
    K_bb]]).

The diagonal (one input) is the *variance map*  K -> V(K) = C_b + C_w E_K[phi(z)^2],
z ~ N(0, K). Its fixed points K* = V(K*) are the variances a deep network forgets its
input into. Linearizing the three-dimensional map (K_aa, K_ab, K_bb) at K_aa = K_ab =
K_bb = K* gives the two susceptibilities (Roberts, Yaida & Hanin 2022; Schoenholz et
al. 2017)

    chi_par(K)  = dV/dK = (C_w / 2) E_K[(phi^2)''(z)] = C_w E_K[phi'(z)^2 + phi(z)
    phi''(z)], chi_perp(K) = dK^(l+1)_ab / dK^(l)_ab at K_ab = K_aa = K_bb = K  =  C_w
    E_K[phi'(z)^2].

The first equality for chi_par is the heat equation d/dK E_K[f] = (1/2) E_K[f'']
(Gaussian integration by parts); the second is (phi^2)'' = 2 phi'^2 + 2 phi phi''. The
second is Price's theorem d/dK_ab E[phi(u) phi(v)] = E[phi'(u) phi'(v)] evaluated at u =
v.

The *correlation map* at a variance K (usually the fixed point) is

    c(rho) = (C_b + C_w E[phi(u) phi(v)]) / K,  u, v ~ N(0, K) with correlation rho,

and its slope at rho = 1 is chi_perp(K): chi_perp < 1 (ordered phase) makes rho = 1
stable, so all inputs become alike with depth; chi_perp > 1 (chaotic phase) makes nearby
inputs decorrelate; chi_perp = 1 is the edge of chaos. Criticality in the strict sense
asks for chi_par = chi_perp = 1; on the edge of chaos with C_b > 0, chi_par(K*) < 1 (for
tanh the two meet only at (C_b, C_w) = (0, 1)).

These maps are the NNGP step of :mod:`lecturekit.kernels` (the one layer-to-layer
recursion of lecturekit) with the Gaussian expectations of :mod:`lecturekit.gaussian`:
closed forms for "relu", "erf" and "identity", the Gauss-Hermite rule otherwise
(one-dimensional on the diagonal, a tensor rule for two inputs). All maps here are pure
jnp functions (jit, vmap and lax.scan friendly) once the arguments have been validated
by the public wrappers. The inner maps are jitted with the dual activation static, so
repeated public calls with arrays of one shape compile once (an eager 2-D quadrature
would recompile its ``lax.map`` on every call); the validation of concrete inputs uses
NumPy, which compiles nothing.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
import scipy.stats
from jax.typing import ArrayLike

from . import activations as _act
from . import gaussian as _gaussian
from . import kernels as _kernels
from . import sampling as _sampling
from ._validation import (
    as_float_array,
    check_broadcastable,
    check_key,
    check_positive_int,
    check_real,
    concrete,
    float_dtype,
    warn_if_below_precision,
)
from .gaussian import check_covariance as _check_covariance
from .gaussian import check_variance as _check_variance

__all__ = [
    "variance_map",
    "variance_trajectory",
    "fixed_point",
    "chi_parallel",
    "chi_perp",
    "covariance_map",
    "correlation_map",
    "correlation_slope",
    "kernel_trajectory",
    "critical_weight_variance",
    "layer_mean_squares",
    "sample_network_kernels",
    "relu_layer_factor_moments",
    "relu_output_excess_kurtosis",
    "relu_output_mixture",
]

DEFAULT_NODES = _gaussian.QUADRATURE_NODES
PAIR_NODES = 48


_ZERO = 0.0  # the default b_std
# the default w_std of sample_network_kernels (its square is taken as 2 exactly)
_SQRT2 = 2**0.5


def _weight_variances(w_std, b_std, *, arrays: bool = False):
    """(C_W, C_B) = (w_std^2, b_std^2), validated (arrays >= 0 when ``arrays``, else
    floats).
    """

    def one(std, name):
        if std is None:
            raise TypeError(
                f"{name} is required (the std sigma of the {name[0]} entries)"
            )
        if std is _SQRT2:
            return 2.0
        if not arrays:
            return check_real(std, name=name, nonnegative=True) ** 2
        value = _check_variance(std, name)
        # square concrete values in NumPy: nothing compiles before all checks
        values = concrete(value)
        return value**2 if values is None else np.square(values)

    return one(w_std, "w_std"), one(b_std, "b_std")


def _layer_law(activation, nodes, w_std, b_std, *, arrays: bool = False):
    """(dual, C_W, C_B) of one layer, checked: the dual activation of ``activation``
    with a ``nodes``-point Gauss-Hermite rule (:func:`lecturekit.gaussian.dual_fn`) and
    the weight and bias variances (:func:`_weight_variances`)."""
    dual = _gaussian.dual_fn(
        activation, nodes=check_positive_int(nodes, name="nodes", minimum=2)
    )
    return (dual, *_weight_variances(w_std, b_std, arrays=arrays))


# --------------------------------------------------------------------------------------
# One input: the variance map and its fixed point


@partial(jax.jit, static_argnums=(1,))
def _variance_map(k, dual, c_w, c_b):
    return _kernels.next_layer(dual.diagonal(k), c_w, c_b)[0]


def variance_map(
    variance: ArrayLike,
    activation: str = "tanh",
    *,
    w_std: float | None = None,
    b_std: float = _ZERO,
    nodes: int = DEFAULT_NODES,
) -> jax.Array:
    """V(K) = b_std^2 + w_std^2 E_K[phi(z)^2], z ~ N(0, K): one layer of the NNGP on the
    diagonal.

    The diagonal of the kernel recursion of :mod:`lecturekit.kernels` (closed forms for
    relu, erf, identity; a one-dimensional Gauss-Hermite rule with ``nodes`` nodes
    otherwise).

    Args:
        variance: pre-activation variances K >= 0, any shape.
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight std sigma_w (C_W = w_std^2).
        b_std: bias std sigma_b (C_B = b_std^2).
        nodes: quadrature nodes.

    Returns:
        Array of the shape of ``variance``.

    Example:
        >>> from lecturekit import criticality
        >>> v = criticality.variance_map(2.0, "relu", w_std=2**0.5)
        >>> print(round(float(v), 12))
        2.0
    """
    dual, c_w, c_b = _layer_law(activation, nodes, w_std, b_std)
    return _variance_map(_check_variance(variance, "variance"), dual, c_w, c_b)


def variance_trajectory(
    k0: ArrayLike,
    depth: int,
    activation: str = "tanh",
    *,
    w_std: ArrayLike | None = None,
    b_std: ArrayLike = _ZERO,
    nodes: int = DEFAULT_NODES,
) -> jax.Array:
    """K^(0) = k0, K^(l+1) = V(K^(l)) for l < depth (:func:`variance_map`).

    ``k0``, ``w_std`` and ``b_std`` broadcast against each other, so a whole grid of
    (sigma_w, sigma_b) can be iterated at once (``lax.scan`` over depth).

    Args:
        k0: initial variances.
        depth: number of maps applied (>= 0).
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight stds sigma_w (array).
        b_std: bias stds sigma_b (array).
        nodes: quadrature nodes.

    Returns:
        Array of shape ``(depth + 1, *shape)``, K^(0) first.

    Example:
        >>> from lecturekit import criticality
        >>> ks = criticality.variance_trajectory(1.0, 3, "identity",
        ...                                      w_std=jnp.array([1.0, 2.0]))
        >>> print(ks.shape, np.asarray(ks[-1]))
        (4, 2) [ 1. 64.]
    """
    depth = check_positive_int(depth, name="depth", minimum=0)
    dual, cw, cb = _layer_law(activation, nodes, w_std, b_std, arrays=True)
    k0 = _check_variance(k0, "k0")
    check_broadcastable(k0=k0, w_std=cw, b_std=cb)
    k0, cw, cb = jnp.broadcast_arrays(k0, cw, cb)
    return _trajectory(k0, cw, cb, dual, depth)


@partial(jax.jit, static_argnums=(3, 4))
def _trajectory(k0, cw, cb, dual, depth):
    def step(k, _):
        k_next = _variance_map(k, dual, cw, cb)
        return k_next, k_next

    _, ks = jax.lax.scan(step, k0, None, length=depth)
    return jnp.concatenate([k0[None], ks], axis=0)


def fixed_point(
    activation: str = "tanh",
    *,
    w_std: ArrayLike | None = None,
    b_std: ArrayLike = _ZERO,
    k0: ArrayLike = 1.0,
    iterations: int = 2000,
    nodes: int = DEFAULT_NODES,
) -> jax.Array:
    """The fixed point K* = V(K*) reached by iterating the variance map from ``k0``.

    Returns K^(iterations) (elementwise over broadcast ``w_std``, ``b_std``, ``k0``).
    Away from criticality the iteration converges geometrically (rate chi_par(K*)); at a
    critical point with K* = 0 (tanh at sigma_b = 0, sigma_w = 1) it converges only like
    1/(2 l), so the returned value is then ~ 1/(2 iterations), not 0. ReLU with b_std =
    0 has no unique
    fixed point: K -> (w_std^2 / 2) K. Use :func:`variance_trajectory` to see the
    approach.

    Args:
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight stds sigma_w.
        b_std: bias stds sigma_b.
        k0: starting variance.
        iterations: number of maps applied.
        nodes: quadrature nodes.

    Returns:
        Array of the broadcast shape of the arguments.

    Example:
        >>> from lecturekit import criticality
        >>> k = criticality.fixed_point("erf", w_std=1.0, b_std=0.5, iterations=200)
        >>> print(round(float(k), 6))
        0.624984
    """
    iterations = check_positive_int(iterations, name="iterations", minimum=1)
    return variance_trajectory(
        k0, iterations, activation, w_std=w_std, b_std=b_std, nodes=nodes
    )[-1]


# --------------------------------------------------------------------------------------
# Susceptibilities


@partial(jax.jit, static_argnums=(1, 3))
def _chi_parallel(k, act, c_w, nodes):
    return c_w * _gaussian.expectation(
        lambda z: act.grad(z) ** 2 + act.fn(z) * act.hess(z), k, nodes=nodes
    )


@partial(jax.jit, static_argnums=(1,))
def _chi_perp(k, dual, c_w):
    return c_w * dual.diagonal(k).dphi


def chi_parallel(
    variance: ArrayLike,
    activation: str = "tanh",
    *,
    w_std: ArrayLike | None = None,
    nodes: int = DEFAULT_NODES,
) -> jax.Array:
    """chi_par(K) = (C_W/2) E_K[(phi^2)''] = C_W E_K[phi'^2 + phi phi''] = dV/dK, C_W =
    w_std^2.

    (Erratum: the classic notes write (1/2) d^2 phi instead of (1/2) d^2 (phi^2).) For
    ReLU phi'' = 0 away from 0 and the formula gives C_W / 2, the slope of V(K) = C_W K
    / 2.

    Args:
        variance: variances K >= 0.
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight stds sigma_w (broadcast against ``variance``).
        nodes: quadrature nodes (one-dimensional Gauss-Hermite rule).

    Returns:
        Array of the broadcast shape.

    Example:
        >>> from lecturekit import criticality
        >>> chi = criticality.chi_parallel(1.0, "relu", w_std=2**0.5)
        >>> print(round(float(chi), 12))
        1.0
    """
    act = _act.get(activation)
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    c_w = _weight_variances(w_std, _ZERO, arrays=True)[0]
    return _chi_parallel(_check_variance(variance, "variance"), act, c_w, nodes)


def chi_perp(
    variance: ArrayLike,
    activation: str = "tanh",
    *,
    w_std: ArrayLike | None = None,
    nodes: int = DEFAULT_NODES,
) -> jax.Array:
    """chi_perp(K) = w_std^2 E_K[phi'(z)^2], z ~ N(0, K): the slope of the correlation
    map at rho = 1.

    Args:
        variance: variances K >= 0.
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight stds sigma_w (broadcast against ``variance``).
        nodes: quadrature nodes (activations without a closed form).

    Returns:
        Array of the broadcast shape.

    Example:
        >>> from lecturekit import criticality
        >>> print(round(float(criticality.chi_perp(0.0, "tanh", w_std=1.0)), 12))
        1.0
    """
    dual, c_w, _ = _layer_law(activation, nodes, w_std, _ZERO, arrays=True)
    return _chi_perp(_check_variance(variance, "variance"), dual, c_w)


# --------------------------------------------------------------------------------------
# Two inputs: the covariance and correlation maps


def _check_pair(k11, k12, k22):
    a, c, b = (
        _check_variance(k11, "k11"),
        as_float_array(k12, name="k12"),
        _check_variance(k22, "k22"),
    )
    _check_covariance(a, c, b)
    return jnp.broadcast_arrays(a, c, b)


def covariance_map(
    k11: ArrayLike,
    k12: ArrayLike,
    k22: ArrayLike,
    activation: str = "tanh",
    *,
    w_std: float | None = None,
    b_std: float = _ZERO,
    nodes: int = PAIR_NODES,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """One layer of the NNGP recursion for two inputs: (K_aa, K_ab, K_bb) -> the next
    layer's.

    K'_xy = b_std^2 + w_std^2 E[phi(u_x) phi(u_y)] with (u_a, u_b) ~ N(0, [[k11, k12],
    [k12, k22]]): the step of :mod:`lecturekit.kernels` without the NTK. Closed forms
    for relu, erf, identity; a ``nodes`` x ``nodes`` Gauss-Hermite rule otherwise.

    Args:
        k11: variances of the first input.
        k12: covariances.
        k22: variances of the second input.
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight std sigma_w.
        b_std: bias std sigma_b.
        nodes: quadrature nodes per dimension.

    Returns:
        (k11, k12, k22) of the next layer, each of the broadcast shape.

    Example:
        >>> from lecturekit import criticality
        >>> k = criticality.covariance_map(1.0, 0.0, 1.0, "relu", w_std=2**0.5)
        >>> print([round(float(v), 6) for v in k])
        [1.0, 0.31831, 1.0]
    """
    dual, c_w, c_b = _layer_law(activation, nodes, w_std, b_std)
    return _cov_step(*_check_pair(k11, k12, k22), dual, c_w, c_b)


@partial(jax.jit, static_argnums=(3,))
def _cov_step(a, c, b, dual, c_w, c_b):
    k11 = _kernels.next_layer(dual(a, a, a), c_w, c_b)[0]
    k22 = _kernels.next_layer(dual(b, b, b), c_w, c_b)[0]
    k12 = _kernels.next_layer(dual(a, c, b), c_w, c_b)[0]
    return k11, k12, k22


def correlation_map(
    rho: ArrayLike,
    variance: ArrayLike,
    activation: str = "tanh",
    *,
    w_std: float | None = None,
    b_std: float = _ZERO,
    nodes: int = PAIR_NODES,
) -> jax.Array:
    """c(rho) = (b_std^2 + w_std^2 E[phi(u) phi(v)]) / V(K) for u, v ~ N(0, K) of
    correlation rho.

    At the fixed point K = K* the denominator V(K*) equals K*, and c(1) = 1; the slope
    dc/drho at rho = 1 is chi_perp(K*).

    Args:
        rho: correlations in [-1, 1].
        variance: the variance K of both inputs (broadcast against ``rho``).
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight std sigma_w.
        b_std: bias std sigma_b.
        nodes: quadrature nodes per dimension.

    Returns:
        Array of the broadcast shape.

    Example:
        >>> from lecturekit import criticality
        >>> k12 = criticality.correlation_map(0.0, 1.0, "relu", w_std=2**0.5)
        >>> print(round(float(k12), 6))
        0.31831
    """
    dual, r, k, c_w, c_b = _check_correlation_args(
        rho, variance, activation, w_std, b_std, nodes
    )
    k11, k12, _ = _cov_step(k, r * k, k, dual, c_w, c_b)
    return k12 / k11


def kernel_trajectory(
    k11: ArrayLike,
    k12: ArrayLike,
    k22: ArrayLike,
    depth: int,
    activation: str = "tanh",
    *,
    w_std: float | None = None,
    b_std: float = _ZERO,
    nodes: int = PAIR_NODES,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Iterate :func:`covariance_map` ``depth`` times.

    The correlation at layer l is k12[l] / sqrt(k11[l] k22[l]).

    Args:
        k11: variances of the first input.
        k12: covariances.
        k22: variances of the second input.
        depth: number of layers (>= 0).
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight std sigma_w.
        b_std: bias std sigma_b.
        nodes: quadrature nodes per dimension.

    Returns:
        (k11, k12, k22), each of shape ``(depth + 1, *shape)``, the input first.

    Example:
        >>> from lecturekit import criticality
        >>> k11, k12, k22 = criticality.kernel_trajectory(1.0, 0.5, 1.0, 3,
        ...                                               "identity", w_std=1.0)
        >>> print(k11.shape, np.asarray(k12))
        (4,) [0.5 0.5 0.5 0.5]
    """
    depth = check_positive_int(depth, name="depth", minimum=0)
    dual, c_w, c_b = _layer_law(activation, nodes, w_std, b_std)
    return _kernel_scan(*_check_pair(k11, k12, k22), dual, c_w, c_b, depth)


@partial(jax.jit, static_argnums=(3, 6))
def _kernel_scan(a, c, b, dual, c_w, c_b, depth):
    def step(carry, _):
        nxt = _cov_step(*carry, dual, c_w, c_b)
        return nxt, nxt

    _, (k11, k12, k22) = jax.lax.scan(step, (a, c, b), None, length=depth)
    cat = lambda x0, xs: jnp.concatenate([x0[None], xs], axis=0)
    return cat(a, k11), cat(c, k12), cat(b, k22)


# --------------------------------------------------------------------------------------
# The edge of chaos (the line chi_perp(K*) = 1)


def critical_weight_variance(
    activation: str = "tanh",
    *,
    b_std: float | None = None,
    bracket: tuple[float, float] = (0.5, 10.0),
    iterations: int = 4000,
    nodes: int = DEFAULT_NODES,
    xtol: float = 1e-10,
) -> float:
    """The weight variance C_W = w_std^2 at which chi_perp(K*) = 1, given b_std (Brent's
    method).

    This is the edge of chaos; chi_par(K*) is generally below 1 there (strict
    criticality, chi_par = chi_perp = 1, holds for tanh only at b_std = 0).

    K* is the fixed point reached by iterating the variance map from K = 1. ``bracket``
    (of weight variances) must contain the answer (chi_perp - 1 changes sign on it). For
    tanh at b_std = 0 the answer is C_W = 1 (where K* = 0 and phi'(0)^2 C_W = 1); erf
    has phi'(0)^2 = 4/pi, so its answer is pi/4.

    Args:
        activation: a name of :mod:`lecturekit.activations`.
        b_std: bias std sigma_b.
        bracket: (lo, hi) weight variances around the answer.
        iterations: variance-map iterations for each K*.
        nodes: quadrature nodes.
        xtol: absolute tolerance on C_W.

    Returns:
        The edge-of-chaos C_W (a float; sigma_w is its square root).

    Example:
        >>> from lecturekit import criticality
        >>> c_w = criticality.critical_weight_variance("erf", b_std=0.3,
        ...                                            bracket=(0.5, 3.0))
        >>> print(round(c_w, 6))
        1.521948
    """
    dual = _gaussian.dual_fn(activation, nodes=check_positive_int(nodes, name="nodes"))
    if b_std is None:
        raise TypeError("b_std is required (the std sigma of the b entries)")
    c_b = check_real(b_std, name="b_std", nonnegative=True) ** 2
    if (
        isinstance(bracket, (str, bytes))
        or not hasattr(bracket, "__len__")
        or len(bracket) != 2
    ):
        raise TypeError(
            f"bracket must be a pair (lo, hi) of weight variances, got {bracket!r}"
        )
    lo, hi = (check_real(v, name="bracket", positive=True) for v in bracket)
    if not lo < hi:
        raise ValueError(f"bracket must satisfy lo < hi, got {bracket}")
    iterations = check_positive_int(iterations, name="iterations")
    xtol = check_real(xtol, name="xtol", positive=True)
    # the map is evaluated in the default float dtype: below its rounding the root is
    # noise
    warn_if_below_precision(xtol, float_dtype(), name="xtol", scale=hi)

    def excess(c_w: float) -> float:
        # the argument types of fixed_point(..., float, float): one compilation for both
        k0, cw, cb = (jnp.asarray(np.float64(v)) for v in (1.0, c_w, c_b))
        k = _trajectory(k0, cw, cb, dual, iterations)[-1]
        return float(_chi_perp(k, dual, cw)) - 1.0

    f_lo, f_hi = excess(lo), excess(hi)
    if f_lo * f_hi > 0:
        raise ValueError(
            f"bracket {bracket} does not contain the critical C_W (chi_perp - 1 = "
            f"{f_lo:.3g} and {f_hi:.3g})"
        )
    return float(scipy.optimize.brentq(excess, lo, hi, xtol=xtol))


def correlation_slope(
    rho: ArrayLike,
    variance: ArrayLike,
    activation: str = "tanh",
    *,
    w_std: float | None = None,
    b_std: float = _ZERO,
    nodes: int = PAIR_NODES,
) -> jax.Array:
    """dc/drho of the correlation map :func:`correlation_map` at (rho, K =
    ``variance``).

    With u, v ~ N(0, K) of correlation rho, Price's theorem gives
    dc/drho = C_W K E[phi'(u) phi'(v)] / V(K), C_W = w_std^2. At a fixed point K = K*:

    * at rho = 1 it is chi_perp(K*), the rate at which 1 - rho_l -> 0 in the ordered
      phase;
    * at the fixed point rho* < 1 of the chaotic phase it is the rate of rho_l - rho* ->
      0, and the correlation depth scale there is -1 / ln c'(rho*) (Schoenholz et al.
      2017).

    Args:
        rho: correlations in [-1, 1].
        variance: the variance K of both inputs.
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight std sigma_w.
        b_std: bias std sigma_b.
        nodes: quadrature nodes per dimension.

    Returns:
        Array of the broadcast shape of ``rho`` and ``variance``.

    Example:
        >>> from lecturekit import criticality
        >>> slope = criticality.correlation_slope(1.0, 1.0, "relu", w_std=2**0.5)
        >>> print(round(float(slope), 12))
        1.0
    """
    dual, r, k, c_w, c_b = _check_correlation_args(
        rho, variance, activation, w_std, b_std, nodes
    )
    return _correlation_slope(r, k, dual, c_w, c_b)


@partial(jax.jit, static_argnums=(2,))
def _correlation_slope(r, k, dual, c_w, c_b):
    e_dphi = dual(k, r * k, k).dphi
    v = _kernels.next_layer(dual(k, k, k), c_w, c_b)[0]
    return c_w * k * e_dphi / v


# --------------------------------------------------------------------------------------
# Finite random networks: exact and cheap samplers for Monte Carlo over networks


def layer_mean_squares(
    key: jax.Array,
    *,
    n0: int,
    width: int,
    depth: int,
    count: int,
    v_first: float,
    v_hidden: float,
    activation: str = "relu",
) -> tuple[jax.Array, jax.Array]:
    """Layer averages of ``count`` random bias-free networks at the input x = (1, ...,
    1).

    Network: z^(1) = sqrt(v_first / n0) W^(1) x and z^(l+1) = sqrt(v_hidden / width)
    W^(l+1) phi(z^(l)), all hidden widths ``width``, W entries i.i.d. N(0, 1). So
    v_first and
    v_hidden are V_w * fan_in: C_w for fan-in scaling, the fan-in itself for N(0, 1)
    weights. Since ||x||^2 / n0 = 1, the first layer has K^(1) = v_first.

    Given layer l, E[z_sq[:, l] | layer l] = v_hidden * phi_sq[:, l - 1] exactly.

    Args:
        key: a ``jax.random`` key.
        n0: input dimension.
        width: hidden width n.
        depth: number of hidden layers.
        count: number of networks.
        v_first: fan-in times the weight variance of the first layer.
        v_hidden: fan-in times the weight variance of the later layers.
        activation: a name of :mod:`lecturekit.activations`.

    Returns:
        (z_sq, phi_sq), each of shape (count, depth): z_sq[:, l - 1] = (1/n) ||z^(l)||^2
        and phi_sq[:, l - 1] = (1/n) ||phi(z^(l))||^2, one row per network.

    Example:
        >>> from lecturekit import criticality
        >>> z_sq, phi_sq = criticality.layer_mean_squares(
        ...     jax.random.key(0), n0=3, width=4, depth=5, count=2, v_first=2.0,
        ...     v_hidden=2.0)
        >>> print(z_sq.shape, bool(jnp.all(phi_sq <= z_sq)))
        (2, 5) True
    """
    check_key(key)
    n0 = check_positive_int(n0, name="n0")
    width = check_positive_int(width, name="width")
    depth = check_positive_int(depth, name="depth")
    count = check_positive_int(count, name="count")
    v_first = check_real(v_first, name="v_first", nonnegative=True)
    v_hidden = check_real(v_hidden, name="v_hidden", nonnegative=True)
    act = _act.get(activation)
    return _layer_mean_squares(key, v_first, v_hidden, n0, width, depth, count, act)


@partial(jax.jit, static_argnums=(3, 4, 5, 6, 7))
def _layer_mean_squares(key, v_first, v_hidden, n0, width, depth, count, act):
    draws = _sampling.standard_normal(
        key, (count, width * n0 + (depth - 1) * width**2), jnp.float64
    )
    return _layer_mean_squares_from(draws, v_first, v_hidden, n0, width, depth, act)


def _layer_mean_squares_from(draws, v_first, v_hidden, n0, width, depth, act):
    """The networks of :func:`layer_mean_squares` from their weights, one row of draws
    each: W^(1) (width x n0, row-major) first, then W^(2), ..., W^(depth) (width x
    width)."""
    count = draws.shape[0]
    w_first = draws[:, : width * n0].reshape(count, width, n0)
    w_hidden = draws[:, width * n0 :].reshape(count, depth - 1, width, width)

    def hidden_layer(zl, w):  # the hidden layers share one shape: lax.scan compiles one
        z_next = w @ act.fn(zl) * jnp.sqrt(v_hidden / width)
        return z_next, (jnp.mean(z_next**2), jnp.mean(act.fn(z_next) ** 2))

    def one_net(w1, ws):
        z1 = w1 @ jnp.ones(n0, dtype=draws.dtype) * jnp.sqrt(v_first / n0)
        _, (z_sq, phi_sq) = jax.lax.scan(hidden_layer, z1, ws)
        first = (jnp.mean(z1**2)[None], jnp.mean(act.fn(z1) ** 2)[None])
        return jnp.concatenate([first[0], z_sq]), jnp.concatenate([first[1], phi_sq])

    return jax.vmap(one_net)(w_first, w_hidden)


def _sqrt_psd(k: jax.Array) -> jax.Array:
    """S with S S^T = k for a symmetric PSD k (eigendecomposition: works when k is
    singular).
    """
    lam, u = jnp.linalg.eigh(k)
    return u * jnp.sqrt(jnp.clip(lam, 0.0))


def sample_network_kernels(
    key: jax.Array,
    x: ArrayLike,
    width: int,
    *,
    depth: int,
    count: int,
    max_width: int | None = None,
    activation: str = "relu",
    w_std: float = _SQRT2,
    b_std: float = _ZERO,
) -> tuple[jax.Array, jax.Array]:
    """Exact Monte Carlo of ``count`` random networks (NTK parameterization) at the
    inputs x.

    With C_W = w_std^2 and C_B = b_std^2 (defaults: sqrt(2) and 0, He-ReLU): the network
    has K_hat^(1) = C_B + C_W x x^T / n0, hidden widths ``width``, ``depth`` hidden
    layers. Given layer l, the neurons z^(l+1)_i = (z^(l+1)_{i, alpha})_alpha, i = 1..n,
    are i.i.d. N(0, K_hat^(l+1)) with K_hat^(l+1) = C_B + (C_W / n) phi(z^(l))
    phi(z^(l))^T (each neuron uses its own row of Gaussian weights), so drawing them
    layer by layer from these Gaussians has exactly the law of the network at the k
    inputs, with O(k n) numbers per layer, not n^2.

    Every layer draws ``max_width`` (default ``width``) neurons and uses the first
    ``width``, so one compilation serves all widths up to ``max_width``. Draws are
    float32 (their rounding, 1e-7 relative, is far below any Monte Carlo error);
    products are float64.

    Args:
        key: a ``jax.random`` key.
        x: inputs (k, n0).
        width: hidden width n.
        depth: number of hidden layers.
        count: number of networks.
        max_width: neurons drawn per layer (>= width).
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight std sigma_w.
        b_std: bias std sigma_b.

    Returns:
        (zz, k_hat), both of shape (count, depth, k, k): zz[:, l] = (1/n) z^(l+1)
        z^(l+1)^T (the layer average of hidden layer l + 1) and k_hat[:, l] = C_B + C_W
        phi(z^(l+1)) phi(z^(l+1))^T / n, the covariance of the next layer given the
        first l + 1 (the output covariance of the network cut after l + 1 hidden layers,
        readout with the same w_std, b_std).

    Example:
        >>> from lecturekit import criticality
        >>> zz, k_hat = criticality.sample_network_kernels(
        ...     jax.random.key(0), jnp.ones((2, 3)), 8, depth=2, count=5)
        >>> print(zz.shape, k_hat.shape)
        (5, 2, 2, 2) (5, 2, 2, 2)
    """
    check_key(key)
    x = as_float_array(x, name="x", ndim=2, nonempty=True)
    width = check_positive_int(width, name="width")
    max_width = (
        width if max_width is None else check_positive_int(max_width, name="max_width")
    )
    if width > max_width:
        raise ValueError(f"width must be <= max_width = {max_width}, got {width}")
    depth = check_positive_int(depth, name="depth")
    count = check_positive_int(count, name="count")
    c_w, c_b = _weight_variances(w_std, b_std)
    act = _act.get(activation)
    return _sample_network_kernels(
        key, x, width, c_w, c_b, depth, count, max_width, act
    )


@partial(jax.jit, static_argnums=(5, 6, 7, 8))
def _sample_network_kernels(key, x, width, c_w, c_b, depth, count, max_width, act):
    # weight 1/n on the first n neurons, 0 after
    use = (jnp.arange(max_width) < width) / width

    def layer(k_hat, g):  # given the previous layer the neurons are i.i.d. N(0, k_hat)
        zl = _sqrt_psd(k_hat) @ g  # (k, max_width): columns are neurons
        k_next = c_b + c_w * (act.fn(zl) * use) @ act.fn(zl).T
        return k_next, ((zl * use) @ zl.T, k_next)

    def one_network(g_net):
        k1 = c_b + c_w * x @ x.T / x.shape[1]
        return jax.lax.scan(layer, k1, g_net)[1]

    g = _sampling.standard_normal(
        key, (count, depth, x.shape[0], max_width), jnp.float32
    )
    return jax.vmap(one_network)(g)


# --------------------------------------------------------------------------------------
# He-ReLU networks at one input: the output is an explicit Gaussian scale mixture


def relu_layer_factor_moments(width: int, orders: int = 4) -> np.ndarray:
    """E[X^k], k = 1..orders, of the layer factor X = 2 chi^2_B / n, B ~ Bin(n, 1/2),
    n = width.

    For a He-ReLU network (C_w = 2, C_b = 0) at one input, K_hat^(l+1) = K_hat^(l) X_l
    with X_l i.i.d. (B is the number of active neurons and the sum of their relu^2 is
    chi^2_B given B). Exact: E[X^k] = (2/n)^k E[B (B + 2) ... (B + 2k - 2)]. In
    particular E[X] = 1 and E[X^2] = 1 + 5/n.

    Args:
        width: hidden width n.
        orders: highest moment.

    Returns:
        NumPy array (orders,) of E[X], E[X^2], ...

    Example:
        >>> from lecturekit import criticality
        >>> print(np.round(criticality.relu_layer_factor_moments(10, orders=2), 12))
        [1.  1.5]
    """
    n = check_positive_int(width, name="width")
    orders = check_positive_int(orders, name="orders")
    b = np.arange(n + 1, dtype=float)
    p_b = scipy.stats.binom.pmf(b, n, 0.5)
    rising = [
        np.prod([b + 2 * j for j in range(k)], axis=0) for k in range(1, orders + 1)
    ]
    return np.array(
        [(2.0 / n) ** k * np.sum(p_b * r) for k, r in zip(range(1, orders + 1), rising)]
    )


def relu_output_excess_kurtosis(width: ArrayLike, depth: int) -> np.ndarray:
    """Excess kurtosis 3((1 + 5/n)^L - 1) of the output of a He-ReLU network at one
    input.

    n = ``width`` (all L = ``depth`` hidden layers), C_w = 2, C_b = 0 in every layer: f
    is N(0, K_hat^(L+1)) given the hidden layers, so its excess kurtosis is
    3 Var(K_hat) / E[K_hat]^2 = 3 (E[X^2]^L - 1)
    (see :func:`relu_layer_factor_moments`).

    Args:
        width: widths n (array, >= 1).
        depth: number of hidden layers L.

    Returns:
        NumPy array of the shape of ``width``.

    Example:
        >>> from lecturekit import criticality
        >>> print(criticality.relu_output_excess_kurtosis(np.array([5.0]), 1))
        [3.]
    """
    n = np.asarray(as_float_array(width, name="width"), dtype=float)
    if np.any(n < 1):
        raise ValueError(f"width must be >= 1, got {n}")
    depth = check_positive_int(depth, name="depth")
    return 3.0 * ((1.0 + 5.0 / n) ** depth - 1.0)


def relu_output_mixture(
    key: jax.Array, width: int, *, depth: int = 3, count: int = 20_000, k1: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """f(x) and K_hat^(L+1) of ``count`` He-ReLU networks at one input, drawn from their
    exact law.

    L = ``depth`` hidden layers of ``width`` neurons, C_w = 2, C_b = 0 everywhere,
    first-layer variance K^(1) = ``k1``. Per layer B ~ Bin(n, 1/2) neurons are active
    and the sum of their relu^2 is chi^2_B (0 if B = 0); f ~ N(0, K_hat^(L+1)) given the
    layers. All are drawn by inverting their CDFs (scipy.stats) at uniforms from
    ``key``: exact, and it compiles no sampler.

    Args:
        key: a ``jax.random`` key.
        width: hidden width n.
        depth: number of hidden layers L.
        count: number of networks.
        k1: first-layer variance K^(1).

    Returns:
        NumPy arrays (f, k_out), each of shape (count,).

    Example:
        >>> from lecturekit import criticality
        >>> f, k_out = criticality.relu_output_mixture(jax.random.key(0), 16, count=4)
        >>> print(f.shape, bool(np.all(k_out >= 0)))
        (4,) True
    """
    check_key(key)
    n = check_positive_int(width, name="width")
    depth = check_positive_int(depth, name="depth")
    count = check_positive_int(count, name="count")
    k1 = check_real(k1, name="k1", positive=True)
    u = np.asarray(_sampling.uniform(key, ((2 * depth + 1) * count,), jnp.float64))
    u = u.reshape(2 * depth + 1, count)
    active = scipy.stats.binom.ppf(u[:depth], n, 0.5)
    chi2 = np.where(
        active > 0, scipy.stats.chi2.ppf(u[depth:-1], np.maximum(active, 1)), 0.0
    )
    k_out = k1 * np.prod(2.0 * chi2 / n, axis=0)
    return np.sqrt(k_out) * scipy.stats.norm.ppf(u[-1]), k_out


def _check_correlation_args(rho, variance, activation, w_std, b_std, nodes):
    """Validated (dual, rho, variance broadcast together, C_W, C_B) of the correlation
    map and its slope; rho is clipped to [-1, 1] after the range check."""
    dual, c_w, c_b = _layer_law(activation, nodes, w_std, b_std)
    r = as_float_array(rho, name="rho")
    r_np = concrete(r)
    if r_np is not None and np.any(np.abs(r_np) > 1.0 + 1e-12):
        raise ValueError("rho is a correlation and must lie in [-1, 1]")
    k = _check_variance(variance, "variance")
    check_broadcastable(rho=r, variance=k)
    r, k = jnp.broadcast_arrays(jnp.clip(r, -1.0, 1.0), k)
    return dual, r, k, c_w, c_b
