"""Spectra of sample covariances and norms of products of Gaussian matrices (Chapter
10).

Two limits that do not commute. For a ``P x n0`` matrix ``X`` of i.i.d. N(0, 1) entries
with ``P / n0 -> alpha in (0, 1)``, the eigenvalues of ``X X^T / n0`` follow the
Marchenko-Pastur law with density ``sqrt((lam_+ - x)(x - lam_-)) / (2 pi alpha x)`` on
``[lam_-, lam_+]``, ``lam_pm = (1 +- sqrt(alpha))^2``
(:func:`marchenko_pastur_density`).

A deep linear network with widths ``(n0, n1, ..., nL, 1)`` and weights
``W^(l) in R^{n_l x n_{l-1}}`` of i.i.d. ``N(0, 1/n_{l-1})`` entries computes
``x -> theta . x`` with ``theta = W^(L+1) ... W^(1)``. Its squared norm equals in law
``prod_{k=0}^{L} chi2_{n_k} / n_k`` (independent factors; the input dimension ``n0``
enters), so ``E ||theta||^2 = 1`` while ``log ||theta||`` is approximately
``N(-beta/2, beta/2)`` with ``beta = sum_k 1/n_k`` (:func:`log_norm_moments`).
All draws come from :func:`lecturekit.sampling.standard_normal`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special
from jax.typing import ArrayLike

from . import sampling as _sampling
from ._validation import (
    as_host_float_array,
    check_key,
    check_positive_int,
    check_real,
    check_widths,
)

__all__ = [
    "marchenko_pastur_edges",
    "marchenko_pastur_density",
    "covariance_spectrum",
    "product_vectors",
    "chi2_product",
    "log_norm_moments",
    "log_norm_path",
    "lyapunov_exponent",
]


def _alpha(alpha: Any) -> float:
    value = check_real(alpha, name="alpha", positive=True)
    if value >= 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {value}")
    return value


def marchenko_pastur_edges(alpha: float) -> tuple[float, float]:
    """The edges ``lam_pm = (1 +- sqrt(alpha))^2`` of the Marchenko-Pastur support.

    Args:
        alpha: the aspect ratio ``P / n0``, in (0, 1).

    Returns:
        ``(lam_minus, lam_plus)`` as Python floats.

    Example:
        >>> random_matrices.marchenko_pastur_edges(0.25)
        (0.25, 2.25)
    """
    a = _alpha(alpha)
    return (1.0 - a**0.5) ** 2, (1.0 + a**0.5) ** 2


def marchenko_pastur_density(x: ArrayLike, alpha: float) -> np.ndarray:
    """The Marchenko-Pastur density ``sqrt((lam_+ - x)(x - lam_-)) / (2 pi alpha x)``.

    It is the limiting eigenvalue density of ``X X^T / n0`` for ``X`` of shape ``P x
    n0`` with i.i.d. N(0, 1) entries and ``P / n0 -> alpha``; it has mass 1, mean 1 and
    second moment ``1 + alpha``, and vanishes outside ``[lam_-, lam_+]``.

    Args:
        x: points (any shape).
        alpha: the aspect ratio ``P / n0``, in (0, 1).

    Returns:
        A float64 NumPy array shaped like ``x``.

    Example:
        >>> xs = np.linspace(0.0, 3.0, 300_001)
        >>> mass = np.trapezoid(random_matrices.marchenko_pastur_density(xs, 0.5), xs)
        >>> round(float(mass), 4)
        1.0
    """
    a = _alpha(alpha)
    xs = as_host_float_array(x, name="x")
    lo, hi = marchenko_pastur_edges(a)
    inside = (xs > lo) & (xs < hi)
    safe = np.where(inside, xs, 1.0)
    return np.where(
        inside,
        np.sqrt(np.clip((hi - safe) * (safe - lo), 0.0, None))
        / (2.0 * np.pi * a * safe),
        0.0,
    )


def covariance_spectrum(key: jax.Array, P: int, n0: int) -> np.ndarray:
    """Eigenvalues of ``X X^T / n0`` for one ``P x n0`` matrix of i.i.d. N(0, 1)
    entries.

    Args:
        key: a JAX PRNG key (the entries are ``sampling.standard_normal(key, (P,
            n0))``).
        P: number of rows (data points).
        n0: number of columns (input dimension).

    Returns:
        The ``P`` eigenvalues in increasing order, a float64 NumPy array.

    Example:
        >>> ev = random_matrices.covariance_spectrum(jax.random.key(0), 200, 400)
        >>> ev.shape, bool(abs(ev.mean() - 1.0) < 0.02)
        ((200,), True)
    """
    check_key(key)
    P = check_positive_int(P, name="P")
    n0 = check_positive_int(n0, name="n0")
    x = np.asarray(_sampling.standard_normal(key, (P, n0), jnp.float64))
    return np.linalg.eigvalsh(x @ x.T / n0)


def product_vectors(key: jax.Array, widths: Sequence[int], count: int) -> np.ndarray:
    """Draws of ``theta = W^(L+1) ... W^(1)`` for a deep linear network.

    ``widths = (n0, n1, ..., nL)`` (the output width is 1); ``W^(l)`` has shape
    ``n_l x n_{l-1}`` and i.i.d. ``N(0, 1/n_{l-1})`` entries, drawn independently for
    each of the ``count`` networks. ``widths = (n0,)`` is a single layer (``L = 0``).

    Args:
        key: a JAX PRNG key.
        widths: the input and hidden widths, positive integers.
        count: number of networks.

    Returns:
        A float64 NumPy array of shape ``(count, n0)``, row ``i`` the vector of network
        i.

    Example:
        >>> th = random_matrices.product_vectors(jax.random.key(0), (5, 8, 8), 20_000)
        >>> th.shape, bool(abs((th**2).sum(1).mean() - 1.0) < 0.05)
        ((20000, 5), True)
    """
    check_key(key)
    ws = check_widths(widths)
    count = check_positive_int(count, name="count")
    dims = ws + (1,)
    keys = jax.random.split(key, len(ws))
    # start from the readout W^(L+1) (count, 1, n_L) and multiply by W^(L), ..., W^(1)
    v = None
    for layer in range(len(ws), 0, -1):  # layer l maps n_{l-1} -> n_l
        n_in, n_out = dims[layer - 1], dims[layer]
        w = np.asarray(
            _sampling.standard_normal(
                keys[layer - 1], (count, n_out, n_in), jnp.float64
            )
        ) / np.sqrt(n_in)
        v = w[:, 0, :] if v is None else np.einsum("ci,cij->cj", v, w)
    return v


def chi2_product(key: jax.Array, widths: Sequence[int], count: int) -> np.ndarray:
    """Draws of ``prod_k chi2_{n_k} / n_k`` with independent factors, one per width.

    Each ``chi2_n`` is a sum of ``n`` squared standard normals. With
    ``widths = (n0, n1, ..., nL)`` this is the law of ``||theta||^2`` of
    :func:`product_vectors`.

    Args:
        key: a JAX PRNG key.
        widths: the degrees of freedom ``n_k``, positive integers.
        count: number of draws.

    Returns:
        A float64 NumPy array of shape ``(count,)``.

    Example:
        >>> s = random_matrices.chi2_product(jax.random.key(1), (5, 8, 8), 50_000)
        >>> bool(abs(s.mean() - 1.0) < 0.03)
        True
    """
    check_key(key)
    ws = check_widths(widths)
    count = check_positive_int(count, name="count")
    out = np.ones(count)
    for k, n in zip(jax.random.split(key, len(ws)), ws):
        g = np.asarray(_sampling.standard_normal(k, (count, n), jnp.float64))
        out *= (g**2).sum(axis=1) / n
    return out


def log_norm_moments(widths: Sequence[int]) -> tuple[float, float]:
    """Exact mean and variance of ``log ||theta||`` (half of ``log prod
    chi2_{n_k}/n_k``).

    Uses ``E log(chi2_n / n) = psi(n/2) + log(2/n)`` and ``Var log chi2_n = psi'(n/2)``,
    so the mean is ``(1/2) sum_k [psi(n_k/2) + log(2/n_k)]`` (about ``-beta/2`` with
    ``beta = sum_k 1/n_k``) and the variance ``(1/4) sum_k psi'(n_k/2)`` (about
    ``beta/2``).

    Args:
        widths: the ``n_k``, positive integers.

    Returns:
        ``(mean, variance)`` as Python floats.

    Example:
        >>> m, v = random_matrices.log_norm_moments([100] * 60)
        >>> round(m, 3), round(v, 3)
        (-0.301, 0.303)
    """
    ws = np.asarray(check_widths(widths), dtype=float)
    mean = 0.5 * np.sum(scipy.special.digamma(ws / 2) + np.log(2 / ws))
    var = 0.25 * np.sum(scipy.special.polygamma(1, ws / 2))
    return float(mean), float(var)


def log_norm_path(key: jax.Array, n: int, depth: int, count: int) -> np.ndarray:
    """``log ||W_m ... W_1 e_1||`` for m = 1, ..., depth: products of square Gaussian
    matrices.

    The ``W_m`` are independent ``n x n`` matrices of i.i.d. ``N(0, 1/n)`` entries (the
    deep linear network's layers at constant width), applied to the fixed unit vector
    ``e_1``; each of the ``count`` paths uses its own matrices. The vector is
    renormalized after every step and the logs of the norms accumulated, so nothing
    under- or overflows. The normals come
    from :func:`lecturekit.sampling.standard_normal`, ``max(1, 2e7 // (count n^2))``
    layers per draw.

    Args:
        key: a JAX PRNG key.
        n: the width, >= 1.
        depth: the number of matrices, >= 1.
        count: the number of independent products.

    Returns:
        A float64 NumPy array of shape ``(count, depth)``.

    Example:
        >>> path = random_matrices.log_norm_path(jax.random.key(0), 4, 50, 2000)
        >>> lam = random_matrices.lyapunov_exponent(4)
        >>> bool(abs(path[:, -1].mean() / 50 - lam) < 0.01), path.shape
        (True, (2000, 50))
    """
    check_key(key)
    n = check_positive_int(n, name="n")
    depth = check_positive_int(depth, name="depth")
    count = check_positive_int(count, name="count")
    per_draw = max(1, int(2e7) // (count * n * n))
    v = np.zeros((count, n))
    v[:, 0] = 1.0
    total = np.zeros(count)
    out = np.empty((count, depth))
    for start in range(0, depth, per_draw):
        block = min(per_draw, depth - start)
        w = np.asarray(
            _sampling.standard_normal(
                jax.random.fold_in(key, start), (block, count, n, n), jnp.float64
            )
        ) / np.sqrt(n)
        for j in range(block):
            v = np.einsum("cij,cj->ci", w[j], v)
            norm = np.sqrt((v**2).sum(axis=1))
            total += np.log(norm)
            v /= norm[:, None]
            out[:, start + j] = total
    return out


def lyapunov_exponent(n: int) -> float:
    """The top Lyapunov exponent ``(psi(n/2) + log(2/n)) / 2`` of products of ``n x n``
    Gaussians.

    For ``W`` with i.i.d. ``N(0, 1/n)`` entries and any unit vector ``x``,
    ``||W x||^2 = chi2_n / n`` in law, independent of the direction ``W x / ||W x||``,
    which is again uniform. So ``log ||W_L ... W_1 x||`` is a sum of L i.i.d. terms
    ``(1/2) log(chi2_n / n)``, and ``(1/L) log ||W_L ... W_1 x||`` tends almost surely
    to their mean, ``(1/2) E log(chi2_n / n) = (psi(n/2) + log(2/n)) / 2`` (about
    ``-1/(2n)`` for large n), with Gaussian fluctuations of variance
    ``psi'(n/2) / (4 L)``.

    Args:
        n: the width, >= 1.

    Returns:
        The exponent, a negative Python float.

    Example:
        >>> round(random_matrices.lyapunov_exponent(2), 4)        # -Euler's gamma / 2
        -0.2886
    """
    n = check_positive_int(n, name="n")
    return float(0.5 * (scipy.special.digamma(n / 2) + np.log(2 / n)))
