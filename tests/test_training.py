"""Tests of lecturekit.training, and the 10% agreement of a wide deep ReLU net's NTK with theory."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import nets, regression, tangent, training

jax.config.update("jax_enable_x64", True)


def _data(n=6, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    return x, np.sin(x[:, 0]) + x[:, 1]


def test_descend_on_quadratic_matches_closed_form():
    # L = 1/2 a theta^2: theta_k = (1 - lr a)^k theta_0, losses recorded before each step.
    a, lr, steps = 2.0, 0.1, 7
    p, losses = training.descend(lambda th: 0.5 * a * th**2, jnp.asarray(1.5), lr, steps)
    np.testing.assert_allclose(p, 1.5 * (1 - lr * a) ** steps, rtol=1e-12)
    np.testing.assert_allclose(losses, 0.5 * a * (1.5 * (1 - lr * a) ** np.arange(steps)) ** 2, rtol=1e-12)


def test_descend_vmaps_over_seeds():
    x, y = _data()
    net = nets.mlp((3, 16, 1), "tanh")
    params = jax.vmap(net.init)(jax.random.split(jax.random.key(0), 3))
    loss = training.mse_loss(net.apply, x, y)
    final, losses = jax.jit(jax.vmap(lambda p: training.descend(loss, p, 0.1, 20)))(params)
    assert losses.shape == (3, 20)
    one, _ = training.descend(loss, jax.tree_util.tree_map(lambda l: l[1], params), 0.1, 20)
    np.testing.assert_allclose(final[0]["W"][1], one[0]["W"], rtol=1e-10)


def test_descend_observed_snapshots_a_quadratic():
    # L = 1/2 a theta^2 with 7 steps observed every 3: snapshots at steps 0, 3, 6 and 7 (the remainder).
    a, lr, steps, every = 2.0, 0.1, 7, 3
    final, losses, seen = jax.jit(
        lambda th: training.descend_observed(lambda t: 0.5 * a * t**2, th, lr, steps, every, lambda t: 2 * t)
    )(jnp.asarray(1.5))
    at = training.snapshot_steps(steps, every)
    assert list(at) == [0, 3, 6, 7]
    np.testing.assert_allclose(seen, 2 * 1.5 * (1 - lr * a) ** at, rtol=1e-12)
    np.testing.assert_allclose(losses, 0.5 * a * (1.5 * (1 - lr * a) ** np.arange(steps + 1)) ** 2, rtol=1e-12)
    np.testing.assert_allclose(final, 1.5 * (1 - lr * a) ** steps, rtol=1e-12)
    _, plain = training.descend(lambda t: 0.5 * a * t**2, jnp.asarray(1.5), lr, steps)
    np.testing.assert_allclose(losses[:-1], plain, rtol=1e-12)


def test_gradient_descent_snapshots_and_losses():
    x, y = _data()
    net = nets.mlp((3, 32, 1), "relu")
    p0 = net.init(jax.random.key(1))
    traj = training.gradient_descent(net.apply, p0, 0.2, 25, x=x, y=y, snapshot_every=10, track_kernel=True)
    assert list(traj.steps) == [0, 10, 20, 25]
    assert traj.losses.shape == (26,)
    assert traj.kernels.shape == (4, 6, 6)
    assert traj.params[0]["W"].shape == (4, 3, 32)
    loss = training.mse_loss(net.apply, x, y)
    np.testing.assert_allclose(traj.losses[0], loss(p0), rtol=1e-12)
    np.testing.assert_allclose(traj.losses[-1], loss(traj.final_params), rtol=1e-12)
    np.testing.assert_allclose(traj.kernels[0], tangent.empirical_ntk(net.apply, p0, x), rtol=1e-12)
    np.testing.assert_allclose(traj.params[1]["W"][-1], traj.final_params[1]["W"])
    assert traj.losses[-1] < traj.losses[0]


def test_loss_form_and_generic_model_kernel():
    x, y = _data(n=4)
    traj = training.gradient_descent(lambda p: jnp.sum((p - 3.0) ** 2), jnp.zeros(2), 0.25, 4)
    np.testing.assert_allclose(traj.final_params, 3.0 * (1 - 0.5**4) * np.ones(2), rtol=1e-12)
    model = lambda p, x: jnp.tanh(x @ p["w"]) * p["a"]  # noqa: E731
    p0 = {"w": jnp.ones(3) * 0.3, "a": jnp.asarray(1.2)}
    traj = training.gradient_descent(model, p0, 0.1, 3, x=x, y=y, kernel_x=x[:2])
    assert traj.kernels.shape == (2, 2, 2)
    np.testing.assert_allclose(traj.kernels[-1], tangent.jacobian_ntk(model, traj.final_params, jnp.asarray(x[:2])))


def test_gradient_descent_of_linearized_wide_net_matches_kernel_flow():
    x, y = _data(n=5)
    net = nets.mlp((3, 64, 1), "erf")
    p0 = net.init(jax.random.key(2))
    f_lin = tangent.linearize(net.apply, p0)
    lr, steps = 0.01, 2000
    traj = training.gradient_descent(f_lin, p0, lr, steps, x=x, y=y)
    k0 = tangent.empirical_ntk(net.apply, p0, x)
    pred = regression.gradient_flow_predictor(k0, y, lr * steps, f0_train=net.apply(p0, x))
    np.testing.assert_allclose(f_lin(traj.final_params, x), pred, atol=2e-3)


def test_relative_kernel_change():
    k0 = jnp.eye(2)
    np.testing.assert_allclose(training.relative_kernel_change(2 * k0, k0), 1.0)
    stack = jnp.stack([k0, 1.5 * k0])
    np.testing.assert_allclose(training.relative_kernel_change(stack, k0), [0.0, 0.5])
    with pytest.raises(ValueError, match="zero"):
        training.relative_kernel_change(k0, 0 * k0)
    with pytest.raises(ValueError, match="shape"):
        training.relative_kernel_change(jnp.eye(3), k0)
    with pytest.raises(ValueError, match="finite"):
        training.relative_kernel_change(k0 * np.nan, k0)
    traced = jax.jit(training.relative_kernel_change)(stack, k0)   # the jax.numpy path
    np.testing.assert_allclose(traced, [0.0, 0.5])


def test_bad_inputs():
    x, y = _data()
    net = nets.mlp((3, 8, 1))
    p0 = net.init(jax.random.key(0))
    with pytest.raises(ValueError, match="lr"):
        training.gradient_descent(net.apply, p0, -0.1, 3, x=x, y=y)
    with pytest.raises(TypeError, match="steps"):
        training.gradient_descent(net.apply, p0, 0.1, 2.5, x=x, y=y)
    with pytest.raises(ValueError, match="both"):
        training.gradient_descent(net.apply, p0, 0.1, 3, x=x)
    with pytest.raises(ValueError, match="model form"):
        training.gradient_descent(lambda p: 0.0 * p[0]["b"].sum(), p0, 0.1, 3, track_kernel=True)
    with pytest.raises(ValueError, match="scalar"):
        training.gradient_descent(lambda p: p[0]["b"], p0, 0.1, 3)
    with pytest.raises(ValueError, match="same number of rows"):
        training.mse_loss(net.apply, x, y[:3])
    with pytest.raises(TypeError):
        training.gradient_descent(42, p0, 0.1, 3)


def test_wide_two_hidden_layer_relu_ntk_within_ten_percent():
    # Width 4096, 2 hidden ReLU layers, NTK parameterization: the relative Frobenius error of
    # the empirical NTK is O(1/sqrt(width)) (about 2-4% here); 10% leaves room for any seed.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(10, 5))
    net = nets.mlp((5, 4096, 4096, 1), "relu", b_std=0.1)
    theory = net.kernels(x).ntk
    for seed in range(2):
        emp = tangent.empirical_ntk(net.apply, net.init(jax.random.key(seed)), x)
        err = float(jnp.linalg.norm(emp - theory) / jnp.linalg.norm(theory))
        assert err < 0.10, err
