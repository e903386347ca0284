"""lecturekit.deep_linear: Bayesian interpolation with a deep linear prior, and the Chapter 10
exercise checkers (right answers pass, wrong ones fail)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import sympy as sp

from lecturekit import deep_linear, gp, random_matrices, sampling
from lecturekit.exercises import ExerciseCheckError, ch10

jax.config.update("jax_enable_x64", True)


def _data(P=3, n0=8, seed=0):
    x = np.asarray(sampling.standard_normal(jax.random.key(seed), (P, n0)))
    theta = np.asarray(sampling.standard_normal(jax.random.key(seed + 1), (n0,))) * (1.5 / np.sqrt(n0))
    return x, x @ theta


@pytest.mark.parametrize("widths", [(4,), (4, 3), (6, 2, 5)])
def test_log_norm_density_moments(widths):
    d = deep_linear.log_norm_density(widths)
    assert np.trapezoid(d.density, d.grid) == pytest.approx(1.0, abs=1e-9)
    m, v = random_matrices.log_norm_moments(widths)
    mean = np.trapezoid(d.grid * d.density, d.grid)
    var = np.trapezoid((d.grid - mean) ** 2 * d.density, d.grid)
    assert mean == pytest.approx(2 * m, abs=1e-6) and var == pytest.approx(4 * v, rel=1e-5)
    assert np.trapezoid(np.exp(d.grid) * d.density, d.grid) == pytest.approx(1.0, abs=1e-6)


def test_interpolation_geometry():
    x, y = _data()
    geo = deep_linear.interpolation(x, y)
    np.testing.assert_allclose(x @ geo.theta_par, y, atol=1e-12)
    np.testing.assert_allclose(geo.row_basis.T @ geo.row_basis, np.eye(3), atol=1e-12)
    assert geo.null_dim == 5


def test_gaussian_prior_is_the_gp_posterior():
    x, y = _data()
    post = deep_linear.norm_posterior(x, y, (8,), sigma2=2.0)
    assert post.mean_r2 == pytest.approx(5 * 2.0 / 8, rel=1e-6)
    xt = np.asarray(sampling.standard_normal(jax.random.key(9), (4, 8)))
    ref = gp.posterior(2 * x @ x.T / 8, 2 * xt @ x.T / 8, 2 * xt @ xt.T / 8, y)
    mean, var = deep_linear.predictive(post, xt)
    np.testing.assert_allclose(mean, ref.mean, atol=1e-9)
    np.testing.assert_allclose(var, ref.variance, rtol=1e-5, atol=1e-9)
    le = deep_linear.log_evidence(x, y, (8,), sigma2=2.0)
    assert le == pytest.approx(gp.log_marginal_likelihood(2 * x @ x.T / 8, y), abs=1e-8)


@pytest.mark.parametrize("widths", [(8, 3), (8, 2, 2)])
def test_methods_agree_and_match_exact_samples(widths):
    x, y = _data()
    mix = deep_linear.norm_posterior(x, y, widths)
    rad = deep_linear.norm_posterior(x, y, widths, method="radial")
    assert mix.mean_r2 == pytest.approx(rad.mean_r2, rel=1e-4)
    smp = deep_linear.sample_posterior(jax.random.key(5), x, y, widths, 100_000)
    np.testing.assert_allclose(smp.theta @ x.T, np.broadcast_to(y, (smp.theta.shape[0], 3)), atol=1e-9)
    r2 = ((smp.theta - mix.geometry.theta_par) ** 2).sum(1)
    assert abs(r2.mean() - mix.mean_r2) < 4 * r2.std() / np.sqrt(r2.size)


def test_evidence_by_monte_carlo_over_hidden_layers():
    x, y = _data()
    widths = (8, 4)
    geo = deep_linear.interpolation(x, y)
    a = geo.theta_par @ geo.theta_par
    h = random_matrices.chi2_product(jax.random.key(7), (4,), 200_000)
    _, logdet = np.linalg.slogdet(x @ x.T)
    dens = np.exp(-1.5 * np.log(2 * np.pi * h / 8) - 0.5 * logdet - 8 * a / (2 * h))
    le = deep_linear.log_evidence(x, y, widths)
    assert abs(np.exp(le) / dens.mean() - 1) < 4 * dens.std() / dens.mean() / np.sqrt(h.size)


def test_optimal_scale_and_effective_depth():
    x, y = _data()
    geo = deep_linear.interpolation(x, y)
    want = 8 * (geo.theta_par @ geo.theta_par) / 3
    assert deep_linear.optimal_prior_scale(x, y, (8,)) == pytest.approx(want, rel=1e-5)
    assert deep_linear.effective_depth(3, ()) == 0.0
    assert deep_linear.effective_depth(10, (5, 20)) == pytest.approx(2.5)


def test_checkers_accept_right_and_reject_wrong_answers():
    ch10.check_fourth_moment(lambda w: float(np.prod([1 + 2 / n for n in w])))
    with pytest.raises(ExerciseCheckError):
        ch10.check_fourth_moment(lambda w: float(np.prod([1 + 2 / n for n in w[1:]])))
    ch10.check_covariance_second_moment(lambda P, n0: 1 + P / n0 + 1 / n0)
    with pytest.raises(ExerciseCheckError):
        ch10.check_covariance_second_moment(lambda P, n0: 1 + P / n0)
    ch10.check_sphere_variance(lambda v, k: float(v @ v) / k)
    with pytest.raises(ExerciseCheckError):
        ch10.check_sphere_variance(lambda v, k: float(v @ v))
    ch10.check_gaussian_optimal_scale(lambda a, P, n0: n0 * a / P)
    with pytest.raises(ExerciseCheckError):
        ch10.check_gaussian_optimal_scale(lambda a, P, n0: a * P / n0)
    with pytest.raises(ExerciseCheckError):
        ch10.check_covariance_second_moment(lambda P, n0: sp.Symbol("q"))


def test_check_lyapunov():
    import scipy.special
    ch10.check_lyapunov(lambda n: float(0.5 * (scipy.special.digamma(n / 2) + np.log(2 / n))))
    with pytest.raises(ExerciseCheckError, match="first order"):
        ch10.check_lyapunov(lambda n: -1 / (2 * n))
    with pytest.raises(ExerciseCheckError, match="factor 1/2"):
        ch10.check_lyapunov(lambda n: float(scipy.special.digamma(n / 2) + np.log(2 / n)))
    with pytest.raises(ExerciseCheckError, match="Jensen"):
        ch10.check_lyapunov(lambda n: 0.0)
    with pytest.raises(ExerciseCheckError, match="notes"):
        ch10.check_lyapunov(lambda n: -1 / (4 * n))
    with pytest.raises(ExerciseCheckError, match="expected"):
        ch10.check_lyapunov(lambda n: -1.0)
