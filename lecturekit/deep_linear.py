"""Bayesian interpolation with a deep linear prior (Chapter 10; Hanin and Zlokapa).

Prior: ``theta = sigma * W^(L+1) ... W^(1)`` with widths ``(n0, n1, ..., nL, 1)`` and
``W^(l)`` of i.i.d. ``N(0, 1/n_{l-1})`` entries; ``sigma2 = sigma^2`` is an overall
prior scale (``L = 0`` is the Gaussian prior ``N(0, sigma2 I / n0)`` of the NNGP limit).
Data: ``P`` noise-free equations ``X theta = Y``, ``X`` of shape ``(P, n0)`` and rank
``P < n0``. The posterior is the prior restricted to the affine solution set.

Conventions and results (derived in Chapter 10, checked there and in the tests):

* ``theta_par = X^T (X X^T)^{-1} Y`` (the minimum-norm solution, in the row space of X),
  ``a = ||theta_par||^2`` and ``k = n0 - P``. Every solution is ``theta_par + r u`` with
  ``u`` a unit vector of the null space of X and ``r = ||theta_perp||``.
* The prior density of theta depends on ``s = ||theta||^2`` only; if ``p_S`` is the
  density of ``s``, the density of theta is ``const * p_S(s) * s^{(2 - n0)/2}``.
  Restricted to the solution set, in polar coordinates of the ``k``-dimensional null
  space, ``u`` is uniform on its sphere and independent of ``r``, and
  ``p(r | data) ∝ p_S(a + r^2) (a + r^2)^{(2 - n0)/2} r^{k - 1}``
  (:func:`norm_posterior`). Here ``s / sigma2`` has the law of
  ``prod_{k=0}^{L} chi2_{n_k} / n_k``, whose log-density :func:`log_norm_density`
  computes by numerical convolution.
* The prediction ``f(x) = theta . x`` has posterior mean ``theta_par . x`` and variance
  ``||x_perp||^2 E[r^2] / k`` (``x_perp``: the part of x in the null space), because
  ``E[(u . v)^2] = ||v||^2 / k`` for u uniform on the unit sphere of a k-dimensional
  space.
* Given the hidden layers, ``theta`` is Gaussian ``N(0, sigma2 H I / n0)`` with
  ``H = ||W^(L+1) ... W^(2)||^2``: the exact sampler :func:`sample_posterior` and the
  evidence :func:`log_evidence` use this scale mixture.
* The architecture enters, for large ``P, n0, n_k``, through the effective depth
  ``lambda = P sum_{k=1}^{L} 1/n_k`` (:func:`effective_depth`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.interpolate
import scipy.optimize
import scipy.signal
import scipy.special
from jax.typing import ArrayLike

from . import random_matrices as _rm
from . import sampling as _sampling
from ._validation import (
    as_host_float_array,
    check_choice,
    check_key,
    check_positive_int,
    check_real,
    check_widths,
)

__all__ = [
    "LogDensity",
    "log_norm_density",
    "Interpolation",
    "interpolation",
    "NormPosterior",
    "norm_posterior",
    "predictive",
    "effective_depth",
    "PosteriorSample",
    "sample_posterior",
    "log_evidence",
    "optimal_prior_scale",
]


class LogDensity(NamedTuple):
    """A density of ``t = log s`` on a uniform grid (:func:`log_norm_density`).

    Attributes:
        grid: increasing, equally spaced points ``t``.
        density: the density of ``t`` there (integrates to 1 with the trapezoid rule).

    Example:
        >>> d = deep_linear.log_norm_density((4,))
        >>> round(float(np.trapezoid(d.density, d.grid)), 6)
        1.0
    """

    grid: np.ndarray
    density: np.ndarray


def _log_factor(y: np.ndarray, n: int) -> np.ndarray:
    # density of log(chi2_n / n): chi2_n / n ~ Gamma(n/2, scale 2/n), times the Jacobian
    # e^y
    k = n / 2
    return k * np.log(k) + k * y - k * np.exp(y) - scipy.special.gammaln(k)


def log_norm_density(widths: Sequence[int], *, points_per_sd: int = 40) -> LogDensity:
    """Density of ``log prod_k chi2_{n_k} / n_k`` (independent factors), by convolution.

    Each factor ``log(chi2_n / n)`` has the exact density
    ``exp((n/2) log(n/2) + (n/2) y - (n/2) e^y) / Gamma(n/2)``; it is tabulated on a
    common grid of spacing ``h = min_k sd_k / points_per_sd`` (``sd_k^2 = psi'(n_k/2)``)
    over a range outside which it is below ``e^-35`` of its peak, and the tables are
    convolved with FFTs (trapezoid rule, error ``O(h^2)``). Values below ``1e-15`` of
    the peak (the FFT's rounding floor) are set to 0, so a moment carried by the far
    tail, such as ``E S`` when ``sum_k 1/n_k`` is of order 20, comes out too small. With
    ``widths = (n0, ..., nL)`` it is the density of ``log ||theta||^2`` of a deep linear
    network (:func:`lecturekit.random_matrices.product_vectors`).

    Args:
        widths: the degrees of freedom ``n_k``, positive integers.
        points_per_sd: grid points per standard deviation of the narrowest factor.

    Returns:
        A :class:`LogDensity`.

    Example:
        >>> d = deep_linear.log_norm_density((5, 8, 8))
        >>> mean = np.trapezoid(d.grid * d.density, d.grid)
        >>> m, _ = random_matrices.log_norm_moments((5, 8, 8))
        >>> bool(abs(mean - 2 * m) < 1e-6)
        True
    """
    ws = check_widths(widths)
    pps = check_positive_int(points_per_sd, name="points_per_sd", minimum=4)
    sds = np.sqrt(scipy.special.polygamma(1, np.asarray(ws) / 2))
    h = float(sds.min()) / pps
    start, dens = 0, None
    for n, sd in zip(ws, sds):
        lo = int(np.floor(-(80.0 / n + 10.0 * sd) / h))
        hi = int(np.ceil(np.log1p(10.0 * sd + 80.0 / n) / h))
        y = h * np.arange(lo, hi + 1)
        table = np.exp(_log_factor(y, n))
        dens = table if dens is None else scipy.signal.fftconvolve(dens, table) * h
        start += lo
        dens = np.where(dens > 1e-15 * dens.max(), dens, 0.0)
    grid = h * np.arange(start, start + dens.size)
    dens = dens / np.trapezoid(dens, grid)
    return LogDensity(grid, dens)


class Interpolation(NamedTuple):
    """The geometry of the solution set of ``X theta = Y`` (:func:`interpolation`).

    Attributes:
        theta_par: the minimum-norm solution ``X^T (X X^T)^{-1} Y``, shape ``(n0,)``.
        row_basis: orthonormal basis of the row space of X, shape ``(n0, P)``.
        null_dim: ``k = n0 - P``, the dimension of the null space.

    Example:
        >>> geo = deep_linear.interpolation(np.eye(1, 3), np.array([2.0]))
        >>> geo.theta_par.tolist(), geo.row_basis.shape, geo.null_dim
        ([2.0, 0.0, 0.0], (3, 1), 2)
    """

    theta_par: np.ndarray
    row_basis: np.ndarray
    null_dim: int


def interpolation(x_data: ArrayLike, y: ArrayLike) -> Interpolation:
    """Split the solutions of ``X theta = Y`` into ``theta_par + (null-space part)``.

    Args:
        x_data: the data matrix X, shape ``(P, n0)`` with ``P < n0`` and full row rank.
        y: the targets Y, shape ``(P,)``.

    Returns:
        An :class:`Interpolation`.

    Example:
        >>> geo = deep_linear.interpolation(np.eye(2, 3), np.array([1.0, 2.0]))
        >>> geo.theta_par.tolist(), geo.null_dim
        ([1.0, 2.0, 0.0], 1)
    """
    x = as_host_float_array(x_data, name="x_data", ndim=2, nonempty=True)
    yv = as_host_float_array(y, name="y", ndim=1)
    p, n0 = x.shape
    if p >= n0:
        raise ValueError(
            f"x_data must have fewer rows than columns (P < n0), got {x.shape}"
        )
    if yv.shape[0] != p:
        raise ValueError(
            f"y must have length {p} (the rows of x_data), got {yv.shape[0]}"
        )
    u, sv, vt = np.linalg.svd(x, full_matrices=False)
    if sv.min() <= 1e-10 * sv.max():
        raise ValueError("x_data must have full row rank")
    theta_par = vt.T @ ((u.T @ yv) / sv)
    return Interpolation(theta_par, vt.T, n0 - p)


class NormPosterior(NamedTuple):
    """The posterior of ``r = ||theta_perp||`` under a deep linear prior
    (:func:`norm_posterior`).

    Attributes:
        r: increasing grid of r values (log-spaced).
        density: the posterior density of r on the grid (integrates to 1).
        mean_r2: the posterior mean ``E[r^2 | data]``.
        geometry: the :class:`Interpolation` of the data.

    Example:
        >>> post = deep_linear.norm_posterior(np.eye(1, 3), np.ones(1), (3, 5))
        >>> mass = np.trapezoid(post.density, post.r)
        >>> bool(abs(mass - 1) < 1e-3), post.geometry.null_dim
        (True, 2)
    """

    r: np.ndarray
    density: np.ndarray
    mean_r2: float
    geometry: Interpolation


def _radial(
    logs: LogDensity, a: float, n0: int, k: int, s2: float
) -> tuple[np.ndarray, np.ndarray]:
    # p(ell) for ell = log r^2 from p(r) ∝ p_S(a + r^2) (a + r^2)^{(2 - n0)/2} r^{k - 1}
    step = min(logs.grid[1] - logs.grid[0], 0.05 * np.sqrt(2.0 / k))
    centre = np.log(k * s2 / n0)
    ell = np.arange(centre + logs.grid[0] - 10.0, centre + logs.grid[-1] + 5.0, step)
    s = a + np.exp(ell)
    t = np.log(s / s2)
    inside = (t >= logs.grid[0]) & (t <= logs.grid[-1])
    ps = np.where(
        inside, scipy.interpolate.CubicSpline(logs.grid, logs.density)(t), 0.0
    )
    with np.errstate(divide="ignore"):
        log_p = np.log(np.clip(ps, 0.0, None)) - 0.5 * n0 * np.log(s) + 0.5 * k * ell
    return ell, np.exp(log_p - log_p.max())


def _mixture(
    hidden: tuple[int, ...], a: float, P: int, n0: int, k: int, s2: float
) -> tuple[np.ndarray, np.ndarray]:
    # p(ell) = int p(t | data) p(ell | t) dt, t = log H, ell - t - log(s2/n0) = log
    # chi2_k
    h_chi = 0.05 * np.sqrt(2.0 / k)
    if hidden:
        d = log_norm_density(hidden)
        with np.errstate(divide="ignore"):
            log_w = np.log(d.density) + _log_weight(np.exp(d.grid), a, P, n0, s2)
        keep = log_w > log_w.max() - 40.0
        lo, hi = d.grid[keep][0], d.grid[keep][-1]
        step = min(d.grid[1] - d.grid[0], h_chi)
        t = np.arange(lo, hi + step, step)
        w = np.exp(np.interp(t, d.grid, log_w - log_w.max()))
    else:
        step, t, w = h_chi, np.zeros(1), np.ones(1)
    y = step * np.arange(
        np.floor((np.log(k) - 8.0 * np.sqrt(2.0 / k) - 40.0 / k) / step),
        np.ceil((np.log(k) + 10.0 * np.sqrt(2.0 / k) + 10.0 / k) / step) + 1,
    )
    log_chi = (
        0.5 * k * y
        - 0.5 * np.exp(y)
        - 0.5 * k * np.log(2.0)
        - scipy.special.gammaln(0.5 * k)
    )
    p_ell = scipy.signal.fftconvolve(w, np.exp(log_chi))
    ell = t[0] + y[0] + np.log(s2 / n0) + step * np.arange(p_ell.size)
    return ell, np.clip(p_ell, 0.0, None)


def norm_posterior(
    x_data: ArrayLike,
    y: ArrayLike,
    widths: Sequence[int],
    *,
    sigma2: float = 1.0,
    method: str = "mixture",
) -> NormPosterior:
    """Posterior of ``r = ||theta_perp||`` given ``X theta = Y`` under the deep linear
    prior.

    Two equivalent one-dimensional computations (``a = ||theta_par||^2``, ``k = n0 -
    P``):

    * ``method="radial"``: ``p(r | data) ∝ p_S(a + r^2) (a + r^2)^{(2 - n0)/2} r^{k -
      1}`` (module docstring), ``p_S`` the density of
      ``||theta||^2 = sigma2 * prod_{k=0}^{L} chi2_{n_k}/n_k``
      from :func:`log_norm_density`, cubic-spline interpolated. The factor ``(a +
      r^2)^{(2 - n0)/2}`` amplifies the tails of ``p_S``, which the table cuts at
      ``1e-15`` of its peak: accurate when the posterior stays in the bulk of the prior
      (small examples), truncated otherwise.
    * ``method="mixture"`` (default): given ``H = prod_{k=1}^{L} chi2_{n_k}/n_k`` the
      posterior of ``r^2`` is ``(sigma2 H / n0) chi2_k``, and the posterior of ``H`` is
      its prior times ``H^{-P/2} exp(-n0 a / (2 sigma2 H))``; the two are convolved on
      the log scale. Only the tails of the posterior itself are cut.

    The density of ``log r^2`` is normalized by the trapezoid rule; ``r^2`` is
    integrated against it.

    Args:
        x_data: the data matrix X, shape ``(P, n0)``, ``P < n0``.
        y: the targets, shape ``(P,)``.
        widths: ``(n0, n1, ..., nL)``; ``widths[0]`` must equal ``n0``.
        sigma2: the prior scale ``sigma^2 > 0``.
        method: ``"mixture"`` or ``"radial"``.

    Returns:
        A :class:`NormPosterior`.

    Example:
        >>> x = np.eye(2, 6)
        >>> post = deep_linear.norm_posterior(x, np.ones(2), (6,), sigma2=3.0)
        >>> round(post.mean_r2, 6)      # Gaussian prior: k sigma2 / n0 = 4 * 3 / 6
        2.0
    """
    geo = interpolation(x_data, y)
    ws = check_widths(widths)
    n0, k = geo.theta_par.shape[0], geo.null_dim
    if ws[0] != n0:
        raise ValueError(
            f"widths[0] must equal n0 = {n0} (the columns of x_data), got {ws[0]}"
        )
    s2 = check_real(sigma2, name="sigma2", positive=True)
    method = check_choice(method, ("mixture", "radial"), name="method")
    a = float(geo.theta_par @ geo.theta_par)
    if method == "radial":
        ell, p_ell = _radial(log_norm_density(ws), a, n0, k, s2)
    else:
        ell, p_ell = _mixture(ws[1:], a, n0 - k, n0, k, s2)
    p_ell = p_ell / np.trapezoid(p_ell, ell)
    r = np.exp(0.5 * ell)
    return NormPosterior(
        r, 2.0 * p_ell / r, float(np.trapezoid(np.exp(ell) * p_ell, ell)), geo
    )


def predictive(posterior: NormPosterior, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean ``theta_par . x`` and variance ``||x_perp||^2 E[r^2] / k`` of
    ``theta . x``.

    Args:
        posterior: a :class:`NormPosterior`.
        x: test inputs, shape ``(n0,)`` or ``(m, n0)``.

    Returns:
        ``(mean, variance)``, NumPy arrays of shape ``()`` or ``(m,)``.

    Example:
        >>> post = deep_linear.norm_posterior(np.eye(2, 6), np.ones(2), (6,))
        >>> mean, var = deep_linear.predictive(post, np.array([1.0, 0, 1, 0, 0, 0]))
        >>> float(mean), round(float(var), 6)       # 1 + 1 * (4/6) / 4
        (1.0, 0.166667)
    """
    if not isinstance(posterior, NormPosterior):
        raise TypeError(
            f"posterior must be a NormPosterior, got {type(posterior).__name__}"
        )
    geo = posterior.geometry
    xs = as_host_float_array(x, name="x", ndim=(1, 2))
    if xs.shape[-1] != geo.theta_par.shape[0]:
        raise ValueError(
            f"x must have {geo.theta_par.shape[0]} features, got {xs.shape[-1]}"
        )
    perp = xs - (xs @ geo.row_basis) @ geo.row_basis.T
    return xs @ geo.theta_par, (perp**2).sum(-1) * posterior.mean_r2 / geo.null_dim


def effective_depth(P: int, hidden: Sequence[int]) -> float:
    """The effective depth ``lambda = P * sum_{k=1}^{L} 1/n_k`` over the hidden widths.

    Args:
        P: number of data points.
        hidden: the hidden widths ``(n1, ..., nL)`` (may be empty: ``lambda = 0``).

    Returns:
        ``lambda`` as a Python float.

    Example:
        >>> deep_linear.effective_depth(30, (10, 20))
        4.5
    """
    P = check_positive_int(P, name="P")
    empty = isinstance(hidden, (tuple, list)) and len(hidden) == 0
    hs = () if empty else check_widths(hidden, name="hidden")
    return float(P * sum(1.0 / n for n in hs))


class PosteriorSample(NamedTuple):
    """Exact posterior draws from :func:`sample_posterior`.

    Attributes:
        theta: accepted draws of theta, shape ``(m, n0)``; they solve ``X theta = Y``.
        hidden: the matching ``H = ||W^(L+1) ... W^(2)||^2``, shape ``(m,)``.
        proposals: number of prior networks proposed.

    Example:
        >>> out = deep_linear.sample_posterior(jax.random.key(0), np.eye(1, 3),
        ...                                    np.ones(1), (3, 4), 100)
        >>> out.proposals, out.theta.shape[0] == out.hidden.shape[0] <= 100
        (100, True)
    """

    theta: np.ndarray
    hidden: np.ndarray
    proposals: int


def _log_weight(h: np.ndarray, a: float, P: int, n0: int, s2: float) -> np.ndarray:
    # log of the Gaussian evidence N(Y; 0, sigma2 H X X^T / n0), up to terms free of H
    return -0.5 * P * np.log(h) - n0 * a / (2.0 * s2 * h)


def sample_posterior(
    key: jax.Array,
    x_data: ArrayLike,
    y: ArrayLike,
    widths: Sequence[int],
    count: int,
    *,
    sigma2: float = 1.0,
) -> PosteriorSample:
    """Exact draws from the posterior by rejection over the hidden layers.

    Given the hidden layers, ``theta ~ N(0, sigma2 H I / n0)`` with
    ``H = ||W^(L+1) ... W^(2)||^2``. So: draw ``count`` prior networks' hidden products
    (:func:`lecturekit.random_matrices.product_vectors` with widths ``(n1, ..., nL)``;
    ``H = 1`` if ``L = 0``), accept each with probability ``w(H) / max w``,
    ``w(H) = H^{-P/2} exp(-n0 a / (2 sigma2 H))`` (the likelihood of the data given H),
    and complete each accepted H with the Gaussian conditional
    ``theta_par + sqrt(sigma2 H / n0) * (projection of N(0, I) on the null space)``.
    The uniforms of the rejection step are ``Phi(Z)`` of standard normals.

    Args:
        key: a JAX PRNG key.
        x_data: the data matrix X, shape ``(P, n0)``.
        y: the targets, shape ``(P,)``.
        widths: ``(n0, n1, ..., nL)``.
        count: number of prior networks proposed.
        sigma2: the prior scale.

    Returns:
        A :class:`PosteriorSample`.

    Example:
        >>> x = np.eye(2, 6)
        >>> out = deep_linear.sample_posterior(jax.random.key(0), x, np.ones(2),
        ...                                    (6, 4), 2000)
        >>> bool(np.allclose(out.theta @ x.T, 1.0)), out.theta.shape[1]
        (True, 6)
    """
    check_key(key)
    geo = interpolation(x_data, y)
    ws = check_widths(widths)
    n0, P = geo.theta_par.shape[0], geo.row_basis.shape[1]
    if ws[0] != n0:
        raise ValueError(
            f"widths[0] must equal n0 = {n0} (the columns of x_data), got {ws[0]}"
        )
    count = check_positive_int(count, name="count")
    s2 = check_real(sigma2, name="sigma2", positive=True)
    k_h, k_u, k_g = jax.random.split(key, 3)
    if len(ws) > 1:
        h = (_rm.product_vectors(k_h, ws[1:], count) ** 2).sum(axis=1)
    else:
        h = np.ones(count)
    a = float(geo.theta_par @ geo.theta_par)
    log_w = _log_weight(h, a, P, n0, s2)
    log_w_max = float(_log_weight(np.array(n0 * a / (P * s2)), a, P, n0, s2))
    u = scipy.special.ndtr(
        np.asarray(_sampling.standard_normal(k_u, (count,), jnp.float64))
    )
    # with L = 0, H = 1 is not random: every proposal is accepted
    keep = np.log(u) < log_w - log_w_max if len(ws) > 1 else np.ones(count, dtype=bool)
    hk = h[keep]
    g = np.asarray(_sampling.standard_normal(k_g, (hk.size, n0), jnp.float64))
    g_perp = g - (g @ geo.row_basis) @ geo.row_basis.T
    theta = geo.theta_par + np.sqrt(s2 * hk / n0)[:, None] * g_perp
    return PosteriorSample(theta, hk, count)


def log_evidence(
    x_data: ArrayLike, y: ArrayLike, widths: Sequence[int], *, sigma2: float = 1.0
) -> float:
    """The log evidence ``log p(Y | X, widths, sigma2)`` of noise-free data, exactly.

    ``p(Y) = E_H[N(Y; 0, sigma2 H X X^T / n0)]`` over the law of
    ``H = prod_{k=1}^{L} chi2_{n_k}/n_k`` (:func:`log_norm_density` of the hidden
    widths; ``H = 1`` for ``L = 0``, where this is the Gaussian-process log marginal
    likelihood with kernel ``sigma2 X X^T / n0``). It is the density of Y with respect
    to Lebesgue measure on ``R^P``.

    Args:
        x_data: the data matrix X, shape ``(P, n0)``.
        y: the targets, shape ``(P,)``.
        widths: ``(n0, n1, ..., nL)``.
        sigma2: the prior scale.

    Returns:
        The log evidence, a Python float.

    Example:
        >>> from lecturekit import gp
        >>> x, y = np.eye(2, 4), np.array([1.0, -1.0])
        >>> le = deep_linear.log_evidence(x, y, (4,), sigma2=2.0)
        >>> bool(abs(le - gp.log_marginal_likelihood(2.0 * x @ x.T / 4, y)) < 1e-9)
        True
    """
    geo = interpolation(x_data, y)
    ws = check_widths(widths)
    n0, P = geo.theta_par.shape[0], geo.row_basis.shape[1]
    if ws[0] != n0:
        raise ValueError(
            f"widths[0] must equal n0 = {n0} (the columns of x_data), got {ws[0]}"
        )
    s2 = check_real(sigma2, name="sigma2", positive=True)
    x = as_host_float_array(x_data, name="x_data", ndim=2)
    a = float(geo.theta_par @ geo.theta_par)
    _, logdet = np.linalg.slogdet(x @ x.T)
    const = -0.5 * P * np.log(2 * np.pi * s2 / n0) - 0.5 * logdet
    if len(ws) == 1:
        return float(const + _log_weight(np.array(1.0), a, P, n0, s2))
    d = log_norm_density(ws[1:])
    pos = d.density > 0
    t, dens = d.grid[pos], d.density[pos]
    log_terms = _log_weight(np.exp(t), a, P, n0, s2) + np.log(dens)
    top = log_terms.max()
    return float(const + top + np.log(np.trapezoid(np.exp(log_terms - top), t)))


def optimal_prior_scale(
    x_data: ArrayLike, y: ArrayLike, widths: Sequence[int]
) -> float:
    """The prior scale ``sigma2`` that maximizes :func:`log_evidence` (Bayesian model
    selection).

    For the Gaussian prior (``widths = (n0,)``) it is ``n0 ||theta_par||^2 / P``, that
    is ``||theta_par||^2 / alpha``; for deeper priors it is found numerically (bounded
    scalar search on ``log sigma2``).

    Args:
        x_data: the data matrix X, shape ``(P, n0)``.
        y: the targets, shape ``(P,)``.
        widths: ``(n0, n1, ..., nL)``.

    Returns:
        The maximizing ``sigma2``, a Python float.

    Example:
        >>> x, y = np.eye(2, 4), np.array([1.0, -1.0])
        >>> round(deep_linear.optimal_prior_scale(x, y, (4,)), 4)   # 4 * 2 / 2
        4.0
    """
    geo = interpolation(x_data, y)
    n0, P = geo.theta_par.shape[0], geo.row_basis.shape[1]
    guess = np.log(n0 * float(geo.theta_par @ geo.theta_par) / P)
    res = scipy.optimize.minimize_scalar(
        lambda ls: -log_evidence(x_data, y, widths, sigma2=float(np.exp(ls))),
        bounds=(guess - 12.0, guess + 12.0),
        method="bounded",
        options={"xatol": 1e-7},
    )
    return float(np.exp(res.x))
