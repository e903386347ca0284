"""lecturekit.stats: the power-law fits and Monte Carlo means that chapters assert on."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from lecturekit import stats

jax.config.update("jax_enable_x64", True)


def _power_law_draws(seed: int, x: np.ndarray, draws: int = 20, sigma: float = 0.3) -> np.ndarray:
    """y = 2 x^-0.5 times lognormal noise, ``draws`` independent draws per x."""
    noise = np.exp(sigma * np.random.default_rng(seed).standard_normal((x.size, draws)))
    return 2.0 * x[:, None] ** -0.5 * noise


X = np.array([64.0, 128.0, 256.0, 512.0, 1024.0])


def test_fit_loglog_recovers_an_exact_power_law():
    fit = stats.fit_loglog(X, 3.0 * X**-0.75)
    assert fit.slope == pytest.approx(-0.75, abs=1e-12)
    assert fit.prefactor == pytest.approx(3.0, rel=1e-12)
    assert fit(2048.0) == pytest.approx(3.0 * 2048.0**-0.75, rel=1e-12)


def test_fit_mean_loglog_is_the_line_through_the_means():
    samples = _power_law_draws(0, X)
    fit = stats.fit_mean_loglog(X, samples)
    line = stats.fit_loglog(X, samples.mean(axis=1))
    assert fit.slope == pytest.approx(line.slope, abs=1e-12)
    assert fit.prefactor == pytest.approx(line.prefactor, rel=1e-12)


def test_fit_mean_loglog_standard_error_matches_the_spread_of_slopes():
    """Over 50 seeds the slopes centre on the true -0.5 (within 3 standard errors of their
    mean) and their spread is the reported standard error (within 20%)."""
    fits = [stats.fit_mean_loglog(X, _power_law_draws(seed, X)) for seed in range(50)]
    slopes = np.array([f.slope for f in fits])
    errors = np.array([f.slope_stderr for f in fits])
    assert abs(slopes.mean() + 0.5) < 3 * errors.mean() / np.sqrt(len(slopes))
    assert slopes.std(ddof=1) == pytest.approx(errors.mean(), rel=0.2)


@pytest.mark.parametrize("x, samples, match", [
    (X[:1], np.ones((1, 3)), "at least 2 points"),
    (X, np.ones((4, 3)), "one row per x"),
    (X, np.ones((5, 1)), "at least 2 draws"),
    (np.ones(5), np.ones((5, 3)), "two different values"),
    (-X, np.ones((5, 3)), "x must be positive"),
    (X, -np.ones((5, 3)), "samples must be positive"),
    (X, np.full((5, 3), np.nan), "samples must be finite"),
])
def test_fit_mean_loglog_rejects_bad_input(x, samples, match):
    with pytest.raises(ValueError, match=match):
        stats.fit_mean_loglog(x, samples)
