"""Signal propagation at initialization: variance and correlation maps, fixed points, criticality.

Convention (NTK parameterization, C_w = w_std^2, C_b = b_std^2): a wide fully connected
network propagates the covariance of the pre-activations of two inputs layer by layer,

    K^(l+1)_ab = C_b + C_w E[phi(u) phi(v)],  (u, v) ~ N(0, [[K_aa, K_ab], [K_ab, K_bb]]).

The diagonal (one input) is the *variance map*  K -> V(K) = C_b + C_w E_K[phi(z)^2],
z ~ N(0, K). Its fixed points K* = V(K*) are the variances a deep network forgets its input
into. Linearizing the three-dimensional map (K_aa, K_ab, K_bb) at K_aa = K_ab = K_bb = K*
gives the two susceptibilities (Roberts, Yaida & Hanin 2022; Schoenholz et al. 2017)

    chi_par(K)  = dV/dK = (C_w / 2) E_K[(phi^2)''(z)] = C_w E_K[phi'(z)^2 + phi(z) phi''(z)],
    chi_perp(K) = dK^(l+1)_ab / dK^(l)_ab at K_ab = K_aa = K_bb = K  =  C_w E_K[phi'(z)^2].

The first equality for chi_par is the heat equation d/dK E_K[f] = (1/2) E_K[f''] (Gaussian
integration by parts); the second is (phi^2)'' = 2 phi'^2 + 2 phi phi''. The second is Price's
theorem d/dK_ab E[phi(u) phi(v)] = E[phi'(u) phi'(v)] evaluated at u = v.

The *correlation map* at a variance K (usually the fixed point) is

    c(rho) = (C_b + C_w E[phi(u) phi(v)]) / K,  u, v ~ N(0, K) with correlation rho,

and its slope at rho = 1 is chi_perp(K): chi_perp < 1 (ordered phase) makes rho = 1 stable,
so all inputs become alike with depth; chi_perp > 1 (chaotic phase) makes nearby inputs
decorrelate; chi_perp = 1 is the critical line.

One-dimensional expectations use probabilists' Gauss-Hermite quadrature (exact for
polynomials of degree < 2 * nodes); two-dimensional ones use the closed forms of
:mod:`lecturekit.kernels` for "relu", "erf" and "identity" and a tensor Gauss-Hermite rule
otherwise. All maps here are pure jnp functions (jit, vmap and lax.scan friendly) once the
arguments have been validated by the public wrappers. The inner maps are jitted with the
activation and the number of nodes static, so repeated public calls with arrays of one shape
compile once (an eager 2-D quadrature would recompile its ``lax.map`` on every call); the
validation of concrete inputs uses NumPy, which compiles nothing.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
import scipy.stats
from jax.typing import ArrayLike

from . import activations as _act
from . import kernels as _kernels
from ._validation import (
    as_float_array, check_broadcastable, check_callable, check_key, check_positive_int, check_real,
    float_dtype, warn_if_below_precision,
)

DEFAULT_NODES = 128
PAIR_NODES = 48


# --------------------------------------------------------------------------------------
# Quadrature


def gauss_hermite(nodes: int = DEFAULT_NODES) -> tuple[jax.Array, jax.Array]:
    """Nodes z_i and weights w_i with E[g(z)] ~ sum_i w_i g(z_i) for z ~ N(0, 1).

    Probabilists' Gauss-Hermite rule (weights sum to 1); exact for polynomials of degree
    up to 2 * nodes - 1.
    """
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    z, w = _kernels.gauss_hermite_rule(nodes)
    return jnp.asarray(z), jnp.asarray(w)


def _expect(fn: Callable[[jax.Array], jax.Array], variance: jax.Array, nodes: int) -> jax.Array:
    z, w = _kernels.gauss_hermite_rule(nodes)
    z, w = jnp.asarray(z), jnp.asarray(w)
    scale = jnp.sqrt(jnp.maximum(variance, 0.0))[..., None]
    return jnp.sum(w * fn(scale * z), axis=-1)


def gaussian_expectation(
    fn: Callable[[jax.Array], jax.Array], variance: ArrayLike, *, nodes: int = DEFAULT_NODES
) -> jax.Array:
    """E[fn(z)] for z ~ N(0, variance), elementwise over an array of variances.

    ``fn`` must act elementwise on arrays (e.g. ``jnp.tanh`` or an activation's ``grad``).
    Computed as sum_i w_i fn(sqrt(variance) z_i) with the Gauss-Hermite rule of
    :func:`gauss_hermite`.
    """
    check_callable(fn, name="fn", what="a function of an array")
    k = _check_variance(variance, "variance")
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    return _expect(fn, k, nodes)


def _concrete(value: jax.Array) -> np.ndarray | None:
    """``value`` as a NumPy array, or None while it is traced (jit, grad, vmap)."""
    try:
        return np.asarray(value)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None


def _check_variance(value: ArrayLike, name: str) -> jax.Array:
    k = as_float_array(value, name=name)
    concrete = _concrete(k)
    if concrete is not None and np.any(concrete < 0):
        raise ValueError(f"{name} is a variance and must be >= 0, got min {float(concrete.min()):g}")
    return k


def _check_covariance(a: jax.Array, c: jax.Array, b: jax.Array) -> None:
    check_broadcastable(k11=a, k12=c, k22=b)
    values = [_concrete(v) for v in (a, c, b)]
    if all(v is not None for v in values):
        a_np, c_np, b_np = values
        if np.any(c_np**2 > a_np * b_np * (1 + 1e-9) + 1e-300):
            raise ValueError("k12 must satisfy k12^2 <= k11 k22 (a valid 2x2 covariance)")


def _check_weights(c_w: float, c_b: float) -> tuple[float, float]:
    return (check_real(c_w, name="c_w", nonnegative=True), check_real(c_b, name="c_b", nonnegative=True))


# --------------------------------------------------------------------------------------
# The variance map and its fixed point


@partial(jax.jit, static_argnums=(1, 4))
def _variance_map(k, act, c_w, c_b, nodes):
    return c_b + c_w * _expect(lambda z: act.fn(z) ** 2, k, nodes)


def variance_map(
    variance: ArrayLike, activation: str = "tanh", *, c_w: float, c_b: float = 0.0, nodes: int = DEFAULT_NODES
) -> jax.Array:
    """V(K) = C_b + C_w E_K[phi(z)^2], z ~ N(0, K): one layer of the NNGP recursion on the diagonal."""
    act = _act.get(activation)
    c_w, c_b = _check_weights(c_w, c_b)
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    return _variance_map(_check_variance(variance, "variance"), act, c_w, c_b, nodes)


def variance_trajectory(
    k0: ArrayLike,
    depth: int,
    activation: str = "tanh",
    *,
    c_w: ArrayLike,
    c_b: ArrayLike = 0.0,
    nodes: int = DEFAULT_NODES,
) -> jax.Array:
    """K^(0) = k0, K^(l+1) = V(K^(l)) for l < depth; returns (depth + 1, *shape) with K^(0) first.

    ``k0``, ``c_w`` and ``c_b`` broadcast against each other, so a whole grid of
    (C_w, C_b) can be iterated at once (``lax.scan`` over depth).
    """
    act = _act.get(activation)
    depth = check_positive_int(depth, name="depth", minimum=0)
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    k0 = _check_variance(k0, "k0")
    cw = _check_variance(c_w, "c_w")
    cb = _check_variance(c_b, "c_b")
    check_broadcastable(k0=k0, c_w=cw, c_b=cb)
    k0, cw, cb = jnp.broadcast_arrays(k0, cw, cb)
    return _trajectory(k0, cw, cb, act, depth, nodes)


@partial(jax.jit, static_argnums=(3, 4, 5))
def _trajectory(k0, cw, cb, act, depth, nodes):
    def step(k, _):
        k_next = _variance_map(k, act, cw, cb, nodes)
        return k_next, k_next

    _, ks = jax.lax.scan(step, k0, None, length=depth)
    return jnp.concatenate([k0[None], ks], axis=0)


def fixed_point(
    activation: str = "tanh",
    *,
    c_w: ArrayLike,
    c_b: ArrayLike = 0.0,
    k0: ArrayLike = 1.0,
    iterations: int = 2000,
    nodes: int = DEFAULT_NODES,
) -> jax.Array:
    """The fixed point K* = V(K*) reached by iterating the variance map from ``k0``.

    Returns K^(iterations) (elementwise over broadcast ``c_w``, ``c_b``, ``k0``). Away from
    criticality the iteration converges geometrically (rate chi_par(K*)); at a critical
    point with K* = 0 (tanh at (C_b, C_w) = (0, 1)) it converges only like 1/(2 l), so the
    returned value is then ~ 1/(2 * iterations), not 0. ReLU with C_b = 0 has no unique
    fixed point: K -> (C_w / 2) K. Use :func:`variance_trajectory` to see the approach.
    """
    iterations = check_positive_int(iterations, name="iterations", minimum=1)
    return variance_trajectory(k0, iterations, activation, c_w=c_w, c_b=c_b, nodes=nodes)[-1]


# --------------------------------------------------------------------------------------
# Susceptibilities


@partial(jax.jit, static_argnums=(1, 3))
def _chi_parallel(k, act, c_w, nodes):
    return c_w * _expect(lambda z: act.grad(z) ** 2 + act.fn(z) * act.hess(z), k, nodes)


@partial(jax.jit, static_argnums=(1, 3))
def _chi_perp(k, act, c_w, nodes):
    return c_w * _expect(lambda z: act.grad(z) ** 2, k, nodes)


def chi_parallel(
    variance: ArrayLike, activation: str = "tanh", *, c_w: ArrayLike, nodes: int = DEFAULT_NODES
) -> jax.Array:
    """chi_par(K) = (C_w/2) E_K[(phi^2)''] = C_w E_K[phi'^2 + phi phi''] = dV/dK.

    (Erratum: the classic notes write (1/2) d^2 phi instead of (1/2) d^2 (phi^2).) For ReLU
    phi'' = 0 away from 0 and the formula gives C_w / 2, the slope of V(K) = C_w K / 2.
    """
    act = _act.get(activation)
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    return _chi_parallel(_check_variance(variance, "variance"), act, _check_variance(c_w, "c_w"), nodes)


def chi_perp(
    variance: ArrayLike, activation: str = "tanh", *, c_w: ArrayLike, nodes: int = DEFAULT_NODES
) -> jax.Array:
    """chi_perp(K) = C_w E_K[phi'(z)^2], z ~ N(0, K): the slope of the correlation map at rho = 1."""
    act = _act.get(activation)
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    return _chi_perp(_check_variance(variance, "variance"), act, _check_variance(c_w, "c_w"), nodes)


# --------------------------------------------------------------------------------------
# Two inputs: the covariance and correlation maps


def _pair_expectation(act, k11, k12, k22, nodes):
    """E[phi(u) phi(v)] for (u, v) ~ N(0, [[k11, k12], [k12, k22]]), jit friendly."""
    return _kernels.dual_fn(act, nodes=nodes)(k11, k12, k22)[0]


def covariance_map(
    k11: ArrayLike,
    k12: ArrayLike,
    k22: ArrayLike,
    activation: str = "tanh",
    *,
    c_w: float,
    c_b: float = 0.0,
    nodes: int = PAIR_NODES,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """One layer of the NNGP recursion for two inputs: (K_aa, K_ab, K_bb) -> the next layer's.

    K'_xy = C_b + C_w E[phi(u_x) phi(u_y)] with (u_a, u_b) ~ N(0, [[k11, k12], [k12, k22]]).
    Closed forms for relu, erf, identity; a nodes x nodes Gauss-Hermite rule otherwise.
    """
    act = _act.get(activation)
    c_w, c_b = _check_weights(c_w, c_b)
    nodes = check_positive_int(nodes, name="nodes", minimum=2)
    a, c, b = (_check_variance(k11, "k11"), as_float_array(k12, name="k12"), _check_variance(k22, "k22"))
    _check_covariance(a, c, b)
    a, c, b = jnp.broadcast_arrays(a, c, b)
    return _cov_step(a, c, b, act, c_w, c_b, nodes)


@partial(jax.jit, static_argnums=(3, 6))
def _cov_step(a, c, b, act, c_w, c_b, nodes):
    k11 = c_b + c_w * _pair_expectation(act, a, a, a, nodes)
    k22 = c_b + c_w * _pair_expectation(act, b, b, b, nodes)
    k12 = c_b + c_w * _pair_expectation(act, a, c, b, nodes)
    return k11, k12, k22


def correlation_map(
    rho: ArrayLike,
    variance: ArrayLike,
    activation: str = "tanh",
    *,
    c_w: float,
    c_b: float = 0.0,
    nodes: int = PAIR_NODES,
) -> jax.Array:
    """c(rho) = (C_b + C_w E[phi(u) phi(v)]) / V(K) for u, v ~ N(0, K) with correlation rho.

    At the fixed point K = K* the denominator V(K*) equals K*, and c(1) = 1; the slope
    dc/drho at rho = 1 is chi_perp(K*).
    """
    act, r, k, c_w, c_b, nodes = _check_correlation_args(rho, variance, activation, c_w, c_b, nodes)
    k11, k12, _ = _cov_step(k, r * k, k, act, c_w, c_b, nodes)
    return k12 / k11


def kernel_trajectory(
    k11: ArrayLike,
    k12: ArrayLike,
    k22: ArrayLike,
    depth: int,
    activation: str = "tanh",
    *,
    c_w: float,
    c_b: float = 0.0,
    nodes: int = PAIR_NODES,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Iterate :func:`covariance_map` ``depth`` times; each output has shape (depth + 1, *shape).

    The correlation at layer l is k12[l] / sqrt(k11[l] k22[l]).
    """
    act = _act.get(activation)
    c_w, c_b = _check_weights(c_w, c_b)
    depth = check_positive_int(depth, name="depth", minimum=0)
    nodes = check_positive_int(nodes, name="nodes", minimum=2)
    a, c, b = (_check_variance(k11, "k11"), as_float_array(k12, name="k12"), _check_variance(k22, "k22"))
    _check_covariance(a, c, b)
    a, c, b = jnp.broadcast_arrays(a, c, b)
    return _kernel_scan(a, c, b, act, c_w, c_b, depth, nodes)


@partial(jax.jit, static_argnums=(3, 6, 7))
def _kernel_scan(a, c, b, act, c_w, c_b, depth, nodes):
    def step(carry, _):
        nxt = _cov_step(*carry, act, c_w, c_b, nodes)
        return nxt, nxt

    _, (k11, k12, k22) = jax.lax.scan(step, (a, c, b), None, length=depth)
    cat = lambda x0, xs: jnp.concatenate([x0[None], xs], axis=0)  # noqa: E731
    return cat(a, k11), cat(c, k12), cat(b, k22)


# --------------------------------------------------------------------------------------
# The critical line


def critical_weight_variance(
    activation: str = "tanh",
    *,
    c_b: float,
    bracket: tuple[float, float] = (0.5, 10.0),
    iterations: int = 4000,
    nodes: int = DEFAULT_NODES,
    xtol: float = 1e-10,
) -> float:
    """The C_w at which chi_perp(K*(C_w, C_b)) = 1, for a given C_b (Brent's method).

    K*(C_w, C_b) is the fixed point reached by iterating the variance map from K = 1.
    ``bracket`` must contain the answer (chi_perp - 1 changes sign on it). For tanh and
    erf at C_b = 0 the answer is C_w = 1 (where K* = 0 and phi'(0)^2 C_w = 1; erf has
    phi'(0)^2 = 4/pi, so its answer is pi/4).
    """
    act = _act.get(activation)
    c_b = check_real(c_b, name="c_b", nonnegative=True)
    if isinstance(bracket, (str, bytes)) or not hasattr(bracket, "__len__") or len(bracket) != 2:
        raise TypeError(f"bracket must be a pair (lo, hi) of weight variances, got {bracket!r}")
    lo, hi = (check_real(v, name="bracket", positive=True) for v in bracket)
    if not lo < hi:
        raise ValueError(f"bracket must satisfy lo < hi, got {bracket}")
    iterations = check_positive_int(iterations, name="iterations")
    nodes = check_positive_int(nodes, name="nodes")
    xtol = check_real(xtol, name="xtol", positive=True)
    # the map is evaluated in the default float dtype: below its rounding the root is noise
    warn_if_below_precision(xtol, float_dtype(), name="xtol", scale=hi)

    def excess(c_w: float) -> float:
        # the argument types of fixed_point(..., c_w=float, c_b=float): one compilation for both
        k0, cw, cb = (jnp.asarray(np.float64(v)) for v in (1.0, c_w, c_b))
        k = _trajectory(k0, cw, cb, act, iterations, nodes)[-1]
        return float(_chi_perp(k, act, cw, nodes)) - 1.0

    f_lo, f_hi = excess(lo), excess(hi)
    if f_lo * f_hi > 0:
        raise ValueError(
            f"bracket {bracket} does not contain the critical C_w (chi_perp - 1 = {f_lo:.3g} and {f_hi:.3g})"
        )
    return float(scipy.optimize.brentq(excess, lo, hi, xtol=xtol))


def correlation_slope(
    rho: ArrayLike,
    variance: ArrayLike,
    activation: str = "tanh",
    *,
    c_w: float,
    c_b: float = 0.0,
    nodes: int = PAIR_NODES,
) -> jax.Array:
    """dc/drho of the correlation map :func:`correlation_map` at (rho, K = ``variance``).

    With u, v ~ N(0, K) of correlation rho, Price's theorem gives
    dc/drho = C_w K E[phi'(u) phi'(v)] / V(K). At a fixed point K = K* (so V(K*) = K*):

    * at rho = 1 it is chi_perp(K*), the rate at which 1 - rho_l -> 0 in the ordered phase;
    * at the fixed point rho* < 1 of the chaotic phase it is the rate of rho_l - rho* -> 0,
      and the correlation depth scale there is -1 / ln c'(rho*) (Schoenholz et al. 2017).
    """
    act, r, k, c_w, c_b, nodes = _check_correlation_args(rho, variance, activation, c_w, c_b, nodes)
    return _correlation_slope(r, k, act, c_w, c_b, nodes)


@partial(jax.jit, static_argnums=(2, 5))
def _correlation_slope(r, k, act, c_w, c_b, nodes):
    duals = _kernels.dual_fn(act, nodes=nodes)
    e_dphi = duals(k, r * k, k)[1]
    v = c_b + c_w * duals(k, k, k)[0]
    return c_w * k * e_dphi / v


# --------------------------------------------------------------------------------------
# Finite random networks: exact and cheap samplers for Monte Carlo over networks


def _flat_normals(key: jax.Array, shape: tuple[int, ...], dtype) -> jax.Array:
    """i.i.d. N(0, 1) entries of ``shape``: the law of jax.random.normal(key, shape).

    Drawn flat and reshaped: XLA compiles the one-dimensional sampler several times faster
    than a multi-dimensional one, and compilation dominates the cost of these small draws.
    """
    return jax.random.normal(key, (int(np.prod(shape)),), dtype=dtype).reshape(shape)


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
    """Layer averages of ``count`` random bias-free networks at the input x = (1, ..., 1).

    Network: z^(1) = sqrt(v_first / n0) W^(1) x and z^(l+1) = sqrt(v_hidden / width)
    W^(l+1) phi(z^(l)), all hidden widths ``width``, W entries i.i.d. N(0, 1). So v_first and
    v_hidden are V_w * fan_in: C_w for fan-in scaling, the fan-in itself for N(0, 1) weights.
    Since ||x||^2 / n0 = 1, the first layer has K^(1) = v_first.

    Returns (z_sq, phi_sq), each of shape (count, depth):
    z_sq[:, l - 1] = (1/n) ||z^(l)||^2 and phi_sq[:, l - 1] = (1/n) ||phi(z^(l))||^2, one row per
    network. Given layer l, E[z_sq[:, l] | layer l] = v_hidden * phi_sq[:, l - 1] exactly.
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
    draws = _flat_normals(key, (count, width * n0 + (depth - 1) * width**2), jnp.float64)
    return _layer_mean_squares_from(draws, v_first, v_hidden, n0, width, depth, act)


def _layer_mean_squares_from(draws, v_first, v_hidden, n0, width, depth, act):
    """The networks of :func:`layer_mean_squares` from their weights, one row of draws each:
    W^(1) (width x n0, row-major) first, then W^(2), ..., W^(depth) (width x width)."""
    count = draws.shape[0]
    w_first = draws[:, : width * n0].reshape(count, width, n0)
    w_hidden = draws[:, width * n0:].reshape(count, depth - 1, width, width)

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
    """S with S S^T = k for a symmetric PSD k (eigendecomposition: works when k is singular)."""
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
    c_w: float = 2.0,
    c_b: float = 0.0,
) -> tuple[jax.Array, jax.Array]:
    """Exact Monte Carlo of ``count`` random networks (NTK parameterization) at the inputs x.

    Network: K_hat^(1) = C_b + C_w x x^T / n0, hidden widths ``width``, ``depth`` hidden layers.
    Given layer l, the neurons z^(l+1)_i = (z^(l+1)_{i, alpha})_alpha, i = 1..n, are i.i.d.
    N(0, K_hat^(l+1)) with K_hat^(l+1) = C_b + (C_w / n) phi(z^(l)) phi(z^(l))^T (each neuron uses
    its own row of Gaussian weights), so drawing them layer by layer from these Gaussians has
    exactly the law of the network at the k inputs, with O(k n) numbers per layer, not n^2.

    x: (k, n0). Returns (zz, k_hat), both of shape (count, depth, k, k):
    zz[:, l] = (1/n) z^(l+1) z^(l+1)^T (the layer average of hidden layer l + 1) and
    k_hat[:, l] = C_b + C_w phi(z^(l+1)) phi(z^(l+1))^T / n, the covariance of the next layer
    given the first l + 1: the output covariance given the hidden layers of the network cut
    after l + 1 hidden layers (readout with the same C_w, C_b).

    Every layer draws ``max_width`` (default ``width``) neurons and uses the first ``width``,
    so one compilation serves all widths up to ``max_width``. Draws are float32 (their
    rounding, 1e-7 relative, is far below any Monte Carlo error); products are float64.
    """
    check_key(key)
    x = as_float_array(x, name="x", ndim=2, nonempty=True)
    width = check_positive_int(width, name="width")
    max_width = width if max_width is None else check_positive_int(max_width, name="max_width")
    if width > max_width:
        raise ValueError(f"width must be <= max_width = {max_width}, got {width}")
    depth = check_positive_int(depth, name="depth")
    count = check_positive_int(count, name="count")
    c_w, c_b = _check_weights(c_w, c_b)
    act = _act.get(activation)
    return _sample_network_kernels(key, x, width, c_w, c_b, depth, count, max_width, act)


@partial(jax.jit, static_argnums=(5, 6, 7, 8))
def _sample_network_kernels(key, x, width, c_w, c_b, depth, count, max_width, act):
    use = (jnp.arange(max_width) < width) / width  # weight 1/n on the first n neurons, 0 after

    def layer(k_hat, g):  # given the previous layer the neurons are i.i.d. N(0, k_hat)
        zl = _sqrt_psd(k_hat) @ g  # (k, max_width): columns are neurons
        k_next = c_b + c_w * (act.fn(zl) * use) @ act.fn(zl).T
        return k_next, ((zl * use) @ zl.T, k_next)

    def one_network(g_net):
        k1 = c_b + c_w * x @ x.T / x.shape[1]
        return jax.lax.scan(layer, k1, g_net)[1]

    g = _flat_normals(key, (count, depth, x.shape[0], max_width), jnp.float32)
    return jax.vmap(one_network)(g)


# --------------------------------------------------------------------------------------
# He-ReLU networks at one input: the output is an explicit Gaussian scale mixture


def relu_layer_factor_moments(width: int, orders: int = 4) -> np.ndarray:
    """E[X^k], k = 1..orders, of the layer factor X = 2 chi^2_B / n, B ~ Bin(n, 1/2), n = width.

    For a He-ReLU network (C_w = 2, C_b = 0) at one input, K_hat^(l+1) = K_hat^(l) X_l with
    X_l i.i.d. (B is the number of active neurons and the sum of their relu^2 is chi^2_B given
    B). Exact: E[X^k] = (2/n)^k E[B (B + 2) ... (B + 2k - 2)]. In particular E[X] = 1 and
    E[X^2] = 1 + 5/n.
    """
    n = check_positive_int(width, name="width")
    orders = check_positive_int(orders, name="orders")
    b = np.arange(n + 1, dtype=float)
    p_b = scipy.stats.binom.pmf(b, n, 0.5)
    rising = [np.prod([b + 2 * j for j in range(k)], axis=0) for k in range(1, orders + 1)]
    return np.array([(2.0 / n) ** k * np.sum(p_b * r) for k, r in zip(range(1, orders + 1), rising)])


def relu_output_excess_kurtosis(width: ArrayLike, depth: int) -> np.ndarray:
    """Excess kurtosis 3((1 + 5/n)^L - 1) of the output of a He-ReLU network at one input.

    n = ``width`` (all L = ``depth`` hidden layers), C_w = 2, C_b = 0 in every layer: f is
    N(0, K_hat^(L+1)) given the hidden layers, so its excess kurtosis is
    3 Var(K_hat) / E[K_hat]^2 = 3 (E[X^2]^L - 1) (see :func:`relu_layer_factor_moments`).
    """
    n = np.asarray(as_float_array(width, name="width"), dtype=float)
    if np.any(n < 1):
        raise ValueError(f"width must be >= 1, got {n}")
    depth = check_positive_int(depth, name="depth")
    return 3.0 * ((1.0 + 5.0 / n) ** depth - 1.0)


def relu_output_mixture(
    key: jax.Array, width: int, *, depth: int = 3, count: int = 20_000, k1: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """f(x) and K_hat^(L+1) of ``count`` He-ReLU networks at one input, drawn from their exact law.

    L = ``depth`` hidden layers of ``width`` neurons, C_w = 2, C_b = 0 everywhere, first-layer
    variance K^(1) = ``k1``. Per layer B ~ Bin(n, 1/2) neurons are active and the sum of their
    relu^2 is chi^2_B (0 if B = 0); f ~ N(0, K_hat^(L+1)) given the layers. All are drawn by
    inverting their CDFs (scipy.stats) at uniforms from ``key``: exact, and it compiles no
    sampler. Returns NumPy arrays (f, k_out) of shape (count,).
    """
    check_key(key)
    n = check_positive_int(width, name="width")
    depth = check_positive_int(depth, name="depth")
    count = check_positive_int(count, name="count")
    k1 = check_real(k1, name="k1", positive=True)
    u = np.asarray(jax.random.uniform(key, ((2 * depth + 1) * count,), dtype=jnp.float64))
    u = u.reshape(2 * depth + 1, count)
    active = scipy.stats.binom.ppf(u[:depth], n, 0.5)
    chi2 = np.where(active > 0, scipy.stats.chi2.ppf(u[depth:-1], np.maximum(active, 1)), 0.0)
    k_out = k1 * np.prod(2.0 * chi2 / n, axis=0)
    return np.sqrt(k_out) * scipy.stats.norm.ppf(u[-1]), k_out


def _check_correlation_args(rho, variance, activation, c_w, c_b, nodes):
    """Validated (activation, rho, variance broadcast together, c_w, c_b, nodes) of the
    correlation map and its slope; rho is clipped to [-1, 1] after the range check."""
    act = _act.get(activation)
    c_w, c_b = _check_weights(c_w, c_b)
    nodes = check_positive_int(nodes, name="nodes", minimum=2)
    r = as_float_array(rho, name="rho")
    r_np = _concrete(r)
    if r_np is not None and np.any(np.abs(r_np) > 1.0 + 1e-12):
        raise ValueError("rho is a correlation and must lie in [-1, 1]")
    k = _check_variance(variance, "variance")
    check_broadcastable(rho=r, variance=k)
    r, k = jnp.broadcast_arrays(jnp.clip(r, -1.0, 1.0), k)
    return act, r, k, c_w, c_b, nodes
