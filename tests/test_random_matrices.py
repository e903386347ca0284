"""lecturekit.random_matrices: the Marchenko-Pastur density and the law of the norm of a
product of Gaussian matrices (Chapter 10)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.integrate
import scipy.special

from lecturekit import random_matrices

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("alpha", [0.1, 0.25, 0.5, 0.8])
def test_marchenko_pastur_moments(alpha):
    lo, hi = random_matrices.marchenko_pastur_edges(alpha)
    d = lambda x: float(random_matrices.marchenko_pastur_density(np.array(x), alpha))  # noqa: E731
    moments = [scipy.integrate.quad(lambda x: d(x) * x**j, lo, hi, limit=200)[0] for j in range(3)]
    np.testing.assert_allclose(moments, [1.0, 1.0, 1.0 + alpha], atol=1e-7)
    assert random_matrices.marchenko_pastur_density(np.array([lo / 2, hi * 2]), alpha).tolist() == [0, 0]


def test_spectrum_matches_the_law():
    ev = random_matrices.covariance_spectrum(jax.random.key(3), 400, 800)
    xs = np.linspace(0.0, 1.0, 20001)
    cdf1 = np.trapezoid(random_matrices.marchenko_pastur_density(xs, 0.5), xs)
    assert abs(np.mean(ev <= 1.0) - cdf1) < 0.02
    # E tr(Sigma^2)/P = 1 + alpha + 1/n0 (one matrix: fluctuation O(1/P))
    assert abs(np.mean(ev**2) - (1.5 + 1 / 800)) < 0.03


def test_product_norm_law_and_independence_of_the_draws():
    widths = (4, 6, 3)
    theta = random_matrices.product_vectors(jax.random.key(0), widths, 40_000)
    norm2 = (theta**2).sum(1)
    chi = random_matrices.chi2_product(jax.random.key(1), widths, 40_000)
    var = np.prod([1 + 2 / n for n in widths]) - 1
    for sample in (norm2, chi):
        assert abs(sample.mean() - 1) < 4 * np.sqrt(var / sample.size)
        assert abs(sample.var() / var - 1) < 0.1
    # same law: the quartiles agree within sampling error
    np.testing.assert_allclose(np.quantile(norm2, [0.25, 0.5, 0.75]), np.quantile(chi, [0.25, 0.5, 0.75]),
                               rtol=0.04)


def test_single_layer_is_gaussian():
    theta = random_matrices.product_vectors(jax.random.key(2), (3,), 50_000)
    np.testing.assert_allclose(np.cov(theta.T), np.eye(3) / 3, atol=0.01)


def test_log_norm_moments_formula():
    m, v = random_matrices.log_norm_moments((4, 10))
    want_m = 0.5 * sum(scipy.special.digamma(n / 2) + np.log(2 / n) for n in (4, 10))
    want_v = 0.25 * sum(scipy.special.polygamma(1, n / 2) for n in (4, 10))
    assert m == pytest.approx(want_m) and v == pytest.approx(want_v)
    s = random_matrices.chi2_product(jax.random.key(4), (4, 10), 100_000)
    logn = 0.5 * np.log(s)
    assert abs(logn.mean() - m) < 4 * logn.std() / np.sqrt(s.size)


def test_log_norm_path_is_a_sum_of_chi2_logs():
    """Real matrices: increments of mean E log(chi2_n/n)/2 and variance psi'(n/2)/4, uncorrelated."""
    path = random_matrices.log_norm_path(jax.random.key(3), 3, 40, 4000)
    steps = np.diff(np.concatenate([np.zeros((4000, 1)), path], axis=1), axis=1)
    mean_exact = random_matrices.lyapunov_exponent(3)
    var_exact = 0.25 * float(scipy.special.polygamma(1, 1.5))
    se = np.sqrt(var_exact / steps.size)
    assert abs(steps.mean() - mean_exact) < 4 * se
    assert abs(steps.var() / var_exact - 1) < 0.05
    lag = np.corrcoef(steps[:, :-1].ravel(), steps[:, 1:].ravel())[0, 1]
    assert abs(lag) < 4 / np.sqrt(steps.size)
    # several draws per block give the same law as one: the chunking is invisible
    again = random_matrices.log_norm_path(jax.random.key(3), 3, 40, 4000)
    np.testing.assert_array_equal(path, again)


def test_lyapunov_exponent():
    assert random_matrices.lyapunov_exponent(2) == pytest.approx(-np.euler_gamma / 2, rel=1e-12)
    for n in (10, 100, 1000):
        assert random_matrices.lyapunov_exponent(n) == pytest.approx(-1 / (2 * n) - 1 / (6 * n**2),
                                                                      rel=3 / n**2)
    with pytest.raises(ValueError, match="n"):
        random_matrices.lyapunov_exponent(0)
