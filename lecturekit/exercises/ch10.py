"""Checks for the exercises of Chapter 10 (deep linear networks and Bayesian
interpolation).

The references are computed here without ``lecturekit.random_matrices`` or
``lecturekit.deep_linear``: moments of products of independent chi-square factors from
``E chi2_n = n`` and ``E (chi2_n)^2 = n^2 + 2n``, the finite-size second moment of a
sample covariance by Wick's theorem in exact rationals, the evidence of a Gaussian prior
by a direct grid search over the closed-form log density of the data, and the Lyapunov
exponent by integrating the log against the chi-square density (scipy quad).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import scipy.integrate
import scipy.special
import sympy as sp

from . import ExerciseCheckError, as_scalar, call, compare, passed, require_callable

__all__ = [
    "check_fourth_moment",
    "check_covariance_second_moment",
    "check_sphere_variance",
    "check_gaussian_optimal_scale",
    "check_lyapunov",
]


def check_fourth_moment(fourth_moment: Callable) -> None:
    """fourth_moment(widths) must be E||theta||^4 for a deep linear network.

    ``widths = (n0, n1, ..., nL)``; ``W^(l)`` has i.i.d. ``N(0, 1/n_{l-1})`` entries and
    the output width is 1, so ``||theta||^2`` is a product of independent
    ``chi2_{n_k}/n_k``.

    Args:
        fourth_moment: your function of a tuple of positive integers returning a number.

    Example:
        >>> exercises.ch10.check_fourth_moment(
        ...     lambda widths: float(np.prod([1 + 2 / n for n in widths[1:]])))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: fourth_moment(widths) at widths (5,...
    """
    require_callable(fourth_moment, what="fourth_moment")
    for widths in ((5, 8), (3,), (1, 2, 3), (10, 4, 4, 4), (7, 1, 9)):
        # E (chi2_n / n)^2 = (n^2 + 2n) / n^2 for each independent factor
        want = float(np.prod([Fraction(n * n + 2 * n, n * n) for n in widths]))
        got = as_scalar(
            call(fourth_moment, tuple(widths), what="fourth_moment(widths)"),
            what="fourth_moment(widths)",
        )
        compare(
            got,
            want,
            what=f"fourth_moment(widths) at widths {widths}",
            rtol=1e-10,
            hint="One independent factor chi2_{n_k}/n_k per width, the input dimension "
            "n0 included; E (chi2_n)^2 = n^2 + 2n.",
        )
    return passed(
        "E||theta||^4 = prod_{k=0}^{L} (1 + 2/n_k): every width, n0 included, counts."
    )


def check_covariance_second_moment(second_moment: Callable) -> None:
    """second_moment(P, n0) must be E[tr(Sigma^2)] / P for Sigma = X X^T / n0, exactly.

    ``X`` is ``P x n0`` with i.i.d. N(0, 1) entries; return a sympy expression in the
    symbols (or an exact number for integer arguments).

    Args:
        second_moment: your function of two sympy symbols (P, n0).

    Example:
        >>> P, n0 = sp.symbols("P n0", positive=True)
        >>> exercises.ch10.check_covariance_second_moment(lambda P, n0: 1 + P / n0)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: second_moment(P, n0) at P=1, n0=1: ...
    """
    require_callable(second_moment, what="second_moment")
    P, n0 = sp.symbols("P n0", positive=True, integer=True)
    expr = call(second_moment, P, n0, what="second_moment(P, n0)")
    if not isinstance(expr, sp.Basic):
        expr = sp.nsimplify(expr)
    stray = sorted(map(str, sp.sympify(expr).free_symbols - {P, n0}))
    if stray:
        raise ExerciseCheckError(
            f"second_moment(P, n0): your expression contains {stray}; use P and n0."
        )
    for p, n in ((1, 1), (2, 3), (5, 2), (10, 40), (7, 7)):
        # Wick: E sum_{a,b} (sum_i X_ai X_bi)^2 = P n (n + 2) for a = b, P (P - 1) n for
        # a != b
        want = Fraction(p * n * (n + 2) + p * (p - 1) * n, p * n * n)
        got = sp.nsimplify(sp.sympify(expr).subs({P: p, n0: n}))
        if not got.is_number or abs(float(got) - float(want)) > 1e-12:
            raise ExerciseCheckError(
                f"second_moment(P, n0) at P={p}, n0={n}: got {got}, expected {want}. "
                "Expand "
                "tr(Sigma^2) = sum_{a,b} (sum_i X_ai X_bi)^2 / n0^2 and separate a = b "
                "from a != b."
            )
    return passed("E tr(Sigma^2)/P = 1 + P/n0 + 1/n0, which tends to 1 + alpha.")


def check_sphere_variance(sphere_variance: Callable) -> None:
    """sphere_variance(v, k) must be Var(u . v) for u uniform on the unit sphere of R^k.

    Args:
        sphere_variance: your function of a 1-D NumPy array v (length k) and k.

    Example:
        >>> exercises.ch10.check_sphere_variance(lambda v, k: float(v @ v) / (k - 1))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: sphere_variance(v, k) at k = 2: got ...
    """
    require_callable(sphere_variance, what="sphere_variance")
    rng = np.random.default_rng(0)
    for k in (2, 3, 10, 37):
        v = rng.standard_normal(k)
        # by symmetry E u_i u_j = delta_ij / k, so Var(u . v) = |v|^2 / k
        want = float(v @ v) / k
        got = as_scalar(
            call(sphere_variance, v.copy(), k, what="sphere_variance(v, k)"),
            what="sphere_variance(v, k)",
        )
        compare(
            got,
            want,
            what=f"sphere_variance(v, k) at k = {k}",
            rtol=1e-10,
            hint="By symmetry E[u_i u_j] = 0 for i != j, and the E[u_i^2] sum to 1.",
        )
    return passed(
        "Var(u . v) = |v|^2 / k: the predictive variance is |x_perp|^2 E r^2 / (n0 - "
        "P)."
    )


def check_gaussian_optimal_scale(optimal_scale: Callable) -> None:
    """optimal_scale(a, P, n0) must maximize the evidence of the prior N(0, sigma2 I /
    n0).

    Noise-free data ``X theta = Y`` with ``P < n0`` rows of full rank; ``a =
    ||theta_par||^2 = Y^T (X X^T)^{-1} Y``. Return the maximizing ``sigma2``.

    Args:
        optimal_scale: your function of (a, P, n0) returning a number.

    Example:
        >>> exercises.ch10.check_gaussian_optimal_scale(lambda a, P, n0: a)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: optimal_scale(a, P, n0) at (2.0, 3,...
    """
    require_callable(optimal_scale, what="optimal_scale")
    for a, p, n in ((2.0, 3, 12), (0.5, 10, 20), (7.0, 1, 4)):
        # log N(Y; 0, sigma2 X X^T / n0) = -(P/2) log sigma2 - n0 a / (2 sigma2) + const
        grid = np.exp(np.linspace(-8, 8, 160_001))
        log_ev = -0.5 * p * np.log(grid) - n * a / (2 * grid)
        want = float(grid[np.argmax(log_ev)])
        got = as_scalar(
            call(optimal_scale, a, p, n, what="optimal_scale(a, P, n0)"),
            what="optimal_scale(a, P, n0)",
        )
        compare(
            got,
            want,
            what=f"optimal_scale(a, P, n0) at {(a, p, n)}",
            rtol=1e-3,
            hint="Y ~ N(0, sigma2 X X^T / n0); differentiate its log density in "
            "sigma2.",
        )
    return passed("sigma2* = n0 a / P = ||theta_par||^2 / alpha.")


def _log_chi2_integrand(t: float, n: int) -> float:
    """log(t / n) times the chi-square density with n degrees of freedom at t."""
    log_density = (
        (n / 2 - 1) * np.log(t)
        - t / 2
        - n / 2 * np.log(2)
        - scipy.special.gammaln(n / 2)
    )
    return np.log(t / n) * np.exp(log_density)


def check_lyapunov(lyapunov: Callable) -> None:
    """lyapunov(n) must be the a.s. limit of (1/L) log ||W_L ... W_1 x|| for n x n
    Gaussians.

    The matrices have i.i.d. N(0, 1/n) entries and x is a fixed unit vector. The
    reference is (1/2) E log(chi2_n / n), computed by integrating log(t / n) against the
    chi-square density with n degrees of freedom (scipy quad), independently of the
    digamma formula.

    Args:
        lyapunov: your function of a positive integer n returning a number.

    Example:
        >>> exercises.ch10.check_lyapunov(lambda n: -1 / (2 * n))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: lyapunov(n) at n = 1: got -0.5, ...
    """
    require_callable(lyapunov, what="lyapunov")
    for n in (1, 2, 3, 10, 40):
        want = 0.5 * sum(
            scipy.integrate.quad(_log_chi2_integrand, lo, hi, args=(n,), limit=200)[0]
            for lo, hi in ((0, n), (n, np.inf))
        )
        got = as_scalar(call(lyapunov, n, what="lyapunov(n)"), what="lyapunov(n)")
        if abs(got - want) <= 1e-7 * abs(want):
            continue
        wrong = {
            "-1/(2n), the first order of the expansion in 1/n: keep the digamma "
            "function": -1 / (2 * n),
            "E log(chi2_n / n) without the factor 1/2: ||W x|| is the square root of "
            "chi2_n / n": 2 * want,
            "0, the log of the mean: E log Z < log E Z for a random Z (Jensen)": 0.0,
            "-1/(4n), the notes' log-normal scale L/(4n)": -1 / (4 * n),
        }
        for reason, value in wrong.items():
            if abs(got - value) <= 1e-7 * max(1.0, abs(value)):
                raise ExerciseCheckError(
                    f"lyapunov(n) at n = {n}: got {got:.6g}, expected "
                    f"{want:.6g}. You computed {reason}."
                )
        raise ExerciseCheckError(
            f"lyapunov(n) at n = {n}: got {got:.6g}, expected {want:.6g}. "
            "The limit is (1/2) E log(chi2_n / n) = (psi(n/2) + log(2/n)) / 2."
        )
    return passed(
        "lambda_n = (psi(n/2) + log(2/n)) / 2 < 0: at fixed width the norm of a "
        "product "
        "of Gaussian matrices decays exponentially with depth."
    )
