"""Checks for the exercises of Chapter 1 (networks at initialization, criticality,
NNGP).

Each check compares a learner's answer with an independent reference (a sympy integral,
a closed form, a Monte Carlo estimate with its standard error, or a root found by a
different method) and raises :class:`~lecturekit.exercises.ExerciseCheckError` with an
explanation when they disagree.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np
import scipy.optimize
import sympy as sp

from .. import criticality, gaussian, sampling
from . import (
    ExerciseCheckError,
    as_scalar,
    call,
    call_numeric,
    compare,
    passed,
    require_callable,
)

__all__ = [
    "check_leaky_relu_variance_map",
    "check_linear_kurtosis",
    "check_sign_dual",
    "check_tanh_variances",
    "check_erf_critical_point",
    "check_depth_scale",
]


# --------------------------------------------------------------------------------------
# Symbolic answers


def _symbolic_answer(expr, symbols: dict[str, sp.Symbol], what: str) -> None:
    """Reject an answer that is not a finished sympy expression in exactly the given
    symbols.
    """
    if not isinstance(expr, sp.Basic):
        names = ", ".join(symbols)
        raise ExerciseCheckError(
            f"expected a sympy expression in {names} ({what}), got "
            f"{type(expr).__name__}"
        )
    for name, symbol in symbols.items():
        if not isinstance(symbol, sp.Symbol):
            raise ExerciseCheckError(
                f"{name} should be the sympy symbol your expression uses, got "
                f"{type(symbol).__name__}"
            )
    if expr.has(sp.Integral, sp.Piecewise):
        raise ExerciseCheckError(
            "your expression still contains an unevaluated integral or a Piecewise: "
            "sympy could not "
            "finish the integral. Declare variances positive, e.g. sp.symbols('K', "
            "positive=True), "
            "and the integration variable real."
        )
    given = set(symbols.values())
    stray = sorted(map(str, expr.free_symbols - given))
    if stray:
        twins = set(stray) & {str(s) for s in given}
        raise ExerciseCheckError(
            f"your expression contains the symbols {stray}, which are not among those "
            "passed to the "
            f"check ({', '.join(map(str, symbols.values()))}): pass the symbols your "
            "expression uses, "
            "and integrate out the Gaussian variable."
            + (
                f" ({sorted(twins)} also names a passed symbol created with other "
                "assumptions, e.g. "
                "positive=True in one place and not in the other.)"
                if twins
                else ""
            )
        )


def _explain_difference(expr, truth, point: dict, what: str, hint: str) -> None:
    """Raise an ExerciseCheckError that shows ``expr`` and ``truth`` at a point where
    they differ.
    """
    got, want = (float(sp.N(e.subs(point))) for e in (expr, truth))
    at = ", ".join(f"{k} = {v}" for k, v in point.items())
    raise ExerciseCheckError(
        f"{what}: your expression differs from the right one; at {at} it gives "
        f"{got:.6g} instead "
        f"of {want:.6g}. Hint: {hint}"
    )


# --------------------------------------------------------------------------------------
# Exercise: the variance map of leaky ReLU (derivation, sympy)


def check_leaky_relu_variance_map(
    expr: sp.Expr, K: sp.Symbol, C_w: sp.Symbol, C_b: sp.Symbol, a: sp.Symbol
) -> None:
    """``expr`` must equal V(K) = C_b + C_w E_K[phi(z)^2] for phi(z) = max(z, a z), z ~
    N(0, K).

    The reference is the integral computed here by sympy (both half-lines); the
    comparison is symbolic, sympy.simplify(expr - reference) == 0, after a numeric spot
    check that explains a wrong answer at a point where the two differ.

    Args:
        expr: your V(K), a sympy expression in K, C_w, C_b and a.
        K: the sympy symbols your expression uses (K, C_w, C_b positive; a real).
        C_w: see K.
        C_b: see K.
        a: see K.

    Example:
        >>> import sympy as sp
        >>> K, C_w, C_b = sp.symbols("K C_w C_b", positive=True)
        >>> a = sp.Symbol("a", real=True)
        >>> V = C_b + C_w * (1 + a**2) * K / 2
        >>> exercises.ch01.check_leaky_relu_variance_map(V, K, C_w, C_b, a)
        Correct: V(K) = C_b + C_w (1 + a^2) K / 2; it fixes every K iff ...
    """
    _symbolic_answer(expr, {"K": K, "C_w": C_w, "C_b": C_b, "a": a}, "the variance map")
    z = sp.Symbol("z_check", real=True)
    k = sp.Symbol("K_check", positive=True)
    density = sp.exp(-(z**2) / (2 * k)) / sp.sqrt(2 * sp.pi * k)
    # = K / 2 on each half-line
    half = sp.integrate(z**2 * density, (z, 0, sp.oo)).subs(k, K)
    truth = C_b + C_w * (half + a**2 * half)
    point = {
        K: sp.Rational(3, 2),
        C_w: 2,
        C_b: sp.Rational(1, 10),
        a: sp.Rational(1, 3),
    }
    hint = (
        "split the integral at 0: phi(z)^2 = z^2 for z > 0 and a^2 z^2 for z < 0, and "
        "each "
        "half-line carries half of E_K[z^2] = K."
    )
    if sp.simplify(expr - (C_b + C_w * K / 2)) == 0:
        hint = (
            "this is the ReLU map (a = 0): the negative half-line contributes a^2 "
            "z^2, not 0."
        )
    elif sp.simplify(expr - (C_b + C_w * (1 + a) * K / 2)) == 0:
        hint = "on z < 0, phi(z)^2 = (a z)^2 = a^2 z^2: the slope enters squared."
    if float(sp.N((expr - truth).subs(point))) != 0.0 or sp.simplify(expr - truth) != 0:
        _explain_difference(expr, truth, point, "V(K) for leaky ReLU", hint)
    return passed(
        "V(K) = C_b + C_w (1 + a^2) K / 2; it fixes every K iff C_b = 0 and "
        "C_w = 2 / (1 + a^2) (He initialization for leaky ReLU)."
    )


# --------------------------------------------------------------------------------------
# Exercise: the excess kurtosis of a deep linear network at finite width (derivation,
# sympy)


def check_linear_kurtosis(expr: sp.Expr, n: sp.Symbol, L: sp.Symbol) -> None:
    """``expr`` must be the excess kurtosis of the output of a deep linear network at
    one input.

    L hidden layers of width n, identity activation, C_b = 0, Gaussian weights: given
    the hidden layers the output is N(0, K_hat^(L+1)) with K_hat^(L+1) = K^(1) prod_l
    C_w chi^2_n / n, so the excess kurtosis is 3 (E[(chi^2_n / n)^2]^L - 1) = 3 ((1 +
    2/n)^L - 1). Compared symbolically after a numeric spot check that explains a wrong
    answer.

    Args:
        expr: your excess kurtosis, a sympy expression in n and L.
        n: the width symbol your expression uses (positive integer).
        L: the depth symbol (number of hidden layers; positive integer).

    Example:
        >>> import sympy as sp
        >>> n, L = sp.symbols("n L", positive=True, integer=True)
        >>> exercises.ch01.check_linear_kurtosis(3 * ((1 + 2 / n) ** L - 1), n, L)
        Correct: excess kurtosis 3((1 + 2/n)^L - 1) ~ 6L/n: ...
    """
    _symbolic_answer(expr, {"n": n, "L": L}, "the excess kurtosis")
    truth = 3 * ((1 + 2 / n) ** L - 1)
    classic = [
        (
            6 * L / n,
            "6L/n is only the first order in 1/n; the layers multiply, so keep (1 + "
            "2/n)^L.",
        ),
        (
            3 * (1 + 2 / n) ** L,
            "that is E[f^4] / E[f^2]^2, the kurtosis; the *excess* kurtosis subtracts "
            "the Gaussian value 3.",
        ),
        (
            (1 + 2 / n) ** L - 1,
            "for a Gaussian scale mixture E[f^4] = 3 E[K_hat^2]: the factor 3 is "
            "missing.",
        ),
        (
            3 * ((1 + 5 / n) ** L - 1),
            "1 + 5/n is the ReLU layer factor; a linear layer multiplies "
            "K_hat by chi^2_n / n, whose second moment is 1 + 2/n.",
        ),
        (
            3 * ((1 + 2 / n) ** (L + 1) - 1),
            "K_hat^(1) is deterministic (the input is fixed): only the L "
            "hidden layers contribute a random factor.",
        ),
    ]
    hint = (
        "given the previous layer, (1/n)||z||^2 = K_hat chi^2_n / n; E[(chi^2_n)^2] = "
        "n^2 + 2n; "
        "then use E[f^4] = 3 E[K_hat^2] and E[f^2] = E[K_hat]."
    )
    for wrong, why in classic:
        if sp.simplify(expr - wrong) == 0:
            hint = why
    point = {n: 4, L: 3}
    if (
        abs(float(sp.N((expr - truth).subs(point)))) > 1e-12
        or sp.simplify(expr - truth) != 0
    ):
        _explain_difference(expr, truth, point, "the excess kurtosis", hint)
    return passed(
        "excess kurtosis 3((1 + 2/n)^L - 1) ~ 6L/n: the output is Gaussian only when "
        "L/n -> 0."
    )


# --------------------------------------------------------------------------------------
# Exercise: the dual of the sign function


def _sign_dual_reference(k11, k12, k22):
    return (2 / np.pi) * np.arcsin(k12 / np.sqrt(k11 * k22))


def check_sign_dual(
    sign_dual: Callable, *, seed: int = 0, samples: int = 400_000
) -> None:
    """``sign_dual(k11, k12, k22)`` must return E[sign(u) sign(v)] for (u, v) ~ N(0,
    [[k11, k12], [k12, k22]]).

    Compared with the closed form (2/pi) arcsin(k12 / sqrt(k11 k22)) to 1e-8 and with a
    Monte Carlo estimate (``samples`` Gaussian pairs) to 5 standard errors.

    Args:
        sign_dual: your function (k11, k12, k22) -> E[sign(u) sign(v)] for (u, v)
            centred Gaussian with covariance [[k11, k12], [k12, k22]].
        seed: the seed of the Monte Carlo comparison.
        samples: its number of samples.

    Example:
        A wrong answer (the arcsine law of the correlation k12, forgetting to divide by
        sqrt(k11 k22)) is rejected with a hint:

        >>> exercises.ch01.check_sign_dual(
        ...     lambda k11, k12, k22: 2 / np.pi * np.arcsin(np.clip(k12, -1, 1)))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(sign_dual, what="sign_dual")
    cases = np.array(
        [[1.0, 0.5, 1.0], [0.3, -0.2, 2.0], [2.0, 1.9, 2.5], [0.5, 0.0, 0.7]]
    )
    names = [f"sign_dual({', '.join(f'{k:g}' for k in case)})" for case in cases]
    got = np.array(
        [
            as_scalar(call(sign_dual, *case, what=name), what=name)
            for case, name in zip(cases, names)
        ]
    )
    want = np.array([_sign_dual_reference(*c) for c in cases])
    hint = (
        "sign = 2 * step - 1, and E[step(u) step(v)] = (pi - theta) / (2 pi) with cos "
        "theta = rho."
    )
    rho = cases[:, 1] / np.sqrt(cases[:, 0] * cases[:, 2])
    if np.allclose(
        got, (2 / np.pi) * np.arcsin(np.clip(cases[:, 1], -1, 1)), rtol=1e-8
    ):
        hint = (
            "the dual depends on the correlation rho = k12 / sqrt(k11 k22), not on "
            "k12 itself."
        )
    elif np.allclose(got, (np.pi - np.arccos(rho)) / (2 * np.pi), rtol=1e-8):
        hint = "that is the dual of the step 1{z > 0}; sign(z) = 2 * 1{z > 0} - 1."
    compare(
        got,
        want,
        what="sign_dual against the closed form",
        rtol=1e-8,
        atol=1e-10,
        hint=hint,
    )
    key = jax.random.key(seed)
    g = np.asarray(sampling.standard_normal(key, (samples, 2)))
    for case, value, name in zip(cases, got, names):
        k11, k12, k22 = case
        chol = np.linalg.cholesky(np.array([[k11, k12], [k12, k22]]))
        u, v = (g @ chol.T).T
        prod = np.sign(u) * np.sign(v)
        mean, se = prod.mean(), prod.std(ddof=1) / np.sqrt(samples)
        if abs(value - mean) > 5 * se:
            raise ExerciseCheckError(
                f"{name} = {value:.5f} but Monte Carlo gives {mean:.5f} +- {se:.1e}"
            )
    return passed(
        "sign_dual agrees with the closed form and with Monte Carlo (within 5 standard "
        "errors)."
    )


# --------------------------------------------------------------------------------------
# Exercise: the tanh critical point and the 1/(2l) law


def _tanh_reference(k0: float, depth: int, nodes: int = 200) -> np.ndarray:
    z, w = gaussian.gauss_hermite_rule(nodes)
    out, k = [], k0
    for _ in range(depth):
        k = float(np.sum(w * np.tanh(np.sqrt(k) * z) ** 2))
        out.append(k)
    return np.array(out)


def check_tanh_variances(
    tanh_variances: Callable, *, k0: float = 1.0, depth: int = 2000
) -> None:
    """``tanh_variances(k0, depth)`` must return K^(1..depth) for tanh at (C_b, C_w) =
    (0, 1).

    Compared with an independent NumPy Gauss-Hermite iteration (rtol 1e-7), then 2 l K_l
    is checked to approach 1 as the theory predicts.

    Args:
        tanh_variances: your function (k0, depth) -> the variances K^(1), ...,
            K^(depth), shape (depth,).
        k0: the input variance the check passes.
        depth: the depth it passes.

    Example:
        >>> exercises.ch01.check_tanh_variances(lambda k0, depth: np.full(depth, k0))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: K^(l) for tanh at (C_b, C_w) = ...
    """
    require_callable(tanh_variances, what="tanh_variances")
    what = f"tanh_variances({k0}, {depth})"
    got = call_numeric(tanh_variances, k0, depth, what=what).ravel()
    if got.shape != (depth,):
        raise ExerciseCheckError(
            f"expected {depth} variances K^(1), ..., K^({depth}), got shape {got.shape}"
        )
    want = _tanh_reference(k0, depth)
    hint = "K^(l+1) = E[tanh(sqrt(K^(l)) z)^2] with z ~ N(0, 1); start from K^(0) = k0."
    if np.allclose(got[1:], want[:-1], rtol=1e-7) and got[0] == k0:
        hint = "your list starts with K^(0) = k0; return K^(1), ..., K^(depth) instead."
    compare(
        got, want, what="K^(l) for tanh at (C_b, C_w) = (0, 1)", rtol=1e-7, hint=hint
    )
    ratio = 2 * depth * got[-1]
    if not 0.99 < ratio < 1.02:
        raise ExerciseCheckError(
            f"2 l K_l at l = {depth} is {ratio:.4f}; it should be close to 1"
        )
    return passed(f"K^(l) decays like 1/(2l): 2 l K_l = {ratio:.4f} at l = {depth}.")


# --------------------------------------------------------------------------------------
# Exercise: the edge of chaos of erf at C_b = 0.05 (chi_perp(K*) = 1)


def _erf_critical_weight_variance(c_b: float) -> float:
    """Reference by a different route from lecturekit.criticality: closed forms and one
    root.

    For erf, E_K[erf^2] = (2/pi) arcsin(2K/(1+2K)) and E_K[erf'^2] = (4/pi)/sqrt(1+4K).
    On the line chi_perp = 1, C_w = (pi/4) sqrt(1+4K); inserting this into the
    fixed-point equation gives C_b = K - (sqrt(1+4K)/2) arcsin(2K/(1+2K)), solved for K
    by Brent's method.
    """
    g = lambda k: k - 0.5 * np.sqrt(1 + 4 * k) * np.arcsin(2 * k / (1 + 2 * k)) - c_b
    k_star = scipy.optimize.brentq(g, 1e-14, 100.0, xtol=1e-15)
    return float(np.pi / 4 * np.sqrt(1 + 4 * k_star))


def check_erf_critical_point(sigma_w2: float, *, c_b: float = 0.05) -> None:
    """``sigma_w2`` must be the C_w with chi_perp(K*) = 1 for erf at C_b = ``c_b`` (rtol
    1e-4).

    Args:
        sigma_w2: your weight variance on the edge of chaos, a number.
        c_b: the bias variance of the exercise.

    Example:
        >>> exercises.ch01.check_erf_critical_point(np.pi / 4)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: edge-of-chaos sigma_w^2 of erf at ...
    """
    value = as_scalar(sigma_w2, what="sigma_w2")
    want = _erf_critical_weight_variance(c_b)
    hint = (
        "iterate the variance map to its fixed point K*(C_w) first, then solve "
        "chi_perp(K*) = 1; "
        "at C_b = 0 the answer would be pi/4."
    )
    if np.isclose(value, np.pi / 4, rtol=1e-4):
        hint = (
            f"pi/4 is the answer at sigma_b^2 = 0; with sigma_b^2 = {c_b} the fixed "
            "point K* is positive."
        )
    compare(
        value,
        want,
        what=f"edge-of-chaos sigma_w^2 of erf at sigma_b^2 = {c_b}",
        rtol=1e-4,
        hint=hint,
    )
    return passed(
        f"sigma_w^2 = {value:.6f} puts erf on the edge of chaos at sigma_b^2 = {c_b}."
    )


# --------------------------------------------------------------------------------------
# Exercise: the correlation depth scale in both phases


def _measured_depth_scale(c_w: float, c_b: float) -> float:
    """-1/ln r with r the measured per-layer contraction of the correlation towards its
    limit.

    An independent route: the two-input recursion
    (lecturekit.criticality.kernel_trajectory) from rho_0 = 0.2, run to its limit
    rho_inf (1 in the ordered phase, rho* < 1 in the chaotic one); r = |rho_{l+1} -
    rho_inf| / |rho_l - rho_inf| at the first layer where the gap is < 1e-6.
    """
    # the iteration counts of Chapter 1's own calls, so that their compiled code is
    # reused C_W = w_std², C_b = b_std²
    stds = dict(w_std=float(np.sqrt(c_w)), b_std=float(np.sqrt(c_b)))
    k_star = float(criticality.fixed_point("tanh", iterations=4000, **stds))
    k11, k12, _ = criticality.kernel_trajectory(
        k_star, 0.2 * k_star, k_star, 3000, "tanh", **stds
    )
    rho = np.asarray(k12) / np.asarray(k11)
    gap = np.abs(rho - (1.0 if abs(1.0 - rho[-1]) < 1e-12 else rho[-1]))
    layer = int(np.argmax(gap < 1e-6))
    return float(-1.0 / np.log(gap[layer + 1] / gap[layer]))


def check_depth_scale(depth_scale: Callable, *, c_b: float = 0.05) -> None:
    """``depth_scale(c_w, c_b)`` must return the correlation depth scale xi of a tanh
    network.

    xi = -1 / ln c'(rho_inf), c the correlation map at the fixed variance K*, rho_inf
    its stable fixed point (1 in the ordered phase, rho* < 1 in the chaotic one).
    Checked at C_b = ``c_b`` on both sides of the edge of chaos against the measured
    contraction rate (rtol 1e-3).

    Args:
        depth_scale: your function (c_w, c_b) -> the depth scale of tanh networks.
        c_b: the bias variance of the exercise.

    Example:
        >>> exercises.ch01.check_depth_scale(3.6)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: depth_scale should be a ...
    """
    require_callable(depth_scale, what="depth_scale")
    # ordered, ordered, chaotic, chaotic (edge of chaos C_w ~ 1.761)
    points = (1.0, 1.4, 2.5, 3.0)
    names = [f"depth_scale({c_w}, {c_b})" for c_w in points]
    got = np.array(
        [
            as_scalar(call(depth_scale, c_w, c_b, what=name), what=name)
            for c_w, name in zip(points, names)
        ]
    )
    want = np.array([_measured_depth_scale(c_w, c_b) for c_w in points])
    hint = (
        "find the stable fixed point rho_inf of the correlation map at K*, then "
        "xi = -1 / ln c'(rho_inf) (criticality.correlation_slope gives c')."
    )
    if np.all(got[2:] < 0):
        hint = (
            "in the chaotic phase chi_perp > 1, so -1/ln chi_perp is negative: rho = 1 "
            "is unstable there. "
            "The correlations converge to rho* < 1, and the rate is the slope c'(rho*) "
            "of the map there."
        )
    compare(
        got,
        want,
        what="the depth scale of tanh networks at C_w = 1, 1.4 (ordered), 2.5, 3 "
        "(chaotic)",
        rtol=1e-3,
        hint=hint,
    )
    return passed(
        f"depth scales {np.round(got, 3).tolist()} at C_w = {list(points)}: finite on "
        "both "
        "sides, diverging at the edge of chaos."
    )
