"""Tests of lecturekit.shallow: many one-hidden-layer networks trained side by side."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import nets, shallow, tangent, training

jax.config.update("jax_enable_x64", True)


# --------------------------------------------------------------------------------------
# Shallow networks side by side


def _shallow_params(units):
    return {"w": jnp.linspace(-1.5, 1.2, units), "b": jnp.cos(jnp.arange(float(units))),
            "v": jnp.sin(jnp.arange(float(units)) + 1)}


def test_shallow_networks_are_the_library_networks():
    pair = shallow.shallow([3, 7])
    p = _shallow_params(10)
    x = jnp.linspace(-1, 1, 5)[:, None]
    for r, (lo, hi) in enumerate([(0, 3), (3, 10)]):
        net = nets.mlp((1, hi - lo, 1), "relu", w_std=2**0.5, b_std=2**0.5)
        lib = [{"W": p["w"][None, lo:hi], "b": p["b"][lo:hi]}, {"W": p["v"][lo:hi, None], "b": jnp.zeros(1)}]
        np.testing.assert_allclose(pair.apply(p, x)[:, r], net.apply(lib, x), atol=1e-12)
        np.testing.assert_allclose(pair.ntk(p, x)[r], tangent.empirical_ntk(net.apply, lib, x), atol=1e-12)


def test_shallow_ntk_is_the_kernel_of_the_trained_parameters():
    # mixed activations and readouts, widths out of order: the closed form against the Jacobian
    sh = shallow.shallow([3, 5, 3, 2], ["relu", "tanh", "tanh", "relu"], readout=[True, False, True, False])
    p = _shallow_params(sh.units)
    x, x2 = jnp.linspace(-1, 1, 4)[:, None], jnp.array([[0.3], [-0.7]])
    got, cross = sh.ntk(p, x), sh.ntk(p, x, x2)
    starts = np.concatenate([[0], np.cumsum(sh.widths)[:-1]])
    for r, (start, width) in enumerate(zip(starts, sh.widths)):
        act = {"relu": jax.nn.relu, "tanh": jnp.tanh}[sh.activations[r]]

        def f(q, xs, r=r, width=width, act=act):
            v = q["v"] if sh.readout[r] else jax.lax.stop_gradient(q["v"])
            return jnp.sqrt(2.0 / width) * act(xs[:, :1] * q["w"] + q["b"]) @ v

        own = {k: a[start:start + width] for k, a in p.items()}
        np.testing.assert_allclose(sh.apply(p, x)[:, r], f(own, x), atol=1e-12)
        np.testing.assert_allclose(got[r], tangent.jacobian_ntk(f, own, x), atol=1e-12)
        np.testing.assert_allclose(cross[r], tangent.jacobian_ntk(f, own, x, x2), atol=1e-12)
    # a unit mask keeps the part of the kernel carried by those units
    mask = jnp.zeros(sh.units).at[:3].set(1.0)
    np.testing.assert_allclose(sh.ntk(p, x, unit_mask=mask)[0], got[0], atol=1e-12)
    np.testing.assert_allclose(sh.ntk(p, x, unit_mask=mask)[1:], 0.0, atol=1e-12)


def test_shallow_frozen_readout_is_not_trained():
    sh = shallow.shallow([4, 4], readout=[True, False])
    p = _shallow_params(8)
    x, y = jnp.linspace(-1, 1, 3)[:, None], jnp.ones((3, 2))
    grad = jax.grad(training.mse_loss(sh.apply, x, y))(p)
    assert np.all(np.asarray(grad["v"][4:]) == 0.0) and np.any(np.asarray(grad["v"][:4]) != 0.0)


def test_shallow_validation():
    with pytest.raises(TypeError, match="widths"):
        shallow.shallow(5)
    with pytest.raises(ValueError, match="widths"):
        shallow.shallow([3, 0])
    with pytest.raises(ValueError, match="activation"):
        shallow.shallow([3, 4], ["relu"])
    with pytest.raises(ValueError, match="unknown|activation"):
        shallow.shallow([3], "sigmoidal")
    with pytest.raises(ValueError, match="readout"):
        shallow.shallow([3, 4], readout=[True])
    with pytest.raises(ValueError, match="scale"):
        shallow.shallow([3], scale=0.0)


def test_shallow_kernel_change():
    x = jnp.linspace(-1, 1, 6)[:, None]
    y = jnp.sin(3 * x[:, 0])
    sh = shallow.shallow([16, 16, 16], ["relu", "relu", "tanh"], readout=[True, False, True])
    p0 = sh.init(jax.random.key(0))
    run = shallow.shallow_kernel_change(sh, p0, x, y, 0.2, 50)
    # against the definitions, recomputed here
    k0, kt = sh.ntk(p0, x), sh.ntk(run.final, x)
    expected = np.linalg.norm(kt - k0, axis=(1, 2)) / np.linalg.norm(k0, axis=(1, 2))
    np.testing.assert_allclose(run.delta_k, expected, rtol=1e-10)
    sign = lambda p: np.asarray(x[:, :1] * p["w"] + p["b"] > 0)  # noqa: E731
    flipped = np.any(sign(p0) != sign(run.final), axis=0)
    np.testing.assert_allclose(run.flipped, flipped.reshape(3, 16).mean(axis=1))
    # frozen-readout relu: the kernel changes only through units whose pre-activation changed sign
    np.testing.assert_allclose(run.delta_k_flipped[1], run.delta_k[1], rtol=1e-10)
    np.testing.assert_array_equal(run.final["v"][16:32], p0["v"][16:32])
    assert run.losses.shape == (51,) and run.losses[-1] < run.losses[0]
    with pytest.raises(TypeError, match="Shallow"):
        shallow.shallow_kernel_change(nets.mlp((1, 3, 1)), p0, x, y, 0.1, 3)
    with pytest.raises(ValueError, match="params"):
        shallow.shallow_kernel_change(sh, {"w": p0["w"]}, x, y, 0.1, 3)
    with pytest.raises(ValueError, match=r"shape \(n, 1\)"):
        shallow.shallow_kernel_change(sh, p0, jnp.ones((6, 2)), y, 0.1, 3)
    with pytest.raises(ValueError, match="y must have 6"):
        shallow.shallow_kernel_change(sh, p0, x, y[:3], 0.1, 3)
    with pytest.raises(ValueError, match="lr"):
        shallow.shallow_kernel_change(sh, p0, x, y, -0.1, 3)
