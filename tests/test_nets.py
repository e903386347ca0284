"""Networks: shapes, parameterizations, initialization statistics, input validation."""

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import nets, sampling
from test_sampling import _count_compiles

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


# ------------------------------------------------------------------ init_many, sub_network
def test_init_many_rows_are_consecutive_slices_of_one_stream():
    """Documented contract: network i of init_many(key, n) is numbers i*P...(i+1)*P-1 of
    standard_normal(key, (n*P,)); so network 0 is init(key) and counts are prefix-stable."""
    for par in ("ntk", "standard"):
        net = nets.mlp((3, 5, 4, 2), "tanh", parameterization=par, w_std=1.5, b_std=0.5)
        key = jax.random.key(7)
        many, fewer, one = net.init_many(key, 4), net.init_many(key, 2), net.init(key)
        assert [layer["W"].shape for layer in many] == [(4, 3, 5), (4, 5, 4), (4, 4, 2)]
        assert [layer["b"].shape for layer in many] == [(4, 5), (4, 4), (4, 2)]
        for a, b, c in zip(jax.tree_util.tree_leaves(many), jax.tree_util.tree_leaves(fewer),
                           jax.tree_util.tree_leaves(one)):
            np.testing.assert_array_equal(a[:2], b)
            np.testing.assert_array_equal(a[0], c)
        flat = np.asarray(sampling.standard_normal(key, (4 * net.num_params(),))).reshape(4, -1)
        if par == "ntk":
            np.testing.assert_array_equal(many[0]["W"][2].ravel(), flat[2, :15])
            np.testing.assert_array_equal(many[1]["b"][3], flat[3, 15 + 5 + 20:15 + 5 + 20 + 4])
        else:
            np.testing.assert_allclose(many[0]["W"][2].ravel(), flat[2, :15] * 1.5 / 3**0.5, rtol=1e-15)
            np.testing.assert_allclose(many[0]["b"][1], flat[1, 15:20] * 0.5, rtol=1e-15)


@pytest.mark.default_xla  # bit-for-bit equality of two different programs
def test_init_works_on_traced_keys_with_the_same_numbers():
    net = nets.mlp((2, 6, 1), "relu")
    keys = jax.random.split(jax.random.key(1), 3)
    batched = jax.vmap(net.init)(keys)
    jitted = jax.jit(lambda k: net.init_many(k, 2))(keys[0])
    for i in range(3):
        for a, b in zip(jax.tree_util.tree_leaves(batched), jax.tree_util.tree_leaves(net.init(keys[i]))):
            np.testing.assert_array_equal(a[i], b)
    for a, b in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(net.init_many(keys[0], 2))):
        np.testing.assert_array_equal(a, b)
    assert jax.eval_shape(net.init, keys[0])[0]["W"].shape == (2, 6)


def test_init_compiles_nothing_per_architecture(monkeypatch):
    """After the sampler's chunk program is compiled once, new widths and counts compile nothing."""
    nets.mlp((3, 2, 1)).init(jax.random.key(0))  # warm: compiles the chunk generator
    compiles = _count_compiles(lambda: [nets.mlp((3, w, w, 1)).init_many(jax.random.key(w), c)
                                        for w, c in [(5, 1), (17, 3), (40, 2), (64, 5)]])
    assert compiles == 0, compiles


def test_init_dtype_and_bad_arguments():
    net = nets.mlp((3, 4, 1), "relu")
    p32 = net.init(jax.random.key(0), jnp.float32)
    assert {leaf.dtype for leaf in jax.tree_util.tree_leaves(p32)} == {jnp.dtype("float32")}
    assert net.init(jax.random.key(0))[0]["W"].dtype == jnp.float64
    with pytest.raises(ValueError, match="count"):
        net.init_many(jax.random.key(0), 0)
    with pytest.raises(TypeError, match="PRNG key"):
        net.init_many(3, 2)
    with pytest.raises(TypeError, match="dtype"):
        net.init(jax.random.key(0), jnp.int32)


def test_sub_network_blocks_are_networks_of_the_smaller_width():
    big, small = nets.mlp((3, 12, 12, 1), "relu"), nets.mlp((3, 4, 4, 1), "relu")
    p = big.init(jax.random.key(2))
    x = np.random.default_rng(0).normal(size=(5, 3))
    for block in range(3):
        sub = nets.sub_network(p, 4, block)
        small.check_params(sub)
        units = slice(4 * block, 4 * block + 4)
        np.testing.assert_array_equal(sub[1]["W"], p[1]["W"][units, units])
        np.testing.assert_array_equal(sub[2]["W"], p[2]["W"][units])
        assert np.all(np.isfinite(small.apply(sub, x)))
    many = big.init_many(jax.random.key(3), 2)
    assert nets.sub_network(many, 6, 1)[1]["W"].shape == (2, 6, 6)
    with pytest.raises(ValueError, match="needs 16 hidden units"):
        nets.sub_network(p, 4, 3)
    with pytest.raises(ValueError, match="width"):
        nets.sub_network(p, 0)
    with pytest.raises(ValueError, match="list of layer dicts"):
        nets.sub_network(p[:1], 2)


# ------------------------------------------------------------------------- backward pass
@pytest.mark.parametrize("activation", ["relu", "erf", "tanh", "identity", "softplus", "swish"])
@pytest.mark.parametrize("outputs, output_activation, parameterization",
                         [(1, None, "ntk"), (3, None, "standard"), (2, "tanh", "ntk"), (1, "sigmoid", "standard"),
                          (2, None, "mup")])
def test_backward_gives_jacrev(activation, outputs, output_activation, parameterization):
    """d f_k(x_i)/dW_l = mW_l outer(h_{l-1}[i], delta_l[i, k]) and d f_k/db_l = mb_l delta_l[i, k]."""
    net = nets.mlp((3, 6, 5, outputs), activation, b_std=0.3, out_b_std=0.4, w_std=1.2,
                   output_activation=output_activation, parameterization=parameterization)
    params = net.init(jax.random.key(11))
    x = jax.random.normal(jax.random.key(12), (4, 3))
    bw = net.backward(params, x)
    np.testing.assert_allclose(bw.output, net.apply(params, x), rtol=1e-14)
    apply = lambda p: net.apply(p, x).reshape(4, outputs)  # noqa: E731
    jac = jax.jacrev(apply)(params)  # leaves (n, k, *leaf.shape)
    for layer, (mw, mb) in enumerate(net.multipliers()):
        h, d = bw.inputs[layer], bw.deltas[layer]
        assert d.shape == (4, outputs, net.widths[layer + 1])
        np.testing.assert_allclose(mw * jnp.einsum("ni,nkj->nkij", h, d), jac[layer]["W"], atol=1e-12)
        np.testing.assert_allclose(mb * d, jac[layer]["b"], atol=1e-12)


def test_backward_rejects_bad_input():
    net = nets.mlp((3, 4, 1), "relu")
    with pytest.raises(ValueError, match=r"x must have shape \(n, 3\)"):
        net.backward(net.init(jax.random.key(0)), jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="params must be a list"):
        net.backward([], jnp.ones((2, 3)))


def test_unstack_gives_each_network_on_the_host():
    net = nets.mlp((2, 5, 3, 1), "tanh")
    many = net.init_many(jax.random.key(4), 3)
    parts = nets.unstack(many)
    assert len(parts) == 3 and isinstance(parts[1][2]["b"], np.ndarray)
    for i, part in enumerate(parts):
        net.check_params(part)
        for a, b in zip(jax.tree_util.tree_leaves(part), jax.tree_util.tree_leaves(many)):
            np.testing.assert_array_equal(a, b[i])
    with pytest.raises(ValueError, match="one leading"):
        nets.unstack(net.init(jax.random.key(0)))
    with pytest.raises(ValueError, match="list of layer dicts"):
        nets.unstack([])


def test_mean_field_matches_a_hand_computation():
    # f(x) = (c / m) sum_i a_i relu(w_std/sqrt(d) w_i . x + b_std b_i) + out_b_std * b_out,
    # written out in NumPy from the same N(0, 1) draws.
    d, m = 3, 7
    net = nets.mlp((d, m, 1), "relu", w_std=1.2, b_std=0.3, out_w_std=0.8, out_b_std=0.5,
                   parameterization="mean_field")
    params = net.init(jax.random.key(2))
    x = np.asarray(jax.random.normal(jax.random.key(3), (5, d)))
    w, b = np.asarray(params[0]["W"]), np.asarray(params[0]["b"])
    a, c = np.asarray(params[1]["W"])[:, 0], float(params[1]["b"][0])
    hidden = np.maximum(1.2 / np.sqrt(d) * x @ w + 0.3 * b, 0.0)
    hand = 0.8 / m * hidden @ a + 0.5 * c
    np.testing.assert_allclose(net.apply(params, x), hand, rtol=1e-12)
    # the same draw in the NTK parameterization is sqrt(m) times larger (readout part)
    ntk = nets.mlp((d, m, 1), "relu", w_std=1.2, b_std=0.3, out_w_std=0.8)
    np.testing.assert_allclose(ntk.apply(params, x), np.sqrt(m) * 0.8 / m * hidden @ a, rtol=1e-12)
    # gradient w.r.t. w_i by hand: (c/m) a_i relu'(z_i) (w_std/sqrt(d)) x
    grad = jax.grad(lambda p: net.apply(p, x[:1])[0])(params)[0]["W"]
    hand_grad = 0.8 / m * a * (hidden[0] > 0) * 1.2 / np.sqrt(d) * x[0][:, None]
    np.testing.assert_allclose(grad, hand_grad, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="mean-field parameterization decays like 1/width"):
        net.kernels(x)
    with pytest.raises(ValueError, match="mean-field parameterization has no width-independent NNGP"):
        net.nngp(x)


def test_mup_matches_a_hand_computation_of_its_table():
    # muP for SGD (Tensor Programs V's table, module docstring): effective weights with
    # variances w^2/d (input), w^2/n (hidden), c^2/n^2 (readout), and one step of size lr on
    # the stored parameters moves them with the per-layer steps lr w^2 n/d (input),
    # lr w^2 (hidden), lr c^2/n (readout), lr b^2 n (hidden biases), lr c_b^2 (readout bias).
    d, n = 3, 5
    w, bs, c, cb = 1.2, 0.3, 0.8, 0.5
    net = nets.mlp((d, n, n, 1), "tanh", w_std=w, b_std=bs, out_w_std=c, out_b_std=cb,
                   parameterization="mup")
    params = net.init(jax.random.key(2))
    z = [np.asarray(a) for a in jax.tree_util.tree_leaves(nets.mlp(
        (d, n, n, 1), "tanh", parameterization="ntk").init(jax.random.key(2)))]
    # the same N(0, 1) draw, scaled by the stds of the table (leaves: W, b per layer)
    stds = [1 / np.sqrt(n)] * 5 + [1.0]
    for leaf, draw, std in zip(jax.tree_util.tree_leaves(params), z, stds):
        np.testing.assert_allclose(leaf, std * draw, rtol=1e-14)
    x = np.asarray(jax.random.normal(jax.random.key(3), (4, d)))
    W1, b1, W2, b2 = (np.asarray(params[i][k]) for i in (0, 1) for k in ("W", "b"))
    W3, b3 = np.asarray(params[2]["W"]), np.asarray(params[2]["b"])
    E1, E2, E3 = w * np.sqrt(n / d) * W1, w * W2, c / np.sqrt(n) * W3   # effective weights
    B1, B2, B3 = bs * np.sqrt(n) * b1, bs * np.sqrt(n) * b2, cb * b3
    h1 = np.tanh(x @ E1 + B1)
    h2 = np.tanh(h1 @ E2 + B2)
    np.testing.assert_allclose(net.apply(params, x), (h2 @ E3 + B3)[:, 0], rtol=1e-12)
    # effective initial std = multiplier x std of the draw: w/sqrt(d), w/sqrt(n), c/n
    mults, init = net.multipliers(), net.init_stds()
    for layer, std in enumerate((w / np.sqrt(d), w / np.sqrt(n), c / n)):
        np.testing.assert_allclose(mults[layer][0] * init[layer][0], std, rtol=1e-14)
    for layer, std in enumerate((bs, bs, cb)):
        np.testing.assert_allclose(mults[layer][1] * init[layer][1], std, rtol=1e-14)
    # one step of gradient descent on the stored parameters, seen on the effective weights
    lr = 0.1
    y = np.asarray(jax.random.normal(jax.random.key(4), (4,)))
    loss = lambda p: 0.5 * jnp.mean((net.apply(p, x) - y) ** 2)
    grads = jax.grad(loss)(params)
    moved = jax.tree_util.tree_map(lambda a, g: a - lr * g, params, grads)
    # d loss / d (effective weight), by hand through the two hidden layers
    r = (h2 @ E3 + B3)[:, 0] - y
    g3 = h2.T @ r[:, None] / len(x)
    d2 = (r[:, None] * E3[:, 0]) * (1 - h2**2)
    g2 = h1.T @ d2 / len(x)
    d1 = (d2 @ E2.T) * (1 - h1**2)
    g1 = x.T @ d1 / len(x)
    steps = {(0, "W"): (w * np.sqrt(n / d), lr * w**2 * n / d, g1),
             (1, "W"): (w, lr * w**2, g2),
             (2, "W"): (c / np.sqrt(n), lr * c**2 / n, g3),
             (0, "b"): (bs * np.sqrt(n), lr * bs**2 * n, d1.mean(axis=0)),
             (1, "b"): (bs * np.sqrt(n), lr * bs**2 * n, d2.mean(axis=0)),
             (2, "b"): (cb, lr * cb**2, r.mean(keepdims=True))}
    for (layer, kind), (mult, step, grad_eff) in steps.items():
        change = mult * (np.asarray(moved[layer][kind]) - np.asarray(params[layer][kind]))
        np.testing.assert_allclose(change, -step * grad_eff, rtol=1e-10, atol=1e-15)
    with pytest.raises(ValueError, match="muP parameterization decays like 1/width"):
        net.kernels(x)
    with pytest.raises(ValueError, match="muP parameterization has no width-independent NNGP"):
        net.nngp(x)


def test_mup_at_step_lr_is_mean_field_at_step_lr_times_width():
    # equal hidden widths, no readout bias: same function at init and the same trajectory
    n = 16
    mup = nets.mlp((3, n, n, 1), "relu", b_std=0.4, parameterization="mup")
    mf = nets.mlp((3, n, n, 1), "relu", b_std=0.4, parameterization="mean_field")
    key, x = jax.random.key(5), jax.random.normal(jax.random.key(6), (7, 3))
    y = jnp.sin(x[:, 0])
    p_mup, p_mf = mup.init(key), mf.init(key)
    np.testing.assert_allclose(mup.apply(p_mup, x), mf.apply(p_mf, x), rtol=1e-12)
    from lecturekit import training
    run_mup = training.descend(training.mse_loss(mup.apply, x, y), p_mup, lr=0.3, steps=50)
    run_mf = training.descend(training.mse_loss(mf.apply, x, y), p_mf, lr=0.3 * n, steps=50)
    np.testing.assert_allclose(run_mup.losses, run_mf.losses, rtol=1e-9)
    assert float(run_mup.losses[-1]) < 0.5 * float(run_mup.losses[0])   # it trains
    # ... and it is not the NTK network at step lr (rejects "muP = NTK with a rescaled lr")
    ntk = nets.mlp((3, n, n, 1), "relu", b_std=0.4)
    assert not np.allclose(ntk.apply(ntk.init(key), x), mup.apply(p_mup, x))


def test_init_stds_are_what_init_draws():
    for par in nets.PARAMETERIZATIONS:
        net = nets.mlp((300, 200, 100, 50), "relu", w_std=1.5, b_std=0.5, out_w_std=0.7,
                       out_b_std=0.3, parameterization=par)
        params = net.init(jax.random.key(7))
        for layer, (sw, sb) in zip(params, net.init_stds()):
            # >= 5000 N(0, sw^2) entries in W: relative standard error of the std <= 1 %, so
            # 5 % is 5 s.e. (rejects the NTK std 1 for "standard" and "mup": off by > 5x)
            assert abs(float(jnp.std(layer["W"])) / sw - 1) < 0.05, (par, sw)
        assert net.init_stds()[-1][1] == {"ntk": 1.0, "mean_field": 1.0, "mup": 1.0,
                                          "standard": 0.3}[par]


def test_ntk_terms_sum_to_the_jacobian_kernel_and_split_by_layer():
    net = nets.mlp((3, 7, 5, 2), "tanh", b_std=0.3, out_b_std=0.2)
    params = net.init(jax.random.key(0))
    x1, x2 = jax.random.normal(jax.random.key(1), (4, 3)), jax.random.normal(jax.random.key(2), (3, 3))
    terms = net.ntk_terms(params, x1, x2)
    assert [t.shape for t in terms] == [(4, 2, 3, 2)] * 3
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    j1 = jax.jacfwd(lambda v: net.apply(unravel(v), x1))(flat)  # (n1, k, P)
    j2 = jax.jacfwd(lambda v: net.apply(unravel(v), x2))(flat)
    np.testing.assert_allclose(sum(terms), jnp.einsum("iap,jbp->iajb", j1, j2), atol=1e-12)
    # the readout's term alone: gradients with respect to the last layer only
    last = jax.jacfwd(lambda w: net.apply(params[:-1] + [w], x1))(params[-1])
    g = jnp.concatenate([last["W"].reshape(4, 2, -1), last["b"]], axis=-1)
    np.testing.assert_allclose(net.ntk_terms(params, x1)[-1], jnp.einsum("iap,jbp->iajb", g, g), atol=1e-12)


def test_empirical_ntk_and_its_diagonal():
    net = nets.mlp((2, 9, 1), "erf", b_std=0.4)
    params = net.init(jax.random.key(3))
    x = jax.random.normal(jax.random.key(4), (5, 2))
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    jac = jax.jacfwd(lambda v: net.apply(unravel(v), x))(flat)
    np.testing.assert_allclose(net.empirical_ntk(params, x), jac @ jac.T, atol=1e-12)
    diag = net.ntk_terms(params, x, diagonal=True)
    np.testing.assert_allclose(sum(diag), jnp.diag(jac @ jac.T), atol=1e-12)
    with pytest.raises(ValueError, match="diagonal"):
        net.ntk_terms(params, x, x, diagonal=True)
    with pytest.raises(ValueError, match="scalar-output"):
        two = nets.mlp((2, 3, 2))
        two.empirical_ntk(two.init(jax.random.key(0)), x)


def test_layer_ntk_term_and_check_mlp():
    h1, d1 = jnp.array([[1.0, 2.0], [0.0, 1.0]]), jnp.array([[3.0], [1.0]])
    np.testing.assert_allclose(nets.layer_ntk_term(0.5, 1.0, h1, d1, h1[:1], d1[:1]), [[20.25], [1.5 * 3.0]])
    with pytest.raises(ValueError, match="rows"):
        nets.layer_ntk_term(1.0, 1.0, h1, d1[:1], h1, d1)
    with pytest.raises(ValueError, match="fan-in"):
        nets.layer_ntk_term(1.0, 1.0, h1, d1, jnp.ones((2, 3)), d1)
    net = nets.mlp((2, 3, 1), output_activation="tanh")
    assert nets.check_mlp(net) is net
    with pytest.raises(ValueError, match="output_activation"):
        nets.check_mlp(net, output_activation=False)
    with pytest.raises(TypeError, match="net must be"):
        nets.check_mlp("mlp")
