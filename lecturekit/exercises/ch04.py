"""Checks for the exercises of Chapter 4 (quadratic models and the catapult phase).

Each check compares a learner's function with a reference computed here independently of
``lecturekit.quadratic`` (explicit gradient descent in NumPy, dense Hessians, least squares).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from . import ExerciseCheckError, call, call_numeric, compare, passed, require_callable


def _bilinear_gd_step(u, v, x, y, eta):
    """One explicit GD step on z = sum_i s_i v_i u_i.x / sqrt(m d) (s frozen at the start)."""
    m, d = u.shape
    a = u @ x
    s = (a > 0).astype(float)
    k = 1.0 / np.sqrt(m * d)
    z = k * np.sum(s * v * a)
    r = z - y
    u_new = u - eta * r * k * (s * v)[:, None] * x[None, :]
    v_new = v - eta * r * k * s * a
    lam = k**2 * np.sum(s * (v**2 * (x @ x) + a**2))
    a_new = u_new @ x
    z_new = k * np.sum(s * v_new * a_new)
    lam_new = k**2 * np.sum(s * (v_new**2 * (x @ x) + a_new**2))
    return (r, lam, k**2 * (x @ x)), (z_new - y, lam_new)


def check_catapult_step(catapult_step) -> None:
    """catapult_step(r, lam, c, y, eta) -> (r_next, lam_next) must equal one GD step."""
    require_callable(catapult_step, what="catapult_step")
    rng = np.random.default_rng(4)
    for m, d, y, eta_lam in [(40, 3, 1.0, 1.5), (200, 5, -0.4, 3.0), (60, 2, 0.0, 4.6)]:
        u, v, x = rng.normal(size=(m, d)), rng.normal(size=m), rng.normal(size=d)
        (r, lam, c), _ = _bilinear_gd_step(u, v, x, y, 0.0)
        eta = eta_lam / lam
        (r, lam, c), (r_next, lam_next) = _bilinear_gd_step(u, v, x, y, eta)
        got = call(catapult_step, r, lam, c, y, eta, what="catapult_step(r, lam, c, y, eta)")
        try:
            got_r, got_lam = got
        except (TypeError, ValueError):
            raise ExerciseCheckError(
                f"catapult_step should return a pair (r_next, lam_next), got {type(got).__name__}"
                + (f" of length {len(got)}" if hasattr(got, "__len__") else "")
            ) from None
        compare(got_r, r_next, what=f"r_next (m={m}, y={y}, eta*lam={eta_lam})", rtol=1e-9,
                hint="r_next = r (1 - eta lam + eta^2 c z r) with z = r + y")
        compare(got_lam, lam_next, what=f"lam_next (m={m}, y={y}, eta*lam={eta_lam})", rtol=1e-9,
                hint="lam_next = lam + eta c r^2 (eta lam - 4 z / r): note the z in the last term")
    return passed("your recursion reproduces one explicit gradient-descent step of the bilinear model.")


def _quadratic_test_net():
    from .. import nets

    return nets.mlp((3, 6, 4, 1), "tanh", b_std=0.2)


@jax.jit
def _dense_taylor_terms(p0, p, x):
    """f(p0, x), J(x) d and d^T H(x) d for the test network, with the Jacobian and Hessian formed."""
    net = _quadratic_test_net()
    flat0, unravel = ravel_pytree(p0)
    delta = ravel_pytree(p)[0] - flat0
    g = lambda w: net.apply(unravel(w), x)
    hess = jax.hessian(g)(flat0)
    return g(flat0), jax.jacfwd(g)(flat0) @ delta, jnp.einsum("i,nij,j->n", delta, hess, delta)


def check_quadratic_model(make_quadratic) -> None:
    """make_quadratic(f, params0) -> f_quad(params, x) must be the 2nd-order Taylor model."""
    require_callable(make_quadratic, what="make_quadratic")
    net = _quadratic_test_net()
    rng = np.random.default_rng(21)  # NumPy draws: no JAX random-number compilation per shape
    shapes = [((n_in, n_out), (n_out,)) for n_in, n_out in zip(net.widths[:-1], net.widths[1:])]
    p0 = [{"W": rng.normal(size=w), "b": rng.normal(size=b)} for w, b in shapes]
    p = jax.tree_util.tree_map(lambda a: a + 0.2 * rng.normal(size=a.shape), p0)
    x = rng.normal(size=(5, 3))
    f_quad = call(make_quadratic, net.apply, p0, what="make_quadratic(f, params0)")
    require_callable(f_quad, what="make_quadratic(f, params0)")
    try:  # one compilation instead of one per operation; a function that cannot be traced runs as is
        fq = jax.jit(f_quad)
        got, got0 = fq(p, x), fq(p0, x)
    except Exception:  # noqa: BLE001
        got = call(f_quad, p, x, what="f_quad(params, x)")
        got0 = call(f_quad, p0, x, what="f_quad(params0, x)")
    value, slope, curvature = _dense_taylor_terms(p0, p, x)
    compare(got, value + slope + 0.5 * curvature, what="f_quad(params, x) on a tanh network", rtol=1e-8, atol=1e-10,
            hint="g(s) = f(params0 + s d, x): the model is g(0) + g'(0) + g''(0)/2; get g''(0) by "
                 "taking jax.jvp of the function p -> jax.jvp(f(., x), (p,), (d,))[1]")
    compare(got0, value, what="f_quad(params0, x)", rtol=1e-12, atol=1e-12)
    return passed("your quadratic model agrees with the dense Taylor expansion (Jacobian and Hessian).")


def check_label_shift(label_shift) -> None:
    """label_shift(phi, psi, y) -> Y_I with theta_F + eps theta_I fitting Y + eps Y_I."""
    require_callable(label_shift, what="label_shift")
    rng = np.random.default_rng(7)
    p, n = 9, 4
    phi = rng.normal(size=(p, n))
    a = rng.normal(size=(n, p, p))
    psi = (a + a.transpose(0, 2, 1)) / 2
    y = rng.normal(size=n)
    theta_f = np.linalg.lstsq(phi.T, y, rcond=None)[0]  # minimum-norm interpolant
    expected = -0.5 * np.array([theta_f @ psi[k] @ theta_f for k in range(n)])
    got = call_numeric(label_shift, phi, psi, y, what="label_shift(phi, psi, y)")
    compare(got, expected, what="Y_I", rtol=1e-8, atol=1e-12,
            hint="Y_I[a] = -(1/2) theta_F^T Psi_a theta_F with theta_F the minimum-norm solution of Phi^T theta = Y")
    return passed("the deformed labels Y + eps Y_I are right.")


def check_escape_time(escape_time) -> None:
    """escape_time(eta_lam0, r0, c) = ln(1 / (|r0| sqrt(c))) / ln(eta_lam0 - 1)."""
    require_callable(escape_time, what="escape_time")
    for el, r0, c in [(3.0, 0.2, 1e-4), (2.5, -0.5, 1e-3), (3.7, 1.0, 1e-6)]:
        expected = np.log(1.0 / (abs(r0) * np.sqrt(c))) / np.log(el - 1.0)
        got = call_numeric(escape_time, el, r0, c, what=f"escape_time({el}, {r0}, {c})")
        compare(got, expected, what=f"escape time at eta*lam0={el}, r0={r0}, c={c}", rtol=1e-9,
                hint="|r_t| = |r0| |1 - eta lam0|^t until |r_t| reaches 1/sqrt(c) ~ sqrt(m); r0 may be negative")
    return passed("the escape time grows like ln(m) / (2 ln(eta lam0 - 1)).")
