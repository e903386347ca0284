"""Small statistics used to turn experiments into asserted numbers.

Power laws are fitted by least squares on log-log axes (:func:`fit_loglog`; from
repeated
draws per point, with the standard error the draws imply: :func:`fit_mean_loglog`);
Monte Carlo means come with their standard errors (:func:`mean_and_stderr`) so that
tolerances can be derived instead of guessed; any other statistic (a ratio of moments, a
kurtosis) gets a bootstrap standard error (:func:`bootstrap`). Results are NumPy floats
in NamedTuples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import numpy as np
import scipy.special
from jax.typing import ArrayLike

from . import sampling as _sampling
from ._validation import as_float_array, check_callable, check_key, check_positive_int

__all__ = [
    "LogLogFit",
    "fit_loglog",
    "fit_loglog_slope",
    "fit_mean_loglog",
    "MeanEstimate",
    "mean_and_stderr",
    "Estimate",
    "bootstrap",
]


class LogLogFit(NamedTuple):
    """A power law y ~ prefactor * x^slope fitted on log-log axes (:func:`fit_loglog`).

    Calling the fit evaluates the power law: ``fit(x) = prefactor * x**slope``.

    Attributes:
        slope: the fitted exponent.
        prefactor: the fitted constant, exp of the intercept on log-log axes.
        slope_stderr: the least-squares standard error of the slope (residual variance
            with n - 2 degrees of freedom); NaN for two points.

    Example:
        >>> fit = stats.fit_loglog([10, 100, 1000], [0.3, 0.03, 0.003])
        >>> round(fit.slope, 6), round(fit.prefactor, 6)
        (-1.0, 3.0)
        >>> round(float(fit(10_000)), 6)
        0.0003
    """

    slope: float
    prefactor: float
    slope_stderr: float

    def __call__(self, x: ArrayLike) -> np.ndarray:
        """The fitted power law at ``x``: ``prefactor * x**slope`` (a NumPy array)."""
        return self.prefactor * np.asarray(x, dtype=float) ** self.slope


def fit_loglog(x: ArrayLike, y: ArrayLike) -> LogLogFit:
    """Least-squares line through the points (log x_i, log y_i): a power-law fit.

    Args:
        x: positive numbers, shape (n,) with n >= 2 (e.g. widths).
        y: positive numbers, shape (n,) (e.g. measured errors).

    Returns:
        A :class:`LogLogFit` (slope, prefactor, slope standard error).

    Raises:
        ValueError: if x and y differ in length, have fewer than 2 points, or are not
            positive.

    Example:
        >>> x = np.array([10.0, 100.0, 1000.0])
        >>> fit = stats.fit_loglog(x, 3.0 * x**-0.5)
        >>> print(f"slope {fit.slope:.3f}, prefactor {fit.prefactor:.3f}")
        slope -0.500, prefactor 3.000
    """
    xs = np.asarray(as_float_array(x, name="x", ndim=1), dtype=float)
    ys = np.asarray(as_float_array(y, name="y", ndim=1), dtype=float)
    if xs.shape != ys.shape or xs.size < 2:
        raise ValueError(
            f"x and y must be 1-D of equal length >= 2, got {xs.shape} and {ys.shape}"
        )
    if np.any(xs <= 0) or np.any(ys <= 0):
        raise ValueError("x and y must be positive for a log-log fit")
    lx, ly = np.log(xs), np.log(ys)
    design = np.stack([lx, np.ones_like(lx)], axis=1)
    coef, *_ = np.linalg.lstsq(design, ly, rcond=None)
    resid = ly - design @ coef
    dof = max(xs.size - 2, 1)
    sxx = np.sum((lx - lx.mean()) ** 2)
    stderr = (
        float(np.sqrt(np.sum(resid**2) / dof / sxx)) if xs.size > 2 else float("nan")
    )
    return LogLogFit(float(coef[0]), float(np.exp(coef[1])), stderr)


def fit_loglog_slope(x: ArrayLike, y: ArrayLike) -> float:
    """The slope of :func:`fit_loglog`: the exponent of the fitted power law.

    Args:
        x: positive numbers, shape (n,) with n >= 2.
        y: positive numbers, shape (n,).

    Returns:
        The slope, a float.

    Example:
        >>> round(stats.fit_loglog_slope([1, 2, 4], [1, 4, 16]), 6)
        2.0
    """
    return fit_loglog(x, y).slope


def fit_mean_loglog(x: ArrayLike, samples: ArrayLike) -> LogLogFit:
    """Power-law fit of Monte Carlo means, with the standard error their sampling
    implies.

    For each x_i there are r independent positive draws ``samples[i]`` (e.g. a
    measurement on r networks of width x_i). The fit is the least-squares line through
    (log x_i, log m_i), m_i the mean of the draws: slope = sum_i c_i log m_i with
    c_i = (log x_i - mean log x) / S_xx and S_xx = sum_i (log x_i - mean log x)^2.
    Its standard error is propagated from the standard errors s_i = std(samples[i]) /
    sqrt(r) (ddof = 1) of the means by the delta method:
    slope_stderr = sqrt(sum_i (c_i s_i / m_i)^2). This is the sampling error of the
    slope of the means, assuming independent draws for different x (not the residual
    error of
    :func:`fit_loglog`, which also counts a curved law as noise, and is NaN for two
    points).

    Args:
        x: positive numbers, shape (m,) with m >= 2, not all equal.
        samples: positive numbers, shape (m, r) with r >= 2: row i holds the draws at
            x_i.

    Returns:
        A :class:`LogLogFit` (slope, prefactor, and the slope_stderr above).

    Raises:
        ValueError: if the shapes do not match, m < 2 or r < 2, the x are all equal, or
            a value is not positive and finite.

    Example:
        >>> x = np.array([100.0, 400.0, 1600.0])
        >>> noise = np.exp(0.1 * np.random.default_rng(0).standard_normal((3, 50)))
        >>> fit = stats.fit_mean_loglog(x, 2.0 * x[:, None] ** -0.5 * noise)
        >>> print(f"slope {fit.slope:.3f} +- {fit.slope_stderr:.3f}")
        slope -0.504 +- 0.007
    """
    xs = np.asarray(as_float_array(x, name="x", ndim=1), dtype=float)
    s = np.asarray(as_float_array(samples, name="samples", ndim=2), dtype=float)
    if xs.size < 2:
        raise ValueError(f"x needs at least 2 points, got shape {xs.shape}")
    if s.shape[0] != xs.size:
        raise ValueError(
            f"samples must have one row per x, shape ({xs.size}, r), got {s.shape}"
        )
    if s.shape[1] < 2:
        raise ValueError(
            "samples needs at least 2 draws per x (shape (m, r), r >= 2), got "
            f"{s.shape}"
        )
    if np.any(xs <= 0):
        raise ValueError("x must be positive for a log-log fit")
    if np.any(s <= 0):
        raise ValueError("samples must be positive for a log-log fit")
    lx = np.log(xs)
    sxx = np.sum((lx - lx.mean()) ** 2)
    if not sxx > 0:
        raise ValueError("x must hold at least two different values")
    means = s.mean(axis=1)
    errors = s.std(axis=1, ddof=1) / np.sqrt(s.shape[1])
    weights = (lx - lx.mean()) / sxx
    log_means = np.log(means)
    slope = float(np.sum(weights * log_means))
    prefactor = float(np.exp(log_means.mean() - slope * lx.mean()))
    stderr = float(np.sqrt(np.sum((weights * errors / means) ** 2)))
    return LogLogFit(slope, prefactor, stderr)


class MeanEstimate(NamedTuple):
    """A Monte Carlo mean and its standard error (:func:`mean_and_stderr`).

    Attributes:
        mean: the sample mean (a float, or an array for vector-valued samples).
        stderr: its standard error sqrt(var / n), same shape as ``mean``.

    Example:
        >>> est = stats.mean_and_stderr([1.0, 2.0, 3.0, 4.0])
        >>> est.mean, round(est.stderr, 4)
        (2.5, 0.6455)
    """

    mean: float | np.ndarray
    stderr: float | np.ndarray


def mean_and_stderr(samples: ArrayLike, axis: int = 0) -> MeanEstimate:
    """Sample mean and its standard error sqrt(var / n) along ``axis``.

    The variance is the unbiased one (ddof = 1), so a tolerance of a few standard errors
    around the mean is a statement with a known false-alarm rate.

    Args:
        samples: an array with at least 2 entries along ``axis``.
        axis: the axis of the independent draws (default 0).

    Returns:
        A :class:`MeanEstimate`; floats when the samples are scalars, arrays of the
        remaining shape otherwise.

    Raises:
        ValueError: if ``axis`` is out of range or holds fewer than 2 draws.

    Example:
        >>> est = stats.mean_and_stderr(np.arange(12.0).reshape(4, 3))
        >>> est.mean
        array([4.5, 5.5, 6.5])
        >>> np.round(est.stderr, 4)
        array([1.9365, 1.9365, 1.9365])
    """
    s = np.asarray(as_float_array(samples, name="samples"), dtype=float)
    axis = check_positive_int(axis, name="axis", minimum=-max(s.ndim, 1))
    if axis >= max(s.ndim, 1):
        raise ValueError(
            f"axis must be < {max(s.ndim, 1)} (samples has shape {s.shape}), got {axis}"
        )
    if s.ndim == 0 or s.shape[axis] < 2:
        raise ValueError(
            f"samples needs at least 2 entries along axis {axis}, got shape {s.shape}"
        )
    mean = s.mean(axis=axis)
    err = s.std(axis=axis, ddof=1) / np.sqrt(s.shape[axis])
    if np.ndim(mean) == 0:
        return MeanEstimate(float(mean), float(err))
    return MeanEstimate(mean, err)


class Estimate(NamedTuple):
    """A statistic of a sample and its (bootstrap) standard error (:func:`bootstrap`).

    Attributes:
        value: the statistic of the whole sample.
        stderr: its standard error: the standard deviation (ddof = 1) of the statistic
            over bootstrap resamples.

    Example:
        >>> est = stats.Estimate(2.0, 0.1)
        >>> est.value, est.stderr
        (2.0, 0.1)
    """

    value: float
    stderr: float


def bootstrap(
    key: jax.Array,
    samples: ArrayLike,
    statistic: Callable[[np.ndarray], float],
    *,
    resamples: int = 200,
) -> Estimate:
    """A statistic of independent draws with its bootstrap standard error.

    ``statistic`` is applied to the whole sample (the value) and to ``resamples``
    resamples drawn with replacement (each the same size r as the sample); the standard
    error is the standard deviation (ddof = 1) of the resampled statistics. The resample
    indices are floor(r Phi(g)) for normals g
    from :func:`lecturekit.sampling.standard_normal` with ``key`` (Phi the normal CDF):
    uniform on 0 ... r - 1, and reproducible from the key.

    Args:
        key: a JAX PRNG key.
        samples: the draws, shape (r, ...) with r >= 2 along axis 0.
        statistic: a function of an array shaped like ``samples`` returning a number
            (e.g. ``lambda t: np.mean(t**2) / np.mean(t)**2``).
        resamples: number of bootstrap resamples, >= 2.

    Returns:
        An :class:`Estimate` (value, stderr) of floats.

    Raises:
        ValueError: fewer than 2 draws or resamples.

    Example:
        >>> draws = np.arange(1.0, 101.0)
        >>> est = stats.bootstrap(jax.random.key(0), draws, np.mean)
        >>> print(f"{est.value:.1f}, stderr {est.stderr:.1f}")
        50.5, stderr 2.6
    """
    check_key(key)
    s = np.asarray(as_float_array(samples, name="samples", min_ndim=1), dtype=float)
    if s.shape[0] < 2:
        raise ValueError(
            f"samples needs at least 2 draws along axis 0, got shape {s.shape}"
        )
    check_callable(statistic, name="statistic", what="a function of the samples")
    resamples = check_positive_int(resamples, name="resamples", minimum=2)
    r = s.shape[0]
    g = np.asarray(_sampling.standard_normal(key, (resamples, r), dtype=np.float64))
    idx = np.minimum((r * scipy.special.ndtr(g)).astype(np.int64), r - 1)
    values = np.array([float(statistic(s[i])) for i in idx])
    return Estimate(float(statistic(s)), float(np.std(values, ddof=1)))
