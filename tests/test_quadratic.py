"""Tests of lecturekit.quadratic (Taylor models) and lecturekit.catapult (recursion, GD runs).

Parameters and data are drawn with NumPy (``default_rng``) and models are evaluated under
``jax.jit``: JAX compiles its random generator and every eager operation once per shape,
which would dominate the run time of these small tests.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import catapult as C, hessian, nets, quadratic as Q, tangent

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


_CATAPULT_NET = nets.mlp((5, 300, 1), "relu", w_std=1.0, out_w_std=1.3)


@pytest.mark.parametrize("lr_lam", [1.5, 3.0, 4.5])
def test_recursion_equals_gradient_descent_on_the_quadratic_model(lr_lam):
    d, y = 5, 0.7
    net = _CATAPULT_NET  # one object: gd_one_point compiles once for the three step sizes
    p0 = _params(net, 8)
    x = np.random.default_rng(9).normal(size=d)
    cc = C.catapult_constants(net, p0, x, y)
    assert cc.lam0 == pytest.approx(float(tangent.empirical_ntk(net.apply, p0, x[None])[0, 0]), rel=1e-12)
    assert cc.r0 == pytest.approx(float(net.apply(p0, x[None])[0]) - y, rel=1e-12)
    lr = lr_lam / cc.lam0
    steps = 8  # at eta*lambda0 = 4.5 the residual passes 1e100 (the guard) after ~10 steps
    rs, lams = C.catapult_recursion(cc.r0, cc.lam0, cc.c, y, lr, steps)
    _, losses, lam_gd = C.gd_one_point(net.apply, p0, x[None], jnp.array([y]), lr, steps, quadratic=True)
    np.testing.assert_allclose(0.5 * rs[:steps] ** 2, losses, rtol=1e-8)
    np.testing.assert_allclose(lams[:steps], lam_gd, rtol=1e-8)


def test_recursion_regimes_and_divergence_guard():
    r0, lam0, c, y = 0.3, 1.0, 1e-4, 1.0
    out = {}
    for el in (1.5, 3.0, 5.0):
        rs, lams = C.catapult_recursion(r0, lam0, c, y, el / lam0, 500)
        out[el] = C.classify_regime(0.5 * np.asarray(rs) ** 2, lams)
        assert np.all(np.isfinite(np.asarray(rs)))
    assert out == {1.5: "linear", 3.0: "catapult", 5.0: "divergent"}, out


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


def test_top_hessian_eigenvalue_matches_dense():
    net, p0 = _tanh_net()
    x = np.random.default_rng(11).normal(size=(6, 2))
    y = np.sin(x[:, 0])
    loss = lambda p: 0.5 * jnp.mean((net.apply(p, x) - y) ** 2)
    flat, unravel = jax.flatten_util.ravel_pytree(p0)
    dense = np.linalg.eigvalsh(np.asarray(jax.jit(jax.hessian(lambda w: loss(unravel(w))))(flat)))[-1]
    # 20 Lanczos steps in 31 dimensions: a truncated Krylov space that has converged
    est = float(hessian.top_eigenvalue(loss, p0, key=jax.random.key(12), steps=20))
    assert est == pytest.approx(dense, rel=1e-8)
    # the old name, kept as an alias
    assert float(Q.top_hessian_eigenvalue(loss, p0, jax.random.key(12), num_iter=20)) == est


def test_classify_regime_cases():
    assert C.classify_regime([1.0, 0.5, 1e-12]) == "linear"
    assert C.classify_regime([1.0, 5.0, 1e-12]) == "catapult"
    assert C.classify_regime([1.0, 5.0, np.inf]) == "divergent"
    assert C.classify_regime([1.0, 5.0, 0.5], [1.0, 0.5, 0.0]) == "dead"
    assert C.classify_regime([1.0, 0.9, 0.8], [1.0, 1.0, 1.0]) == "undecided"


def test_bad_inputs():
    net, p0 = _tanh_net()
    with pytest.raises(TypeError, match="f must be a function"):
        Q.quadratic_model(3, p0)
    with pytest.raises(ValueError, match="one-hidden-layer ReLU"):
        C.catapult_constants(net, p0, jnp.ones(2), 1.0)
    relu = nets.mlp((3, 4, 1), "relu")
    with pytest.raises(ValueError, match="x must have shape"):
        C.catapult_constants(relu, _params(relu, 0), jnp.ones(4), 1.0)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        C.catapult_recursion(0.1, 1.0, 0.01, 1.0, 1.0, 0)
    with pytest.raises(ValueError, match="scalar"):
        C.catapult_recursion(jnp.ones(2), 1.0, 0.01, 1.0, 1.0, 3)
    with pytest.raises(ValueError, match="lr must be > 0"):
        C.gd_one_point(net.apply, p0, jnp.ones((1, 2)), jnp.ones(1), -1.0, 3)
    with pytest.raises(ValueError, match="y must have shape"):
        C.gd_one_point(net.apply, p0, jnp.ones((2, 2)), jnp.ones(1), 0.1, 3)
    with pytest.raises(ValueError, match="psi must have shape"):
        Q.perturbative_minimizer(jnp.ones((4, 2)), jnp.ones((2, 3, 3)), jnp.ones(2))


def test_catapult_sweep_matches_one_rate_at_a_time():
    etas = np.array([0.5, 1.7, 2.9])
    rs, lams = C.catapult_sweep(0.8, 1.3, 2e-3, 1.0, etas, 25)
    assert rs.shape == lams.shape == (3, 26)
    for i, eta in enumerate(etas):
        r1, l1 = C.catapult_recursion(0.8, 1.3, 2e-3, 1.0, eta, 25)
        np.testing.assert_allclose(rs[i], r1, rtol=1e-12)
        np.testing.assert_allclose(lams[i], l1, rtol=1e-12)
    with pytest.raises(ValueError, match="lrs must be 1-D"):
        C.catapult_sweep(0.8, 1.3, 2e-3, 1.0, 0.5, 25)
