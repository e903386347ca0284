"""Checks for the exercises of Chapter 5 (implicit bias).

Each check runs the learner's function on problems drawn here and compares it with an
independent reference (linear programming, the SVM dual, exact Markov chains, the convex
program solved by Newton's method on its dual).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from .. import implicit_bias as _ib
from . import ExerciseCheckError, call, call_numeric, compare, passed, require_callable

__all__ = [
    "check_min_l1",
    "check_support_vectors",
    "check_continuum_mass",
    "check_gd_bias_order",
    "check_uv_potential",
    "check_flattest_interpolant",
]


def _sparse_problem(seed: int, n: int, d: int, k: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta = np.zeros(d)
    beta[rng.choice(d, k, replace=False)] = rng.choice([-1.0, 1.0], k) * (
        0.5 + rng.random(k)
    )
    return X, X @ beta


def check_min_l1(min_l1: Callable) -> None:
    """min_l1(X, y) must return argmin ||beta||_1 subject to X beta = y.

    Args:
        min_l1: your function (X, y) -> the minimum-l1 interpolating beta.

    Example:
        >>> exercises.ch05.check_min_l1(lambda X, y: np.zeros(X.shape[1]))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: your beta does not interpolate...
    """
    require_callable(min_l1, what="min_l1")
    for seed, (n, d, k) in enumerate([(5, 12, 2), (8, 20, 4), (15, 30, 8)]):
        X, y = _sparse_problem(100 + seed, n, d, k)
        what = f"min_l1(X, y) for X of shape {X.shape}"
        got = call_numeric(min_l1, X.copy(), y.copy(), what=what)
        if got.shape != (d,):
            raise ExerciseCheckError(
                f"min_l1 should return a vector of length d = {d}, got shape "
                f"{got.shape}"
            )
        if np.linalg.norm(X @ got - y) > 1e-6 * np.linalg.norm(y):
            raise ExerciseCheckError(
                "your beta does not interpolate: ||X beta - y|| = "
                f"{np.linalg.norm(X @ got - y):.3g}. "
                "Hint: the constraint is an equality, A_eq = [X, -X] on the split beta "
                "= u - v."
            )
        ref = np.asarray(_ib.min_l1_interpolant(X, y))
        compare(
            np.abs(got).sum(),
            np.abs(ref).sum(),
            what=f"||beta||_1 on a {n}x{d} problem",
            rtol=1e-6,
            hint="minimize sum(u) + sum(v) with u, v >= 0 (bounds=(0, None)).",
        )
    return passed(
        "your linear program finds the minimum-l1 interpolant on three random problems."
    )


def check_support_vectors(support_vectors: Callable) -> None:
    """support_vectors(X, y) must return the boolean mask {i : a_i > 0} of the
    hard-margin SVM.

    Args:
        support_vectors: your function (X, y) -> a boolean mask of the support vectors.

    Example:
        >>> exercises.ch05.check_support_vectors(lambda X, y: np.arange(len(y)))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: support_vectors should return a ...
    """
    require_callable(support_vectors, what="support_vectors")
    rng = np.random.default_rng(7)
    for trial in range(3):
        n = 16 + 4 * trial
        X = rng.standard_normal((n, 2)) * np.array([1.0, 0.7])
        y = np.where(np.arange(n) < n // 2, 1.0, -1.0)
        X = X + y[:, None] * np.array([1.5, 1.0])
        got = call(
            support_vectors,
            X.copy(),
            y.copy(),
            what=f"support_vectors(X, y) for X of shape {X.shape}",
        )
        if got is None:
            raise ExerciseCheckError(
                "support_vectors returned None. Does it end with a `return` statement?"
            )
        got = np.asarray(got)
        ref = _ib.hard_margin_svm(X, y)
        if got.shape != (n,) or got.dtype != bool:
            raise ExerciseCheckError(
                f"support_vectors should return a boolean mask of shape ({n},), got "
                f"shape {got.shape} and dtype {got.dtype}"
            )
        want = np.asarray(ref.support)
        if not np.array_equal(got, want):
            raise ExerciseCheckError(
                f"trial {trial}: you marked points {np.flatnonzero(got).tolist()} but "
                "the support vectors "
                f"(dual variables a_i > 0) are {np.flatnonzero(want).tolist()}. Hint: "
                "the set is "
                "{i : a_i > 0}, not {i : a_i = 0}; compare a_i with a tolerance "
                "relative to max(a)."
            )
    return passed("your support vectors agree with the SVM dual on three data sets.")


def check_continuum_mass(lower_mass: Callable) -> None:
    """lower_mass(s1, s2): stationary mass of [0, pi) for step sizes s1 on [0, pi) and
    s2 on [pi, 2 pi).

    Args:
        lower_mass: your function of the exercise's parameters -> the stationary mass.

    Example:
        >>> exercises.ch05.check_continuum_mass(lambda *args: 0.0)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: lower_mass(1.0, 1.0): got 0 ...
    """
    require_callable(lower_mass, what="lower_mass")
    for s1, s2 in [(1.0, 1.0), (1.0, 2.0), (2.0, 1.0), (0.5, 3.0), (1.3, 1.7)]:
        got = call_numeric(lower_mass, s1, s2, what=f"lower_mass({s1}, {s2})")
        compare(
            got,
            s2**2 / (s1**2 + s2**2),
            what=f"lower_mass({s1}, {s2})",
            rtol=1e-10,
            hint="the Ito Fokker-Planck equation gives sigma(theta)^2 p(theta) = "
            "constant.",
        )
    # the exact lattice chain, slow=1, fast=2
    exact = _ib.two_speed_chain_stationary(400)[:400].sum()
    compare(
        call_numeric(lower_mass, 1.0, 2.0, what="lower_mass(1.0, 2.0)"),
        exact,
        what="lower_mass(1, 2) vs the exact chain with 400 sites per half",
        rtol=2e-3,
    )
    return passed(
        "your formula matches the Fokker-Planck answer and the exact lattice chain "
        "(0.7992 at n = 400)."
    )


@functools.cache
def _gd_deviation_reference(step_scale: float) -> float:
    """||beta_GD - argmin Q|| / ||argmin Q|| at alpha = 0.1 on the check's problem
    (computed once).
    """
    X, y = _sparse_problem(0, 20, 40, 3)
    ref = np.asarray(_ib.argmin_Q(X, y, alpha=0.1))
    beta = np.asarray(_ib.train_diagonal_net(X, y, alpha=0.1, step_scale=step_scale))
    return float(np.linalg.norm(beta - ref) / np.linalg.norm(ref))


def check_gd_bias_order(deviation: Callable) -> None:
    """deviation(X, y, step_scale) must return ||beta_GD - argmin Q|| / ||argmin Q|| at
    alpha = 0.1.

    Args:
        deviation: your function (X, y, step_scale) -> the deviation of gradient descent
            from gradient flow.

    Example:
        >>> exercises.ch05.check_gd_bias_order(0.0)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: deviation should be a function...
    """
    require_callable(deviation, what="deviation")
    X, y = _sparse_problem(0, 20, 40, 3)
    for c in (0.2, 0.05):
        # the learner's function first, so that a stub fails before any training
        got = call_numeric(
            deviation, X.copy(), y.copy(), c, what=f"deviation(X, y, {c})"
        )
        compare(
            got,
            _gd_deviation_reference(c),
            what=f"deviation(X, y, {c})",
            rtol=1e-3,
            hint="use implicit_bias.train_diagonal_net(X, y, alpha=0.1, step_scale=c) "
            "and implicit_bias.argmin_Q.",
        )
    return passed(
        "your deviations match: gradient descent is biased by its step, more so for "
        "larger steps."
    )


def _uv_reference_slope(beta, alpha):
    """phi'(beta) / phi''(0) for the u*v network: (alpha^2/2) arcsinh(2 beta /
    alpha^2).
    """
    import sympy as sp

    return alpha**2 / 2 * sp.asinh(2 * beta / alpha**2)


def check_uv_potential(phi, beta, alpha) -> None:
    """``phi`` (a sympy expression in ``beta`` and ``alpha``) must be the implicit
    potential of the network beta = u * v trained by gradient flow from u(0) = alpha,
    v(0) = 0.

    A potential is defined up to a positive factor and an additive constant (both leave
    the KKT condition phi'(beta) in the row space of X unchanged), so the check compares
    the normalized slope phi'(beta) / phi''(0) with (alpha^2/2) arcsinh(2 beta /
    alpha^2), by ``sympy.simplify`` and at a few numeric points.

    Args:
        phi: your potential, a sympy expression in beta and alpha.
        beta: the sympy symbol of beta (real).
        alpha: the sympy symbol of alpha (positive).

    Example:
        >>> import sympy as sp
        >>> beta = sp.Symbol("beta", real=True)
        >>> alpha = sp.Symbol("alpha", positive=True)
        >>> l2_potential = beta**2
        >>> exercises.ch05.check_uv_potential(l2_potential, beta, alpha)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    import sympy as sp

    if not isinstance(phi, sp.Basic):
        raise ExerciseCheckError(
            f"expected a sympy expression in beta and alpha, got {type(phi).__name__}"
        )
    for name, symbol in (("beta", beta), ("alpha", alpha)):
        if not isinstance(symbol, sp.Symbol):
            raise ExerciseCheckError(
                f"{name} should be the sympy symbol your expression uses, got "
                f"{type(symbol).__name__}"
            )
    if phi.has(sp.Integral):
        raise ExerciseCheckError(
            "your expression still contains an unevaluated integral: declare alpha "
            "positive and beta real, or integrate by hand (integrate by parts)."
        )
    stray = sorted(map(str, phi.free_symbols - {beta, alpha}))
    if stray:
        raise ExerciseCheckError(
            f"your expression contains the symbols {stray}, which are not the beta and "
            "alpha passed to the check: the potential depends on beta and alpha only."
        )
    b = sp.Symbol("beta_check", real=True)
    a = sp.Symbol("alpha_check", positive=True)
    answer = phi.subs({beta: b, alpha: a}, simultaneous=True)
    curvature = sp.simplify(sp.diff(answer, b, 2).subs(b, 0))
    slope = sp.diff(answer, b) / curvature
    truth = _uv_reference_slope(b, a)
    points = [(0.7, 0.3), (-2.0, 1.5), (5.0, 0.1), (0.01, 2.0)]
    for bv, av in points:
        try:
            c0 = complex(curvature.subs(a, av).evalf())
            got = complex(slope.subs({b: bv, a: av}).evalf())
        except (TypeError, ValueError, ZeroDivisionError):
            c0 = got = complex("nan")
        if not (
            np.isfinite(c0)
            and abs(c0.imag) < 1e-12
            and c0.real > 0
            and np.isfinite(got)
        ):
            raise ExerciseCheckError(
                f"your potential has phi''(0) = {curvature} (at alpha = {av}: "
                f"{c0:.4g}): a potential that "
                "selects an interpolant here is smooth and strictly convex, with 0 < "
                "phi''(0) < infinity."
            )
        want = float(truth.subs({b: bv, a: av}))
        if not (
            abs(got.imag) < 1e-12 and abs(got.real - want) <= 1e-9 * (1 + abs(want))
        ):
            raise ExerciseCheckError(
                f"at beta = {bv}, alpha = {av} your phi'(beta)/phi''(0) is "
                f"{got.real:.6g}, but the flow's "
                f"potential has {want:.6g}. Hint: u^2 - v^2 is conserved, so u = alpha "
                "cosh(w) and "
                "v = alpha sinh(w) with w(t) in the row space of X; write beta in "
                "terms of w and invert."
            )
    residue = sp.simplify(slope - truth)
    note = (
        ""
        if residue == 0
        else " (sympy could not simplify the difference to 0; the numbers agree)"
    )
    return passed(
        "the u*v network from (alpha, 0) minimizes the diagonal network's Q at scale "
        "alpha/2: "
        "phi_alpha(beta) = (alpha^2/4) q(4 beta / alpha^2), up to a constant factor"
        + note
        + "."
    )


def check_flattest_interpolant(flattest_interpolant: Callable) -> None:
    """flattest_interpolant(X, y) -> the beta of the interpolant of smallest tr H.

    For the diagonal network ``beta = theta_+^2 - theta_-^2`` with the loss
    ``(1/2N) sum_n (<beta, x_n> - y_n)^2``, at every interpolant
    ``tr H = (4/N) sum_j c_j (theta_+j^2 + theta_-j^2)`` with ``c_j = sum_n x_nj^2``;
    its minimum over the interpolants is reached at the minimizer of ``sum_j c_j
    abs(beta_j)`` subject to ``X beta = y``.

    Args:
        flattest_interpolant: your function (X, y) -> beta, shape (d,).

    Example:
        The unweighted minimum-l1 interpolant is not it when the columns differ in size:

        >>> exercises.ch05.check_flattest_interpolant(
        ...     lambda X, y: np.asarray(implicit_bias.min_l1_interpolant(X, y)))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(flattest_interpolant, what="flattest_interpolant")
    rng = np.random.default_rng(55)
    for trial in range(3):
        X, y = _sparse_problem(500 + trial, n=8, d=16, k=2)
        X = X * rng.uniform(0.3, 3.0, size=16)  # columns of very different sizes
        y = X @ np.linalg.lstsq(X, y, rcond=None)[0]
        what = f"flattest_interpolant(X, y) on an 8 x 16 design (trial {trial})"
        got = call_numeric(flattest_interpolant, X.copy(), y.copy(), what=what).ravel()
        if got.shape != (16,):
            raise ExerciseCheckError(
                f"{what} should return a vector of shape (16,), got {got.shape}"
            )
        if np.linalg.norm(X @ got - y) > 1e-6 * np.linalg.norm(y):
            raise ExerciseCheckError(
                f"{what}: your beta does not interpolate (X beta != y)."
            )
        c = np.sum(X**2, axis=0)
        want = np.asarray(_ib.min_l1_interpolant(X, y, weights=c))
        if np.sum(c * np.abs(got)) > np.sum(c * np.abs(want)) * (1 + 1e-6) + 1e-9:
            plain = np.asarray(_ib.min_l1_interpolant(X, y))
            hint = (
                "this is the unweighted minimum-l1 interpolant: the sharpness weighs "
                "coordinate j by c_j = sum_n x_nj^2."
                if np.allclose(got, plain, atol=1e-6)
                else "minimize sum_j c_j |beta_j|, c_j = sum_n x_nj^2 "
                "(a linear program)."
            )
            raise ExerciseCheckError(
                f"{what}: tr H is not minimal at your beta. Hint: {hint}"
            )
    return passed(
        "tr H = (4/N) sum_j c_j (theta_+j^2 + theta_-j^2) >= (4/N) sum_j c_j |beta_j| "
        "on the interpolants, with equality when one of theta_+j, theta_-j is 0."
    )
