"""Tests of lecturekit.implicit_bias against closed forms and independently solved programs."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

jax.config.update("jax_enable_x64", True)

from lecturekit import implicit_bias as ib  # noqa: E402


def sparse_problem(seed=0, n=10, d=40, k=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta = np.zeros(d)
    beta[rng.choice(d, k, replace=False)] = rng.choice([-1.0, 1.0], k) * (0.5 + rng.random(k))
    return X, X @ beta, beta


def primal_argmin_Q(X, y, alpha, theta0):
    """argmin Q s.t. X beta = y by scipy's trust-constr on the primal (independent of ib.argmin_Q)."""
    s = alpha**2 * theta0**2

    def qf(z):
        return 2 - np.sqrt(4 + z * z) + z * np.arcsinh(z / 2)

    start = np.linalg.lstsq(X, y, rcond=None)[0]
    scale = np.sum(s * qf(start / s))
    res = optimize.minimize(
        lambda b: np.sum(s * qf(b / s)) / scale,
        start,
        jac=lambda b: np.arcsinh(b / s / 2) / scale,
        hess=lambda b: np.diag(1 / (s * np.sqrt(4 + (b / s) ** 2))) / scale,
        method="trust-constr",
        constraints=[optimize.LinearConstraint(X, y, y)],
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000},
    )
    return res.x


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


# --- q and Q --------------------------------------------------------------------------


def test_q_closed_form_values():
    z = np.array([0.0, 1.0, -3.0, 10.0])
    expected = 2 - np.sqrt(4 + z**2) + z * np.arcsinh(z / 2)
    np.testing.assert_allclose(ib.q(z), expected, rtol=1e-14, atol=1e-15)
    assert float(ib.q(0.0)) == 0.0


_dq = jax.jit(jax.grad(lambda t: ib.q(t)))
_d2q = jax.jit(jax.grad(jax.grad(lambda t: ib.q(t))))


@settings(max_examples=30, deadline=None)
@given(st.floats(-50, 50, allow_nan=False))
def test_q_derivatives(z):
    d1 = _dq(z)
    d2 = _d2q(z)
    assert abs(float(d1) - np.arcsinh(z / 2)) < 1e-12
    assert abs(float(d2) - 1 / np.sqrt(4 + z * z)) < 1e-12
    assert float(d2) > 0


def test_Q_scaling_and_default_theta0():
    beta = np.array([0.3, -1.0, 2.0])
    alpha = 0.7
    s = alpha**2
    assert float(ib.Q(beta, alpha)) == pytest.approx(float(np.sum(s * ib.q(beta / s))), rel=1e-14)
    theta0 = np.array([1.0, 2.0, 0.5])
    s = alpha**2 * theta0**2
    assert float(ib.Q(beta, alpha, theta0)) == pytest.approx(float(np.sum(s * ib.q(beta / s))), rel=1e-14)


def test_Q_limits_normalized():
    beta = np.array([0.4, -1.3, 2.0])
    theta0 = np.array([1.0, 2.0, 0.5])
    # alpha -> infinity: alpha^2 Q -> sum beta^2 / (4 theta0^2)
    big = 1e3
    assert big**2 * float(ib.Q(beta, big, theta0)) == pytest.approx(np.sum(beta**2 / (4 * theta0**2)), rel=1e-6)
    # alpha -> 0: Q / log(1/alpha^2) -> ||beta||_1, with an O(1/log(1/alpha)) correction
    errs = [abs(float(ib.Q(beta, a)) / np.log(1 / a**2) - np.abs(beta).sum()) for a in (1e-4, 1e-8, 1e-16)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.05 * np.abs(beta).sum(), errs


# --- train_diagonal_net vs the independently solved convex program ----------------------


@pytest.mark.parametrize("alpha", [0.05, 0.2, 1.0, 5.0, 20.0])
def test_train_diagonal_net_matches_argmin_Q(alpha):
    X, y, _ = sparse_problem()
    assert X.shape[1] > X.shape[0]
    theta0 = np.ones(X.shape[1])
    reference = primal_argmin_Q(X, y, alpha, theta0)
    beta = ib.train_diagonal_net(X, y, alpha=alpha)
    err = rel(beta, reference)
    assert err < 0.03, f"alpha={alpha}: relative error {err:.3g}"  # the required accuracy
    assert err < 5e-3, f"alpha={alpha}: relative error {err:.3g}"  # what the default step gives
    assert rel(X @ np.asarray(beta), y) < 1e-8


def test_gd_equals_flow_with_effective_shape():
    # GD = gradient flow for the shape sqrt(theta+ theta-)/alpha, up to O(eta^3 g^3)
    X, y, _ = sparse_problem()
    for c in (0.1, 0.02):
        res = ib.train_diagonal_net_info(X, y, alpha=0.1, step_scale=c)
        plain = rel(res.beta, ib.argmin_Q(X, y, alpha=0.1))
        eff = rel(res.beta, ib.argmin_Q(X, y, alpha=0.1, theta0=np.sqrt(res.theta_plus * res.theta_minus) / 0.1))
        assert eff < 0.1 * plain and eff < 1e-3, (c, plain, eff)


def test_train_diagonal_net_shape_theta0():
    X, y, _ = sparse_problem(seed=1, n=6, d=15)
    theta0 = np.random.default_rng(3).uniform(0.5, 2.0, 15)
    res = ib.train_diagonal_net_info(X, y, alpha=0.5, theta0=theta0)
    reference = primal_argmin_Q(X, y, 0.5, theta0)
    assert rel(res.beta, reference) < 5e-3
    np.testing.assert_allclose(res.beta, res.theta_plus**2 - res.theta_minus**2, atol=1e-14)
    assert res.steps > 0 and res.time > 0 and res.residual <= 1e-9 * np.linalg.norm(y)


def test_argmin_Q_matches_primal_and_limits():
    X, y, _ = sparse_problem(seed=2, n=8, d=25)
    theta0 = np.random.default_rng(4).uniform(0.5, 2.0, 25)
    for alpha in (0.1, 1.0, 10.0):
        assert rel(ib.argmin_Q(X, y, alpha=alpha, theta0=theta0), primal_argmin_Q(X, y, alpha, theta0)) < 1e-5
    # alpha -> 0: the minimum-l1 interpolant (a problem whose l1 solution is well separated;
    # with a nearly degenerate l1 problem the approach is much slower)
    X1, y1, _ = sparse_problem(seed=0, n=20, d=40)
    l1 = ib.min_l1_interpolant(X1, y1)
    errs = [rel(ib.argmin_Q(X1, y1, alpha=a), l1) for a in (1e-2, 1e-3, 1e-4)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3, errs
    wl2 = ib.min_weighted_l2_interpolant(X, y, theta0)
    assert rel(ib.argmin_Q(X, y, alpha=100.0, theta0=theta0), wl2) < 1e-6


def test_min_l1_recovers_sparse_truth():
    X, y, beta = sparse_problem(seed=5, n=20, d=40, k=2)
    assert rel(ib.min_l1_interpolant(X, y), beta) < 1e-7


def test_diagonal_net_bad_inputs():
    X, y, _ = sparse_problem(n=4, d=6)
    with pytest.raises(ValueError, match="alpha"):
        ib.train_diagonal_net(X, y, alpha=0.0)
    with pytest.raises(ValueError, match="X"):
        ib.train_diagonal_net(X[0], y, alpha=1.0)
    with pytest.raises(ValueError, match="y"):
        ib.train_diagonal_net(X, y[:3], alpha=1.0)
    with pytest.raises(ValueError, match="theta0"):
        ib.train_diagonal_net(X, y, alpha=1.0, theta0=np.zeros(6))
    with pytest.raises(ValueError, match="theta0"):
        ib.train_diagonal_net(X, y, alpha=1.0, theta0=np.ones(5))
    with pytest.raises(ValueError, match="step_scale"):
        ib.train_diagonal_net(X, y, alpha=1.0, step_scale=2.0)
    with pytest.raises(TypeError, match="alpha"):
        ib.train_diagonal_net(X, y, alpha="big")
    with pytest.raises(RuntimeError, match="max_iter"):
        ib.train_diagonal_net(X, y, alpha=0.05, max_iter=10)
    with pytest.raises(ValueError, match="finite"):
        ib.Q(np.array([np.nan, 1.0]), 1.0)


# --- max-margin ---------------------------------------------------------------------------


def separable_data(seed=25, n=20):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2)) * np.array([1.0, 0.6])
    y = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    return X + y[:, None] * np.array([1.6, 0.8]), y


def test_svm_known_solution():
    X = np.array([[2.0, 0.0], [3.0, 1.0], [-1.0, 0.5], [-2.0, -2.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    sol = ib.hard_margin_svm(X, y)
    # brute force: the max-margin direction through the origin maximizes min_i y_i <u, x_i> over unit u
    phis = np.linspace(0, 2 * np.pi, 200_001)
    U = np.stack([np.cos(phis), np.sin(phis)], 1)
    margins = np.min((y[:, None] * X) @ U.T, axis=0)
    best = U[np.argmax(margins)]
    assert float(ib.angle(sol.w, best)) < 1e-4  # grid spacing 3e-5
    assert float(jnp.linalg.norm(sol.w)) == pytest.approx(1 / margins.max(), rel=1e-5)
    # by hand: the active constraints are points 3 and 4, w = (5/6, -1/3)
    np.testing.assert_allclose(sol.w, [5 / 6, -1 / 3], atol=1e-12)
    np.testing.assert_array_equal(sol.support, [False, False, True, True])


def test_svm_kkt():
    X, y = separable_data()
    sol = ib.hard_margin_svm(X, y)
    Z = y[:, None] * X
    m = Z @ np.asarray(sol.w)
    a = np.asarray(sol.dual)
    assert np.all(m >= 1 - 1e-7) and np.all(a >= 0)
    np.testing.assert_allclose(m[np.asarray(sol.support)], 1.0, atol=1e-6)  # support vectors on the margin
    np.testing.assert_allclose(Z.T @ a, sol.w, atol=1e-12)  # stationarity
    assert np.max(np.abs(a * (m - 1))) < 1e-6  # complementary slackness


def test_svm_rejects_non_separable_and_bad_labels():
    X = np.array([[1.0, 0.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match="separable"):
        ib.hard_margin_svm(X, np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="labels"):
        ib.hard_margin_svm(X, np.array([1.0, 0.0]))


def test_gd_direction_converges_to_svm():
    X, y = separable_data()
    sol = ib.hard_margin_svm(X, y)
    W = ib.train_linear_classifier(X, y, [100, 10_000, 100_000], loss="exp")
    norms = np.linalg.norm(np.asarray(W), axis=1)
    gaps = np.asarray(ib.angle(W, sol.w))
    assert np.all(np.diff(norms) > 0)
    assert gaps[-1] < gaps[0] and gaps[-1] < 0.01, gaps
    Wl = ib.train_linear_classifier(X, y, [100_000], loss="logistic")
    assert float(ib.angle(Wl[0], sol.w)) < 0.02
    with pytest.raises(ValueError, match="loss"):
        ib.train_linear_classifier(X, y, [10], loss="hinge")
    with pytest.raises(ValueError, match="checkpoints"):
        ib.train_linear_classifier(X, y, [10, 5])


def test_angle_values():
    assert float(ib.angle(np.array([1.0, 0.0]), np.array([0.0, 3.0]))) == pytest.approx(np.pi / 2)
    assert float(ib.angle(np.array([1.0, 1e-9]), np.array([1.0, 0.0]))) == pytest.approx(1e-9, rel=1e-6)
    assert float(ib.angle(np.array([1.0, 0.0]), np.array([-2.0, 0.0]))) == pytest.approx(np.pi)


# --- SGD ------------------------------------------------------------------------------------


def test_batch_second_moment_trace_by_enumeration():
    rng = np.random.default_rng(0)
    m, n, b = 5, 3, 2.0
    X, y, theta = rng.standard_normal((m, n)), rng.standard_normal(m), rng.standard_normal(n)
    p = b / m
    second = 0.0
    for mask in itertools.product([0, 1], repeat=m):
        mask = np.array(mask, float)
        prob = np.prod(np.where(mask == 1, p, 1 - p))
        g = ((mask * (X @ theta - y)) @ X) / b
        second += prob * g @ g
    assert float(ib.batch_second_moment_trace(theta, X, y, b)) == pytest.approx(second, rel=1e-12)


def test_fdr_least_squares():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((12, 2)), rng.standard_normal(12)
    res = ib.sgd_least_squares_fdr(jax.random.key(0), X, y, lr=0.05, batch=3, steps=1000, burn_in=300, chains=300)
    diff = np.asarray(res.alignment - res.half_lr_trace)
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    assert abs(diff.mean()) < 5 * se, (diff.mean(), se)  # exact identity, up to Monte Carlo noise
    g = np.asarray(res.grad)
    assert np.all(np.abs(g.mean(0)) < 5 * g.std(0, ddof=1) / np.sqrt(g.shape[0]))
    with pytest.raises(ValueError, match="burn_in"):
        ib.sgd_least_squares_fdr(jax.random.key(0), X, y, lr=0.05, batch=3, steps=10, burn_in=10, chains=2)


def test_two_speed_chain_exact_mass():
    for n in (2, 4, 10, 50):
        p = ib.two_speed_chain_stationary(n)
        assert p.sum() == pytest.approx(1.0) and np.all(p >= -1e-15)
        assert p[:n].sum() == pytest.approx(4 * n / (5 * n + 2), rel=1e-10)
    uniform = ib.two_speed_chain_stationary(10, fast=1)
    np.testing.assert_allclose(uniform, 1 / 20, rtol=1e-10)
    with pytest.raises(ValueError, match="even"):
        ib.two_speed_chain_stationary(7)


def test_two_speed_walk_monte_carlo():
    n = 10
    exact = ib.two_speed_chain_stationary(n)[:n].sum()
    occ = np.asarray(ib.two_speed_walk_occupation(jax.random.key(3), n, walkers=500, steps=4000, burn_in=500))
    se = occ.std(ddof=1) / np.sqrt(occ.size)
    assert abs(occ.mean() - exact) < 5 * se, (occ.mean(), exact, se)


def test_circle_chain_and_simulation():
    kw = dict(kappa=0.5, lr=0.05, label_sd=2.0, tilt_sd=2.0)
    th, dens = ib.circle_chain_stationary(**kw, grid=400)
    h = th[1] - th[0]
    assert dens.sum() * h == pytest.approx(1.0)
    flat_exact = dens[np.cos(th) < 0].sum() * h
    occ = np.asarray(ib.circle_sgd_occupation(jax.random.key(4), **kw, steps=3000, burn_in=500, chains=500))
    se = occ.std(ddof=1) / np.sqrt(occ.size)
    assert abs(occ.mean() - flat_exact) < 5 * se + 0.01, (occ.mean(), flat_exact, se)
    f, fp = ib.circle_model(np.array([0.0, np.pi]), 0.5)
    np.testing.assert_allclose(f, 0.0, atol=1e-15)
    np.testing.assert_allclose(fp**2, [1.5**2, 0.5**2])  # curvatures of L = f^2/2 at the minima
    with pytest.raises(ValueError, match="kappa"):
        ib.circle_model(0.0, 1.0)


# --- helpers used by the chapter ------------------------------------------------------------


def test_sparse_regression_problem():
    X, y, beta = ib.sparse_regression_problem(jax.random.key(0), n=7, d=15, k=4)
    assert X.shape == (7, 15) and y.shape == (7,) and beta.shape == (15,)
    nonzero = np.abs(np.asarray(beta))[np.asarray(beta) != 0]
    assert nonzero.size == 4 and np.all((nonzero >= 0.5) & (nonzero <= 1.5))
    np.testing.assert_allclose(y, X @ beta, rtol=1e-14, atol=1e-14)
    again = ib.sparse_regression_problem(jax.random.key(0), n=7, d=15, k=4)
    assert all(np.array_equal(a, b) for a, b in zip(again, (X, y, beta)))  # the key decides
    other = ib.sparse_regression_problem(jax.random.key(1), n=7, d=15, k=4)
    assert not np.array_equal(other.X, X)
    with pytest.raises(ValueError, match="k must be <= d"):
        ib.sparse_regression_problem(jax.random.key(0), d=3, k=4)
    with pytest.raises(TypeError, match="key"):
        ib.sparse_regression_problem(0)
    with pytest.raises(TypeError, match="n must be an integer"):
        ib.sparse_regression_problem(jax.random.key(0), n=2.5)


def test_argmin_Q_primal_matches_the_dual_solver():
    X, y, _ = sparse_problem(seed=3, n=8, d=20)
    theta0 = np.random.default_rng(5).uniform(0.5, 2.0, 20)
    for alpha in (0.1, 1.0, 10.0):
        primal = ib.argmin_Q_primal(X, y, alpha=alpha, theta0=theta0)
        assert rel(primal, ib.argmin_Q(X, y, alpha=alpha, theta0=theta0)) < 1e-6, alpha
        assert rel(X @ np.asarray(primal), y) < 1e-9
    with pytest.raises(ValueError, match="alpha"):
        ib.argmin_Q_primal(X, y, alpha=-1.0)


def test_circle_fokker_planck():
    kw = dict(kappa=0.5, lr=0.01, label_sd=2.0, tilt_sd=1.0)
    th, exact = ib.circle_chain_stationary(**kw, grid=800)
    fp = ib.circle_fokker_planck(th, **kw)
    assert np.trapezoid(fp, th) == pytest.approx(1.0)
    # small lr: the Fokker-Planck density is the chain's, up to O(lr)
    assert np.max(np.abs(fp - exact)) < 0.05 * np.max(exact)
    # isotropic noise: p is the Gibbs density exp(-L/T), T = lr tilt_sd^2 / 2, L = f^2 / 2
    iso = ib.circle_fokker_planck(th, kappa=0.5, lr=0.1, label_sd=0.0, tilt_sd=2.0)
    f, _ = ib.circle_model(th, 0.5)
    gibbs = np.exp(-np.asarray(f) ** 2 / 2 / (0.1 * 4 / 2))
    np.testing.assert_allclose(iso, gibbs / np.trapezoid(gibbs, th), rtol=1e-4)
    # without the 1/D prefactor the density changes when D depends on theta
    bare = ib.circle_fokker_planck(th, **kw, prefactor=False)
    assert np.max(np.abs(bare - fp)) > 0.01 * np.max(fp)
    with pytest.raises(ValueError, match="increasing"):
        ib.circle_fokker_planck(th[::-1], **kw)
    with pytest.raises(ValueError, match="kappa"):
        ib.circle_fokker_planck(th, **{**kw, "kappa": 1.5})


def test_two_speed_transition_matrix():
    P = ib.two_speed_transition_matrix(6)
    assert P.shape == (12, 12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert P[2, 3] == P[2, 1] == 0.5 and P[8, 10] == P[8, 6] == 0.5  # slow below, fast above
    pi = ib.two_speed_chain_stationary(6)
    np.testing.assert_allclose(pi @ P, pi, atol=1e-15)
    with pytest.raises(ValueError, match="n_per_half"):
        ib.two_speed_transition_matrix(1)


# --- the split into diagonal / margin / sgd_noise, and the helpers moved out of ch05 --------


def test_train_diagonal_net_info_is_the_same_run():
    X, y, _ = sparse_problem(seed=1, n=6, d=15)
    info = ib.train_diagonal_net_info(X, y, alpha=0.3)
    assert isinstance(info, ib.DiagonalNetInfo)
    np.testing.assert_array_equal(info.beta, ib.train_diagonal_net(X, y, alpha=0.3))
    with pytest.raises(RuntimeError, match="max_iter"):
        ib.train_diagonal_net_info(X, y, alpha=0.05, max_iter=8)
    with pytest.raises(TypeError, match="max_steps"):  # the former name is gone
        ib.train_diagonal_net(X, y, alpha=0.3, max_steps=10)
    with pytest.raises(ValueError, match="max_iter"):
        ib.train_diagonal_net_info(X, y, alpha=0.3, max_iter=0)


def test_flow_time_does_not_change_the_limit():
    """The loss is (1/2) sum, not the (1/2N) sum of training.square_loss: a constant factor
    rescales the flow's time only. Scaling X and y by c scales the loss by c^2 and leaves
    the interpolation set, hence the limit, unchanged; the flow time shrinks by about c^2."""
    X, y, _ = sparse_problem(seed=2, n=6, d=15)
    base = ib.train_diagonal_net_info(X, y, alpha=1.0, step_scale=0.005)
    scaled = ib.train_diagonal_net_info(2 * X, 2 * y, alpha=1.0, step_scale=0.005)
    assert rel(scaled.beta, base.beta) < 1e-3
    assert 3.0 < base.time / scaled.time < 5.0, (base.time, scaled.time)


def test_public_names_live_in_one_module_each():
    from lecturekit.implicit_bias import diagonal, label_noise, margin, sgd_noise

    names = [*diagonal.__all__, *margin.__all__, *sgd_noise.__all__, *label_noise.__all__]
    assert len(names) == len(set(names)) and sorted(ib.__all__) == sorted(names)
    for module in (diagonal, margin, sgd_noise, label_noise):
        for name in module.__all__:
            assert getattr(ib, name) is getattr(module, name)
            assert getattr(module, name).__doc__ and "Example:" in getattr(module, name).__doc__, name


def test_two_clouds():
    X, y = ib.two_clouds(jax.random.key(18))
    assert X.shape == (20, 2) and y.shape == (20,)
    np.testing.assert_array_equal(y, np.where(np.arange(20) < 10, 1.0, -1.0))
    again, _ = ib.two_clouds(jax.random.key(18))
    np.testing.assert_array_equal(X, again)
    # the clouds sit around +-(1.6, 0.8): their means are there within 4 standard errors
    for label in (1.0, -1.0):
        mean = np.asarray(X)[np.asarray(y) == label].mean(0)
        assert np.all(np.abs(mean - label * np.array([1.6, 0.8])) < 4 * np.array([1.0, 0.6]) / np.sqrt(10))
    assert ib.hard_margin_svm(X, y).support.sum() >= 1
    with pytest.raises(ValueError, match="n"):
        ib.two_clouds(jax.random.key(0), n=1)


def test_two_speed_expected_occupation():
    # no transient from the stationary start: check against a direct propagation
    n, steps, burn = 6, 40, 7
    P = ib.two_speed_transition_matrix(n)
    laws = [np.full(2 * n, 1 / (2 * n))]
    for _ in range(steps):
        laws.append(laws[-1] @ P)
    direct = np.mean([law[:n].sum() for law in laws[burn:steps]])
    assert ib.two_speed_expected_occupation(n, steps=steps, burn_in=burn) == pytest.approx(direct, rel=1e-14)
    # long runs: the stationary mass 4n/(5n+2)
    assert ib.two_speed_expected_occupation(10, steps=5000, burn_in=2000) == pytest.approx(40 / 52, abs=1e-9)
    with pytest.raises(ValueError, match="burn_in"):
        ib.two_speed_expected_occupation(10, steps=5, burn_in=5)


def test_chains_without_burn_in():
    occ = np.asarray(ib.two_speed_walk_occupation(jax.random.key(0), 4, walkers=3, steps=1, burn_in=0))
    assert occ.shape == (3,) and set(occ.tolist()) <= {0.0, 1.0}
    occ = np.asarray(ib.circle_sgd_occupation(jax.random.key(0), kappa=0.5, lr=0.1, label_sd=1.0, tilt_sd=1.0,
                                              steps=3, burn_in=0, chains=4))
    assert occ.shape == (4,) and np.all((occ >= 0) & (occ <= 1))


def test_train_linear_classifier_checkpoints_match_a_plain_loop():
    """The engine's run, observed at multiples of the checkpoints' gcd, picks the right rows."""
    X, y = separable_data(n=8)
    Z = y[:, None] * X
    lr = 0.05
    w, plain = np.array([0.3, -0.2]), {}
    for t in range(61):
        plain[t] = w.copy()
        w = w - lr * (-(np.exp(-Z @ w)[:, None] * Z).mean(0))  # gradient of mean exp(-<w, z>)
    for checkpoints in ([0, 7, 60], [12, 30, 60], [60]):
        W = np.asarray(ib.train_linear_classifier(X, y, checkpoints, loss="exp", lr=lr, w0=[0.3, -0.2]))
        np.testing.assert_allclose(W, [plain[t] for t in checkpoints], rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------------------
# Chapter 5 revision: the l1 certificate, weighted l1, label noise, general noise profiles


def test_l1_certificate_predicts_the_small_alpha_exponent():
    X, y, _ = sparse_problem(seed=1, n=12, d=30, k=2)
    cert = ib.l1_certificate(X, y)
    beta = np.asarray(ib.min_l1_interpolant(X, y))
    assert np.array_equal(cert.support, np.abs(beta) > 1e-9 * np.abs(beta).max())
    corr = X.T @ cert.mu
    np.testing.assert_allclose(corr[cert.support], np.sign(beta[cert.support]), atol=1e-9)
    assert 0 < cert.kappa < 1 and abs(np.max(np.abs(corr[~cert.support])) - cert.kappa) < 1e-9
    alphas = np.array([1e-4, 1e-5, 1e-6])
    dist = [np.linalg.norm(np.asarray(ib.argmin_Q(X, y, alpha=a)) - beta) for a in alphas]
    slope = np.polyfit(np.log(alphas), np.log(dist), 1)[0]
    assert abs(slope - cert.exponent) < 0.05, (slope, cert.exponent)


def test_weighted_min_l1_interpolant_against_a_direct_lp():
    X, y, _ = sparse_problem(seed=4, n=8, d=20)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=20)
    beta = np.asarray(ib.min_l1_interpolant(X, y, weights=w))
    np.testing.assert_allclose(X @ beta, y, atol=1e-9)
    # no feasible direction lowers the weighted norm: compare with random feasible points
    null = np.linalg.svd(X)[2][8:]
    rng = np.random.default_rng(1)
    for _ in range(200):
        other = beta + null.T @ rng.normal(size=12) * 0.1
        assert np.sum(w * np.abs(other)) >= np.sum(w * np.abs(beta)) - 1e-9
    with pytest.raises(ValueError, match="weights"):
        ib.min_l1_interpolant(X, y, weights=-w)


def test_diagonal_sharpness_is_the_trace_of_the_gauss_newton_hessian():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(5, 7))
    tp, tm = rng.normal(size=7), rng.normal(size=7)
    J = np.concatenate([2 * X * tp, -2 * X * tm], axis=1)
    assert abs(ib.diagonal_sharpness(tp, tm, X) - np.trace(J.T @ J) / 5) < 1e-10
    with pytest.raises(ValueError, match="shape"):
        ib.diagonal_sharpness(tp[:3], tm, X)


def test_label_noise_drift_is_tangent_and_lowers_the_sharpness():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(4, 9))
    tp, tm = rng.uniform(0.5, 1.5, size=9), rng.uniform(0.5, 1.5, size=9)
    dp, dm = (np.asarray(v) for v in ib.label_noise_drift(tp, tm, X, lr=0.01,
                                                           label_noise=2.0))
    # tangent to the interpolants: X (theta_+^2 - theta_-^2) does not move to first order
    np.testing.assert_allclose(X @ (2 * tp * dp - 2 * tm * dm), 0.0, atol=1e-14)
    # and the sharpness decreases along it, at the rate |P_T grad|^2 eta^2 sigma^2 / (4 N)
    eps = 1e-3
    before = ib.diagonal_sharpness(tp, tm, X)
    after = ib.diagonal_sharpness(tp + eps * dp, tm + eps * dm, X)
    assert after < before
    # zero label noise: no drift
    zp, zm = ib.label_noise_drift(tp, tm, X, lr=0.01, label_noise=0.0)
    assert np.all(np.asarray(zp) == 0) and np.all(np.asarray(zm) == 0)


def test_circle_chain_stationary_profile_reproduces_the_chain_and_checks_input():
    kw = dict(kappa=0.5, lr=0.1)
    th, p = ib.circle_chain_stationary_profile(
        lambda t: 0.1 * np.sqrt(9 * (np.cos(t) + 0.5 * np.cos(2 * t)) ** 2 + 1.75),
        grid=200, **kw)
    _, q = ib.circle_chain_stationary(label_sd=3.0, tilt_sd=np.sqrt(1.75), grid=200, **kw)
    np.testing.assert_allclose(p, q, rtol=1e-10)
    with pytest.raises(ValueError, match="positive"):
        ib.circle_chain_stationary_profile(lambda t: -np.ones_like(t), grid=64, **kw)
    with pytest.raises(TypeError, match="function"):
        ib.circle_chain_stationary_profile(0.2, grid=64, **kw)


def test_circle_chain_stationary_is_accurate_when_the_chain_mixes_slowly():
    # a step sd of 1.6 and 2.4 cells (lr 0.01): the density spans 54 orders of magnitude.
    # A direct solve of (P^T - I) pi = 0 gave negative entries (-0.004 of the peak on one
    # CPU, -0.02 at grid 3000 on another) and peaks up to 2 % off; state reduction (GTH) must
    # satisfy the balance equations entry by entry, relative to each entry: its error
    # bound grows like n^3 eps (measured 1.3e-7 at n = 1000; the direct solve's
    # residuals were 2e-4 and 6e-3)
    kw = dict(kappa=0.41, lr=0.01, label_sd=1.3, tilt_sd=0.6)
    peaks = []
    for grid in (1000, 1500):
        th, p = ib.circle_chain_stationary(grid=grid, **kw)
        h = th[1] - th[0]
        f, fp = ib.circle_model(th, kw["kappa"])
        mean = th - kw["lr"] * np.asarray(f) * np.asarray(fp)
        sd = kw["lr"] * np.sqrt(kw["label_sd"] ** 2 * np.asarray(fp) ** 2
                                + kw["tilt_sd"] ** 2)
        diff = np.mod(th[None, :] - mean[:, None] + np.pi, 2 * np.pi) - np.pi
        P = np.exp(-0.5 * (diff / sd[:, None]) ** 2)
        P /= P.sum(axis=1, keepdims=True)
        assert p.min() > 0 and p.max() / p.min() > 1e50
        np.testing.assert_allclose(p @ P, p, rtol=1e-6, atol=0)
        assert abs(p.sum() * h - 1) < 1e-12
        peaks.append(p.max())
    # the two grids discretize one chain: their peaks agree to the discretization error
    assert abs(peaks[0] - peaks[1]) < 1e-3 * peaks[1], peaks


def test_stationary_vector_refuses_a_reducible_chain():
    # steps of 2 on both halves keep the parity of the site: two closed classes
    with pytest.raises(ValueError, match="slow, fast: .* reducible"):
        ib.two_speed_chain_stationary(10, slow=2, fast=2)
    # a step sd of 0.013 cells: moves to another cell underflow
    with pytest.raises(ValueError, match="grid: .* underflows"):
        ib.circle_chain_stationary(kappa=0.5, lr=0.1, label_sd=0.0, tilt_sd=0.05, grid=16)
