"""Checks for the exercises of Chapter 4 (quadratic models and the catapult phase).

Each check compares a learner's answer with a reference computed here independently of
``lecturekit.quadratic``: sympy for the two derivations (with a numeric spot check
against the recursion iterated in NumPy or against an ODE solver), dense Taylor
expansions for the quadratic model, and Newton's method for the least-squares minimizer.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import scipy.integrate
import sympy as sp
from jax.flatten_util import ravel_pytree

from . import ExerciseCheckError, call, call_numeric, compare, passed, require_callable

__all__ = [
    "check_linear_kernel_shift",
    "check_flow_kernel",
    "check_quadratic_model",
    "check_least_squares_correction",
]

# --------------------------------------------------------------------------------------
# Shared: a learner's function that must return a sympy expression


def _symbolic_answer(
    fn: Callable, symbols: dict[str, sp.Symbol], *, what: str
) -> sp.Expr:
    """fn(*symbols) as a sympy expression in those symbols (floats such as 0.5 made
    exact).
    """
    expr = call(fn, *symbols.values(), what=what)
    if expr is None:
        raise ExerciseCheckError(
            f"{what}: got None. Does your function end with a `return` statement?"
        )
    if isinstance(expr, (int, float)) and not isinstance(expr, bool):
        expr = sp.nsimplify(expr)
    if not isinstance(expr, sp.Basic):
        raise ExerciseCheckError(
            f"{what} should return a sympy expression when called with sympy symbols, "
            "got "
            f"{type(expr).__name__}. Build it from the arguments with sympy operations "
            "(sp.sqrt, not np.sqrt or math.sqrt)."
        )
    stray = sorted(map(str, expr.free_symbols - set(symbols.values())))
    if stray:
        raise ExerciseCheckError(
            f"{what}: your expression contains the symbols {stray}, which are not "
            "among the "
            f"arguments {list(symbols)}. Write the answer in terms of the arguments "
            "only."
        )
    return sp.nsimplify(expr, rational=True)


def _equal(
    expr: sp.Expr, truth: sp.Expr, symbols: dict[str, sp.Symbol], points
) -> bool:
    """simplify(expr - truth) == 0, or (where simplify gives up) equal at every sample
    point.
    """
    if sp.simplify(expr - truth) == 0:
        return True
    for point in points:
        values = dict(zip(symbols.values(), point))
        a, b = complex(expr.evalf(subs=values)), complex(truth.evalf(subs=values))
        if not abs(a - b) <= 1e-12 * max(1.0, abs(b)):
            return False
    return True


def _at(expr: sp.Expr, symbols: dict[str, sp.Symbol], point) -> float:
    value = complex(expr.evalf(subs=dict(zip(symbols.values(), point))))
    return value.real if abs(value.imag) < 1e-14 else value


def _point_text(symbols: dict[str, sp.Symbol], point) -> str:
    return ", ".join(f"{name}={value:g}" for name, value in zip(symbols, point))


# --------------------------------------------------------------------------------------
# Exercise: how far the kernel moves in the linear regime (derivation, sympy)


def _linear_shift_truth(eta, lam0, c, r0, y):
    """First order in c: sum_t eta c (eta lam0 r_t^2 - 4 (r_t + y) r_t), r_t = r0 (1 -
    eta lam0)^t.
    """
    q = 1 - eta * lam0
    return eta * c * ((eta * lam0 - 4) * r0**2 / (1 - q**2) - 4 * y * r0 / (1 - q))


def _recursion_kernel_shift(eta, lam0, c, r0, y, steps=4000):
    """lambda_T - lambda_0 of the one-example recursion, iterated here in NumPy."""
    r, lam = r0, lam0
    for _ in range(steps):
        z = r + y
        r, lam = (
            r * (1 - eta * lam + eta**2 * c * z * r),
            lam + eta * c * r * (eta * lam * r - 4 * z),
        )
    return lam - lam0


def check_linear_kernel_shift(kernel_shift: Callable) -> None:
    """kernel_shift(eta, lam0, c, r0, y) -> lambda_infinity - lambda_0 to first order in
    c, a sympy expression, for 0 < eta lam0 < 2 (the linear regime).

    Args:
        kernel_shift: your function (eta, lam0, c, r0, y) -> the first-order kernel
            shift.

    Example:
        A wrong answer (a kernel that does not move) is rejected:

        >>> exercises.ch04.check_linear_kernel_shift(
        ...     lambda eta, lam0, c, r0, y: 0 * c)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(kernel_shift, what="kernel_shift")
    symbols = {
        "eta": sp.Symbol("eta", positive=True),
        "lam0": sp.Symbol("lambda_0", positive=True),
        "c": sp.Symbol("c", positive=True),
        "r0": sp.Symbol("r_0", real=True),
        "y": sp.Symbol("y", real=True),
    }
    what = "kernel_shift(eta, lam0, c, r0, y)"
    expr = _symbolic_answer(kernel_shift, symbols, what=what)
    truth = _linear_shift_truth(*symbols.values())
    points = [
        (0.9, 1.1, 0.01, 0.3, 1.0),
        (1.5, 1.0, 0.02, -0.7, 0.4),
        (0.3, 2.0, 0.003, 1.3, -2.0),
    ]
    if not _equal(expr, truth, symbols, points):
        eta, lam0, c, r0, y = symbols.values()
        q = 1 - eta * lam0
        without_label = eta * c * (eta * lam0 - 4) * r0**2 / (1 - q**2)
        one_sum = eta * c * ((eta * lam0 - 4) * r0**2 - 4 * y * r0) / (1 - q)
        point = points[1]
        got, want = _at(expr, symbols, point), _at(truth, symbols, point)
        hint = (
            "Hint: insert r_t = r0 (1 - eta lam0)^t and z_t = r_t + y into the "
            "kernel's step "
            "eta c r_t (eta lam_t r_t - 4 z_t) with lam_t ~ lam0, and sum over t >= 0."
        )
        if sp.simplify(expr - without_label) == 0:
            hint = (
                "The label is missing: z_t = r_t + y, so the step -4 eta c z_t r_t has "
                "a part "
                "-4 eta c y r_t that is linear in r_t (a geometric series in q, not "
                "q^2)."
            )
        elif sp.simplify(expr - one_sum) == 0:
            hint = (
                "The r_t^2 terms form a geometric series in q^2 = (1 - eta lam0)^2, "
                "not in q: sum_t q^(2t) = 1 / (1 - q^2)."
            )
        elif sp.simplify(expr + truth) == 0:
            hint = (
                "The sign is flipped: in the linear regime the kernel decreases when "
                "r0 (r0 + y) > 0."
            )
        raise ExerciseCheckError(
            f"{what} is not the first-order kernel shift: at "
            f"{_point_text(symbols, point)} it gives "
            f"{got:.6g}, the sum of the kernel's steps gives {want:.6g}. {hint}"
        )
    # numeric spot check: the truth against the recursion itself (relative error O(c))
    for point in [(1.5, 1.0, 1e-6, 0.4, 1.0), (0.7, 0.8, 1e-6, -1.2, 0.5)]:
        measured = _recursion_kernel_shift(*point) / point[2]
        compare(
            float(_at(expr, symbols, point)) / point[2],
            measured,
            rtol=1e-3,
            what="(lambda_T - lambda_0) / c from the recursion at "
            f"{_point_text(symbols, point)}",
        )
    return passed(
        "the kernel moves by O(c) = O(1/m) in the linear regime; your sum reproduces "
        "the recursion to first order in c."
    )


# --------------------------------------------------------------------------------------
# Exercise: a conserved quantity of gradient flow (derivation, sympy)


def _flow_final_kernel_ode(lam0, c, r0, y):
    """lambda at the end of gradient flow dr/dt = -lam r, dlam/dt = -4 c (r + y) r
    (scipy).
    """

    def rhs(_, state):
        r, lam = state
        return [-lam * r, -4 * c * (r + y) * r]

    out = scipy.integrate.solve_ivp(
        rhs, (0.0, 60.0 / lam0), [r0, lam0], rtol=1e-11, atol=1e-13
    )
    return out.y[1, -1]


def check_flow_kernel(final_kernel: Callable) -> None:
    """final_kernel(lam0, c, r0, y) -> the kernel lambda_infinity reached by gradient
    flow on the one-example quadratic model (a sympy expression, exact, not to first
    order in c).

    Args:
        final_kernel: your function (lam0, c, r0, y) -> the kernel at the end of
            gradient flow.

    Example:
        A wrong answer (the kernel frozen at its initial value, as in the linear model)
        is rejected:

        >>> exercises.ch04.check_flow_kernel(lambda lam0, c, r0, y: lam0 + 0 * c)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(final_kernel, what="final_kernel")
    symbols = {
        "lam0": sp.Symbol("lambda_0", positive=True),
        "c": sp.Symbol("c", positive=True),
        "r0": sp.Symbol("r_0", real=True),
        "y": sp.Symbol("y", real=True),
    }
    what = "final_kernel(lam0, c, r0, y)"
    expr = _symbolic_answer(final_kernel, symbols, what=what)
    lam0, c, r0, y = symbols.values()
    truth = sp.sqrt(lam0**2 - 4 * c * ((r0 + y) ** 2 - y**2))
    points = [(1.0, 0.05, 0.8, 0.5), (1.3, 0.02, -1.5, 1.0), (0.7, 0.01, 2.0, -0.3)]
    if not _equal(expr, truth, symbols, points):
        point = points[0]
        got, want = _at(expr, symbols, point), _at(truth, symbols, point)
        hint = (
            "Hint: in the limit eta -> 0 the recursion gives dr/dt = -lam r and "
            "dlam/dt = -4 c z r; compare d(lam^2)/dt with d(z^2)/dt."
        )
        if sp.simplify(expr - sp.sqrt(lam0**2 - 4 * c * (r0 + y) ** 2)) == 0:
            hint = (
                "You let z go to 0, but gradient flow converges to z = y (r = 0): the "
                "invariant "
                "lam^2 - 4 c z^2 takes the value lam_inf^2 - 4 c y^2 at the end."
            )
        elif sp.simplify(expr - (lam0 - 2 * c * ((r0 + y) ** 2 - y**2) / lam0)) == 0:
            hint = (
                "This is right to first order in c only; gradient flow conserves "
                "lam^2 - 4 c z^2 exactly, so take the square root without expanding it."
            )
        elif sp.simplify(expr - lam0) == 0:
            hint = (
                "Under gradient flow the kernel does move (by O(c)); only lam^2 - 4 c "
                "z^2 is "
                "conserved."
            )
        raise ExerciseCheckError(
            f"{what} is not the kernel at the end of gradient flow: at "
            f"{_point_text(symbols, point)} "
            f"it gives {got:.8g}, the flow ends at {want:.8g}. {hint}"
        )
    for point in points[:2]:  # numeric spot check: the truth against an ODE solver
        compare(
            float(_at(expr, symbols, point)),
            _flow_final_kernel_ode(*point),
            rtol=1e-8,
            what="the kernel at the end of the integrated flow, "
            f"{_point_text(symbols, point)}",
        )
    return passed(
        "gradient flow conserves lam^2 - 4 c z^2, so lam_inf = sqrt(lam0^2 - 4c(z0^2 - "
        "y^2))."
    )


# --------------------------------------------------------------------------------------
# Exercise: a quadratic model for any network


def _quadratic_test_net():
    from .. import nets

    return nets.mlp((3, 6, 4, 1), "tanh", b_std=0.2)


@jax.jit
def _dense_taylor_terms(p0, p, x):
    """f(p0, x), J(x) d and d^T H(x) d for the test network, with the Jacobian and
    Hessian formed.
    """
    net = _quadratic_test_net()
    flat0, unravel = ravel_pytree(p0)
    delta = ravel_pytree(p)[0] - flat0
    g = lambda w: net.apply(unravel(w), x)
    hess = jax.hessian(g)(flat0)
    return (
        g(flat0),
        jax.jacfwd(g)(flat0) @ delta,
        jnp.einsum("i,nij,j->n", delta, hess, delta),
    )


def check_quadratic_model(make_quadratic) -> None:
    """make_quadratic(f, params0) -> f_quad(params, x) must be the 2nd-order Taylor
    model.

    Args:
        make_quadratic: your function (f, params0) -> f_quad(params, x), the
            second-order Taylor model of f around params0.

    Example:
        >>> exercises.ch04.check_quadratic_model(
        ...     lambda f, params0: f)  # f, not its model
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: f_quad(params, x) on a tanh ...
    """
    require_callable(make_quadratic, what="make_quadratic")
    net = _quadratic_test_net()
    # NumPy draws: no JAX random-number compilation per shape
    rng = np.random.default_rng(21)
    shapes = [
        ((n_in, n_out), (n_out,))
        for n_in, n_out in zip(net.widths[:-1], net.widths[1:])
    ]
    p0 = [{"W": rng.normal(size=w), "b": rng.normal(size=b)} for w, b in shapes]
    p = jax.tree_util.tree_map(lambda a: a + 0.2 * rng.normal(size=a.shape), p0)
    x = rng.normal(size=(5, 3))
    f_quad = call(make_quadratic, net.apply, p0, what="make_quadratic(f, params0)")
    require_callable(f_quad, what="make_quadratic(f, params0)")
    # one compilation instead of one per operation; a function that cannot be traced
    # runs as is
    try:
        fq = jax.jit(f_quad)
        got, got0 = fq(p, x), fq(p0, x)
    except Exception:  # noqa: BLE001
        got = call(f_quad, p, x, what="f_quad(params, x)")
        got0 = call(f_quad, p0, x, what="f_quad(params0, x)")
    value, slope, curvature = _dense_taylor_terms(p0, p, x)
    compare(
        got,
        value + slope + 0.5 * curvature,
        what="f_quad(params, x) on a tanh network",
        rtol=1e-8,
        atol=1e-10,
        hint="g(s) = f(params0 + s d, x): the model is g(0) + g'(0) + g''(0)/2; get "
        "g''(0) by "
        "taking jax.jvp of the function p -> jax.jvp(f(., x), (p,), (d,))[1]",
    )
    compare(got0, value, what="f_quad(params0, x)", rtol=1e-12, atol=1e-12)
    return passed(
        "your quadratic model agrees with the dense Taylor expansion (Jacobian and "
        "Hessian)."
    )


# --------------------------------------------------------------------------------------
# Exercise: deformed labels when the linear model cannot interpolate


def _ls_problem(seed: int, p: int, n: int):
    rng = np.random.default_rng(seed)
    phi = rng.normal(size=(p, n))
    a = rng.normal(size=(n, p, p))
    return phi, (a + a.transpose(0, 2, 1)) / 2, rng.normal(size=n)


def _least_squares_minimizer(phi, psi, y, eps, start):
    """argmin (1/2) sum_a (z_a - y_a)^2, z_a = Phi_a^T th + (eps/2) th^T Psi_a th, by
    Newton.
    """
    th = start.copy()
    for _ in range(40):
        res = phi.T @ th + 0.5 * eps * np.einsum("i,aij,j->a", th, psi, th) - y
        jac = phi.T + eps * np.einsum("aij,j->ai", psi, th)
        hess = jac.T @ jac + eps * np.einsum("a,aij->ij", res, psi)
        th = th - np.linalg.solve(hess, jac.T @ res)
    return th


def check_least_squares_correction(theta_i_least_squares: Callable) -> None:
    """theta_i_least_squares(phi, psi, y) -> theta^I for p < n, where the linear
    least-squares fit theta^F leaves residuals: theta* = theta^F + eps theta^I +
    O(eps^2) minimizes (1/2) sum_a (Phi_a^T theta + (eps/2) theta^T Psi_a theta -
    y_a)^2.

    Args:
        theta_i_least_squares: your function (phi, psi, y) -> theta^I.

    Example:
        >>> def zeros(phi, psi, y):
        ...     return np.zeros(phi.shape[0])
        >>> exercises.ch04.check_least_squares_correction(zeros)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: theta^I (p = 3, n = 6): got 0 ...
    """
    require_callable(theta_i_least_squares, what="theta_i_least_squares")
    for seed, p, n in [(3, 3, 6), (4, 5, 9)]:
        phi, psi, y = _ls_problem(seed, p, n)
        what = (
            f"theta_i_least_squares(phi, psi, y) with p = {p} parameters, n = {n} "
            "examples"
        )
        got = call_numeric(
            theta_i_least_squares, phi.copy(), psi.copy(), y.copy(), what=what
        )
        # reference: central difference of the minimizer in eps (error O(eps^2))
        theta_f = np.linalg.solve(phi @ phi.T, phi @ y)
        eps = 1e-4
        plus = _least_squares_minimizer(phi, psi, y, eps, theta_f)
        minus = _least_squares_minimizer(phi, psi, y, -eps, theta_f)
        expected = (plus - minus) / (2 * eps)
        q = np.einsum("i,aij,j->a", theta_f, psi, theta_f)
        interpolating = -np.linalg.solve(phi @ phi.T, phi @ (q / 2))
        hint = (
            "set the gradient sum_a (Phi_a + eps Psi_a theta) r_a(theta) to zero and "
            "collect "
            "the terms of order eps"
        )
        if np.shape(got) == expected.shape and np.allclose(
            got, interpolating, rtol=1e-6
        ):
            hint = (
                "this is the formula for a model that interpolates; here the linear "
                "fit leaves "
                "residuals r^F = Phi^T theta^F - y, and the first-order condition "
                "keeps the term "
                "sum_a r^F_a Psi_a theta^F"
            )
        compare(
            got,
            expected,
            what=f"theta^I (p = {p}, n = {n})",
            rtol=1e-5,
            atol=1e-7,
            hint=hint,
        )
    return passed(
        "your theta^I matches the minimizer of the quadratic model to first order in "
        "eps."
    )
