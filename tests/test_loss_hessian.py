"""Tests of lecturekit.loss_hessian: the chain rule split, Fisher, class structure, overlaps."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from lecturekit import hessian, loss_hessian, nets, sampling, training

jax.config.update("jax_enable_x64", True)

NET = nets.mlp((3, 6, 6, 3), "tanh", b_std=0.5, out_b_std=0.5)
X = sampling.standard_normal(jax.random.key(1), (8, 3))
P0 = NET.init(jax.random.key(2))
ONEHOT = jax.nn.one_hot(jnp.arange(8) % 3, 3)
TARGETS = sampling.standard_normal(jax.random.key(3), (8, 3))


@pytest.mark.parametrize("loss, y", [("square", TARGETS), ("cross_entropy", ONEHOT)])
def test_hessian_is_gauss_newton_plus_residual(loss, y):
    H, G, R = loss_hessian.decompose(NET.apply, P0, X, y, loss=loss)
    ref = hessian.dense_hessian(lambda p: loss_hessian.loss_value(NET.apply, p, X, y, loss=loss), P0)
    np.testing.assert_allclose(H, ref, atol=1e-12)
    np.testing.assert_allclose(H, G + R, atol=1e-12 * float(jnp.abs(H).max()))
    assert np.linalg.eigvalsh(np.asarray(G)).min() > -1e-12
    bound = 8 * 3 if loss == "square" else 8 * 2          # n k, n (k - 1)
    assert np.linalg.matrix_rank(np.asarray(G), tol=1e-9 * float(jnp.abs(G).max())) == bound


def test_loss_value_matches_the_training_losses():
    assert float(loss_hessian.loss_value(NET.apply, P0, X, TARGETS)) == pytest.approx(
        float(training.square_loss(NET.apply(P0, X), TARGETS)), rel=1e-14)
    assert float(loss_hessian.loss_value(NET.apply, P0, X, ONEHOT, loss="cross_entropy")) == pytest.approx(
        float(training.cross_entropy(NET.apply(P0, X), ONEHOT)), rel=1e-14)


@pytest.mark.parametrize("loss, y", [("square", TARGETS), ("cross_entropy", ONEHOT)])
def test_matrix_free_products_match_the_dense_parts(loss, y):
    _, G, R = loss_hessian.decompose(NET.apply, P0, X, y, loss=loss)
    flat, unravel = ravel_pytree(P0)
    v = sampling.standard_normal(jax.random.key(4), flat.shape)
    gv = ravel_pytree(loss_hessian.gauss_newton_product(NET.apply, P0, X, y, unravel(v), loss=loss))[0]
    rv = ravel_pytree(loss_hessian.residual_product(NET.apply, P0, X, y, unravel(v), loss=loss))[0]
    np.testing.assert_allclose(gv, G @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rv, R @ v, rtol=1e-10, atol=1e-12)


def test_residual_vanishes_at_interpolation():
    y = NET.apply(P0, X)                                   # the model fits its targets exactly
    H, G, R = loss_hessian.decompose(NET.apply, P0, X, y)
    assert float(jnp.abs(R).max()) < 1e-14
    np.testing.assert_allclose(H, G, atol=1e-14)


def test_logistic_regression_hessian_is_fisher_and_network_fisher_is_gauss_newton():
    x = sampling.standard_normal(jax.random.key(5), (30, 4))
    w = sampling.standard_normal(jax.random.key(6), (4,))
    y = (jnp.arange(30) % 2).astype(float)
    lin = lambda w, x: x @ w  # noqa: E731
    H, _, _ = loss_hessian.decompose(lin, w, x, y, loss="cross_entropy")
    F = loss_hessian.fisher_information(lin, w, x)
    np.testing.assert_allclose(H, F, atol=1e-15 * 30)
    p = jax.nn.sigmoid(x @ w)                              # closed form (1/n) sum p (1 - p) x x^T
    np.testing.assert_allclose(F, (x.T * (p * (1 - p))) @ x / 30, rtol=1e-12)
    Hn, Gn, _ = loss_hessian.decompose(NET.apply, P0, X, ONEHOT, loss="cross_entropy")
    Fn = loss_hessian.fisher_information(NET.apply, P0, X)
    np.testing.assert_allclose(Fn, Gn, atol=1e-13)
    assert float(jnp.linalg.norm(Fn - Hn)) > 0.05 * float(jnp.linalg.norm(Hn))


def test_class_decomposition_is_exact_and_its_constraint_holds():
    labels = np.arange(8) % 3
    d = loss_hessian.class_decomposition(NET.apply, P0, X, labels)
    _, G, _ = loss_hessian.decompose(NET.apply, P0, X, ONEHOT, loss="cross_entropy")
    np.testing.assert_allclose(d.gauss_newton, G, atol=1e-13)
    np.testing.assert_allclose(d.class_term + d.cross_term + d.within_term, d.gauss_newton, atol=1e-13)
    np.testing.assert_allclose(d.weights.sum(), 1.0, rtol=1e-13)
    # sum_c' W_cc' mu_cc' = 0 for every class c: rank(class + cross) <= C (C - 1)
    np.testing.assert_allclose(np.einsum("cd,cdp->cp", d.weights, d.means), 0.0, atol=1e-13)
    between = d.class_term + d.cross_term
    assert np.linalg.matrix_rank(between, tol=1e-10 * np.abs(between).max()) <= 6
    for part in (d.class_term, d.cross_term, d.within_term):
        assert np.linalg.eigvalsh(part).min() > -1e-13


def test_subspace_overlap():
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((10, 3)))[0].T
    g = basis[0] * 2.0 + basis[2]
    assert loss_hessian.subspace_overlap(g, basis) == pytest.approx(1.0)
    assert loss_hessian.subspace_overlap(g, basis[:1]) == pytest.approx(0.8)
    # a non-orthonormal basis spans the same space
    assert loss_hessian.subspace_overlap(g, np.vstack([3 * basis[0] + basis[1], basis[1]])) == pytest.approx(
        loss_hessian.subspace_overlap(g, basis[:2]))
    with pytest.raises(ValueError, match="vector"):
        loss_hessian.subspace_overlap(np.zeros(10), basis)


def test_bad_inputs():
    with pytest.raises(ValueError, match="loss"):
        loss_hessian.decompose(NET.apply, P0, X, TARGETS, loss="hinge")
    with pytest.raises(ValueError, match="max_params"):
        loss_hessian.decompose(NET.apply, P0, X, TARGETS, max_params=10)
    with pytest.raises(ValueError, match="y"):
        loss_hessian.decompose(NET.apply, P0, X, TARGETS[:, :2])
    with pytest.raises(ValueError, match="labels"):
        loss_hessian.class_decomposition(NET.apply, P0, X, np.zeros(8, dtype=int))


def test_ch08_checkers_accept_solutions_and_reject_classic_mistakes(capsys):
    from lecturekit.exercises import ExerciseCheckError, ch08

    ch08.check_softmax_curvature(lambda p: np.diag(p) - np.outer(p, p))
    ch08.check_gauss_newton_rank(lambda n, k, P, loss: min(P, n * (k if loss == "square" else k - 1)))
    ch08.check_hutchinson_variance(
        lambda H, probe: 2 * np.sum(H**2) - (2 * np.sum(np.diag(H) ** 2) if probe == "rademacher" else 0))
    ch08.check_simplex(lambda C: np.sqrt(C / (C - 1)) * (np.eye(C) - 1 / C))
    assert capsys.readouterr().out.count("Correct") == 4
    wrong = [
        (ch08.check_softmax_curvature, lambda p: np.diag(p)),                       # missing -p p^T
        (ch08.check_softmax_curvature, lambda p: np.diag(p) - np.outer(p, p) - np.eye(p.size)[0][:, None]
         * 0 + np.outer(np.eye(p.size)[0], np.eye(p.size)[0])),                      # label-dependent
        (ch08.check_gauss_newton_rank, lambda n, k, P, loss: min(P, n * k)),        # ignores A 1 = 0
        (ch08.check_gauss_newton_rank, lambda n, k, P, loss: min(n, P)),            # the notes' bound
        (ch08.check_gauss_newton_rank,                                              # min(P, .) only
         lambda n, k, P, loss: min(P, n * k) if loss == "square" else n * (k - 1)),  # for the square
        (ch08.check_hutchinson_variance, lambda H, probe: 2 * np.sum(H**2)),        # same for both probes
        (ch08.check_hutchinson_variance, lambda H, probe: np.sum(H**2)),            # missing factor 2
        (ch08.check_simplex, lambda C: np.eye(C)),                                  # orthogonal means
        (ch08.check_simplex, lambda C: np.eye(C) - 1 / C),                          # not unit norm
    ]
    for check, answer in wrong:
        with pytest.raises(ExerciseCheckError):
            check(answer)
    with pytest.raises(ExerciseCheckError, match="rank"):
        ch08.check_gauss_newton_rank(lambda n, k, P, loss: 1 / 0)


def test_repeated_calls_compile_once():
    """The dense parts come from hessian's jitted engines: three identical calls (and
    calls at new points of the same shape) compile one program each."""
    net = nets.mlp((3, 4, 3), "tanh")
    p = net.init(jax.random.key(11))
    splits, jacobians = (hessian._gauss_newton_split, hessian._output_jacobian)
    before = splits._cache_size(), jacobians._cache_size()
    for _ in range(3):
        loss_hessian.decompose(net.apply, p, X, TARGETS, loss="square")
        loss_hessian.fisher_information(net.apply, p, X)
    assert splits._cache_size() - before[0] <= 1
    assert jacobians._cache_size() - before[1] <= 1
