"""Tests of lecturekit.criticality: quadrature, variance/correlation maps, susceptibilities."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from lecturekit import criticality as cr
from lecturekit import kernels

jax.config.update("jax_enable_x64", True)


def test_quadrature_is_exact_for_polynomials():
    k = jnp.array([0.1, 1.0, 3.0])
    assert np.allclose(cr.gaussian_expectation(lambda z: z**2, k), k, rtol=1e-13)
    assert np.allclose(cr.gaussian_expectation(lambda z: z**4, k), 3 * k**2, rtol=1e-13)
    assert np.allclose(cr.gaussian_expectation(lambda z: z**6, k, nodes=4), 15 * k**3, rtol=1e-12)
    z, w = cr.gauss_hermite(20)
    assert z.shape == w.shape == (20,) and abs(float(w.sum()) - 1) < 1e-14


@settings(max_examples=25, deadline=None)
@given(k=st.floats(0.0, 10.0), c_w=st.floats(0.0, 5.0), c_b=st.floats(0.0, 2.0))
def test_relu_variance_map_is_linear(k, c_w, c_b):
    # E_K[relu(z)^2] = K / 2 exactly.
    got = float(cr.variance_map(k, "relu", c_w=c_w, c_b=c_b))
    assert got == pytest.approx(c_b + c_w * k / 2, rel=1e-6, abs=1e-9)


def test_identity_and_relu_susceptibilities():
    k = jnp.array([0.2, 1.0, 5.0])
    assert np.allclose(cr.chi_parallel(k, "identity", c_w=1.7), 1.7)
    assert np.allclose(cr.chi_perp(k, "identity", c_w=1.7), 1.7)
    # ReLU: chi_par = chi_perp = C_w / 2 (up to quadrature error of the kink, ~1e-3 at 128 nodes).
    assert np.allclose(cr.chi_perp(k, "relu", c_w=2.0), 1.0, atol=2e-2)
    assert np.allclose(cr.chi_parallel(k, "relu", c_w=2.0), 1.0, atol=2e-2)


@pytest.mark.parametrize("name", ["tanh", "erf", "softplus", "sin"])
def test_chi_parallel_is_the_slope_of_the_variance_map(name):
    k = jnp.array([0.05, 0.4, 2.0])
    act = cr._act.get(name)
    slope = jax.vmap(jax.grad(lambda v: cr._variance_map(v, act, 1.3, 0.2, 128)))(k)
    # two quadratures of the same integral (phi'^2 + phi phi'' vs the derivative of the rule for
    # phi^2): they differ by the Gauss-Hermite error, ~1e-6 for tanh (poles at +-i pi/2)
    assert np.allclose(cr.chi_parallel(k, name, c_w=1.3), slope, rtol=1e-5)


def test_erf_chi_perp_closed_form():
    k = jnp.linspace(0.0, 4.0, 9)
    # E_K[erf'(z)^2] = (4/pi) E[exp(-2 z^2)] = (4/pi) / sqrt(1 + 4K)
    # rtol 1e-6: activations.erf's derivative uses a float32 constant 2/sqrt(pi) (rel. error ~3e-8)
    assert np.allclose(cr.chi_perp(k, "erf", c_w=2.0), 2.0 * 4 / np.pi / np.sqrt(1 + 4 * k), rtol=1e-6)


def test_covariance_map_matches_kernels_module():
    a, b = jnp.array([0.5, 1.0, 2.0]), jnp.array([1.5, 1.0, 0.3])
    c = jnp.array([0.3, -0.9, 0.7]) * jnp.sqrt(a * b)
    for name in ["tanh", "relu", "erf"]:
        k11, k12, k22 = cr.covariance_map(a, c, b, name, c_w=1.4, c_b=0.1, nodes=kernels.QUADRATURE_NODES)
        e12, _ = kernels.dual_expectations(name, a, c, b, quadrature=(name == "tanh"))
        e11, _ = kernels.dual_expectations(name, a, a, a, quadrature=(name == "tanh"))
        # same Gauss-Hermite rule as kernels for tanh: agreement to rounding
        assert np.allclose(k12, 0.1 + 1.4 * e12, rtol=1e-10), name
        assert np.allclose(k11, 0.1 + 1.4 * e11, rtol=1e-10), name
    # the tensor quadrature itself against the erf closed form
    act = cr._act.get("erf")
    quad = cr._pair_expectation(cr._act.Activation("erf2", act.fn, act.grad, act.hess), a, c, b, 60)
    assert np.allclose(quad, kernels.dual_expectations("erf", a, c, b)[0], atol=1e-10)


@pytest.mark.parametrize("name, c_w, c_b", [("tanh", 1.5, 0.1), ("tanh", 0.8, 0.05), ("erf", 2.0, 0.2)])
def test_correlation_map_at_fixed_point(name, c_w, c_b):
    k_star = float(cr.fixed_point(name, c_w=c_w, c_b=c_b))
    assert float(cr.variance_map(k_star, name, c_w=c_w, c_b=c_b)) == pytest.approx(k_star, rel=1e-10)
    assert float(cr.correlation_map(1.0, k_star, name, c_w=c_w, c_b=c_b)) == pytest.approx(1.0, abs=1e-12)
    # slope at rho = 1 is chi_perp (one-sided finite difference, error O(h^(1/2)) is avoided
    # by a second-order fit through three points)
    h = np.array([1e-4, 2e-4])
    vals = np.asarray(cr.correlation_map(1.0 - h, k_star, name, c_w=c_w, c_b=c_b, nodes=80))
    slopes = (1.0 - vals) / h
    richardson = 2 * slopes[0] - slopes[1]
    assert richardson == pytest.approx(float(cr.chi_perp(k_star, name, c_w=c_w)), rel=2e-3)


def test_tanh_critical_power_law():
    # Catalogue: 2 l K_l = 1.0440 (l=10), 1.0023 (1e3), 1.0003 (1e4) with K_0 = 1, 200 nodes.
    ks = np.asarray(cr.variance_trajectory(1.0, 10_000, "tanh", c_w=1.0, c_b=0.0, nodes=200))
    assert 2 * 10 * ks[10] == pytest.approx(1.0440, abs=1e-4)
    assert 2 * 1000 * ks[1000] == pytest.approx(1.0023, abs=1e-4)
    assert 2 * 10_000 * ks[10_000] == pytest.approx(1.0003, abs=1e-4)


def test_trajectory_broadcasts_over_a_grid():
    cw = jnp.array([[0.5, 1.0], [1.5, 2.0]])
    ks = cr.variance_trajectory(1.0, 5, "tanh", c_w=cw, c_b=0.1)
    assert ks.shape == (6, 2, 2)
    one = cr.variance_trajectory(1.0, 5, "tanh", c_w=1.5, c_b=0.1)
    assert np.allclose(ks[:, 1, 0], one)
    k11, k12, k22 = cr.kernel_trajectory(1.0, 0.5, 2.0, 4, "relu", c_w=2.0)
    assert k11.shape == (5,) and np.allclose(k11, 1.0) and np.allclose(k22, 2.0)


def _erf_critical_independent(c_b):
    # On chi_perp = 1: C_w = (pi/4) sqrt(1 + 4K); the fixed point equation then gives
    # c_b = K - (sqrt(1+4K)/2) arcsin(2K/(1+2K)); solve for K, return C_w.
    g = lambda k: k - 0.5 * np.sqrt(1 + 4 * k) * np.arcsin(2 * k / (1 + 2 * k)) - c_b  # noqa: E731
    k = scipy.optimize.brentq(g, 1e-12, 50.0, xtol=1e-14)
    return np.pi / 4 * np.sqrt(1 + 4 * k)


@pytest.mark.parametrize("c_b", [0.05, 0.3])
def test_critical_line_erf(c_b):
    assert cr.critical_weight_variance("erf", c_b=c_b) == pytest.approx(_erf_critical_independent(c_b), rel=1e-6)


def test_bad_inputs():
    with pytest.raises(ValueError, match="variance"):
        cr.variance_map(-1.0, "tanh", c_w=1.0)
    with pytest.raises(ValueError, match="unknown activation"):
        cr.chi_perp(1.0, "tanhh", c_w=1.0)
    with pytest.raises(ValueError, match="c_w"):
        cr.variance_map(1.0, "tanh", c_w=-1.0)
    with pytest.raises(TypeError, match="depth"):
        cr.variance_trajectory(1.0, 2.5, "tanh", c_w=1.0)
    with pytest.raises(ValueError, match="rho"):
        cr.correlation_map(1.5, 1.0, "tanh", c_w=1.0)
    with pytest.raises(ValueError, match="k12"):
        cr.covariance_map(1.0, 2.0, 1.0, "tanh", c_w=1.0)
    with pytest.raises(ValueError, match="bracket"):
        cr.critical_weight_variance("erf", c_b=0.05, bracket=(2.0, 3.0))
    with pytest.raises(TypeError, match="fn"):
        cr.gaussian_expectation(3.0, 1.0)


def test_public_maps_trace_under_jit_and_agree_with_eager_calls():
    # validation inspects only concrete values, so the public functions compose with jit and grad
    k = np.array([0.2, 1.0, 2.5])
    traced = jax.jit(lambda v: cr.variance_map(v, "tanh", c_w=1.3, c_b=0.1))(k)
    assert np.allclose(traced, cr.variance_map(k, "tanh", c_w=1.3, c_b=0.1), rtol=1e-13, atol=0)
    slope = jax.jit(jax.vmap(jax.grad(lambda v: cr.variance_map(v, "tanh", c_w=1.3, c_b=0.1))))(k)
    assert np.allclose(slope, cr.chi_parallel(k, "tanh", c_w=1.3), rtol=1e-4)
    rho = jax.jit(lambda r: cr.correlation_map(r, 0.8, "tanh", c_w=1.5, c_b=0.1))(np.array([0.0, 0.5, 1.0]))
    assert np.allclose(rho, cr.correlation_map(np.array([0.0, 0.5, 1.0]), 0.8, "tanh", c_w=1.5, c_b=0.1), rtol=1e-13)
    # repeated calls with one shape reuse one compiled map and give identical results
    a = cr.covariance_map(k, 0.5 * k, k, "tanh", c_w=1.3, c_b=0.1)
    b = cr.covariance_map(k, 0.5 * k, k, "tanh", c_w=1.3, c_b=0.1)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_bad_covariances_and_negative_arrays():
    with pytest.raises(ValueError, match="k12"):
        cr.kernel_trajectory(1.0, np.array([0.5, 1.5]), 1.0, 3, "relu", c_w=2.0)
    with pytest.raises(ValueError, match="k11"):
        cr.covariance_map(np.array([1.0, -0.5]), 0.0, 1.0, "tanh", c_w=1.0)
    with pytest.raises(ValueError, match="rho"):
        cr.correlation_map(np.array([0.5, -1.2]), 1.0, "tanh", c_w=1.0)
