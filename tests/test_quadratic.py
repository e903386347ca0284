"""Tests of lecturekit.quadratic: Taylor models and the perturbative minimizer.

Parameters and data are drawn with NumPy (``default_rng``) and models are evaluated under
``jax.jit``: JAX compiles its random generator and every eager operation once per shape,
which would dominate the run time of these small tests.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import nets, quadratic as Q

jax.config.update("jax_enable_x64", True)


def _params(net, seed):
    """N(0, 1) parameters of an NTK-parameterized ``net`` (the distribution of net.init), from NumPy."""
    rng = np.random.default_rng(seed)
    return [{"W": rng.normal(size=(n_in, n_out)), "b": rng.normal(size=n_out)}
            for n_in, n_out in zip(net.widths[:-1], net.widths[1:])]


def _tanh_net():
    net = nets.mlp((2, 4, 3, 1), "tanh", b_std=0.3)  # two hidden layers, biases: 31 parameters
    return net, _params(net, 0)


def _perturb(params, seed, scale):
    rng = np.random.default_rng(seed)
    return jax.tree_util.tree_map(lambda p: p + scale * rng.normal(size=p.shape), params)


def test_quadratic_model_equals_dense_taylor_expansion():
    net, p0 = _tanh_net()
    x = np.random.default_rng(1).normal(size=(4, 2))
    p = _perturb(p0, 2, 0.3)
    fq = Q.quadratic_model(net.apply, p0)
    flat0, unravel = jax.flatten_util.ravel_pytree(p0)
    delta = jax.flatten_util.ravel_pytree(p)[0] - flat0

    @jax.jit
    def dense_taylor(flat0, delta):  # the Jacobian and the Hessian formed explicitly
        g = lambda w: net.apply(unravel(w), x)
        hess = jax.hessian(g)(flat0)
        return g(flat0) + jax.jacfwd(g)(flat0) @ delta + 0.5 * jnp.einsum("i,nij,j->n", delta, hess, delta)

    np.testing.assert_allclose(jax.jit(fq)(p, x), dense_taylor(flat0, delta), rtol=1e-10, atol=1e-12)


def test_quadratic_model_error_is_third_order():
    net, p0 = _tanh_net()
    x = np.random.default_rng(3).normal(size=(2, 2))
    fq = Q.quadratic_model(net.apply, p0)
    direction = _perturb(jax.tree_util.tree_map(np.zeros_like, p0), 4, 1.0)

    @jax.jit
    def error(s):
        p = jax.tree_util.tree_map(lambda a, b: a + s * b, p0, direction)
        return jnp.max(jnp.abs(fq(p, x) - net.apply(p, x)))

    errs = [float(error(s)) for s in (1e-1, 5e-2, 2.5e-2)]
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 6.0) & (ratios < 10.0)), ratios  # halving the step divides by ~8


def test_quadratic_model_of_relu_is_frozen_bilinear_model():
    d, m = 4, 50
    net = nets.mlp((d, m, 1), "relu", w_std=1.0)
    p0 = _params(net, 5)
    x = np.random.default_rng(6).normal(size=(3, d))
    p = _perturb(p0, 7, 2.0)  # large move: the model is exact, not approximate
    s = (x @ p0[0]["W"] > 0)
    bilinear = np.einsum("ni,ni,i->n", s, x @ p[0]["W"], p[1]["W"][:, 0]) / np.sqrt(m * d)
    np.testing.assert_allclose(jax.jit(Q.quadratic_model(net.apply, p0))(p, x), bilinear, rtol=1e-10, atol=1e-12)


def test_perturbative_minimizer_has_second_order_residual():
    rng = np.random.default_rng(10)
    p, n = 8, 3
    phi = rng.normal(size=(p, n))
    a = rng.normal(size=(n, p, p))
    psi = (a + a.transpose(0, 2, 1)) / 2
    y = rng.normal(size=n)
    sol = Q.perturbative_minimizer(phi, psi, y)
    res = []
    for eps in (1e-2, 5e-3):
        th = np.asarray(sol.theta_f) + eps * np.asarray(sol.theta_i)
        z = phi.T @ th + 0.5 * eps * np.einsum("i,aij,j->a", th, psi, th)
        res.append(float(np.max(np.abs(z - y))))
    assert 3.5 < res[0] / res[1] < 4.5, res




def test_taylor_terms_sum_to_the_model():
    net, p0 = _tanh_net()
    x = np.random.default_rng(12).normal(size=(3, 2))
    p = _perturb(p0, 13, 0.2)
    value, slope, curvature = Q.taylor_terms(net.apply, p0, p, x)
    np.testing.assert_allclose(value, net.apply(p0, x), rtol=1e-12)
    np.testing.assert_allclose(value + slope + 0.5 * curvature, Q.quadratic_model(net.apply, p0)(p, x), rtol=1e-12)


def test_bad_inputs():
    net, p0 = _tanh_net()
    with pytest.raises(TypeError, match="f must be a function"):
        Q.quadratic_model(3, p0)
    with pytest.raises(ValueError, match="psi must have shape"):
        Q.perturbative_minimizer(jnp.ones((4, 2)), jnp.ones((2, 3, 3)), jnp.ones(2))
    with pytest.raises(ValueError, match="p >= n"):
        Q.perturbative_minimizer(jnp.ones((1, 2)), jnp.ones((2, 1, 1)), jnp.ones(2))
