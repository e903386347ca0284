"""lecturekit.gaussian: the quadrature rule, one-dimensional expectations, dual activations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate
from test_kernels import _adaptive_dual, _np_activation, _relu_reference

from lecturekit import activations, gaussian

jax.config.update("jax_enable_x64", True)


def test_rule_is_exact_for_polynomials_and_cached():
    z, w = gaussian.gauss_hermite_rule(20)
    assert z.shape == w.shape == (20,) and abs(float(w.sum()) - 1) < 1e-14
    assert gaussian.gauss_hermite_rule(20)[0] is z  # computed once
    k = jnp.array([0.1, 1.0, 3.0])
    assert np.allclose(gaussian.expectation(lambda u: u**2, k), k, rtol=1e-13)
    assert np.allclose(gaussian.expectation(lambda u: u**4, k), 3 * k**2, rtol=1e-13)
    # 4 nodes: exact up to degree 7
    assert np.allclose(gaussian.expectation(lambda u: u**6, k, nodes=4), 15 * k**3, rtol=1e-12)
    with pytest.raises(ValueError, match="nodes"):
        gaussian.gauss_hermite_rule(0)
    with pytest.raises(TypeError, match="fn"):
        gaussian.expectation(3.0, 1.0)
    with pytest.raises(ValueError, match="variance"):
        gaussian.expectation(jnp.tanh, -1.0)


COVARIANCES = [(1.0, 0.3, 2.0), (2.5, -1.0, 0.8), (0.5, 0.49, 0.5), (1.2, 0.0, 0.7)]


@pytest.mark.parametrize("name", ["relu", "erf", "tanh"])
@pytest.mark.parametrize("cov", COVARIANCES)
def test_dual_expectations_match_adaptive_quadrature(name, cov):
    phi, dphi = _np_activation(name)
    e, de = gaussian.dual_expectations(name, *cov)
    tol = 1e-8 if name != "tanh" else 5e-8  # tanh goes through 128^2-point Gauss-Hermite
    ref = _relu_reference(*cov) if name == "relu" else _adaptive_dual(phi, phi, *cov)
    assert abs(float(e) - ref) < tol, (float(e), ref)
    if name == "relu":  # step function: the kink sits on a line that is not z1 = 0; integrate exactly
        rho = cov[1] / np.sqrt(cov[0] * cov[2])
        assert abs(float(de) - (np.pi - np.arccos(rho)) / (2 * np.pi)) < 1e-14
    else:
        assert abs(float(de) - _adaptive_dual(dphi, dphi, *cov)) < tol


def test_relu_step_kernel_by_monte_carlo():
    # E[1{u>0} 1{v>0}] = 1/2 - arccos(rho)/(2 pi): 2e6 samples, standard error < 3.6e-4.
    z = jax.random.normal(jax.random.key(1), (2_000_000, 2))
    for rho in (-0.5, 0.3, 0.9):
        u, v = z[:, 0], rho * z[:, 0] + np.sqrt(1 - rho**2) * z[:, 1]
        mc = float(jnp.mean((u > 0) & (v > 0)))
        de = gaussian.dual_expectations("relu", 1.0, rho, 1.0).dphi
        assert abs(mc - (0.5 - np.arccos(rho) / (2 * np.pi))) < 2e-3, (rho, mc)
        assert abs(float(de) - (0.5 - np.arccos(rho) / (2 * np.pi))) < 1e-14


@pytest.mark.parametrize("name", ["relu", "erf", "identity", "tanh", "softplus", "swish"])
def test_diagonal_is_the_pair_at_equal_inputs(name):
    # the one-dimensional rule (or closed form) on the diagonal against the pair at k11 = k12 = k22
    k = jnp.array([0.0, 0.3, 1.0, 2.5])
    dual = gaussian.dual_fn(name)
    diag, pair = dual.diagonal(k), dual(k, k, k)
    # The 128-node 1-D rule on the diagonal is less accurate than the 128^2 tensor rule for
    # tanh at K = 2.5 (poles at +-i pi/2): errors against adaptive quadrature 1.2e-8 (phi^2)
    # and 3.8e-7 (phi'^2), against 2e-12 and 1e-10 for the tensor rule; 1e-11 at K = 1.
    np.testing.assert_allclose(diag.phi, pair.phi, rtol=3e-8, atol=1e-15)
    np.testing.assert_allclose(diag.dphi[1:], pair.dphi[1:], rtol=3e-6)
    if name in ("erf", "tanh", "softplus"):  # smooth: adaptive 1-D quadrature as the reference
        act = activations.get(name)
        for kk, e in zip(np.asarray(k[1:]), np.asarray(diag.phi[1:])):
            ref = integrate.quad(lambda u: float(act.fn(np.sqrt(kk) * u)) ** 2 * np.exp(-u * u / 2)
                                 / np.sqrt(2 * np.pi), -14, 14, epsabs=1e-14)[0]
            assert abs(e - ref) < 3e-8, (kk, e - ref)


def test_closed_forms_equal_the_quadrature_rule():
    a, b = jnp.array([0.5, 1.0, 2.0]), jnp.array([1.5, 1.0, 0.3])
    c = jnp.array([0.3, -0.9, 0.7]) * jnp.sqrt(a * b)
    for name in ("erf", "identity"):
        exact = gaussian.dual_fn(name)(a, c, b)
        quad = gaussian.dual_fn(name, quadrature=True, nodes=64)(a, c, b)
        assert gaussian.dual_fn(name, quadrature=True).quadrature and not gaussian.dual_fn(name).quadrature
        np.testing.assert_allclose(quad.phi, exact.phi, atol=1e-10)
        np.testing.assert_allclose(quad.dphi, exact.dphi, atol=1e-8)


def test_dual_activation_is_a_static_jit_argument():
    # hashable and equal by value: jit caches one program per (activation, quadrature, nodes)
    assert gaussian.dual_fn("tanh") == gaussian.dual_fn("tanh", nodes=128)
    assert hash(gaussian.dual_fn("tanh")) == hash(gaussian.dual_fn("tanh"))
    f = jax.jit(lambda k, dual: dual.diagonal(k).phi, static_argnums=1)
    assert float(f(1.0, gaussian.dual_fn("relu"))) == 0.5
    out = jax.vmap(gaussian.dual_fn("tanh", nodes=16))(jnp.ones(3), jnp.zeros(3), jnp.ones(3))
    assert isinstance(out, gaussian.Duals) and out.phi.shape == (3,)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(k11=-1.0, k12=0.0, k22=1.0), ValueError, "k11 .*must be >= 0"),
        (dict(k11=1.0, k12=2.0, k22=1.0), ValueError, "covariance"),
        (dict(k11=np.nan, k12=0.0, k22=1.0), ValueError, "k11 must be finite"),
        (dict(k11="a", k12=0.0, k22=1.0), TypeError, "k11"),
        (dict(k11=1.0, k12=0.0, k22=1.0, nodes=1), ValueError, "nodes"),
        (dict(k11=1.0, k12=0.0, k22=1.0, quadrature="yes"), TypeError, "quadrature"),
    ],
)
def test_dual_expectations_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gaussian.dual_expectations("relu", **kwargs)
