"""Tests of lecturekit.quadratic: Taylor models, the catapult recursion, GD helpers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import nets, quadratic as Q, tangent

jax.config.update("jax_enable_x64", True)


def _tanh_net():
    net = nets.mlp((3, 7, 5, 1), "tanh", b_std=0.3)
    return net, net.init(jax.random.key(0))


def _perturb(params, key, scale):
    leaves, tree = jax.tree_util.tree_flatten(params)
    keys = jax.random.split(key, len(leaves))
    return jax.tree_util.tree_unflatten(
        tree, [p + scale * jax.random.normal(k, p.shape) for p, k in zip(leaves, keys)]
    )


def test_quadratic_model_equals_dense_taylor_expansion():
    net, p0 = _tanh_net()
    x = jax.random.normal(jax.random.key(1), (4, 3))
    p = _perturb(p0, jax.random.key(2), 0.3)
    fq = Q.quadratic_model(net.apply, p0)
    flat0, unravel = jax.flatten_util.ravel_pytree(p0)
    delta = jax.flatten_util.ravel_pytree(p)[0] - flat0
    g = lambda w: net.apply(unravel(w), x)
    expected = g(flat0) + jax.jit(jax.jacfwd(g))(flat0) @ delta + 0.5 * jnp.einsum(
        "i,nij,j->n", delta, jax.jit(jax.hessian(g))(flat0), delta
    )
    np.testing.assert_allclose(fq(p, x), expected, rtol=1e-10, atol=1e-12)


def test_quadratic_model_error_is_third_order():
    net, p0 = _tanh_net()
    x = jax.random.normal(jax.random.key(3), (2, 3))
    fq = Q.quadratic_model(net.apply, p0)
    errs = []
    for s in (1e-1, 5e-2, 2.5e-2):
        p = _perturb(p0, jax.random.key(4), s)
        errs.append(float(jnp.max(jnp.abs(fq(p, x) - net.apply(p, x)))))
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 6.0) & (ratios < 10.0)), ratios  # halving the step divides by ~8


def test_quadratic_model_of_relu_is_frozen_bilinear_model():
    d, m = 4, 50
    net = nets.mlp((d, m, 1), "relu", w_std=1.0)
    p0 = net.init(jax.random.key(5))
    x = jax.random.normal(jax.random.key(6), (3, d))
    p = _perturb(p0, jax.random.key(7), 2.0)  # large move: the model is exact, not approximate
    s = (x @ p0[0]["W"] > 0)
    bilinear = jnp.einsum("ni,ni,i->n", s, x @ p[0]["W"], p[1]["W"][:, 0]) / jnp.sqrt(m * d)
    np.testing.assert_allclose(Q.quadratic_model(net.apply, p0)(p, x), bilinear, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("eta_lam", [1.5, 3.0, 4.5])
def test_recursion_equals_gradient_descent_on_the_quadratic_model(eta_lam):
    d, m, y = 5, 300, 0.7
    net = nets.mlp((d, m, 1), "relu", w_std=1.0, out_w_std=1.3)
    p0 = net.init(jax.random.key(8))
    x = jax.random.normal(jax.random.key(9), (d,))
    cc = Q.catapult_constants(net, p0, x, y)
    assert cc.lam0 == pytest.approx(float(tangent.empirical_ntk(net.apply, p0, x[None])[0, 0]), rel=1e-12)
    eta = eta_lam / cc.lam0
    steps = 8  # at eta*lambda0 = 4.5 the residual passes 1e100 (the guard) after ~10 steps
    rs, lams = Q.catapult_recursion(cc.r0, cc.lam0, cc.c, y, eta, steps)
    _, losses, lam_gd = Q.gd_one_point(net.apply, p0, x[None], jnp.array([y]), eta, steps, quadratic=True)
    np.testing.assert_allclose(0.5 * rs[:steps] ** 2, losses, rtol=1e-8)
    np.testing.assert_allclose(lams[:steps], lam_gd, rtol=1e-8)


def test_recursion_regimes_and_divergence_guard():
    r0, lam0, c, y = 0.3, 1.0, 1e-4, 1.0
    out = {}
    for el in (1.5, 3.0, 5.0):
        rs, lams = Q.catapult_recursion(r0, lam0, c, y, el / lam0, 500)
        out[el] = Q.classify_regime(0.5 * np.asarray(rs) ** 2, lams)
        assert np.all(np.isfinite(np.asarray(rs)))
    assert out == {1.5: "linear", 3.0: "catapult", 5.0: "divergent"}, out


def test_perturbative_minimizer_has_second_order_residual():
    key = jax.random.key(10)
    k1, k2, k3 = jax.random.split(key, 3)
    p, n = 8, 3
    phi = jax.random.normal(k1, (p, n))
    a = jax.random.normal(k2, (n, p, p))
    psi = (a + a.transpose(0, 2, 1)) / 2
    y = jax.random.normal(k3, (n,))
    sol = Q.perturbative_minimizer(phi, psi, y)
    res = []
    for eps in (1e-2, 5e-3):
        th = sol.theta_f + eps * sol.theta_i
        z = phi.T @ th + 0.5 * eps * jnp.einsum("i,aij,j->a", th, psi, th)
        res.append(float(jnp.max(jnp.abs(z - y))))
    assert 3.5 < res[0] / res[1] < 4.5, res


def test_top_hessian_eigenvalue_matches_dense():
    net, p0 = _tanh_net()
    x = jax.random.normal(jax.random.key(11), (6, 3))
    y = jnp.sin(x[:, 0])
    loss = lambda p: 0.5 * jnp.mean((net.apply(p, x) - y) ** 2)
    flat, unravel = jax.flatten_util.ravel_pytree(p0)
    dense = np.linalg.eigvalsh(np.asarray(jax.jit(jax.hessian(lambda w: loss(unravel(w))))(flat)))[-1]
    est = float(Q.top_hessian_eigenvalue(loss, p0, jax.random.key(12), num_iter=40))
    assert est == pytest.approx(dense, rel=1e-8)


def test_classify_regime_cases():
    assert Q.classify_regime([1.0, 0.5, 1e-12]) == "linear"
    assert Q.classify_regime([1.0, 5.0, 1e-12]) == "catapult"
    assert Q.classify_regime([1.0, 5.0, np.inf]) == "divergent"
    assert Q.classify_regime([1.0, 5.0, 0.5], [1.0, 0.5, 0.0]) == "dead"
    assert Q.classify_regime([1.0, 0.9, 0.8], [1.0, 1.0, 1.0]) == "undecided"


def test_bad_inputs():
    net, p0 = _tanh_net()
    with pytest.raises(TypeError, match="f must be a function"):
        Q.quadratic_model(3, p0)
    with pytest.raises(ValueError, match="one-hidden-layer ReLU"):
        Q.catapult_constants(net, p0, jnp.ones(3), 1.0)
    relu = nets.mlp((3, 4, 1), "relu")
    with pytest.raises(ValueError, match="x must have shape"):
        Q.catapult_constants(relu, relu.init(jax.random.key(0)), jnp.ones(4), 1.0)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        Q.catapult_recursion(0.1, 1.0, 0.01, 1.0, 1.0, 0)
    with pytest.raises(ValueError, match="scalar"):
        Q.catapult_recursion(jnp.ones(2), 1.0, 0.01, 1.0, 1.0, 3)
    with pytest.raises(ValueError, match="eta must be > 0"):
        Q.gd_one_point(net.apply, p0, jnp.ones((1, 3)), jnp.ones(1), -1.0, 3)
    with pytest.raises(ValueError, match="y must have shape"):
        Q.gd_one_point(net.apply, p0, jnp.ones((2, 3)), jnp.ones(1), 0.1, 3)
    with pytest.raises(ValueError, match="psi must have shape"):
        Q.perturbative_minimizer(jnp.ones((4, 2)), jnp.ones((2, 3, 3)), jnp.ones(2))


def test_catapult_sweep_matches_one_rate_at_a_time():
    etas = np.array([0.5, 1.7, 2.9])
    rs, lams = Q.catapult_sweep(0.8, 1.3, 2e-3, 1.0, etas, 25)
    assert rs.shape == lams.shape == (3, 26)
    for i, eta in enumerate(etas):
        r1, l1 = Q.catapult_recursion(0.8, 1.3, 2e-3, 1.0, eta, 25)
        np.testing.assert_allclose(rs[i], r1, rtol=1e-12)
        np.testing.assert_allclose(lams[i], l1, rtol=1e-12)
    with pytest.raises(ValueError, match="etas must be 1-D"):
        Q.catapult_sweep(0.8, 1.3, 2e-3, 1.0, 0.5, 25)
