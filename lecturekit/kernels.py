"""The infinite-width NNGP and NTK of fully connected networks: the one kernel
recursion.

Conventions (those of the neural-tangents library, NTK parameterization):

* a dense layer computes z = (w_std / sqrt(fan_in)) W h + b_std b with W, b ~ N(0, 1);
* the input covariance is normalized by the input dimension d: K^(0)(x, x') = x.x'/d;
* after the first dense layer K^(1) = w_std^2 K^(0) + b_std^2 and Theta^(1) = K^(1);
* at every later dense layer (the readout included, with out_w_std, out_b_std)

      K_new     = w_std^2 E[phi(u) phi(v)] + b_std^2,
      Theta_new = K_new + w_std^2 E[phi'(u) phi'(v)] Theta_old,

  where (u, v) is centred Gaussian with covariance [[K(x,x), K(x,x')], [K(x,x'),
  K(x',x')]].

This layer-to-layer step is written once (:func:`next_layer`); :func:`mlp_kernels`
(and so ``nets.MLP.kernels``) iterates it over the layers, and the signal-propagation
maps of
:mod:`lecturekit.criticality` (variance, covariance and correlation maps) are the same
step without the NTK. The Gaussian expectations E[phi(u) phi(v)] and E[phi'(u) phi'(v)]
(the dual activation of phi and of phi') come from :mod:`lecturekit.gaussian`: closed
forms for ReLU (arc-cosine kernels), erf and the identity, Gauss-Hermite quadrature
otherwise.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import activations as _act
from . import gaussian as _gaussian
from ._validation import (
    as_float_array,
    check_inputs_pair,
    check_positive_int,
    check_range,
    check_real,
    is_traced,
)

__all__ = [
    "Kernels",
    "relu_nngp_sphere",
    "relu_ntk_sphere",
    "mlp_kernels",
    "next_layer",
    "TILE",
]


class Kernels(NamedTuple):
    """The two infinite-width kernels of a network on a pair of input batches.

    Attributes:
        nngp: (n1, n2) NNGP K(x1_i, x2_j), the covariance of the output at
            initialization.
        ntk: (n1, n2) NTK Theta(x1_i, x2_j).

    Example:
        >>> from lecturekit import kernels
        >>> k = kernels.mlp_kernels(jnp.eye(3), depth=1)
        >>> print(k.nngp.shape, k.ntk.shape)
        (3, 3) (3, 3)
    """

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

    Args:
        xi: cosines <x, x'> of unit vectors, any shape.

    Returns:
        Array of the shape of ``xi``.

    Example:
        >>> from lecturekit import kernels
        >>> xi = jnp.array([-1.0, 0.0, 1.0])
        >>> print(np.round(np.asarray(kernels.relu_nngp_sphere(xi)), 6))
        [0.       0.31831  1.      ]
    """
    xi = _cosine(xi)
    return (xi * (jnp.pi - jnp.arccos(xi)) + jnp.sqrt(1.0 - xi**2)) / jnp.pi


def relu_ntk_sphere(xi: ArrayLike) -> jax.Array:
    """NTK of the same network: relu_nngp_sphere(xi) + xi (pi - arccos xi) / pi.

    The second term is xi times the dual of the derivative, 2 E[1{w.x>0} 1{w.x'>0}]
    = (pi - arccos xi)/pi, i.e. the contribution of the hidden-layer weights.

    Args:
        xi: cosines <x, x'> of unit vectors, any shape.

    Returns:
        Array of the shape of ``xi``; equal to 2 at xi = 1.

    Example:
        >>> from lecturekit import kernels
        >>> xi = jnp.array([-1.0, 0.0, 1.0])
        >>> print(np.round(np.asarray(kernels.relu_ntk_sphere(xi)), 6))
        [0.       0.31831  2.      ]
    """
    xi = _cosine(xi)
    return relu_nngp_sphere(xi) + xi * (jnp.pi - jnp.arccos(xi)) / jnp.pi


def _cosine(xi: ArrayLike) -> jax.Array:
    """Validate a cosine of unit vectors (|xi| <= 1 up to rounding) and clip it to [-1,
    1].
    """
    xi = as_float_array(xi, name="xi")
    slack = float(np.sqrt(np.finfo(xi.dtype).eps))
    check_range(
        xi,
        name="xi",
        lo=-1.0 - slack,
        hi=1.0 + slack,
        what="a cosine <x, x'> of unit vectors",
    )
    return jnp.clip(xi, -1.0, 1.0)


# --------------------------------------------------------------------------------------
# The one layer-to-layer step


def next_layer(
    duals: _gaussian.Duals,
    weight: ArrayLike,
    bias: ArrayLike,
    ntk: ArrayLike | None = None,
) -> tuple[jax.Array, jax.Array | None]:
    """One dense layer after the activation: the step of every kernel recursion.

    K_new = weight E[phi phi] + bias and, when the previous tangent kernel Theta_old is
    given, Theta_new = K_new + weight E[phi' phi'] Theta_old, with weight = w_std^2 and
    bias = b_std^2 (NTK parameterization; the NNGP part holds in
    both). :func:`mlp_kernels` and every map of :mod:`lecturekit.criticality` take their
    layers from here. Traceable: the range checks run on concrete values only.

    Args:
        duals: the dual-activation values at the previous kernel, a
            :class:`~lecturekit.gaussian.Duals` (a pair of inputs or the diagonal).
        weight: w_std^2 >= 0.
        bias: b_std^2 >= 0.
        ntk: Theta_old, of the shape of ``duals.phi``, or None for the NNGP alone.

    Returns:
        (K_new, Theta_new), with Theta_new None when ``ntk`` is None.

    Example:
        >>> from lecturekit import gaussian, kernels
        >>> duals = gaussian.dual_fn("relu")(1.0, 1.0, 1.0)   # E[relu(z)^2] = 1/2
        >>> k, theta = kernels.next_layer(duals, 2.0, 0.0, ntk=1.0)
        >>> print(float(k), float(theta))
        1.0 2.0
    """
    if not isinstance(duals, _gaussian.Duals):
        raise TypeError(
            f"duals must be a lecturekit.gaussian.Duals, got {type(duals).__name__}"
        )
    if not is_traced(weight):
        weight = check_real(weight, name="weight", nonnegative=True)
    if not is_traced(bias):
        bias = check_real(bias, name="bias", nonnegative=True)
    if ntk is not None:
        ntk = as_float_array(ntk, name="ntk")
        if ntk.shape != jnp.shape(duals.phi):
            raise ValueError(
                f"ntk must have the shape of duals.phi {jnp.shape(duals.phi)}, "
                f"got {ntk.shape}"
            )
    return _next_layer(duals, weight, bias, ntk)


def _next_layer(duals, weight, bias, ntk=None):
    """:func:`next_layer` without the checks, for the recursions of this module."""
    k_new = weight * duals.phi + bias
    return k_new, (None if ntk is None else k_new + weight * duals.dphi * ntk)


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
    """Infinite-width NNGP and NTK of a ``depth``-hidden-layer network (NTK
    parameterization).

    Implements the recursion in the module docstring for inputs x1 (n1, d) and x2 (n2,
    d) (``x2=None`` means x2 = x1) and returns a :class:`Kernels` of (n1, n2) arrays.
    ``quadrature=True`` forces Gauss-Hermite quadrature even where a closed form exists.
    Large kernels are computed in tiles of :data:`TILE` rows and columns.

    Args:
        x1: inputs (n1, d).
        x2: inputs (n2, d), or None for x1 (a symmetric kernel, diagonal exact).
        depth: number of hidden layers (>= 1).
        activation: a name of :mod:`lecturekit.activations`.
        w_std: weight std sigma_w of the hidden layers.
        b_std: bias std sigma_b of the hidden layers.
        out_w_std: weight std of the readout layer.
        out_b_std: bias std of the readout layer.
        quadrature: use the Gauss-Hermite rule even for relu, erf, identity.

    Returns:
        :class:`Kernels` (nngp, ntk), each (n1, n2).

    Example:
        >>> from lecturekit import kernels
        >>> x = jnp.array([[1.0, 0.0], [0.0, 1.0]]) * 2**0.5  # unit inputs: x.x/d = 1
        >>> k = kernels.mlp_kernels(x, depth=1)
        >>> xi = jnp.array([1.0, 0.0])
        >>> bool(jnp.allclose(k.ntk[0], kernels.relu_ntk_sphere(xi)))
        True
    """
    a, b = check_inputs_pair(x1, x2)
    depth = check_positive_int(depth, name="depth")
    act = _act.get(activation)
    w2 = check_real(w_std, name="w_std", nonnegative=True) ** 2
    b2 = check_real(b_std, name="b_std", nonnegative=True) ** 2
    ow2 = check_real(out_w_std, name="out_w_std", nonnegative=True) ** 2
    ob2 = check_real(out_b_std, name="out_b_std", nonnegative=True) ** 2
    return _recursion(
        a, b, depth, _gaussian.dual_fn(act, quadrature=quadrature), w2, b2, ow2, ob2
    )


def _recursion(a, b, depth, duals, w2, b2, ow2, ob2) -> Kernels:
    """The recursion, as one compiled program for small or traced inputs, else tile by
    tile.

    ``a is b`` (x2 = None) marks a symmetric kernel: its diagonal is set to the
    variances exactly (correlation 1, no arccos rounding) and only the tiles on and
    above the diagonal are computed.
    """
    symmetric = a is b
    scalars = (w2, b2, ow2, ob2)
    n1, n2 = a.shape[0], b.shape[0]
    if is_traced(a) or is_traced(b) or max(n1, n2) <= TILE:
        var_a = _layer_variances(a, depth, duals, *scalars)
        var_b = var_a if symmetric else _layer_variances(b, depth, duals, *scalars)
        nngp, ntk = _kernel_tile(
            a, b, var_a, var_b, 0 if symmetric else n2, depth, duals, *scalars
        )
        return Kernels(nngp, ntk)
    return _tiled_recursion(
        np.asarray(a), np.asarray(b), symmetric, depth, duals, scalars
    )


TILE = 2048
"""Kernels with more than TILE rows or columns are assembled from TILE x TILE tiles,
each one compiled call: memory stays at a few tiles besides the result (10000 inputs:
2 x 0.8 GB)."""


def _tiled_recursion(
    a: np.ndarray, b: np.ndarray, symmetric: bool, depth, duals, scalars
) -> Kernels:
    n1, n2 = a.shape[0], b.shape[0]
    # repeated last rows: every tile has one shape, one compilation
    a_pad = _pad_rows(a, TILE)
    b_pad = a_pad if symmetric else _pad_rows(b, TILE)
    var_a = np.asarray(_layer_variances(a_pad, depth, duals, *scalars))
    var_b = (
        var_a
        if symmetric
        else np.asarray(_layer_variances(b_pad, depth, duals, *scalars))
    )
    nngp = np.empty((n1, n2), dtype=var_a.dtype)
    ntk = np.empty_like(nngp)

    def store(i, j, tiles):
        rows, cols = slice(i, i + TILE), slice(j, j + TILE)
        for out, tile in zip((nngp, ntk), tiles):
            block = np.asarray(tile)[: min(TILE, n1 - i), : min(TILE, n2 - j)]
            out[rows, cols] = block
            if symmetric and j > i:
                out[cols, rows] = block.T

    # the tile being computed while the previous one is copied to the result
    pending = None
    for i in range(0, n1, TILE):
        for j in range(i if symmetric else 0, n2, TILE):
            # a tile's diagonal: row + offset == column
            offset = 0 if symmetric and i == j else TILE
            tiles = _kernel_tile(
                a_pad[i : i + TILE],
                b_pad[j : j + TILE],
                var_a[:, i : i + TILE],
                var_b[:, j : j + TILE],
                # dispatched asynchronously
                offset,
                depth,
                duals,
                *scalars,
            )
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
        k = _next_layer(duals(k, k, k), weight, bias)[0]
    return jnp.stack(variances)


@partial(jax.jit, static_argnums=(5, 6))
def _kernel_tile(a, b, var_a, var_b, diag_offset, depth, duals, w2, b2, ow2, ob2):
    """NNGP and NTK of the rows of a against the rows of b, given the layer variances.

    Entries with row + diag_offset == column lie on the diagonal of a symmetric kernel:
    their covariance is set to the variance at every layer, so their correlation is
    exactly 1.
    """
    k12 = w2 * (a @ b.T) / a.shape[1] + b2
    on_diagonal = (
        jnp.arange(a.shape[0])[:, None] + diag_offset == jnp.arange(b.shape[0])[None, :]
    )
    ntk12 = k12
    for layer in range(depth):
        weight, bias = (ow2, ob2) if layer == depth - 1 else (w2, b2)
        k11, k22 = var_a[layer][:, None], var_b[layer][None, :]
        k12 = jnp.where(on_diagonal, k11, k12)
        k12, ntk12 = _next_layer(duals(k11, k12, k22), weight, bias, ntk12)
    return k12, ntk12
