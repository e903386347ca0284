"""Small statistics used to turn experiments into asserted numbers.

Power laws are fitted by least squares on log-log axes; Monte Carlo means come with
their standard errors so that tolerances can be derived instead of guessed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from jax.typing import ArrayLike

from ._validation import as_float_array, check_positive_int


class LogLogFit(NamedTuple):
    """y ~ prefactor * x**slope, fitted on log-log axes, with the slope's standard error."""

    slope: float
    prefactor: float
    slope_stderr: float

    def __call__(self, x: ArrayLike) -> np.ndarray:
        return self.prefactor * np.asarray(x, dtype=float) ** self.slope


def fit_loglog(x: ArrayLike, y: ArrayLike) -> LogLogFit:
    """Least-squares line through (log x, log y); x and y must be positive, >= 2 points."""
    xs = np.asarray(as_float_array(x, name="x", ndim=1), dtype=float)
    ys = np.asarray(as_float_array(y, name="y", ndim=1), dtype=float)
    if xs.shape != ys.shape or xs.size < 2:
        raise ValueError(f"x and y must be 1-D of equal length >= 2, got {xs.shape} and {ys.shape}")
    if np.any(xs <= 0) or np.any(ys <= 0):
        raise ValueError("x and y must be positive for a log-log fit")
    lx, ly = np.log(xs), np.log(ys)
    design = np.stack([lx, np.ones_like(lx)], axis=1)
    coef, *_ = np.linalg.lstsq(design, ly, rcond=None)
    resid = ly - design @ coef
    dof = max(xs.size - 2, 1)
    sxx = np.sum((lx - lx.mean()) ** 2)
    stderr = float(np.sqrt(np.sum(resid**2) / dof / sxx)) if xs.size > 2 else float("nan")
    return LogLogFit(float(coef[0]), float(np.exp(coef[1])), stderr)


def fit_loglog_slope(x: ArrayLike, y: ArrayLike) -> float:
    """Slope of the least-squares line through (log x, log y)."""
    return fit_loglog(x, y).slope


class MeanEstimate(NamedTuple):
    """A Monte Carlo mean and its standard error (floats, or arrays for vector samples)."""

    mean: float | np.ndarray
    stderr: float | np.ndarray


def mean_and_stderr(samples: ArrayLike, axis: int = 0) -> MeanEstimate:
    """Sample mean and standard error sqrt(var / n) along ``axis`` (ddof = 1)."""
    s = np.asarray(as_float_array(samples, name="samples"), dtype=float)
    axis = check_positive_int(axis, name="axis", minimum=-max(s.ndim, 1))
    if axis >= max(s.ndim, 1):
        raise ValueError(f"axis must be < {max(s.ndim, 1)} (samples has shape {s.shape}), got {axis}")
    if s.ndim == 0 or s.shape[axis] < 2:
        raise ValueError(f"samples needs at least 2 entries along axis {axis}, got shape {s.shape}")
    mean = s.mean(axis=axis)
    err = s.std(axis=axis, ddof=1) / np.sqrt(s.shape[axis])
    if np.ndim(mean) == 0:
        return MeanEstimate(float(mean), float(err))
    return MeanEstimate(mean, err)
