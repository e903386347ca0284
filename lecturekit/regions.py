"""Linear regions of ReLU networks: exact breakpoints in 1-D, exact cells in 2-D.

A ReLU network x -> f(x) is continuous and piecewise affine. Its *activation pattern* at
x is the vector of signs of all hidden pre-activations; on the set of inputs sharing one
pattern every neuron is either the identity or zero, so f is affine there. This module
computes these pieces from the network's weights, never from a grid of samples:

* ``trace_1d`` / ``breakpoints_1d`` / ``count_pieces_1d`` (scalar input): layer by
  layer, on every interval between the breakpoints found so far each pre-activation of
  the next layer is affine in x, so its zero is found in closed form, x* = -z0 / z1. The
  result is exact in float64 up to rounding of those quotients, and exact in rational
  arithmetic with ``exact=True`` (``fractions.Fraction``; the network is then the one
  whose weights and multipliers are the given float64 numbers, evaluated without
  rounding).
* ``sawtooth(depth)``: Telgarsky's tent-map composition as a ``nets.mlp`` network.
* ``count_cells`` / ``count_regions_2d_shallow``: exact (rational) number of cells of a
  hyperplane arrangement, found by probing every orthant around every vertex;
  ``zaslavsky(n, d)`` = sum_{i <= d} C(n, i), the cell count of n hyperplanes in general
  position (Schlaefli's and Buck's formula); ``characteristic_polynomial`` /
  ``zaslavsky_cells``: the count of *any* arrangement by Zaslavsky's theorem,
  r = (-1)^d chi(-1), with chi from Whitney's subset formula (exact, independent of
  ``count_cells``).
* ``activation_regions_2d``: the convex polygons of constant activation pattern of a
  deep network with 2-D input inside a box (float64 polygon splitting, layer by layer),
  and ``activation_patterns`` / ``pattern_map_2d`` for pictures on a grid.
* ``draw_params``: random parameters of any architecture from one compiled generator;
  ``line_counts``: linear pieces and activation regions on the line and on a segment.

Linear regions and activation regions differ: an activation region (inputs sharing one
strict sign pattern) lies inside one linear region (constant gradient), but two adjacent
activation regions may share their gradient, e.g. when a whole layer is off on both sides
of a first-layer neuron's switch. So #pieces <= #activation regions, with equality for one
hidden layer and generic weights only.

Convention: ``net`` is a ``lecturekit.nets.mlp`` network with "relu" activation, no
output activation and a scalar output. A dense layer computes z = mW * h W + mb * b with
the forward multipliers (mW, mb) of ``net.multipliers()`` (NTK: mW = w_std / sqrt(fan_in),
mb = b_std; standard: 1, 1), W of shape (fan_in, fan_out).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import nets as _nets
from .hessian import normal_stream as _normal_stream
from ._validation import as_float_array, as_host_float_array, check_key, check_positive_int, check_real

__all__ = [
    "Trace1D",
    "trace_1d",
    "breakpoints_1d",
    "count_pieces_1d",
    "sawtooth",
    "tent",
    "zaslavsky",
    "count_cells",
    "count_regions_2d_shallow",
    "hidden_lines",
    "Regions2D",
    "activation_regions_2d",
    "activation_patterns",
    "pattern_map_2d",
    "plot_regions_2d",
    "random_params",
    "draw_params",
    "LineCounts",
    "line_counts",
    "characteristic_polynomial",
    "zaslavsky_cells",
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


def _interval(a: Any, b: Any, *, exact: bool) -> tuple[Any, Any]:
    if exact:
        ends = []
        for value, name in ((a, "a"), (b, "b")):
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, np.integer, np.floating)):
                raise TypeError(f"{name} must be a real number, got {value!r}")
            if isinstance(value, (float, np.floating)) and not math.isfinite(value):
                raise ValueError(f"{name} must be finite when exact=True, got {value}")
            ends.append(Fraction(value) if not isinstance(value, (float, np.floating)) else Fraction(float(value)))
        lo, hi = ends
    else:
        lo, hi = (_check_end(v, n) for v, n in ((a, "a"), (b, "b")))
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


def _check_end(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if math.isnan(out):
        raise ValueError(f"{name} must not be NaN")
    return out


# --------------------------------------------------------------------------- 1-D tracing
class Trace1D(NamedTuple):
    """Exact piecewise-affine description of a scalar-input ReLU network on [a, b].

    ``knots``: a = t_0 < t_1 < ... < t_m = b, every point where some neuron changes state;
    on (t_k, t_{k+1}) the network is ``intercepts[k] + slopes[k] * x``.
    ``breakpoints``: the interior knots where the slope really changes (the kinks).
    ``new_knots``: how many knots each hidden layer added (its neurons' zero crossings).
    Arrays are float64 NumPy arrays, or object arrays of ``Fraction`` when ``exact=True``.
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


def trace_1d(net: _nets.MLP, params: Any, a: Any, b: Any, *, exact: bool = False,
             rtol: float = 1e-9, snap: float = 1e-11) -> Trace1D:
    """Pieces of a scalar-input ReLU network on [a, b], traced layer by layer.

    Layer l's pre-activations are affine on each interval between the knots found for
    layers < l, so each neuron's zero on that interval is x* = -z0 / z1 (added as a knot
    if it lies strictly inside). The sign of each pre-activation on a refined interval is
    read at an interior point. ``a``/``b`` may be infinite (float mode). A knot counts as a
    breakpoint if the slopes on its two sides differ (by more than ``rtol`` times the
    larger one in float mode; exactly in ``exact`` mode, which uses ``Fraction``s).
    In float mode a zero closer than ``snap`` * max(1, |x|) to a knot is merged with it, so
    that rounding (e.g. of 1/3) cannot create spurious slivers where a deeper neuron
    vanishes exactly at an earlier knot.
    """
    _check_relu_net(net, input_dim=1)
    exact = bool(exact)
    rtol = check_real(rtol, name="rtol", nonnegative=True)
    snap = 0.0 if exact else check_real(snap, name="snap", nonnegative=True)
    lo, hi = _interval(a, b, exact=exact)
    return _trace(_layers(net, params, exact=exact), lo, hi, exact=exact, rtol=rtol, snap=snap)


def breakpoints_1d(net: _nets.MLP, params: Any, a: Any, b: Any, *, exact: bool = False):
    """Sorted input points in the open interval (a, b) where the network changes slope.

    Returns a float64 JAX array, or a list of ``Fraction``s if ``exact=True``.
    """
    bp = trace_1d(net, params, a, b, exact=exact).breakpoints
    return list(bp) if exact else jnp.asarray(bp)


def count_pieces_1d(net: _nets.MLP, params: Any, a: Any, b: Any, *, exact: bool = False) -> int:
    """Exact number of affine pieces of the network on [a, b]: 1 + number of breakpoints."""
    return 1 + len(trace_1d(net, params, a, b, exact=exact).breakpoints)


def _cut_params(net: _nets.MLP, flat: np.ndarray) -> list[list[dict[str, np.ndarray]]]:
    """Rows of N(0, 1) numbers (count, num_params) -> parameter lists with the law of net.init."""
    out = []
    for row in flat:
        params, start = [], 0
        for (n_in, n_out), (w_std, b_std) in zip(zip(net.widths[:-1], net.widths[1:]), net.layer_stds()):
            w = row[start:start + n_in * n_out].reshape(n_in, n_out)
            b = row[start + n_in * n_out:start + n_in * n_out + n_out]
            start += n_in * n_out + n_out
            if net.parameterization == "standard":
                w, b = w * (w_std / n_in**0.5), b * b_std
            params.append({"W": w, "b": b})
        out.append(params)
    return out


def random_params(net: _nets.MLP, key: jax.Array, count: int) -> list[list[dict[str, np.ndarray]]]:
    """``count`` independent parameter draws with the distribution of ``net.init`` (NumPy arrays).

    All entries come from one ``jax.random.normal`` call (one compilation, however many
    networks), then are cut into layers: N(0, 1) entries in the NTK parameterization,
    scaled by w_std / sqrt(fan_in) and b_std in the standard one. Same law as ``net.init``,
    different values for a given key.
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}")
    check_key(key)
    count = check_positive_int(count, name="count")
    flat = np.asarray(jax.random.normal(key, (count, net.num_params()), dtype=jnp.float64
                                        if jax.config.jax_enable_x64 else jnp.float32), dtype=np.float64)
    return _cut_params(net, flat)


def draw_params(net: _nets.MLP, key: jax.Array, count: int) -> list[list[dict[str, np.ndarray]]]:
    """``count`` independent parameter draws with the law of ``net.init``, for any architecture
    from one compiled generator.

    Same law and layout as :func:`random_params` (N(0, 1) entries in the NTK
    parameterization; N(0, w_std^2 / fan_in) weights and N(0, b_std^2) biases in the
    standard one), but the numbers are ``hessian.normal_stream(key, count * num_params)``:
    fixed-size chunks drawn by one compiled function, so sweeps over many architectures
    compile JAX's generator once instead of once per shape. Deterministic in ``key``;
    values differ from :func:`random_params` for the same key.
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}")
    check_key(key)
    count = check_positive_int(count, name="count")
    flat = _normal_stream(key, count * net.num_params()).reshape(count, net.num_params())
    return _cut_params(net, np.asarray(flat, dtype=np.float64))


class LineCounts(NamedTuple):
    """Linear pieces and activation regions of a scalar-input ReLU network (see :func:`line_counts`)."""

    pieces: int
    activation_regions: int
    pieces_inside: int
    activation_regions_inside: int
    zeros_per_layer: tuple[int, ...]


def line_counts(net: _nets.MLP, params: Any, radius: Any = 1.0) -> LineCounts:
    """Pieces and activation regions on the real line and on [-radius, radius], from one trace.

    ``pieces``: linear pieces on R, 1 + the number of breakpoints (slope changes);
    ``activation_regions``: 1 + the number of knots on R (points where some hidden neuron
    changes sign), so ``pieces <= activation_regions``; the ``*_inside`` counts are the
    same on [-radius, radius] (knots and breakpoints strictly inside); ``zeros_per_layer``:
    the knots each hidden layer adds on R (its neurons' sign changes not already knots).
    The trace on R restricted to (-radius, radius) is the trace on the segment, so one
    :func:`trace_1d` serves both.
    """
    _check_relu_net(net, input_dim=1)
    radius = check_real(radius, name="radius", positive=True)
    tr = trace_1d(net, params, -np.inf, np.inf)
    knots = tr.knots[1:-1]
    inside = lambda t: int(np.count_nonzero(np.abs(t) < radius))  # noqa: E731
    return LineCounts(1 + len(tr.breakpoints), 1 + len(knots), 1 + inside(tr.breakpoints),
                      1 + inside(knots), tr.new_knots)


# --------------------------------------------------------------------------- sawtooth
def tent(x: Any) -> Any:
    """Telgarsky's building block f(x) = relu(2 relu(x) - 4 relu(x - 1/2)).

    On [0, 1] it is the tent map (2x on [0, 1/2], 2 - 2x on [1/2, 1]); it is 0 outside.
    Works on floats, ``Fraction``s and arrays (NumPy or JAX; the result is a NumPy array).
    """
    if isinstance(x, (np.ndarray, jax.Array)):
        x = np.asarray(x)
        if x.dtype != object and np.any(np.isnan(as_host_float_array(x, name="x", finite=False))):
            raise ValueError("x must not contain NaN")
        return np.maximum(2 * np.maximum(x, 0) - 4 * np.maximum(x - 0.5, 0), 0)
    if isinstance(x, bool) or not isinstance(x, (int, float, Fraction, np.integer, np.floating)):
        raise TypeError(f"x must be a real number, a Fraction or an array, got {type(x).__name__}")
    if isinstance(x, (float, np.floating)) and math.isnan(x):
        raise ValueError("x must not be NaN")
    half = Fraction(1, 2) if isinstance(x, (Fraction, int)) else 0.5
    return max(2 * max(x, 0) - 4 * max(x - half, 0), 0)


def sawtooth(depth: int) -> tuple[_nets.MLP, list[dict[str, jax.Array]]]:
    """Telgarsky's sawtooth f_L = f o ... o f (``depth`` = L times) as a ReLU mlp.

    Each f(x) = relu(2 relu(x) - 4 relu(x - 1/2)) is two hidden layers of widths 2 and 1,
    so the network has widths (1, 2, 1, ..., 2, 1, 1): 2L hidden layers, 3L hidden
    neurons and an identity readout, in the standard parameterization (z = h W + b).
    f_L has 2^(L-1) teeth, 2^L affine pieces on [0, 1] (breakpoints k / 2^L) and 2^L + 2
    pieces on the real line (it is 0 outside [0, 1]).
    """
    depth = check_positive_int(depth, name="depth")
    net = _nets.mlp((1,) + (2, 1) * depth + (1,), "relu", parameterization="standard")
    first = {"W": jnp.array([[1.0, 1.0]]), "b": jnp.array([0.0, -0.5])}
    second = {"W": jnp.array([[2.0], [-4.0]]), "b": jnp.array([0.0])}
    readout = {"W": jnp.array([[1.0]]), "b": jnp.array([0.0])}
    return net, [first, second] * depth + [readout]


# --------------------------------------------------------------------------- arrangements
def zaslavsky(n: int, d: int) -> int:
    """Cells of n hyperplanes in general position in R^d: sum_{i=0}^{d} C(n, i).

    General position: any k <= d of the hyperplanes meet in a (d - k)-dimensional flat and
    no d + 1 share a point (so no two are parallel). This is Buck's formula (1943; Schlaefli
    counted the central case); Zaslavsky's theorem (:func:`zaslavsky_cells`) gives the
    count of every arrangement and reduces to this sum in general position.
    """
    n = check_positive_int(n, name="n", minimum=0)
    d = check_positive_int(d, name="d")
    return sum(math.comb(n, i) for i in range(d + 1))


def _to_fraction_matrix(values: Any, *, name: str, ndim: int) -> list:
    if isinstance(values, np.ndarray) and values.dtype == object:
        arr = values
        for v in arr.ravel():
            if isinstance(v, bool) or not isinstance(v, (int, Fraction, np.integer)):
                raise TypeError(f"an object array {name} must hold ints or Fractions, got {type(v).__name__}")
    else:
        arr = np.asarray(as_float_array(values, name=name, ndim=ndim), dtype=np.float64)
        arr = np.vectorize(lambda v: Fraction(float(v)), otypes=[object])(arr) if arr.size else arr.astype(object)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    return arr.tolist()


def _solve(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """Exact solution of a square system by Gaussian elimination (None if singular)."""
    n = len(matrix)
    m = [list(row) + [r] for row, r in zip(matrix, rhs)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if m[r][col] != 0), None)
        if pivot is None:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def _row_basis(rows: list[list[Fraction]]) -> list[int]:
    """Indices of a maximal linearly independent subset of rows (exact)."""
    basis: list[list[Fraction]] = []   # reduced rows
    chosen: list[int] = []
    pivots: list[int] = []
    for i, row in enumerate(rows):
        r = list(row)
        for prow, p in zip(basis, pivots):
            if r[p] != 0:
                f = r[p] / prow[p]
                r = [x - f * y for x, y in zip(r, prow)]
        nz = next((j for j, x in enumerate(r) if x != 0), None)
        if nz is not None:
            basis.append(r)
            pivots.append(nz)
            chosen.append(i)
    return chosen


def count_cells(normals: Any, offsets: Any) -> int:
    """Exact number of cells (connected components of the complement) of an arrangement.

    The hyperplanes are {x in R^d : normals[j] . x + offsets[j] = 0}, normals of shape
    (n, d), offsets (n,). Entries are converted to ``Fraction`` exactly (or may be given
    as object arrays of ``Fraction``). Hyperplanes with zero normal are ignored; repeated
    hyperplanes count once.

    Method (independent of Zaslavsky's theorem): restrict to the span of the normals;
    if the hyperplanes meet in vertices, every cell has a vertex in its closure, so every
    cell contains one of the points v + eps u, where v is a vertex, u solves
    normals[S] u = s for d hyperplanes S through v and a sign vector s in {-1, 1}^d,
    and eps is (exactly) small enough that no other hyperplane is crossed. The cells are
    the distinct sign vectors of those points. Complete for every arrangement in the plane
    and for arrangements in general position in any dimension (raises otherwise).
    """
    w = _to_fraction_matrix(normals, name="normals", ndim=2)
    c = _to_fraction_matrix(offsets, name="offsets", ndim=1)
    if len(w) != len(c):
        raise ValueError(f"normals and offsets must have the same length, got {len(w)} and {len(c)}")
    # drop zero normals; scale each hyperplane so that its first non-zero normal entry is 1
    # (then a repeated hyperplane, whatever its orientation, has the same key)
    unique = {}
    for row, off in zip(w, c):
        lead = next((x for x in row if x != 0), None)
        if lead is not None:
            unique[(tuple(x / lead for x in row), off / lead)] = True
    planes = list(unique)
    if not planes:
        return 1
    w = [list(r) for r, _ in planes]
    c = [o for _, o in planes]
    # coordinates in the span of the normals: x = B^T y gives reduced normals B w_j
    basis = [w[i] for i in _row_basis(w)]
    if len(basis) == len(w[0]):
        red = w  # the normals span R^d: keep the original coordinates
    else:
        red = [[sum(a * b for a, b in zip(bi, row)) for bi in basis] for row in w]
    d = len(basis)
    n = len(red)

    def evaluate(point):
        return [sum(a * p for a, p in zip(row, point)) + off for row, off in zip(red, c)]

    vertices = {}
    for subset in itertools.combinations(range(n), d):
        sol = _solve([red[j] for j in subset], [-c[j] for j in subset])
        if sol is not None:
            vertices.setdefault(tuple(sol), None)
    if d >= 3:
        for v in vertices:
            through = sum(1 for g in evaluate(v) if g == 0)
            if through > d:
                raise ValueError(
                    "count_cells handles degenerate arrangements (more than d hyperplanes "
                    f"through one point) only in the plane; found {through} through one point in R^{d}"
                )
    if d == 1:  # parallel hyperplanes (lines in the plane, points on a line): n + 1 cells
        return n + 1
    patterns = set()
    signs = list(itertools.product((-1, 1), repeat=d))
    for v in vertices:
        g = evaluate(v)
        through = [j for j in range(n) if g[j] == 0]
        for subset in itertools.combinations(through, d):
            mat = [red[j] for j in subset]
            for s in signs:
                u = _solve(mat, [Fraction(si) for si in s])
                if u is None:
                    break
                slopes = [sum(a * ui for a, ui in zip(row, u)) for row in red]
                limits = [abs(g[j] / slopes[j]) for j in range(n) if g[j] != 0 and slopes[j] != 0]
                eps = min(limits) / 2 if limits else Fraction(1)
                values = [gj + eps * sj for gj, sj in zip(g, slopes)]
                if all(val != 0 for val in values):
                    patterns.add(tuple(val > 0 for val in values))
    return len(patterns)


def _reduce(row: list, basis: list, pivots: list) -> list:
    """``row`` minus its components along the echelon rows ``basis`` (exact)."""
    r = list(row)
    for prow, p in zip(basis, pivots):
        if r[p] != 0:
            f = r[p] / prow[p]
            r = [x - f * y for x, y in zip(r, prow)]
    return r


def characteristic_polynomial(normals: Any, offsets: Any, *, max_subsets: int = 2**20) -> tuple[int, ...]:
    """Coefficients (c_0, ..., c_d) of the characteristic polynomial chi(t) = sum_k c_k t^k.

    The arrangement is {x in R^d : normals[j] . x + offsets[j] = 0}, j < n (exact
    ``Fraction`` arithmetic, as in :func:`count_cells`; hyperplanes with zero normal are
    ignored). Whitney's formula: chi(t) = sum over the subsets S of hyperplanes with a
    non-empty intersection of (-1)^|S| t^(d - rank S), rank S the rank of their normals.
    Subsets are enumerated depth first; an empty intersection prunes all its supersets.
    Raises ValueError after ``max_subsets`` subsets with non-empty intersection (the
    count is exponential for very degenerate arrangements, e.g. many concurrent planes).
    """
    w = _to_fraction_matrix(normals, name="normals", ndim=2)
    c = _to_fraction_matrix(offsets, name="offsets", ndim=1)
    if len(w) != len(c):
        raise ValueError(f"normals and offsets must have the same length, got {len(w)} and {len(c)}")
    max_subsets = check_positive_int(max_subsets, name="max_subsets")
    d = np.shape(normals)[1] if len(w) == 0 else len(w[0])
    rows = [list(r) + [o] for r, o in zip(w, c) if any(x != 0 for x in r)]
    coeffs = [0] * (d + 1)
    visited = 0
    stack = [(0, [], [], 0)]  # (next index, echelon basis of augmented rows, pivots, |S|)
    while stack:
        start, basis, pivots, size = stack.pop()
        visited += 1
        if visited > max_subsets:
            raise ValueError(f"more than max_subsets = {max_subsets} intersecting subsets: the "
                             "arrangement is too degenerate for Whitney's formula here")
        coeffs[d - len(basis)] += (-1) ** size
        for j in range(start, len(rows)):
            r = _reduce(rows[j], basis, pivots)
            nz = next((i for i in range(d) if r[i] != 0), None)
            if nz is not None:
                stack.append((j + 1, basis + [r], pivots + [nz], size + 1))
            elif r[d] == 0:  # hyperplane j contains the intersection: same flat, one more plane
                stack.append((j + 1, basis, pivots, size + 1))
            # else: parallel to the flat and disjoint from it, an empty intersection
    return tuple(coeffs)


def zaslavsky_cells(normals: Any, offsets: Any) -> int:
    """Number of cells of any hyperplane arrangement by Zaslavsky's theorem: (-1)^d chi(-1).

    chi is :func:`characteristic_polynomial` (Whitney's formula), d the ambient dimension.
    Equivalently r = sum over intersecting subsets S of (-1)^(|S| - rank S). For n
    hyperplanes in general position every S with |S| <= d intersects with rank |S| and no
    larger S does, which gives sum_{i <= d} C(n, i) (:func:`zaslavsky`). Independent of
    :func:`count_cells`, which finds the cells geometrically.
    """
    coeffs = characteristic_polynomial(normals, offsets)
    d = len(coeffs) - 1
    return int(sum(ck * (-1) ** (d + k) for k, ck in enumerate(coeffs)))


def hidden_lines(net: _nets.MLP, params: Any, *, exact: bool = True) -> tuple[Any, Any]:
    """First-layer hyperplanes {x : normals[j] . x + offsets[j] = 0} of a network.

    normals[j] = mW * W[:, j], offsets[j] = mb * b[j] (``Fraction`` object arrays if exact).
    """
    _check_relu_net(net, input_dim=None)
    w, b = _layers(net, params, exact=exact)[0]
    return w.T, b


def count_regions_2d_shallow(net: _nets.MLP, params: Any) -> int:
    """Exact number of linear regions on R^2 of a one-hidden-layer ReLU network.

    Neuron j contributes relu(lambda_j (n . x + c)) v_j, where (n, c) is its line in a
    normalised form; crossing the line changes the gradient by (sum over neurons on that
    line of v_j |lambda_j|) n. The lines with a non-zero jump are the kinks; the linear
    regions are the cells of their arrangement, counted exactly by :func:`count_cells`.
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
        lam = lead  # normalise so that the first non-zero coordinate is +1
        key = (tuple(x / lam for x in normal), b[j] / lam)
        jumps[key] = jumps.get(key, Fraction(0)) + v[j, 0] * abs(lam)
    kinks = [key for key, jump in jumps.items() if jump != 0]
    if not kinks:
        return 1
    normals = np.array([list(k[0]) for k in kinks], dtype=object)
    offsets = np.array([k[1] for k in kinks], dtype=object)
    return count_cells(normals, offsets)


# --------------------------------------------------------------------------- 2-D regions
class Regions2D(NamedTuple):
    """Convex polygons of constant activation pattern inside a box.

    ``polygons[k]`` is a (m_k, 2) array of vertices in counter-clockwise order,
    ``patterns[k]`` the boolean activation pattern (all hidden neurons, layer by layer)
    on its interior, ``gradients[k]`` the network's gradient there.
    """

    polygons: list[np.ndarray]
    patterns: np.ndarray
    gradients: np.ndarray

    @property
    def count(self) -> int:
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


def activation_regions_2d(net: _nets.MLP, params: Any, box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0),
                          *, tol: float = 1e-12) -> Regions2D:
    """Activation regions of a 2-D-input ReLU network inside ``box`` = (x0, x1, y0, y1).

    Starting from the box, each hidden layer's pre-activations are affine on every
    current polygon (their coefficients are carried along), so the polygon is cut by
    each neuron's zero line in turn (float64; vertex values within ``tol`` times the
    polygon's scale of zero count as on the line). Every resulting polygon is convex and
    carries one activation pattern; the network's gradient is constant on it. Counts
    activation regions (distinct patterns, connected); adjacent regions with equal
    gradients are not merged.
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
        items = out
    w, b = layers[-1]
    polygons = [item[0] for item in items]
    patterns = np.array([np.concatenate(item[3]) for item in items], dtype=bool)
    gradients = np.array([(item[1] @ w)[:, 0] for item in items])
    return Regions2D(polygons, patterns, gradients)


def activation_patterns(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """Boolean activation pattern (z > 0 for every hidden neuron, layer by layer) of each row of x."""
    _check_relu_net(net, input_dim=None)
    zs, _, _ = net.forward(params, x)
    return jnp.concatenate([z > 0 for z in zs[:-1]], axis=1)


def pattern_map_2d(net: _nets.MLP, params: Any, box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0),
                   resolution: int = 200) -> tuple[np.ndarray, int]:
    """Label each point of a resolution x resolution grid over ``box`` by its activation pattern.

    Returns (labels, k): labels[i, j] in {0, ..., k-1} identifies the pattern at
    (x_j, y_i); k distinct patterns were seen (a lower bound on the regions meeting the box).
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


def plot_regions_2d(regions: Regions2D, ax=None, *, seed: int = 0, edgecolor: str = "k", linewidth: float = 0.3):
    """Draw the polygons of :func:`activation_regions_2d`, each in a random pastel colour."""
    if not isinstance(regions, Regions2D):
        raise TypeError(f"regions must be the Regions2D of activation_regions_2d, got {type(regions).__name__}")
    if regions.count == 0:
        raise ValueError("regions has no polygons to draw")
    seed = check_positive_int(seed, name="seed", minimum=0)
    linewidth = check_real(linewidth, name="linewidth", nonnegative=True)
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    ax = plt.subplots()[1] if ax is None else ax
    rng = np.random.default_rng(seed)
    colours = 0.45 + 0.55 * rng.random((regions.count, 3))
    ax.add_collection(PolyCollection(regions.polygons, facecolors=colours, edgecolors=edgecolor,
                                     linewidths=linewidth))
    allpts = np.concatenate(regions.polygons)
    ax.set_xlim(allpts[:, 0].min(), allpts[:, 0].max())
    ax.set_ylim(allpts[:, 1].min(), allpts[:, 1].max())
    ax.set_aspect("equal")
    ax.grid(False)
    return ax
