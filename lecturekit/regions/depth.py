r"""Depth separation: how well can a shallow network approximate Telgarsky's sawtooth?

The sawtooth :math:`f_L` (:func:`lecturekit.regions.sawtooth`) has :math:`2^L` affine
pieces on [0, 1] and oscillates between 0 and 1. A continuous function g with few affine
pieces crosses the level 1/2 few times, so it must be far from :math:`f_L`
in :math:`L^1` (Telgarsky's counting argument; :func:`sawtooth_l1_bound` is the bound
proved in Chapter 6). The functions here compute the two sides of that comparison
exactly:

* :func:`network_pwl` reads a scalar-input ReLU network on [a, b] as a continuous
  piecewise-linear function (its knots and its values there), from the exact trace of
  :func:`lecturekit.regions.trace_1d`;
* :func:`pwl_network` goes back: the one-hidden-layer network (standard
  parameterization) equal on [a, b] to a given piecewise-linear function, one hidden
  unit per piece;
* :func:`pwl_l1_distance` is the exact :math:`L^1` distance of two continuous
  piecewise-linear functions (linear between the merged knots, with the crossing of zero
  located exactly);
* :func:`pwl_least_squares` fits the function with given knots that is closest to data
  in least squares;
* :func:`sawtooth_l1_bound` is the lower bound :math:`\frac18\big(1 - (2p+2)/2^L\big)`
  on
  :math:`\int_0^1|f_L - g|` for every continuous g with at most p affine pieces on [0,
  1].

A piecewise-linear function is given by its knots ``x`` (sorted, increasing, the first
and last being the ends of the interval) and its values ``y`` at the knots; it is the
linear interpolant of these points.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from .. import nets as _nets
from .._validation import as_host_float_array, check_positive_int
from ._networks import check_end, check_relu_net
from .line import trace_1d

__all__ = [
    "network_pwl",
    "pwl_l1_distance",
    "pwl_least_squares",
    "pwl_network",
    "sawtooth_l1_bound",
]


def _check_pwl(x: Any, y: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    xa = as_host_float_array(x, name=f"{name} knots", ndim=1)
    ya = as_host_float_array(y, name=f"{name} values", ndim=1)
    if xa.size < 2 or ya.shape != xa.shape:
        raise ValueError(
            f"{name}: knots and values must be 1-D of the same length >= 2, got "
            f"{xa.shape} and {ya.shape}"
        )
    if np.any(np.diff(xa) <= 0):
        raise ValueError(f"{name} knots must be strictly increasing")
    return xa, ya


def pwl_l1_distance(x1: Any, y1: Any, x2: Any, y2: Any) -> float:
    r"""Exact :math:`\int_a^b |g_1 - g_2|` of two continuous piecewise-linear functions.

    :math:`g_k` is the linear interpolant of the points ``(xk, yk)``; both must have the
    same ends a = ``x1[0]`` = ``x2[0]`` and b = ``x1[-1]`` = ``x2[-1]``. Between the
    merged knots :math:`h = g_1 - g_2` is linear, with end values :math:`h_0, h_1` over
    a length
    :math:`\Delta`: the integral of :math:`|h|` is :math:`\Delta\,|h_0 + h_1|/2` if they
    have the same sign and :math:`\Delta\,(h_0^2 + h_1^2)/(2(|h_0| + |h_1|))` if h
    crosses zero. Exact up to float64 rounding (no grid).

    Args:
        x1, y1: knots (strictly increasing) and values of :math:`g_1`.
        x2, y2: knots and values of :math:`g_2`, same ends.

    Returns:
        float: the :math:`L^1` distance on [a, b].

    Raises:
        ValueError: knots not increasing, shapes that differ, or different ends.

    Example:
        >>> from lecturekit import regions
        >>> # the tent 0 -> 1 -> 0 on [0, 1] against the constant 1/2: four triangles
        >>> regions.pwl_l1_distance([0, 0.5, 1], [0, 1, 0], [0, 1], [0.5, 0.5])
        0.25
    """
    xa, ya = _check_pwl(x1, y1, "x1/y1")
    xb, yb = _check_pwl(x2, y2, "x2/y2")
    if xa[0] != xb[0] or xa[-1] != xb[-1]:
        raise ValueError(
            f"x1 and x2 must share their ends (first and last knots), got [{xa[0]}, "
            f"{xa[-1]}] "
            f"and [{xb[0]}, {xb[-1]}]"
        )
    x = np.union1d(xa, xb)
    h = np.interp(x, xa, ya) - np.interp(x, xb, yb)
    h0, h1, dx = h[:-1], h[1:], np.diff(x)
    same = h0 * h1 >= 0
    denom = np.where(same, 1.0, np.abs(h0) + np.abs(h1))
    pieces = np.where(same, 0.5 * np.abs(h0 + h1), 0.5 * (h0**2 + h1**2) / denom)
    return float(np.sum(pieces * dx))


def network_pwl(
    net: _nets.MLP, params: Any, a: float, b: float
) -> tuple[np.ndarray, np.ndarray]:
    """A scalar-input ReLU network on [a, b] as a piecewise-linear function: (knots,
    values).

    The knots are a, the breakpoints of :func:`lecturekit.regions.trace_1d` in (a, b),
    and b; the values are those of the traced affine pieces at the knots (so the result
    is exact up to the rounding of the trace, and needs no grid).

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output
            dimension 1.
        params: its parameters.
        a: left end, finite.
        b: right end, finite, > a.

    Returns:
        (knots, values), two float64 arrays of length (number of pieces on [a, b]) + 1.

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> knots, values = regions.network_pwl(net, params, 0.0, 1.0)
        >>> knots.tolist(), values.tolist()
        ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0])
    """
    check_relu_net(net, input_dim=1)
    lo, hi = check_end(a, "a"), check_end(b, "b")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"a and b must be finite, got a = {a} and b = {b}")
    tr = trace_1d(net, params, lo, hi)
    knots = np.concatenate([[lo], np.asarray(tr.breakpoints, float), [hi]])
    # the piece containing each knot: the trace's pieces lie between its own knots
    piece = np.clip(
        np.searchsorted(np.asarray(tr.knots, float), knots, side="right") - 1,
        0,
        len(tr.slopes) - 1,
    )
    values = (
        np.asarray(tr.intercepts, float)[piece]
        + np.asarray(tr.slopes, float)[piece] * knots
    )
    return knots, values


def pwl_network(x: Any, y: Any) -> tuple[_nets.MLP, list[dict[str, Any]]]:
    r"""The one-hidden-layer ReLU network equal on [x[0], x[-1]] to a piecewise-linear
    function.

    With p = len(x) - 1 pieces of slopes :math:`s_1, \dots, s_p` the network has p
    hidden
    units in the standard parameterization (z = h W + b): unit 0 computes
    :math:`\phi(x - x_0 + 1)`, which is affine on the interval and carries the first
    slope, and unit j computes :math:`\phi(x - x_j)`, the kink at the interior
    knot :math:`x_j` with readout weight :math:`s_{j+1} - s_j`. So a continuous function
    with p pieces on an interval is a shallow network of width p, and a shallow network
    of width m has at most m + 1 pieces there (one breakpoint per unit).

    Args:
        x: knots, strictly increasing, length p + 1 >= 2.
        y: values at the knots.

    Returns:
        (net, params): ``nets.mlp((1, p, 1), "relu", parameterization="standard")`` and
        its parameters.

    Example:
        >>> import numpy as np
        >>> from lecturekit import regions
        >>> net, params = regions.pwl_network([0.0, 0.5, 1.0], [0.0, 1.0, 0.0])
        >>> out = net.apply(params, np.array([[0.25], [0.5], [0.9]]))
        >>> np.asarray(out).round(12).tolist()
        [0.5, 1.0, 0.2]
    """
    xa, ya = _check_pwl(x, y, "x/y")
    slopes = np.diff(ya) / np.diff(xa)
    p = slopes.size
    net = _nets.mlp((1, p, 1), "relu", parameterization="standard")
    bias = np.concatenate([[1.0 - xa[0]], -xa[1:-1]])
    readout = np.concatenate([[slopes[0]], np.diff(slopes)])
    params = [
        {"W": jnp.ones((1, p)), "b": jnp.asarray(bias)},
        {"W": jnp.asarray(readout)[:, None], "b": jnp.asarray([ya[0] - slopes[0]])},
    ]
    return net, params


def pwl_least_squares(x: Any, y: Any, knots: Any) -> np.ndarray:
    r"""Values at ``knots`` of the piecewise-linear function closest to the data in
    least squares.

    Among the continuous functions that are linear between consecutive ``knots`` (the
    first and last knots being the ends of the interval), the one minimizing
    :math:`\sum_i (g(x_i) - y_i)^2`, computed in the hat-function basis (one basis
    function per knot) with ``numpy.linalg.lstsq``.

    Args:
        x: data points inside [knots[0], knots[-1]], shape (N,).
        y: data values, shape (N,).
        knots: strictly increasing knots, shape (k,), k >= 2.

    Returns:
        the values g(knots), shape (k,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import regions
        >>> x = np.linspace(0, 1, 101)
        >>> values = regions.pwl_least_squares(x, np.abs(x - 0.5), [0.0, 0.5, 1.0])
        >>> values.round(12).tolist()
        [0.5, 0.0, 0.5]
    """
    xs = as_host_float_array(x, name="x", ndim=1)
    ys = as_host_float_array(y, name="y", ndim=1)
    kn = as_host_float_array(knots, name="knots", ndim=1)
    if kn.size < 2 or np.any(np.diff(kn) <= 0):
        raise ValueError(
            f"knots must be strictly increasing, at least 2 of them, got {kn}"
        )
    if ys.shape != xs.shape:
        raise ValueError(
            f"x and y must have the same shape, got {xs.shape} and {ys.shape}"
        )
    if xs.min() < kn[0] or xs.max() > kn[-1]:
        raise ValueError(
            "the data points x must lie between the first and the last knot"
        )
    hats = np.stack(
        [np.interp(xs, kn, np.eye(kn.size)[j]) for j in range(kn.size)], axis=1
    )
    return np.linalg.lstsq(hats, ys, rcond=None)[0]


def sawtooth_l1_bound(pieces: int, depth: int) -> float:
    r"""Lower bound on :math:`\int_0^1 |f_L - g|` for every continuous g with at most p
    pieces.

    :math:`\max\big(0, \frac18\big(1 - \frac{2p + 2}{2^L}\big)\big)`, with L = ``depth``
    the number of tent maps in Telgarsky's sawtooth :math:`f_L` and p = ``pieces`` the
    number of affine pieces of g on [0, 1] (Chapter 6: g crosses 1/2 at most p times,
    and each of the :math:`2^L - 1` triangles between :math:`f_L` and 1/2 that g leaves
    on the wrong side adds :math:`2^{-L}/4`). For :math:`p \le 2^{L-2} - 1` it is at
    least 1/16.

    Args:
        pieces: p >= 1.
        depth: L >= 1.

    Returns:
        float: the bound (0 when it says nothing).

    Example:
        >>> from lecturekit import regions
        >>> regions.sawtooth_l1_bound(7, 5), regions.sawtooth_l1_bound(31, 5)
        (0.0625, 0.0)
    """
    p = check_positive_int(pieces, name="pieces")
    L = check_positive_int(depth, name="depth")
    return max(0.0, (1.0 - (2 * p + 2) / 2**L) / 8.0)
