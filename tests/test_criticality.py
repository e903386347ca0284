"""Tests of lecturekit.criticality: quadrature, variance/correlation maps, susceptibilities."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from lecturekit import criticality as cr
from lecturekit import gaussian, sampling

jax.config.update("jax_enable_x64", True)


def test_quadrature_is_exact_for_polynomials():
    k = jnp.array([0.1, 1.0, 3.0])
    assert np.allclose(gaussian.expectation(lambda z: z**2, k), k, rtol=1e-13)
    assert np.allclose(gaussian.expectation(lambda z: z**4, k), 3 * k**2, rtol=1e-13)
    assert np.allclose(gaussian.expectation(lambda z: z**6, k, nodes=4), 15 * k**3, rtol=1e-12)
    z, w = gaussian.gauss_hermite_rule(20)
    assert z.shape == w.shape == (20,) and abs(float(w.sum()) - 1) < 1e-14


@settings(max_examples=25, deadline=None)
@given(k=st.floats(0.0, 10.0), c_w=st.floats(0.0, 5.0), c_b=st.floats(0.0, 2.0))
def test_relu_variance_map_is_linear(k, c_w, c_b):
    # E_K[relu(z)^2] = K / 2 exactly.
    got = float(cr.variance_map(k, "relu", w_std=c_w**0.5, b_std=c_b**0.5))
    assert got == pytest.approx(c_b + c_w * k / 2, rel=1e-6, abs=1e-9)


def test_identity_and_relu_susceptibilities():
    k = jnp.array([0.2, 1.0, 5.0])
    assert np.allclose(cr.chi_parallel(k, "identity", w_std=1.7**0.5), 1.7)
    assert np.allclose(cr.chi_perp(k, "identity", w_std=1.7**0.5), 1.7)
    # ReLU: chi_par = chi_perp = C_w / 2 (chi_perp from the closed form, chi_par by symmetric quadrature).
    assert np.allclose(cr.chi_perp(k, "relu", w_std=2.0**0.5), 1.0, rtol=1e-15)
    assert np.allclose(cr.chi_parallel(k, "relu", w_std=2.0**0.5), 1.0, atol=2e-2)


@pytest.mark.parametrize("name", ["tanh", "erf", "softplus", "sin"])
def test_chi_parallel_is_the_slope_of_the_variance_map(name):
    k = jnp.array([0.05, 0.4, 2.0])
    dual = gaussian.dual_fn(name, nodes=128)
    slope = jax.vmap(jax.grad(lambda v: cr._variance_map(v, dual, 1.3, 0.2)))(k)
    # two quadratures of the same integral (phi'^2 + phi phi'' vs the derivative of the rule for
    # phi^2): they differ by the Gauss-Hermite error, ~1e-6 for tanh (poles at +-i pi/2)
    assert np.allclose(cr.chi_parallel(k, name, w_std=1.3**0.5), slope, rtol=1e-5)


def test_erf_chi_perp_closed_form():
    k = jnp.linspace(0.0, 4.0, 9)
    # E_K[erf'(z)^2] = (4/pi) E[exp(-2 z^2)] = (4/pi) / sqrt(1 + 4K)
    # rtol 1e-6: activations.erf's derivative uses a float32 constant 2/sqrt(pi) (rel. error ~3e-8)
    assert np.allclose(cr.chi_perp(k, "erf", w_std=2.0**0.5), 2.0 * 4 / np.pi / np.sqrt(1 + 4 * k), rtol=1e-6)


def test_covariance_map_matches_kernels_module():
    a, b = jnp.array([0.5, 1.0, 2.0]), jnp.array([1.5, 1.0, 0.3])
    c = jnp.array([0.3, -0.9, 0.7]) * jnp.sqrt(a * b)
    for name in ["tanh", "relu", "erf"]:
        k11, k12, k22 = cr.covariance_map(a, c, b, name, w_std=1.4**0.5, b_std=0.1**0.5, nodes=gaussian.QUADRATURE_NODES)
        e12, _ = gaussian.dual_expectations(name, a, c, b, quadrature=(name == "tanh"))
        e11, _ = gaussian.dual_expectations(name, a, a, a, quadrature=(name == "tanh"))
        # same Gauss-Hermite rule as kernels for tanh: agreement to rounding
        assert np.allclose(k12, 0.1 + 1.4 * e12, rtol=1e-10), name
        assert np.allclose(k11, 0.1 + 1.4 * e11, rtol=1e-10), name
    # the tensor quadrature itself against the erf closed form
    act = cr._act.get("erf")
    quad = gaussian.dual_fn(cr._act.Activation("erf2", act.fn, act.grad, act.hess), nodes=60)(a, c, b).phi
    assert np.allclose(quad, gaussian.dual_expectations("erf", a, c, b).phi, atol=1e-10)


@pytest.mark.parametrize("name, c_w, c_b", [("tanh", 1.5, 0.1), ("tanh", 0.8, 0.05), ("erf", 2.0, 0.2)])  # C_W, C_B
def test_correlation_map_at_fixed_point(name, c_w, c_b):
    k_star = float(cr.fixed_point(name, w_std=c_w**0.5, b_std=c_b**0.5))
    assert float(cr.variance_map(k_star, name, w_std=c_w**0.5, b_std=c_b**0.5)) == pytest.approx(k_star, rel=1e-10)
    assert float(cr.correlation_map(1.0, k_star, name, w_std=c_w**0.5, b_std=c_b**0.5)) == pytest.approx(1.0, abs=1e-12)
    # slope at rho = 1 is chi_perp (one-sided finite difference, error O(h^(1/2)) is avoided
    # by a second-order fit through three points)
    h = np.array([1e-4, 2e-4])
    vals = np.asarray(cr.correlation_map(1.0 - h, k_star, name, w_std=c_w**0.5, b_std=c_b**0.5, nodes=80))
    slopes = (1.0 - vals) / h
    richardson = 2 * slopes[0] - slopes[1]
    assert richardson == pytest.approx(float(cr.chi_perp(k_star, name, w_std=c_w**0.5)), rel=2e-3)


def test_tanh_critical_power_law():
    # Catalogue: 2 l K_l = 1.0440 (l=10), 1.0023 (1e3), 1.0003 (1e4) with K_0 = 1, 200 nodes.
    ks = np.asarray(cr.variance_trajectory(1.0, 10_000, "tanh", w_std=1.0, b_std=0.0, nodes=200))
    assert 2 * 10 * ks[10] == pytest.approx(1.0440, abs=1e-4)
    assert 2 * 1000 * ks[1000] == pytest.approx(1.0023, abs=1e-4)
    assert 2 * 10_000 * ks[10_000] == pytest.approx(1.0003, abs=1e-4)


def test_trajectory_broadcasts_over_a_grid():
    cw = jnp.array([[0.5, 1.0], [1.5, 2.0]])
    ks = cr.variance_trajectory(1.0, 5, "tanh", w_std=jnp.sqrt(cw), b_std=0.1**0.5)
    assert ks.shape == (6, 2, 2)
    one = cr.variance_trajectory(1.0, 5, "tanh", w_std=1.5**0.5, b_std=0.1**0.5)
    assert np.allclose(ks[:, 1, 0], one)
    k11, k12, k22 = cr.kernel_trajectory(1.0, 0.5, 2.0, 4, "relu", w_std=2.0**0.5)
    assert k11.shape == (5,) and np.allclose(k11, 1.0) and np.allclose(k22, 2.0)


def _erf_critical_independent(c_b):
    # On chi_perp = 1: C_w = (pi/4) sqrt(1 + 4K); the fixed point equation then gives
    # c_b = K - (sqrt(1+4K)/2) arcsin(2K/(1+2K)); solve for K, return C_w.
    g = lambda k: k - 0.5 * np.sqrt(1 + 4 * k) * np.arcsin(2 * k / (1 + 2 * k)) - c_b  # noqa: E731
    k = scipy.optimize.brentq(g, 1e-12, 50.0, xtol=1e-14)
    return np.pi / 4 * np.sqrt(1 + 4 * k)


@pytest.mark.parametrize("c_b", [0.05, 0.3])
def test_critical_line_erf(c_b):
    assert cr.critical_weight_variance("erf", b_std=c_b**0.5) == pytest.approx(_erf_critical_independent(c_b), rel=1e-6)


def test_bad_inputs():
    with pytest.raises(ValueError, match="variance"):
        cr.variance_map(-1.0, "tanh", w_std=1.0)
    with pytest.raises(ValueError, match="unknown activation"):
        cr.chi_perp(1.0, "tanhh", w_std=1.0)
    with pytest.raises(ValueError, match="w_std"):
        cr.variance_map(1.0, "tanh", w_std=-1.0)
    with pytest.raises(TypeError, match="depth"):
        cr.variance_trajectory(1.0, 2.5, "tanh", w_std=1.0)
    with pytest.raises(ValueError, match="rho"):
        cr.correlation_map(1.5, 1.0, "tanh", w_std=1.0)
    with pytest.raises(ValueError, match="k12"):
        cr.covariance_map(1.0, 2.0, 1.0, "tanh", w_std=1.0)
    with pytest.raises(ValueError, match="bracket"):
        cr.critical_weight_variance("erf", b_std=0.05**0.5, bracket=(2.0, 3.0))
    with pytest.raises(TypeError, match="fn"):
        gaussian.expectation(3.0, 1.0)


def test_public_maps_trace_under_jit_and_agree_with_eager_calls():
    # validation inspects only concrete values, so the public functions compose with jit and grad
    k = np.array([0.2, 1.0, 2.5])
    traced = jax.jit(lambda v: cr.variance_map(v, "tanh", w_std=1.3**0.5, b_std=0.1**0.5))(k)
    assert np.allclose(traced, cr.variance_map(k, "tanh", w_std=1.3**0.5, b_std=0.1**0.5), rtol=1e-13, atol=0)
    slope = jax.jit(jax.vmap(jax.grad(lambda v: cr.variance_map(v, "tanh", w_std=1.3**0.5, b_std=0.1**0.5))))(k)
    assert np.allclose(slope, cr.chi_parallel(k, "tanh", w_std=1.3**0.5), rtol=1e-4)
    rho = jax.jit(lambda r: cr.correlation_map(r, 0.8, "tanh", w_std=1.5**0.5, b_std=0.1**0.5))(np.array([0.0, 0.5, 1.0]))
    assert np.allclose(rho, cr.correlation_map(np.array([0.0, 0.5, 1.0]), 0.8, "tanh", w_std=1.5**0.5, b_std=0.1**0.5), rtol=1e-13)
    # repeated calls with one shape reuse one compiled map and give identical results
    a = cr.covariance_map(k, 0.5 * k, k, "tanh", w_std=1.3**0.5, b_std=0.1**0.5)
    b = cr.covariance_map(k, 0.5 * k, k, "tanh", w_std=1.3**0.5, b_std=0.1**0.5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_bad_covariances_and_negative_arrays():
    with pytest.raises(ValueError, match="k12"):
        cr.kernel_trajectory(1.0, np.array([0.5, 1.5]), 1.0, 3, "relu", w_std=2.0**0.5)
    with pytest.raises(ValueError, match="k11"):
        cr.covariance_map(np.array([1.0, -0.5]), 0.0, 1.0, "tanh", w_std=1.0)
    with pytest.raises(ValueError, match="rho"):
        cr.correlation_map(np.array([0.5, -1.2]), 1.0, "tanh", w_std=1.0)


# --------------------------------------------------------------------------------------
# The slope of the correlation map and the depth scales


@pytest.mark.parametrize("c_w", [1.0, 3.0])
def test_correlation_slope_is_the_derivative_of_the_map(c_w):
    k_star = float(cr.fixed_point("tanh", w_std=c_w**0.5, b_std=0.05**0.5, iterations=4000))
    rho = np.array([0.2, 0.5, 0.9])
    h = 1e-5
    opts = dict(w_std=c_w**0.5, b_std=0.05**0.5, nodes=120)  # 120^2 nodes: the two quadratures agree to ~1e-10
    up = np.asarray(cr.correlation_map(rho + h, k_star, "tanh", **opts))
    down = np.asarray(cr.correlation_map(rho - h, k_star, "tanh", **opts))
    slope = np.asarray(cr.correlation_slope(rho, k_star, "tanh", **opts))
    # central difference: error O(h^2) ~ 1e-10 plus rounding 1e-16 / h ~ 1e-11
    assert np.allclose(slope, (up - down) / (2 * h), rtol=1e-7)
    # at rho = 1 and the fixed point the slope is chi_perp
    assert float(cr.correlation_slope(1.0, k_star, "tanh", w_std=c_w**0.5, b_std=0.05**0.5)) == pytest.approx(
        float(cr.chi_perp(k_star, "tanh", w_std=c_w**0.5)), rel=1e-6)


def test_chaotic_correlations_converge_at_the_slope_at_rho_star():
    # tanh, C_b = 0.05, C_w = 3 is chaotic: rho_l -> rho* < 1 geometrically, at rate c'(rho*) (not chi_perp > 1)
    k_star = float(cr.fixed_point("tanh", w_std=3.0**0.5, b_std=0.05**0.5, iterations=4000))
    k11, k12, _ = cr.kernel_trajectory(k_star, 0.2 * k_star, k_star, 400, "tanh", w_std=3.0**0.5, b_std=0.05**0.5)
    rho = np.asarray(k12) / np.asarray(k11)
    rho_star = rho[-1]
    gap = np.abs(rho - rho_star)
    l = int(np.argmax(gap < 1e-6))  # far above rounding, close enough for the linearization
    measured = gap[l + 1] / gap[l]
    slope = float(cr.correlation_slope(rho_star, k_star, "tanh", w_std=3.0**0.5, b_std=0.05**0.5))
    assert slope < 1 < float(cr.chi_perp(k_star, "tanh", w_std=3.0**0.5))
    assert measured == pytest.approx(slope, rel=1e-4)


def test_correlation_slope_validates():
    with pytest.raises(ValueError, match="rho"):
        cr.correlation_slope(1.5, 1.0, "tanh", w_std=1.0)
    with pytest.raises(ValueError, match="variance"):
        cr.correlation_slope(0.5, -1.0, "tanh", w_std=1.0)


# --------------------------------------------------------------------------------------
# Samplers of finite networks


def test_layer_mean_squares_matches_an_explicit_forward_pass():
    key, n0, width, depth, count = jax.random.key(3), 5, 7, 4, 3
    z_sq, phi_sq = cr.layer_mean_squares(key, n0=n0, width=width, depth=depth, count=count,
                                         v_first=1.7, v_hidden=2.3)
    draws = np.asarray(sampling.standard_normal(key, (count, width * n0 + (depth - 1) * width**2), jnp.float64))
    for i in range(count):
        w1 = draws[i, : width * n0].reshape(width, n0)
        ws = draws[i, width * n0:].reshape(depth - 1, width, width)
        z = np.sqrt(1.7 / n0) * w1 @ np.ones(n0)
        want_z, want_phi = [np.mean(z**2)], [np.mean(np.maximum(z, 0) ** 2)]
        for w in ws:
            z = np.sqrt(2.3 / width) * w @ np.maximum(z, 0)
            want_z.append(np.mean(z**2))
            want_phi.append(np.mean(np.maximum(z, 0) ** 2))
        assert np.allclose(z_sq[i], want_z, rtol=1e-12) and np.allclose(phi_sq[i], want_phi, rtol=1e-12)


def test_layer_mean_squares_conditional_mean():
    # E[(1/n)||z^(l+1)||^2 | layer l] = v (1/n)||relu(z^(l))||^2: the residual has mean 0
    z_sq, phi_sq = (np.asarray(a) for a in cr.layer_mean_squares(
        jax.random.key(4), n0=3, width=16, depth=3, count=4000, v_first=2.0, v_hidden=2.0))
    resid = (z_sq[:, 1:] - 2.0 * phi_sq[:, :-1]) / z_sq[:, :-1]  # scale-free, mean 0 given layer l
    mean, se = resid.mean(axis=0), resid.std(axis=0, ddof=1) / np.sqrt(len(resid))
    assert np.all(np.abs(mean) < 5 * se), (mean, se)
    with pytest.raises(TypeError, match="width"):
        cr.layer_mean_squares(jax.random.key(0), n0=3, width=2.5, depth=3, count=2, v_first=1.0, v_hidden=1.0)


def test_sample_network_kernels_is_unbiased_at_layer_two():
    # Layer 1 is exactly Gaussian with covariance K^(1), so E[K_hat^(2)] = K^(2) at any width.
    x = np.array([[1.0, 0.0], [0.6, 0.8]]) * np.sqrt(2.0)
    zz, k_hat = (np.asarray(a) for a in cr.sample_network_kernels(
        jax.random.key(5), x, 6, depth=2, count=20_000, max_width=8, w_std=2.0**0.5, b_std=0.1**0.5))
    assert zz.shape == k_hat.shape == (20_000, 2, 2, 2)
    k1 = 0.1 + 2.0 * x @ x.T / 2
    k2 = np.array(cr.covariance_map(k1[0, 0], k1[0, 1], k1[1, 1], "relu", w_std=2.0**0.5, b_std=0.1**0.5))
    est = k_hat[:, 0]
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(len(est))
    assert np.all(np.abs(mean[[0, 0, 1], [0, 1, 1]] - k2) < 5 * se[[0, 0, 1], [0, 1, 1]])
    # the layer average of layer 2 has the same mean (given layer 1 its mean is K_hat^(2))
    assert np.all(np.abs(zz[:, 1].mean(axis=0) - mean) < 5 * zz[:, 1].std(axis=0) / np.sqrt(len(zz)))
    with pytest.raises(ValueError, match="max_width"):
        cr.sample_network_kernels(jax.random.key(0), x, 9, depth=1, count=2, max_width=8)


# --------------------------------------------------------------------------------------
# He-ReLU output law at one input


@pytest.mark.parametrize("n", [1, 4, 30])
def test_relu_layer_factor_moments(n):
    m = cr.relu_layer_factor_moments(n, orders=2)
    assert m[0] == pytest.approx(1.0, rel=1e-13) and m[1] == pytest.approx(1 + 5 / n, rel=1e-13)
    assert cr.relu_output_excess_kurtosis(n, 3) == pytest.approx(3 * ((1 + 5 / n) ** 3 - 1))


def test_relu_output_mixture_moments():
    f, k = cr.relu_output_mixture(jax.random.key(6), 10, depth=2, count=200_000, k1=1.5)
    m1, m2 = cr.relu_layer_factor_moments(10, orders=2)
    for got, want in [(k, 1.5 * m1**2), (k**2, 1.5**2 * m2**2), (f**2, 1.5 * m1**2)]:
        assert abs(got.mean() - want) < 5 * got.std() / np.sqrt(got.size), (got.mean(), want)
    with pytest.raises(ValueError, match="k1"):
        cr.relu_output_mixture(jax.random.key(0), 3, k1=0.0)


def test_relu_output_mixture_has_the_law_of_the_network():
    # the chi^2-with-binomial-dof shortcut against the general exact sampler, width 10, 3 layers
    k_general = np.asarray(cr.sample_network_kernels(
        jax.random.key(42), np.ones((1, 1)), 10, depth=3, count=20_000)[1])[:, -1].ravel()
    k_short = cr.relu_output_mixture(jax.random.key(43), 10, depth=3, count=20_000, k1=2.0)[1]
    for power in (1, 2):
        a, b = k_general**power, k_short**power
        se = np.sqrt(a.var() / a.size + b.var() / b.size)
        assert abs(a.mean() - b.mean()) < 4 * se, (power, a.mean(), b.mean())


def test_deep_linear_output_kurtosis():
    # Chapter 1's exercise: K_hat^(L+1) = C_w K^(1) prod_l chi^2_n / n, so its relative second
    # moment is (1 + 2/n)^L; 20 000 linear networks of width 4 and depth 3 (exact: 1.5^3)
    z_sq, _ = cr.layer_mean_squares(jax.random.key(13), n0=2, width=4, depth=3, count=20_000,
                                    v_first=1.0, v_hidden=1.0, activation="identity")
    k = np.asarray(z_sq)[:, -1]
    ratio = np.mean(k**2) / np.mean(k) ** 2
    # delta-method scale: the ratio's SE is ~ sqrt(E k^4 / E[k]^4 / N) ~ 0.1 here
    assert abs(ratio - 1.5**3) < 5 * np.sqrt(np.mean(k**4) / np.mean(k) ** 4 / k.size), ratio


def test_stds_are_required():
    # the maps take the stds sigma_w, sigma_b; there is no default w_std and no variance keyword
    k = np.array([0.3, 1.0])
    with pytest.raises(TypeError, match="w_std is required"):
        cr.chi_perp(k, "tanh")
    with pytest.raises(TypeError, match="w_std is required"):
        cr.variance_map(k, "tanh", b_std=0.1)
    with pytest.raises(TypeError, match="b_std is required"):
        cr.critical_weight_variance("erf")
    with pytest.raises(TypeError, match="c_w"):
        cr.variance_map(k, "tanh", c_w=1.3)
