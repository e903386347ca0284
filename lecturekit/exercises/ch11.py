"""Checks for the exercises of Chapter 11 (entropy numbers, stable widths, depth).

The references are computed here without ``lecturekit.approximation``: the
Johnson-Lindenstrauss dimension in exact rationals, the sup error of a zigzag code on a
fine grid from its slopes, the volume bound of an ellipsoid by a direct loop over the
sections, McShane's extension from its formula, and the circumradius of a regular
simplex from the squared distances of its vertices.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from . import (
    ExerciseCheckError,
    as_numbers,
    as_scalar,
    call,
    call_numeric,
    compare,
    passed,
    require_callable,
)

__all__ = [
    "check_jl_dimension",
    "check_zigzag_encoder",
    "check_entropy_lower_bound",
    "check_mcshane",
    "check_extension_constant",
]


def _dg_bound(k: int, ratio: float) -> float:
    """4 ln k / (eps^2/2 - eps^3/3) with (1 + eps)/(1 - eps) = ratio^2."""
    r2 = Fraction(ratio).limit_denominator(10**6) ** 2
    eps = (r2 - 1) / (r2 + 1)
    return float(4 / (eps**2 / 2 - eps**3 / 3)) * math.log(k)


def check_jl_dimension(jl_dimension: Callable) -> None:
    """jl_dimension(k, ratio) must be Dasgupta and Gupta's bound for distance ratio
    ``ratio``.

    The lemma in their form: for ``m >= 4 ln k / (eps^2/2 - eps^3/3)`` a Gaussian map
    keeps all squared distances of k points within factors ``1 - eps`` and ``1 + eps``.
    Return the bound on m (a float) for the eps at which the ratio of the largest to the
    smallest distance factor is ``ratio``.

    Args:
        jl_dimension: your function of (k, ratio).

    Example:
        >>> exercises.ch11.check_jl_dimension(lambda k, ratio: 8 * np.log(k) / 0.25)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: jl_dimension(k, ratio) at (16,...
    """
    require_callable(jl_dimension, what="jl_dimension")
    for k, ratio in ((16, 2.0), (2**10, 2.0), (100, 1.5), (7, 3.0)):
        want = _dg_bound(k, ratio)
        got = as_scalar(
            call(jl_dimension, k, ratio, what="jl_dimension(k, ratio)"),
            what="jl_dimension(k, ratio)",
        )
        if abs(got - 8 * math.log(k) / 0.25) < 1e-6 * want and ratio == 2.0:
            raise ExerciseCheckError(
                f"jl_dimension(k, ratio) at ({k}, {ratio}): got {got:.6g} = 8 ln k / "
                "eps^2 at eps = 1/2, the "
                f"notes' formula, expected {want:.6g}. Distance factors between 1/2 "
                "and 1 are squared factors "
                "between 1/4 and 1: find the eps of Dasgupta and Gupta's form that "
                "gives ratio 2."
            )
        compare(
            got,
            want,
            what=f"jl_dimension(k, ratio) at ({k}, {ratio})",
            rtol=1e-6,
            hint="The lemma bounds squared distances: the distance ratio is sqrt((1 + "
            "eps)/(1 - eps)); "
            "solve for eps, and use the natural logarithm.",
        )
    return passed(
        "for ratio 2, eps = 3/5 and m >= (1000/27) ln k = 25.67 n for k = 2^n points."
    )


def _zigzag_sup_error(signs: np.ndarray, f: np.ndarray, fine: int) -> float:
    """sup |zigzag(signs) - f| on a grid of step 1/fine (f given there; fine multiple of
    n).
    """
    n = signs.size
    steps = np.repeat(signs, fine // n) / fine
    g = np.concatenate([[0.0], np.cumsum(steps)])
    return float(np.abs(g - f).max())


def check_zigzag_encoder(encode: Callable) -> None:
    """encode(values) must return n slopes +-1 whose zigzag is within 1/n of f.

    ``values`` are f(k/n), k = 0..n, of a 1-Lipschitz f with f(0) = 0 (a 1-D NumPy array
    of length n + 1); return a length-n array of +1 and -1.

    Args:
        encode: your function.

    Example:
        >>> naive = lambda v: np.where(np.diff(v) >= 0, 1, -1)
        >>> exercises.ch11.check_zigzag_encoder(naive)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: encode(values) for f = 0 with n =...
    """
    require_callable(encode, what="encode")
    fine = 1024
    x = np.arange(fine + 1) / fine
    rng = np.random.default_rng(11)
    tests = [("f = 0", np.zeros(fine + 1))]
    slopes = rng.uniform(-1, 1, (3, fine))
    tests += [
        (f"a random 1-Lipschitz f (#{i})", np.concatenate([[0.0], np.cumsum(s) / fine]))
        for i, s in enumerate(slopes)
    ]
    tests.append(("f(x) = 0.9 x", 0.9 * x))
    for name, f in tests:
        for n in (8, 64):
            values = f[:: fine // n].copy()
            got = as_numbers(
                call(encode, values, what="encode(values)"), what="encode(values)"
            ).ravel()
            if got.shape != (n,) or not np.all(np.isin(got, (-1, 1))):
                raise ExerciseCheckError(
                    f"encode(values) for {name} with n = {n}: expected {n} slopes, "
                    "each +1 or -1, got an "
                    f"array of shape {got.shape} with values {np.unique(got)[:5]}"
                )
            err = _zigzag_sup_error(got, f, fine)
            if err > 1 / n + 1e-9:
                raise ExerciseCheckError(
                    f"encode(values) for {name} with n = {n}: the zigzag is "
                    f"{err * n:.3g}/n away from f, more "
                    "than 1/n. Step towards the target from where the zigzag is, "
                    "g(k/n), not from where f "
                    "was: the sign of f((k+1)/n) - g(k/n), not of f's own increment."
                )
    return passed(
        "the zigzag stays within 1/n of every 1-Lipschitz f: 2^n balls of radius 1/n "
        "cover K0."
    )


def check_entropy_lower_bound(entropy_lower_bound: Callable) -> None:
    """entropy_lower_bound(axes, n) must be max_k 2^(-n/k) (sigma_1 ... sigma_k)^(1/k).

    Args:
        entropy_lower_bound: your function of a 1-D NumPy array of non-increasing
            positive semi-axes and a number of bits n >= 0, returning a number.

    Example:
        >>> first_axis_only = lambda axes, n: 2.0 ** -n * axes[0]
        >>> exercises.ch11.check_entropy_lower_bound(first_axis_only)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: entropy_lower_bound(axes, n) for...
    """
    require_callable(entropy_lower_bound, what="entropy_lower_bound")
    cases = [
        ("1/j", 1.0 / np.arange(1, 201)),
        ("2^-j", 2.0 ** -np.arange(1, 61)),
        ("j^-2", 1.0 / np.arange(1, 101) ** 2),
    ]
    for name, axes in cases:
        for n in (0, 16, 100):
            best = -np.inf
            log_prod = 0.0
            for k in range(1, axes.size + 1):
                log_prod += math.log(axes[k - 1])
                best = max(best, -n * math.log(2) / k + log_prod / k)
            got = as_scalar(
                call(
                    entropy_lower_bound,
                    axes.copy(),
                    n,
                    what="entropy_lower_bound(axes, n)",
                ),
                what="entropy_lower_bound(axes, n)",
            )
            compare(
                got,
                math.exp(best),
                what=f"entropy_lower_bound(axes, n) for axes {name} at n = {n}",
                rtol=1e-8,
                hint="2^n balls of radius eps covering the k-dimensional section have "
                "total volume "
                "2^n eps^k vol(B) >= sigma_1 ... sigma_k vol(B); take the k-th root "
                "and the best k.",
            )
    return passed(
        "eps_n >= max_k 2^(-n/k) (sigma_1...sigma_k)^(1/k); for sigma_j = 2^-j the "
        "best k is about sqrt(2n)."
    )


def check_mcshane(mcshane: Callable) -> None:
    """mcshane(x_known, y_known, L) must return the largest L-Lipschitz extension F.

    ``x_known`` has shape (k, d), ``y_known`` (k,); F takes points of shape (q, d) and
    returns (q,) values; distances are Euclidean.

    Args:
        mcshane: your function returning a function.

    Example:
        >>> lower = lambda xk, yk, L: (lambda x: np.max(yk - L * np.linalg.norm(
        ...     x[:, None] - xk[None], axis=2), axis=1))
        >>> exercises.ch11.check_mcshane(lower)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: mcshane: this is the smallest...
    """
    require_callable(mcshane, what="mcshane")
    rng = np.random.default_rng(5)
    for d in (1, 2):
        xk = rng.standard_normal((6, d))
        yk = rng.standard_normal(6)
        dist = np.linalg.norm(xk[:, None] - xk[None], axis=2)
        L = float(np.max(np.abs(yk[:, None] - yk[None])[dist > 0] / dist[dist > 0]))
        xq = 2 * rng.standard_normal((50, d))
        F = call(mcshane, xk.copy(), yk.copy(), L, what="mcshane(x_known, y_known, L)")
        require_callable(F, what="mcshane(x_known, y_known, L)'s result")
        dq = np.linalg.norm(xq[:, None] - xk[None], axis=2)
        want = np.min(yk + L * dq, axis=1)
        got = call_numeric(F, xq, what="F(x)").ravel()
        lower = np.max(yk - L * dq, axis=1)
        if (
            got.shape == want.shape
            and np.allclose(got, lower)
            and not np.allclose(lower, want)
        ):
            raise ExerciseCheckError(
                "mcshane: this is the smallest extension max_i (y_i - L |x - x_i|); "
                "the largest is the minimum of the upper cones y_i + L |x - x_i|."
            )
        compare(
            got,
            want,
            what=f"mcshane(...)(x) in dimension {d}",
            rtol=1e-10,
            atol=1e-10,
            hint="Every L-Lipschitz extension G satisfies G(x) <= y_i + L |x - x_i| "
            "for every i; the "
            "minimum of these cones is itself L-Lipschitz and agrees with the data.",
        )
        compare(
            call_numeric(F, xk, what="F(x_known)").ravel(),
            yk,
            what="F at the data points",
            rtol=1e-10,
            atol=1e-10,
        )
    return passed(
        "F(x) = min_i (y_i + L |x - x_i|): the largest L-Lipschitz extension, in any "
        "metric space."
    )


def check_extension_constant(extension_constant: Callable) -> None:
    """extension_constant(d) must be the smallest factor t* for the l1 cross-polytope
    example.

    The 2d points +-e_i of (R^d, l1) go to the vertices of a regular simplex of side 2
    in a Euclidean space; t* is the factor by which the balls around the y_i, of radii
    the l1 distances from the origin to the x_i, must grow to meet (extending the map to
    the origin).

    Args:
        extension_constant: your function of d >= 1.

    Example:
        >>> exercises.ch11.check_extension_constant(lambda d: 2 ** 0.5)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: extension_constant(d) at d = 2: ...
    """
    require_callable(extension_constant, what="extension_constant")
    for d in (2, 3, 5, 10, 50):
        N = 2 * d
        # vertices sqrt(2) e_i of R^N: the centroid is at squared distance 2 - 2/N from
        # each
        want = math.sqrt(2 - 2 / N)
        got = as_scalar(
            call(extension_constant, d, what="extension_constant(d)"),
            what="extension_constant(d)",
        )
        hint = (
            "All l1 distances from 0 to +-e_i are 1, so t* is the radius of the "
            "smallest ball "
            "containing the simplex: its circumradius (the centroid is the best "
            "centre)."
        )
        if abs(got - math.sqrt(2)) < 1e-9:
            hint = "sqrt(2) is the limit as d grows, not the value at finite d. " + hint
        compare(
            got, want, what=f"extension_constant(d) at d = {d}", rtol=1e-9, hint=hint
        )
    return passed(
        "t* = sqrt((2d - 1)/d) > 1: in l1 the extension constant grows, towards "
        "sqrt(2)."
    )
