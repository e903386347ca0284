"""Entropy numbers, stable approximation schemes and what depth buys (Chapter 11).

The objects of approximation theory that Chapter 11 computes with, built on
:mod:`lecturekit.nets` (layer 2) and :mod:`lecturekit.sampling`:

* **Complexity before learning.** :func:`unseen_cell_errors` runs learners on samples of
  a random function and scores them on the cells of a partition of [0, 1] that no
  sample hit.
* **Covers and packings of the 1-Lipschitz functions** ``K0 = {f: [0, 1] -> R, f(0) = 0,
  |f(x) - f(y)| <= |x - y|}`` in the sup norm. A *zigzag* of step ``1/n`` is the
  piecewise-linear function with ``g(0) = 0`` and slope ``s_k = +-1`` on
  ``[k/n, (k + 1)/n]`` (:func:`zigzag`); :func:`zigzag_encode` picks, for any f in K0,
  the zigzag within ``1/n`` of f (n bits). The ``2^n`` zigzags are a cover of radius
  ``1/n`` and pairwise ``2/n`` apart (a packing), so ``1/(n + 1) <= eps_n(K0) <= 1/n``.
* **Ellipsoids in l2**, ``{x: sum_j x_j^2 / sigma_j^2 <= 1}``: volumetric lower and
  upper bounds on their entropy numbers (:func:`ellipsoid_entropy_bounds`).
* **Schemes.** The unstable one-parameter scheme stores n bits in one real number
  (:func:`pack_bits`, :func:`unpack_bits`, exact with ``fractions.Fraction``). Two ReLU
  networks in the standard parameterization of :func:`lecturekit.nets.mlp`: the
  piecewise-linear interpolant, one hidden layer (:func:`interpolation_network`), and a
  deep network that reads the bits of a zigzag out of its weights
  (:func:`bit_extraction_network`). :func:`nonzero_parameters` counts their weights.
* **Lipschitz constants of networks**, from the one backward pass
  :meth:`lecturekit.nets.MLP.backward`: input gradients (:func:`input_gradient_norms`)
  and gradients with respect to all parameters (:func:`parameter_gradient_norms`, the
  local Lipschitz constant of the map from weights to function values).
* **The Johnson-Lindenstrauss lemma**: distortion of Gaussian maps on an orthonormal set
  (:func:`jl_ratios`) and the dimension that Dasgupta and Gupta's bound guarantees
  (:func:`jl_dimension_bound`).
* **Lipschitz extensions**: McShane's formula for scalar values
  (:func:`mcshane_extension`), the one-point Kirszbraun problem as the smallest scaling
  of a family of balls with a common point (:func:`kirszbraun_point`), and the Lipschitz
  constant of finite data (:func:`lipschitz_constant`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
import scipy.special
from jax.typing import ArrayLike

from . import nets as _nets
from . import sampling as _sampling
from . import stats as _stats
from ._validation import (
    as_host_float_array,
    check_callable,
    check_key,
    check_params_pytree,
    check_positive_int,
    check_real,
)

__all__ = [
    "unseen_cell_errors",
    "zigzag",
    "zigzag_encode",
    "ellipsoid_entropy_bounds",
    "pack_bits",
    "unpack_bits",
    "interpolation_network",
    "bit_extraction_network",
    "nonzero_parameters",
    "perturb_nonzero",
    "input_gradient_norms",
    "parameter_gradient_norms",
    "jl_ratios",
    "jl_dimension_bound",
    "mcshane_extension",
    "KirszbraunPoint",
    "kirszbraun_point",
    "lipschitz_constant",
]


# --------------------------------------------------------------------------- learning


def _uniform(key: jax.Array, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform(0, 1) numbers from the one normal sampler: Phi(z) for z ~ N(0, 1)."""
    return scipy.special.ndtr(
        np.asarray(_sampling.standard_normal(key, shape), dtype=float)
    )


def unseen_cell_errors(
    key: jax.Array,
    target: Callable,
    num_cells: int,
    learners: dict[str, Callable],
    *,
    num_samples: int | None = None,
    reps: int = 100,
) -> dict[str, _stats.MeanEstimate]:
    """Mean squared error of learners on the cells of [0, 1] that no training point hit.

    [0, 1] is cut into ``num_cells`` equal cells. In each of ``reps`` repetitions a
    random function is drawn, ``num_samples`` training points (default ``num_cells``)
    are drawn uniformly, and one test point uniformly in every cell; the cells that
    contain no training point are scored. ``target(key, x)`` receives all repetitions at
    once, x of shape (reps, p), and returns the values (reps, p) of ``reps`` independent
    random functions (row r of x goes to function r). Each learner ``learn(x_train,
    y_train, x_test)`` (1-D arrays, x_train sorted) returns predictions at the test
    points.

    Args:
        key: a JAX PRNG key.
        target: ``target(key, x) -> y`` as above.
        num_cells: the number m of cells, >= 2.
        learners: name -> ``learn(x_train, y_train, x_test)``.
        num_samples: training points per repetition (default ``num_cells``).
        reps: repetitions, >= 2.

    Returns:
        name -> :class:`lecturekit.stats.MeanEstimate` of the squared error on unseen
        cells (the mean over repetitions of each repetition's mean over its unseen
        cells, with the standard error of that mean; repetitions without an unseen cell
        are skipped).

    Example:
        >>> def cells(k, x):   # N(0, 1) values on 8 cells, one function per row
        ...     v = np.asarray(sampling.standard_normal(k, (x.shape[0], 8)))
        ...     i = np.minimum((8 * x).astype(int), 7)
        ...     return np.take_along_axis(v, i, axis=1)
        >>> zero = {"zero": lambda xt, yt, xs: 0 * xs}
        >>> err = approximation.unseen_cell_errors(
        ...     jax.random.key(0), cells, 8, zero, reps=400)
        >>> bool(abs(err["zero"].mean - 1) < 4 * err["zero"].stderr)
        True
    """
    check_key(key)
    check_callable(target, name="target", what="a function target(key, x) -> values")
    m = check_positive_int(num_cells, name="num_cells", minimum=2)
    n = (
        m
        if num_samples is None
        else check_positive_int(num_samples, name="num_samples")
    )
    reps = check_positive_int(reps, name="reps", minimum=2)
    if not isinstance(learners, dict) or not learners:
        raise TypeError(
            "learners must be a non-empty dict name -> learn(x_train, y_train, x_test)"
        )
    for name, learn in learners.items():
        check_callable(
            learn, name=f"learners[{name!r}]", what="learn(x_train, y_train, x_test)"
        )
    k_target, k_x = jax.random.split(key)
    u = _uniform(k_x, (reps, n + m))
    x_train = np.sort(u[:, :n], axis=1)
    x_test = (np.arange(m) + u[:, n:]) / m
    y = np.asarray(
        target(k_target, np.concatenate([x_train, x_test], axis=1)), dtype=float
    )
    if y.shape != (reps, n + m):
        raise ValueError(
            f"target must return shape {(reps, n + m)} (one row per repetition), got "
            f"{y.shape}"
        )
    errors = {name: [] for name in learners}
    for r in range(reps):
        seen = np.zeros(m, bool)
        seen[np.minimum((x_train[r] * m).astype(int), m - 1)] = True
        if seen.all():
            continue
        for name, learn in learners.items():
            pred = np.asarray(
                learn(x_train[r], y[r, :n], x_test[r, ~seen]), dtype=float
            )
            errors[name].append(np.mean((pred - y[r, n:][~seen]) ** 2))
    if len(errors[next(iter(learners))]) < 2:
        raise ValueError(
            "fewer than 2 repetitions had an unseen cell: use more cells or reps"
        )
    return {name: _stats.mean_and_stderr(np.array(e)) for name, e in errors.items()}


# --------------------------------------------------------------------------- zigzags


def _signs(signs: Any) -> np.ndarray:
    s = as_host_float_array(signs, name="signs")
    if s.ndim < 1 or s.shape[-1] < 1:
        raise ValueError(f"signs must have shape (..., n) with n >= 1, got {s.shape}")
    if not np.all(np.isin(s, (-1, 1))):
        raise ValueError("signs must contain only +1 and -1")
    return s.astype(np.int64)


def zigzag(signs: ArrayLike, x: ArrayLike) -> np.ndarray:
    """The zigzag with slopes ``signs`` on a grid of step ``1/n``, evaluated at x.

    ``g(0) = 0`` and ``g' = signs[k]`` on ``[k/n, (k + 1)/n]``, ``n = signs.shape[-1]``;
    a 1-Lipschitz function on [0, 1]. Leading axes of ``signs`` are kept (many zigzags).

    Args:
        signs: (..., n) array of +1 and -1.
        x: points in [0, 1], shape (p,).

    Returns:
        (..., p) NumPy array of the values.

    Example:
        >>> approximation.zigzag([1, -1, -1], [0.0, 1 / 3, 0.5, 1.0]).round(4)
        array([ 0.    ,  0.3333,  0.1667, -0.3333])
    """
    s = _signs(signs)
    x = as_host_float_array(x, name="x", ndim=1)
    if np.any((x < 0) | (x > 1)):
        raise ValueError("x must lie in [0, 1]")
    n = s.shape[-1]
    knots = (
        np.concatenate([np.zeros(s.shape[:-1] + (1,)), np.cumsum(s, axis=-1)], axis=-1)
        / n
    )
    i = np.minimum(np.floor(x * n).astype(int), n - 1)
    return knots[..., i] + s[..., i] * (x - i / n)


def zigzag_encode(values: ArrayLike) -> np.ndarray:
    """The n slopes of the zigzag that stays within 1/n of a function at the grid k/n.

    ``values[..., k]`` is f(k/n), k = 0..n, with f(0) = 0. Starting from g(0) = 0 the
    rule steps towards the next value: ``s_k = +1`` if ``f((k + 1)/n) >= g(k/n)``, else
    -1. If f is 1-Lipschitz then ``|g(k/n) - f(k/n)| <= 1/n`` at every grid point, and
    since ``f - g`` is monotone on each cell (g has slope +-1, f slope in [-1, 1]) the
    bound holds
    everywhere: the ``2^n`` zigzags cover the class with radius ``1/n``.

    Args:
        values: (..., n + 1) values at the grid, ``values[..., 0] == 0``.

    Returns:
        (..., n) int array of +1 and -1.

    Example:
        >>> x = np.linspace(0, 1, 9)
        >>> s = approximation.zigzag_encode(np.abs(x - 0.4) - 0.4)
        >>> g = approximation.zigzag(s, x)
        >>> s.tolist(), float(np.max(np.abs(g - np.abs(x - 0.4) + 0.4)))
        ([-1, -1, -1, 1, 1, 1, 1, 1], 0.05)
    """
    f = as_host_float_array(values, name="values")
    if f.ndim < 1 or f.shape[-1] < 2:
        raise ValueError(
            f"values must have shape (..., n + 1) with n >= 1, got {f.shape}"
        )
    if np.any(np.abs(f[..., 0]) > 1e-12):
        raise ValueError("values[..., 0] must be 0 (the class has f(0) = 0)")
    n = f.shape[-1] - 1
    g = np.zeros(f.shape[:-1])
    signs = np.empty(f.shape[:-1] + (n,), dtype=np.int64)
    for k in range(n):
        s = np.where(f[..., k + 1] >= g, 1, -1)
        signs[..., k] = s
        g = g + s / n
    return signs


# --------------------------------------------------------------------------- ellipsoids


def ellipsoid_entropy_bounds(
    axes: ArrayLike, bits: ArrayLike, *, tail: float = 0.0, grid: int = 2000
) -> tuple[np.ndarray, np.ndarray]:
    """Volumetric bounds on the entropy numbers of an ellipsoid in l2.

    The ellipsoid has semi-axes ``sigma_1 >= sigma_2 >= ...`` (``axes``, D of them) and,
    beyond them, coordinates of norm at most ``tail`` (``sigma_{D+1}``; 0 for a
    D-dimensional ellipsoid). ``eps_n`` is the smallest radius of ``2^n`` balls that
    cover it. For every ``k <= D``:

    * lower: the balls cover the section E_k spanned by the first k axes, so comparing
      volumes, ``2^n eps^k >= sigma_1 ... sigma_k``: ``eps_n >= 2^(-n/k) (sigma_1 ...
      sigma_k)^(1/k)``; the bound is the largest over k.
    * upper: a maximal eps-separated subset of E_k is an eps-cover of E_k with at most
      ``vol(E_k + (eps/2) B) / vol((eps/2) B) <= prod_j sqrt(2) sqrt(1 + 4 sigma_j^2 /
      eps^2)`` points (``E_k + r B`` lies in the ellipsoid of semi-axes ``sqrt(2
      (sigma_j^2 + r^2))``, by Cauchy-Schwarz); the rest of a point has norm at most
      ``sigma_{k+1}``, so ``eps_n <= sqrt(eps^2 + sigma_{k+1}^2)`` for the smallest eps
      whose count is at most ``2^n``; the bound is the smallest over k (and over eps on
      a log grid of ``grid`` points, so it is an upper bound, within a factor ``(4e3
      sigma_1/sigma_D)^(1/grid)`` of the exact minimum).

    Args:
        axes: (D,) positive, non-increasing semi-axes.
        bits: (q,) values of n >= 0.
        tail: ``sigma_{D+1}``, the bound on the rest (0 for a D-dimensional ellipsoid).
        grid: number of radii eps tried for the upper bound.

    Returns:
        (lower, upper), two (q,) NumPy arrays.

    Example:
        >>> lo, hi = approximation.ellipsoid_entropy_bounds([1.0], [0, 3])
        >>> lo.round(4), bool(np.all(lo <= hi))
        (array([1.   , 0.125]), True)
    """
    sigma = as_host_float_array(axes, name="axes", ndim=1, nonempty=True)
    if np.any(sigma <= 0) or np.any(np.diff(sigma) > 0):
        raise ValueError("axes must be positive and non-increasing")
    n = as_host_float_array(bits, name="bits", ndim=1, nonempty=True)
    if np.any(n < 0):
        raise ValueError("bits must be >= 0")
    tail = check_real(tail, name="tail", nonnegative=True, at_most=float(sigma[-1]))
    grid = check_positive_int(grid, name="grid", minimum=2)
    k = np.arange(1, sigma.size + 1)
    # log of geometric mean
    mean_log = np.cumsum(np.log(sigma)) / k
    lower = np.exp(
        np.max(-np.log(2) * n[:, None] / k[None, :] + mean_log[None, :], axis=1)
    )
    rest = np.append(sigma[1:], tail)  # sigma_{k+1}
    # for each eps of a fine log grid, C_k(eps) = log2 of the count for the first k axes
    # grows with k, so the best k for n bits is the largest with C_k(eps) <= n
    eps = np.geomspace(sigma[-1] * 1e-3, 4 * sigma[0], grid)
    # one ball of radius sigma_1 at 0 covers it
    upper = np.full(n.size, float(sigma[0]))
    for e in eps:
        counts = np.cumsum(0.5 + 0.5 * np.log2(1 + 4 * sigma**2 / e**2))
        # axes affordable with n bits
        k = np.searchsorted(counts, n, side="right")
        ok = k > 0
        err = np.sqrt(e**2 + rest[np.maximum(k, 1) - 1] ** 2)
        upper = np.where(ok, np.minimum(upper, err), upper)
    return lower, upper


# ----------------------------------------------------------------------- bits in a real


def pack_bits(bits: Sequence[int], *, exact: bool = True) -> Fraction | float:
    """The real number ``t = sum_k b_k 2^(-k)`` (k = 1..n) that stores n bits.

    Args:
        bits: a sequence of 0 and 1.
        exact: return a ``fractions.Fraction`` (True) or the nearest float64 (False).

    Returns:
        t in [0, 1).

    Example:
        >>> approximation.pack_bits([1, 0, 1])
        Fraction(5, 8)
    """
    if isinstance(bits, (str, bytes, dict)) or bits is None:
        raise TypeError(
            f"bits must be a sequence of 0 and 1, got {type(bits).__name__}"
        )
    if not isinstance(exact, (bool, np.bool_)):
        raise TypeError(f"exact must be True or False, got {exact!r}")
    try:
        arr = np.asarray(bits)
    except Exception as err:  # ragged lists and the like
        raise TypeError(f"bits must be a sequence of 0 and 1: {err}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"bits must be a sequence of 0 and 1, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0 or not np.all((arr == 0) | (arr == 1)):
        raise ValueError("bits must be a non-empty sequence of 0 and 1")
    b = [int(v) for v in arr.tolist()]
    t = Fraction(int("".join(map(str, b)), 2), 2 ** len(b))
    return t if exact else float(t)


def unpack_bits(t: Fraction | float, n: int) -> list[int]:
    """The first n binary digits of t in [0, 1), by doubling: ``b = floor(2t)``, ``t <-
    2t - b``.

    The inverse of :func:`pack_bits` in exact arithmetic. Each doubling is exact in
    float64 too, so a float returns the digits it stores: the first 53 at most (then 0).

    Args:
        t: a ``Fraction``, int or float in [0, 1).
        n: number of digits, >= 1.

    Returns:
        list of n ints, 0 or 1.

    Example:
        >>> t = approximation.pack_bits([1, 0] * 30)       # 30 ones among 60 digits
        >>> exact = approximation.unpack_bits(t, 60)
        >>> rounded = approximation.unpack_bits(float(t), 60)
        >>> sum(exact), sum(rounded)
        (30, 27)
    """
    n = check_positive_int(n, name="n")
    if isinstance(t, bool) or not isinstance(t, (Fraction, int, float, np.floating)):
        raise TypeError(f"t must be a Fraction or a float, got {type(t).__name__}")
    if not 0 <= t < 1:
        raise ValueError(f"t must lie in [0, 1), got {t}")
    out = []
    for _ in range(n):
        t = 2 * t
        b = int(t >= 1)
        out.append(b)
        t = t - b
    return out


# --------------------------------------------------------------------------- networks


def interpolation_network(
    values: ArrayLike,
) -> tuple[_nets.MLP, list[dict[str, jax.Array]]]:
    """One hidden layer of ReLUs computing the piecewise-linear interpolant of
    ``values``.

    The interpolant passes through ``(k/K, values[k])``, k = 0..K, and is
    ``values[0] + sum_k c_k relu(x - k/K)``, c_k the change of slope at k/K. It is a
    :func:`lecturekit.nets.mlp` of widths (1, K, 1) in the standard parameterization,
    with ``3K + 1`` parameters (the parameters of the scheme: the K + 1 values enter the
    outer weights linearly).

    Args:
        values: (K + 1,) values at the knots, K >= 1.

    Returns:
        (net, params).

    Example:
        >>> net, params = approximation.interpolation_network([0.0, 1.0, 0.0])
        >>> net.apply(params, jnp.array([[0.25], [0.5], [1.0]])).tolist()
        [0.5, 1.0, 0.0]
    """
    v = as_host_float_array(values, name="values", ndim=1)
    if v.size < 2:
        raise ValueError(f"values needs at least 2 knots, got {v.size}")
    K = v.size - 1
    slopes = np.diff(v) * K
    change = np.diff(np.concatenate([[0.0], slopes]))
    net = _nets.mlp((1, K, 1), "relu", parameterization="standard")
    params = [
        {"W": np.ones((1, K)), "b": -np.arange(K) / K},
        {"W": change[:, None], "b": np.array([v[0]])},
    ]
    return net, jax.device_put(params)


def bit_extraction_network(
    signs: ArrayLike, num_cells: int, *, offset: float = 2.0
) -> tuple[_nets.MLP, list[dict[str, jax.Array]]]:
    """A deep ReLU network that computes a zigzag by reading its slopes out of its
    weights.

    ``signs`` are the ``N M`` slopes of a zigzag g of step ``h = 1/(N M)`` (from
    :func:`zigzag_encode`), ``N = num_cells`` coarse cells of ``M`` fine steps each. The
    network, a :func:`lecturekit.nets.mlp` in the standard parameterization, computes
    ``P(x) + h R(v(x))`` with

    * ``P``: the piecewise-linear interpolant of g at the coarse knots ``j/N``;
    * ``v(x)``: a local coordinate that runs through ``[0, M]`` on each cell (forwards
      on even cells, backwards on odd ones, so that it is continuous), held at 0 or M on
      the first eighth of a fine step of each cell;
    * ``R``: the deviation of g from its chord on the current cell. The cell's slopes
      are stored as the binary digits of one number ``t_j`` (plus a half of the last
      digit, so that rounding cannot move a digit), and the network reads them one per
      block of
      two layers: ``b = clip(2^(M - k + 1)(t - 1/2) + 1/2, 0, 1)``, ``t <- 2t - b``, and
      adds ``h (2b - 1) (clip(v - k, 0, 1) - v / M)`` to its output, products of a digit
      and a number in [0, 1] being exact ReLU expressions (``b c = relu(c + b - 1)``).

    Where v is held at 0 or M, R is 0 whatever digits are read, so the layers that
    switch ``t`` from one cell's number to the next (ramps of width h/16) cannot leak
    into the output. The network equals g up to ``h/4``: ``|net - g| <= h/4`` (v runs a
    little faster than the true coordinate), hence ``|net - f| <= 5h/4`` when g encodes
    a 1-Lipschitz f. The first layers hold O(N) weights, each digit block a constant
    number: about ``14 N + 29 M`` nonzero parameters (:func:`nonzero_parameters`) for
    error O(1/(N M)). The weights hold ``M + 1`` binary digits and the ramps slopes up
    to ``2^(M + 1)``; float64 computes the network exactly while ``M + log2(N) <= 50``
    (checked).

    Args:
        signs: (N M,) array of +1 and -1.
        num_cells: N, >= 1, dividing ``len(signs)``.
        offset: a constant added inside the network to keep the carried output positive
            (any value above ``max |g| + 1``).

    Returns:
        (net, params).

    Raises:
        ValueError: if ``M + log2(N) > 50`` (float64 could not hold the digits).

    Example:
        >>> s = approximation.zigzag_encode(np.zeros(17))
        >>> net, params = approximation.bit_extraction_network(s, 4)
        >>> x = np.linspace(0, 1, 161)
        >>> out = np.asarray(net.apply(params, x[:, None]))
        >>> err = np.abs(out - approximation.zigzag(s, x))
        >>> bool(err.max() <= 1 / 16 / 4 + 1e-12), net.depth
        (True, 10)
    """
    s = _signs(signs)
    if s.ndim != 1:
        raise ValueError(f"signs must be one-dimensional, got shape {s.shape}")
    N = check_positive_int(num_cells, name="num_cells")
    if s.size % N:
        raise ValueError(f"num_cells = {N} must divide len(signs) = {s.size}")
    M = s.size // N
    if M + math.log2(N) > 50:
        raise ValueError(
            f"M + log2(N) = {M + math.log2(N):.1f} > 50: float64 cannot hold the digits"
        )
    offset = check_real(offset, name="offset", positive=True)
    h, H = 1.0 / (N * M), 1.0 / N
    eta_v, eta_t = h / 8, h / 16
    # the zigzag at the coarse knots, and each cell's slopes in the order v reads them
    g_knots = np.concatenate([[0.0], np.cumsum(s)[M - 1 :: M] * h])
    cells = s.reshape(N, M)
    oriented = np.where((np.arange(N) % 2 == 0)[:, None], cells, -cells[:, ::-1])
    digits = (oriented + 1) // 2
    scale = 2 ** (M + 1)  # t_j = code_j / 2^(M+1)
    code = np.array(
        [int("".join(map(str, d)), 2) * 2 + 1 for d in digits], dtype=np.int64
    )
    # layer 1: relu(x - beta) for the breakpoints of v and P, and the ramps of t
    knots = np.arange(N) * H
    # v: plateau end; P and v: knots
    beta = np.concatenate([knots, knots + eta_v])
    n_beta = beta.size
    # t switches on [jH, jH + eta_t]
    ramps = knots[1:]
    W1 = np.concatenate([np.ones(n_beta), np.full(N - 1, 1 / eta_t)])[None, :]
    b1 = np.concatenate([-beta, -ramps / eta_t])
    # layer 2: V = v(x), Q = P(x) + offset, m_j = relu(1 - u_j) (1 before the ramp, 0
    # after)
    speed = M / (H - eta_v)
    v_slope = np.zeros(n_beta)  # change of slope of v at each breakpoint
    p_slope = np.zeros(n_beta)
    cell_slopes = np.diff(g_knots) * N
    for j in range(N):
        direction = 1.0 if j % 2 == 0 else -1.0
        v_slope[N + j] += direction * speed  # starts moving at jH + eta_v
        if j + 1 < N:
            v_slope[j + 1] -= direction * speed  # stops at (j + 1) H
        p_slope[j] += cell_slopes[j] - (cell_slopes[j - 1] if j else 0.0)
    W2 = np.zeros((n_beta + N - 1, 2 + N - 1))
    W2[:n_beta, 0], W2[:n_beta, 1] = v_slope, p_slope
    W2[n_beta + np.arange(N - 1), 2 + np.arange(N - 1)] = -1.0
    b2 = np.concatenate([[0.0, offset], np.ones(N - 1)])
    # t(x) = t_{N-1} - sum_j (t_j - t_{j-1}) m_j; scaled by 2^(M+1) it is an integer sum
    dcode = np.diff(code).astype(float)
    layers = [(W1, b1), (W2, b2)]
    # first digit block, layer A_0, reads [V, Q, m_1 .. m_{N-1}]
    # slope 2^(M+1) = 1/gap of digit 0
    L0 = float(scale)
    nin = 2 + N - 1
    WA = np.zeros((nin, 7))
    bA = np.zeros(7)
    # p = relu(L (t - 1/2) + 1/2), q = relu(L (t - 1/2) - 1/2): t = code_{N-1}/scale -
    # sum dcode m / scale
    for col, shift in ((0, 0.5), (1, -0.5)):
        WA[2:, col] = -dcode * (L0 / scale)
        bA[col] = L0 * (code[-1] / scale - 0.5) + shift
    WA[0, 2], bA[2] = 1.0, 0.0  # c1 = relu(V - 0)
    WA[0, 3], bA[3] = 1.0, -1.0  # c2 = relu(V - 1)
    WA[0, 4] = 1.0  # V
    WA[2:, 5], bA[5] = -dcode / scale, code[-1] / scale  # T
    # A = Q + h V (the "+ v" of R)
    WA[1, 6], WA[0, 6] = 1.0, h
    layers.append((WA, bA))
    for k in range(M):
        # layer B_k reads [p, q, c1, c2, V, T, A] -> [y1, y2, V, T', A']
        WB = np.zeros((7, 5))
        bB = np.zeros(5)
        # y1 = relu(c + b - 1)
        WB[[2, 3, 0, 1], 0], bB[0] = [1.0, -1.0, 1.0, -1.0], -1.0
        # y2 = relu(v/M + b - 1)
        WB[[4, 0, 1], 1], bB[1] = [1.0 / M, 1.0, -1.0], -1.0
        WB[4, 2] = 1.0  # V
        WB[[5, 0, 1], 3] = [2.0, -1.0, 1.0]  # T' = 2T - b
        WB[[6, 2, 3], 4] = [1.0, -h, h]  # A' = A - h c
        layers.append((WB, bB))
        if k + 1 == M:
            break
        # layer A_{k+1} reads [y1, y2, V, T', A']
        # 1/gap of digit k + 1
        L = float(2 ** (M - k))
        WA = np.zeros((5, 7))
        bA = np.zeros(7)
        WA[3, 0], bA[0] = L, -L / 2 + 0.5  # p
        WA[3, 1], bA[1] = L, -L / 2 - 0.5  # q
        WA[2, 2], bA[2] = 1.0, -(k + 1.0)  # c1 = relu(V - k)
        # c2 = relu(V - k - 1)
        WA[2, 3], bA[3] = 1.0, -(k + 2.0)
        WA[2, 4] = 1.0  # V
        WA[3, 5] = 1.0  # T
        WA[[4, 0, 1], 6] = [1.0, 2 * h, -2 * h]  # A += 2h (y1 - y2)
        layers.append((WA, bA))
    readout = np.zeros((5, 1))
    readout[[4, 0, 1], 0] = [1.0, 2 * h, -2 * h]
    layers.append((readout, np.array([-offset])))
    widths = (1,) + tuple(W.shape[1] for W, _ in layers)
    net = _nets.mlp(widths, "relu", parameterization="standard")
    return net, jax.device_put([{"W": W, "b": b} for W, b in layers])


def nonzero_parameters(params: Any) -> int:
    """The number of nonzero weights and biases of a network (its connections).

    Args:
        params: any pytree of arrays (e.g. from :func:`bit_extraction_network`).

    Returns:
        int.

    Example:
        >>> approximation.nonzero_parameters([{"W": np.eye(3), "b": np.zeros(3)}])
        3
    """
    check_params_pytree(params)
    leaves = jax.tree_util.tree_leaves(params)
    return int(sum(np.count_nonzero(np.asarray(leaf)) for leaf in leaves))


def perturb_nonzero(params: Any, key: jax.Array, size: float) -> list:
    """``params + size * u`` with u a random unit vector on the nonzero entries of
    params.

    The direction is uniform on the unit sphere of the nonzero weights and biases
    (normalized Gaussian, from :func:`lecturekit.sampling.standard_normal`); zero
    entries stay zero, so the network keeps its connections. The Euclidean size of the
    change is ``size``.

    Args:
        params: a list of ``{"W", "b"}`` layer dicts.
        key: a JAX PRNG key.
        size: the l2 norm of the perturbation, >= 0.

    Returns:
        The perturbed parameters (same structure, NumPy arrays).

    Example:
        >>> p = [{"W": np.array([[1.0, 0.0]]), "b": np.array([0.0, 2.0])}]
        >>> q = approximation.perturb_nonzero(p, jax.random.key(0), 1e-3)
        >>> d = np.concatenate([(q[0][k] - p[0][k]).ravel() for k in "Wb"])
        >>> round(float(np.linalg.norm(d)), 9), float(q[0]["W"][0, 1])
        (0.001, 0.0)
    """
    check_key(key)
    size = check_real(size, name="size", nonnegative=True)
    check_params_pytree(params)
    leaves, tree = jax.tree_util.tree_flatten(params)
    host = [np.asarray(leaf, dtype=float) for leaf in leaves]
    masks = [leaf != 0 for leaf in host]
    count = int(sum(m.sum() for m in masks))
    if count == 0:
        raise ValueError("params has no nonzero entry to perturb")
    z = np.array(_sampling.standard_normal(key, (count,)), dtype=float)
    z = z * (size / np.linalg.norm(z))
    out, start = [], 0
    for leaf, mask in zip(host, masks):
        new = leaf.copy()
        new[mask] += z[start : start + int(mask.sum())]
        start += int(mask.sum())
        out.append(new)
    return jax.tree_util.tree_unflatten(tree, out)


def _scalar_pass(net: _nets.MLP, params: Any, x: ArrayLike):
    """:meth:`lecturekit.nets.MLP.backward` of a scalar-output network (checked)."""
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.MLP, got {type(net).__name__}")
    if net.output_dim != 1:
        raise ValueError(
            f"net must have a scalar output, got output width {net.output_dim}"
        )
    return net.backward(params, x)


def input_gradient_norms(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """``|grad_x f(x_i)|`` (Euclidean) for a scalar network f, from its backward pass.

    ``grad_x f = mW_1 delta_1 W_1^T`` with ``delta_1 = df/dz_1`` from
    :meth:`lecturekit.nets.MLP.backward`. The largest value over a domain is the
    Lipschitz constant of f there (f is piecewise linear for ReLU, and the supremum of
    ``|grad f|`` over a convex domain is its Lipschitz constant).

    Args:
        net: a scalar-output :func:`lecturekit.nets.mlp` network.
        params: its parameters.
        x: inputs, shape (n, d).

    Returns:
        (n,) array.

    Example:
        >>> net = nets.mlp((2, 3, 1), "identity", parameterization="standard")
        >>> p = [{"W": jnp.eye(2, 3), "b": jnp.zeros(3)},
        ...      {"W": jnp.ones((3, 1)), "b": jnp.zeros(1)}]
        >>> g = approximation.input_gradient_norms(net, p, jnp.ones((1, 2)))
        >>> g.round(4).tolist()
        [1.4142]
    """
    bw = _scalar_pass(net, params, x)
    mw = net.multipliers()[0][0]
    grad = mw * (bw.deltas[0][:, 0, :] @ params[0]["W"].T)
    return jnp.sqrt(jnp.sum(grad**2, axis=1))


def parameter_gradient_norms(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """``|grad_theta f(x_i)|`` over all weights and biases, from the backward pass.

    For dense layer l with multipliers (mW, mb): ``|df/dW_l|^2 = mW^2 |h_{l-1}|^2
    |delta_l|^2`` and ``|df/db_l|^2 = mb^2 |delta_l|^2``. Its largest value over the
    inputs is the local Lipschitz constant of the map theta -> (f_theta(x_i))_i from l2
    to the sup norm (the square is the diagonal of the empirical tangent kernel).

    Args:
        net: a scalar-output :func:`lecturekit.nets.mlp` network.
        params: its parameters.
        x: inputs, shape (n, d).

    Returns:
        (n,) array.

    Example:
        >>> net = nets.mlp((1, 4, 1))
        >>> p = net.init(jax.random.key(0))
        >>> x = jnp.array([[0.5], [1.0]])
        >>> ntk = tangent.empirical_ntk(net.apply, p, x)
        >>> g = approximation.parameter_gradient_norms(net, p, x)
        >>> bool(jnp.allclose(g**2, jnp.diag(ntk)))
        True
    """
    bw = _scalar_pass(net, params, x)
    total = 0.0
    for (mw, mb), h, delta in zip(net.multipliers(), bw.inputs, bw.deltas):
        d2 = jnp.sum(delta[:, 0, :] ** 2, axis=1)
        total = total + (mw**2 * jnp.sum(h**2, axis=1) + mb**2) * d2
    return jnp.sqrt(total)


# --------------------------------------------------------------------------- JL


def jl_ratios(key: jax.Array, num_points: int, dim: int, count: int) -> np.ndarray:
    """Distortion of ``count`` Gaussian maps on an orthonormal set of ``num_points``
    vectors.

    A Gaussian matrix G (dim x k, N(0, 1) entries) sends the orthonormal vectors
    ``e_1..e_k`` to its columns. All distances ``|e_i - e_j|`` are equal, so the map
    keeps every distance within a factor ``r`` (after scaling) iff
    ``max_{i<j} |g_i - g_j| / min_{i<j} |g_i - g_j| <= r``. This ratio is returned.

    Args:
        key: a JAX PRNG key.
        num_points: k >= 3.
        dim: the target dimension m >= 1.
        count: number of independent maps.

    Returns:
        (count,) NumPy array of ratios >= 1.

    Example:
        >>> r = approximation.jl_ratios(jax.random.key(0), 8, 400, 20)
        >>> bool(np.all((r >= 1) & (r < 1.5)))
        True
    """
    check_key(key)
    k = check_positive_int(num_points, name="num_points", minimum=3)
    m = check_positive_int(dim, name="dim")
    count = check_positive_int(count, name="count")
    g = np.asarray(_sampling.standard_normal(key, (count, m, k)), dtype=float)
    gram = np.ascontiguousarray(g.transpose(0, 2, 1)) @ g  # (count, k, k), in BLAS
    sq = np.einsum("cii->ci", gram)
    d2 = sq[:, :, None] + sq[:, None, :] - 2 * gram
    largest = d2.max(axis=(1, 2))  # the diagonal (0) never wins
    d2[:, np.arange(k), np.arange(k)] = np.inf
    return np.sqrt(largest / d2.min(axis=(1, 2)))


def jl_dimension_bound(num_points: int, ratio: float = 2.0) -> float:
    """Dasgupta and Gupta's sufficient dimension for a map with distance ratio ``<=
    ratio``.

    Their form of the lemma: for ``m >= 4 ln k / (eps^2/2 - eps^3/3)`` a (scaled)
    Gaussian map has ``(1 - eps)|u - v|^2 <= |f(u) - f(v)|^2 <= (1 + eps)|u - v|^2`` on
    all pairs of k points with positive probability. The ratio of largest to smallest
    distance factor is then ``sqrt((1 + eps)/(1 - eps))``; ``eps = (r^2 - 1)/(r^2 + 1)``
    makes it r. For r = 2, ``eps = 3/5`` and the bound is ``37.04 ln k``, i.e. ``25.67
    n`` for ``k = 2^n``.

    Args:
        num_points: k >= 2.
        ratio: the distance ratio r > 1 to guarantee.

    Returns:
        the bound on m (a float; any integer m at or above it works).

    Example:
        >>> round(approximation.jl_dimension_bound(2**10) / 10, 3)
        25.672
    """
    k = check_positive_int(num_points, name="num_points", minimum=2)
    r = check_real(ratio, name="ratio")
    if r <= 1:
        raise ValueError(f"ratio must be > 1, got {ratio}")
    eps = (r * r - 1) / (r * r + 1)
    return 4 * math.log(k) / (eps**2 / 2 - eps**3 / 3)


# --------------------------------------------------------------------------- extensions


def _norms(diff: np.ndarray, p: float) -> np.ndarray:
    return np.linalg.norm(diff, ord=p, axis=-1)


def _check_p(p: Any) -> float:
    """The exponent of an l_p norm: a real p >= 1, or +inf (the max norm)."""
    if isinstance(p, (float, np.floating)) and p == np.inf:
        return math.inf
    p = check_real(p, name="p")
    if p < 1:
        raise ValueError(f"p must be >= 1 (an l_p norm), got {p}")
    return p


def lipschitz_constant(x: ArrayLike, y: ArrayLike, *, p: float = 2.0) -> float:
    """``max_{i<j} |y_i - y_j|_2 / |x_i - x_j|_p`` of finite data (distinct x_i).

    Args:
        x: (k, d) points of the domain, normed by l_p.
        y: (k,) or (k, m) values, normed by l_2.
        p: the domain's norm, p >= 1 (``np.inf`` allowed).

    Returns:
        float.

    Example:
        >>> approximation.lipschitz_constant([[0.0], [1.0], [3.0]], [0.0, 2.0, 3.0])
        2.0
    """
    xs = as_host_float_array(x, name="x", ndim=2)
    ys = as_host_float_array(y, name="y", ndim=(1, 2))
    ys = ys[:, None] if ys.ndim == 1 else ys
    if ys.shape[0] != xs.shape[0] or xs.shape[0] < 2:
        raise ValueError(
            f"x and y need the same number >= 2 of points, got {xs.shape[0]} and "
            f"{ys.shape[0]}"
        )
    p = _check_p(p)
    i, j = np.triu_indices(xs.shape[0], 1)
    dx = _norms(xs[i] - xs[j], p)
    if np.any(dx == 0):
        raise ValueError("x must have distinct points")
    return float(np.max(np.linalg.norm(ys[i] - ys[j], axis=1) / dx))


def mcshane_extension(
    x_known: ArrayLike,
    y_known: ArrayLike,
    lipschitz: float,
    x_new: ArrayLike,
    *,
    p: float = 2.0,
    lower: bool = False,
) -> np.ndarray:
    """McShane's extension of scalar data: ``min_i (y_i + L |x - x_i|_p)`` (or the max
    form).

    If the data are L-Lipschitz, this function agrees with them at the x_i, is
    L-Lipschitz on the whole space (a minimum of L-Lipschitz functions), and is the
    largest such extension; ``lower=True`` gives ``max_i (y_i - L |x - x_i|_p)``, the
    smallest. Any metric works; here the l_p distance.

    Args:
        x_known: (k, d) points.
        y_known: (k,) values.
        lipschitz: L >= 0.
        x_new: (q, d) points.
        p: the norm of the domain, p >= 1.
        lower: the smallest extension instead of the largest.

    Returns:
        (q,) NumPy array.

    Example:
        >>> x_known, y_known = [[0.0], [2.0]], [0.0, 1.0]
        >>> approximation.mcshane_extension(x_known, y_known, 1.0, [[1.0], [3.0]])
        array([1., 2.])
    """
    xs = as_host_float_array(x_known, name="x_known", ndim=2)
    ys = as_host_float_array(y_known, name="y_known", ndim=1)
    xq = as_host_float_array(x_new, name="x_new", ndim=2)
    if ys.size != xs.shape[0]:
        raise ValueError(
            f"y_known must have one value per point of x_known ({xs.shape[0]}), got "
            f"{ys.size}"
        )
    if xq.shape[1] != xs.shape[1]:
        raise ValueError(
            f"x_new must have the {xs.shape[1]} columns of x_known, got {xq.shape[1]}"
        )
    L = check_real(lipschitz, name="lipschitz", nonnegative=True)
    if not isinstance(lower, (bool, np.bool_)):
        raise TypeError(f"lower must be True or False, got {lower!r}")
    d = _norms(xq[:, None, :] - xs[None, :, :], _check_p(p))
    return np.max(ys - L * d, axis=1) if lower else np.min(ys + L * d, axis=1)


class KirszbraunPoint(NamedTuple):
    """The value at a new point of a Lipschitz extension (:func:`kirszbraun_point`).

    Attributes:
        value: the point y of the target (shape (m,)) minimizing
            ``max_i |y - y_i| / (L |x - x_i|)``.
        ratio: that minimum: the extension keeps the constant L iff ``ratio <= 1`` (the
            balls ``B(y_i, L |x - x_i|)`` have a common point). Kirszbraun's theorem
            says ``ratio <= 1`` when domain and target are Euclidean.

    Example:
        >>> pt = approximation.KirszbraunPoint(np.zeros(2), 0.5)
        >>> pt.ratio
        0.5
    """

    value: np.ndarray
    ratio: float


def kirszbraun_point(
    x_known: ArrayLike,
    y_known: ArrayLike,
    x_new: ArrayLike,
    *,
    lipschitz: float | None = None,
    p: float = 2.0,
) -> KirszbraunPoint:
    """Extend L-Lipschitz data ``x_i -> y_i`` to one more point: a common point of
    balls.

    A value y at x keeps the Lipschitz constant L iff ``|y - y_i|_2 <= L |x - x_i|_p``
    for
    every i: y must lie in all the balls ``B(y_i, L |x - x_i|_p)``. This function finds
    the smallest factor ``t`` such that the balls scaled by t have a common point (a
    convex problem, solved by SLSQP in the affine span of the y_i, where a best point
    lies: projecting onto it brings y closer to every y_i). ``t <= 1`` means the
    extension exists with the same constant; Kirszbraun's theorem guarantees it for
    Euclidean domain and target (p = 2); other domain norms can need ``t > 1``.

    Args:
        x_known: (k, d) distinct points of the domain.
        y_known: (k, m) values (Euclidean target); (k,) is read as m = 1.
        x_new: (d,) the new point (if it is one of the x_i, its value is returned).
        lipschitz: L > 0 (default: the data's own constant, :func:`lipschitz_constant`).
        p: the domain's norm, p >= 1.

    Returns:
        A :class:`KirszbraunPoint`.

    Example:
        >>> x = np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
        >>> y = np.sqrt(2) * np.array([[1.0, 1, 1], [1, -1, -1],
        ...                            [-1, 1, -1], [-1, -1, 1]])
        >>> round(approximation.kirszbraun_point(x, y, np.zeros(2), p=1).ratio, 6)
        1.224745
    """
    xs = as_host_float_array(x_known, name="x_known", ndim=2, nonempty=True)
    ys = as_host_float_array(y_known, name="y_known", ndim=(1, 2))
    ys = ys[:, None] if ys.ndim == 1 else ys
    x = as_host_float_array(x_new, name="x_new", ndim=1)
    if ys.shape[0] != xs.shape[0]:
        raise ValueError(
            f"y_known must have one row per point of x_known ({xs.shape[0]}), got "
            f"{ys.shape[0]}"
        )
    if x.size != xs.shape[1]:
        raise ValueError(
            f"x_new must have the {xs.shape[1]} entries of a point of x_known, got "
            f"{x.size}"
        )
    p = _check_p(p)
    if lipschitz is None:
        L = lipschitz_constant(xs, ys, p=p) if xs.shape[0] > 1 else 1.0
    else:
        L = check_real(lipschitz, name="lipschitz", positive=True)
    r = L * _norms(xs - x, p)
    if np.any(r == 0):
        return KirszbraunPoint(ys[int(np.argmin(r))].copy(), 0.0)
    # coordinates in the affine span of the y_i
    base = ys[0]
    basis = np.linalg.svd(ys - base, full_matrices=False)[2]
    basis = basis[
        np.linalg.svd(ys - base, compute_uv=False) > 1e-12 * max(1.0, np.abs(ys).max())
    ]
    coords = (ys - base) @ basis.T  # (k, q)
    scale = r.max()

    def ratios2(c):
        return np.sum((c[None, :] - coords) ** 2, axis=1) / r**2

    start = coords[int(np.argmin(r))] if coords.shape[1] else np.zeros(0)
    z0 = np.concatenate([start, [ratios2(start).max() * 1.01 + 1e-12]])
    cons = {
        "type": "ineq",
        "fun": lambda z: (z[-1] - ratios2(z[:-1])) * scale**2,
        "jac": lambda z: (
            np.concatenate(
                [-2 * (z[None, :-1] - coords) / r[:, None] ** 2, np.ones((r.size, 1))],
                axis=1,
            )
            * scale**2
        ),
    }
    res = scipy.optimize.minimize(
        lambda z: z[-1],
        z0,
        jac=lambda z: np.eye(z.size)[-1],
        constraints=[cons],
        method="SLSQP",
        options={"maxiter": 500, "ftol": 1e-15},
    )
    c = res.x[:-1]
    value = base + c @ basis if basis.size else base.copy()
    return KirszbraunPoint(value, float(np.sqrt(ratios2(c).max())))
