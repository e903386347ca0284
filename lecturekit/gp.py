"""Gaussian-process regression with a given kernel (e.g. the NNGP of a network).

Model: f ~ GP(0, k), observations y_i = f(x_i) + eps_i with eps_i ~ N(0, noise) iid.
With K = k(X, X), k_* = k(X_*, X) and K_** = k(X_*, X_*) the posterior of f(X_*) is
Gaussian with

    mean = k_* (K + noise I)^{-1} y,
    cov  = K_** - k_* (K + noise I)^{-1} k_*^T        (Rasmussen & Williams 2006, eq.
    2.23-2.24).

Both are computed from one Cholesky factorization L L^T = K + (noise + jitter) I and
triangular solves (never an explicit inverse). ``jitter`` is a tiny diagonal added only
to make a numerically semi-definite K factorizable; it is reported back so that it is
never silent.

The linear algebra runs in small jitted functions (compiled once per shape) and the
checks on
concrete inputs use NumPy: executed eagerly, every JAX operation on a new shape would be
compiled on its own, which costs far more than the arithmetic on these small matrices.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax.typing import ArrayLike

from . import sampling as _sampling
from ._validation import as_float_array, check_key, check_positive_int, check_real

__all__ = [
    "Posterior",
    "cholesky",
    "posterior",
    "log_marginal_likelihood",
    "sample_prior",
    "posterior_z_scores",
]


class Posterior(NamedTuple):
    """GP posterior at test points (the result of :func:`posterior`).

    Attributes:
        mean: (m,) posterior mean.
        cov: (m, m) posterior covariance (symmetrized).
        jitter: the diagonal jitter the Cholesky factorization needed (0.0 if none).

    Example:
        >>> from lecturekit import gp
        >>> post = gp.posterior(np.eye(2), np.array([[0.5, 0.0]]), np.eye(1),
        ...                     np.array([1.0, 2.0]))
        >>> print(np.round(np.asarray(post.mean), 6),
        ...       np.round(np.asarray(post.variance), 6))
        [0.5] [0.75]
    """

    mean: jax.Array
    cov: jax.Array
    jitter: float

    @property
    def variance(self) -> jax.Array:
        """Marginal posterior variances diag(cov), clipped at 0 against rounding."""
        return jnp.maximum(jnp.diag(self.cov), 0.0)


def _check_square_symmetric(k: jax.Array, name: str) -> None:
    if k.shape[0] != k.shape[1]:
        raise ValueError(f"{name} must be square, got shape {tuple(k.shape)}")
    a = np.asarray(k)
    scale = float(np.max(np.abs(a))) if a.size else 0.0
    if a.size and float(np.max(np.abs(a - a.T))) > 1e-8 * max(scale, 1.0):
        raise ValueError(f"{name} must be symmetric (a kernel matrix)")


@jax.jit
def _shifted_cholesky(a: jax.Array, shift: jax.Array) -> jax.Array:
    """Lower Cholesky factor of a + shift I (NaN entries if that is not positive
    definite).
    """
    return jnp.linalg.cholesky(a + shift * jnp.eye(a.shape[0], dtype=a.dtype))


@jax.jit
def _posterior_from_factor(factor, ksx, kss, y):
    alpha = jsl.cho_solve((factor, True), y)
    v = jsl.solve_triangular(factor, ksx.T, lower=True)  # (n, m): L^{-1} k_*^T
    cov = kss - v.T @ v
    return ksx @ alpha, 0.5 * (cov + cov.T)


def cholesky(
    matrix: ArrayLike, *, jitter: float = 0.0, max_tries: int = 6
) -> tuple[jax.Array, float]:
    """Lower Cholesky factor of a symmetric positive (semi-)definite matrix, with
    adaptive jitter.

    Tries ``matrix + jitter I``; if that fails (NaN factor), retries with the jitter
    raised to 1e-12 x mean diagonal and then multiplied by 100 each time, up to
    ``max_tries`` times.

    Args:
        matrix: (n, n) symmetric matrix.
        jitter: diagonal added on the first try.
        max_tries: number of retries with a larger jitter.

    Returns:
        ``(L, jitter_used)``: the lower factor (n, n) and the jitter it needed.

    Raises:
        ValueError: if the matrix is not positive semi-definite.

    Example:
        >>> from lecturekit import gp
        >>> factor, used = gp.cholesky(np.ones((2, 2)))   # singular: needs jitter
        >>> print(factor.shape, used > 0)
        (2, 2) True
    """
    a = as_float_array(matrix, name="matrix", ndim=2, nonempty=True)
    _check_square_symmetric(a, "matrix")
    jitter = check_real(jitter, name="jitter", nonnegative=True)
    max_tries = check_positive_int(max_tries, name="max_tries", minimum=0)
    base = float(np.mean(np.abs(np.diag(np.asarray(a))))) or 1.0
    current = jitter
    for attempt in range(max_tries + 1):
        factor = _shifted_cholesky(a, current)
        if np.all(np.isfinite(np.asarray(factor))):
            return factor, current
        current = max(current, 1e-12 * base) if attempt == 0 else current * 100.0
    raise ValueError(
        "matrix is not positive semi-definite: Cholesky failed even with jitter "
        f"{current / 100.0:.3g} "
        f"(min eigenvalue {float(np.linalg.eigvalsh(np.asarray(a))[0]):.3g})"
    )


def posterior(
    k_train: ArrayLike,
    k_cross: ArrayLike,
    k_test: ArrayLike,
    y: ArrayLike,
    *,
    noise: float = 0.0,
    jitter: float = 0.0,
) -> Posterior:
    """Posterior mean and covariance of f(X_*) given y = f(X) + N(0, noise I).

    ``noise`` = 0 gives noiseless interpolation (the Cholesky then may need jitter).

    Args:
        k_train: k(X, X), (n, n).
        k_cross: k(X_test, X), (m, n).
        k_test: k(X_test, X_test), (m, m).
        y: (n,) observations.
        noise: observation noise variance.
        jitter: initial diagonal jitter of the factorization.

    Returns:
        A :class:`Posterior`.

    Example:
        >>> from lecturekit import gp
        >>> post = gp.posterior(np.eye(2), np.eye(2), np.eye(2),
        ...                     np.array([1.0, -1.0]), noise=1.0)
        >>> print(np.round(np.asarray(post.mean), 6))
        [ 0.5 -0.5]
    """
    kxx = as_float_array(k_train, name="k_train", ndim=2, nonempty=True)
    ksx = as_float_array(k_cross, name="k_cross", ndim=2)
    kss = as_float_array(k_test, name="k_test", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    noise = check_real(noise, name="noise", nonnegative=True)
    jitter = check_real(jitter, name="jitter", nonnegative=True)
    n = kxx.shape[0]
    _check_square_symmetric(kxx, "k_train")
    _check_square_symmetric(kss, "k_test")
    if y.shape[0] != n:
        raise ValueError(
            f"y must have length {n} (the size of k_train), got {y.shape[0]}"
        )
    if ksx.shape != (kss.shape[0], n):
        raise ValueError(
            f"k_cross must have shape {(kss.shape[0], n)} = (m, n), got "
            f"{tuple(ksx.shape)}"
        )
    factor, used = cholesky(np.asarray(kxx) + noise * np.eye(n), jitter=jitter)
    mean, cov = _posterior_from_factor(factor, ksx, kss, y)
    return Posterior(mean, cov, used)


def log_marginal_likelihood(
    k_train: ArrayLike, y: ArrayLike, *, noise: float = 0.0, jitter: float = 0.0
) -> float:
    """log p(y) = -y^T (K + noise I)^{-1} y / 2 - log det(K + noise I) / 2 - n log(2 pi)
    / 2.

    Args:
        k_train: k(X, X), (n, n).
        y: (n,) observations.
        noise: observation noise variance.
        jitter: initial diagonal jitter of the factorization.

    Returns:
        The log marginal likelihood, a float.

    Example:
        >>> from lecturekit import gp
        >>> print(round(gp.log_marginal_likelihood(np.eye(1), np.array([0.0])), 6))
        -0.918939
    """
    kxx = as_float_array(k_train, name="k_train", ndim=2, nonempty=True)
    y = as_float_array(y, name="y", ndim=1)
    noise = check_real(noise, name="noise", nonnegative=True)
    jitter = check_real(jitter, name="jitter", nonnegative=True)
    _check_square_symmetric(kxx, "k_train")
    if y.shape[0] != kxx.shape[0]:
        raise ValueError(
            f"y must have length {kxx.shape[0]} (the size of k_train), got {y.shape[0]}"
        )
    factor, _ = cholesky(
        kxx + noise * jnp.eye(kxx.shape[0], dtype=kxx.dtype), jitter=jitter
    )
    w = jsl.solve_triangular(factor, y, lower=True)
    n = y.shape[0]
    return float(
        -0.5 * w @ w
        - jnp.sum(jnp.log(jnp.diag(factor)))
        - 0.5 * n * jnp.log(2 * jnp.pi)
    )


def sample_prior(
    key: jax.Array, kernel: ArrayLike, num_samples: int, *, jitter: float = 1e-10
) -> jax.Array:
    """Draw ``num_samples`` functions from N(0, kernel) on a grid; returns (num_samples,
    n).

    Uses f = L g with L L^T = kernel + jitter' I (the jitter actually used is the
    smallest that factorizes, starting at ``jitter`` times the mean diagonal) and g ~
    N(0, I) from
    :func:`lecturekit.sampling.standard_normal`.

    Args:
        key: a ``jax.random`` key.
        kernel: (n, n) covariance on the grid.
        num_samples: number of functions.
        jitter: relative diagonal jitter.

    Returns:
        (num_samples, n) array, one function per row.

    Example:
        >>> from lecturekit import gp
        >>> print(gp.sample_prior(jax.random.key(0), np.eye(3), 4).shape)
        (4, 3)
    """
    check_key(key)
    k = as_float_array(kernel, name="kernel", ndim=2, nonempty=True)
    _check_square_symmetric(k, "kernel")
    num_samples = check_positive_int(num_samples, name="num_samples")
    jitter = check_real(jitter, name="jitter", nonnegative=True)
    base = float(np.mean(np.abs(np.diag(np.asarray(k))))) or 1.0
    factor, _ = cholesky(k, jitter=jitter * base)
    g = _sampling.standard_normal(key, (k.shape[0], num_samples), factor.dtype)
    return (factor @ g).T


def posterior_z_scores(
    key: jax.Array,
    kernel: ArrayLike,
    n_train: int,
    *,
    noise: float,
    num_draws: int,
    jitter: float = 1e-10,
) -> jax.Array:
    """Standardized errors of the posterior when the data really come from the prior.

    ``kernel`` is k on all points, the first ``n_train`` of them the training inputs X
    and the rest the test points X_*. Each draw takes f ~ N(0, kernel) on all points and
    y = f(X) + N(0, noise I), computes the posterior (:func:`posterior`) and returns
    (f(X_*) - mean_*) / sqrt(var_*). If mean and variance are the conditional ones,
    every entry is exactly N(0, 1); a wrong variance (e.g. the prior's, or the noiseless
    formula) makes E[z^2] differ from 1.

    Args:
        key: a ``jax.random`` key.
        kernel: (n_train + m, n_train + m) kernel on all points, training points first.
        n_train: number of training points.
        noise: observation noise variance.
        num_draws: number of draws.
        jitter: relative diagonal jitter.

    Returns:
        (num_draws, m) standardized errors, m = number of test points.

    Example:
        >>> from lecturekit import gp
        >>> k = np.array([[1.0, 0.5], [0.5, 1.0]])
        >>> print(gp.posterior_z_scores(
        ...     jax.random.key(0), k, 1, noise=0.1, num_draws=5).shape)
        (5, 1)
    """
    check_key(key)
    k = as_float_array(kernel, name="kernel", ndim=2, nonempty=True)
    _check_square_symmetric(k, "kernel")
    n = check_positive_int(n_train, name="n_train")
    if n >= k.shape[0]:
        raise ValueError(
            f"n_train must be < the number of points {k.shape[0]}, got {n}"
        )
    noise = check_real(noise, name="noise", nonnegative=True)
    num_draws = check_positive_int(num_draws, name="num_draws")
    jitter = check_real(jitter, name="jitter", nonnegative=True)
    a = np.asarray(k)
    post = posterior(a[:n, :n], a[n:, :n], a[n:, n:], np.zeros(n), noise=noise)
    factor, _ = cholesky(a, jitter=jitter * (float(np.mean(np.abs(np.diag(a)))) or 1.0))
    size = a.shape[0]
    # one flat draw
    g = _sampling.standard_normal(key, ((size + n) * num_draws,), factor.dtype)
    f = (factor @ g[: size * num_draws].reshape(size, num_draws)).T
    y = f[:, :n] + np.sqrt(noise) * g[size * num_draws :].reshape(num_draws, n)
    return _z_scores(
        a[:n, :n] + noise * np.eye(n), a[n:, :n], f[:, n:], y, post.variance
    )


@jax.jit
def _z_scores(a_noisy, ksx, f_test, y, variance):
    mean = jsl.solve(a_noisy, ksx.T, assume_a="pos").T @ y.T  # (m, draws)
    return (f_test - mean.T) / jnp.sqrt(variance)
