"""Tests of lecturekit.linearity: head kernels vs Jacobians, GD loop, norms, bad inputs."""

from __future__ import annotations

import itertools

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import linearity, nets

jax.config.update("jax_enable_x64", True)


def _jacobian_kernel(net, params, x, head):
    g = linearity.model(net, head)
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    jac = jax.jacrev(lambda t: g(unravel(t), x).reshape(-1))(flat)  # (n k, P), example-major
    return jac @ jac.T


@pytest.mark.parametrize("head", ["linear", "softmax", "swish"])
def test_head_ntk_matches_jacobian(head):
    net = nets.mlp((3, 9, 7, 4), "tanh", b_std=0.2)
    params = net.init(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (5, 3))
    np.testing.assert_allclose(linearity.head_ntk(net, params, x, head), _jacobian_kernel(net, params, x, head),
                               rtol=1e-10, atol=1e-12)


def test_head_ntk_scalar_output_matches_tangent():
    from lecturekit import tangent

    net = nets.mlp((2, 11, 1), "erf")
    params = net.init(jax.random.key(2))
    x = jax.random.normal(jax.random.key(3), (4, 2))
    np.testing.assert_allclose(linearity.head_ntk(net, params, x), tangent.empirical_ntk(net.apply, params, x),
                               rtol=1e-10)


def test_relative_change():
    k0 = jnp.eye(3)
    ks = jnp.stack([k0, 2 * k0, 0 * k0])
    np.testing.assert_allclose(linearity.relative_change(ks), [0.0, 1.0, 1.0])


def test_gradient_descent_matches_manual_loop():
    target = jnp.array([1.0, -2.0])
    loss = lambda p: 0.5 * jnp.sum((p["a"] - target) ** 2)
    traj = linearity.gradient_descent(loss, {"a": jnp.zeros(2)}, lr=0.1, steps=20, record_every=5,
                                      record=lambda p: p["a"][0])
    a = jnp.zeros(2)
    for _ in range(20):
        a = a - 0.1 * (a - target)
    np.testing.assert_allclose(traj.params["a"], a, rtol=1e-12)
    assert traj.losses.shape == (5,) and traj.records.shape == (5,)
    np.testing.assert_allclose(traj.records[-1], a[0], rtol=1e-12)
    np.testing.assert_allclose(traj.losses[0], loss({"a": jnp.zeros(2)}))


def test_norm_221_enumeration_and_holder():
    rng = np.random.default_rng(0)
    for _ in range(10):
        t = rng.normal(size=(3, 4, 5))
        vec = rng.normal(size=5)
        norm = linearity.norm_221(t)
        # sup over unit u, v of sum_k |u T_k v| >= value at random unit vectors
        for _ in range(20):
            u, v = rng.normal(size=3), rng.normal(size=4)
            u, v = u / np.linalg.norm(u), v / np.linalg.norm(v)
            assert np.sum(np.abs(np.einsum("i,ijk,j->k", u, t, v))) <= norm + 1e-12
        assert np.linalg.norm(np.tensordot(t, vec, axes=([2], [0])), 2) <= norm * np.max(np.abs(vec)) + 1e-12
    c = rng.normal(size=4)
    diag = np.zeros((4, 4, 4))
    diag[np.arange(4), np.arange(4), np.arange(4)] = c
    assert abs(linearity.norm_221(diag) - np.max(np.abs(c))) < 1e-12


def test_layer_output_gradients_match_autodiff():
    net = nets.mlp((3, 6, 5, 1), "tanh", b_std=0.1)
    params = net.init(jax.random.key(4))
    x = jnp.array([0.2, -0.7, 1.1])
    grads = linearity.layer_output_gradients(net, params, x)
    # d f / d alpha^(2): the readout is linear in alpha^(2)
    mw = net.multipliers()[2][0]
    np.testing.assert_allclose(grads[1], mw * params[2]["W"][:, 0], rtol=1e-12)
    # d f / d alpha^(1) by perturbing the first hidden layer's output
    zs, hs, _ = net.forward(params, x[None])

    def f_from_alpha1(alpha1):
        z2 = net.multipliers()[1][0] * alpha1 @ params[1]["W"] + net.multipliers()[1][1] * params[1]["b"]
        return (mw * jnp.tanh(z2) @ params[2]["W"] + net.multipliers()[2][1] * params[2]["b"])[0]

    np.testing.assert_allclose(grads[0], jax.grad(f_from_alpha1)(hs[1][0]), rtol=1e-12)


def test_init_params_law_and_shapes():
    net = nets.mlp((5, 300, 2), "relu")
    params = linearity.init_params(net, jax.random.key(0))
    net.check_params(params)
    flat = np.concatenate([np.ravel(leaf) for leaf in jax.tree_util.tree_leaves(params)])
    assert abs(flat.mean()) < 4 / np.sqrt(flat.size) and abs(flat.var() - 1) < 0.05
    again = linearity.init_params(net, jax.random.key(0))
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(again)))


def test_kernel_change_run_small():
    x, y = linearity.synthetic_classes(jax.random.key(0), 6, 4, 2)
    assert x.shape == (6, 4) and y.shape == (6, 2)
    np.testing.assert_allclose(jnp.sum(x**2, axis=1), 4.0)
    net = nets.mlp((4, 32, 2), "tanh", w_std=1.0)
    run = linearity.kernel_change_run(net, jax.random.split(jax.random.key(1), 2), x, y, train_head="linear",
                                      loss="cross_entropy", kernel_heads=("linear", "softmax"), lr=1.0,
                                      steps=40, record_every=10)
    assert run.losses.shape == (2, 5) and run.delta_k["softmax"].shape == (2, 5)
    assert np.all(np.asarray(run.losses[:, -1]) < np.asarray(run.losses[:, 0]))
    assert np.all(np.asarray(run.delta_k["linear"][:, 0]) == 0.0)
    # two trainings compiled together give the same numbers as separate calls
    both = linearity.kernel_change_runs(net, jax.random.split(jax.random.key(1), 2), x, y,
                                        [dict(train_head="linear", loss="cross_entropy", kernel_heads=("linear", "softmax")),
                                         dict(train_head="swish", loss="square", kernel_heads=("swish",))],
                                        lr=1.0, steps=40, record_every=10)
    np.testing.assert_allclose(both[0].losses, run.losses, rtol=1e-12)
    np.testing.assert_allclose(both[0].sup_delta_k["softmax"], run.sup_delta_k["softmax"], rtol=1e-10)
    np.testing.assert_allclose(both[0].l2_move, run.l2_move, rtol=1e-10)
    assert both[1].losses.shape == (2, 5) and both[1].delta_k["swish"].shape == (2, 5)
    assert np.all(np.asarray(both[1].losses[:, -1]) < np.asarray(both[1].losses[:, 0]))


def test_bad_inputs():
    net = nets.mlp((2, 4, 2), "tanh")
    with pytest.raises(ValueError, match="head"):
        linearity.head_fn("nope")
    with pytest.raises(TypeError, match="net"):
        linearity.head_ntk("net", None, np.ones((1, 2)))
    with pytest.raises(ValueError, match="output_activation"):
        linearity.model(nets.mlp((2, 4, 1), "tanh", output_activation="tanh"))
    with pytest.raises(ValueError, match="columns"):
        linearity.head_ntk(net, net.init(jax.random.key(0)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="multiple"):
        linearity.gradient_descent(lambda p: jnp.sum(p**2), jnp.ones(2), lr=0.1, steps=10, record_every=3)
    with pytest.raises(ValueError, match="m = 20"):
        linearity.norm_221(np.ones((2, 2, 20)))
    with pytest.raises(ValueError, match="loss"):
        linearity.kernel_change_run(net, jax.random.split(jax.random.key(0), 2), np.ones((3, 2)), np.ones((3, 2)),
                                    train_head="linear", loss="hinge", kernel_heads=(), lr=0.1, steps=2, record_every=1)


# ----------------------------------------------------------------------- closed forms of Chapter 3


def test_one_hidden_layer_eigenvalues_match_dense_hessian_in_d_dimensions():
    from lecturekit import hessian

    net = nets.mlp((3, 7, 1), "tanh", w_std=1.3, b_std=0.4, out_w_std=0.8)
    params = net.init(jax.random.key(4))
    x = np.array([0.7, -1.1, 0.4])
    f = lambda p: net.apply(p, jnp.asarray(x)[None])[0]  # noqa: E731
    dense = np.linalg.eigvalsh(np.asarray(hessian.dense_hessian(f, params)))
    assert abs(linearity.mlp_hessian_norm(net, params, x) - np.max(np.abs(dense))) < 1e-12
    (mw0, mb0), _ = net.multipliers()
    z = mw0 * x @ np.asarray(params[0]["W"]) + mb0 * np.asarray(params[0]["b"])
    scale = np.sqrt(mw0**2 * x @ x + mb0**2)
    closed = 0.8 * linearity.one_hidden_layer_hessian_eigenvalues(np.asarray(params[1]["W"])[:, 0], z, scale)
    nonzero = dense[np.abs(dense) > 1e-12]           # (d + 1) - 2 zero directions per neuron, and the biases
    np.testing.assert_allclose(np.sort(nonzero), closed, atol=1e-12)


def test_tanh_net_gradient_and_hvp_match_autodiff():
    m, x = 6, -0.9
    theta = np.asarray(jax.random.normal(jax.random.key(5), (2 * m,)))
    u = np.asarray(jax.random.normal(jax.random.key(6), (2 * m,)))
    f = lambda t: jnp.sum(t[m:] * jnp.tanh(t[:m] * x)) / jnp.sqrt(m)  # noqa: E731
    np.testing.assert_allclose(linearity.tanh_net_gradient(theta[:m], theta[m:], x), jax.grad(f)(theta), atol=1e-14)
    np.testing.assert_allclose(linearity.tanh_net_hvp(theta[:m], theta[m:], x, u), jax.hessian(f)(theta) @ u,
                               atol=1e-14)
    norm = linearity.one_hidden_layer_hessian_norm(theta[m:], theta[:m] * x, abs(x))
    assert abs(norm - np.max(np.abs(np.linalg.eigvalsh(jax.hessian(f)(theta))))) < 1e-13


def test_expected_maxima_against_simulation():
    rng = np.random.default_rng(0)
    mean, sd = linearity.gaussian_max_abs_moments([1, 50])
    # E|g| = sqrt(2/pi) exactly; the trapezoid rule (step 0.004) is accurate to ~1e-6
    assert abs(mean[0] - np.sqrt(2 / np.pi)) < 1e-5 and abs(sd[0] - np.sqrt(1 - 2 / np.pi)) < 1e-5
    sims = np.max(np.abs(rng.normal(size=(20000, 50))), axis=1)
    assert abs(sims.mean() - mean[1]) < 4 * sims.std() / np.sqrt(sims.size) and abs(sims.std() - sd[1]) < 0.02
    m = 300
    mean, sd = linearity.max_block_norm_moments(m, scale=0.8)
    v, w = rng.normal(size=(2, 4000, m))
    sims = np.array([np.sqrt(m) * linearity.one_hidden_layer_hessian_norm(a, 0.8 * b, 0.8) for a, b in zip(v, w)])
    assert abs(sims.mean() - mean[0]) < 4 * sims.std() / np.sqrt(sims.size), (sims.mean(), mean)
    assert abs(sims.std() - sd[0]) < 0.1 * sd[0], (sims.std(), sd)


def test_relu_kernel_split_adds_up_and_flips_shrink():
    x = np.stack([np.cos([0.3, 1.1, 1.9]), np.sin([0.3, 1.1, 1.9])], axis=1)
    y = np.array([0.5, -0.2, 0.9])
    small, large = (linearity.relu_kernel_split(m, jax.random.key(1), x, y, steps=300) for m in (64, 4096))
    assert small.loss < 1e-8 and large.loss < 1e-8
    assert large.flipped < small.flipped and large.kink < small.kink and large.smooth < small.smooth
    assert 0 < large.flipped < 0.05
    with pytest.raises(ValueError, match="y must have one entry per row of x"):
        linearity.relu_kernel_split(8, jax.random.key(0), x, y[:2])


def test_bottleneck_mixed_block_matches_dense_hessian():
    from lecturekit import hessian

    net = nets.mlp((3, 6, 1, 5, 1), "tanh", w_std=1.2, b_std=0.3)
    params = net.init(jax.random.key(7))
    x = np.array([0.5, -1.0, 0.8])
    dense = np.asarray(hessian.dense_hessian(lambda p: net.apply(p, jnp.asarray(x)[None])[0], params))
    n_low = sum(int(np.size(leaf)) for layer in params[:2] for leaf in jax.tree_util.tree_leaves(layer))
    block = dense[:n_low, n_low:]                    # ravel order: layer 0, 1 (below), then 2, 3 (above)
    assert np.linalg.matrix_rank(block, tol=1e-10) == 1
    got = linearity.bottleneck_mixed_block_norm(net, params, x)
    assert abs(got - np.linalg.norm(block, 2)) < 1e-12 and got <= np.max(np.abs(np.linalg.eigvalsh(dense)))
    with pytest.raises(ValueError, match=r"widths \(d, m, 1, m', 1\)"):
        linearity.bottleneck_mixed_block_norm(nets.mlp((3, 6, 2, 5, 1), "tanh"), None, x)


def test_first_units_sweep_matches_an_explicit_narrow_network():
    x, y, x_eval = np.linspace(-1, 1, 5), np.cos(2 * np.linspace(-1, 1, 5)), np.array([-0.3, 0.6])
    out = linearity.first_units_width_sweep(x, y, x_eval, (4,), jax.random.key(3), max_width=16, lr=0.1, steps=50)
    w, b, v = np.split(linearity._hessian.normal_stream(jax.random.key(3), 48), 3)
    w, b, v = w[:4], b[:4], v[:4]
    f = lambda xs, w, b, v: np.tanh(2 * np.outer(xs, w) + b) @ v / 2.0  # noqa: E731  m = 4: 1/sqrt(m) = 1/2
    for _ in range(50):
        h = np.tanh(2 * np.outer(x, w) + b)
        r = h @ v / 2.0 - y
        dh = (1 - h**2) * v / 2.0
        w, b, v = w - 0.1 * (2 * x[:, None] * dh).T @ r, b - 0.1 * dh.T @ r, v - 0.1 * (h / 2.0).T @ r
    np.testing.assert_allclose(out[4]["network"], f(x_eval, w, b, v), atol=1e-10)
    with pytest.raises(ValueError, match="widths must be"):
        linearity.first_units_width_sweep(x, y, x_eval, (32,), jax.random.key(3), max_width=16)


def test_new_closed_forms_reject_bad_inputs():
    with pytest.raises(ValueError, match="v and z must have the same shape"):
        linearity.one_hidden_layer_hessian_norm(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="scale must be > 0"):
        linearity.one_hidden_layer_hessian_eigenvalues(np.ones(3), np.ones(3), 0.0)
    with pytest.raises(ValueError, match="m must hold positive integers"):
        linearity.gaussian_max_abs_moments([10, 0.5])
    with pytest.raises(ValueError, match="u must have 2m = 6"):
        linearity.tanh_net_hvp(np.ones(3), np.ones(3), 0.5, np.ones(5))
    with pytest.raises(ValueError, match="one-hidden-layer tanh net"):
        linearity.mlp_hessian_norm(nets.mlp((2, 4, 4, 1), "tanh"), None, np.ones(2))
