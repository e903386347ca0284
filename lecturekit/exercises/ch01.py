"""Checks for the exercises of Chapter 1 (networks at initialization, criticality, NNGP).

Each check compares a learner's answer with an independent reference (a sympy integral,
a closed form, a Monte Carlo estimate with its standard error, or a root found by a
different method) and raises :class:`~lecturekit.exercises.ExerciseCheckError` with an
explanation when they disagree.
"""

from __future__ import annotations

from typing import Callable

import jax
import numpy as np
import scipy.optimize
import scipy.special
import sympy as sp

from . import ExerciseCheckError, as_scalar, call, call_numeric, compare, passed, require_callable


# --------------------------------------------------------------------------------------
# Exercise: the ReLU variance recursion (derivation, sympy)


def check_relu_variance_recursion(expr: sp.Expr, K: sp.Symbol, C_w: sp.Symbol, C_b: sp.Symbol) -> None:
    """``expr`` must equal C_b + C_w E_K[max(z, 0)^2], z ~ N(0, K), as a sympy expression.

    The reference is the integral computed here by sympy; the comparison is symbolic.
    """
    if not isinstance(expr, sp.Basic):
        raise ExerciseCheckError(f"expected a sympy expression in K, C_w, C_b, got {type(expr).__name__}")
    for name, symbol in (("K", K), ("C_w", C_w), ("C_b", C_b)):
        if not isinstance(symbol, sp.Symbol):
            raise ExerciseCheckError(f"{name} should be the sympy symbol your expression uses, got "
                                     f"{type(symbol).__name__}")
    if expr.has(sp.Integral, sp.Piecewise):
        raise ExerciseCheckError(
            "your expression still contains an unevaluated integral or a Piecewise: sympy could not "
            "finish the integral. Declare K positive, e.g. sp.symbols('K', positive=True), and the "
            "integration variable real."
        )
    stray = sorted(map(str, expr.free_symbols - {K, C_w, C_b}))
    if stray:
        twins = set(stray) & {str(K), str(C_w), str(C_b)}
        raise ExerciseCheckError(
            f"your expression contains the symbols {stray}, which are not the K, C_w, C_b passed to the "
            "check: pass the symbols your expression uses, and integrate out z."
            + (f" ({sorted(twins)} also names a passed symbol created with other assumptions, e.g. "
               "positive=True in one place and not in the other.)" if twins else "")
        )
    z = sp.Symbol("z_check", real=True)
    k = sp.Symbol("K_check", positive=True)
    density = sp.exp(-(z**2) / (2 * k)) / sp.sqrt(2 * sp.pi * k)
    reference = C_b + C_w * sp.integrate(z**2 * density, (z, 0, sp.oo)).subs(k, K)
    residue = sp.simplify(expr - reference)
    if residue != 0:
        raise ExerciseCheckError(
            f"your recursion differs from C_b + C_w E_K[relu(z)^2] by {residue}. Hint: only half of the "
            "Gaussian mass is on z > 0, and E[z^2] = K there is split evenly by symmetry."
        )
    return passed("K^(l+1) = C_b + C_w K^(l) / 2; C_w = 2, C_b = 0 keeps every K fixed (He initialization).")


# --------------------------------------------------------------------------------------
# Exercise: the erf dual activation


def _erf_dual_reference(k11, k12, k22):
    return (2 / np.pi) * np.arcsin(2 * k12 / np.sqrt((1 + 2 * k11) * (1 + 2 * k22)))


def check_erf_dual(erf_dual: Callable, *, seed: int = 0, samples: int = 400_000) -> None:
    """``erf_dual(k11, k12, k22)`` must return E[erf(u) erf(v)] for (u, v) ~ N(0, [[k11, k12], [k12, k22]]).

    Compared with the closed form (2/pi) arcsin(2 k12 / sqrt((1 + 2 k11)(1 + 2 k22))) to 1e-8 and
    with a Monte Carlo estimate (``samples`` Gaussian pairs) to 5 standard errors.
    """
    require_callable(erf_dual, what="erf_dual")
    cases = np.array([[1.0, 0.5, 1.0], [0.3, -0.2, 2.0], [2.0, 1.9, 2.5], [0.5, 0.0, 0.7]])
    names = [f"erf_dual({', '.join(f'{k:g}' for k in case)})" for case in cases]
    got = np.array([as_scalar(call(erf_dual, *case, what=name), what=name) for case, name in zip(cases, names)])
    compare(got, [_erf_dual_reference(*c) for c in cases], what="erf_dual against the closed form",
            rtol=1e-8, atol=1e-10,
            hint="apply Price's theorem: d/dk12 E[erf(u)erf(v)] = (4/pi) E[exp(-u^2 - v^2)].")
    key = jax.random.key(seed)
    g = np.asarray(jax.random.normal(key, (2 * samples,))).reshape(samples, 2)  # a flat draw compiles faster
    for case, value, name in zip(cases, got, names):
        k11, k12, k22 = case
        chol = np.linalg.cholesky(np.array([[k11, k12], [k12, k22]]))
        u, v = (g @ chol.T).T
        prod = scipy.special.erf(u) * scipy.special.erf(v)
        mean, se = prod.mean(), prod.std(ddof=1) / np.sqrt(samples)
        if abs(value - mean) > 5 * se:
            raise ExerciseCheckError(
                f"{name} = {value:.5f} but Monte Carlo gives {mean:.5f} +- {se:.1e}"
            )
    return passed("erf_dual agrees with the closed form and with Monte Carlo (within 5 standard errors).")


# --------------------------------------------------------------------------------------
# Exercise: the tanh critical point and the 1/(2l) law


def _tanh_reference(k0: float, depth: int, nodes: int = 200) -> np.ndarray:
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / np.sqrt(2 * np.pi)
    out, k = [], k0
    for _ in range(depth):
        k = float(np.sum(w * np.tanh(np.sqrt(k) * z) ** 2))
        out.append(k)
    return np.array(out)


def check_tanh_variances(tanh_variances: Callable, *, k0: float = 1.0, depth: int = 2000) -> None:
    """``tanh_variances(k0, depth)`` must return K^(1..depth) for tanh at (C_b, C_w) = (0, 1).

    Compared with an independent NumPy Gauss-Hermite iteration (rtol 1e-7), then 2 l K_l is
    checked to approach 1 as the theory predicts.
    """
    require_callable(tanh_variances, what="tanh_variances")
    what = f"tanh_variances({k0}, {depth})"
    got = call_numeric(tanh_variances, k0, depth, what=what).ravel()
    if got.shape != (depth,):
        raise ExerciseCheckError(f"expected {depth} variances K^(1), ..., K^({depth}), got shape {got.shape}")
    want = _tanh_reference(k0, depth)
    hint = "K^(l+1) = E[tanh(sqrt(K^(l)) z)^2] with z ~ N(0, 1); start from K^(0) = k0."
    if np.allclose(got[1:], want[:-1], rtol=1e-7) and got[0] == k0:
        hint = "your list starts with K^(0) = k0; return K^(1), ..., K^(depth) instead."
    compare(got, want, what="K^(l) for tanh at (C_b, C_w) = (0, 1)", rtol=1e-7, hint=hint)
    ratio = 2 * depth * got[-1]
    if not 0.99 < ratio < 1.02:
        raise ExerciseCheckError(f"2 l K_l at l = {depth} is {ratio:.4f}; it should be close to 1")
    return passed(f"K^(l) decays like 1/(2l): 2 l K_l = {ratio:.4f} at l = {depth}.")


# --------------------------------------------------------------------------------------
# Exercise: the critical weight variance of erf at C_b = 0.05


def erf_critical_weight_variance(c_b: float) -> float:
    """Reference by a different route from lecturekit.criticality: closed forms and one root.

    For erf, E_K[erf^2] = (2/pi) arcsin(2K/(1+2K)) and E_K[erf'^2] = (4/pi)/sqrt(1+4K). On the
    line chi_perp = 1, C_w = (pi/4) sqrt(1+4K); inserting this into the fixed-point equation
    gives C_b = K - (sqrt(1+4K)/2) arcsin(2K/(1+2K)), solved for K by Brent's method.
    """
    g = lambda k: k - 0.5 * np.sqrt(1 + 4 * k) * np.arcsin(2 * k / (1 + 2 * k)) - c_b  # noqa: E731
    k_star = scipy.optimize.brentq(g, 1e-14, 100.0, xtol=1e-15)
    return float(np.pi / 4 * np.sqrt(1 + 4 * k_star))


def check_erf_critical_point(sigma_w2: float, *, c_b: float = 0.05) -> None:
    """``sigma_w2`` must be the C_w with chi_perp(K*) = 1 for erf at C_b = ``c_b`` (rtol 1e-4)."""
    value = as_scalar(sigma_w2, what="sigma_w2")
    want = erf_critical_weight_variance(c_b)
    hint = ("iterate the variance map to its fixed point K*(C_w) first, then solve chi_perp(K*) = 1; "
            "at C_b = 0 the answer would be pi/4.")
    if np.isclose(value, np.pi / 4, rtol=1e-4):
        hint = f"pi/4 is the answer at sigma_b^2 = 0; with sigma_b^2 = {c_b} the fixed point K* is positive."
    compare(value, want, what=f"critical sigma_w^2 of erf at sigma_b^2 = {c_b}", rtol=1e-4, hint=hint)
    return passed(f"sigma_w^2 = {value:.6f} puts erf on the edge of chaos at sigma_b^2 = {c_b}.")
