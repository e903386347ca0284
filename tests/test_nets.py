"""Networks: shapes, parameterizations, initialization statistics, input validation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import nets

jax.config.update("jax_enable_x64", True)


def test_shapes_and_depth():
    net = nets.mlp((3, 5, 7, 1), "tanh")
    params = net.init(jax.random.key(0))
    assert net.depth == 2 and net.num_params() == 3 * 5 + 5 + 5 * 7 + 7 + 7 + 1
    assert [p["W"].shape for p in params] == [(3, 5), (5, 7), (7, 1)]
    assert net.apply(params, jnp.ones((4, 3))).shape == (4,)
    multi = nets.mlp((3, 5, 2), "relu")
    assert multi.apply(multi.init(jax.random.key(0)), jnp.ones((4, 3))).shape == (4, 2)


def test_parameterizations_give_the_same_function():
    # Same N(0,1) draws, rescaled: NTK z = (w/sqrt(n)) h W + b_std b equals standard z = h W' + b'.
    ntk = nets.mlp((4, 6, 6, 1), "erf", w_std=1.3, b_std=0.4, out_b_std=0.2)
    std = nets.mlp((4, 6, 6, 1), "erf", w_std=1.3, b_std=0.4, out_b_std=0.2, parameterization="standard")
    key = jax.random.key(1)
    x = jax.random.normal(key, (3, 4))
    np.testing.assert_allclose(ntk.apply(ntk.init(key), x), std.apply(std.init(key), x), rtol=1e-12)
    np.testing.assert_allclose(ntk.nngp(x), std.nngp(x), rtol=1e-14)
    with pytest.raises(ValueError, match="standard parameterization grows with width"):
        std.kernels(x)


def test_standard_init_variance_is_fan_in_scaled():
    std = nets.mlp((400, 300, 1), "relu", w_std=2**0.5, b_std=0.5, parameterization="standard")
    p = std.init(jax.random.key(2))
    # sample variance of 120000 N(0, 2/400) entries: relative standard error sqrt(2/120000) ~ 0.4%
    assert abs(float(jnp.var(p[0]["W"])) * 400 / 2 - 1) < 0.02
    assert abs(float(jnp.var(p[0]["b"])) / 0.25 - 1) < 0.3  # 300 entries: 8% standard error


def test_output_activation_is_applied_and_blocks_infinite_width_kernels():
    net = nets.mlp((2, 4, 1), "relu", output_activation="tanh")
    plain = nets.mlp((2, 4, 1), "relu")
    p = net.init(jax.random.key(3))
    x = jnp.ones((2, 2))
    np.testing.assert_allclose(net.apply(p, x), jnp.tanh(plain.apply(p, x)))
    with pytest.raises(ValueError, match="not deterministic"):
        net.kernels(x)


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        (((3, 0, 1),), {}, ValueError, r"widths\[1\] must be >= 1"),
        (((3, 1),), {}, ValueError, "depth >= 1"),
        (((3, 2.5, 1),), {}, TypeError, r"widths\[1\] must be an integer"),
        (("abc",), {}, TypeError, "widths must be a sequence"),
        (((3, 4, 1), "gelu7"), {}, ValueError, "unknown activation 'gelu7'"),
        (((3, 4, 1),), {"parameterization": "mean-field"}, ValueError, "parameterization must be one of"),
        (((3, 4, 1),), {"w_std": -1.0}, ValueError, "w_std must be >= 0"),
        (((3, 4, 1),), {"b_std": float("nan")}, ValueError, "b_std must be finite"),
        (((3, 4, 1),), {"output_activation": "nope"}, ValueError, "unknown output_activation"),
    ],
)
def test_mlp_rejects_bad_configuration(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        nets.mlp(*args, **kwargs)


def test_apply_and_init_reject_bad_input():
    net = nets.mlp((3, 4, 1), "relu")
    params = net.init(jax.random.key(0))
    with pytest.raises(ValueError, match=r"x must have shape \(n, 3\)"):
        net.apply(params, jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="x must be 2-D"):
        net.apply(params, jnp.ones(3))
    with pytest.raises(ValueError, match="x must be finite"):
        net.apply(params, jnp.array([[1.0, np.inf, 0.0]]))
    with pytest.raises(TypeError, match="x must have a real floating"):
        net.apply(params, np.array([["a", "b", "c"]]))
    with pytest.raises(ValueError, match=r"params\[0\] must have W of shape \(3, 4\)"):
        net.apply([{"W": jnp.ones((4, 3)), "b": jnp.ones(4)}, params[1]], jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="PRNG key"):
        net.init(0)
    with pytest.raises(ValueError, match="inputs must have 3 columns"):
        net.kernels(jnp.ones((2, 2)))


def test_apply_works_under_jit_and_grad():
    net = nets.mlp((3, 8, 1), "softplus")
    params = net.init(jax.random.key(0))
    x = jnp.ones((2, 3))
    np.testing.assert_allclose(jax.jit(net.apply)(params, x), net.apply(params, x), rtol=1e-13)
    grads = jax.grad(lambda p: jnp.sum(net.apply(p, x)))(params)
    assert grads[0]["W"].shape == (3, 8)
