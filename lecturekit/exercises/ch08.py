"""Checks for the exercises of Chapter 8 (the loss Hessian).

The references are computed here without ``lecturekit.loss_hessian`` or
``lecturekit.collapse``: the softmax curvature by finite differences of the
cross-entropy, ranks from random Jacobians, Hutchinson variances by enumerating
Rademacher probes and from the eigenvalues for Gaussian ones, the simplex by its
defining properties.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from . import (
    ExerciseCheckError,
    as_numbers,
    as_scalar,
    call,
    compare,
    passed,
    require_callable,
)

__all__ = [
    "check_softmax_curvature",
    "check_gauss_newton_rank",
    "check_hutchinson_variance",
    "check_simplex",
]


def _cross_entropy(z: np.ndarray, label: int) -> float:
    z = z - z.max()
    return float(np.log(np.sum(np.exp(z))) - z[label])


def check_softmax_curvature(curvature: Callable) -> None:
    """curvature(p) must be the k x k Hessian of the cross-entropy in the logits at
    softmax p.

    Args:
        curvature: your function of a probability vector p (shape (k,)) returning (k,
            k).

    Example:
        >>> import numpy as np
        >>> exercises.ch08.check_softmax_curvature(lambda p: np.diag(p))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: curvature(p) at p = [0.2 0.3 0.5]: ...
    """
    require_callable(curvature, what="curvature")
    h = 1e-4
    for p in (
        np.array([0.2, 0.3, 0.5]),
        np.array([0.7, 0.1, 0.1, 0.1]),
        np.array([0.5, 0.5]),
    ):
        z, k = np.log(p), p.size
        ref = np.zeros((k, k))
        # central differences, label 0
        for a, b in itertools.product(range(k), repeat=2):
            e_a, e_b = h * np.eye(k)[a], h * np.eye(k)[b]
            ref[a, b] = (
                _cross_entropy(z + e_a + e_b, 0)
                - _cross_entropy(z + e_a - e_b, 0)
                - _cross_entropy(z - e_a + e_b, 0)
                + _cross_entropy(z - e_a - e_b, 0)
            ) / (4 * h * h)
        got = as_numbers(
            call(curvature, p.copy(), what="curvature(p)"), what="curvature(p)"
        )
        compare(
            got,
            ref,
            what=f"curvature(p) at p = {p}",
            atol=1e-5,
            hint="differentiate log sum_b exp(z_b) twice: the diagonal is p_a - p_a^2, "
            "the rest "
            "-p_a p_b; the label does not enter.",
        )
    return passed(
        "A = diag(p) - p p^T: positive semidefinite, A 1 = 0, and independent of the "
        "label."
    )


def _generic_rank(n: int, k: int, p: int, loss: str, rng: np.random.Generator) -> int:
    g = np.zeros((p, p))
    for _ in range(n):
        jac = rng.standard_normal((k, p))
        if loss == "square":
            a = np.eye(k)
        else:
            prob = rng.dirichlet(np.ones(k))
            a = np.diag(prob) - np.outer(prob, prob)
        g += jac.T @ a @ jac
    return int(np.linalg.matrix_rank(g))


def check_gauss_newton_rank(rank: Callable) -> None:
    """rank(n, k, P, loss) must be the rank of the Gauss-Newton matrix for generic
    Jacobians.

    n examples, k outputs, P parameters, loss "square" or "cross_entropy".

    Args:
        rank: your function (n, k, P, loss) -> an integer.

    Example:
        >>> exercises.ch08.check_gauss_newton_rank(lambda n, k, P, loss: min(n, P))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: rank(3, 2, 20, 'square') = 3, ...
    """
    require_callable(rank, what="rank")
    rng = np.random.default_rng(8)
    # (5, 4, 12, "cross_entropy"): P < n (k - 1), so min(P, .) matters for the softmax
    # too
    for n, k, p, loss in (
        (3, 2, 20, "square"),
        (3, 4, 20, "cross_entropy"),
        (5, 3, 12, "square"),
        (6, 3, 40, "cross_entropy"),
        (2, 5, 30, "cross_entropy"),
        (4, 1, 9, "square"),
        (5, 4, 12, "cross_entropy"),
    ):
        want = _generic_rank(n, k, p, loss, rng)
        got = as_scalar(call(rank, n, k, p, loss, what="rank"), what="rank")
        if got != want:
            raise ExerciseCheckError(
                f"rank({n}, {k}, {p}, {loss!r}) = {got:g}, but random Jacobians give "
                f"{want}. Hint: G is a "
                "sum of n terms J_i^T A_i J_i; what is the rank of A_i for each loss?"
            )
    return passed(
        "rank G = min(P, n k) for the square loss and min(P, n (k - 1)) for the "
        "cross-entropy "
        "(A_i 1 = 0)."
    )


def check_hutchinson_variance(variance: Callable) -> None:
    """variance(H, probe) must be Var(v^T H v) for one probe v, "gaussian" or
    "rademacher".

    Args:
        variance: your function of a symmetric matrix H and a probe name returning a
            float.

    Example:
        >>> import numpy as np
        >>> wrong = lambda H, probe: float(np.sum(H**2))
        >>> exercises.ch08.check_hutchinson_variance(wrong)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: Var(v^T H v), gaussian probes: got ...
    """
    require_callable(variance, what="variance")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 6))
    h = a + a.T + np.diag(rng.standard_normal(6) * 3)
    lam = np.linalg.eigvalsh(h)
    # Gaussian: v^T H v = sum_i lam_i z_i^2 with independent chi-square(1) terms of
    # variance 2
    gauss = float(np.sum(2 * lam**2))
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=6)))
    quad = np.einsum("si,ij,sj->s", signs, h, signs)
    # all 64 sign vectors: exact
    rade = float(quad.var())
    for probe, want in (("gaussian", gauss), ("rademacher", rade)):
        got = as_scalar(
            call(variance, h.copy(), probe, what="variance"), what="variance"
        )
        compare(
            got,
            want,
            what=f"Var(v^T H v), {probe} probes",
            rtol=1e-8,
            hint="write v^T H v = sum_ij H_ij v_i v_j and use E[v_i^4] (3 for a "
            "Gaussian, 1 for a "
            "random sign) in the fourth moments.",
        )
    return passed(
        "Gaussian probes: 2 ||H||_F^2; Rademacher probes: 2 (||H||_F^2 - sum_i "
        "H_ii^2), never "
        "larger. Divide by the number of probes for the variance of the mean."
    )


def check_simplex(simplex: Callable) -> None:
    """simplex(C) must return C centred class means forming a simplex ETF (rows, unit
    norm).

    Args:
        simplex: your function of C >= 2 returning an array of shape (C, m) for some m.

    Example:
        >>> import numpy as np
        >>> exercises.ch08.check_simplex(lambda C: np.eye(C))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: simplex(2): the rows sum to ...
    """
    require_callable(simplex, what="simplex")
    for c in (2, 3, 4, 7):
        m = as_numbers(call(simplex, c, what=f"simplex({c})"), what=f"simplex({c})")
        if m.ndim != 2 or m.shape[0] != c:
            raise ExerciseCheckError(
                f"simplex({c}) must have shape ({c}, m), got {m.shape}"
            )
        if np.linalg.norm(m.sum(axis=0)) > 1e-8:
            raise ExerciseCheckError(
                f"simplex({c}): the rows sum to {np.round(m.sum(axis=0), 4)}, not 0. "
                "Centred class means (equal class sizes) sum to zero."
            )
        norms = np.linalg.norm(m, axis=1)
        compare(norms, np.ones(c), what=f"simplex({c}) row norms", atol=1e-8)
        cos = m @ m.T
        compare(
            cos[~np.eye(c, dtype=bool)],
            np.full(c * (c - 1), -1.0 / (c - 1)),
            what=f"simplex({c}) pairwise cosines",
            atol=1e-8,
        )
    return passed(
        "Rows of sqrt(C/(C-1)) (I - 11^T/C): equal norms, cosines -1/(C-1), as far "
        "apart as C "
        "unit vectors summing to zero can be; orthogonal means would not sum to zero."
    )
