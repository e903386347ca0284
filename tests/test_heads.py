"""Tests of lecturekit.heads: the tangent kernel of g o f against Jacobians, bad inputs."""

from __future__ import annotations

import jax
import jax.flatten_util
import numpy as np
import pytest

from lecturekit import heads, nets, tangent

jax.config.update("jax_enable_x64", True)


def _jacobian_kernel(net, params, x, head):
    g = heads.model(net, head)
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    jac = jax.jacrev(lambda t: g(unravel(t), x).reshape(-1))(flat)  # (n k, P), example-major
    return jac @ jac.T


@pytest.mark.parametrize("head", ["linear", "softmax", "swish"])
def test_head_ntk_matches_jacobian(head):
    net = nets.mlp((3, 9, 7, 4), "tanh", b_std=0.2)
    params = net.init(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (5, 3))
    np.testing.assert_allclose(heads.head_ntk(net, params, x, head), _jacobian_kernel(net, params, x, head),
                               rtol=1e-10, atol=1e-12)


def test_head_ntk_scalar_output_matches_tangent():
    net = nets.mlp((2, 11, 1), "erf")
    params = net.init(jax.random.key(2))
    x = jax.random.normal(jax.random.key(3), (4, 2))
    np.testing.assert_allclose(heads.head_ntk(net, params, x), tangent.empirical_ntk(net.apply, params, x),
                               rtol=1e-10)


def test_head_ntk_is_traceable():
    net = nets.mlp((2, 6, 3), "tanh")
    params = net.init(jax.random.key(2))
    x = jax.random.normal(jax.random.key(3), (4, 2))
    jitted = jax.jit(lambda p: heads.head_ntk(net, p, x, "softmax"))(params)
    np.testing.assert_allclose(jitted, heads.head_ntk(net, params, x, "softmax"), rtol=1e-12)


def test_bad_inputs():
    net = nets.mlp((2, 4, 2), "tanh")
    with pytest.raises(ValueError, match="head"):
        heads.head_fn("nope")
    with pytest.raises(TypeError, match="head"):
        heads.head_fn(3)
    with pytest.raises(TypeError, match="net"):
        heads.head_ntk("net", None, np.ones((1, 2)))
    with pytest.raises(ValueError, match="output_activation"):
        heads.model(nets.mlp((2, 4, 1), "tanh", output_activation="tanh"))
    with pytest.raises(ValueError, match="columns"):
        heads.head_ntk(net, net.init(jax.random.key(0)), np.ones((3, 5)))
