"""Checks for the exercises of the appendix "Computing kernels and Hessians fast".

Each check compares a learner's answer with an independent reference computed here (the
diagonal of the Jacobian-contraction NTK; the Ritz values of every leading block of a
Lanczos matrix from SciPy's tridiagonal eigensolver; the constant of power iteration's
error, by sympy and from the exact error at a large step) and
raises :class:`ExerciseCheckError` with an explanation if it differs. Layers are
numbered as in the notation appendix: l = 1, ..., L+1, the readout being layer L+1
(Python index l - 1).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import numpy as np
import scipy.linalg
import sympy as sp

from . import ExerciseCheckError, call_numeric, compare, passed, require_callable

__all__ = [
    "check_ntk_diagonal",
    "check_lanczos_estimates",
    "check_power_error_constant",
]

# (widths, activation, options): a deep tanh network with biases everywhere, and a ReLU
# one
_NETWORKS = (
    ((5, 40, 30, 20, 1), "tanh", dict(w_std=1.4, b_std=0.3, out_b_std=0.5)),
    ((3, 16, 1), "relu", {}),
)


def check_ntk_diagonal(candidate: Callable) -> None:
    """candidate(net, params, x) -> the n numbers Theta(x_i, x_i) of a scalar-output
    nets.mlp network.

    Args:
        candidate: your function -> the diagonal of the empirical tangent kernel.

    Example:
        >>> exercises.fast.check_ntk_diagonal(lambda *args: 0.0)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: the tangent-kernel diagonal of ...
    """
    from .. import nets, sampling, tangent

    require_callable(candidate, what="ntk_diagonal")
    for seed, (widths, activation, options) in enumerate(_NETWORKS):
        net = nets.mlp(widths, activation, **options)
        params = net.init(jax.random.key(70 + seed))
        x = sampling.standard_normal(jax.random.key(80 + seed), (7, widths[0]))
        got = call_numeric(
            candidate,
            net,
            params,
            x,
            what=f"ntk_diagonal(net, params, x) for widths {widths}",
        )
        reference = jax.jit(lambda p, xs: tangent.jacobian_ntk(net.apply, p, xs))  # noqa: B023
        expected = np.diag(np.asarray(reference(params, x)))
        compare(
            got,
            expected,
            what=f"the tangent-kernel diagonal of the {activation} network {widths}",
            rtol=1e-10,
            hint="Theta(x, x) = sum over the dense layers l = 1..L+1, the readout L+1 "
            "included (where "
            "delta^(L+1) = 1), of (mW_l^2 |h^(l-1)(x)|^2 + mb_l^2) |delta^(l)(x)|^2; "
            "the bias term "
            "mb_l^2 multiplies |delta^(l)|^2 too",
        )
    return passed(
        "the diagonal matches the Jacobian contraction to 1e-10 on a deep tanh and a "
        "ReLU network."
    )


@functools.cache
def _lanczos_run() -> tuple[np.ndarray, np.ndarray]:
    """alpha, beta of 30 Lanczos steps on a 200 x 200 symmetric matrix whose extreme
    eigenvalues come in clustered pairs of both signs (like a wide network's
    Hessian)."""
    from ..hessian import lanczos

    rng = np.random.default_rng(0)  # a local generator: no global NumPy state
    eigenvalues = np.concatenate(
        [
            1 - 0.02 * rng.random(40),
            -(1 - 0.02 * rng.random(40)),
            rng.uniform(-0.5, 0.5, 120),
        ]
    )
    basis, _ = np.linalg.qr(rng.standard_normal((200, 200)))
    matrix = (basis * eigenvalues) @ basis.T
    run = lanczos(
        lambda v, a: a @ v,
        rng.standard_normal(200),
        tol=1e-12,
        max_iter=30,
        min_iter=30,
        args=(jax.device_put(matrix),),
    )
    return run.alpha, run.beta


def check_lanczos_estimates(candidate: Callable) -> None:
    """candidate(alpha, beta) -> the estimate (largest absolute Ritz value) of T_k for
    k = 1 .. len(alpha).

    Args:
        candidate: your function (alpha, beta) -> one estimate per Lanczos step.

    Example:
        >>> exercises.fast.check_lanczos_estimates(lambda alpha, beta: 0.0)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: lanczos_estimates(alpha, beta)...
    """
    require_callable(candidate, what="lanczos_estimates")
    alpha, beta = _lanczos_run()
    expected = [abs(alpha[0])] + [
        np.max(
            np.abs(
                scipy.linalg.eigh_tridiagonal(
                    alpha[:k], beta[: k - 1], eigvals_only=True
                )
            )
        )
        for k in range(2, alpha.size + 1)
    ]
    got = call_numeric(
        candidate, alpha.copy(), beta.copy(), what="lanczos_estimates(alpha, beta)"
    )
    if got.shape != (alpha.size,):
        raise ExerciseCheckError(
            "lanczos_estimates(alpha, beta): expected one estimate per step, shape "
            f"({alpha.size},), got {got.shape}"
        )
    compare(
        got,
        np.array(expected),
        what="the estimates after k = 1, 2, ... steps",
        rtol=1e-10,
        hint="T_k is the leading k x k block: diagonal alpha[:k], off-diagonal "
        "beta[:k-1]; its estimate is "
        "the largest |eigenvalue|, which may be the most negative one",
    )
    return passed(
        f"all {alpha.size} estimates match; they never decrease and never exceed "
        "||A||_2."
    )


# --------------------------------------------------------------------------------------
# Exercise: the constant in power iteration's error


def _power_error(a: float, b: float, r: float, k: int) -> float:
    """e_k = 1 - ||H q|| / lambda_1 for H = diag(lambda_1, r lambda_1), q ~ H^(k-1) (a,
    b), computed without cancellation: e_k = s / (1 + sqrt(1 - s)), s = t (1 - r^2) /
    (1 + t), t = (b/a)^2 r^(2k-2)."""
    t = (b / a) ** 2 * r ** (2 * k - 2)
    s = t * (1 - r**2) / (1 + t)
    return s / (1 + np.sqrt(1 - s))


def check_power_error_constant(
    expr: sp.Expr, a: sp.Symbol, b: sp.Symbol, r: sp.Symbol
) -> None:
    """``expr`` must be C(a, b, r) with e_k = C r^(2k) (1 + o(1)), where e_k is the
    relative error of the power-iteration estimate ||H q|| of lambda_1 for H =
    diag(lambda_1, r lambda_1) started at (a, b), after k products.

    Compared symbolically with C = b^2 (1 - r^2) / (2 a^2 r^2) (simplify of the
    difference) and numerically with e_k / r^(2k) at large k, computed here from the
    exact e_k.

    Args:
        expr: your constant, a sympy expression in a, b and r.
        a: the sympy symbols your expression uses (positive).
        b: see a.
        r: see a.

    Example:
        >>> import sympy as sp
        >>> a, b, r = sp.symbols("a b r", positive=True)
        >>> exercises.fast.check_power_error_constant(a * b, a, b, r)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: your constant a*b differs from ...
    """
    if not isinstance(expr, sp.Basic):
        raise ExerciseCheckError(
            f"expected a sympy expression in a, b, r, got {type(expr).__name__}"
        )
    for name, symbol in (("a", a), ("b", b), ("r", r)):
        if not isinstance(symbol, sp.Symbol):
            raise ExerciseCheckError(
                f"{name} should be the sympy symbol your expression uses, got "
                f"{type(symbol).__name__}"
            )
    if expr.has(sp.Order) or expr.has(sp.Limit):
        raise ExerciseCheckError(
            "your expression still contains an O(...) term or an unevaluated limit: "
            "drop the order term with .removeO() and keep only the constant C."
        )
    stray = sorted(map(str, expr.free_symbols - {a, b, r}))
    if stray:
        hint = (
            " C must not depend on k: divide e_k by r^(2k) and keep the limit as k -> "
            "oo."
            if any(s.startswith("k") for s in stray)
            else (
                " Substitute t = (b/a)^2 r^(2k-2) back, and pass the symbols your "
                "expression uses."
            )
        )
        twins = set(stray) & {str(a), str(b), str(r)}
        if twins:
            hint += (
                f" ({sorted(twins)} also names a passed symbol created with other "
                "assumptions, e.g. "
                "real=True in one place and not in the other.)"
            )
        raise ExerciseCheckError(
            f"your expression contains the symbols {stray}, which are not the a, b, r "
            "passed to the check." + hint
        )
    truth = b**2 * (1 - r**2) / (2 * a**2 * r**2)
    point = {a: 1.0, b: 0.7, r: 0.9}
    try:
        value = complex(expr.subs(point).evalf())
    except (TypeError, ValueError):
        raise ExerciseCheckError(
            f"your expression {expr} does not evaluate to a number at "
            "a = 1, b = 0.7, r = 0.9"
        ) from None
    # the exact error at k = 400 (relative o(1) term ~ r^(2k) ~ 1e-37): e_k / r^(2k) is
    # C there
    measured = _power_error(1.0, 0.7, 0.9, 400) / 0.9**800
    if sp.simplify(expr - truth) != 0:
        ratio = value.real / measured
        why = ""
        if abs(ratio - 2) < 1e-6:
            why = (
                " Your C is twice the truth: the square root halves the first-order "
                "term."
            )
        elif abs(ratio - 0.81) < 1e-6 or abs(ratio - 1 / 0.81) < 1e-6:
            why = (
                " Your C is off by a factor r^2: count the products, k - 1 to form q "
                "and one more "
                "for H q, so t = (b/a)^2 r^(2k-2)."
            )
        elif abs(ratio - 1 / 0.19) < 1e-6 or abs(ratio - 0.19) < 1e-6:
            why = (
                " Your C is off by the factor 1 - r^2: keep both t and t r^2 in the "
                "first-order term."
            )
        raise ExerciseCheckError(
            f"your constant {expr} differs from the truth: at a = 1, b = 0.7, r = 0.9 "
            "it is "
            f"{value.real:.6g}, while the exact error of power iteration gives e_k / "
            f"r^(2k) = {measured:.6g} "
            f"at k = 400." + why
        )
    if (
        abs(value.real / measured - 1) > 1e-8
    ):  # pragma: no cover - simplify agreed with the truth
        raise ExerciseCheckError(
            f"your constant evaluates to {value.real:.6g}, not {measured:.6g}"
        )
    return passed(
        "C = b^2 (1 - r^2) / (2 a^2 r^2): the error falls by r^2 per product, so the "
        "rate "
        "is set by |lambda_(2) / lambda_(1)|^2."
    )
