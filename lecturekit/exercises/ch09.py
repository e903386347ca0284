"""Checks for the exercises of Chapter 9 (path counting and finite-width tangent
kernels).

The references are computed here without ``lecturekit.path_counting``: binomial moments
by summing the probability mass function in exact rationals, path counts by enumerating
the paths of small networks, activation probabilities by enumerating sign patterns, and
the one-layer kernel ratio from unit-wise Gaussian moments.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import scipy.integrate
import sympy as sp

from . import ExerciseCheckError, as_scalar, call, compare, passed, require_callable

__all__ = [
    "check_layer_moment",
    "check_paths_through_weight",
    "check_one_layer_ratio",
    "check_active_probability",
    "check_tie_moment",
    "check_depth_limit",
]


def _symbolic(fn: Callable, n: sp.Symbol, *, what: str) -> sp.Expr:
    expr = call(fn, n, what=what)
    if isinstance(expr, (int, float)) and not isinstance(expr, bool):
        expr = sp.nsimplify(expr)
    if not isinstance(expr, sp.Basic):
        raise ExerciseCheckError(
            f"{what} should return a sympy expression in n, got {type(expr).__name__}. "
            "Build it from the argument with sympy operations."
        )
    stray = sorted(map(str, expr.free_symbols - {n}))
    if stray:
        raise ExerciseCheckError(
            f"{what}: your expression contains the symbols {stray}; use only n."
        )
    return expr


def _binomial_mean(n: int, g: Callable[[int], Fraction]) -> Fraction:
    """E[g(K)] for K ~ Binomial(n, 1/2), exactly."""
    return sum(
        (Fraction(int(sp.binomial(n, k)), 2**n) * g(k) for k in range(n + 1)),
        Fraction(0),
    )


def _compare_symbolic(
    expr: sp.Expr,
    n: sp.Symbol,
    truth: Callable[[int], Fraction],
    *,
    what: str,
    hint: str,
) -> None:
    for n_val in (1, 2, 3, 5, 8, 13):
        got = sp.nsimplify(expr.subs(n, n_val))
        want = truth(n_val)
        if not got.is_number or abs(float(got) - float(want)) > 1e-12 * max(
            1.0, abs(float(want))
        ):
            raise ExerciseCheckError(
                f"{what} at n={n_val}: got {got}, expected {want}. {hint}"
            )


def check_layer_moment(layer_moment: Callable) -> None:
    """layer_moment(n) must be E[((2/n) chi^2_K)^2] for K ~ Binomial(n, 1/2), in sympy.

    Args:
        layer_moment: your function of a sympy symbol n returning the expression.

    Example:
        >>> exercises.ch09.check_layer_moment(lambda n: 1 + 2 / n)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: layer_moment(n) at n=1: got 3, ...
    """
    require_callable(layer_moment, what="layer_moment")
    n = sp.Symbol("n", positive=True, integer=True)
    expr = _symbolic(layer_moment, n, what="layer_moment(n)")
    # E[(chi^2_K)^2 | K] = K^2 + 2K (mean K, variance 2K); then average over the
    # binomial
    truth = lambda m: (
        Fraction(4, m**2) * _binomial_mean(m, lambda k: Fraction(k * k + 2 * k))
    )
    _compare_symbolic(
        expr,
        n,
        truth,
        what="layer_moment(n)",
        hint="Condition on K: E[(chi^2_K)^2 | K] = K^2 + 2K; then use E[K] = n/2 and "
        "E[K^2] = n/4 + n^2/4.",
    )
    return passed(
        "E[((2/n) chi^2_K)^2] = 1 + 5/n, so a layer multiplies the fourth moment by 1 "
        "+ 5/n."
    )


def check_paths_through_weight(paths_through: Callable) -> None:
    """paths_through(widths, k) must count the paths through one weight of layer k.

    widths = (n_0, n_1, ..., n_L, n_out); a path picks one unit in every layer, input
    and output included; layer k (1 <= k <= L + 1) holds the weights from layer k - 1 to
    layer k.

    Args:
        paths_through: your function (widths, k) -> an integer.

    Example:
        >>> exercises.ch09.check_paths_through_weight(
        ...     lambda widths, k: int(np.prod(widths)) // widths[-2])
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: paths through a weight of layer 1 ...
    """
    require_callable(paths_through, what="paths_through")
    for widths in ((2, 3, 1), (3, 2, 4, 1), (2, 3, 2, 3, 2)):
        paths = np.array(list(itertools.product(*(range(w) for w in widths))))
        for k in range(1, len(widths)):
            want = int(np.sum((paths[:, k - 1] == 0) & (paths[:, k] == 0)))
            got = as_scalar(
                call(paths_through, tuple(widths), k, what="paths_through(widths, k)"),
                what="paths_through(widths, k)",
            )
            if got != want:
                raise ExerciseCheckError(
                    f"paths through a weight of layer {k} for widths {widths}: got "
                    f"{got:g}, counted "
                    f"{want}. A weight of layer k fixes the units of layers k - 1 and "
                    "k; every other "
                    "layer is free."
                )
    return passed("a weight of layer k lies on n_0 ... n_{L+1} / (n_{k-1} n_k) paths.")


def check_one_layer_ratio(one_layer_ratio: Callable) -> None:
    """one_layer_ratio(n) must be E[Theta^2] / E[Theta]^2 for one hidden layer of width
    n.

    The network of Chapter 9 (bias-free ReLU, every layer scaled sqrt(2 / fan-in),
    Gaussian weights, both layers trained), at one input.

    Args:
        one_layer_ratio: your function of a sympy symbol n returning the expression.

    Example:
        >>> exercises.ch09.check_one_layer_ratio(lambda n: sp.exp(5 / n))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: one_layer_ratio(n) at n=1: got ...
    """
    require_callable(one_layer_ratio, what="one_layer_ratio")
    n = sp.Symbol("n", positive=True, integer=True)
    expr = _symbolic(one_layer_ratio, n, what="one_layer_ratio(n)")
    # Independent of the chi^2_{2K} law the exercise derives: Theta is proportional to a
    # sum of n i.i.d. unit terms X = 1{g > 0} (g^2 + v^2), g, v standard normal (g the
    # unit's pre-activation, v its readout weight). Given g > 0, g^2 has its
    # unconditional law, so E[X] = (1 + 1) / 2 and E[X^2] = (E g^4 + 2 E g^2 E v^2 + E
    # v^4) / 2 with E g^4 = 3.
    mean_x, second_x = Fraction(1 + 1, 2), Fraction(3 + 2 + 3, 2)
    truth = lambda m: (m * second_x + m * (m - 1) * mean_x**2) / (m * mean_x) ** 2
    _compare_symbolic(
        expr,
        n,
        truth,
        what="one_layer_ratio(n)",
        hint="Write both layers' parts unit by unit: each active unit contributes the "
        "square of one Gaussian from each layer.",
    )
    return passed(
        "for one hidden layer E[Theta^2]/E[Theta]^2 = 1 + 3/n, below e^{5/n}."
    )


def check_active_probability(active_probability: Callable) -> None:
    """active_probability(x) must be P(sum_p s_p x_p > 0) for independent random signs
    s_p.

    The probability that a first-layer unit with Rademacher (+-1) weights is active
    (strictly positive pre-activation) at the input x.

    Args:
        active_probability: your function of a 1-D NumPy array x returning a number.

    Example:
        >>> exercises.ch09.check_active_probability(lambda x: 0.5)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: active_probability(x) at x = [ 3...
    """
    require_callable(active_probability, what="active_probability")
    for x in (
        [3.0, -4.0, 5.0, -6.0],
        [1.0, 2.0, 4.0, 8.0],
        [1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0],
        [2.0, -1.0, -1.0],
        [0.3, -1.7, 2.2],
    ):
        x = np.array(x)
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=len(x))))
        want = float(np.mean(signs @ x > 0))
        got = as_scalar(
            call(active_probability, x.copy(), what="active_probability(x)"),
            what="active_probability(x)",
        )
        compare(
            got,
            want,
            what=f"active_probability(x) at x = {x}",
            rtol=1e-12,
            atol=1e-12,
            hint="Enumerate the 2^d sign vectors; a pre-activation exactly 0 is "
            "inactive.",
        )
    return passed(
        "ties (pre-activation exactly 0) make a Rademacher unit active with "
        "probability < 1/2."
    )


def check_tie_moment(tie_moment: Callable) -> None:
    """tie_moment(x) must be E[(df/dx_1)^2] for one hidden layer with Rademacher
    weights.

    The network of Chapter 9 (bias-free ReLU, every layer scaled sqrt(2 / fan-in)) with
    one hidden layer and independent +-1 weights, at the input x; n_0 = len(x). The
    reference
    enumerates the sign patterns of one hidden unit: every path weight squares to
    (2 / n_0)(2 / n_1), the cross terms vanish, so the moment is (4 / n_0) P(active).

    Args:
        tie_moment: your function of a 1-D NumPy array x returning a number.

    Example:
        >>> exercises.ch09.check_tie_moment(lambda x: 2 / len(x))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: tie_moment(x) at x = [1. 1. 1. 1.]:...
    """
    require_callable(tie_moment, what="tie_moment")
    for x in (
        [1.0, 1.0, 1.0, 1.0],
        [3.0, -4.0, 5.0, -6.0],
        [1.0, 1.0],
        [2.0, -1.0, -1.0],
        [0.3, -1.7, 2.2],
        [1.0, 2.0, 4.0, 8.0],
    ):
        x = np.array(x)
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=len(x))))
        want = 4 / len(x) * float(np.mean(signs @ x > 0))
        got = as_scalar(
            call(tie_moment, x.copy(), what="tie_moment(x)"), what="tie_moment(x)"
        )
        compare(
            got,
            want,
            what=f"tie_moment(x) at x = {x}",
            rtol=1e-12,
            atol=1e-12,
            hint="Square the path sum: the cross terms vanish and every path weight "
            "squares "
            "to (2/n_0)(2/n_1), so the moment is (4/n_0) P(active); a tie is inactive.",
        )
    return passed(
        "E[(df/dx_1)^2] = (4/n_0) P(active): 5/16 at x = (1, 1, 1, 1), and 2/n_0 "
        "exactly when no signed sum of the inputs vanishes."
    )


def check_depth_limit(depth_limit: Callable) -> None:
    """depth_limit(beta) must be the layer-factor model's ratio as L -> infinity at
    fixed beta.

    The model of Chapter 9, section 9.5, with L hidden layers of width n = L / beta: the
    pair of layer parts (k, k') at distance d = abs(k - k') contributes
    (1 + 5/n)^(L - d) (1 + 1/n)^d, and the ratio is the average over the (L + 1)^2
    pairs. The reference integrates the limit 2 int_0^1 (1 - u) exp(5 beta (1 - u) +
    beta u) du numerically (scipy quad).

    Args:
        depth_limit: your function of a float beta > 0 returning a number.

    Example:
        >>> exercises.ch09.check_depth_limit(lambda beta: float(np.exp(5 * beta)))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: depth_limit(beta) at beta = 0.05: ...
    """
    require_callable(depth_limit, what="depth_limit")
    for beta in (0.05, 0.25, 1.0, 2.0):
        want = scipy.integrate.quad(
            lambda u, b: 2 * (1 - u) * np.exp(5 * b - 4 * b * u),
            0,
            1,
            args=(beta,),
            epsabs=0,
            epsrel=1e-13,
        )[0]
        # forward and backward factors of a layer taken as independent
        no_sharing = scipy.integrate.quad(
            lambda u, b: 2 * (1 - u) * np.exp(5 * b * (1 - u)), 0, 1, args=(beta,)
        )[0]
        got = as_scalar(
            call(depth_limit, beta, what="depth_limit(beta)"), what="depth_limit(beta)"
        )
        if abs(got - want) <= 1e-8 * want:
            continue
        wrong = {
            "exp(5 beta), the bound: every pair at its largest. The layers between the "
            "two "
            "parts of a pair contribute 1 + 1/n, not 1 + 5/n": np.exp(5 * beta),
            "1 + 11 beta / 3, the first order only: the limit keeps every power of "
            "beta": 1 + 11 * beta / 3,
            "the layers between the two parts count 1 instead of 1 + 1/n: the forward "
            "and "
            "backward factors of a layer share its K active units, E[F B] = 1 + "
            "1/n": no_sharing,
        }
        for reason, value in wrong.items():
            if abs(got - value) <= 1e-6 * value:
                raise ExerciseCheckError(
                    f"depth_limit(beta) at beta = {beta:g}: got {got:.6g}, "
                    f"expected {want:.6g}. You computed {reason}."
                )
        raise ExerciseCheckError(
            f"depth_limit(beta) at beta = {beta:g}: got {got:.6g}, expected "
            f"{want:.6g}. With "
            "u = |s - t|, the pair term tends to exp(5 beta (1 - u) + beta u), and the "
            "average over s, t in [0, 1] is 2 int_0^1 (1 - u) g(u) du."
        )
    return passed(
        "the model's ratio tends to e^{5 beta} 2 (a - 1 + e^{-a}) / a^2 with a = 4 "
        "beta: "
        "below e^{5 beta}, and close to it only for small beta."
    )
