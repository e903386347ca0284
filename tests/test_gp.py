"""Tests of lecturekit.gp: GP posterior, Cholesky with jitter, prior samples."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from lecturekit import gp

jax.config.update("jax_enable_x64", True)


def _rbf(a, b, ell=0.7):
    return np.exp(-((a[:, None] - b[None, :]) ** 2) / (2 * ell**2))


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-2, 2, 7))
    xs = np.linspace(-3, 3, 11)
    y = np.sin(2 * x)
    return x, xs, y


def test_posterior_matches_direct_formula(problem):
    x, xs, y = problem
    noise = 0.05
    post = gp.posterior(_rbf(x, x), _rbf(xs, x), _rbf(xs, xs), y, noise=noise)
    a = _rbf(x, x) + noise * np.eye(len(x))
    mean = _rbf(xs, x) @ np.linalg.solve(a, y)
    cov = _rbf(xs, xs) - _rbf(xs, x) @ np.linalg.solve(a, _rbf(x, xs))
    assert np.allclose(post.mean, mean, atol=1e-12)
    assert np.allclose(post.cov, cov, atol=1e-12)
    assert post.jitter == 0.0
    assert np.all(post.variance >= 0)


def test_noiseless_posterior_interpolates(problem):
    x, _, y = problem
    post = gp.posterior(_rbf(x, x), _rbf(x, x), _rbf(x, x), y, noise=0.0)
    assert np.allclose(post.mean, y, atol=1e-6)
    assert np.max(post.variance) < 1e-6


def test_far_away_posterior_reverts_to_prior(problem):
    x, _, y = problem
    far = np.array([40.0])
    post = gp.posterior(_rbf(x, x), _rbf(far, x), _rbf(far, far), y, noise=1e-3)
    assert abs(float(post.mean[0])) < 1e-10 and float(post.variance[0]) == pytest.approx(1.0)


def test_cholesky_jitter_and_failures():
    v = np.array([[1.0, 1.0], [1.0, 1.0]])  # singular PSD
    factor, used = gp.cholesky(np.block([[v, v], [v, v]]))
    assert used > 0 and np.all(np.isfinite(factor))
    with pytest.raises(ValueError, match="positive semi-definite"):
        gp.cholesky(np.array([[1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        gp.cholesky(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        gp.cholesky(np.ones((2, 3)))


def test_posterior_shape_errors(problem):
    x, xs, y = problem
    with pytest.raises(ValueError, match="y must have length"):
        gp.posterior(_rbf(x, x), _rbf(xs, x), _rbf(xs, xs), y[:-1])
    with pytest.raises(ValueError, match="k_cross"):
        gp.posterior(_rbf(x, x), _rbf(x, xs), _rbf(xs, xs), y)
    with pytest.raises(ValueError, match="noise"):
        gp.posterior(_rbf(x, x), _rbf(xs, x), _rbf(xs, xs), y, noise=-1.0)
    with pytest.raises(ValueError, match="finite"):
        gp.posterior(_rbf(x, x), _rbf(xs, x), _rbf(xs, xs), np.full_like(y, np.nan))


def test_log_marginal_likelihood(problem):
    x, _, y = problem
    got = gp.log_marginal_likelihood(_rbf(x, x), y, noise=0.1)
    want = scipy.stats.multivariate_normal(np.zeros(len(x)), _rbf(x, x) + 0.1 * np.eye(len(x))).logpdf(y)
    assert got == pytest.approx(want, rel=1e-10)


def test_prior_samples_have_the_kernel_as_covariance():
    grid = np.linspace(-1, 1, 5)
    k = _rbf(grid, grid)
    f = np.asarray(gp.sample_prior(jax.random.key(0), k, 20_000))
    assert f.shape == (20_000, 5)
    # entries of the sample covariance have standard error <= sqrt(2/N) ~ 0.01; allow 5 se
    assert np.max(np.abs(np.cov(f.T) - k)) < 0.05


def test_posterior_accepts_jax_arrays_and_matches_numpy_inputs(problem):
    x, xs, y = problem
    np_post = gp.posterior(_rbf(x, x), _rbf(xs, x), _rbf(xs, xs), y, noise=0.05)
    jx_post = gp.posterior(*(jnp.asarray(a) for a in (_rbf(x, x), _rbf(xs, x), _rbf(xs, xs), y)), noise=0.05)
    assert np.allclose(np_post.mean, jx_post.mean, atol=1e-13) and np.allclose(np_post.cov, jx_post.cov, atol=1e-13)
    with pytest.raises(ValueError, match="symmetric"):
        gp.posterior(_rbf(x, x) + np.triu(np.ones((len(x), len(x))), 1), _rbf(xs, x), _rbf(xs, xs), y)


def test_posterior_z_scores_are_standard_normal(problem):
    x, xs, _ = problem
    pts = np.concatenate([x, xs])
    k = _rbf(pts, pts)
    z = np.asarray(gp.posterior_z_scores(jax.random.key(1), k, len(x), noise=0.05, num_draws=5000))
    assert z.shape == (5000, len(xs))
    # each column is N(0, 1): mean 0 and mean square 1 within 5 standard errors
    assert np.all(np.abs(z.mean(axis=0)) < 5 / np.sqrt(5000))
    assert np.all(np.abs((z**2).mean(axis=0) - 1) < 5 * np.sqrt(2 / 5000))
    # the prior variance in place of the posterior one would give E z^2 = var_post / var_prior
    post = gp.posterior(k[:7, :7], k[7:, :7], k[7:, 7:], np.zeros(7), noise=0.05)
    assert np.min(np.asarray(post.variance) / np.diag(k[7:, 7:])) < 0.5
    with pytest.raises(ValueError, match="n_train"):
        gp.posterior_z_scores(jax.random.key(0), k, len(pts), noise=0.1, num_draws=3)
