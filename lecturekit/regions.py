r"""Linear regions of ReLU networks, computed exactly from the weights.

A ReLU network :math:`x \mapsto f(x)` is continuous and piecewise affine. Its *activation
pattern* at x is the vector of signs of all hidden pre-activations; on the set of inputs
sharing one pattern every neuron is the identity or zero, so f is affine there. This
module finds these pieces from the network's weights, never from a grid of samples.

* Scalar input: :func:`trace_1d` follows the network layer by layer. On every interval
  between the knots found so far each pre-activation of the next layer is affine in x,
  :math:`z = \alpha + \beta x`, so its zero is :math:`x^* = -\alpha/\beta` in closed form.
  :func:`breakpoints_1d` and :func:`count_pieces_1d` read the slope changes off the
  trace; :func:`line_counts` counts pieces and activation regions on the line and on a
  segment. These are exact up to the float64 rounding of the quotients :math:`x^*`;
  :func:`trace_1d_exact` and :func:`breakpoints_1d_exact` repeat the computation in
  rational arithmetic (:class:`fractions.Fraction`), for the network whose weights and
  multipliers are the given float64 numbers, evaluated without rounding.
* :func:`sawtooth`: Telgarsky's composition of tent maps (:func:`tent`) as a network.
* Two inputs: :func:`activation_regions_2d` cuts a box into the convex polygons of
  constant activation pattern, layer by layer; :func:`activation_patterns` and
  :func:`pattern_map_2d` give the patterns at given points. For one hidden layer the
  linear regions are the cells of the neurons' lines (:func:`hidden_lines`), counted
  exactly by :func:`count_regions_2d_shallow` with :mod:`lecturekit.arrangements`.

Linear regions and activation regions differ: an activation region (inputs sharing one
strict sign pattern) lies inside one linear region (constant gradient), but two adjacent
activation regions may share their gradient, e.g. when a whole layer is off on both sides
of a first-layer neuron's switch. So the number of pieces is at most the number of
activation regions, with equality for one hidden layer and generic weights.

Convention: ``net`` is a :func:`lecturekit.nets.mlp` network with "relu" activation, no
output activation and a scalar output. A dense layer computes
:math:`z = m_W\, h W + m_b\, b` with the forward multipliers :math:`(m_W, m_b)` of
``net.multipliers()`` (NTK: :math:`m_W = \sigma_w/\sqrt{\text{fan-in}}`,
:math:`m_b = \sigma_b`; standard: 1, 1), W of shape (fan_in, fan_out), inputs as rows.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import arrangements as _arrangements
from . import nets as _nets
from ._validation import as_host_float_array, check_positive_int, check_real

# Not part of the API (not in __all__). alias until chapters/appendix_errata.md and
# lecturekit/exercises/ch06.py use lecturekit.arrangements:
from .arrangements import count_cells, zaslavsky_cells  # noqa: F401
from .arrangements import general_position_cells as zaslavsky  # noqa: F401

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
    "hidden_lines",
    "count_regions_2d_shallow",
    "LinesInBox",
    "lines_in_box",
    "Regions2D",
    "activation_regions_2d",
    "activation_patterns",
    "pattern_map_2d",
]


# --------------------------------------------------------------------------- validation
def _check_relu_net(net: Any, *, input_dim: int | None) -> None:
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}")
    if net.activation.name != "relu":
        raise ValueError(f"net must use the 'relu' activation, got {net.activation.name!r}")
    if net.output_activation is not None:
        raise ValueError("net must have no output activation (its readout must be linear)")
    if net.output_dim != 1:
        raise ValueError(f"net must have a scalar output, got output width {net.output_dim}")
    if input_dim is not None and net.input_dim != input_dim:
        raise ValueError(f"net must have input dimension {input_dim}, got {net.input_dim}")


def _layers(net: _nets.MLP, params: Any, *, exact: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """Effective (mW * W, mb * b) of every dense layer, float64 or Fraction object arrays."""
    net.check_params(params)
    out = []
    for layer, (mw, mb) in zip(params, net.multipliers()):
        w = np.asarray(layer["W"], dtype=np.float64)
        b = np.asarray(layer["b"], dtype=np.float64)
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
            raise ValueError("params must be finite, but they contain NaN or infinity")
        if exact:
            fw, fb = Fraction(float(mw)), Fraction(float(mb))
            w = np.vectorize(lambda v: fw * Fraction(float(v)), otypes=[object])(w)
            b = np.vectorize(lambda v: fb * Fraction(float(v)), otypes=[object])(b)
        else:
            w, b = mw * w, mb * b
        out.append((w, b))
    return out


_REAL = (int, float, Fraction, np.integer, np.floating)


def _check_end(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, _REAL):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if math.isnan(out):
        raise ValueError(f"{name} must not be NaN")
    return out


def _check_exact_end(value: Any, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, _REAL):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite for an exact trace, got {value}")
        return Fraction(float(value))
    return Fraction(value)


def _interval(a: Any, b: Any, *, exact: bool) -> tuple[Any, Any]:
    check = _check_exact_end if exact else _check_end
    lo, hi = check(a, "a"), check(b, "b")
    if not lo < hi:
        raise ValueError(f"need a < b, got a = {a} and b = {b}")
    return lo, hi


def _check_box(box: Any) -> list[float]:
    if isinstance(box, (str, bytes)) or not hasattr(box, "__len__") or len(box) != 4:
        raise TypeError(f"box must be a sequence (x0, x1, y0, y1) of 4 numbers, got {box!r}")
    values = [check_real(v, name="box entries") for v in box]
    if not (values[0] < values[1] and values[2] < values[3]):
        raise ValueError(f"box must be (x0, x1, y0, y1) with x0 < x1 and y0 < y1, got {box}")
    return values


# --------------------------------------------------------------------------- 1-D tracing
class Trace1D(NamedTuple):
    r"""Exact piecewise-affine description of a scalar-input ReLU network on [a, b].

    Returned by :func:`trace_1d` (float64 NumPy arrays) and :func:`trace_1d_exact` (object
    arrays of :class:`fractions.Fraction`).

    Attributes:
        knots: :math:`a = t_0 < t_1 < \dots < t_m = b`, every point where some hidden
            neuron changes sign, plus the two ends.
        slopes: (m,) slope of the network on each :math:`(t_k, t_{k+1})`.
        intercepts: (m,) the network is ``intercepts[k] + slopes[k] * x`` there.
        breakpoints: the interior knots where the slope really changes (the kinks).
        new_knots: how many knots each hidden layer added (its neurons' sign changes that
            are not knots of earlier layers).

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
    """A point inside each interval (midpoint; a unit step from the finite end if unbounded)."""
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
        if snap > 0 and len(knots) > 2:  # merge zeros of different neurons that agree to rounding
            finite = np.isfinite(knots[:-1]) & np.isfinite(knots[1:])
            with np.errstate(invalid="ignore"):
                close = finite & (np.diff(knots) <= snap * np.maximum(1.0, np.abs(knots[1:])))
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




def trace_1d(net: _nets.MLP, params: Any, a: Any, b: Any, *,
             rtol: float = 1e-9, snap: float = 1e-11) -> Trace1D:
    r"""Pieces of a scalar-input ReLU network on [a, b], traced layer by layer in float64.

    Layer l's pre-activations are affine on each interval between the knots found for
    the layers before, so each neuron's zero on that interval is
    :math:`x^* = -\alpha/\beta` (added as a knot if it lies strictly inside). The sign of
    each pre-activation on a refined interval is read at an interior point. A knot counts
    as a breakpoint if the slopes on its two sides differ by more than ``rtol`` times the
    larger one. A zero closer than ``snap`` :math:`\cdot \max(1, |x|)` to a knot is merged
    with it, so that rounding (e.g. of 1/3) cannot create spurious slivers where a deeper
    neuron vanishes exactly at an earlier knot. See :func:`trace_1d_exact` for the same
    trace in rational arithmetic.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output dimension 1.
        params: its parameters (``net.init`` layout).
        a: left end, a real number (may be ``-inf``).
        b: right end, a real number > a (may be ``inf``).
        rtol: relative slope change below which a knot is not a breakpoint.
        snap: relative distance below which two zeros are one knot.

    Returns:
        Trace1D: knots, slopes and intercepts of the pieces, the breakpoints, and the knots
        added by each hidden layer (float64 NumPy arrays).

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> trace = regions.trace_1d(net, params, 0.0, 1.0)
        >>> trace.breakpoints.tolist(), trace.slopes.tolist()
        ([0.25, 0.5, 0.75], [4.0, -4.0, 4.0, -4.0])
    """
    _check_relu_net(net, input_dim=1)
    rtol = check_real(rtol, name="rtol", nonnegative=True)
    snap = check_real(snap, name="snap", nonnegative=True)
    lo, hi = _interval(a, b, exact=False)
    return _trace(_layers(net, params, exact=False), lo, hi, exact=False, rtol=rtol, snap=snap)


def trace_1d_exact(net: _nets.MLP, params: Any, a: Any, b: Any) -> Trace1D:
    """The trace of :func:`trace_1d` in rational arithmetic.

    Every weight, bias and multiplier is converted to a :class:`fractions.Fraction` without
    rounding (a float64 number is a dyadic rational), and the zeros, slopes and
    intercepts are computed exactly: a knot is a breakpoint exactly when the slopes on its
    two sides differ. Slower than :func:`trace_1d` (Python arithmetic on fractions); use
    it to check the float64 trace, or where a count must be certain.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output dimension 1.
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
    _check_relu_net(net, input_dim=1)
    lo, hi = _interval(a, b, exact=True)
    return _trace(_layers(net, params, exact=True), lo, hi, exact=True, rtol=0.0)


def breakpoints_1d(net: _nets.MLP, params: Any, a: Any, b: Any) -> jax.Array:
    """Sorted input points in the open interval (a, b) where the network changes slope.

    The breakpoints of :func:`trace_1d` (float64; exact up to the rounding of one quotient
    per breakpoint). :func:`breakpoints_1d_exact` gives them as fractions.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output dimension 1.
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
    """The breakpoints of :func:`breakpoints_1d` in rational arithmetic (:func:`trace_1d_exact`).

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output dimension 1.
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
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output dimension 1.
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
    """Linear pieces and activation regions of a scalar-input ReLU network (:func:`line_counts`).

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
    """Pieces and activation regions on the real line and on [-radius, radius], from one trace.

    The trace on the real line (:func:`trace_1d` from -inf to inf) restricted to
    (-radius, radius) is the trace on the segment, so one trace serves both counts.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input and output dimension 1.
        params: its parameters.
        radius: half-length of the segment, > 0.

    Returns:
        LineCounts: the four counts and the knots added per hidden layer.

    Example:
        >>> from lecturekit import regions
        >>> net, params = regions.sawtooth(2)
        >>> regions.line_counts(net, params, radius=0.6)
        LineCounts(pieces=6, activation_regions=6, pieces_inside=4, activation_regions_inside=4, zeros_per_layer=(2, 1, 2, 0))
    """
    _check_relu_net(net, input_dim=1)
    radius = check_real(radius, name="radius", positive=True)
    tr = trace_1d(net, params, -np.inf, np.inf)
    knots = tr.knots[1:-1]

    def inside(t):
        return int(np.count_nonzero(np.abs(t) < radius))

    return LineCounts(1 + len(tr.breakpoints), 1 + len(knots), 1 + inside(tr.breakpoints),
                      1 + inside(knots), tr.new_knots)


# --------------------------------------------------------------------------- sawtooth
def tent(x: Any) -> Any:
    r"""Telgarsky's building block :math:`f(x) = \phi(2\phi(x) - 4\phi(x - 1/2))`, :math:`\phi` = ReLU.

    On [0, 1] it is the tent map (2x on [0, 1/2], 2 - 2x on [1/2, 1]); it is 0 outside.

    Args:
        x: a real number, a ``Fraction`` (the result is then exact) or an array (NumPy or
            JAX; the result is a NumPy array).

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
        if x.dtype != object and np.any(np.isnan(as_host_float_array(x, name="x", finite=False))):
            raise ValueError("x must not contain NaN")
        return np.maximum(2 * np.maximum(x, 0) - 4 * np.maximum(x - 0.5, 0), 0)
    if isinstance(x, bool) or not isinstance(x, _REAL):
        raise TypeError(f"x must be a real number, a Fraction or an array, got {type(x).__name__}")
    if isinstance(x, (float, np.floating)) and math.isnan(x):
        raise ValueError("x must not be NaN")
    half = Fraction(1, 2) if isinstance(x, (Fraction, int, np.integer)) else 0.5
    zero = 0 * half   # Fraction(0) or 0.0: the result has the kind of the input
    return max(2 * max(x, zero) - 4 * max(x - half, zero), zero)


def sawtooth(depth: int) -> tuple[_nets.MLP, list[dict[str, jax.Array]]]:
    r"""Telgarsky's sawtooth :math:`f_L = f \circ \dots \circ f` (``depth`` = L times) as a ReLU mlp.

    Each :math:`f(x) = \phi(2\phi(x) - 4\phi(x - 1/2))` (:func:`tent`) is two hidden layers
    of widths 2 and 1, so the network has widths (1, 2, 1, ..., 2, 1, 1): 2L hidden
    layers, 3L hidden neurons and an identity readout, in the standard parameterization
    (z = h W + b). :math:`f_L` has :math:`2^{L-1}` teeth, :math:`2^L` affine pieces on
    [0, 1] (breakpoints :math:`k/2^L`) and :math:`2^L + 2` pieces on the real line (it
    is 0 outside [0, 1]).

    Args:
        depth: L, the number of compositions, an integer >= 1.

    Returns:
        (net, params): the :func:`lecturekit.nets.mlp` network and its hand-set parameters.

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


# --------------------------------------------------------------------------- 2-D, one layer
def hidden_lines(net: _nets.MLP, params: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""First-layer hyperplanes :math:`\{x : \langle w_j, x\rangle + c_j = 0\}` of a ReLU network.

    Neuron j of the first hidden layer switches on its hyperplane, with normal
    :math:`w_j = m_W W_{:, j}` and offset :math:`c_j = m_b b_j`. The result is the
    ``(normals, offsets)`` argument pair of :func:`lecturekit.arrangements.count_cells`.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network (any input dimension).
        params: its parameters.

    Returns:
        (normals, offsets): float64 NumPy arrays of shapes (n_1, n_0) and (n_1,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import nets, regions
        >>> net = nets.mlp((2, 2, 1), "relu", parameterization="standard")
        >>> params = [{"W": np.eye(2), "b": np.array([0.0, -1.0])},
        ...           {"W": np.ones((2, 1)), "b": np.zeros(1)}]
        >>> normals, offsets = regions.hidden_lines(net, params)
        >>> normals.tolist(), offsets.tolist()
        ([[1.0, 0.0], [0.0, 1.0]], [0.0, -1.0])
    """
    _check_relu_net(net, input_dim=None)
    w, b = _layers(net, params, exact=False)[0]
    return w.T, b


def count_regions_2d_shallow(net: _nets.MLP, params: Any) -> int:
    r"""Exact number of linear regions on :math:`\mathbb R^2` of a one-hidden-layer ReLU network.

    Neuron j contributes :math:`v_j \phi(\lambda_j (\langle n, x\rangle + c))`, where
    (n, c) is its line in a normalised form; crossing the line changes the gradient by
    :math:`(\sum_j v_j |\lambda_j|)\, n`, summed over the neurons on that line. The lines
    with a non-zero jump are the kinks; the linear regions are the cells of their
    arrangement, counted exactly by :func:`lecturekit.arrangements.count_cells`.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with widths (2, n_1, 1).
        params: its parameters.

    Returns:
        int: the number of linear regions on the plane.

    Example:
        >>> import numpy as np
        >>> from lecturekit import nets, regions
        >>> net = nets.mlp((2, 3, 1), "relu", parameterization="standard")
        >>> params = [{"W": np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]),
        ...            "b": np.array([0.0, 0.0, -1.0])},
        ...           {"W": np.array([[1.0], [0.0], [1.0]]),  # readout 0
        ...            "b": np.zeros(1)}]
        >>> regions.count_regions_2d_shallow(net, params)  # 3 lines, 2 count
        4
    """
    _check_relu_net(net, input_dim=2)
    if net.depth != 1:
        raise ValueError(f"net must have one hidden layer for count_regions_2d_shallow, got depth {net.depth}")
    (w, b), (v, _) = _layers(net, params, exact=True)
    jumps: dict[tuple, Fraction] = {}
    for j in range(w.shape[1]):
        normal = [w[0, j], w[1, j]]
        lead = next((x for x in normal if x != 0), None)
        if lead is None:
            continue  # a constant neuron has no kink
        key = (tuple(x / lead for x in normal), b[j] / lead)  # first coordinate of the normal +1
        jumps[key] = jumps.get(key, Fraction(0)) + v[j, 0] * abs(lead)
    kinks = [key for key, jump in jumps.items() if jump != 0]
    if not kinks:
        return 1
    normals = np.array([list(k[0]) for k in kinks], dtype=object)
    offsets = np.array([k[1] for k in kinks], dtype=object)
    return _arrangements.count_cells(normals, offsets)


class LinesInBox(NamedTuple):
    """First-layer lines that meet a box, and their crossings inside it (:func:`lines_in_box`).

    Attributes:
        lines: the number of first-layer neurons whose line meets the open box.
        crossings: the number of points inside the open box where two of those lines cross.

    Example:
        >>> from lecturekit import regions
        >>> regions.LinesInBox(lines=3, crossings=2)
        LinesInBox(lines=3, crossings=2)
    """

    lines: int
    crossings: int


def lines_in_box(net: _nets.MLP, params: Any, box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0)) -> LinesInBox:
    r"""Count the first-layer lines of a 2-D-input ReLU network that meet a box, and their crossings.

    Neuron j of the first hidden layer switches on the line
    :math:`\{x : \langle w_j, x\rangle + c_j = 0\}` (:func:`hidden_lines`). A line meets the
    open box when the box's corners lie strictly on both sides of it; two lines cross at
    the solution of a 2 x 2 system (parallel lines never do). For a one-hidden-layer
    network whose lines are in general position (no crossing on the boundary of the box,
    no three through a point), Euler's formula for the planar graph the lines cut out of
    the box gives the number of regions in closed form,
    ``activation_regions_2d(net, params, box).count == 1 + lines + crossings``, without
    cutting polygons: a cheap, independent check of :func:`activation_regions_2d`.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input dimension 2.
        params: its parameters.
        box: (x0, x1, y0, y1) with x0 < x1 and y0 < y1.

    Returns:
        LinesInBox: the two counts.

    Example:
        >>> import numpy as np
        >>> from lecturekit import nets, regions
        >>> net = nets.mlp((2, 3, 1), "relu", parameterization="standard")
        >>> params = [{"W": np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]),
        ...            "b": np.array([0.0, 0.0, -0.5])},
        ...           {"W": np.ones((3, 1)), "b": np.zeros(1)}]
        >>> # the lines x1 = 0, x2 = 0 and x1 + x2 = 0.5 in [-1, 1]^2
        >>> regions.lines_in_box(net, params, (-1.0, 1.0, -1.0, 1.0))
        LinesInBox(lines=3, crossings=3)
    """
    _check_relu_net(net, input_dim=2)
    x0, x1, y0, y1 = _check_box(box)
    normals, offsets = hidden_lines(net, params)
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    vals = corners @ normals.T + offsets
    meets = (vals.max(0) > 0) & (vals.min(0) < 0)
    j, k = np.triu_indices(len(offsets), 1)
    det = normals[j, 0] * normals[k, 1] - normals[j, 1] * normals[k, 0]
    ok = det != 0
    j, k, det = j[ok], k[ok], det[ok]
    # Cramer's rule for w_j . x = -c_j, w_k . x = -c_k
    px = (-offsets[j] * normals[k, 1] + offsets[k] * normals[j, 1]) / det
    py = (-normals[j, 0] * offsets[k] + normals[k, 0] * offsets[j]) / det
    inside = (x0 < px) & (px < x1) & (y0 < py) & (py < y1)
    return LinesInBox(int(np.count_nonzero(meets)), int(np.count_nonzero(inside)))


# --------------------------------------------------------------------------- 2-D, any depth
class Regions2D(NamedTuple):
    """Convex polygons of constant activation pattern inside a box (:func:`activation_regions_2d`).

    Attributes:
        polygons: list of (m_k, 2) float64 arrays, the vertices of each region in
            counter-clockwise order.
        patterns: (count, N) bool array, the activation pattern (all hidden neurons, layer
            by layer) on each region's interior.
        gradients: (count, 2) float64 array, the network's gradient on each region.

    The property ``count`` is the number of regions.

    Example:
        >>> from lecturekit import regions
        >>> regions.Regions2D._fields
        ('polygons', 'patterns', 'gradients')
    """

    polygons: list[np.ndarray]
    patterns: np.ndarray
    gradients: np.ndarray

    @property
    def count(self) -> int:
        """The number of regions (polygons)."""
        return len(self.polygons)


def _split(poly: np.ndarray, vals: np.ndarray, tol: float):
    """Split a convex polygon by the zero line of an affine function with vertex values vals."""
    pos_part, neg_part = [], []
    m = len(poly)
    for i in range(m):
        p, q = poly[i], poly[(i + 1) % m]
        vp, vq = vals[i], vals[(i + 1) % m]
        if vp >= -tol:
            pos_part.append(p)
        if vp <= tol:
            neg_part.append(p)
        if (vp > tol and vq < -tol) or (vp < -tol and vq > tol):
            x = p + (vp / (vp - vq)) * (q - p)
            pos_part.append(x)
            neg_part.append(x)
    return np.array(pos_part), np.array(neg_part)


def _cut_layer(items: list, w: np.ndarray, b: np.ndarray, tol: float) -> list:
    """Cut every polygon of ``items`` by the zero lines of one layer's neurons."""
    out = []
    for poly, a_in, c_in, pattern in items:
        a_z, c_z = a_in @ w, c_in @ w + b
        pieces = [poly]
        vals_all = poly @ a_z + c_z
        scale = np.abs(vals_all).max() + 1e-300
        crossing = np.nonzero((vals_all.max(0) > tol * scale) & (vals_all.min(0) < -tol * scale))[0]
        for j in crossing:
            new = []
            for piece in pieces:
                vals = piece @ a_z[:, j] + c_z[j]
                if vals.max() > tol * scale and vals.min() < -tol * scale:
                    pos, neg = _split(piece, vals, tol * scale)
                    new.extend(pp for pp in (pos, neg) if len(pp) >= 3)
                else:
                    new.append(piece)
            pieces = new
        for piece in pieces:
            centre = piece.mean(axis=0)
            on = centre @ a_z + c_z > 0
            out.append((piece, np.where(on, a_z, 0.0), np.where(on, c_z, 0.0), pattern + [on]))
    return out


def activation_regions_2d(net: _nets.MLP, params: Any, box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0),
                          *, tol: float = 1e-12) -> Regions2D:
    """Activation regions of a 2-D-input ReLU network inside ``box`` = (x0, x1, y0, y1).

    Starting from the box, each hidden layer's pre-activations are affine on every current
    polygon (their coefficients are carried along), so the polygon is cut by each neuron's
    zero line in turn (float64; vertex values within ``tol`` times the polygon's scale of
    zero count as on the line). Every resulting polygon is convex and carries one
    activation pattern; the network's gradient is constant on it. Counts activation
    regions; adjacent regions with equal gradients are not merged, so this is an upper
    bound on the linear regions inside the box (equal to it for one hidden layer and
    generic weights).

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input dimension 2.
        params: its parameters.
        box: (x0, x1, y0, y1) with x0 < x1 and y0 < y1.
        tol: relative tolerance for a vertex on a line, >= 0.

    Returns:
        Regions2D: the polygons, their activation patterns and gradients.

    Example:
        >>> import numpy as np
        >>> from lecturekit import nets, regions
        >>> net = nets.mlp((2, 2, 1), "relu", parameterization="standard")
        >>> params = [{"W": np.eye(2), "b": np.zeros(2)},  # x1 = 0, x2 = 0
        ...           {"W": np.ones((2, 1)), "b": np.zeros(1)}]
        >>> found = regions.activation_regions_2d(net, params, (-1, 1, -1, 1))
        >>> found.count
        4
    """
    _check_relu_net(net, input_dim=2)
    box = _check_box(box)
    tol = check_real(tol, name="tol", nonnegative=True)
    layers = _layers(net, params, exact=False)
    x0, x1, y0, y1 = box
    square = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)
    # each item: polygon, affine map of the current layer input h = A x + c  (A: (2, n), c: (n,))
    items = [(square, np.eye(2), np.zeros(2), [])]
    for w, b in layers[:-1]:
        items = _cut_layer(items, w, b, tol)
    w, b = layers[-1]
    polygons = [item[0] for item in items]
    patterns = np.array([np.concatenate(item[3]) for item in items], dtype=bool)
    gradients = np.array([(item[1] @ w)[:, 0] for item in items])
    return Regions2D(polygons, patterns, gradients)


def activation_patterns(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """Activation pattern of each input: whether z > 0, for every hidden neuron, layer by layer.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network.
        params: its parameters.
        x: (n, n_0) inputs.

    Returns:
        jax.Array: (n, N) booleans, N the number of hidden neurons (first layer first).

    Example:
        >>> import numpy as np
        >>> from lecturekit import nets, regions
        >>> net = nets.mlp((2, 2, 1), "relu", parameterization="standard")
        >>> params = [{"W": np.eye(2), "b": np.zeros(2)},
        ...           {"W": np.ones((2, 1)), "b": np.zeros(1)}]
        >>> x = np.array([[0.5, -0.5]])
        >>> regions.activation_patterns(net, params, x).tolist()
        [[True, False]]
    """
    _check_relu_net(net, input_dim=None)
    zs, _, _ = net.forward(params, x)
    return jnp.concatenate([z > 0 for z in zs[:-1]], axis=1)


def pattern_map_2d(net: _nets.MLP, params: Any, box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0),
                   resolution: int = 200) -> tuple[np.ndarray, int]:
    """Label each point of a resolution x resolution grid over ``box`` by its activation pattern.

    A picture of the regions on a grid, with no claim to completeness: regions smaller than
    the grid spacing are missed. :func:`activation_regions_2d` finds them all.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input dimension 2.
        params: its parameters.
        box: (x0, x1, y0, y1) with x0 < x1 and y0 < y1.
        resolution: grid points per axis, >= 2.

    Returns:
        (labels, k): labels[i, j] in {0, ..., k-1} identifies the pattern at
        (x_j, y_i); k distinct patterns were seen (a lower bound on the regions meeting the
        box).

    Example:
        >>> import numpy as np
        >>> from lecturekit import nets, regions
        >>> net = nets.mlp((2, 2, 1), "relu", parameterization="standard")
        >>> params = [{"W": np.eye(2), "b": np.zeros(2)},
        ...           {"W": np.ones((2, 1)), "b": np.zeros(1)}]
        >>> labels, seen = regions.pattern_map_2d(net, params, resolution=4)
        >>> labels.shape, seen
        ((4, 4), 4)
    """
    _check_relu_net(net, input_dim=2)
    resolution = check_positive_int(resolution, name="resolution", minimum=2)
    box = _check_box(box)
    xs = np.linspace(box[0], box[1], resolution)
    ys = np.linspace(box[2], box[3], resolution)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    pats = np.asarray(activation_patterns(net, params, grid))
    _, labels = np.unique(np.packbits(pats, axis=1), axis=0, return_inverse=True)
    labels = labels.reshape(resolution, resolution)
    return labels, int(labels.max()) + 1

