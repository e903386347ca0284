r"""Linear pieces of a ReLU network with scalar input, exactly from its weights.

:func:`trace_1d` follows the network layer by layer. On every interval between the knots
found so far each pre-activation of the next layer is affine in x,
:math:`z = \alpha + \beta x`, so its zero is :math:`x^* = -\alpha/\beta` in closed form.
:func:`breakpoints_1d` and :func:`count_pieces_1d` read the slope changes off the trace;
:func:`line_counts` counts pieces and activation regions on the line and on a segment.
These are exact up to the float64 rounding of the quotients :math:`x^*`;
:func:`trace_1d_exact` and :func:`breakpoints_1d_exact` repeat the computation in
rational arithmetic (:class:`fractions.Fraction`), for the network whose weights and
multipliers are the given float64 numbers, evaluated without rounding. :func:`sawtooth`
is Telgarsky's composition of tent maps (:func:`tent`) as a network.

Convention: as in :mod:`lecturekit.regions`; ``net`` has input and output dimension 1.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import nets as _nets
from .._validation import as_host_float_array, check_positive_int, check_real
from ._networks import REAL, check_end, check_relu_net, network_layers

__all__ = [
    "Trace1D",
    "trace_1d",
    "trace_1d_exact",
    "breakpoints_1d",
    "breakpoints_1d_exact",
    "count_pieces_1d",
    "LineCounts",
    "line_counts",
    "sawtooth",
    "tent",
]


def _check_exact_end(value: Any, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, REAL):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite for an exact trace, got {value}")
        return Fraction(float(value))
    return Fraction(value)


def _interval(a: Any, b: Any, *, exact: bool) -> tuple[Any, Any]:
    check = _check_exact_end if exact else check_end
    lo, hi = check(a, "a"), check(b, "b")
    if not lo < hi:
        raise ValueError(f"need a < b, got a = {a} and b = {b}")
    return lo, hi


# -------------------------------------------------------------------------- 1-D tracing
class Trace1D(NamedTuple):
    r"""Exact piecewise-affine description of a scalar-input ReLU network on [a, b].

    Returned by :func:`trace_1d` (float64 NumPy arrays) and :func:`trace_1d_exact`
    (object arrays of :class:`fractions.Fraction`).

    Attributes:
        knots: :math:`a = t_0 < t_1 < \dots < t_m = b`, every point where some hidden
            neuron changes sign, plus the two ends.
        slopes: (m,) slope of the network on each :math:`(t_k, t_{k+1})`.
        intercepts: (m,) the network is ``intercepts[k] + slopes[k] * x`` there.
        breakpoints: the interior knots where the slope really changes (the kinks).
        new_knots: how many knots each hidden layer added (its neurons' sign changes
            that are not knots of earlier layers).

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(1)
        >>> regions.trace_1d(net, params, -1.0, 2.0)._fields
        ('knots', 'slopes', 'intercepts', 'breakpoints', 'new_knots')
    """

    knots: np.ndarray
    slopes: np.ndarray
    intercepts: np.ndarray
    breakpoints: np.ndarray
    new_knots: tuple[int, ...]


def _interior_points(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """A point inside each interval (midpoint; a unit step from the finite end if
    unbounded).
    """
    if left.dtype == object:
        return (left + right) / 2
    with np.errstate(invalid="ignore"):
        mid = 0.5 * (left + right)
    step = np.maximum(1.0, np.abs(np.where(np.isfinite(left), left, right)))
    mid = np.where(np.isinf(left) & np.isfinite(right), right - step, mid)
    mid = np.where(np.isfinite(left) & np.isinf(right), left + step, mid)
    return np.where(np.isinf(left) & np.isinf(right), 0.0, mid)


def _trace(layers, lo, hi, *, exact: bool, rtol: float, snap: float = 0.0) -> Trace1D:
    dtype = object if exact else np.float64
    zero = Fraction(0) if exact else 0.0
    knots = np.array([lo, hi], dtype=dtype)
    # the layer input h(x) = c0 + c1 * x on every piece; initially h = x
    c0 = np.array([[zero]], dtype=dtype)
    c1 = np.array([[Fraction(1) if exact else 1.0]], dtype=dtype)
    new_knots = []
    for w, b in layers[:-1]:
        z0 = c0 @ w + b
        z1 = c1 @ w
        left, right = knots[:-1], knots[1:]
        rows, cols = np.nonzero(z1 != 0)
        cross = -z0[rows, cols] / z1[rows, cols]
        inside = (cross > left[rows]) & (cross < right[rows])
        if snap > 0:  # a zero within rounding of an existing knot is that knot
            room = snap * np.maximum(1.0, np.abs(cross))
            inside &= (cross - left[rows] > room) & (right[rows] - cross > room)
        before = len(knots)
        old = knots
        knots = np.unique(np.concatenate([knots, cross[inside]]).astype(dtype))
        # merge zeros of different neurons that agree to rounding
        if snap > 0 and len(knots) > 2:
            finite = np.isfinite(knots[:-1]) & np.isfinite(knots[1:])
            with np.errstate(invalid="ignore"):
                close = finite & (
                    np.diff(knots) <= snap * np.maximum(1.0, np.abs(knots[1:]))
                )
            knots = knots[np.concatenate([[True], ~close])]
            knots[-1] = old[-1]
        new_knots.append(len(knots) - before)
        mid = _interior_points(knots[:-1], knots[1:])
        parent = np.searchsorted(old, mid) - 1
        z_mid = z0[parent] + z1[parent] * mid[:, None]
        on = z_mid > 0
        c0 = np.where(on, z0[parent], zero).astype(dtype)
        c1 = np.where(on, z1[parent], zero).astype(dtype)
    w, b = layers[-1]
    intercepts = (c0 @ w + b)[:, 0]
    slopes = (c1 @ w)[:, 0]
    jump = slopes[1:] - slopes[:-1]
    if exact:
        kink = jump != 0
    else:
        scale = np.maximum(np.abs(slopes[1:]), np.abs(slopes[:-1]))
        kink = np.abs(jump) > rtol * scale
    interior = knots[1:-1]
    return Trace1D(knots, slopes, intercepts, interior[kink], tuple(new_knots))


def trace_1d(
    net: _nets.MLP,
    params: Any,
    a: Any,
    b: Any,
    *,
    rtol: float = 1e-9,
    snap: float = 1e-11,
) -> Trace1D:
    r"""Pieces of a scalar-input ReLU network on [a, b], traced layer by layer in
    float64.

    Layer l's pre-activations are affine on each interval between the knots found for
    the layers before, so each neuron's zero on that interval is
    :math:`x^* = -\alpha/\beta` (added as a knot if it lies strictly inside). The sign
    of each pre-activation on a refined interval is read at an interior point. A knot
    counts as a breakpoint if the slopes on its two sides differ by more than ``rtol``
    times the larger one. A zero closer than ``snap`` :math:`\cdot \max(1, |x|)` to a
    knot is merged with it, so that rounding (e.g. of 1/3) cannot create spurious
    slivers where a deeper neuron vanishes exactly at an earlier knot.
    See :func:`trace_1d_exact` for the same trace in rational arithmetic.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output
            dimension 1.
        params: its parameters (``net.init`` layout).
        a: left end, a real number (may be ``-inf``).
        b: right end, a real number > a (may be ``inf``).
        rtol: relative slope change below which a knot is not a breakpoint.
        snap: relative distance below which two zeros are one knot.

    Returns:
        Trace1D: knots, slopes and intercepts of the pieces, the breakpoints, and the
        knots added by each hidden layer (float64 NumPy arrays).

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> trace = regions.trace_1d(net, params, 0.0, 1.0)
        >>> trace.breakpoints.tolist(), trace.slopes.tolist()
        ([0.25, 0.5, 0.75], [4.0, -4.0, 4.0, -4.0])
    """
    check_relu_net(net, input_dim=1)
    rtol = check_real(rtol, name="rtol", nonnegative=True)
    snap = check_real(snap, name="snap", nonnegative=True)
    lo, hi = _interval(a, b, exact=False)
    return _trace(
        network_layers(net, params, exact=False),
        lo,
        hi,
        exact=False,
        rtol=rtol,
        snap=snap,
    )


def trace_1d_exact(net: _nets.MLP, params: Any, a: Any, b: Any) -> Trace1D:
    """The trace of :func:`trace_1d` in rational arithmetic.

    Every weight, bias and multiplier is converted to a :class:`fractions.Fraction`
    without rounding (a float64 number is a dyadic rational), and the zeros, slopes and
    intercepts are computed exactly: a knot is a breakpoint exactly when the slopes on
    its two sides differ. Slower than :func:`trace_1d` (Python arithmetic on fractions);
    use it to check the float64 trace, or where a count must be certain.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output
            dimension 1.
        params: its parameters.
        a: left end, a finite real number or ``Fraction``.
        b: right end, finite, > a.

    Returns:
        Trace1D: as for :func:`trace_1d`, with object arrays of ``Fraction``.

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> trace = regions.trace_1d_exact(net, params, 0, 1)
        >>> [str(x) for x in trace.breakpoints]
        ['1/4', '1/2', '3/4']
    """
    check_relu_net(net, input_dim=1)
    lo, hi = _interval(a, b, exact=True)
    return _trace(network_layers(net, params, exact=True), lo, hi, exact=True, rtol=0.0)


def breakpoints_1d(net: _nets.MLP, params: Any, a: Any, b: Any) -> jax.Array:
    """Sorted input points in the open interval (a, b) where the network changes slope.

    The breakpoints of :func:`trace_1d` (float64; exact up to the rounding of one
    quotient per breakpoint). :func:`breakpoints_1d_exact` gives them as fractions.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output
            dimension 1.
        params: its parameters.
        a: left end (may be ``-inf``).
        b: right end > a (may be ``inf``).

    Returns:
        jax.Array: the breakpoints, increasing, shape (k,).

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(3)
        >>> breaks = regions.breakpoints_1d(net, params, 0.0, 0.5)
        >>> [round(float(x), 3) for x in breaks]
        [0.125, 0.25, 0.375]
    """
    return jax.device_put(trace_1d(net, params, a, b).breakpoints)


def breakpoints_1d_exact(net: _nets.MLP, params: Any, a: Any, b: Any) -> list[Fraction]:
    """The breakpoints of :func:`breakpoints_1d` in rational arithmetic
    (:func:`trace_1d_exact`).

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output
            dimension 1.
        params: its parameters.
        a: left end, finite.
        b: right end, finite, > a.

    Returns:
        list[fractions.Fraction]: the breakpoints in (a, b), increasing.

    Example:
        >>> from fractions import Fraction
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> breaks = regions.breakpoints_1d_exact(net, params, 0, 1)
        >>> breaks == [Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)]
        True
    """
    return list(trace_1d_exact(net, params, a, b).breakpoints)


def count_pieces_1d(net: _nets.MLP, params: Any, a: Any, b: Any) -> int:
    """Number of affine pieces of the network on [a, b]: 1 + the number of breakpoints.

    From :func:`trace_1d` (float64). For a count in rational arithmetic use
    ``1 + len(breakpoints_1d_exact(net, params, a, b))``.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output
            dimension 1.
        params: its parameters.
        a: left end (may be ``-inf``).
        b: right end > a (may be ``inf``).

    Returns:
        int: the number of maximal intervals on which the network is affine.

    Example:
        >>> import numpy as np
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(3)
        >>> regions.count_pieces_1d(net, params, 0.0, 1.0)
        8
        >>> regions.count_pieces_1d(net, params, -np.inf, np.inf)  # 0 outside
        10
    """
    return 1 + len(trace_1d(net, params, a, b).breakpoints)


class LineCounts(NamedTuple):
    """Linear pieces and activation regions of a scalar-input ReLU network
    (:func:`line_counts`).

    Attributes:
        pieces: linear pieces on the real line, 1 + the number of breakpoints.
        activation_regions: 1 + the number of knots on the real line (points where some
            hidden neuron changes sign); at least ``pieces``.
        pieces_inside: the pieces on [-radius, radius] (breakpoints strictly inside).
        activation_regions_inside: the activation regions on [-radius, radius].
        zeros_per_layer: the knots each hidden layer adds on the real line (its neurons'
            sign changes that are not already knots).

    Example:
        >>> from lecturekit import regions
        >>> regions.LineCounts._fields[:2]
        ('pieces', 'activation_regions')
    """

    pieces: int
    activation_regions: int
    pieces_inside: int
    activation_regions_inside: int
    zeros_per_layer: tuple[int, ...]


def line_counts(net: _nets.MLP, params: Any, radius: Any = 1.0) -> LineCounts:
    """Pieces and activation regions on the real line and on [-radius, radius], from one
    trace.

    The trace on the real line (:func:`trace_1d` from -inf to inf) restricted to
    (-radius, radius) is the trace on the segment, so one trace serves both counts.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output
            dimension 1.
        params: its parameters.
        radius: half-length of the segment, > 0.

    Returns:
        LineCounts: the four counts and the knots added per hidden layer.

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> counts = regions.line_counts(net, params, radius=0.6)
        >>> counts.pieces, counts.activation_regions, counts.pieces_inside
        (6, 6, 4)
        >>> counts.activation_regions_inside, counts.zeros_per_layer
        (4, (2, 1, 2, 0))
    """
    check_relu_net(net, input_dim=1)
    radius = check_real(radius, name="radius", positive=True)
    tr = trace_1d(net, params, -np.inf, np.inf)
    knots = tr.knots[1:-1]

    def inside(t):
        return int(np.count_nonzero(np.abs(t) < radius))

    return LineCounts(
        1 + len(tr.breakpoints),
        1 + len(knots),
        1 + inside(tr.breakpoints),
        1 + inside(knots),
        tr.new_knots,
    )


# --------------------------------------------------------------------------- sawtooth
def tent(x: Any) -> Any:
    r"""Telgarsky's building block :math:`f(x) = \phi(2\phi(x) - 4\phi(x -
    1/2))`, :math:`\phi` = ReLU.

    On [0, 1] it is the tent map (2x on [0, 1/2], 2 - 2x on [1/2, 1]); it is 0 outside.

    Args:
        x: a real number, a ``Fraction`` (the result is then exact) or an array (NumPy
            or JAX; the result is a NumPy array).

    Returns:
        f(x), of the same kind as x.

    Example:
        >>> from fractions import Fraction
        >>> from lecturekit import regions
        >>> regions.tent(Fraction(1, 3)), regions.tent(0.75)
        (Fraction(2, 3), 0.5)
        >>> regions.tent(2.0)
        0.0
    """
    if isinstance(x, (np.ndarray, jax.Array)):
        x = np.asarray(x)
        if x.dtype != object and np.any(
            np.isnan(as_host_float_array(x, name="x", finite=False))
        ):
            raise ValueError("x must not contain NaN")
        return np.maximum(2 * np.maximum(x, 0) - 4 * np.maximum(x - 0.5, 0), 0)
    if isinstance(x, bool) or not isinstance(x, REAL):
        raise TypeError(
            f"x must be a real number, a Fraction or an array, got {type(x).__name__}"
        )
    if isinstance(x, (float, np.floating)) and math.isnan(x):
        raise ValueError("x must not be NaN")
    half = Fraction(1, 2) if isinstance(x, (Fraction, int, np.integer)) else 0.5
    zero = 0 * half  # Fraction(0) or 0.0: the result has the kind of the input
    return max(2 * max(x, zero) - 4 * max(x - half, zero), zero)


def sawtooth(depth: int) -> tuple[_nets.MLP, list[dict[str, jax.Array]]]:
    r"""Telgarsky's sawtooth :math:`f_L = f \circ \dots \circ f` (``depth`` = L times)
    as a ReLU mlp.

    Each :math:`f(x) = \phi(2\phi(x) - 4\phi(x - 1/2))` (:func:`tent`) is two hidden
    layers
    of widths 2 and 1, so the network has widths (1, 2, 1, ..., 2, 1, 1): 2L hidden
    layers, 3L hidden neurons and an identity readout, in the standard parameterization
    (z = h W + b). :math:`f_L` has :math:`2^{L-1}` teeth, :math:`2^L` affine pieces on
    [0, 1] (breakpoints :math:`k/2^L`) and :math:`2^L + 2` pieces on the real line (it
    is 0 outside [0, 1]).

    Args:
        depth: L, the number of compositions, an integer >= 1.

    Returns:
        (net, params): the :func:`lecturekit.nets.mlp` network and its hand-set
        parameters.

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> net.widths, net.parameterization
        ((1, 2, 1, 2, 1, 1), 'standard')
    """
    depth = check_positive_int(depth, name="depth")
    net = _nets.mlp((1,) + (2, 1) * depth + (1,), "relu", parameterization="standard")
    first = {"W": jnp.array([[1.0, 1.0]]), "b": jnp.array([0.0, -0.5])}
    second = {"W": jnp.array([[2.0], [-4.0]]), "b": jnp.array([0.0])}
    readout = {"W": jnp.array([[1.0]]), "b": jnp.array([0.0])}
    return net, [first, second] * depth + [readout]
