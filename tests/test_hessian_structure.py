"""Tests of lecturekit.hessian_structure: closed forms against dense Hessians and autodiff,
the (2,2,1)-norm, expected maxima against simulation, bad inputs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import hessian, hessian_structure as hs, nets

jax.config.update("jax_enable_x64", True)


def test_norm_221_enumeration_and_holder():
    rng = np.random.default_rng(0)
    for _ in range(10):
        t = rng.normal(size=(3, 4, 5))
        vec = rng.normal(size=5)
        norm = hs.norm_221(t)
        # sup over unit u, v of sum_k |u T_k v| >= value at random unit vectors
        for _ in range(20):
            u, v = rng.normal(size=3), rng.normal(size=4)
            u, v = u / np.linalg.norm(u), v / np.linalg.norm(v)
            assert np.sum(np.abs(np.einsum("i,ijk,j->k", u, t, v))) <= norm + 1e-12
        assert np.linalg.norm(np.tensordot(t, vec, axes=([2], [0])), 2) <= norm * np.max(np.abs(vec)) + 1e-12
    c = rng.normal(size=4)
    diag = np.zeros((4, 4, 4))
    diag[np.arange(4), np.arange(4), np.arange(4)] = c
    assert abs(hs.norm_221(diag) - np.max(np.abs(c))) < 1e-12


def test_layer_output_gradients_match_autodiff():
    net = nets.mlp((3, 6, 5, 1), "tanh", b_std=0.1)
    params = net.init(jax.random.key(4))
    x = jnp.array([0.2, -0.7, 1.1])
    grads = hs.layer_output_gradients(net, params, x)
    # d f / d alpha^(2): the readout is linear in alpha^(2)
    mw = net.multipliers()[2][0]
    np.testing.assert_allclose(grads[1], mw * params[2]["W"][:, 0], rtol=1e-12)
    # d f / d alpha^(1) by perturbing the first hidden layer's output
    zs, hs_, _ = net.forward(params, x[None])

    def f_from_alpha1(alpha1):
        z2 = net.multipliers()[1][0] * alpha1 @ params[1]["W"] + net.multipliers()[1][1] * params[1]["b"]
        return (mw * jnp.tanh(z2) @ params[2]["W"] + net.multipliers()[2][1] * params[2]["b"])[0]

    np.testing.assert_allclose(grads[0], jax.grad(f_from_alpha1)(hs_[1][0]), rtol=1e-12)


def test_one_hidden_layer_eigenvalues_match_dense_hessian_in_d_dimensions():
    net = nets.mlp((3, 7, 1), "tanh", w_std=1.3, b_std=0.4, out_w_std=0.8)
    params = net.init(jax.random.key(4))
    x = np.array([0.7, -1.1, 0.4])
    f = lambda p: net.apply(p, jnp.asarray(x)[None])[0]  # noqa: E731
    dense = np.linalg.eigvalsh(np.asarray(hessian.dense_hessian(f, params)))
    assert abs(hs.mlp_hessian_norm(net, params, x) - np.max(np.abs(dense))) < 1e-12
    (mw0, mb0), _ = net.multipliers()
    z = mw0 * x @ np.asarray(params[0]["W"]) + mb0 * np.asarray(params[0]["b"])
    scale = np.sqrt(mw0**2 * x @ x + mb0**2)
    closed = 0.8 * hs.one_hidden_layer_hessian_eigenvalues(np.asarray(params[1]["W"])[:, 0], z, scale)
    nonzero = dense[np.abs(dense) > 1e-12]           # (d + 1) - 2 zero directions per neuron, and the biases
    np.testing.assert_allclose(np.sort(nonzero), closed, atol=1e-12)


def test_tanh_net_gradient_and_hvp_match_autodiff():
    m, x = 6, -0.9
    theta = np.asarray(jax.random.normal(jax.random.key(5), (2 * m,)))
    u = np.asarray(jax.random.normal(jax.random.key(6), (2 * m,)))
    f = lambda t: jnp.sum(t[m:] * jnp.tanh(t[:m] * x)) / jnp.sqrt(m)  # noqa: E731
    np.testing.assert_allclose(hs._gradient(theta[:m], theta[m:], x), jax.grad(f)(theta), atol=1e-14)
    np.testing.assert_allclose(hs._hvp(theta[:m], theta[m:], x, u), jax.hessian(f)(theta) @ u, atol=1e-14)
    norm = hs.one_hidden_layer_hessian_norm(theta[m:], theta[:m] * x, abs(x))
    assert abs(norm - np.max(np.abs(np.linalg.eigvalsh(jax.hessian(f)(theta))))) < 1e-13


def _kernel(theta, xs):
    m = theta.size // 2
    f = lambda t, x: jnp.sum(t[m:] * jnp.tanh(t[:m] * x)) / jnp.sqrt(m)  # noqa: E731
    return jax.grad(f)(theta, xs[0]) @ jax.grad(f)(theta, xs[1])


def test_kernel_gradient_direction_and_bound_ratio_match_autodiff():
    m, xs = 5, (0.8, -0.5)
    theta = np.asarray(jax.random.normal(jax.random.key(8), (2 * m,)))
    grad_k = np.asarray(jax.grad(_kernel)(jnp.asarray(theta), xs))
    np.testing.assert_allclose(hs.kernel_gradient_direction(theta, xs), grad_k / np.linalg.norm(grad_k),
                               atol=1e-13)
    direction = grad_k / np.linalg.norm(grad_k)
    ratio = hs.kernel_bound_ratio(theta, direction, xs, radius=0.5, grid=20)
    change = abs(float(_kernel(jnp.asarray(theta + 0.5 * direction), xs) - _kernel(jnp.asarray(theta), xs)))
    seg = np.linspace(theta, theta + 0.5 * direction, 20)
    eps = max(hs.one_hidden_layer_hessian_norm(t[m:], t[:m] * x, abs(x)) for t in seg for x in xs)
    g = [np.linalg.norm(hs._gradient(theta[:m], theta[m:], x)) for x in xs]
    assert abs(ratio - change / (eps * 0.5 * sum(g) + (eps * 0.5) ** 2)) < 1e-12
    assert 0 < ratio <= 1
    with pytest.raises(ValueError, match="direction"):
        hs.kernel_bound_ratio(theta, direction[:-1], xs)
    with pytest.raises(TypeError, match="xs"):
        hs.kernel_gradient_direction(theta, 0.8)


def test_expected_maxima_against_simulation():
    rng = np.random.default_rng(0)
    mean, sd = hs.gaussian_max_abs_moments([1, 50])
    # E|g| = sqrt(2/pi) exactly; the trapezoid rule (step 0.004) is accurate to ~1e-6
    assert abs(mean[0] - np.sqrt(2 / np.pi)) < 1e-5 and abs(sd[0] - np.sqrt(1 - 2 / np.pi)) < 1e-5
    sims = np.max(np.abs(rng.normal(size=(20000, 50))), axis=1)
    assert abs(sims.mean() - mean[1]) < 4 * sims.std() / np.sqrt(sims.size) and abs(sims.std() - sd[1]) < 0.02
    m = 300
    mean, sd = hs.max_block_norm_moments(m, scale=0.8)
    v, w = rng.normal(size=(2, 4000, m))
    sims = np.array([np.sqrt(m) * hs.one_hidden_layer_hessian_norm(a, 0.8 * b, 0.8) for a, b in zip(v, w)])
    assert abs(sims.mean() - mean[0]) < 4 * sims.std() / np.sqrt(sims.size), (sims.mean(), mean)
    assert abs(sims.std() - sd[0]) < 0.1 * sd[0], (sims.std(), sd)
    # a large scale: |a| ~ s^2, so half of these maxima lie beyond 12, where a fixed
    # quadrature grid on [0, 12] ended (it gave the mean of min(max, 12): 10.08, about
    # 30 standard errors below the simulation's 13.2)
    m, s = 12, 4.0
    mean, sd = hs.max_block_norm_moments(m, scale=s)
    v, w = rng.normal(size=(2, 4000, m))
    sims = np.array([np.sqrt(m) * hs.one_hidden_layer_hessian_norm(a, s * b, s) for a, b in zip(v, w)])
    assert abs(sims.mean() - mean[0]) < 4 * sims.std() / np.sqrt(sims.size), (sims.mean(), mean)
    assert abs(sims.std() - sd[0]) < 0.1 * sd[0], (sims.std(), sd)


def test_bottleneck_mixed_block_matches_dense_hessian():
    net = nets.mlp((3, 6, 1, 5, 1), "tanh", w_std=1.2, b_std=0.3)
    params = net.init(jax.random.key(7))
    x = np.array([0.5, -1.0, 0.8])
    dense = np.asarray(hessian.dense_hessian(lambda p: net.apply(p, jnp.asarray(x)[None])[0], params))
    n_low = sum(int(np.size(leaf)) for layer in params[:2] for leaf in jax.tree_util.tree_leaves(layer))
    block = dense[:n_low, n_low:]                    # ravel order: layer 0, 1 (below), then 2, 3 (above)
    assert np.linalg.matrix_rank(block, tol=1e-10) == 1
    got = hs.bottleneck_mixed_block_norm(net, params, x)
    assert abs(got - np.linalg.norm(block, 2)) < 1e-12 and got <= np.max(np.abs(np.linalg.eigvalsh(dense)))
    with pytest.raises(ValueError, match=r"widths \(d, m, 1, m', 1\)"):
        hs.bottleneck_mixed_block_norm(nets.mlp((3, 6, 2, 5, 1), "tanh"), None, x)


def test_bottleneck_holder_bound_matches_autodiff():
    net = nets.mlp((3, 6, 1, 5, 1), "tanh", w_std=1.2, b_std=0.3)
    params = net.init(jax.random.key(9))
    x = jnp.array([0.5, -1.0, 0.8])
    (mw0, mb0), (mw1, mb1), (mw2, mb2), (mw3, mb3) = net.multipliers()
    h = jnp.tanh(mw0 * x @ params[0]["W"] + mb0 * params[0]["b"])
    alpha = jnp.tanh(mw1 * h @ params[1]["W"] + mb1 * params[1]["b"])[0]
    layer3 = lambda a: jnp.tanh(mw2 * a * params[2]["W"][0] + mb2 * params[2]["b"])  # noqa: E731
    tensor = jax.jacfwd(jax.jacfwd(layer3))(alpha)       # d^2 alpha^(3)_k / d alpha^2, (m',)
    df_dalpha3 = jax.grad(lambda a3: mw3 * a3 @ params[3]["W"][:, 0] + mb3 * params[3]["b"][0])(layer3(alpha))
    expected = float(jnp.sum(jnp.abs(tensor)) * jnp.max(jnp.abs(df_dalpha3)))
    assert abs(hs.bottleneck_holder_bound(net, params, x) - expected) < 1e-12
    # the (2,2,1)-norm of the 1x1xm' tensor is the sum of |T_k|
    assert abs(hs.norm_221(np.asarray(tensor)[None, None, :]) - float(jnp.sum(jnp.abs(tensor)))) < 1e-12


def test_new_closed_forms_reject_bad_inputs():
    with pytest.raises(ValueError, match="v and z must have the same shape"):
        hs.one_hidden_layer_hessian_norm(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="scale must be > 0"):
        hs.one_hidden_layer_hessian_eigenvalues(np.ones(3), np.ones(3), 0.0)
    with pytest.raises(ValueError, match="m must hold positive integers"):
        hs.gaussian_max_abs_moments([10, 0.5])
    with pytest.raises(ValueError, match="one-hidden-layer tanh net"):
        hs.mlp_hessian_norm(nets.mlp((2, 4, 4, 1), "tanh"), None, np.ones(2))
    with pytest.raises(ValueError, match="m = 20"):
        hs.norm_221(np.ones((2, 2, 20)))
