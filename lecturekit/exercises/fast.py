"""Checks for the exercises of the appendix "Computing kernels and Hessians fast".

Each check compares a learner's function with an independent reference computed here (the
diagonal of the Jacobian-contraction NTK; the Ritz values of every leading block of a Lanczos
matrix from SciPy's tridiagonal eigensolver) and raises :class:`ExerciseCheckError` with an
explanation if it differs.
"""

from __future__ import annotations

import functools
from typing import Callable

import jax
import numpy as np
import scipy.linalg

from . import ExerciseCheckError, call_numeric, compare, passed, require_callable

# (widths, activation, options): a deep tanh network with biases everywhere, and a ReLU one
_NETWORKS = (
    ((5, 40, 30, 20, 1), "tanh", dict(w_std=1.4, b_std=0.3, out_b_std=0.5)),
    ((3, 16, 1), "relu", {}),
)


def check_ntk_diagonal(candidate: Callable) -> None:
    """candidate(net, params, x) -> the n numbers Theta(x_i, x_i) of a scalar-output nets.mlp network."""
    from .. import nets, tangent

    require_callable(candidate, what="ntk_diagonal")
    for seed, (widths, activation, options) in enumerate(_NETWORKS):
        net = nets.mlp(widths, activation, **options)
        params = net.init(jax.random.key(70 + seed))
        x = jax.random.normal(jax.random.key(80 + seed), (7, widths[0]))
        got = call_numeric(candidate, net, params, x, what=f"ntk_diagonal(net, params, x) for widths {widths}")
        expected = np.diag(np.asarray(tangent.jacobian_ntk(net.apply, params, x)))
        compare(got, expected, what=f"the tangent-kernel diagonal of the {activation} network {widths}", rtol=1e-10,
                hint="Theta(x, x) = sum over every dense layer l, the readout included (where delta = 1), of "
                     "(mW_l^2 |h_l(x)|^2 + mb_l^2) |delta_l(x)|^2; the bias term mb_l^2 multiplies |delta_l|^2 too")
    return passed("the diagonal matches the Jacobian contraction to 1e-10 on a deep tanh and a ReLU network.")


@functools.lru_cache(maxsize=None)
def _lanczos_run() -> tuple[np.ndarray, np.ndarray]:
    """alpha, beta of 30 Lanczos steps on a 200 x 200 symmetric matrix whose extreme eigenvalues
    come in clustered pairs of both signs (like a wide network's Hessian)."""
    from ..hessian import lanczos

    rng = np.random.default_rng(0)  # a local generator: no global NumPy state
    eigenvalues = np.concatenate([1 - 0.02 * rng.random(40), -(1 - 0.02 * rng.random(40)), rng.uniform(-0.5, 0.5, 120)])
    basis, _ = np.linalg.qr(rng.standard_normal((200, 200)))
    matrix = (basis * eigenvalues) @ basis.T
    run = lanczos(lambda v, a: a @ v, rng.standard_normal(200), tol=1e-12, max_iter=30, min_iter=30,
                  args=(jax.device_put(matrix),))
    return run.alpha, run.beta


def check_lanczos_estimates(candidate: Callable) -> None:
    """candidate(alpha, beta) -> the estimate max |Ritz value| of T_k for k = 1 .. len(alpha)."""
    require_callable(candidate, what="lanczos_estimates")
    alpha, beta = _lanczos_run()
    expected = [abs(alpha[0])] + [
        np.max(np.abs(scipy.linalg.eigh_tridiagonal(alpha[:k], beta[: k - 1], eigvals_only=True)))
        for k in range(2, alpha.size + 1)
    ]
    got = call_numeric(candidate, alpha.copy(), beta.copy(), what="lanczos_estimates(alpha, beta)")
    if got.shape != (alpha.size,):
        raise ExerciseCheckError(
            f"lanczos_estimates(alpha, beta): expected one estimate per step, shape ({alpha.size},), got {got.shape}"
        )
    compare(got, np.array(expected), what="the estimates after k = 1, 2, ... steps", rtol=1e-10,
            hint="T_k is the leading k x k block: diagonal alpha[:k], off-diagonal beta[:k-1]; its estimate is "
                 "the largest |eigenvalue|, which may be the most negative one")
    return passed(f"all {alpha.size} estimates match; they never decrease and never exceed ||A||_2.")
