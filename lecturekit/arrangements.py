r"""Cells of hyperplane arrangements, counted exactly.

An arrangement is a finite set of affine hyperplanes
:math:`H_j = \{x \in \mathbb R^d : \langle w_j, x\rangle + c_j = 0\}`, given as
``normals`` (the rows :math:`w_j`, shape (n, d)) and ``offsets`` (the :math:`c_j`, shape
(n,)). Its *cells* are the connected components of the complement of the union of the
hyperplanes.
Every count here is exact: the inputs are converted to :class:`fractions.Fraction`
without rounding (a float64 number is a dyadic rational), and all arithmetic is
rational. Hyperplanes with a zero normal are ignored; a repeated hyperplane counts once.

* :func:`general_position_cells` is the closed form :math:`\sum_{i \le d} \binom{n}{i}`
  for hyperplanes in general position (Buck's count; Schlaefli's for central ones);
* :func:`count_cells` counts the cells geometrically (sign vectors of points placed next
  to every vertex);
* :func:`characteristic_polynomial` and :func:`zaslavsky_cells` count them by
  Zaslavsky's theorem, :math:`r = (-1)^d \chi(-1)`, with :math:`\chi` from Whitney's
  subset formula: an independent second method.

The linear regions of a one-hidden-layer ReLU network are the cells of its neurons'
hyperplanes (:func:`lecturekit.regions.count_regions_2d_shallow`).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from ._validation import as_float_array, check_positive_int

__all__ = [
    "general_position_cells",
    "count_cells",
    "characteristic_polynomial",
    "zaslavsky_cells",
]


def general_position_cells(n: int, d: int) -> int:
    r"""Number of cells of n hyperplanes in general position in :math:`\mathbb R^d`.

    General position: any :math:`k \le d` of the hyperplanes meet in a
    :math:`(d - k)`-dimensional flat and no :math:`d + 1` share a point (so no two are
    parallel). The count is :math:`r_d(n) = \sum_{i=0}^{d} \binom{n}{i}`, Buck's formula
    (1943; Schlaefli counted the central case); it is the maximum over all arrangements
    of n hyperplanes. Zaslavsky's theorem (:func:`zaslavsky_cells`) gives the count of
    every arrangement and reduces to this sum in general position.

    Args:
        n: number of hyperplanes, an integer >= 0.
        d: dimension of the space, an integer >= 1.

    Returns:
        int: :math:`\sum_{i=0}^{d} \binom{n}{i}` (equal to :math:`2^n` when n <= d).

    Example:
        >>> from lecturekit import arrangements
        >>> arrangements.general_position_cells(3, 2)
        7
        >>> arrangements.general_position_cells(12, 2)
        79
    """
    n = check_positive_int(n, name="n", minimum=0)
    d = check_positive_int(d, name="d")
    return sum(math.comb(n, i) for i in range(d + 1))


def _to_fraction_matrix(values: Any, *, name: str, ndim: int) -> list:
    if isinstance(values, np.ndarray) and values.dtype == object:
        arr = values
        for v in arr.ravel():
            if isinstance(v, bool) or not isinstance(v, (int, Fraction, np.integer)):
                raise TypeError(
                    f"an object array {name} must hold ints or Fractions, got "
                    f"{type(v).__name__}"
                )
    else:
        arr = np.asarray(as_float_array(values, name=name, ndim=ndim), dtype=np.float64)
        arr = (
            np.vectorize(lambda v: Fraction(float(v)), otypes=[object])(arr)
            if arr.size
            else arr.astype(object)
        )
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    return arr.tolist()


def _arrangement(normals: Any, offsets: Any) -> tuple[list, list]:
    w = _to_fraction_matrix(normals, name="normals", ndim=2)
    c = _to_fraction_matrix(offsets, name="offsets", ndim=1)
    if len(w) != len(c):
        raise ValueError(
            f"normals and offsets must have the same length, got {len(w)} and {len(c)}"
        )
    return w, c


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


def _reduce(row: list, basis: list, pivots: list) -> list:
    """``row`` minus its components along the echelon rows ``basis`` (exact)."""
    r = list(row)
    for prow, p in zip(basis, pivots):
        if r[p] != 0:
            f = r[p] / prow[p]
            r = [x - f * y for x, y in zip(r, prow)]
    return r


def _row_basis(rows: list[list[Fraction]]) -> list[int]:
    """Indices of a maximal linearly independent subset of rows (exact)."""
    basis: list[list[Fraction]] = []  # reduced rows
    chosen: list[int] = []
    pivots: list[int] = []
    for i, row in enumerate(rows):
        r = _reduce(row, basis, pivots)
        nz = next((j for j, x in enumerate(r) if x != 0), None)
        if nz is not None:
            basis.append(r)
            pivots.append(nz)
            chosen.append(i)
    return chosen


def _distinct_planes(w: list, c: list) -> list[tuple[tuple, Any]]:
    """The distinct hyperplanes with non-zero normal, each scaled so that its first
    non-zero normal entry is 1 (then a repeated hyperplane, whatever its orientation,
    has the same key)."""
    unique = {}
    for row, off in zip(w, c):
        lead = next((x for x in row if x != 0), None)
        if lead is not None:
            unique[(tuple(x / lead for x in row), off / lead)] = True
    return list(unique)


def _vertex_patterns(red: list, c: list, d: int) -> set:
    """Sign vectors of the points v + eps u next to every vertex v
    (see :func:`count_cells`).
    """
    n = len(red)

    def evaluate(point):
        return [
            sum(a * p for a, p in zip(row, point)) + off for row, off in zip(red, c)
        ]

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
                    "count_cells handles degenerate arrangements (more than d "
                    "hyperplanes "
                    f"through one point) only in the plane; found {through} through "
                    f"one point in R^{d}"
                )
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
                limits = [
                    abs(g[j] / slopes[j])
                    for j in range(n)
                    if g[j] != 0 and slopes[j] != 0
                ]
                eps = min(limits) / 2 if limits else Fraction(1)
                values = [gj + eps * sj for gj, sj in zip(g, slopes)]
                if all(val != 0 for val in values):
                    patterns.add(tuple(val > 0 for val in values))
    return patterns


def count_cells(normals: Any, offsets: Any) -> int:
    r"""Exact number of cells (connected components of the complement) of an
    arrangement.

    The hyperplanes are :math:`\{x \in \mathbb R^d : \langle w_j, x\rangle + c_j = 0\}`.
    Entries are converted to ``Fraction`` exactly (or may be given as object arrays of
    ``int``/``Fraction``). Hyperplanes with zero normal are ignored; repeated
    hyperplanes count once.

    Method (independent of Zaslavsky's theorem): restrict to the span of the normals; if
    the hyperplanes meet in vertices, every cell has a vertex in its closure, so every
    cell contains one of the points :math:`v + \varepsilon u`, where v is a vertex, u
    solves :math:`W_S u = s` for d hyperplanes S through v and a sign vector
    :math:`s \in \{-1, 1\}^d`, and :math:`\varepsilon` is (exactly) small enough that no
    other hyperplane is crossed. The cells are the distinct sign vectors of those
    points. Complete for every arrangement in the plane and for arrangements in general
    position in any dimension (raises ``ValueError`` otherwise).

    Args:
        normals: (n, d) array of the normals :math:`w_j`.
        offsets: (n,) array of the offsets :math:`c_j`.

    Returns:
        int: the number of cells (1 for an empty arrangement).

    Example:
        >>> from lecturekit import arrangements
        >>> lines = [[1, 0], [0, 1], [1, 1]], [0, 0.5, -1]  # normals, offsets
        >>> arrangements.count_cells(*lines)
        7
        >>> parallel = [[1, 0, 0], [1, 0, 0]], [0, -1]  # x1 = 0 and x1 = 1
        >>> arrangements.count_cells(*parallel)
        3
    """
    w, c = _arrangement(normals, offsets)
    planes = _distinct_planes(w, c)
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
    # parallel hyperplanes (lines in the plane, points on a line): n + 1 cells
    if d == 1:
        return len(red) + 1
    return len(_vertex_patterns(red, c, d))


def characteristic_polynomial(
    normals: Any, offsets: Any, *, max_subsets: int = 2**20
) -> tuple[int, ...]:
    r"""Coefficients :math:`(c_0, \dots, c_d)` of the characteristic polynomial of an
    arrangement.

    :math:`\chi(t) = \sum_k c_k t^k` by Whitney's formula: the sum over the subsets S of
    hyperplanes with a non-empty common intersection of
    :math:`(-1)^{|S|}\, t^{\,d - \operatorname{rank} S}`, with rank S the rank of their
    normals (the empty set has rank 0). Exact ``Fraction`` arithmetic, as in
    :func:`count_cells`; hyperplanes with zero normal are ignored. Subsets are
    enumerated depth first; an empty intersection prunes all its supersets.

    Args:
        normals: (n, d) array of the normals.
        offsets: (n,) array of the offsets.
        max_subsets: raise ``ValueError`` after this many subsets with non-empty
            intersection (the count is exponential for very degenerate arrangements,
            e.g. many concurrent planes).

    Returns:
        tuple[int, ...]: :math:`(c_0, \dots, c_d)`, lowest degree first.

    Example:
        >>> from lecturekit import arrangements
        >>> parallel = [[1, 0, 0], [1, 0, 0]], [0, -1]  # x1 = 0 and x1 = 1
        >>> arrangements.characteristic_polynomial(*parallel)  # t^3 - 2 t^2
        (0, 0, -2, 1)
    """
    w, c = _arrangement(normals, offsets)
    max_subsets = check_positive_int(max_subsets, name="max_subsets")
    d = np.shape(normals)[1] if len(w) == 0 else len(w[0])
    rows = [list(r) + [o] for r, o in zip(w, c) if any(x != 0 for x in r)]
    coeffs = [0] * (d + 1)
    visited = 0
    # (next index, echelon basis of augmented rows, pivots, |S|)
    stack = [(0, [], [], 0)]
    while stack:
        start, basis, pivots, size = stack.pop()
        visited += 1
        if visited > max_subsets:
            raise ValueError(
                f"more than max_subsets = {max_subsets} intersecting subsets: the "
                "arrangement is too degenerate for Whitney's formula here"
            )
        coeffs[d - len(basis)] += (-1) ** size
        for j in range(start, len(rows)):
            r = _reduce(rows[j], basis, pivots)
            nz = next((i for i in range(d) if r[i] != 0), None)
            if nz is not None:
                stack.append((j + 1, basis + [r], pivots + [nz], size + 1))
            # hyperplane j contains the intersection: same flat, one more plane
            elif r[d] == 0:
                stack.append((j + 1, basis, pivots, size + 1))
            # else: parallel to the flat and disjoint from it, an empty intersection
    return tuple(coeffs)


def zaslavsky_cells(normals: Any, offsets: Any) -> int:
    r"""Number of cells of any arrangement by Zaslavsky's theorem: :math:`(-1)^d
    \chi(-1)`.

    :math:`\chi` is :func:`characteristic_polynomial` (Whitney's formula), d the ambient
    dimension. Equivalently :math:`r = \sum_S (-1)^{|S| - \operatorname{rank} S}` over
    the intersecting subsets S. For n hyperplanes in general position every S with
    :math:`|S| \le d` intersects with rank :math:`|S|` and no larger S does, which gives
    :func:`general_position_cells`. Independent of :func:`count_cells`, which finds the
    cells geometrically.

    Args:
        normals: (n, d) array of the normals.
        offsets: (n,) array of the offsets.

    Returns:
        int: the number of cells.

    Example:
        >>> from lecturekit import arrangements
        >>> lines = [[1, 0], [0, 1], [1, 1], [1, -1], [1, 0]]  # 4 meet at 0
        >>> arrangements.zaslavsky_cells(lines, [0, 0, 0, 0, 1])
        12
    """
    coeffs = characteristic_polynomial(normals, offsets)
    d = len(coeffs) - 1
    return int(sum(ck * (-1) ** (d + k) for k, ck in enumerate(coeffs)))
