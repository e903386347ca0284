"""Analytic kernels: closed forms, recursions, symmetry/PSD, Monte Carlo agreement.

The dual activations themselves are tested in tests/test_gaussian.py (which imports the
independent references _adaptive_dual, _relu_reference and _np_activation from here)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from lecturekit import activations, kernels, nets

jax.config.update("jax_enable_x64", True)


def _adaptive_dual(f, g, k11, k12, k22):
    """E[f(u) g(v)] by adaptive 2-D quadrature over standard normals (independent reference).

    For smooth f, g only; ReLU uses :func:`_relu_reference` (its kink is not on a grid line).
    """
    rho = k12 / np.sqrt(k11 * k22)

    def integrand(z2, z1):
        u = np.sqrt(k11) * z1
        v = np.sqrt(k22) * (rho * z1 + np.sqrt(1.0 - rho**2) * z2)
        return f(u) * g(v) * np.exp(-(z1**2 + z2**2) / 2) / (2 * np.pi)

    return integrate.dblquad(integrand, -12.0, 12.0, -12.0, 12.0, epsabs=1e-13, epsrel=1e-12)[0]


def _relu_reference(k11, k12, k22):
    """E[relu(u) relu(v)]: the inner Gaussian integral over v given u in closed form
    (E[max(0, a + bZ)] = a Phi(a/b) + b phi(a/b)), the outer one by adaptive 1-D quadrature."""
    rho = k12 / np.sqrt(k11 * k22)
    b = np.sqrt(k22 * (1 - rho**2))

    def inner(z1):
        a = np.sqrt(k22) * rho * z1
        return a * stats.norm.cdf(a / b) + b * stats.norm.pdf(a / b)

    return integrate.quad(lambda z: np.sqrt(k11) * z * inner(z) * stats.norm.pdf(z), 0, 14, epsabs=1e-14, epsrel=1e-13)[0]


def _np_activation(name):
    return {
        "relu": (lambda z: np.maximum(z, 0.0), lambda z: (z > 0).astype(float)),
        "erf": (lambda z: __import__("scipy").special.erf(z), lambda z: 2 / np.sqrt(np.pi) * np.exp(-z**2)),
        "tanh": (np.tanh, lambda z: 1 - np.tanh(z) ** 2),
        "identity": (lambda z: z, lambda z: np.ones_like(z)),
    }[name]


def test_sphere_kernels_exact_at_endpoints_and_clipped():
    xi = jnp.array([-1.0, -1.0 - 1e-15, 0.0, 1.0, 1.0 + 1e-15])
    nngp, ntk = kernels.relu_nngp_sphere(xi), kernels.relu_ntk_sphere(xi)
    assert jnp.all(jnp.isfinite(nngp)) and jnp.all(jnp.isfinite(ntk))
    np.testing.assert_allclose(nngp, [0, 0, 1 / np.pi, 1, 1], atol=1e-15)
    np.testing.assert_allclose(ntk, [0, 0, 1 / np.pi, 2, 2], atol=1e-15)


def test_sphere_kernels_are_the_one_layer_network_kernels_over_d():
    # neural-tangents convention: K0 = x.x'/d, so the mlp kernels are exactly 1/d of these.
    d = 5
    x = jax.random.normal(jax.random.key(0), (7, d))
    x = x / jnp.linalg.norm(x, axis=1, keepdims=True)
    k = nets.mlp((d, 3, 1), "relu", w_std=1.0, out_w_std=2**0.5).kernels(x)
    xi = x @ x.T
    np.testing.assert_allclose(d * k.nngp, kernels.relu_nngp_sphere(xi), atol=1e-12)
    np.testing.assert_allclose(d * k.ntk, kernels.relu_ntk_sphere(xi), atol=1e-12)


def _reference_recursion(x, depth, name, w_std, b_std, out_w_std, out_b_std):
    """Layer recursion with every expectation by adaptive quadrature (NumPy only)."""
    phi, dphi = _np_activation(name)
    d = x.shape[1]
    K = w_std**2 * x @ x.T / d + b_std**2
    T = K.copy()
    for layer in range(depth):
        w, b = (out_w_std, out_b_std) if layer == depth - 1 else (w_std, b_std)
        n = len(x)
        E, D = np.empty((n, n)), np.empty((n, n))
        for i in range(n):
            for j in range(n):
                if i == j:
                    r = np.sqrt(K[i, i])
                    E[i, j] = integrate.quad(lambda z: phi(r * z) ** 2 * np.exp(-z * z / 2) / np.sqrt(2 * np.pi), -14, 14, points=[0], epsabs=1e-14, limit=200)[0]
                    D[i, j] = integrate.quad(lambda z: dphi(r * z) ** 2 * np.exp(-z * z / 2) / np.sqrt(2 * np.pi), -14, 14, points=[0], epsabs=1e-14, limit=200)[0]
                elif name == "relu":
                    E[i, j] = _relu_reference(K[i, i], K[i, j], K[j, j])
                    D[i, j] = (np.pi - np.arccos(K[i, j] / np.sqrt(K[i, i] * K[j, j]))) / (2 * np.pi)
                else:
                    E[i, j] = _adaptive_dual(phi, phi, K[i, i], K[i, j], K[j, j])
                    D[i, j] = _adaptive_dual(dphi, dphi, K[i, i], K[i, j], K[j, j])
        K, T = w**2 * E + b**2, w**2 * E + b**2 + w**2 * D * T
    return K, T


@pytest.mark.parametrize("name, tol", [("relu", 1e-8), ("erf", 1e-8), ("tanh", 1e-7)])
def test_deep_recursion_matches_quadrature_reference(name, tol):
    x = np.array([[1.0, 0.5, -0.3], [-0.2, 0.9, 0.4]])
    cfg = dict(w_std=1.3, b_std=0.2, out_w_std=0.9, out_b_std=0.1)
    k = kernels.mlp_kernels(x, depth=2, activation=name, **cfg)
    K, T = _reference_recursion(x, 2, name, **cfg)
    np.testing.assert_allclose(k.nngp, K, atol=tol, rtol=0)
    np.testing.assert_allclose(k.ntk, T, atol=tol, rtol=0)


def test_identity_network_kernels_in_closed_form():
    # Deep linear network: K^(l) = w^2 K^(l-1) + b^2 and Theta accumulates one K per layer.
    x = jax.random.normal(jax.random.key(3), (4, 6))
    k = nets.mlp((6, 9, 9, 1), "identity", w_std=1.5, b_std=0.0, out_w_std=1.0).kernels(x)
    k0 = x @ x.T / 6
    np.testing.assert_allclose(k.nngp, 1.5**4 * k0, rtol=1e-12)
    np.testing.assert_allclose(k.ntk, 3 * 1.5**4 * k0, rtol=1e-12)


@settings(max_examples=8)
@given(
    name=st.sampled_from(["relu", "erf", "tanh", "identity", "softplus", "swish"]),
    depth=st.integers(1, 3),
    b_std=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
)
def test_kernels_symmetric_and_psd(name, depth, b_std, seed):
    x = jax.random.normal(jax.random.key(seed), (6, 3))
    k = nets.mlp((3, 8, 8, 8, 1)[: depth + 1] + (1,), name, b_std=b_std).kernels(x)
    for mat in (k.nngp, k.ntk):
        np.testing.assert_allclose(mat, mat.T, atol=1e-12)
        scale = float(jnp.max(jnp.abs(jnp.diag(mat))))
        assert float(jnp.linalg.eigvalsh(mat).min()) > -1e-9 * scale


def test_cross_kernel_blocks_agree_with_joint_kernel():
    x = jax.random.normal(jax.random.key(4), (7, 3))
    net = nets.mlp((3, 5, 5, 1), "erf", b_std=0.3)
    joint = net.kernels(x)
    cross = net.kernels(x[:3], x[3:])
    np.testing.assert_allclose(cross.ntk, joint.ntk[:3, 3:], rtol=1e-12)
    np.testing.assert_allclose(cross.nngp, joint.nngp[:3, 3:], rtol=1e-12)


def test_nngp_matches_monte_carlo_over_random_networks():
    # One hidden layer: E_theta[f(x) f(x')] equals the NNGP exactly at every width, so the
    # Monte Carlo mean over 2000 networks must agree within a few standard errors.
    x = jax.random.normal(jax.random.key(5), (3, 4))
    for name in ("relu", "erf"):
        net = nets.mlp((4, 64, 1), name, b_std=0.1, out_b_std=0.2)
        draws = net.init_many(jax.random.key(6), 2000)  # 2000 networks, one draw
        outs = jax.vmap(net.apply, in_axes=(0, None))(draws, x)  # (2000, 3)
        prods = outs[:, :, None] * outs[:, None, :]
        mean, err = np.asarray(prods.mean(0)), np.asarray(prods.std(0) / np.sqrt(len(outs)))
        assert np.all(np.abs(mean - np.asarray(net.nngp(x))) < 5 * err), (name, mean, net.nngp(x))


def test_wide_empirical_ntk_close_to_analytic():
    from lecturekit import tangent

    x = jax.random.normal(jax.random.key(7), (6, 3))
    net = nets.mlp((3, 4096, 4096, 1), "relu")
    emp = tangent.empirical_ntk(net.apply, net.init(jax.random.key(8)), x)
    ana = net.kernels(x).ntk
    rel = float(jnp.linalg.norm(emp - ana) / jnp.linalg.norm(ana))
    assert rel < 0.1, rel


def test_quadrature_flag_reproduces_closed_form_for_smooth_erf():
    # Moderate variances (~0.3): 128^2 Gauss-Hermite resolves erf' = exp(-u^2) to < 1e-8 there.
    x = 0.5 * jax.random.normal(jax.random.key(9), (4, 2))
    closed = kernels.mlp_kernels(x, depth=2, activation="erf", w_std=1.0)
    quad = kernels.mlp_kernels(x, depth=2, activation="erf", w_std=1.0, quadrature=True)
    np.testing.assert_allclose(quad.ntk, closed.ntk, atol=1e-8)


def test_bad_inputs_to_recursions():
    with pytest.raises(ValueError, match="unknown activation 'gelu2'"):
        kernels.mlp_kernels(np.ones((2, 2)), depth=1, activation="gelu2")
    with pytest.raises(ValueError, match="depth must be >= 1"):
        kernels.mlp_kernels(np.ones((2, 2)), depth=0)
    with pytest.raises(ValueError, match="x1 must be 2-D"):
        kernels.mlp_kernels(np.ones(3), depth=1)
    with pytest.raises(ValueError, match="same input dimension"):
        kernels.mlp_kernels(np.ones((2, 2)), np.ones((2, 3)), depth=1)
    with pytest.raises(ValueError, match="w_std must be >= 0"):
        kernels.mlp_kernels(np.ones((2, 2)), depth=1, w_std=-1.0)
    with pytest.raises(ValueError, match="xi must be finite"):
        kernels.relu_ntk_sphere([0.1, np.nan])
    assert "relu" in activations.NAMES


@pytest.mark.default_xla  # bit-for-bit equality of two different programs
@pytest.mark.parametrize("name", ["relu", "erf", "tanh"])
def test_tiled_kernels_equal_one_compiled_block(monkeypatch, name):
    """Kernels larger than kernels.TILE are assembled tile by tile: same numbers as one block,
    a symmetric matrix with the same (exact) variances on the diagonal when x2 is None."""
    x = jax.random.normal(jax.random.key(0), (11, 3))
    y = jax.random.normal(jax.random.key(1), (6, 3))
    cfg = dict(depth=3, activation=name, b_std=0.3, out_b_std=0.2)
    whole_sym, whole_cross = kernels.mlp_kernels(x, **cfg), kernels.mlp_kernels(x, y, **cfg)
    monkeypatch.setattr(kernels, "TILE", 4)
    tiled_sym, tiled_cross = kernels.mlp_kernels(x, **cfg), kernels.mlp_kernels(x, y, **cfg)
    for whole, tiled in zip(whole_sym + whole_cross, tiled_sym + tiled_cross):
        assert tiled.shape == whole.shape
        np.testing.assert_allclose(tiled, whole, rtol=1e-13, atol=1e-15)
    for tiled, whole in zip(tiled_sym, whole_sym):
        np.testing.assert_allclose(tiled, np.asarray(tiled).T, rtol=1e-13, atol=1e-15)
        assert np.array_equal(np.diag(tiled), np.diag(whole))


def test_one_step_of_the_recursion_is_the_covariance_map():
    """mlp_kernels and criticality.covariance_map share the one layer step: a depth-1 NNGP
    with readout (w_std, b_std) is one covariance_map of K^(1)."""
    from lecturekit import criticality

    x = np.array([[1.0, 0.5, -0.3], [-0.2, 0.9, 0.4]])
    k = kernels.mlp_kernels(x, depth=1, activation="tanh", w_std=1.3, b_std=0.2, out_w_std=1.3, out_b_std=0.2)
    k1 = 1.3**2 * x @ x.T / 3 + 0.2**2
    k11, k12, k22 = criticality.covariance_map(k1[0, 0], k1[0, 1], k1[1, 1], "tanh", w_std=1.3, b_std=0.2,
                                               nodes=128)
    np.testing.assert_allclose([k.nngp[0, 0], k.nngp[0, 1], k.nngp[1, 1]], [k11, k12, k22], rtol=1e-13)
