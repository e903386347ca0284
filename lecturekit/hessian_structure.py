"""The structure of the model Hessian of wide networks: closed forms, block norms and
bounds.

Chapter 3 explains the transition to linearity by the Hessian H = d^2 f / d theta^2 of
the model (not of the loss) at one input. This module holds the exact results it uses.

Conventions. The one-hidden-layer model of the derivations is

    f(w, v; x) = m^{-1/2} sum_i v_i tanh(<w_i, x~>),        z_i = <w_i, x~>,

with all parameters N(0, 1) at initialization. Neuron i acts only in the plane spanned
by ``(x~/r, 0)`` and ``(0, e_i)`` with ``r = norm(x~)``, where its Hessian block is
``m^{-1/2} [[a_i, c_i], [c_i, 0]]`` with ``a_i = v_i tanh''(z_i) r^2`` and
``c_i = tanh'(z_i) r``; the eigenvalues are ``(a_i +- sqrt(a_i^2 + 4 c_i^2)) / (2 sqrt
m)``. Networks built with :func:`lecturekit.nets.mlp` use its NTK parameterization and
multipliers (z = mW h W + mb b). Everything that takes plain arrays runs in NumPy on the
host (no compilation per width) and returns floats or NumPy arrays.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import numpy as np
import scipy.special
from jax.typing import ArrayLike

from . import nets as _nets
from ._validation import (
    as_float_array,
    as_host_float_array,
    check_positive_int,
    check_real,
)

__all__ = [
    "norm_221",
    "layer_output_gradients",
    "one_hidden_layer_hessian_eigenvalues",
    "one_hidden_layer_hessian_norm",
    "mlp_hessian_norm",
    "kernel_gradient_direction",
    "kernel_bound_ratio",
    "bottleneck_mixed_block_norm",
    "bottleneck_holder_bound",
    "MaxMoments",
    "gaussian_max_abs_moments",
    "max_block_norm_moments",
]


# --------------------------------------------------------------------- the (2,2,1)-norm
def norm_221(tensor: ArrayLike) -> float:
    r"""The (2,2,1)-norm of a tensor T of shape (p, q, m), exactly.

    :math:`\|T\|_{2,2,1} = \sup_{\|u\| = \|u'\| = 1} \sum_k |u^\top T_{::k} u'|`. Since
    :math:`\sum_k |c_k| = \max_{s \in \{\pm 1\}^m} \sum_k s_k c_k`, it is the largest
    spectral norm of :math:`\sum_k s_k T_k` over the 2^(m-1) sign patterns (up to a
    global sign): exponential in m, meant for m <= 16. Hoelder's inequality
    :math:`\|\sum_k a_k T_k\|_2 \le \|T\|_{2,2,1} \|a\|_\infty` is attained at the
    maximizing sign pattern.

    Args:
        tensor: array of shape (p, q, m), 1 <= m <= 16.

    Returns:
        The norm, a float.

    Example:
        >>> from lecturekit import hessian_structure
        >>> t = np.zeros((3, 3, 3))
        >>> t[[0, 1, 2], [0, 1, 2], [0, 1, 2]] = [1.0, -4.0, 2.0]
        >>> hessian_structure.norm_221(t)      # a diagonal tensor: max_k abs(c_k)
        4.0
    """
    t = as_host_float_array(tensor, name="tensor", ndim=3, nonempty=True)
    m = t.shape[2]
    if m > 16:
        raise ValueError(
            f"tensor has m = {m} > 16 slices: norm_221 enumerates 2^(m-1) sign "
            "patterns, too many"
        )
    bits = (np.arange(2 ** (m - 1))[:, None] >> np.arange(m)[None, :]) & 1
    # the last sign is always +1 (a global flip changes nothing)
    signs = 1.0 - 2.0 * bits
    mats = np.einsum("sk,pqk->spq", signs, t)
    return float(np.max(np.linalg.norm(mats, ord=2, axis=(1, 2))))


# ------------------------------------------------------------------ multilayer networks
def _check_input(net: _nets.MLP, params: Any, x: ArrayLike) -> np.ndarray:
    net.check_params(params)
    x = as_host_float_array(x, name="x", ndim=1)
    if x.size != net.input_dim:
        raise ValueError(f"x must have {net.input_dim} entries, got {x.size}")
    return x


def layer_output_gradients(
    net: _nets.MLP, params: Any, x: ArrayLike
) -> list[jax.Array]:
    """d f / d alpha^(l) for every hidden layer l = 1..L of a scalar-output net, at one
    input.

    alpha^(l) is the post-activation vector of hidden layer l (the input of dense layer
    l+1), so d f / d alpha^(l) = mW_{l+1} W_{l+1} delta_{l+1} with delta the output
    gradient d f / d z of the next dense layer (one :meth:`lecturekit.nets.MLP.backward`
    pass). Its sup-norm (Q_inf) controls the Hessian and its Euclidean norm the
    gradient.

    Args:
        net: a :func:`lecturekit.nets.mlp` network with one output and no output
            activation.
        params: its parameters.
        x: one input, shape (d,).

    Returns:
        A list of L arrays, entry l - 1 of shape (n_l,).

    Example:
        >>> from lecturekit import hessian_structure, nets
        >>> net = nets.mlp((3, 8, 5, 1), "tanh")
        >>> grads = hessian_structure.layer_output_gradients(
        ...     net, net.init(jax.random.key(0)), np.ones(3))
        >>> [g.shape for g in grads]
        [(8,), (5,)]
    """
    net = _nets.check_mlp(net, output_activation=False)
    if net.output_dim != 1:
        raise ValueError(
            f"layer_output_gradients needs a net with one output, got {net.output_dim}"
        )
    net.check_params(params)
    x = as_float_array(x, name="x", ndim=1)
    if x.shape[0] != net.input_dim:
        raise ValueError(f"x must have {net.input_dim} entries, got {x.shape[0]}")
    return _layer_output_gradients(net, params, x)


# one compiled program per network, not one per operation
@partial(jax.jit, static_argnums=0)
def _layer_output_gradients(net, params, x):
    back = net.backward(params, x[None])
    mults = net.multipliers()
    return [
        mults[layer][0] * (params[layer]["W"] @ back.deltas[layer][0, 0])
        for layer in range(1, net.depth + 1)
    ]


# ----------------------------------------------------- one hidden layer, in closed form
def _tanh_derivatives(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.tanh(z)
    d1 = 1.0 - t**2
    return t, d1, -2.0 * t * d1


def _check_vz(
    v: ArrayLike, z: ArrayLike, scale: Any
) -> tuple[np.ndarray, np.ndarray, float]:
    v = as_host_float_array(v, name="v", ndim=1, nonempty=True)
    z = as_host_float_array(z, name="z", ndim=1, nonempty=True)
    if v.shape != z.shape:
        raise ValueError(
            f"v and z must have the same shape (m,), got {v.shape} and {z.shape}"
        )
    return v, z, check_real(scale, name="scale", positive=True)


def _block_entries(v, z, s):
    _, d1, d2 = _tanh_derivatives(z)
    return v * d2 * s**2, d1 * s


def one_hidden_layer_hessian_eigenvalues(
    v: ArrayLike, z: ArrayLike, scale: float = 1.0
) -> np.ndarray:
    """The 2m eigenvalues of the 2x2 blocks of the Hessian of a one-hidden-layer tanh
    net.

    Model f = m^{-1/2} sum_i v_i tanh(<w_i, x~>) at one input x~ of norm ``scale``,
    Hessian with respect to all (w_i, v_i) (module docstring): the eigenvalues
    (a_i +- sqrt(a_i^2 + 4 c_i^2)) / (2 sqrt m). Every other direction of w_i is a zero
    eigenvalue, not returned. For a scalar input x, ``scale = abs(x)`` and z_i = w_i x.

    Args:
        v: output weights, shape (m,).
        z: pre-activations z_i = <w_i, x~>, shape (m,).
        scale: the norm of x~, > 0.

    Returns:
        NumPy array of shape (2m,), increasing.

    Example:
        >>> from lecturekit import hessian_structure
        >>> hessian_structure.one_hidden_layer_hessian_eigenvalues(
        ...     [1.0], [0.0]).round(3)
        array([-1.,  1.])
    """
    v, z, s = _check_vz(v, z, scale)
    a, c = _block_entries(v, z, s)
    root = np.sqrt(a**2 + 4.0 * c**2)
    return np.sort(np.concatenate([a - root, a + root])) / (2.0 * np.sqrt(v.size))


def one_hidden_layer_hessian_norm(
    v: ArrayLike, z: ArrayLike, scale: float = 1.0
) -> float:
    r"""The spectral norm of the Hessian
    of :func:`one_hidden_layer_hessian_eigenvalues`.

    :math:`\|H\|_2 = \max_i (|a_i| + \sqrt{a_i^2 + 4 c_i^2}) / (2 \sqrt m)` (same
    arguments).

    Args:
        v: output weights, shape (m,).
        z: pre-activations, shape (m,).
        scale: the norm of x~, > 0.

    Returns:
        The norm, a float.

    Example:
        >>> from lecturekit import hessian_structure
        >>> round(hessian_structure.one_hidden_layer_hessian_norm(
        ...     [1.0, 1.0], [0.0, 0.0]), 4)
        0.7071
    """
    v, z, s = _check_vz(v, z, scale)
    a, c = _block_entries(v, z, s)
    return float(
        np.max(np.abs(a) + np.sqrt(a**2 + 4.0 * c**2)) / (2.0 * np.sqrt(v.size))
    )


def mlp_hessian_norm(net: _nets.MLP, params: Any, x: ArrayLike) -> float:
    """Exact spectral norm of the Hessian of a one-hidden-layer
    tanh :func:`lecturekit.nets.mlp`.

    The network has one output; the Hessian is taken at one input x.

    With multipliers z = mW0 W^T x + mb0 b (hidden) and f = mW1 sum_i v_i tanh(z_i) +
    mb1 b1 (NTK parameterization: mW1 = out_w_std / sqrt(m)), neuron i's parameters
    (W_i, b_i, v_i) see the input x~ = (mW0 x, mb0) and the block
    of :func:`one_hidden_layer_hessian_norm` with the norm of x~ and an extra factor
    out_w_std; the output bias is linear.

    Args:
        net: widths (d, m, 1), activation "tanh", NTK parameterization.
        params: its parameters.
        x: one input, shape (d,).

    Returns:
        The norm, a float.

    Example:
        >>> from lecturekit import hessian_structure, nets
        >>> net = nets.mlp((2, 4, 1), "tanh")
        >>> params = net.init(jax.random.key(0))
        >>> hessian_structure.mlp_hessian_norm(net, params, np.ones(2)) > 0
        True
    """
    net = _nets.check_mlp(net, output_activation=False)
    if net.depth != 1 or net.output_dim != 1 or net.activation.name != "tanh":
        raise ValueError(
            "mlp_hessian_norm needs a one-hidden-layer tanh net with one output, "
            f"got widths {net.widths} and activation {net.activation.name!r}"
        )
    if net.parameterization != "ntk":
        raise ValueError("mlp_hessian_norm needs a net in the NTK parameterization")
    x = _check_input(net, params, x)
    (mw0, mb0), _ = net.multipliers()
    W, b = np.asarray(params[0]["W"]), np.asarray(params[0]["b"])
    v = np.asarray(params[1]["W"])[:, 0]
    z = mw0 * (x @ W) + mb0 * b
    scale = float(np.sqrt(mw0**2 * (x @ x) + mb0**2))
    if scale == 0.0:
        return 0.0
    return net.out_w_std * one_hidden_layer_hessian_norm(v, z, scale)


# --------------------------------------- a scalar input: the bound on the kernel change
def _gradient(w, v, x):
    """grad f = (v_i tanh'(w_i x) x, tanh(w_i x)) / sqrt(m) for f = m^{-1/2} sum_i v_i
    tanh(w_i x).
    """
    t, d1, _ = _tanh_derivatives(w * x)
    return np.concatenate([v * d1 * x, t]) / np.sqrt(w.size)


def _hvp(w, v, x, u):
    """H u for that f, 2x2 blocks never formed: (H u)_w = (a u_w + c u_v) / sqrt m, (H
    u)_v = c u_w / sqrt m.
    """
    _, d1, d2 = _tanh_derivatives(w * x)
    a, c = v * d2 * x**2, d1 * x
    uw, uv = u[: w.size], u[w.size :]
    return np.concatenate([a * uw + c * uv, c * uw]) / np.sqrt(w.size)


def _check_theta(theta: ArrayLike, xs: Any) -> tuple[np.ndarray, tuple[float, float]]:
    theta = as_host_float_array(theta, name="theta0", ndim=1, nonempty=True)
    if theta.size % 2:
        raise ValueError(
            f"theta0 must hold (w, v) of equal lengths, got {theta.size} entries"
        )
    if not isinstance(xs, (tuple, list)) or len(xs) != 2:
        raise TypeError(f"xs must be a pair of scalar inputs (x, x'), got {xs!r}")
    return theta, tuple(check_real(x, name="xs[i]") for x in xs)


def kernel_gradient_direction(
    theta0: ArrayLike, xs: tuple[float, float] = (0.8, -0.5)
) -> np.ndarray:
    """The unit direction in which K(x, x') changes fastest, for a one-hidden-layer tanh
    net.

    The model is f(w, v; x) = m^{-1/2} sum_i v_i tanh(w_i x) with scalar inputs and
    theta = (w, v); the direction is grad_theta K(x, x') = H(x) grad f(x') + H(x') grad
    f(x) (Hessian-vector products with the 2x2 blocks, never formed), normalized to
    length 1.

    Args:
        theta0: the parameters (w, v) concatenated, shape (2m,).
        xs: the pair of scalar inputs (x, x').

    Returns:
        NumPy array of shape (2m,), unit norm.

    Example:
        >>> from lecturekit import hessian_structure
        >>> d = hessian_structure.kernel_gradient_direction(
        ...     np.array([0.3, -1.0, 0.5, 2.0]))
        >>> round(float(np.linalg.norm(d)), 12)
        1.0
    """
    theta, (x1, x2) = _check_theta(theta0, xs)
    m = theta.size // 2
    w, v = theta[:m], theta[m:]
    grad_k = _hvp(w, v, x1, _gradient(w, v, x2)) + _hvp(w, v, x2, _gradient(w, v, x1))
    return grad_k / np.linalg.norm(grad_k)


def kernel_bound_ratio(
    theta0: ArrayLike,
    direction: ArrayLike,
    xs: tuple[float, float] = (0.8, -0.5),
    *,
    radius: float = 1.0,
    grid: int = 50,
) -> float:
    """How tight the Hessian bound on the kernel change is (Liu, Zhu and Belkin, Prop.
    2.3).

    For w = theta0 + radius * direction and the model
    of :func:`kernel_gradient_direction`, returns

        abs(K_w(x, x') - K_w0(x, x')) / (eps R (norm(grad f(w0; x)) + norm(grad f(w0;
        x'))) + eps^2 R^2),

    with eps the largest Hessian norm (:func:`one_hidden_layer_hessian_norm`) at the two
    inputs over ``grid`` points of the segment [theta0, w] (all the proof uses). The
    bound holds, so the ratio is at most 1.

    Args:
        theta0: the parameters (w, v) concatenated, shape (2m,).
        direction: a unit vector, shape (2m,).
        xs: the pair of scalar inputs (x, x').
        radius: R > 0.
        grid: number of points on the segment (>= 2).

    Returns:
        The ratio, a float in [0, 1].

    Example:
        >>> from lecturekit import hessian_structure
        >>> theta = np.array([0.3, -1.0, 0.5, 2.0])
        >>> d = hessian_structure.kernel_gradient_direction(theta)
        >>> 0.0 < hessian_structure.kernel_bound_ratio(theta, d) <= 1.0
        True
    """
    theta, (x1, x2) = _check_theta(theta0, xs)
    direction = as_host_float_array(direction, name="direction", ndim=1)
    if direction.shape != theta.shape:
        raise ValueError(
            f"direction must have the shape {theta.shape} of theta0, got "
            f"{direction.shape}"
        )
    radius = check_real(radius, name="radius", positive=True)
    grid = check_positive_int(grid, name="grid", minimum=2)
    m = theta.size // 2
    theta1 = theta + radius * direction
    eps = max(
        one_hidden_layer_hessian_norm(th[m:], th[:m] * x, abs(x))
        for th in np.linspace(theta, theta1, grid)
        for x in (x1, x2)
    )
    g0 = [_gradient(theta[:m], theta[m:], x) for x in (x1, x2)]
    g1 = [_gradient(theta1[:m], theta1[m:], x) for x in (x1, x2)]
    change = abs(g1[0] @ g1[1] - g0[0] @ g0[1])
    grad_norms = np.linalg.norm(g0[0]) + np.linalg.norm(g0[1])
    return float(change / (eps * radius * grad_norms + (eps * radius) ** 2))


# ----------------------------------------------------------------- a width-1 bottleneck
class _Bottleneck(NamedTuple):
    """The forward pass of a (d, m, 1, m', 1) tanh net at one input, in NumPy."""

    x: np.ndarray
    mults: list[tuple[float, float]]
    h1: np.ndarray  # first hidden layer, tanh(z1)
    dh1: np.ndarray  # tanh'(z1)
    s: np.ndarray  # weights into the bottleneck
    alpha: float  # the bottleneck output tanh(z_b)
    d_alpha: float  # tanh'(z_b)
    u: np.ndarray  # weights out of the bottleneck
    b2: np.ndarray  # biases of the wide layer above it
    v: np.ndarray  # readout weights


def _bottleneck(net: Any, params: Any, x: ArrayLike, who: str) -> _Bottleneck:
    net = _nets.check_mlp(net, output_activation=False)
    if (
        len(net.widths) != 5
        or net.widths[2] != 1
        or net.output_dim != 1
        or net.activation.name != "tanh"
        or net.parameterization != "ntk"
    ):
        raise ValueError(
            f"{who} needs a tanh net in the NTK parameterization with widths (d, m, 1, "
            "m', 1), "
            f"got widths {net.widths}, activation {net.activation.name!r}"
        )
    x = _check_input(net, params, x)
    mults = net.multipliers()
    (mw0, mb0), (mw1, mb1) = mults[:2]
    p = [{k: np.asarray(val) for k, val in layer.items()} for layer in params]
    h1, dh1, _ = _tanh_derivatives(mw0 * (x @ p[0]["W"]) + mb0 * p[0]["b"])
    s = p[1]["W"][:, 0]
    alpha, d_alpha, _ = _tanh_derivatives(np.array(mw1 * (h1 @ s) + mb1 * p[1]["b"][0]))
    return _Bottleneck(
        x,
        mults,
        h1,
        dh1,
        s,
        float(alpha),
        float(d_alpha),
        p[2]["W"][0],
        p[2]["b"],
        p[3]["W"][:, 0],
    )


def bottleneck_mixed_block_norm(net: _nets.MLP, params: Any, x: ArrayLike) -> float:
    """Norm of the Hessian block coupling the parameters below and above a width-1
    bottleneck.

    For a tanh network with widths (d, m, 1, m', 1), alpha = tanh(z_b) is the output of
    the bottleneck and f = G(alpha; theta_up). Since alpha does not depend on theta_up,
    d^2 f / (d theta_low d theta_up) = grad_low(alpha) grad_up(dG/dalpha)^T: a rank-one
    block of norm ``abs(tanh'(z_b)) norm(grad_low z_b) norm(grad_up dG/dalpha)``,
    computed in closed form. It bounds the spectral norm of H from below (an
    off-diagonal block of a symmetric matrix).

    Args:
        net: a tanh :func:`lecturekit.nets.mlp` of widths (d, m, 1, m', 1), NTK
            parameterization.
        params: its parameters.
        x: one input, shape (d,).

    Returns:
        The norm, a float.

    Example:
        >>> from lecturekit import hessian_structure, nets
        >>> net = nets.mlp((3, 6, 1, 5, 1), "tanh")
        >>> params = net.init(jax.random.key(0))
        >>> hessian_structure.bottleneck_mixed_block_norm(net, params, np.ones(3)) > 0
        True
    """
    bn = _bottleneck(net, params, x, "bottleneck_mixed_block_norm")
    (mw0, mb0), (mw1, mb1), (mw2, mb2), (mw3, _) = bn.mults
    x, h1, dh1, s, alpha, u, v = bn.x, bn.h1, bn.dh1, bn.s, bn.alpha, bn.u, bn.v
    low_sq = (
        mw1**2 * (h1 @ h1)
        + mb1**2
        + mw1**2 * np.sum(s**2 * dh1**2) * (mw0**2 * (x @ x) + mb0**2)
    )
    _, d1, d2 = _tanh_derivatives(mw2 * u * alpha + mb2 * bn.b2)
    # d/dv_k of dG/dalpha
    up_sq = np.sum(
        (mw3 * mw2 * u * d1) ** 2
        + (mw3 * mw2 * v * (d1 + mw2 * u * alpha * d2)) ** 2  # d/du_k
        + (mw3 * mw2 * v * u * d2 * mb2) ** 2
    )  # d/db_k
    return float(abs(bn.d_alpha) * np.sqrt(low_sq * up_sq))


def bottleneck_holder_bound(net: _nets.MLP, params: Any, x: ArrayLike) -> float:
    r"""Hoelder's upper bound on the Hessian above a width-1 bottleneck.

    The bound is :math:`\|T\|_{2,2,1} \|\partial f / \partial \alpha^{(3)}\|_\infty`.

    For the network of :func:`bottleneck_mixed_block_norm`, the wide layer above the
    bottleneck computes alpha^(3)_k = tanh(z_k), z_k = mW2 u_k alpha + mb2 b_k, from the
    bottleneck output alpha, so the tensor of its second derivatives in alpha has
    entries T_k = (mW2 u_k)^2 tanh''(z_k) and :math:`\|T\|_{2,2,1} = \sum_k |T_k|` (a
    sum, not a maximum: Theta(m')). With d f / d alpha^(3) = mW3 v the bound grows like
    sqrt(m').

    Args:
        net: a tanh :func:`lecturekit.nets.mlp` of widths (d, m, 1, m', 1), NTK
            parameterization.
        params: its parameters.
        x: one input, shape (d,).

    Returns:
        The bound, a float.

    Example:
        >>> from lecturekit import hessian_structure, nets
        >>> net = nets.mlp((3, 6, 1, 5, 1), "tanh")
        >>> params = net.init(jax.random.key(0))
        >>> x = np.ones(3)
        >>> bound = hessian_structure.bottleneck_holder_bound(net, params, x)
        >>> bound >= 0.0
        True
    """
    bn = _bottleneck(net, params, x, "bottleneck_holder_bound")
    (_, _), (_, _), (mw2, mb2), (mw3, _) = bn.mults
    _, _, d2 = _tanh_derivatives(mw2 * bn.u * bn.alpha + mb2 * bn.b2)
    return float(np.sum(np.abs((mw2 * bn.u) ** 2 * d2)) * np.max(np.abs(mw3 * bn.v)))


# ---------------------------------------------------------------------- expected maxima
# The moments of a maximum are integrals over t >= 0 of 1 - (1 - S(t))^m (S: the
# survival function of one copy), by the trapezoid rule with step 0.004 from 0 to a
# point where m S(t) < 1e-18, and at least to 12.
_T_STEP, _T_END_MIN = 0.004, 12.0
_TANH2_MAX = 4.0 / (3.0 * np.sqrt(3.0))  # max |tanh''|


def _t_grid(end: float) -> np.ndarray:
    end = max(_T_END_MIN, end)
    return np.linspace(0.0, end, int(np.ceil(end / _T_STEP)) + 1)


def _normal_tail_point(m: np.ndarray) -> float:
    """u with P(|g| > u) <= exp(-u^2 / 2) < 1e-18 / max(m) for g ~ N(0, 1)."""
    return float(np.sqrt(2.0 * (np.log(np.max(m)) + 41.5)))


class MaxMoments(NamedTuple):
    """Mean and standard deviation of a maximum of m i.i.d. variables, one entry per m.

    Attributes:
        mean: 1-D NumPy array, the expected maximum for each m.
        sd: 1-D NumPy array, its standard deviation.

    Example:
        >>> from lecturekit import hessian_structure
        >>> mean, sd = hessian_structure.gaussian_max_abs_moments([1])
        >>> round(float(mean[0]), 4)                 # E|g| = sqrt(2 / pi)
        0.7979
    """

    mean: np.ndarray
    sd: np.ndarray


def _max_moments(survival: np.ndarray, m: np.ndarray, t: np.ndarray) -> MaxMoments:
    """Moments of the maximum of m i.i.d. copies of a variable >= 0 with survival
    function S on the grid t: E[max] = int (1 - (1 - S)^m) dt, E[max^2] = int 2t (1 -
    (1 - S)^m) dt."""
    # S = 1 gives log 0 = -inf: (1 - S)^m = 0, as it should
    with np.errstate(divide="ignore"):
        tail = -np.expm1(m[:, None] * np.log1p(-np.clip(survival, 0.0, 1.0)))
    mean = np.trapezoid(tail, t, axis=1)
    second = np.trapezoid(2.0 * t * tail, t, axis=1)
    return MaxMoments(mean, np.sqrt(np.maximum(second - mean**2, 0.0)))


def _widths(m: ArrayLike) -> np.ndarray:
    arr = as_host_float_array(m, name="m", ndim=(0, 1), nonempty=True)
    if np.any(arr < 1) or np.any(arr != np.round(arr)):
        raise ValueError(
            f"m must hold positive integers (numbers of neurons), got {arr}"
        )
    return np.atleast_1d(arr)


def gaussian_max_abs_moments(m: ArrayLike) -> MaxMoments:
    r"""Mean and standard deviation of :math:`\max_{i \le m} |g_i|`, g_i ~ N(0, 1)
    i.i.d., by quadrature.

    E[max] = int_0^inf (1 - erf(t / sqrt 2)^m) dt; it grows like sqrt(2 ln m) (slowly:
    2.51 at m = 50, 3.44 at m = 1024). The trapezoid rule with step 0.004, on [0, 12]
    (further for m above about 2e13, so that the bound m exp(-t^2 / 2) on the mass left
    beyond the end stays below 1e-18), is accurate to about 1e-6.

    Args:
        m: positive integer(s), scalar or 1-D.

    Returns:
        :class:`MaxMoments` (mean, sd), 1-D NumPy arrays.

    Example:
        >>> from lecturekit import hessian_structure
        >>> hessian_structure.gaussian_max_abs_moments([50, 1024]).mean.round(2)
        array([2.51, 3.44])
    """
    widths = _widths(m)
    t = _t_grid(_normal_tail_point(widths))
    return _max_moments(scipy.special.erfc(t / np.sqrt(2.0)), widths, t)


def max_block_norm_moments(m: ArrayLike, scale: float = 1.0) -> MaxMoments:
    r"""Mean and standard deviation of :math:`\sqrt m \|H\|_2` for the one-hidden-layer
    tanh net.

    The model of :func:`one_hidden_layer_hessian_norm` with v_i ~ N(0, 1) and
    z_i ~ N(0, scale^2) i.i.d.: :math:`\sqrt m \|H\|_2 = \max_i g_i` with
    :math:`g = (|a| + \sqrt{a^2 + 4c^2}) / 2`, a = v tanh''(z) s^2, c = tanh'(z) s.
    Given z, g <= t iff :math:`|a| \le t - c^2 / t`, so
    :math:`P(g > t) = E_z[1\{t \le |c|\} + 1\{t > |c|\}\,
    \mathrm{erfc}((t - c^2/t) / (\sqrt 2 |\tanh''(z)| s^2))]`, computed on a fine grid
    of z; the moments of a maximum of m i.i.d. copies follow by quadrature in t, up to a
    point beyond which m P(g > t) < 1e-18
    (:math:`g \le |a| + |c| \le |v| \max|\tanh''| s^2 + s`).
    This is the prediction, not a fit, of the Hessian norm against width.

    Args:
        m: positive integer(s) (widths), scalar or 1-D.
        scale: s, the norm of x~, > 0.

    Returns:
        :class:`MaxMoments` (mean, sd), 1-D NumPy arrays.

    Example:
        >>> from lecturekit import hessian_structure
        >>> mean, sd = hessian_structure.max_block_norm_moments([100, 10_000])
        >>> bool(mean[1] > mean[0] > sd[0] > 0)
        True
    """
    widths = _widths(m)
    s = check_real(scale, name="scale", positive=True)
    z = np.linspace(-9.0, 9.0, 3601) * s
    weights = np.exp(-0.5 * (z / s) ** 2)
    weights /= weights.sum()
    _, d1, d2 = _tanh_derivatives(z)
    c, spread = np.abs(d1) * s, np.abs(d2) * s**2
    grid = _t_grid(s + _TANH2_MAX * s**2 * _normal_tail_point(widths))
    t = grid[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        room = t - c**2 / np.where(t > 0, t, 1.0)
        tail = np.where(
            spread > 0, scipy.special.erfc(room / (np.sqrt(2.0) * spread)), 0.0
        )
    survival = np.where(t <= c, 1.0, tail) @ weights
    return _max_moments(survival, widths, grid)
