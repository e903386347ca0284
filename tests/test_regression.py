"""Tests of lecturekit.regression: kernel (ridge) regression and the gradient-flow predictor."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lecturekit import regression, training

jax.config.update("jax_enable_x64", True)


def _features(seed, n=6, p=40, n_test=5):
    rng = np.random.default_rng(seed)
    phi = rng.normal(size=(n, p)) / np.sqrt(p)
    phi_test = rng.normal(size=(n_test, p)) / np.sqrt(p)
    y = rng.normal(size=n)
    return phi, phi_test, y


@given(st.integers(0, 10_000))
@settings(max_examples=15, deadline=None)
def test_ridgeless_regression_interpolates(seed):
    phi, _, y = _features(seed)
    k = phi @ phi.T
    np.testing.assert_allclose(regression.kernel_regression(k, y), y, atol=1e-9)


def test_ridge_matches_primal_solution():
    phi, phi_test, y = _features(1)
    lam = 0.3
    theta = np.linalg.solve(phi.T @ phi + lam * np.eye(phi.shape[1]), phi.T @ y)  # primal ridge
    dual = regression.kernel_regression(phi @ phi.T, y, phi_test @ phi.T, ridge=lam)
    np.testing.assert_allclose(dual, phi_test @ theta, rtol=1e-10)


def test_ridge_to_zero_tends_to_ridgeless():
    phi, phi_test, y = _features(2)
    k, kt = phi @ phi.T, phi_test @ phi.T
    exact = regression.kernel_regression(k, y, kt)
    errs = [float(jnp.max(jnp.abs(regression.kernel_regression(k, y, kt, ridge=r) - exact))) for r in (1e-2, 1e-4)]
    assert errs[1] < errs[0] / 10, errs


def test_multi_output_is_columnwise():
    phi, phi_test, _ = _features(3)
    y2 = np.random.default_rng(0).normal(size=(phi.shape[0], 2))
    k, kt = phi @ phi.T, phi_test @ phi.T
    both = regression.kernel_regression(k, y2, kt, ridge=0.1)
    for c in range(2):
        np.testing.assert_allclose(both[:, c], regression.kernel_regression(k, y2[:, c], kt, ridge=0.1))


def test_gradient_flow_matches_small_step_gradient_descent_on_linear_model():
    phi, phi_test, y = _features(4)
    theta0 = np.random.default_rng(5).normal(size=phi.shape[1])
    model = lambda th, x: x @ th  # noqa: E731  (linear model, features as inputs)
    lr, steps = 1e-3, 5000
    traj = training.gradient_descent(model, jnp.asarray(theta0), lr, steps, x=phi, y=y)
    k, kt = phi @ phi.T, phi_test @ phi.T
    pred = regression.gradient_flow_predictor(
        k, y, lr * steps, kt, f0_train=phi @ theta0, f0_test=phi_test @ theta0
    )
    # Euler's global error is O(lr * t * lambda_max^2 / n^2) relative: tiny here.
    np.testing.assert_allclose(phi_test @ traj.final_params, pred, atol=1e-4)
    loss = regression.gradient_flow_train_loss(k, y, lr * steps, f0_train=phi @ theta0)
    np.testing.assert_allclose(traj.losses[-1], loss, rtol=1e-3)


def test_gradient_flow_uses_one_over_n_time_scale():
    # With K = c I the flow is f_S(t) = y + exp(-c t / n) (f0 - y): check the 1/n.
    n, c, t = 4, 2.0, 0.7
    y = jnp.arange(1.0, n + 1)
    out = regression.gradient_flow_predictor(c * jnp.eye(n), y, t)
    np.testing.assert_allclose(out, y * (1 - np.exp(-c * t / n)), rtol=1e-12)


def test_gradient_flow_limits():
    phi, phi_test, y = _features(6)
    k, kt = phi @ phi.T, phi_test @ phi.T
    f0s, f0t = 0.1 * np.ones(len(y)), -0.2 * np.ones(len(phi_test))
    at_zero = regression.gradient_flow_predictor(k, y, 0.0, kt, f0_train=f0s, f0_test=f0t)
    np.testing.assert_allclose(at_zero, f0t, atol=1e-14)
    late = regression.gradient_flow_predictor(k, y, 1e9, kt, f0_train=f0s, f0_test=f0t)
    ridgeless = f0t + regression.kernel_regression(k, y - f0s, kt)
    np.testing.assert_allclose(late, ridgeless, rtol=1e-8)
    times = jnp.array([0.0, 1.0, 10.0])
    stacked = regression.gradient_flow_predictor(k, y, times, kt)
    assert stacked.shape == (3, len(phi_test))
    np.testing.assert_allclose(stacked[1], regression.gradient_flow_predictor(k, y, 1.0, kt))


def test_traced_path_matches_numpy_path_and_solves_the_ode():
    # Under jit the cores run with jax.numpy; outside with NumPy: same numbers. The time
    # derivative (by autodiff through the traced path) is the ODE's -(1/n) K (f_S - y).
    phi, phi_test, y = _features(8)
    k, kt = phi @ phi.T, phi_test @ phi.T
    f0 = 0.3 * np.ones(len(y))
    eager = regression.kernel_regression(k, y, kt, ridge=0.2)
    np.testing.assert_allclose(jax.jit(lambda a, b, c: regression.kernel_regression(a, b, c, ridge=0.2))(k, y, kt),
                               eager, rtol=1e-10)
    flow = lambda t: regression.gradient_flow_predictor(k, y, t, f0_train=f0)  # noqa: E731
    t = 1.7
    np.testing.assert_allclose(jax.jit(flow)(t), flow(t), rtol=1e-10)
    dfdt = jax.jacfwd(flow)(t)
    np.testing.assert_allclose(dfdt, -k @ (flow(t) - y) / len(y), rtol=1e-8, atol=1e-12)
    loss = jax.jit(lambda t: regression.gradient_flow_train_loss(k, y, t, f0_train=f0))(t)
    np.testing.assert_allclose(loss, 0.5 * np.mean((flow(t) - y) ** 2), rtol=1e-10)


def test_gradient_flow_is_finite_for_singular_kernel():
    phi = np.ones((3, 1))  # rank one Gram matrix
    y = np.array([1.0, 2.0, 3.0])
    out = regression.gradient_flow_predictor(phi @ phi.T, y, 2.0)
    # only the mean direction moves: f = mean(y) (1 - exp(-3 t / 3)) on every point
    np.testing.assert_allclose(out, 2.0 * (1 - np.exp(-2.0)) * np.ones(3), rtol=1e-12)


def test_rkhs_norm_of_interpolant():
    phi, _, y = _features(7)
    k = phi @ phi.T
    a = regression.kernel_coefficients(k, y)
    # min-norm interpolant: ||f||_H^2 = y^T K^-1 y = ||theta_min_norm||^2 in feature space
    theta = np.linalg.pinv(phi) @ y
    np.testing.assert_allclose(regression.rkhs_norm_squared(k, a), theta @ theta, rtol=1e-8)


def test_bad_inputs():
    k = np.eye(3)
    with pytest.raises(ValueError, match="square"):
        regression.kernel_regression(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="rows"):
        regression.kernel_regression(k, np.ones(4))
    with pytest.raises(ValueError, match="k_test_train"):
        regression.kernel_regression(k, np.ones(3), np.ones((2, 4)))
    with pytest.raises(ValueError, match="ridge"):
        regression.kernel_regression(k, np.ones(3), ridge=-1.0)
    with pytest.raises(ValueError, match="t must be"):
        regression.gradient_flow_predictor(k, np.ones(3), -1.0)
    with pytest.raises(ValueError, match="f0_train"):
        regression.gradient_flow_predictor(k, np.ones(3), 1.0, f0_train=np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        regression.kernel_regression(k * np.nan, np.ones(3))
    with pytest.raises(TypeError):
        regression.kernel_regression("K", np.ones(3))


def test_gradient_descent_predictor_is_exact_for_a_linear_model():
    rng = np.random.default_rng(5)
    F, F_test, y, theta0 = rng.normal(size=(5, 9)), rng.normal(size=(3, 9)), rng.normal(size=5), rng.normal(size=9)
    lr, steps = 0.3, 37
    theta = theta0.copy()
    for _ in range(steps):                       # gradient descent on (1/2n) ||F theta - y||^2
        theta = theta - lr * F.T @ (F @ theta - y) / 5
    got = regression.gradient_descent_predictor(F @ F.T, y, lr, steps, F_test @ F.T,
                                                f0_train=F @ theta0, f0_test=F_test @ theta0)
    np.testing.assert_allclose(got, F_test @ theta, atol=1e-12)
    start = regression.gradient_descent_predictor(F @ F.T, y, lr, 0, F_test @ F.T,
                                                  f0_train=F @ theta0, f0_test=F_test @ theta0)
    np.testing.assert_allclose(start, F_test @ theta0, atol=1e-14)
    # small steps: close to gradient flow at t = lr * steps (Euler's error O(lr mu_max / n))
    flow = regression.gradient_flow_predictor(F @ F.T, y, 1.0, F_test @ F.T)
    gd = regression.gradient_descent_predictor(F @ F.T, y, 1e-4, 10_000, F_test @ F.T)
    np.testing.assert_allclose(gd, flow, atol=1e-3)
    # a singular kernel is fine (the factor tends to steps lr / n), and several outputs too
    K = np.outer(F[:, 0], F[:, 0])
    assert np.all(np.isfinite(regression.gradient_descent_predictor(K, y, lr, steps)))
    two = regression.gradient_descent_predictor(F @ F.T, np.stack([y, 2 * y], 1), lr, steps)
    np.testing.assert_allclose(two[:, 1], 2 * two[:, 0], rtol=1e-12)
    with pytest.raises(ValueError, match="steps"):
        regression.gradient_descent_predictor(F @ F.T, y, lr, -1)
    with pytest.raises(ValueError, match="lr"):
        regression.gradient_descent_predictor(F @ F.T, y, 0.0, 3)
    with pytest.raises(ValueError, match="f0_train"):
        regression.gradient_descent_predictor(F @ F.T, y, lr, 3, f0_train=np.ones(4))


def _law_problem(seed, n=5, m=3, p=30):
    """A linear model with two feature maps: Theta = Phi Phi^T (the trained features) and
    K = Psi Psi^T (the covariance of f_0 = Psi g, g ~ N(0, I))."""
    rng = np.random.default_rng(seed)
    phi, psi = rng.normal(size=(n + m, p)) / np.sqrt(p), rng.normal(size=(n + m, p)) / np.sqrt(p)
    return phi @ phi.T, psi @ psi.T, psi, rng.normal(size=n)


def test_trained_ensemble_law_is_the_law_of_the_flow_from_gaussian_f0():
    theta, k, psi, y = _law_problem(0)
    n, t = len(y), 7.0
    law = regression.trained_ensemble_law(theta, k, y, t)
    # f_t is affine in f_0: its mean is f_t at f_0 = 0, its covariance A K A^T with A the map
    mean = regression.gradient_flow_predictor(theta[:n, :n], y, t, theta[n:, :n])
    np.testing.assert_allclose(law.mean, mean, atol=1e-12)
    cols = []
    for j in range(psi.shape[1]):           # columns of the affine map applied to Psi
        f0 = psi[:, j]
        cols.append(np.asarray(regression.gradient_flow_predictor(
            theta[:n, :n], y, t, theta[n:, :n], f0_train=f0[:n], f0_test=f0[n:])) - np.asarray(mean))
    applied = np.stack(cols, axis=1)
    np.testing.assert_allclose(law.covariance, applied @ applied.T, atol=1e-12)
    # the cross terms matter: K(*, *) + A K(S, S) A^T without them is a different matrix
    mu, u = np.linalg.eigh(theta[:n, :n])
    a_op = theta[n:, :n] @ u @ np.diag(-np.expm1(-t * mu / n) / mu) @ u.T
    no_cross = k[n:, n:] + a_op @ k[:n, :n] @ a_op.T
    np.testing.assert_allclose(no_cross - a_op @ k[:n, n:] - k[n:, :n] @ a_op.T,
                               law.covariance, atol=1e-12)
    assert np.max(np.abs(no_cross - law.covariance)) > 1e-2


def test_trained_ensemble_law_limits():
    theta, k, _, y = _law_problem(2)
    n = len(y)
    start = regression.trained_ensemble_law(theta, k, y, 0.0)   # the prior
    np.testing.assert_allclose(start.mean, 0.0, atol=1e-14)
    np.testing.assert_allclose(start.covariance, k[n:, n:], atol=1e-14)
    # Theta = K at t -> infinity: the noise-free GP posterior of K
    post = regression.trained_ensemble_law(k, k, y, 1e12)
    want_cov = k[n:, n:] - k[n:, :n] @ np.linalg.solve(k[:n, :n], k[:n, n:])
    np.testing.assert_allclose(post.covariance, want_cov, atol=1e-9)
    np.testing.assert_allclose(post.mean, k[n:, :n] @ np.linalg.solve(k[:n, :n], y), atol=1e-9)
    # several times at once, and gradient descent against the flow at small steps
    both = regression.trained_ensemble_law(theta, k, y, np.array([0.0, 3.0]))
    assert both.mean.shape == (2, 3) and both.covariance.shape == (2, 3, 3)
    np.testing.assert_allclose(both.covariance[0], k[n:, n:], atol=1e-14)
    gd = regression.trained_ensemble_law(theta, k, y, 3.0, lr=1e-3)
    np.testing.assert_allclose(gd.mean, both.mean[1], atol=1e-3)
    np.testing.assert_allclose(gd.covariance, both.covariance[1], atol=1e-3)
    # the GD law is exact for the linear model: its mean is gradient_descent_predictor's
    gd_mean = regression.gradient_descent_predictor(theta[:n, :n], y, 0.5, 6, theta[n:, :n])
    np.testing.assert_allclose(regression.trained_ensemble_law(theta, k, y, 3.0, lr=0.5).mean,
                               gd_mean, atol=1e-12)


def test_trained_ensemble_law_traced_and_bad_inputs():
    theta, k, _, y = _law_problem(3)
    eager = regression.trained_ensemble_law(theta, k, y, 2.0)
    jitted = jax.jit(lambda th, kk: regression.trained_ensemble_law(th, kk, y, 2.0))(theta, k)
    np.testing.assert_allclose(jitted.covariance, eager.covariance, atol=1e-12)
    with pytest.raises(ValueError, match="square"):
        regression.trained_ensemble_law(theta[:, :-1], k, y, 1.0)
    with pytest.raises(ValueError, match="shape of ntk"):
        regression.trained_ensemble_law(theta, k[:-1, :-1], y, 1.0)
    with pytest.raises(ValueError, match="test input"):
        regression.trained_ensemble_law(theta, k, np.ones(theta.shape[0]), 1.0)
    with pytest.raises(ValueError, match="t must be"):
        regression.trained_ensemble_law(theta, k, y, -1.0)
    with pytest.raises(ValueError, match="whole number"):
        regression.trained_ensemble_law(theta, k, y, 1.0, lr=0.3)
    with pytest.raises(ValueError, match="lr"):
        regression.trained_ensemble_law(theta, k, y, 1.0, lr=0.0)
