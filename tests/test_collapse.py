"""Tests of lecturekit.collapse on configurations with known NC values."""

from __future__ import annotations

import numpy as np
import pytest

from lecturekit import collapse


def _etf(c, m, rng):
    basis = np.linalg.qr(rng.standard_normal((m, c)))[0].T            # c orthonormal rows
    return np.sqrt(c / (c - 1)) * (np.eye(c) - 1.0 / c) @ basis


@pytest.mark.parametrize("c", [2, 3, 5, 10])
def test_a_collapsed_configuration_scores_zero(c):
    rng = np.random.default_rng(c)
    means = 3.0 * _etf(c, 12, rng) + 0.7                              # any global mean
    h = np.repeat(means, 4, axis=0)
    labels = np.repeat(np.arange(c), 4)
    m = collapse.collapse_metrics(h, labels, (means - means.mean(0)).T, -np.sum(means * (means - means.mean(0)),
                                                                                  axis=1) * 0)
    assert m.nc1 == pytest.approx(0.0, abs=1e-20)
    assert m.cos_mean == pytest.approx(-1.0 / (c - 1), abs=1e-12)       # simplex, not 0 (orthogonal)
    assert m.cos_std == pytest.approx(0.0, abs=1e-12)
    assert m.norm_cv == pytest.approx(0.0, abs=1e-12)
    assert m.nc3 == pytest.approx(0.0, abs=1e-12)
    assert m.nc4 == 0.0


def test_nc1_matches_a_direct_computation_and_ignores_the_null_space():
    rng = np.random.default_rng(1)
    c, m, per = 4, 8, 50
    means = rng.standard_normal((c, m))
    h = np.repeat(means, per, axis=0) + 0.3 * rng.standard_normal((c * per, m))
    labels = np.repeat(np.arange(c), per)
    got = collapse.collapse_metrics(h, labels, rng.standard_normal((m, c)), np.zeros(c)).nc1
    mu = np.stack([h[labels == k].mean(0) for k in range(c)])
    centred = mu - mu.mean(0)
    sw = (h - mu[labels]).T @ (h - mu[labels]) / h.shape[0]
    sb = centred.T @ centred / c
    want = np.trace(sw @ np.linalg.pinv(sb, rcond=1e-10)) / c       # float64 pinv, rank c - 1
    assert got == pytest.approx(want, rel=1e-8)
    # an isotropic spread sigma^2 I in m dims: tr(Sigma_W Sigma_B^+) = sigma^2 tr(Sigma_B^+)
    assert got > 0


def test_class_means_and_simplex():
    np.testing.assert_allclose(collapse.class_means(np.arange(8.0).reshape(4, 2), np.array([0, 1, 0, 1])),
                               [[2.0, 3.0], [4.0, 5.0]])
    gram = collapse.simplex_etf(5)
    np.testing.assert_allclose(np.diag(gram), 1.0)
    np.testing.assert_allclose(gram[0, 1:], -0.25)
    assert np.linalg.matrix_rank(gram) == 4


def test_nc4_counts_disagreements():
    h = np.array([[0.0, 1.0], [0.0, 1.2], [1.0, 0.0], [1.2, 0.0]])
    labels = np.array([0, 0, 1, 1])
    w = np.array([[0.0, 1.0], [1.0, 0.0]])                             # decides like the nearest mean
    assert collapse.collapse_metrics(h, labels, w, np.zeros(2)).nc4 == 0.0
    assert collapse.collapse_metrics(h, labels, w[:, ::-1], np.zeros(2)).nc4 == 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="labels"):
        collapse.collapse_metrics(np.ones((3, 2)), np.array([0, 0, 0]), np.ones((2, 1)), np.zeros(1))
    with pytest.raises(ValueError, match="weight"):
        collapse.collapse_metrics(np.ones((4, 2)), np.array([0, 1, 0, 1]), np.ones((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="fewer than C - 1"):
        collapse.collapse_metrics(np.ones((4, 2)), np.array([0, 1, 0, 1]), np.ones((2, 2)), np.zeros(2))
