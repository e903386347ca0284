"""Checks for the exercises of Chapter 3 (Hessian sparsity and the transition to
linearity).

Each check compares a learner's answer with an independent reference computed here
(dense Hessians by :func:`lecturekit.hessian.dense_hessian`, sign enumeration for the
(2,2,1)-norm, Lanczos for spectral norms, sympy integrals and a simulation for the
bottleneck) and raises :class:`ExerciseCheckError` with an explanation if it differs.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import sympy as sp

from .. import hessian, sampling
from . import (
    ExerciseCheckError,
    as_scalar,
    call_numeric,
    compare,
    passed,
    require_callable,
)

__all__ = [
    "check_hessian_spectrum",
    "check_norm_221",
    "check_relu_hessian_norm",
    "check_chizat_bach_slope",
    "check_bottleneck_bound",
]

_X = 0.7


def _tanh_net(m: int, seed: int):
    key_w, key_v = jax.random.split(jax.random.key(seed))
    return np.asarray(sampling.standard_normal(key_w, (m,))), np.asarray(
        sampling.standard_normal(key_v, (m,))
    )


def _tanh_neurons_hessian(W: np.ndarray, v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The dense Hessian (:func:`lecturekit.hessian.dense_hessian`) of
    m^{-1/2} sum_i v_i tanh(<W_i, x>) in theta = (W row by row, v)."""
    m = v.size

    def f(p):
        return jnp.sum(p["v"] * jnp.tanh(p["W"] @ x)) / jnp.sqrt(m)

    # ravel order: the leaves sorted by key, "W" (row by row) before "v"
    return np.asarray(
        hessian.dense_hessian(f, {"W": jnp.asarray(W), "v": jnp.asarray(v)})
    )


def check_hessian_spectrum(candidate: Callable) -> None:
    """candidate(v, W, x) -> all m (d + 1) eigenvalues (any order) of the Hessian of
    f(W, v) = m^{-1/2} sum_i v_i tanh(<W_i, x>) with respect to (W, v); W (m, d), x
    (d,).

    Args:
        candidate: your function (v, W, x) -> the m (d + 1) eigenvalues of the Hessian.

    Example:
        >>> def zeros(v, W, x):
        ...     return np.zeros(len(v) * (W.shape[1] + 1))
        >>> exercises.ch03.check_hessian_spectrum(zeros)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: the m (d + 1) = 8 eigenvalues ...
    """
    require_callable(candidate, what="hessian_spectrum")
    for m, d, seed in [(4, 1, 0), (6, 3, 1), (25, 2, 2)]:
        W, v = _tanh_net(m * d, seed)[0].reshape(m, d), _tanh_net(m, seed + 10)[1]
        x = np.linspace(0.9, -0.6, d) if d > 1 else np.array([0.7])
        what = f"hessian_spectrum(v, W, x) with m = {m}, d = {d}"
        got = np.sort(
            np.ravel(call_numeric(candidate, v.copy(), W.copy(), x.copy(), what=what))
        )
        expected = np.sort(np.linalg.eigvalsh(_tanh_neurons_hessian(W, v, x)))
        if got.size == 2 * m and d > 1:
            raise ExerciseCheckError(
                f"{what}: you returned 2m = {2 * m} eigenvalues; the Hessian is "
                f"{m * (d + 1)} x {m * (d + 1)}. "
                "Each neuron's block acts on d + 1 coordinates (W_i, v_i) but has rank "
                "2: the other "
                "d - 1 eigenvalues are zeros. Return them too."
            )
        if got.size == expected.size and np.allclose(
            got / np.sqrt(m), expected, rtol=1e-8, atol=1e-10
        ):
            raise ExerciseCheckError(
                f"{what}: your eigenvalues are sqrt(m) times too large: the network "
                "has "
                "the factor m^(-1/2) in front of the sum."
            )
        compare(
            got,
            expected,
            what=f"the m (d + 1) = {m * (d + 1)} eigenvalues (sorted)",
            rtol=1e-8,
            atol=1e-10,
            hint="neuron i's block is m^(-1/2) [[v_i tanh''(z_i) x x^T, tanh'(z_i) x], "
            "[tanh'(z_i) x^T, 0]] "
            "with z_i = <W_i, x>; restrict it to the plane spanned by (x/|x|, 0) and "
            "(0, 1)",
        )
    return passed(
        "all m (d + 1) eigenvalues match the dense Hessian: 2 per neuron, "
        "(a_i +- sqrt(a_i^2 + 4 c_i^2)) / (2 sqrt m) with a_i = v_i tanh''(z_i) |x|^2, "
        "c_i = tanh'(z_i) |x|, and d - 1 zeros."
    )


def _norm_221_reference(t: np.ndarray) -> float:
    best = 0.0
    for signs in itertools.product([1.0, -1.0], repeat=t.shape[2] - 1):
        s = np.array(signs + (1.0,))
        best = max(best, np.linalg.norm(np.tensordot(t, s, axes=([2], [0])), 2))
    return best


def check_norm_221(candidate: Callable) -> None:
    """candidate(T) -> the (2,2,1)-norm ``sup_{|u|=|v|=1} sum_k |u^T T_k v|`` of a (p,
    q, m) tensor.

    Args:
        candidate: your function T -> the (2,2,1)-norm of a tensor T of shape (p, q, k).

    Example:
        >>> def largest_slice(T):  # a lower bound, not the norm
        ...     return max(np.linalg.norm(T[:, :, k], 2) for k in range(T.shape[2]))
        >>> exercises.ch03.check_norm_221(largest_slice)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ... got ... where ... was ...
    """
    require_callable(candidate, what="norm_221")
    rng = np.random.default_rng(2024)
    cases = [
        rng.normal(size=(3, 4, 5)),
        rng.normal(size=(6, 2, 7)),
        np.einsum("ij,jk->ijk", np.eye(4), np.diag([0.5, -2.0, 1.5, 0.1])),
    ]
    for t in cases:
        got = call_numeric(candidate, t, what=f"norm_221(T) for T of shape {t.shape}")
        compare(
            got,
            _norm_221_reference(t),
            what=f"(2,2,1)-norm of a {t.shape} tensor",
            rtol=1e-8,
            hint="sum_k |c_k| = max over signs s of sum_k s_k c_k; swap the two "
            "suprema",
        )
    return passed(
        "your (2,2,1)-norm agrees with sign enumeration (including a diagonal tensor, "
        "whose norm is max_k |c_k|)."
    )


@functools.cache
def _relu_hessian_norm_reference(m: int, x: float, seed: int) -> float:
    """||H||_2 by Lanczos on Hessian-vector products (computed once per case)."""
    w, v = _tanh_net(m, seed)

    def f(p):
        return jnp.sum(p["v"] * jnp.maximum(p["w"] * x, 0.0)) / jnp.sqrt(m)

    return float(
        hessian.spectral_norm(f, {"w": jnp.asarray(w), "v": jnp.asarray(v)}, tol=1e-10)
    )


def check_relu_hessian_norm(candidate: Callable) -> None:
    """candidate(w, x) -> exact ||H||_2 of f(w, v) = m^{-1/2} sum_i v_i relu(w_i x)
    w.r.t. (w, v).

    Args:
        candidate: your function (w, x) -> the norm of the almost-everywhere Hessian.

    Example:
        A wrong answer (no Hessian at all, as if relu'' = 0 made every block vanish) is
        rejected:

        >>> exercises.ch03.check_relu_hessian_norm(lambda w, x: 0.0)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(candidate, what="relu_hessian_norm")
    for m, x, seed in [(50, 0.9, 3), (2000, -1.3, 4)]:
        w, _ = _tanh_net(m, seed)
        got = call_numeric(
            candidate, w, x, what=f"relu_hessian_norm(w, {x}) with m = {m}"
        )
        compare(
            got,
            _relu_hessian_norm_reference(m, x, seed),
            what=f"||H|| for m = {m}, x = {x}",
            rtol=1e-6,
            hint="relu'' = 0, so each block is [[0, c], [c, 0]] / sqrt(m) with c = "
            "relu'(w_i x) x",
        )
    return passed(
        "the almost-everywhere ReLU Hessian has norm |x| / sqrt(m) as soon as one "
        "neuron is active: "
        "no log factor. It is the Hessian autodiff returns (relu'' = 0): the kinks are "
        "not in it."
    )


def check_chizat_bach_slope(slope: float) -> None:
    """slope: fitted log-log slope of Delta K against the output scale alpha (fixed
    width).

    Args:
        slope: your fitted log-log slope of the kernel change against alpha, a number.

    Example:
        >>> exercises.ch03.check_chizat_bach_slope(-0.5)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: a slope of -0.500 is not close ...
    """
    if hasattr(slope, "slope") and not np.isscalar(slope):
        raise ExerciseCheckError(
            "slope should be a number: you passed the whole fit; take its .slope"
        )
    value = as_scalar(slope, what="slope")
    if not -1.25 <= value <= -0.75:
        raise ExerciseCheckError(
            f"a slope of {value:.3f} is not close to -1: with the rescaled model alpha "
            "(g - g0) the "
            "parameters move by O(1/alpha), so the kernel (a smooth function of them) "
            "changes by O(1/alpha)."
        )
    return passed(
        f"Delta K ~ alpha^{value:.2f}: rescaling linearizes any smooth model, whatever "
        "its width."
    )


# --------------------------------------------------------------------------------------
# Exercise: the bottleneck of Theorem 4.1


def _bottleneck_truth(r: sp.Symbol) -> sp.Expr:
    """E|N(0, E[u^4])| * E[phi(<w, x>)^2] = sqrt(3) sqrt(2/pi) * 3 r^4 / 4, computed by
    sympy.
    """
    g = sp.Symbol("g_check", real=True)
    density = sp.exp(-(g**2) / 2) / sp.sqrt(2 * sp.pi)
    # E[u^4] = 3
    fourth = sp.integrate(g**4 * density, (g, -sp.oo, sp.oo))
    # E|N(0, 3)|
    mean_abs = sp.sqrt(fourth) * 2 * sp.integrate(g * density, (g, 0, sp.oo))
    # E[((w.x)^2/2)^2]
    kernel = sp.integrate((r * g) ** 4 / 4 * density, (g, -sp.oo, sp.oo))
    return sp.simplify(mean_abs * kernel)


def _bottleneck_simulation(
    r: float, m: int = 1000, draws: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """Mean and standard error of |d^2 f/da^2| |h|^2 / m over random networks of width m
    (x = r e_1, so <w_j, x> = r w_j1)."""
    v, u, w1 = np.random.default_rng(seed).normal(size=(3, draws, m))
    vals = (
        np.abs(np.sum(v * u**2, axis=1))
        / np.sqrt(m)
        * np.mean((r * w1) ** 4 / 4, axis=1)
    )
    return float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(draws))


def check_bottleneck_bound(expr: sp.Expr, r: sp.Symbol) -> None:
    """``expr`` must equal ``lim_{m -> inf} E[|d^2 f / da^2| |h|^2 / m]`` as a sympy
    expression in r.

    The network: f = m^{-1/2} sum_k v_k phi(u_k a), a = m^{-1/2} sum_j s_j phi(<w_j,
    x>), phi(z) = z^2 / 2, all parameters N(0, 1), ``|x| = r``. The truth sqrt(6/pi) * 3
    r^4 / 4 is computed here by sympy; the comparison is symbolic, followed by a
    simulation.

    Args:
        expr: your limit, a sympy expression in r.
        r: the sympy symbol your expression uses (positive).

    Example:
        >>> import sympy as sp
        >>> r = sp.Symbol("r", positive=True)
        >>> limit = sp.sqrt(6 / sp.pi) * 3 * r**4 / 4
        >>> exercises.ch03.check_bottleneck_bound(limit, r)
        Correct: lim E||H_ss|| = 3*sqrt(6)*r**4/(4*sqrt(pi)): ...
    """
    if not isinstance(r, sp.Symbol):
        raise ExerciseCheckError(
            f"r should be the sympy symbol your expression uses, got {type(r).__name__}"
        )
    if not isinstance(expr, sp.Basic):
        raise ExerciseCheckError(
            f"expected a sympy expression in r, got {type(expr).__name__}"
        )
    if expr.has(sp.Integral, sp.Piecewise):
        raise ExerciseCheckError(
            "your expression still contains an unevaluated integral or a Piecewise: "
            "declare the "
            "integration variable real and r positive, e.g. sp.symbols('r', "
            "positive=True)."
        )
    stray = sorted(map(str, expr.free_symbols - {r}))
    if stray:
        raise ExerciseCheckError(
            f"your expression contains the symbols {stray}; it should depend on r only "
            "(integrate out the Gaussian variables, and take m -> infinity)."
        )
    truth = _bottleneck_truth(r)
    if sp.simplify(expr - truth) == 0:
        at = 1.3
        mean, err = _bottleneck_simulation(at)
        value = float(expr.subs(r, at))
        # cannot happen when expr == truth; kept as the numeric spot check
        if abs(value - mean) > 5 * err:
            raise ExerciseCheckError(
                f"at r = {at} your formula gives {value:.4f}, a simulation {mean:.4f} "
                f"+- {err:.4f}"
            )
        return passed(
            f"lim E||H_ss|| = {sp.simplify(truth)}: at r = {at} that is {value:.4f}, "
            "and width-1000 "
            f"networks give {mean:.4f} +- {err:.4f}. Width-independent and non-zero: "
            "the Hessian "
            "of a bottleneck network does not vanish as m grows."
        )
    ratio = sp.simplify(expr / truth)
    clues = {
        sp.Rational(1, 3): (
            "E[(w.x)^4] = 3 r^4 for w.x ~ N(0, r^2) "
            "(the Gaussian fourth moment is 3 sigma^4)"
        ),
        1 / sp.sqrt(3): (
            "d^2f/da^2 = m^(-1/2) sum_k v_k u_k^2 has variance E[v^2] E[u^4] = 3, not 1"
        ),
        sp.Integer(4): "phi(z)^2 = z^4 / 4: keep the 1/4",
        sp.sqrt(sp.pi / 2): "E|N(0, s^2)| = s sqrt(2/pi), not s",
        sp.sqrt(sp.pi / 2) / sp.sqrt(3): "E|N(0, s^2)| = s sqrt(2/pi) with s^2 = 3",
    }
    if ratio.free_symbols:
        raise ExerciseCheckError(
            f"your expression is {ratio} times the right one: the power of r is off. "
            "|h|^2 / m "
            "averages phi(<w, x>)^2 = (w.x)^4 / 4, and w.x ~ N(0, r^2)."
        )
    clue = next(
        (text for factor, text in clues.items() if sp.simplify(ratio - factor) == 0),
        None,
    )
    at = 1.3
    raise ExerciseCheckError(
        f"your expression is {ratio} (= {float(ratio):.4f}) times the right one; at r "
        f"= {at} it gives "
        f"{float(expr.subs(r, at)):.4f} instead of {float(truth.subs(r, at)):.4f}. "
        + (
            f"Hint: {clue}."
            if clue
            else (
                "Hint: three factors: E|N(0, 3)| = sqrt(6/pi), and E[phi(w.x)^2] = 3 "
                "r^4/4."
            )
        )
    )
