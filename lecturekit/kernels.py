"""Dual activations and the infinite-width NNGP and NTK of fully connected networks.

Conventions (those of the neural-tangents library, NTK parameterization):

* a dense layer computes z = (w_std / sqrt(fan_in)) W h + b_std b with W, b ~ N(0, 1);
* the input covariance is normalized by the input dimension d: K^(0)(x, x') = x.x'/d;
* after the first dense layer K^(1) = w_std^2 K^(0) + b_std^2 and Theta^(1) = K^(1);
* at every later dense layer (the readout included, with out_w_std, out_b_std)

      K_new     = w_std^2 E[phi(u) phi(v)] + b_std^2,
      Theta_new = K_new + w_std^2 E[phi'(u) phi'(v)] Theta_old,

  where (u, v) is centred Gaussian with covariance [[K(x,x), K(x,x')], [K(x,x'), K(x',x')]].

The Gaussian expectations E[phi(u) phi(v)] and E[phi'(u) phi'(v)] (the dual activation of
phi and of phi') are available in closed form for ReLU (arc-cosine kernels), erf and the
identity, and by Gauss-Hermite quadrature for every other activation.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import activations as _act
from ._validation import (
    as_float_array, check_broadcastable, check_inputs_pair, check_positive_int, check_range, check_real, concrete,
    is_traced,
)

# Probabilists' Gauss-Hermite rule: E[g(z)] for z ~ N(0, 1) is sum_i w_i g(z_i). With 128 x 128
# nodes the smooth activations (tanh, softplus, swish) are integrated to ~1e-9 for
# variances up to a few units (tested against adaptive quadrature in tests/test_kernels.py).
QUADRATURE_NODES = 128


def gauss_hermite_rule(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Probabilists' Gauss-Hermite nodes z_i and weights w_i (summing to 1):
    E[g(z)] ~ sum_i w_i g(z_i) for z ~ N(0, 1), exact for polynomials of degree < 2 nodes."""
    return _gauss_hermite_rule(check_positive_int(nodes, name="nodes"))


@lru_cache(maxsize=None)
def _gauss_hermite_rule(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    return z, w / np.sqrt(2.0 * np.pi)


class Kernels(NamedTuple):
    """The two infinite-width kernels of a network on a pair of input batches."""

    nngp: jax.Array
    ntk: jax.Array


# --------------------------------------------------------------------------------------
# One-hidden-layer ReLU kernels on the unit sphere (closed forms)


def relu_nngp_sphere(xi: ArrayLike) -> jax.Array:
    """NNGP of a one-hidden-layer sqrt(2)*ReLU network for unit-norm inputs.

    k(xi) = (xi (pi - arccos xi) + sqrt(1 - xi^2)) / pi,  xi = <x, x'> in [-1, 1],
    the kernel of f(x) = m^(-1/2) sum_i v_i sqrt(2) max(0, w_i.x), w_i ~ N(0, I).
    Exact at xi = +-1 (inputs are clipped to [-1, 1] to absorb rounding; a value farther
    outside than rounding, sqrt(eps) of its dtype, is a ValueError).
    """
    xi = _cosine(xi)
    return (xi * (jnp.pi - jnp.arccos(xi)) + jnp.sqrt(1.0 - xi**2)) / jnp.pi


def relu_ntk_sphere(xi: ArrayLike) -> jax.Array:
    """NTK of the same network: relu_nngp_sphere(xi) + xi (pi - arccos xi) / pi.

    The second term is xi times the dual of the derivative, 2 E[1{w.x>0} 1{w.x'>0}]
    = (pi - arccos xi)/pi, i.e. the contribution of the hidden-layer weights.
    """
    xi = _cosine(xi)
    return relu_nngp_sphere(xi) + xi * (jnp.pi - jnp.arccos(xi)) / jnp.pi


def _cosine(xi: ArrayLike) -> jax.Array:
    """Validate a cosine of unit vectors (|xi| <= 1 up to rounding) and clip it to [-1, 1]."""
    xi = as_float_array(xi, name="xi")
    slack = float(np.sqrt(np.finfo(xi.dtype).eps))
    check_range(xi, name="xi", lo=-1.0 - slack, hi=1.0 + slack, what="a cosine <x, x'> of unit vectors")
    return jnp.clip(xi, -1.0, 1.0)


# --------------------------------------------------------------------------------------
# Dual activations for general variances


def _correlation(k11: jax.Array, k12: jax.Array, k22: jax.Array) -> tuple[jax.Array, jax.Array]:
    norm = jnp.sqrt(k11 * k22)
    safe = jnp.where(norm > 0, norm, 1.0)
    rho = jnp.clip(jnp.where(norm > 0, k12 / safe, 0.0), -1.0, 1.0)
    return norm, rho


def _relu_duals(k11, k12, k22):
    # Cho & Saul arc-cosine kernels of degree 1 and 0 for phi = max(0, .).
    norm, rho = _correlation(k11, k12, k22)
    theta = jnp.arccos(rho)
    e_phi = norm * (jnp.sqrt(1.0 - rho**2) + (jnp.pi - theta) * rho) / (2.0 * jnp.pi)
    e_dphi = jnp.where(norm > 0, (jnp.pi - theta) / (2.0 * jnp.pi), 0.0)
    return e_phi, e_dphi


def _erf_duals(k11, k12, k22):
    a, b = 1.0 + 2.0 * k11, 1.0 + 2.0 * k22
    ratio = jnp.clip(2.0 * k12 / jnp.sqrt(a * b), -1.0, 1.0)
    e_phi = (2.0 / jnp.pi) * jnp.arcsin(ratio)
    e_dphi = (4.0 / jnp.pi) / jnp.sqrt(a * b - 4.0 * k12**2)
    return e_phi, e_dphi


def _identity_duals(k11, k12, k22):
    return k12, jnp.ones_like(k12)


@lru_cache(maxsize=None)  # one function per (activation, nodes): compiled callers are cached by it
def _quadrature_duals(activation: _act.Activation, nodes: int):
    z, w = gauss_hermite_rule(nodes)  # NumPy constants: the cached closure holds no JAX values
    z1, z2 = z[:, None], z[None, :]
    w2 = w[:, None] * w[None, :]

    def scalar(k11, k12, k22):
        # (u, v) = S z with S the symmetric square root of the covariance, so that the rule
        # is exactly symmetric under swapping the two inputs: S = (C + s I) / t with
        # s = sqrt(det C), t = sqrt(tr C + 2 s).
        s = jnp.sqrt(jnp.maximum(k11 * k22 - k12**2, 0.0))
        t = jnp.sqrt(k11 + k22 + 2.0 * s)
        t = jnp.where(t > 0, t, 1.0)
        u = ((k11 + s) * z1 + k12 * z2) / t
        v = (k12 * z1 + (k22 + s) * z2) / t
        e_phi = jnp.sum(w2 * activation.fn(u) * activation.fn(v))
        e_dphi = jnp.sum(w2 * activation.grad(u) * activation.grad(v))
        return e_phi, e_dphi

    def duals(k11, k12, k22):
        shape = jnp.broadcast_shapes(k11.shape, k12.shape, k22.shape)
        a = jnp.broadcast_to(k11, shape).reshape(-1, shape[-1] if shape else 1)
        c = jnp.broadcast_to(k12, shape).reshape(a.shape)
        b = jnp.broadcast_to(k22, shape).reshape(a.shape)
        # lax.map over rows keeps memory at (row length) x nodes^2.
        e_phi, e_dphi = jax.lax.map(lambda r: jax.vmap(scalar)(*r), (a, c, b))
        return e_phi.reshape(shape), e_dphi.reshape(shape)

    return duals


_CLOSED_FORMS = {"relu": _relu_duals, "erf": _erf_duals, "identity": _identity_duals}


def dual_expectations(
    activation: str,
    k11: ArrayLike,
    k12: ArrayLike,
    k22: ArrayLike,
    *,
    quadrature: bool = False,
    nodes: int = QUADRATURE_NODES,
) -> tuple[jax.Array, jax.Array]:
    """E[phi(u) phi(v)] and E[phi'(u) phi'(v)] for (u, v) ~ N(0, [[k11, k12], [k12, k22]]).

    Closed forms for "relu" (arc-cosine), "erf" and "identity"; Gauss-Hermite quadrature
    with ``nodes`` x ``nodes`` points otherwise (or when ``quadrature=True``, which is
    how the closed forms are tested). Arrays broadcast against each other.
    """
    act = _act.get(activation)
    k11 = as_float_array(k11, name="k11")
    k12 = as_float_array(k12, name="k12")
    k22 = as_float_array(k22, name="k22")
    check_broadcastable(k11=k11, k12=k12, k22=k22)
    check_range(k11, name="k11", lo=0.0, what="a variance")
    check_range(k22, name="k22", lo=0.0, what="a variance")
    a, c, b = concrete(k11), concrete(k12), concrete(k22)
    if a is not None and c is not None and b is not None and np.any(c**2 > a * b * (1 + 1e-9) + 1e-300):
        raise ValueError("k12 must satisfy k12^2 <= k11 k22 (a valid 2x2 covariance)")
    nodes = check_positive_int(nodes, name="nodes", minimum=2)
    return dual_fn(act, quadrature=quadrature, nodes=nodes)(k11, k12, k22)


def dual_fn(activation: str | _act.Activation, *, quadrature: bool = False, nodes: int = QUADRATURE_NODES):
    """The function (k11, k12, k22) -> (E[phi(u) phi(v)], E[phi'(u) phi'(v)]) behind
    :func:`dual_expectations`, without checks of its array inputs: pure jnp, usable inside ``jit``,
    ``vmap`` and ``lax.scan`` (callers validate their own inputs)."""
    act = _act.get(activation)
    nodes = check_positive_int(nodes, name="nodes", minimum=2)
    if not quadrature and act.name in _CLOSED_FORMS:
        return _CLOSED_FORMS[act.name]
    return _quadrature_duals(act, nodes)


# --------------------------------------------------------------------------------------
# Deep recursions


def mlp_kernels(
    x1: ArrayLike,
    x2: ArrayLike | None = None,
    *,
    depth: int,
    activation: str = "relu",
    w_std: float = 2**0.5,
    b_std: float = 0.0,
    out_w_std: float = 1.0,
    out_b_std: float = 0.0,
    quadrature: bool = False,
) -> Kernels:
    """Infinite-width NNGP and NTK of a ``depth``-hidden-layer network (NTK parameterization).

    Implements the recursion in the module docstring for inputs x1 (n1, d) and x2 (n2, d)
    (``x2=None`` means x2 = x1) and returns a :class:`Kernels` of (n1, n2) arrays.
    ``quadrature=True`` forces Gauss-Hermite quadrature even where a closed form exists.
    """
    a, b = check_inputs_pair(x1, x2)
    depth = check_positive_int(depth, name="depth")
    act = _act.get(activation)
    w2 = check_real(w_std, name="w_std", nonnegative=True) ** 2
    b2 = check_real(b_std, name="b_std", nonnegative=True) ** 2
    ow2 = check_real(out_w_std, name="out_w_std", nonnegative=True) ** 2
    ob2 = check_real(out_b_std, name="out_b_std", nonnegative=True) ** 2
    return _recursion(a, b, depth, dual_fn(act, quadrature=quadrature), w2, b2, ow2, ob2)


def _recursion(a, b, depth, duals, w2, b2, ow2, ob2) -> Kernels:
    """The recursion, as one compiled program for small or traced inputs, else tile by tile.

    ``a is b`` (x2 = None) marks a symmetric kernel: its diagonal is set to the variances
    exactly (correlation 1, no arccos rounding) and only the tiles on and above the diagonal
    are computed.
    """
    symmetric = a is b
    scalars = (w2, b2, ow2, ob2)
    n1, n2 = a.shape[0], b.shape[0]
    if is_traced(a) or is_traced(b) or max(n1, n2) <= TILE:
        var_a = _layer_variances(a, depth, duals, *scalars)
        var_b = var_a if symmetric else _layer_variances(b, depth, duals, *scalars)
        nngp, ntk = _kernel_tile(a, b, var_a, var_b, 0 if symmetric else n2, depth, duals, *scalars)
        return Kernels(nngp, ntk)
    return _tiled_recursion(np.asarray(a), np.asarray(b), symmetric, depth, duals, scalars)


#: Kernels with more than TILE rows or columns are assembled from TILE x TILE tiles, each one
#: compiled call: memory stays at a few tiles besides the result (10000 inputs: 2 x 0.8 GB).
TILE = 2048


def _tiled_recursion(a: np.ndarray, b: np.ndarray, symmetric: bool, depth, duals, scalars) -> Kernels:
    n1, n2 = a.shape[0], b.shape[0]
    a_pad = _pad_rows(a, TILE)  # repeated last rows: every tile has one shape, one compilation
    b_pad = a_pad if symmetric else _pad_rows(b, TILE)
    var_a = np.asarray(_layer_variances(a_pad, depth, duals, *scalars))
    var_b = var_a if symmetric else np.asarray(_layer_variances(b_pad, depth, duals, *scalars))
    nngp = np.empty((n1, n2), dtype=var_a.dtype)
    ntk = np.empty_like(nngp)

    def store(i, j, tiles):
        rows, cols = slice(i, i + TILE), slice(j, j + TILE)
        for out, tile in zip((nngp, ntk), tiles):
            block = np.asarray(tile)[: min(TILE, n1 - i), : min(TILE, n2 - j)]
            out[rows, cols] = block
            if symmetric and j > i:
                out[cols, rows] = block.T

    pending = None  # the tile being computed while the previous one is copied to the result
    for i in range(0, n1, TILE):
        for j in range(i if symmetric else 0, n2, TILE):
            offset = 0 if symmetric and i == j else TILE  # a tile's diagonal: row + offset == column
            tiles = _kernel_tile(a_pad[i:i + TILE], b_pad[j:j + TILE], var_a[:, i:i + TILE], var_b[:, j:j + TILE],
                                 offset, depth, duals, *scalars)  # dispatched asynchronously
            if pending is not None:
                store(*pending)
            pending = (i, j, tiles)
    store(*pending)
    return Kernels(jax.device_put(nngp), jax.device_put(ntk))


def _pad_rows(x: np.ndarray, multiple: int) -> np.ndarray:
    return np.pad(x, ((0, -x.shape[0] % multiple), (0, 0)), mode="edge")


@partial(jax.jit, static_argnums=(1, 2))
def _layer_variances(x, depth, duals, w2, b2, ow2, ob2) -> jax.Array:
    """(depth, n): the variance K(x, x) that enters each layer's dual activation."""
    k = w2 * jnp.sum(x * x, axis=1) / x.shape[1] + b2
    variances = []
    for layer in range(depth):
        variances.append(k)
        weight, bias = (ow2, ob2) if layer == depth - 1 else (w2, b2)
        k = weight * duals(k, k, k)[0] + bias
    return jnp.stack(variances)


@partial(jax.jit, static_argnums=(5, 6))
def _kernel_tile(a, b, var_a, var_b, diag_offset, depth, duals, w2, b2, ow2, ob2):
    """NNGP and NTK of the rows of a against the rows of b, given the layer variances.

    Entries with row + diag_offset == column lie on the diagonal of a symmetric kernel: their
    covariance is set to the variance at every layer, so their correlation is exactly 1.
    """
    k12 = w2 * (a @ b.T) / a.shape[1] + b2
    on_diagonal = jnp.arange(a.shape[0])[:, None] + diag_offset == jnp.arange(b.shape[0])[None, :]
    ntk12 = k12
    for layer in range(depth):
        weight, bias = (ow2, ob2) if layer == depth - 1 else (w2, b2)
        k11, k22 = var_a[layer][:, None], var_b[layer][None, :]
        k12 = jnp.where(on_diagonal, k11, k12)
        e12, de12 = duals(k11, k12, k22)
        k12 = weight * e12 + bias
        ntk12 = k12 + weight * de12 * ntk12
    return k12, ntk12
