"""Tests of lecturekit.kernel_change: the batched head runs, the ReLU split, the first-units
width sweep against explicit loops, bad inputs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import datasets, kernel_change, nets, sampling, tangent

jax.config.update("jax_enable_x64", True)


def test_kernel_change_run_small():
    x, y = datasets.synthetic_classes(jax.random.key(0), 6, 4, 2)
    net = nets.mlp((4, 32, 2), "tanh", w_std=1.0)
    run = kernel_change.kernel_change_run(net, jax.random.split(jax.random.key(1), 2), x, y, train_head="linear",
                                          loss="cross_entropy", kernel_heads=("linear", "softmax"), lr=1.0,
                                          steps=40, every=10)
    assert run.losses.shape == (2, 5) and run.delta_k["softmax"].shape == (2, 5)
    assert np.all(np.asarray(run.losses[:, -1]) < np.asarray(run.losses[:, 0]))
    assert np.all(np.asarray(run.delta_k["linear"][:, 0]) == 0.0)
    # two trainings compiled together give the same numbers as separate calls
    both = kernel_change.kernel_change_runs(
        net, jax.random.split(jax.random.key(1), 2), x, y,
        [dict(train_head="linear", loss="cross_entropy", kernel_heads=("linear", "softmax")),
         dict(train_head="swish", loss="square", kernel_heads=("swish",))],
        lr=1.0, steps=40, every=10)
    np.testing.assert_allclose(both[0].losses, run.losses, rtol=1e-12)
    np.testing.assert_allclose(both[0].sup_delta_k["softmax"], run.sup_delta_k["softmax"], rtol=1e-10)
    np.testing.assert_allclose(both[0].l2_move, run.l2_move, rtol=1e-10)
    # the distance along the path: 0 at the start, the final distance at the end
    assert run.l2_path.shape == (2, 5) and np.all(np.asarray(run.l2_path[:, 0]) == 0.0)
    np.testing.assert_allclose(run.l2_path[:, -1], run.l2_move, rtol=1e-10)
    assert both[1].losses.shape == (2, 5) and both[1].delta_k["swish"].shape == (2, 5)
    assert np.all(np.asarray(both[1].losses[:, -1]) < np.asarray(both[1].losses[:, 0]))


def test_kernel_change_run_rescaled_outputs_start_at_zero_loss_gradient():
    # Chizat-Bach: alpha (g(theta) - g(theta_0)) with the loss / alpha^2; at alpha -> large the
    # parameters move O(1/alpha): doubling alpha halves the distance travelled (to first order)
    x, y = datasets.synthetic_classes(jax.random.key(0), 6, 4, 2)
    net = nets.mlp((4, 16, 2), "tanh", w_std=1.0)
    keys = jax.random.split(jax.random.key(2), 1)[jnp.zeros(2, dtype=int)]
    run = kernel_change.kernel_change_run(net, keys, x, y, train_head="linear", loss="square",
                                          kernel_heads=("linear",), lr=0.5, steps=20, every=10,
                                          scales=np.array([50.0, 100.0]))
    ratio = float(run.l2_move[0] / run.l2_move[1])
    assert abs(ratio - 2.0) < 0.05, ratio


def test_relu_kernel_split_adds_up_and_flips_shrink():
    x = np.stack([np.cos([0.3, 1.1, 1.9]), np.sin([0.3, 1.1, 1.9])], axis=1)
    y = np.array([0.5, -0.2, 0.9])
    small, large = (kernel_change.relu_kernel_split(m, jax.random.key(1), x, y, steps=300) for m in (64, 4096))
    assert small.loss < 1e-8 and large.loss < 1e-8
    assert large.flipped < small.flipped and large.kink < small.kink and large.smooth < small.smooth
    assert 0 < large.flipped < 0.05
    with pytest.raises(ValueError, match="y must have one entry per row of x"):
        kernel_change.relu_kernel_split(8, jax.random.key(0), x, y[:2])


def test_relu_split_kernel_is_the_autodiff_kernel_of_the_trained_weights():
    # d = 5: a factor 2/d on the W part (an earlier docstring's formula, right for d = 2
    # only, where the chapter runs it) is rejected by a margin of about 3
    m, d = 64, 5
    x = np.asarray(sampling.standard_normal(jax.random.key(3), (4, d)))
    draws = np.asarray(sampling.standard_normal(jax.random.key(0), (m * (d + 1),)))
    W, v = draws[: m * d].reshape(m, d) * np.sqrt(2.0 / d), draws[m * d :]
    pattern = (x @ W.T > 0).astype(float)
    autodiff = np.asarray(tangent.jacobian_ntk(kernel_change._relu_net, {"W": W, "v": v}, x))
    closed = kernel_change._relu_kernel(x, W, v, pattern)
    assert np.max(np.abs(closed - autodiff)) < 1e-12 * np.max(np.abs(autodiff))
    relu = (x @ W.T) * pattern
    with_2_over_d = ((pattern * v**2) @ pattern.T * (2 / d) * (x @ x.T) + relu @ relu.T) / m
    assert np.max(np.abs(with_2_over_d - autodiff)) > 1.0


def test_first_units_sweep_matches_an_explicit_narrow_network():
    x, y, x_eval = np.linspace(-1, 1, 5), np.cos(2 * np.linspace(-1, 1, 5)), np.array([-0.3, 0.6])
    out = kernel_change.first_units_width_sweep(x, y, x_eval, (4,), jax.random.key(3), max_width=16, lr=0.5,
                                                steps=50)
    w, b, v = np.split(np.asarray(sampling.standard_normal(jax.random.key(3), (48,))), 3)
    w, b, v = w[:4], b[:4], v[:4]
    f = lambda xs, w, b, v: np.tanh(2 * np.outer(xs, w) + b) @ v / 2.0  # noqa: E731  m = 4: 1/sqrt(m) = 1/2
    for _ in range(50):
        h = np.tanh(2 * np.outer(x, w) + b)
        r = h @ v / 2.0 - y
        dh = (1 - h**2) * v / 2.0
        w, b, v = w - 0.1 * (2 * x[:, None] * dh).T @ r, b - 0.1 * dh.T @ r, v - 0.1 * (h / 2.0).T @ r
    # lr 0.5 on the square loss (1/2n) sum (n = 5) is the step 0.1 of this loop on 1/2 sum
    np.testing.assert_allclose(out[4].network, f(x_eval, w, b, v), atol=1e-10)
    with pytest.raises(ValueError, match="widths must be"):
        kernel_change.first_units_width_sweep(x, y, x_eval, (32,), jax.random.key(3), max_width=16)


def test_first_units_linearization_matches_linear_gradient_descent():
    x, y = np.linspace(-1, 1, 5), np.cos(2 * np.linspace(-1, 1, 5))
    lr, steps = 0.5, 60
    out = kernel_change.first_units_width_sweep(x, y, x, (8,), jax.random.key(4), max_width=8, lr=lr,
                                                steps=steps)[8]
    k0 = out.slices0                      # x_eval = x: K_0 on the training inputs
    units = np.asarray(sampling.standard_normal(jax.random.key(4), (24,)))
    w, b, v = np.split(units, 3)
    f = np.tanh(2 * np.outer(x, w) + b) @ v / np.sqrt(8)
    f_lin = f.copy()
    for _ in range(steps):                # linear model: f <- f - (lr / n) K_0 (f - y)
        f_lin = f_lin - lr / 5 * k0 @ (f_lin - y)
    np.testing.assert_allclose(out.linearized, f_lin, atol=1e-10)


def test_bad_inputs():
    net = nets.mlp((2, 4, 2), "tanh")
    with pytest.raises(ValueError, match="loss"):
        kernel_change.kernel_change_run(net, jax.random.split(jax.random.key(0), 2), np.ones((3, 2)),
                                        np.ones((3, 2)), train_head="linear", loss="hinge", kernel_heads=(),
                                        lr=0.1, steps=2, every=1)
    with pytest.raises(ValueError, match="multiple"):
        kernel_change.kernel_change_run(net, jax.random.split(jax.random.key(0), 2), np.ones((3, 2)),
                                        np.ones((3, 2)), train_head="linear", loss="square", kernel_heads=(),
                                        lr=0.1, steps=10, every=3)
