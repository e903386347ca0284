"""Tests of lecturekit.hessian against closed-form spectra and dense jax.hessian."""

from __future__ import annotations

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


def test_width_one_million_is_right():
    # Its time (goal: under 10 s on 2 quiet cores) is measured by `make bench`
    # (benchmarks/hessian.py), not here: a busy machine must not fail the unit tests.
    m = 10**6
    w, v = _one_hidden(m, seed=7)
    got = hessian.spectral_norm(_fixed_output(v, m), w)
    exact = _exact_diagonal(w, v, m)
    assert abs(got - exact) <= 1e-4 * exact, (got, exact)


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
    got, grad_norm = hessian.spectral_and_gradient_norm(f, params, tol=1e-10)
    assert hessian.spectral_norm(f, params, tol=1e-10) == got
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


def test_lanczos_tridiagonal_matches_host_lanczos_and_dense():
    """The traceable version builds the same T as the host one (both reorthogonalize)."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(30, 30))
    a = (a + a.T) / 2
    start = rng.normal(size=30)
    host = hessian.lanczos(lambda v, m: m @ v, start, tol=1e-30, max_iter=12, min_iter=12, args=(a,))
    tri = jax.jit(lambda v: hessian.lanczos_tridiagonal(lambda u: a @ u, v, 12))(start)
    np.testing.assert_allclose(tri.alpha, host.alpha, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tri.beta, host.beta, rtol=1e-10, atol=1e-12)
    # 30 steps: the Krylov space is everything, the nodes are the eigenvalues
    full = hessian.lanczos_tridiagonal(lambda u: a @ u, start, 30)
    np.testing.assert_allclose(hessian.lanczos_quadrature(full).nodes, np.linalg.eigvalsh(a), atol=1e-10)


def test_lanczos_quadrature_is_gauss_quadrature_of_the_start_vector():
    """sum_j w_j theta_j^p = q^T A^p q for p < 2k; weights sum to 1; vmap over start vectors."""
    rng = np.random.default_rng(4)
    d = rng.normal(size=50)
    starts = rng.normal(size=(3, 50))
    k = 5

    @jax.jit
    @jax.vmap
    def rule(v):
        return hessian.lanczos_quadrature(hessian.lanczos_tridiagonal(lambda u: d * u, v, k))

    nodes, weights = (np.asarray(x) for x in rule(starts))
    assert nodes.shape == weights.shape == (3, k)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-12)
    for q, th, w in zip(starts, nodes, weights):
        q = q / np.linalg.norm(q)
        for p in range(2 * k):
            np.testing.assert_allclose(np.sum(w * th**p), np.sum(q**2 * d**p), rtol=1e-8, atol=1e-10)
    plain = hessian.lanczos_tridiagonal(lambda u: d * u, starts[0], k, reorthogonalize=False)
    np.testing.assert_allclose(plain.alpha, hessian.lanczos_tridiagonal(lambda u: d * u, starts[0], k).alpha,
                               rtol=1e-8)


def test_lanczos_tridiagonal_invariant_subspace():
    """A start vector in a 2-dimensional invariant subspace: the rest of T is a zero block of weight 0."""
    d = np.array([1.0, 2.0, 3.0, 4.0])
    tri = hessian.lanczos_tridiagonal(lambda u: d * u, np.array([1.0, 1.0, 0.0, 0.0]), 4)
    np.testing.assert_allclose(tri.alpha, [1.5, 1.5, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(tri.beta, [0.5, 0.0, 0.0], atol=1e-12)
    rule = hessian.lanczos_quadrature(tri)
    assert np.all(np.isfinite(rule.nodes))
    np.testing.assert_allclose(np.sort(rule.nodes[rule.weights > 1e-12]), [1.0, 2.0], atol=1e-12)


def test_top_eigenvalue_is_traceable_and_matches_dense():
    net = nets.mlp((3, 7, 5, 1), "tanh", b_std=0.3)
    params = net.init(jax.random.key(1))
    x = jnp.array([[0.3, -1.2, 0.5], [1.0, 0.2, -0.4]])
    loss = lambda p: 0.5 * jnp.mean((net.apply(p, x) - 1.0) ** 2)
    dense = np.linalg.eigvalsh(np.asarray(hessian.dense_hessian(loss, params)))[-1]
    got = jax.jit(lambda p, k: hessian.top_eigenvalue(loss, p, key=k, steps=40))(params, jax.random.key(2))
    assert float(got) == pytest.approx(dense, rel=1e-8)
    with pytest.raises(ValueError, match="steps"):
        hessian.top_eigenvalue(loss, params, key=jax.random.key(2), steps=0)


def test_lanczos_tridiagonal_bad_inputs():
    with pytest.raises(ValueError, match="steps"):
        hessian.lanczos_tridiagonal(lambda u: u, np.ones(3), 4)
    with pytest.raises(ValueError, match="v0"):
        hessian.lanczos_tridiagonal(lambda u: u, np.zeros(3), 2)
    with pytest.raises(TypeError, match="matvec"):
        hessian.lanczos_tridiagonal(3.0, np.ones(3), 2)
    with pytest.raises(TypeError, match="tri"):
        hessian.lanczos_quadrature((np.ones(2), np.ones(1)))


def test_trace_estimate_is_unbiased_within_its_standard_error():
    d = np.linspace(-1.0, 3.0, 300)
    f = lambda t: 0.5 * jnp.sum(d * t**2)
    est = hessian.trace_estimate(f, jnp.ones(300), key=jax.random.key(5), num_probes=200)
    se = np.sqrt(2 * np.sum(d**2) / 200)        # Var(v^T H v) = 2 ||H||_F^2 for Gaussian v
    assert abs(est - d.sum()) < 4 * se, (est, d.sum(), se)
    assert hessian.trace_estimate(f, jnp.ones(300), key=jax.random.key(5), num_probes=200) == est


def test_spectral_density_is_gauss_quadrature_of_each_probe():
    """Probe i is sampling.standard_normal(fold_in(key, i)); its rule integrates q^T H^p q exactly."""
    from lecturekit import sampling

    rng = np.random.default_rng(6)
    d = rng.normal(size=60)
    f = lambda t: 0.5 * jnp.sum(d * t**2)
    key = jax.random.key(7)
    dens = hessian.spectral_density(f, jnp.ones(60), key=key, num_probes=4, num_steps=6)
    assert dens.nodes.shape == dens.weights.shape == (4, 6)
    np.testing.assert_allclose(np.sum(dens.weights, axis=1), 1.0, rtol=1e-12)
    for i in range(4):
        q = np.asarray(sampling.standard_normal(jax.random.fold_in(key, i), (60,)))
        q = q / np.linalg.norm(q)
        for p in range(12):
            np.testing.assert_allclose(np.sum(dens.weights[i] * dens.nodes[i] ** p), np.sum(q**2 * d**p),
                                       rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="num_steps"):
        hessian.spectral_density(f, jnp.ones(60), key=key, num_steps=61)
    with pytest.raises(TypeError, match="key"):
        hessian.spectral_density(f, jnp.ones(60), key=0)


# --------------------------------------------------------------------------- SLQ on a network
def _small_network_loss():
    from lecturekit import sampling, training

    net = nets.mlp((4, 12, 12, 3), "tanh", b_std=0.3, out_b_std=0.3)
    x = sampling.standard_normal(jax.random.key(21), (30, 4))
    y = jax.nn.one_hot(jnp.arange(30) % 3, 3)
    params = net.init(jax.random.key(22))
    loss = lambda p: training.cross_entropy(net.apply(p, x), y)  # noqa: E731
    return loss, params


def test_slq_moments_and_distribution_match_dense_eigenvalues():
    """Moments within 4 standard errors derived from the probe count, and W1 within the
    Jackson bound pi (b - a) / (4 m) plus a probe term 4 (b - a) / sqrt(N P)."""
    loss, params = _small_network_loss()
    eig = np.linalg.eigvalsh(np.asarray(hessian.dense_hessian(loss, params)))
    size, probes, steps = eig.size, 40, 30
    dens = hessian.spectral_density(loss, params, key=jax.random.key(23), num_probes=probes, num_steps=steps)
    nodes, weights = np.asarray(dens.nodes), np.asarray(dens.weights)
    for power in (1, 2, 3):
        est = np.mean(np.sum(weights * nodes**power, axis=1))
        # q^T A q / P-normalized: Var <= 2 ||A||_F^2 / P^2 per probe for A = H^power
        se = np.sqrt(2 * np.sum(eig ** (2 * power)) / probes) / size
        assert abs(est - np.mean(eig**power)) < 4 * se, (power, est, np.mean(eig**power), se)
    grid = np.linspace(eig[0] - 1e-3, eig[-1] + 1e-3, 5001)
    exact_cdf = np.searchsorted(eig, grid, side="right") / size
    w1 = np.trapezoid(np.abs(hessian.spectral_cdf(dens, grid) - exact_cdf), grid)
    spread = eig[-1] - eig[0]
    assert w1 < np.pi * spread / (4 * steps) + 4 * spread / np.sqrt(probes * size), (w1, spread)
    # a wrong density (the exact one shifted by 10 % of the spread) is far outside that bound
    shifted = hessian.SpectralDensity(np.asarray(dens.nodes) + 0.1 * spread, dens.weights)
    w1_shifted = np.trapezoid(np.abs(hessian.spectral_cdf(shifted, grid) - exact_cdf), grid)
    assert w1_shifted > 2 * w1


def test_hutchinson_on_a_network_within_its_standard_error():
    loss, params = _small_network_loss()
    eig = np.linalg.eigvalsh(np.asarray(hessian.dense_hessian(loss, params)))
    for seed in (1, 2, 3):
        est = hessian.trace_estimate(loss, params, key=jax.random.key(seed), num_probes=64)
        assert abs(est - eig.sum()) < 4 * np.sqrt(2 * np.sum(eig**2) / 64), (seed, est, eig.sum())


def test_slq_is_reproducible_with_its_key():
    loss, params = _small_network_loss()
    a = hessian.spectral_density(loss, params, key=jax.random.key(5), num_probes=3, num_steps=10)
    b = hessian.spectral_density(loss, params, key=jax.random.key(5), num_probes=3, num_steps=10)
    c = hessian.spectral_density(loss, params, key=jax.random.key(6), num_probes=3, num_steps=10)
    np.testing.assert_array_equal(a.nodes, b.nodes)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert not np.allclose(a.weights, c.weights)


def test_smoothed_density_and_cdf():
    dens = hessian.SpectralDensity(np.array([[0.0, 1.0, 2.0], [0.5, 1.0, 3.0]]),
                                   np.array([[0.2, 0.3, 0.5], [0.25, 0.25, 0.5]]))
    grid = np.linspace(-3.0, 6.0, 9001)
    rho = hessian.smoothed_density(dens, grid, width=0.2)
    assert np.trapezoid(rho, grid) == pytest.approx(1.0, abs=1e-8)
    assert np.trapezoid(rho * grid, grid) == pytest.approx(np.mean(np.sum(dens.nodes * dens.weights, 1)), abs=1e-8)
    cdf = hessian.spectral_cdf(dens, np.array([-1.0, 0.0, 0.75, 1.0, 2.5, 3.0]))
    np.testing.assert_allclose(cdf, [0.0, 0.1, 0.225, 0.5, 0.75, 1.0])
    with pytest.raises(ValueError, match="width"):
        hessian.smoothed_density(dens, grid, width=0.0)
    with pytest.raises(TypeError, match="density"):
        hessian.spectral_cdf((dens.nodes, dens.weights), grid)


# ------------------------------------------------------------ losses of model outputs
def _half_square(f, y):
    return 0.5 * jnp.sum((f - y) ** 2, axis=1)


def _two_layer(p, x):
    return jnp.tanh(x @ p["w"]) @ p["a"]


def _problem():
    rng = np.random.default_rng(7)
    params = {"w": rng.standard_normal((3, 4)), "a": rng.standard_normal((4, 2))}
    return params, rng.standard_normal((6, 3)), rng.standard_normal((6, 2))


def test_flatten_matches_ravel_pytree_concrete_and_traced():
    params, _, _ = _problem()
    flat, unravel = hessian.flatten(params)
    ref, _ = jax.flatten_util.ravel_pytree(params)
    np.testing.assert_array_equal(flat, ref)
    assert unravel.size == flat.size == 20
    back = unravel(jnp.asarray(flat))
    np.testing.assert_array_equal(back["w"], params["w"])
    traced = jax.jit(lambda p: hessian.flatten(p)[0])(params)
    np.testing.assert_array_equal(traced, ref)
    # hashable and equal by value: one compiled program per parameter layout
    assert hessian.flatten(params)[1] == unravel and hash(unravel) == hash(
        hessian.flatten(params)[1]
    )


def test_check_dense_size():
    params, _, _ = _problem()
    assert hessian.check_dense_size(params, 20) == 20
    with pytest.raises(ValueError, match="max_params"):
        hessian.check_dense_size(params, 19)


def test_gauss_newton_split_is_the_chain_rule():
    params, x, y = _problem()
    H, G, R = hessian.gauss_newton_split(_half_square, _two_layer, params, x, y)
    flat, unravel = hessian.flatten(params)
    dense = hessian.dense_hessian(
        lambda p: hessian.output_loss(_half_square, _two_layer, p, x, y), params
    )
    np.testing.assert_allclose(H, dense, atol=1e-10)
    np.testing.assert_allclose(H, G + R, atol=1e-10)
    jac = jax.jacrev(lambda t: _two_layer(unravel(t), x))(jnp.asarray(flat))
    jac = jac.reshape(-1, flat.size)  # square loss: A_i = I, G = J^T J / n
    np.testing.assert_allclose(G, jac.T @ jac / x.shape[0], atol=1e-10)


def test_matrix_free_products_match_the_dense_parts():
    params, x, y = _problem()
    _, G, R = hessian.gauss_newton_split(_half_square, _two_layer, params, x, y)
    flat, unravel = hessian.flatten(params)
    v_flat = np.random.default_rng(8).standard_normal(flat.size)
    v = unravel(jnp.asarray(v_flat))
    gv = hessian.gauss_newton_vector_product(_half_square, _two_layer, params, x, y, v)
    rv = hessian.residual_vector_product(_half_square, _two_layer, params, x, y, v)
    np.testing.assert_allclose(hessian.flatten(gv)[0], G @ v_flat, atol=1e-10)
    np.testing.assert_allclose(hessian.flatten(rv)[0], R @ v_flat, atol=1e-10)


def test_output_engines_are_traceable_and_compile_once():
    params, x, y = _problem()
    loss = jax.jit(lambda p: hessian.output_loss(_half_square, _two_layer, p, x, y))
    np.testing.assert_allclose(
        loss(params), np.mean(_half_square(_two_layer(params, x), y)), rtol=1e-12
    )
    split = jax.jit(
        lambda p: hessian.gauss_newton_split(_half_square, _two_layer, p, x, y)
    )
    np.testing.assert_allclose(
        split(params).hessian,
        hessian.gauss_newton_split(_half_square, _two_layer, params, x, y).hessian,
        atol=1e-12,
    )
    before = hessian._gauss_newton_split._cache_size()
    for _ in range(3):
        hessian.gauss_newton_split(_half_square, _two_layer, params, x, y)
    assert hessian._gauss_newton_split._cache_size() - before <= 1


def test_output_jacobian_is_the_jacobian_of_the_transformed_outputs():
    params, x, _ = _problem()
    jac, value = hessian.output_jacobian(jnp.sin, _two_layer, params, x)
    flat, unravel = hessian.flatten(params)
    ref = jax.jacrev(lambda t: jnp.sin(_two_layer(unravel(t), x)))(jnp.asarray(flat))
    np.testing.assert_allclose(jac, ref, atol=1e-12)
    np.testing.assert_allclose(value, jnp.sin(_two_layer(params, x)), atol=1e-12)
    assert hessian.output_shape(_two_layer, params, x) == (6, 2)
    with pytest.raises(ValueError, match="max_params"):
        hessian.output_jacobian(jnp.sin, _two_layer, params, x, max_params=5)


def test_dense_hessian_compiles_once():
    params, x, y = _problem()

    def loss(p):
        return jnp.mean(_half_square(_two_layer(p, x), y))

    before = hessian._dense_hessian._cache_size()
    for _ in range(3):
        hessian.dense_hessian(loss, params)
    assert hessian._dense_hessian._cache_size() - before == 1
