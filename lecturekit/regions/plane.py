r"""Linear and activation regions of a ReLU network with two inputs.

For one hidden layer the linear regions are the cells of the neurons' lines
(:func:`hidden_lines`): :func:`count_regions_2d_shallow` counts them exactly on the
whole plane with :mod:`lecturekit.arrangements`, and :func:`lines_in_box` gives their
number inside a box by Euler's formula. For any depth, :func:`activation_regions_2d`
cuts a box into the convex polygons of constant activation pattern, layer by layer;
:func:`activation_patterns` and :func:`pattern_map_2d` give the patterns at given
points.

Convention: as in :mod:`lecturekit.regions`; ``net`` has input dimension 2 (except
:func:`hidden_lines` and :func:`activation_patterns`, which take any input dimension).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from .. import arrangements as _arrangements
from .. import nets as _nets
from .._validation import check_positive_int, check_real
from ._networks import check_box, check_relu_net, network_layers

__all__ = [
    "hidden_lines",
    "count_regions_2d_shallow",
    "LinesInBox",
    "lines_in_box",
    "Regions2D",
    "activation_regions_2d",
    "activation_patterns",
    "pattern_map_2d",
]


# ----------------------------------------------------------------------- 2-D, one layer
def hidden_lines(net: _nets.MLP, params: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""First-layer hyperplanes :math:`\{x : \langle w_j, x\rangle + c_j = 0\}` of a
    ReLU network.

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
    check_relu_net(net, input_dim=None)
    w, b = network_layers(net, params, exact=False)[0]
    return w.T, b


def count_regions_2d_shallow(net: _nets.MLP, params: Any) -> int:
    r"""Exact number of linear regions on :math:`\mathbb R^2` of a one-hidden-layer ReLU
    network.

    Neuron j contributes :math:`v_j \phi(\lambda_j (\langle n, x\rangle + c))`, where
    (n, c) is its line in a normalised form; crossing the line changes the gradient by
    :math:`(\sum_j v_j |\lambda_j|)\, n`, summed over the neurons on that line. The
    lines with a non-zero jump are the kinks; the linear regions are the cells of their
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
    check_relu_net(net, input_dim=2)
    if net.depth != 1:
        raise ValueError(
            "net must have one hidden layer for count_regions_2d_shallow, got depth "
            f"{net.depth}"
        )
    (w, b), (v, _) = network_layers(net, params, exact=True)
    jumps: dict[tuple, Fraction] = {}
    for j in range(w.shape[1]):
        normal = [w[0, j], w[1, j]]
        lead = next((x for x in normal if x != 0), None)
        if lead is None:
            continue  # a constant neuron has no kink
        # first coordinate of the normal +1
        key = (tuple(x / lead for x in normal), b[j] / lead)
        jumps[key] = jumps.get(key, Fraction(0)) + v[j, 0] * abs(lead)
    kinks = [key for key, jump in jumps.items() if jump != 0]
    if not kinks:
        return 1
    normals = np.array([list(k[0]) for k in kinks], dtype=object)
    offsets = np.array([k[1] for k in kinks], dtype=object)
    return _arrangements.count_cells(normals, offsets)


class LinesInBox(NamedTuple):
    """First-layer lines that meet a box, and their crossings inside it
    (:func:`lines_in_box`).

    Attributes:
        lines: the number of first-layer neurons whose line meets the open box.
        crossings: the number of points inside the open box where two of those lines
            cross.

    Example:
        >>> from lecturekit import regions
        >>> regions.LinesInBox(lines=3, crossings=2)
        LinesInBox(lines=3, crossings=2)
    """

    lines: int
    crossings: int


def lines_in_box(
    net: _nets.MLP, params: Any, box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0)
) -> LinesInBox:
    r"""Count the first-layer lines of a 2-D-input ReLU network that meet a box, and
    their crossings.

    Neuron j of the first hidden layer switches on the line
    :math:`\{x : \langle w_j, x\rangle + c_j = 0\}` (:func:`hidden_lines`). A line meets
    the open box when the box's corners lie strictly on both sides of it; two lines
    cross at the solution of a 2 x 2 system (parallel lines never do). For a
    one-hidden-layer network whose lines are in general position (no crossing on the
    boundary of the box, no three through a point), Euler's formula for the planar graph
    the lines cut out of the box gives the number of regions in closed form,
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
    check_relu_net(net, input_dim=2)
    x0, x1, y0, y1 = check_box(box)
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


# ----------------------------------------------------------------------- 2-D, any depth
class Regions2D(NamedTuple):
    """Convex polygons of constant activation pattern inside a box
    (:func:`activation_regions_2d`).

    Attributes:
        polygons: list of (m_k, 2) float64 arrays, the vertices of each region in
            counter-clockwise order.
        patterns: (count, N) bool array, the activation pattern (all hidden neurons,
            layer by layer) on each region's interior.
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
    """Split a convex polygon by the zero line of an affine function with vertex values
    vals.
    """
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
        crossing = np.nonzero(
            (vals_all.max(0) > tol * scale) & (vals_all.min(0) < -tol * scale)
        )[0]
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
            out.append(
                (piece, np.where(on, a_z, 0.0), np.where(on, c_z, 0.0), pattern + [on])
            )
    return out


def activation_regions_2d(
    net: _nets.MLP,
    params: Any,
    box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0),
    *,
    tol: float = 1e-12,
) -> Regions2D:
    """Activation regions of a 2-D-input ReLU network inside ``box`` = (x0, x1, y0, y1).

    Starting from the box, each hidden layer's pre-activations are affine on every
    current polygon (their coefficients are carried along), so the polygon is cut by
    each neuron's zero line in turn (float64; vertex values within ``tol`` times the
    polygon's scale of zero count as on the line). Every resulting polygon is convex and
    carries one activation pattern; the network's gradient is constant on it. Counts
    activation regions; adjacent regions with equal gradients are not merged, so this is
    an upper bound on the linear regions inside the box (equal to it for one hidden
    layer and generic weights).

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
    check_relu_net(net, input_dim=2)
    box = check_box(box)
    tol = check_real(tol, name="tol", nonnegative=True)
    layers = network_layers(net, params, exact=False)
    x0, x1, y0, y1 = box
    square = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)
    # each item: polygon, affine map of the current layer input h = A x + c  (A: (2, n),
    # c: (n,))
    items = [(square, np.eye(2), np.zeros(2), [])]
    for w, b in layers[:-1]:
        items = _cut_layer(items, w, b, tol)
    w, b = layers[-1]
    polygons = [item[0] for item in items]
    patterns = np.array([np.concatenate(item[3]) for item in items], dtype=bool)
    gradients = np.array([(item[1] @ w)[:, 0] for item in items])
    return Regions2D(polygons, patterns, gradients)


def activation_patterns(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """Activation pattern of each input: whether z > 0, for every hidden neuron, layer
    by layer.

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
    check_relu_net(net, input_dim=None)
    zs, _, _ = net.forward(params, x)
    return jnp.concatenate([z > 0 for z in zs[:-1]], axis=1)


def pattern_map_2d(
    net: _nets.MLP,
    params: Any,
    box: Sequence[float] = (-1.0, 1.0, -1.0, 1.0),
    resolution: int = 200,
) -> tuple[np.ndarray, int]:
    """Label each point of a resolution x resolution grid over ``box`` by its activation
    pattern.

    A picture of the regions on a grid, with no claim to completeness: regions smaller
    than the grid spacing are missed. :func:`activation_regions_2d` finds them all.

    Args:
        net: a ReLU :func:`lecturekit.nets.mlp` network with input dimension 2.
        params: its parameters.
        box: (x0, x1, y0, y1) with x0 < x1 and y0 < y1.
        resolution: grid points per axis, >= 2.

    Returns:
        (labels, k): labels[i, j] in {0, ..., k-1} identifies the pattern at
        (x_j, y_i); k distinct patterns were seen (a lower bound on the regions meeting
        the box).

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
    check_relu_net(net, input_dim=2)
    resolution = check_positive_int(resolution, name="resolution", minimum=2)
    box = check_box(box)
    xs = np.linspace(box[0], box[1], resolution)
    ys = np.linspace(box[2], box[3], resolution)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    pats = np.asarray(activation_patterns(net, params, grid))
    _, labels = np.unique(np.packbits(pats, axis=1), axis=0, return_inverse=True)
    labels = labels.reshape(resolution, resolution)
    return labels, int(labels.max()) + 1
