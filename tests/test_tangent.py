"""Empirical NTK: per-layer formula against explicit Jacobians; linearization; errors."""

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jax.flatten_util import ravel_pytree

from lecturekit import nets, tangent

jax.config.update("jax_enable_x64", True)


def _explicit_jtj(f, params, x1, x2):
    """J(x1) J(x2)^T with the Jacobian flattened into one (n, P) matrix (one compiled program)."""
    flat, unravel = ravel_pytree(params)

    @jax.jit
    def product(flat, x1, x2):
        j1 = jax.jacfwd(lambda v: f(unravel(v), x1))(flat)
        j2 = jax.jacfwd(lambda v: f(unravel(v), x2))(flat)
        return j1 @ j2.T

    return product(flat, x1, x2)


@settings(max_examples=8)
@given(
    activation=st.sampled_from(["relu", "erf", "tanh", "identity", "softplus", "swish"]),
    hidden=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    parameterization=st.sampled_from(["ntk", "standard"]),
    b_std=st.floats(0.0, 1.0),
    output_activation=st.sampled_from([None, "tanh", "sigmoid"]),
    seed=st.integers(0, 2**16),
)
def test_structured_ntk_equals_explicit_jacobian_product(
    activation, hidden, parameterization, b_std, output_activation, seed
):
    net = nets.mlp((3, *hidden, 1), activation, b_std=b_std, out_b_std=0.5,
                   parameterization=parameterization, output_activation=output_activation)
    k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
    params = net.init(k1)
    x1, x2 = jax.random.normal(k2, (5, 3)), jax.random.normal(k3, (4, 3))
    assert tangent._structured_network(net.apply) is net
    fast = tangent.empirical_ntk(net.apply, params, x1, x2)
    ref = _explicit_jtj(net.apply, params, x1, x2)
    np.testing.assert_allclose(fast, ref, atol=1e-10 * (1 + float(jnp.abs(ref).max())), rtol=0)
    same = tangent.empirical_ntk(net.apply, params, x1)
    np.testing.assert_allclose(same, _explicit_jtj(net.apply, params, x1, x1), atol=1e-10 * (1 + float(jnp.abs(same).max())))


def test_generic_function_uses_jacobian_fallback():
    def model(p, x):  # a two-leaf model that is not an MLP
        return jnp.tanh(x @ p["a"]) @ p["v"] + p["c"] * jnp.sum(x, axis=1)

    params = {"a": jnp.ones((2, 3)) * 0.3, "v": jnp.arange(3.0), "c": jnp.array(0.7)}
    x = jax.random.normal(jax.random.key(0), (4, 2))
    assert tangent._structured_network(model) is None
    np.testing.assert_allclose(tangent.empirical_ntk(model, params, x), _explicit_jtj(model, params, x, x), atol=1e-12)


def test_wrapped_mlp_is_a_generic_model(monkeypatch):
    """A lambda or partial around net.apply is a generic model: auto takes vector products
    (never the Jacobian), quietly, with no look at what the function refers to."""
    net = nets.mlp((2, 4, 1), "relu")
    params = net.init(jax.random.key(0))
    wrapped = lambda p, x: 2.0 * net.apply(p, x)  # noqa: E731
    x = jnp.eye(2)
    assert tangent._structured_network(wrapped) is None
    with monkeypatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("error")
        patch.setattr(tangent, "jacobian_ntk", _forbidden)
        auto = tangent.empirical_ntk(wrapped, params, x)
        partial_apply = functools.partial(net.apply)
        assert tangent._structured_network(partial_apply) is None
        np.testing.assert_allclose(tangent.empirical_ntk(partial_apply, params, x),
                                   tangent.empirical_ntk(net, params, x), atol=1e-12)
    np.testing.assert_allclose(auto, 4.0 * tangent.empirical_ntk(net.apply, params, x), atol=1e-12)
    with pytest.raises(ValueError, match="structured"):
        tangent.empirical_ntk(wrapped, params, x, implementation="structured")


def test_the_network_itself_takes_the_per_layer_formula(monkeypatch):
    net = nets.mlp((3, 6, 1), "tanh", b_std=0.3)
    params = net.init(jax.random.key(2))
    x1, x2 = jax.random.normal(jax.random.key(3), (4, 3)), jax.random.normal(jax.random.key(4), (3, 3))
    assert tangent._structured_network(net) is net
    with monkeypatch.context() as patch:
        patch.setattr(tangent, "vector_product_ntk", _forbidden)
        patch.setattr(tangent, "jacobian_ntk", _forbidden)
        got = tangent.empirical_ntk(net, params, x1, x2)
    np.testing.assert_array_equal(got, tangent.empirical_ntk(net.apply, params, x1, x2))
    np.testing.assert_array_equal(got, net.empirical_ntk(params, x1, x2))
    np.testing.assert_allclose(tangent.empirical_ntk(net, params, x1, x2, implementation="jacobian"), got,
                               atol=1e-12)
    with pytest.raises(ValueError, match="different network"):
        tangent.empirical_ntk(net, params, x1, net=nets.mlp((3, 6, 1), "relu"))


def test_jitted_apply_and_explicit_net_use_the_per_layer_formula(monkeypatch):
    net = nets.mlp((3, 6, 5, 1), "erf", b_std=0.3)
    params = net.init(jax.random.key(2))
    x1, x2 = jax.random.normal(jax.random.key(3), (4, 3)), jax.random.normal(jax.random.key(4), (3, 3))
    reference = tangent.jacobian_ntk(net.apply, params, x1, x2)
    jitted = jax.jit(net.apply)
    assert tangent._structured_network(jitted) is net
    wrapped = lambda p, x: net.apply(p, x)  # noqa: E731
    with monkeypatch.context() as patch:
        patch.setattr(tangent, "vector_product_ntk", _forbidden)
        patch.setattr(tangent, "jacobian_ntk", _forbidden)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for f, kw in [(jitted, {}), (wrapped, {"net": net}), (wrapped, {"net": net, "implementation": "structured"})]:
                np.testing.assert_allclose(tangent.empirical_ntk(f, params, x1, x2, **kw), reference, atol=1e-12)
    other = nets.mlp((3, 6, 5, 1), "relu")
    with pytest.raises(ValueError, match="different network"):
        tangent.empirical_ntk(net.apply, params, x1, net=other)
    with pytest.raises(TypeError, match="net must be"):
        tangent.empirical_ntk(wrapped, params, x1, net="mlp")


@pytest.mark.parametrize("implementation", ["auto", "structured", "vector_products", "jacobian"])
def test_every_implementation_gives_the_same_kernel(implementation):
    net = nets.mlp((3, 7, 1), "tanh", b_std=0.4, out_b_std=0.2)
    params = net.init(jax.random.key(5))
    x1, x2 = jax.random.normal(jax.random.key(6), (5, 3)), jax.random.normal(jax.random.key(7), (2, 3))
    for b in (None, x2):
        ref = _explicit_jtj(net.apply, params, x1, x1 if b is None else b)
        got = tangent.empirical_ntk(net.apply, params, x1, b, implementation=implementation)
        np.testing.assert_allclose(got, ref, atol=1e-12)
    if implementation in ("vector_products", "jacobian", "auto"):  # a model that is no MLP
        p = {"a": jnp.ones((3, 4)), "v": jnp.arange(4.0), "c": jnp.array(0.5)}
        model = lambda p, x: jnp.tanh(x @ p["a"]) @ p["v"] + p["c"] * x[:, 0]  # noqa: E731
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = tangent.empirical_ntk(model, p, x1, implementation=implementation)
        np.testing.assert_allclose(got, _explicit_jtj(model, p, x1, x1), atol=1e-12)
    with pytest.raises(ValueError, match="implementation"):
        tangent.empirical_ntk(net.apply, params, x1, implementation="fast")


def _forbidden(*args, **kwargs):
    raise AssertionError("a generic method was taken for a nets.mlp network")


def test_linearize_is_exact_for_linear_models_and_first_order_otherwise():
    net = nets.mlp((2, 16, 1), "tanh")
    p0 = net.init(jax.random.key(1))
    x = jax.random.normal(jax.random.key(2), (5, 2))
    f_lin = tangent.linearize(net.apply, p0)
    np.testing.assert_allclose(f_lin(p0, x), net.apply(p0, x), atol=1e-14)
    direction = net.init(jax.random.key(3))
    errs = []
    for eps in (1e-2, 1e-3):
        p = jax.tree_util.tree_map(lambda a, d: a + eps * d, p0, direction)
        errs.append(float(jnp.max(jnp.abs(f_lin(p, x) - net.apply(p, x)))))
    assert errs[1] < errs[0] / 50, errs  # the remainder is second order: shrinks ~100x

    lin_net = nets.mlp((2, 3, 1), "identity")
    q0 = lin_net.init(jax.random.key(4))
    g_lin = tangent.linearize(lambda p, x: x @ p["W"][:, 0], q0[0])  # exactly linear in W
    q = {"W": q0[0]["W"] + 1.0, "b": q0[0]["b"]}
    np.testing.assert_allclose(g_lin(q, x), x @ q["W"][:, 0], atol=1e-13)


def test_empirical_ntk_bad_inputs():
    net = nets.mlp((3, 4, 1), "relu")
    params = net.init(jax.random.key(0))
    with pytest.raises(TypeError, match="f must be a function"):
        tangent.empirical_ntk("not a function", params, np.ones((2, 3)))
    with pytest.raises(ValueError, match="x1 must be 2-D"):
        tangent.empirical_ntk(net.apply, params, np.ones(3))
    with pytest.raises(ValueError, match="x1 must be finite"):
        tangent.empirical_ntk(net.apply, params, np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="3 columns"):
        tangent.empirical_ntk(net.apply, params, np.ones((2, 4)))
    with pytest.raises(ValueError, match="params must be a list"):
        tangent.empirical_ntk(net.apply, params[:1], np.ones((2, 3)))
    two_out = nets.mlp((3, 4, 2), "relu")
    with pytest.raises(ValueError, match="scalar-output"):
        tangent.empirical_ntk(two_out.apply, two_out.init(jax.random.key(0)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"must return shape \(n,\)"):
        tangent.empirical_ntk(lambda p, x: x @ p, np.ones((3, 2)), np.ones((2, 3)))
    with pytest.raises(TypeError, match="floating"):
        tangent.empirical_ntk(lambda p, x: x @ p, np.ones(3, dtype=int), np.ones((2, 3)))


def _two_leaf_model(p, x):  # not an MLP: exercises the generic methods
    return jnp.tanh(x @ p["a"]) @ p["v"] + p["c"] * jnp.sum(x, axis=1)


@pytest.mark.parametrize("chunk", [1, 3, 4, 64])
def test_vector_product_ntk_equals_explicit_jacobian_product(chunk):
    """Any chunk size (dividing n2 or not, larger than n2) gives J(x1) J(x2)^T."""
    params = {"a": jax.random.normal(jax.random.key(0), (2, 5)), "v": jnp.arange(5.0), "c": jnp.array(0.7)}
    x1, x2 = jax.random.normal(jax.random.key(1), (6, 2)), jax.random.normal(jax.random.key(2), (7, 2))
    ref = _explicit_jtj(_two_leaf_model, params, x1, x2)
    np.testing.assert_allclose(tangent.vector_product_ntk(_two_leaf_model, params, x1, x2, chunk=chunk), ref,
                               atol=1e-12)
    net = nets.mlp((2, 6, 4, 1), "erf", b_std=0.5)
    q = net.init(jax.random.key(3))
    np.testing.assert_allclose(tangent.vector_product_ntk(net.apply, q, x1, chunk=chunk),
                               _explicit_jtj(net.apply, q, x1, x1), atol=1e-12)


def test_vector_product_ntk_bad_inputs():
    params = {"a": jnp.ones((2, 5)), "v": jnp.arange(5.0), "c": jnp.array(0.7)}
    with pytest.raises(ValueError, match="chunk"):
        tangent.vector_product_ntk(_two_leaf_model, params, np.ones((3, 2)), chunk=0)
    with pytest.raises(ValueError, match="x1 and x2 must have the same input dimension"):
        tangent.vector_product_ntk(_two_leaf_model, params, np.ones((3, 2)), np.ones((3, 4)))


# ------------------------------------------------------------------------ regression guard: fast path
def _compiled(fn, params, x):
    """XLA's own accounting of a compiled program: (temporary bytes, flops); deterministic."""
    compiled = jax.jit(fn).lower(params, x).compile()
    return compiled.memory_analysis().temp_size_in_bytes, compiled.cost_analysis()["flops"]


def test_mlp_networks_take_the_per_layer_path(monkeypatch):
    """empirical_ntk(net.apply, ...) of a nets.mlp network must use the per-layer formula.

    Three independent signs, none of them a timing: (1) with the Jacobian methods disabled it
    still returns the reference kernel; (2) the compiled program of a width-2048 network on 64
    inputs needs less than 1% of the memory of one Jacobian (64 x 4.2M float32 = 1.1 GB) and
    (3) less than 1/20 of the flops of the Jacobian contraction, by XLA's accounting of the
    compiled programs (no array is allocated: the parameters are abstract shapes).
    """
    net = nets.mlp((3, 5, 4, 1), "tanh", b_std=0.2)
    params = net.init(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (6, 3))
    reference = tangent.jacobian_ntk(net.apply, params, x)

    def forbidden(*args, **kwargs):
        raise AssertionError("the Jacobian path was taken for a nets.mlp network")

    with monkeypatch.context() as patch:
        patch.setattr(tangent, "jacobian_ntk", forbidden)
        patch.setattr(jax, "jacrev", forbidden)
        patch.setattr(jax, "jacfwd", forbidden)
        fast = tangent.empirical_ntk(net.apply, params, x)
    np.testing.assert_allclose(fast, reference, atol=1e-12)

    wide = nets.mlp((8, 2048, 2048, 1), "relu")
    shapes = jax.eval_shape(wide.init, jax.random.key(0))
    shapes = jax.tree_util.tree_map(lambda s: jax.ShapeDtypeStruct(s.shape, jnp.float32), shapes)
    xs = jax.ShapeDtypeStruct((64, 8), jnp.float32)
    jacobian_bytes = 64 * wide.num_params() * 4
    fast_bytes, fast_flops = _compiled(lambda p, x: tangent.empirical_ntk(wide.apply, p, x), shapes, xs)
    slow_bytes, slow_flops = _compiled(lambda p, x: tangent.jacobian_ntk(wide.apply, p, x), shapes, xs)
    assert slow_bytes >= jacobian_bytes, (slow_bytes, jacobian_bytes)  # the reference does hold a Jacobian
    assert fast_bytes < 0.01 * jacobian_bytes, (fast_bytes, jacobian_bytes)
    assert fast_flops < slow_flops / 20, (fast_flops, slow_flops)


def test_second_order_terms_are_the_taylor_terms_and_extend_linearize():
    net = nets.mlp((2, 8, 1), "tanh")
    p0 = net.init(jax.random.key(1))
    x = jax.random.normal(jax.random.key(2), (4, 2))
    direction = net.init(jax.random.key(3))
    terms = tangent.second_order_terms(net.apply, p0)
    f_lin = tangent.linearize(net.apply, p0)
    for eps in (1e-2, 1e-3):
        p = jax.tree_util.tree_map(lambda a, b: a + eps * b, p0, direction)
        value, slope, curvature = terms(p, x)
        np.testing.assert_allclose(value + slope, f_lin(p, x), atol=1e-13)
        # the remainder of the quadratic model is third order in eps
        err = np.max(np.abs(value + slope + 0.5 * curvature - net.apply(p, x)))
        assert err < 10 * eps**3
    # exact for a model quadratic in its parameters: f = (x . w)^2
    quad = tangent.second_order_terms(lambda w, x: (x @ w) ** 2, jnp.ones(2))
    w = jnp.array([2.0, -1.0])
    value, slope, curvature = quad(w, x)
    np.testing.assert_allclose(value + slope + 0.5 * curvature, (x @ w) ** 2, atol=1e-12)
