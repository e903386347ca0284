"""Checks for the exercises of chapter 2 (the neural tangent kernel).

Each check compares the learner's function with a reference computed here by an
independent route (quadrature, Euler integration of the ODE, a primal solve with numpy)
and raises :class:`ExerciseCheckError` with a hint when they disagree.
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from . import as_scalar, call_numeric, compare, passed, require_callable

__all__ = ["check_sine_ntk", "check_gradient_flow", "check_width_requirement", "check_kernel_ridge"]


def check_sine_ntk(sine_ntk: Callable) -> None:
    """sine_ntk(xi): infinite-width NTK of f = m^-1/2 sum a_i sin(w_i.x) on the unit sphere.

    Reference: E[sin u sin v] + xi E[cos u cos v] for standard Gaussians with correlation xi,
    by 80 x 80 Gauss-Hermite quadrature (accurate to ~1e-13 for these smooth functions).
    """
    require_callable(sine_ntk, what="sine_ntk")
    xi = np.linspace(-1.0, 1.0, 41)
    z, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / np.sqrt(2 * np.pi)
    z1, z2, ww = z[:, None], z[None, :], w[:, None] * w[None, :]
    ref = []
    for c in xi:
        u, v = z1, c * z1 + np.sqrt(max(1 - c * c, 0.0)) * z2
        ref.append(np.sum(ww * np.sin(u) * np.sin(v)) + c * np.sum(ww * np.cos(u) * np.cos(v)))
    got = call_numeric(sine_ntk, xi, what="sine_ntk(xi)")
    compare(got, np.array(ref), what="sine NTK on [-1, 1]", rtol=1e-8, atol=1e-10,
            hint="NTK = dual(sin)(xi) + xi * dual(cos)(xi); write sin u sin v = (cos(u-v) - cos(u+v))/2 "
                 "and use E[cos(s z)] = exp(-s^2/2).")
    return passed("Theta(xi) = exp(-1) (sinh xi + xi cosh xi) matches quadrature on [-1, 1].")


def _flow_problem():
    """The kernel, labels and initial outputs on which gradient flow is checked (fresh arrays)."""
    rng = np.random.default_rng(2024)
    n, p, n_test = 5, 9, 4
    feats = rng.normal(size=(n + n_test, p)) / np.sqrt(p)
    big = feats @ feats.T
    y, f0s, f0t = rng.normal(size=n), rng.normal(size=n) * 0.3, rng.normal(size=n_test) * 0.3
    return big[:n, :n], big[n:, :n], y, f0s, f0t, 7.0


@functools.lru_cache(maxsize=1)
def _flow_reference() -> np.ndarray:
    """f_t on the test points by classical Runge-Kutta with 4000 steps (computed once)."""
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
    """
    require_callable(flow_predictor, what="flow_predictor")
    K, k_test, y, f0s, f0t, t_end = _flow_problem()
    n = K.shape[0]
    got = call_numeric(flow_predictor, K, k_test, y, f0s, f0t, t_end, what="flow_predictor(...)")
    K, k_test, y, f0s, f0t, t_end = _flow_problem()  # unchanged, even if the learner's code wrote into its inputs
    wrong = f0t + k_test @ np.linalg.solve(K, (np.eye(n) - _expm_sym(-t_end * K)) @ (y - f0s))
    hint = "the exponent is -t K / n for the loss (1/2n) sum (f - y)^2"
    if got.shape == wrong.shape and np.allclose(got, wrong, rtol=1e-8):
        hint = "your result is the formula with exp(-t K): " + hint
    compare(got, _flow_reference(), what="f_t on the test points", rtol=1e-7, atol=1e-9, hint=hint)
    return passed("your f_t solves the gradient-flow ODE (checked against Runge-Kutta integration).")


def _expm_sym(a: np.ndarray) -> np.ndarray:
    mu, u = np.linalg.eigh(a)
    return (u * np.exp(mu)) @ u.T


def check_width_requirement(width_needed: Callable) -> None:
    """width_needed(n, L0, lam0): the width above which Du et al.'s argument closes."""
    require_callable(width_needed, what="width_needed")
    cases = [(4, 0.5, 0.1), (10, 1.3, 0.25), (3, 0.2, 0.05)]
    for n, L0, lam0 in cases:
        got = call_numeric(width_needed, n, L0, lam0, what=f"width_needed({n}, {L0}, {lam0})")
        notes = 16 * n**2 * L0 / lam0**2
        hint = "set Delta* = 2 sqrt(2) n sqrt(L0) / (lam0 sqrt(m)) equal to Delta = lam0 / (8 n) and solve for m"
        got = as_scalar(got, what=f"width_needed({n}, {L0}, {lam0})")
        if np.isclose(got, notes, rtol=1e-9):
            hint = "that is the notes' (wrong) 16 n^2 L0 / lam0^2; " + hint
        compare(got, 512 * n**4 * L0 / lam0**4, what=f"width for n={n}, L0={L0}, lam0={lam0}", rtol=1e-9, hint=hint)
    return passed("m > 512 n^4 L(0) / lambda_0^4.")


def check_kernel_ridge(krr_predict: Callable) -> None:
    """krr_predict(K, k_test, y, ridge) -> predictions k(X_test, S)(K + ridge I)^-1 y.

    Reference: primal ridge regression on explicit random features, solved with numpy.
    """
    require_callable(krr_predict, what="krr_predict")
    rng = np.random.default_rng(7)
    feats, feats_test, y = rng.normal(size=(6, 20)), rng.normal(size=(3, 20)), rng.normal(size=6)
    for ridge in (2.0, 0.1):
        theta = np.linalg.solve(feats.T @ feats + ridge * np.eye(20), feats.T @ y)
        got = call_numeric(krr_predict, feats @ feats.T, feats_test @ feats.T, y, ridge, what="krr_predict(...)")
        compare(got, feats_test @ theta, what=f"kernel ridge predictions (ridge={ridge})", rtol=1e-8, atol=1e-10,
                hint="a = (K + ridge I)^-1 y (solve, do not invert), predictions k_test @ a")
    got0 = call_numeric(krr_predict, feats @ feats.T, feats @ feats.T, y, 0.0, what="krr_predict(..., ridge=0)")
    compare(got0, y, what="ridgeless predictions on the training set", rtol=1e-8, atol=1e-8,
            hint="with ridge = 0 kernel regression interpolates")
    return passed("your kernel ridge regression equals primal ridge regression and interpolates at ridge 0.")
