"""Tests of lecturekit.catapult: the one-example recursion, its regimes, GD runs with measurements.

Parameters and data are drawn with NumPy (``default_rng``), by the helpers of
tests/test_quadratic.py.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import catapult as C, hessian, nets, tangent, training
from test_quadratic import _params, _tanh_net  # noqa: E402  (tests/ is on sys.path)

jax.config.update("jax_enable_x64", True)


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
    run = C.gd_one_point(net.apply, p0, x[None], jnp.array([y]), lr, steps, quadratic=True)
    assert isinstance(run, training.Trajectory) and int(run.diverged_at) == -1
    np.testing.assert_allclose(0.5 * rs**2, run.losses, rtol=1e-8)
    np.testing.assert_allclose(lams, run.observed, rtol=1e-8)


def test_recursion_regimes_and_divergence_guard():
    r0, lam0, c, y = 0.3, 1.0, 1e-4, 1.0
    out = {}
    for el in (1.5, 3.0, 5.0):
        rs, lams = C.catapult_recursion(r0, lam0, c, y, el / lam0, 500)
        out[el] = C.classify_regime(0.5 * np.asarray(rs) ** 2, lams)
        assert np.all(np.isfinite(np.asarray(rs)))
    assert out == {1.5: "linear", 3.0: "catapult", 5.0: "divergent"}, out


def test_sharpness_along_gradient_descent_matches_dense():
    net, p0 = _tanh_net()
    x = np.random.default_rng(11).normal(size=(6, 2))
    y = np.sin(x[:, 0])
    loss = training.mse_loss(net.apply, x, y)            # (1/2n) sum (f - y)^2
    run = C.gd_with_sharpness(net.apply, p0, x, y, 0.3, 40, every=20, key=jax.random.key(12), lanczos_steps=25)
    assert run.steps.tolist() == [0, 20, 40] and run.losses.shape == (41,)
    plain = training.descend(loss, p0, lr=0.3, steps=40, every=20, observe=lambda p: p)
    np.testing.assert_allclose(run.losses, plain.losses, rtol=1e-12)
    for i in range(3):
        p_i = jax.tree_util.tree_map(lambda a: a[i], plain.observed)
        flat, unravel = jax.flatten_util.ravel_pytree(p_i)
        dense = np.linalg.eigvalsh(np.asarray(jax.jit(jax.hessian(lambda w: loss(unravel(w))))(flat)))[-1]
        # 25 Lanczos steps in 31 dimensions: the top Ritz value has converged
        assert float(run.observed[i]) == pytest.approx(dense, rel=1e-8)
    assert float(hessian.top_eigenvalue(loss, p0, key=jax.random.key(12), steps=25)) == pytest.approx(
        float(run.observed[0]), rel=1e-12)


def test_gd_sweep_matches_one_rate_at_a_time_and_freezes_divergence():
    net = _CATAPULT_NET
    p0 = _params(net, 3)
    x, y = np.random.default_rng(4).normal(size=(1, 5)), jnp.array([0.4])
    lam0 = float(tangent.empirical_ntk(net.apply, p0, x)[0, 0])
    lrs = np.array([1.0, 3.0, 5.0]) / lam0
    runs = C.gd_sweep(net.apply, p0, x, y, lrs, 30, quadratic=True)
    assert runs.losses.shape == runs.observed.shape == (3, 31)
    for i, lr in enumerate(lrs):
        one = C.gd_one_point(net.apply, p0, x, y, lr, 30, quadratic=True)
        np.testing.assert_allclose(runs.losses[i], one.losses, rtol=1e-10)
    found = [C.classify_regime(a, b) for a, b in zip(runs.losses, runs.observed)]
    assert found[0] == "linear" and found[2] == "divergent", found
    at = int(runs.diverged_at[2])        # the quadratic model at 5/lambda0 passes 1e100 and freezes
    assert 0 < at < 30 and np.all(np.isinf(runs.losses[2, at:])) and np.all(np.isfinite(runs.losses[2, :at]))


def test_classify_regime_cases():
    assert C.classify_regime([1.0, 0.5, 1e-12]) == "linear"
    assert C.classify_regime([1.0, 5.0, 1e-12]) == "catapult"
    assert C.classify_regime([1.0, 5.0, np.inf]) == "divergent"
    assert C.classify_regime([1.0, 5.0, 0.5], [1.0, 0.5, 0.0]) == "dead"
    assert C.classify_regime([1.0, 0.9, 0.8], [1.0, 1.0, 1.0]) == "undecided"


def test_catapult_sweep_matches_one_rate_at_a_time():
    lrs = np.array([0.5, 1.7, 2.9])
    rs, lams = C.catapult_sweep(0.8, 1.3, 2e-3, 1.0, lrs, 25)
    assert rs.shape == lams.shape == (3, 26)
    for i, lr in enumerate(lrs):
        r1, l1 = C.catapult_recursion(0.8, 1.3, 2e-3, 1.0, lr, 25)
        np.testing.assert_allclose(rs[i], r1, rtol=1e-12)
        np.testing.assert_allclose(lams[i], l1, rtol=1e-12)
    with pytest.raises(ValueError, match="lrs must be 1-D"):
        C.catapult_sweep(0.8, 1.3, 2e-3, 1.0, 0.5, 25)


def test_bad_inputs():
    net, p0 = _tanh_net()
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
    with pytest.raises(ValueError, match="lanczos_steps"):
        C.gd_with_sharpness(net.apply, p0, jnp.ones((2, 2)), jnp.ones(2), 0.1, 3, key=jax.random.key(0),
                            lanczos_steps=1)
    with pytest.raises(ValueError, match="lr must be > 0"):
        C.catapult_duration([1.0, 0.5], 0.0)
