"""Checks for the exercises of chapter 2 (the neural tangent kernel).

Each check compares the learner's function with a reference computed here by an
independent route (quadrature, Runge-Kutta integration of the ODE, a sympy integral, a
primal solve with numpy) and raises :class:`ExerciseCheckError` with a hint when they
disagree.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import sympy as sp

from .. import gaussian, regression
from . import ExerciseCheckError, call, call_numeric, compare, passed, require_callable

__all__ = [
    "check_sine_ntk",
    "check_gradient_flow",
    "check_flip_probability",
    "check_kernel_ridge",
    "check_readout_ensemble",
]


def check_sine_ntk(sine_ntk: Callable) -> None:
    """sine_ntk(xi): infinite-width NTK of f = m^-1/2 sum a_i sin(w_i.x) on the unit
    sphere.

    Reference: E[sin u sin v] + xi E[cos u cos v] for standard Gaussians with
    correlation xi, by 80 x 80 Gauss-Hermite quadrature (accurate to ~1e-13 for these
    smooth functions).

    Args:
        sine_ntk: your function xi -> Theta(xi), applied to an array of correlations in
            [-1, 1].

    Example:
        A wrong answer (the dual of sin alone, without the xi E[cos u cos v] term) is
        rejected with a hint:

        >>> exercises.ch02.check_sine_ntk(lambda xi: np.exp(-1) * np.sinh(xi))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(sine_ntk, what="sine_ntk")
    xi = np.linspace(-1.0, 1.0, 41)
    z, w = gaussian.gauss_hermite_rule(80)
    z1, z2, ww = z[:, None], z[None, :], w[:, None] * w[None, :]
    ref = []
    for c in xi:
        u, v = z1, c * z1 + np.sqrt(max(1 - c * c, 0.0)) * z2
        ref.append(
            np.sum(ww * np.sin(u) * np.sin(v)) + c * np.sum(ww * np.cos(u) * np.cos(v))
        )
    got = call_numeric(sine_ntk, xi, what="sine_ntk(xi)")
    compare(
        got,
        np.array(ref),
        what="sine NTK on [-1, 1]",
        rtol=1e-8,
        atol=1e-10,
        hint="NTK = dual(sin)(xi) + xi * dual(cos)(xi); write sin u sin v = (cos(u-v) "
        "- cos(u+v))/2 "
        "and use E[cos(s z)] = exp(-s^2/2).",
    )
    return passed(
        "Theta(xi) = exp(-1) (sinh xi + xi cosh xi) matches quadrature on [-1, 1]."
    )


def _flow_problem():
    """The kernel, labels and initial outputs on which gradient flow is checked (fresh
    arrays).
    """
    rng = np.random.default_rng(2024)
    n, p, n_test = 5, 9, 4
    feats = rng.normal(size=(n + n_test, p)) / np.sqrt(p)
    big = feats @ feats.T
    y, f0s, f0t = (
        rng.normal(size=n),
        rng.normal(size=n) * 0.3,
        rng.normal(size=n_test) * 0.3,
    )
    return big[:n, :n], big[n:, :n], y, f0s, f0t, 7.0


@functools.lru_cache(maxsize=1)
def _flow_reference() -> np.ndarray:
    """f_t on the test points by classical Runge-Kutta with 4000 steps (computed
    once).
    """
    K, k_test, y, f0s, f0t, t_end = _flow_problem()
    n, steps = K.shape[0], 4000
    h = t_end / steps
    state = np.concatenate([f0s, f0t])

    def rhs(s):
        r = s[:n] - y
        return -np.concatenate([K @ r, k_test @ r]) / n

    for _ in range(steps):
        a = rhs(state)
        b = rhs(state + h / 2 * a)
        c = rhs(state + h / 2 * b)
        e = rhs(state + h * c)
        state = state + h / 6 * (a + 2 * b + 2 * c + e)
    state = state[n:]
    state.flags.writeable = False
    return state


def check_gradient_flow(flow_predictor: Callable) -> None:
    """flow_predictor(K, k_test, y, f0_train, f0_test, t) -> f_t on the test points.

    Reference: the ODE d f_S/dt = -(1/n) K (f_S - y), d f_x/dt = -(1/n) k(x, S)(f_S - y)
    integrated by classical Runge-Kutta with 4000 steps (error ~1e-12 here).

    Args:
        flow_predictor: your function (K, k_test, y, f0_train, f0_test, t) -> f_t on the
            test points.

    Example:
        >>> def no_training(K, k_test, y, f0, f0_test, t):
        ...     return f0_test
        >>> exercises.ch02.check_gradient_flow(no_training)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: f_t on the test points: got ...
    """
    require_callable(flow_predictor, what="flow_predictor")
    K, k_test, y, f0s, f0t, t_end = _flow_problem()
    n = K.shape[0]
    got = call_numeric(
        flow_predictor, K, k_test, y, f0s, f0t, t_end, what="flow_predictor(...)"
    )
    # unchanged, even if the learner's code wrote into its inputs
    K, k_test, y, f0s, f0t, t_end = _flow_problem()
    wrong = f0t + k_test @ np.linalg.solve(
        K, (np.eye(n) - _expm_sym(-t_end * K)) @ (y - f0s)
    )
    hint = "the exponent is -t K / n for the loss (1/2n) sum (f - y)^2"
    if got.shape == wrong.shape and np.allclose(got, wrong, rtol=1e-8):
        hint = "your result is the formula with exp(-t K): " + hint
    compare(
        got,
        _flow_reference(),
        what="f_t on the test points",
        rtol=1e-7,
        atol=1e-9,
        hint=hint,
    )
    return passed(
        "your f_t solves the gradient-flow ODE (checked against Runge-Kutta "
        "integration)."
    )


def _expm_sym(a: np.ndarray) -> np.ndarray:
    mu, u = np.linalg.eigh(a)
    return (u * np.exp(mu)) @ u.T


def check_flip_probability(flip_probability: Callable) -> None:
    """flip_probability(Delta) -> sympy expression: ``P(|w.x| <= Delta)`` for w ~ N(0,
    I), ``||x|| = 1``.

    ``Delta`` is passed as a positive sympy Symbol. The reference is erf(Delta /
    sqrt(2)) (the mass of N(0, 1) on [-Delta, Delta]); the comparison is symbolic
    (``sympy.simplify`` of the difference, rewritten with erf), with a numeric spot
    check at Delta = 0.3, and classic mistakes are named.

    Args:
        flip_probability: your function Delta -> P(abs(w.x) <= Delta), a sympy
            expression in the sympy symbol Delta it receives.

    Example:
        >>> import sympy as sp
        >>> exercises.ch02.check_flip_probability(lambda D: sp.erf(D / sp.sqrt(2)))
        Correct: P(|w.x| <= Delta) = erf(Delta / sqrt(2)) <= Delta sqrt(2 / pi).
    """
    require_callable(flip_probability, what="flip_probability")
    delta = sp.Symbol("Delta", positive=True)
    got = call(flip_probability, delta, what="flip_probability(Delta)")
    if got is None:
        raise ExerciseCheckError(
            "flip_probability(Delta): got None. Does your function end with a `return` "
            "statement?"
        )
    if isinstance(got, (str, bytes)) or not isinstance(got, (sp.Basic, int, float)):
        raise ExerciseCheckError(
            "flip_probability(Delta) should return a sympy expression in Delta, got "
            f"{type(got).__name__}"
        )
    got = sp.sympify(got)
    if got.has(sp.Integral):
        raise ExerciseCheckError(
            "flip_probability(Delta) still contains an unevaluated integral: declare "
            "the integration "
            "variable real (sp.Symbol('u', real=True)) so that sympy can finish it."
        )
    stray = sorted(map(str, got.free_symbols - {delta}))
    if stray:
        raise ExerciseCheckError(
            f"flip_probability(Delta) contains the symbols {stray}: it must depend on "
            "the Delta passed "
            "to it only (w.x is a standard Gaussian for a unit x, whatever the "
            "dimension)."
            + (
                " (Your 'Delta' is a new symbol, not the argument: use the argument of "
                "your function.)"
                if "Delta" in stray
                else ""
            )
        )
    truth = sp.erf(delta / sp.sqrt(2))
    # erfc, erfi, ... written with erf
    residue = sp.simplify((got - truth).rewrite(sp.erf))
    value = complex(got.subs(delta, sp.Rational(3, 10)).evalf())
    expected = float(truth.subs(delta, sp.Rational(3, 10)).evalf())
    if residue == 0 and abs(value - expected) < 1e-12:
        return passed("P(|w.x| <= Delta) = erf(Delta / sqrt(2)) <= Delta sqrt(2 / pi).")
    hints = [
        (
            truth / 2,
            "that is P(0 <= w.x <= Delta), one side only: the sign can change from "
            "either side of 0",
        ),
        (
            delta * sp.sqrt(2 / sp.pi),
            "that is the upper bound Delta sqrt(2/pi) (the density is at most "
            "1/sqrt(2 pi)), not the probability itself",
        ),
        (
            sp.erf(delta),
            "erf(Delta) is P(|u| <= Delta) for u ~ N(0, 1/2); w.x has variance ||x||^2 "
            "= 1",
        ),
        (1 - truth, "that is the probability that the sign can NOT change"),
    ]
    hint = "integrate the N(0, 1) density from -Delta to Delta"
    for wrong, why in hints:
        if sp.simplify((got - wrong).rewrite(sp.erf)) == 0:
            hint = why
            break
    raise ExerciseCheckError(
        f"flip_probability(Delta) = {got} differs from the probability: at Delta = 0.3 "
        "it gives "
        f"{value.real:.6f}, the probability is {expected:.6f}. Hint: {hint}."
    )


def check_kernel_ridge(krr_predict: Callable) -> None:
    """krr_predict(K, k_test, y, ridge) -> predictions k(X_test, S)(K + ridge I)^-1 y.

    Reference: primal ridge regression on explicit random features, solved with numpy.

    Args:
        krr_predict: your function (K, k_test, y, ridge) -> the predictions at the test
            points.

    Example:
        A wrong answer (the ridge left out: kernel interpolation) is rejected:

        >>> exercises.ch02.check_kernel_ridge(
        ...     lambda K, k_test, y, ridge: k_test @ np.linalg.solve(K, y))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(krr_predict, what="krr_predict")
    rng = np.random.default_rng(7)
    feats, feats_test, y = (
        rng.normal(size=(6, 20)),
        rng.normal(size=(3, 20)),
        rng.normal(size=6),
    )
    for ridge in (2.0, 0.1):
        theta = np.linalg.solve(feats.T @ feats + ridge * np.eye(20), feats.T @ y)
        got = call_numeric(
            krr_predict,
            feats @ feats.T,
            feats_test @ feats.T,
            y,
            ridge,
            what="krr_predict(...)",
        )
        compare(
            got,
            feats_test @ theta,
            what=f"kernel ridge predictions (ridge={ridge})",
            rtol=1e-8,
            atol=1e-10,
            hint="a = (K + ridge I)^-1 y (solve, do not invert), predictions k_test @ "
            "a",
        )
    got0 = call_numeric(
        krr_predict,
        feats @ feats.T,
        feats @ feats.T,
        y,
        0.0,
        what="krr_predict(..., ridge=0)",
    )
    compare(
        got0,
        y,
        what="ridgeless predictions on the training set",
        rtol=1e-8,
        atol=1e-8,
        hint="with ridge = 0 kernel regression interpolates",
    )
    return passed(
        "your kernel ridge regression equals primal ridge regression and interpolates "
        "at ridge 0."
    )


def check_readout_ensemble(readout_ensemble_covariance: Callable) -> None:
    """readout_ensemble_covariance(k_train, k_test_train, k_test, t): the covariance
    over initializations of the test outputs of an infinitely wide network whose readout
    alone is trained by gradient flow for a time t on the loss (1/2n) sum (f - y)^2.

    Reference: :func:`lecturekit.regression.trained_ensemble_law` with the tangent
    kernel equal to the NNGP (the general formula with its cross terms, a different
    route from the closed form K(*,*) - K(*,S) K^-1 (I - exp(-2tK/n)) K(S,*) the
    exercise asks for), on a random kernel of 5 training and 4 test inputs, at t = 3.

    Args:
        readout_ensemble_covariance: your function (k_train (n, n), k_test_train (m, n),
            k_test (m, m), t) -> the (m, m) covariance.

    Example:
        The NNGP posterior, which is the limit t -> infinity only, is rejected:

        >>> def posterior(k, kt, ktt, t):
        ...     return ktt - kt @ np.linalg.solve(k, kt.T)
        >>> exercises.ch02.check_readout_ensemble(posterior)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: covariance of the readout-trained...
    """
    require_callable(readout_ensemble_covariance, what="readout_ensemble_covariance")
    rng = np.random.default_rng(7)
    n, m, p, t = 5, 4, 12, 3.0
    feats = rng.normal(size=(n + m, p)) / np.sqrt(p)
    big = feats @ feats.T + 0.05 * np.eye(n + m)
    want = np.asarray(
        regression.trained_ensemble_law(big, big, np.zeros(n), t).covariance
    )
    k, kt, ktt = big[:n, :n], big[n:, :n], big[n:, n:]
    got = call_numeric(
        readout_ensemble_covariance,
        k.copy(),
        kt.copy(),
        ktt.copy(),
        t,
        what="readout_ensemble_covariance(k_train, k_test_train, k_test, t)",
    )

    def shrink(decay):  # K(*,*) - K(*,S) K^-1 (I - decay) K(S,*)
        return ktt - kt @ np.linalg.solve(k, (np.eye(n) - decay) @ kt.T)

    wrong = {
        "exp(-t K / n) instead of exp(-2 t K / n): the variance has two factors "
        "(I - exp(-tK/n)), one from each side of the covariance": shrink(
            _expm_sym(-t * k / n)
        ),
        "the NNGP posterior, which is only the t -> infinity limit": shrink(
            np.zeros((n, n))
        ),
        "the prior K(*, *): training removes variance along the data": ktt,
        "exp(-2 t K) without the 1/n of the loss (1/2n) sum (f - y)^2": shrink(
            _expm_sym(-2 * t * k)
        ),
    }
    hint = (
        "with Theta = K, A = K(*,S) K^-1 (I - E), E = exp(-tK/n); expand "
        "K(*,*) - A K(S,*) - K(*,S) A^T + A K A^T using that K and E commute."
    )
    for message, value in wrong.items():
        if got.shape == value.shape and np.allclose(got, value, rtol=1e-8, atol=1e-12):
            hint = "your result is " + message + "."
            break
    compare(
        got,
        want,
        what="covariance of the readout-trained ensemble",
        rtol=1e-8,
        atol=1e-12,
        hint=hint,
    )
    return passed(
        "Sigma_t = K(*,*) - K(*,S) K^-1 (I - exp(-2tK/n)) K(S,*): it shrinks from the "
        "prior to the NNGP posterior as t grows."
    )
