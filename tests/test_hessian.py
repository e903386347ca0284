"""Tests of lecturekit.hessian against closed-form spectra and dense jax.hessian."""

from __future__ import annotations

import time

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lecturekit import NumericalWarning, hessian, nets

jax.config.update("jax_enable_x64", True)

X = 0.8  # the scalar input of the one-hidden-layer examples


def _tanh_pp(z):
    t = jnp.tanh(z)
    return -2.0 * t * (1.0 - t**2)


def _one_hidden(m, seed=3):
    k1, k2 = jax.random.split(jax.random.key(seed))
    return jax.random.normal(k1, (m,)), jax.random.normal(k2, (m,))


def _fixed_output(v, m):
    return lambda w: jnp.sum(v * jnp.tanh(w * X)) / jnp.sqrt(m)


def _both_layers(m):
    return lambda p: jnp.sum(p["v"] * jnp.tanh(p["w"] * X)) / jnp.sqrt(m)


def _exact_diagonal(w, v, m):
    """max_i |v_i phi''(w_i x)| x^2 / sqrt(m): the Hessian is diagonal."""
    return float(jnp.max(jnp.abs(v * _tanh_pp(w * X)))) * X**2 / np.sqrt(m)


def _exact_blocks(w, v, m):
    """Eigenvalues (a_i +- sqrt(a_i^2 + 4 c_i^2)) / (2 sqrt m) of the 2x2 blocks."""
    a = v * _tanh_pp(w * X) * X**2
    c = (1.0 - jnp.tanh(w * X) ** 2) * X
    root = jnp.sqrt(a**2 + 4 * c**2)
    return np.sort(np.concatenate([(a + root), (a - root)]) / (2 * np.sqrt(m)))


@pytest.mark.parametrize("m", [10**2, 10**3, 10**4, 10**5])
def test_diagonal_case_matches_closed_form(m):
    w, v = _one_hidden(m)
    got = hessian.spectral_norm(_fixed_output(v, m), w)
    exact = _exact_diagonal(w, v, m)
    assert abs(got - exact) <= 1e-4 * exact, (m, got, exact)


@pytest.mark.parametrize("m", [10**2, 10**4, 10**5])
def test_block_case_matches_closed_form(m):
    w, v = _one_hidden(m, seed=5)
    got = hessian.spectral_norm(_both_layers(m), {"w": w, "v": v})
    eig = _exact_blocks(w, v, m)
    exact = max(abs(eig[0]), abs(eig[-1]))
    assert abs(got - exact) <= 1e-4 * exact, (m, got, exact)


def test_width_one_million_is_fast_and_right():
    m = 10**6
    w, v = _one_hidden(m, seed=7)
    f = _fixed_output(v, m)
    start = time.perf_counter()
    got = hessian.spectral_norm(f, w)
    elapsed = time.perf_counter() - start
    exact = _exact_diagonal(w, v, m)
    assert abs(got - exact) <= 1e-4 * exact, (got, exact)
    # 10 s is the target on an idle 2-core machine; allow for a shared, loaded one.
    assert elapsed < 30.0, elapsed


def test_dense_hessian_and_blocks_agree():
    m = 30
    w, v = _one_hidden(m, seed=11)
    dense = hessian.dense_hessian(_both_layers(m), {"v": v, "w": w})
    assert dense.shape == (2 * m, 2 * m)
    np.testing.assert_allclose(np.linalg.eigvalsh(np.asarray(dense)), _exact_blocks(w, v, m), atol=1e-12)


def test_matches_dense_hessian_on_small_pytree():
    net = nets.mlp((3, 7, 5, 1), "tanh", b_std=0.3)
    params = net.init(jax.random.key(1))
    x = jnp.array([[0.3, -1.2, 0.5]])
    f = lambda p: net.apply(p, x)[0]
    dense = np.asarray(hessian.dense_hessian(f, params))
    exact = np.max(np.abs(np.linalg.eigvalsh(dense)))
    got, grad_norm = hessian.spectral_norm(f, params, tol=1e-10, return_gradient_norm=True)
    assert abs(got - exact) <= 1e-8 * exact, (got, exact)
    grads = jax.tree_util.tree_leaves(jax.jit(jax.grad(f))(params))
    expected_grad = float(np.sqrt(sum(np.sum(np.asarray(g) ** 2) for g in grads)))
    assert abs(grad_norm - expected_grad) <= 1e-12 * expected_grad, (grad_norm, expected_grad)
    # and the Hessian-vector product is the dense matrix times the flat vector
    vec = jax.tree_util.tree_map(lambda a: jnp.cos(jnp.arange(a.size).reshape(a.shape)), params)
    flat_v, _ = jax.flatten_util.ravel_pytree(vec)
    flat_hv, _ = jax.flatten_util.ravel_pytree(hessian.hvp(f, params, vec))
    np.testing.assert_allclose(flat_hv, dense @ np.asarray(flat_v), atol=1e-12)


def test_top_eigenpairs_are_eigenpairs():
    net = nets.mlp((2, 12, 1), "softplus")
    params = net.init(jax.random.key(2))
    x = jnp.array([[1.0, -0.5]])
    f = lambda p: net.apply(p, x)[0]
    dense = np.asarray(hessian.dense_hessian(f, params))
    eig = np.linalg.eigvalsh(dense)
    pairs = hessian.top_eigenpairs(f, params, 2, tol=1e-12)
    expected = eig[np.argsort(-np.abs(eig))[:2]]
    np.testing.assert_allclose(pairs.values, expected, rtol=1e-8)
    for value, vec in zip(pairs.values, pairs.vectors):
        flat, _ = jax.flatten_util.ravel_pytree(vec)
        flat = np.asarray(flat)
        assert abs(np.linalg.norm(flat) - 1) < 1e-8
        np.testing.assert_allclose(dense @ flat, value * flat, atol=1e-7)


def _scale(v, d):
    return d * v


@settings(max_examples=12, deadline=None)
@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=40), st.integers(0, 2**31 - 1))
def test_lanczos_diagonal_any_spectrum(diag, seed):
    """A diagonal matrix diag(d) (zero-padded to 40): the extreme Ritz values are max/min d."""
    d = np.zeros(40)
    d[: len(diag)] = diag
    start = np.random.default_rng(seed).normal(size=40)
    res = hessian.lanczos(_scale, start, tol=1e-10, args=(d,))  # one compiled step for every example
    got = max(abs(res.ritz_values[0]), abs(res.ritz_values[-1]))
    exact = float(np.max(np.abs(d)))
    assert abs(got - exact) <= 1e-8 * max(1.0, exact), (got, exact, res.iterations)


def test_spectral_norm_of_a_quadratic():
    d = jnp.array([3.0, -7.5, 0.0, 2.0, 7.4])
    got = hessian.spectral_norm(lambda t: 0.5 * jnp.sum(d * t**2), jnp.ones(5))
    assert abs(got - 7.5) <= 1e-12, got


def test_two_by_two_blocks_closed_form():
    """Block-diagonal quadratic with blocks [[a, c], [c, 0]]: norm max (|a| + sqrt(a^2 + 4c^2)) / 2."""
    rng = np.random.default_rng(0)
    a, c = rng.normal(size=50), rng.normal(size=50)
    f = lambda p: jnp.sum(0.5 * a * p["x"] ** 2 + c * p["x"] * p["y"])
    got = hessian.spectral_norm(f, {"x": jnp.ones(50), "y": jnp.ones(50)})
    exact = np.max((np.abs(a) + np.sqrt(a**2 + 4 * c**2)) / 2)
    assert abs(got - exact) <= 1e-6 * exact, (got, exact)


def test_returns_estimate_at_max_iter_without_raising():
    d = jnp.linspace(-1.0, 1.0, 2000)
    with pytest.warns(NumericalWarning, match="max_iter = 5"):
        got = hessian.spectral_norm(lambda t: 0.5 * jnp.sum(d * t**2), jnp.ones(2000), max_iter=5)
    assert 0.0 < got <= 1.0 + 1e-12


def test_lanczos_result_fields():
    d = jnp.arange(1.0, 11.0)
    res = hessian.lanczos(lambda v: d * v, jnp.ones(10), tol=1e-12)
    assert res.converged and res.iterations <= 10
    np.testing.assert_allclose(res.ritz_values[-1], 10.0, rtol=1e-12)


def test_bad_inputs():
    with pytest.raises(TypeError, match="f must be"):
        hessian.spectral_norm(3.0, jnp.ones(3))
    with pytest.raises(ValueError, match="scalar"):
        hessian.spectral_norm(lambda t: t**2, jnp.ones(3))
    with pytest.raises(TypeError, match="floating"):
        hessian.spectral_norm(lambda t: jnp.sum(t), jnp.arange(3))
    with pytest.raises(ValueError, match="finite"):
        hessian.spectral_norm(lambda t: jnp.sum(t**2), jnp.array([1.0, jnp.nan]))
    with pytest.raises(ValueError, match="tol"):
        hessian.spectral_norm(lambda t: jnp.sum(t**2), jnp.ones(3), tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        hessian.spectral_norm(lambda t: jnp.sum(t**2), jnp.ones(3), max_iter=0)
    with pytest.raises(TypeError, match="key"):
        hessian.spectral_norm(lambda t: jnp.sum(t**2), jnp.ones(3), key=0)
    with pytest.raises(ValueError, match="max_params"):
        hessian.dense_hessian(lambda t: jnp.sum(t**2), jnp.ones(10), max_params=5)
    with pytest.raises(ValueError, match="params"):
        hessian.hvp(lambda t: jnp.sum(t**2), jnp.ones(3), jnp.ones(4))
