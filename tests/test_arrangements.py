"""Tests of lecturekit.arrangements: exact cell counts of hyperplane arrangements, by two
independent methods (geometric and Zaslavsky's theorem) and Buck's general-position formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lecturekit import arrangements


@pytest.mark.parametrize("d,n,expected", [(2, 3, 7), (2, 6, 22), (2, 10, 56), (3, 5, 26), (3, 8, 93), (5, 3, 8)])
def test_zaslavsky_catalogue_values(d, n, expected):
    rng = np.random.default_rng(100 * d + n)
    assert arrangements.general_position_cells(n, d) == expected
    assert arrangements.count_cells(rng.normal(size=(n, d)), rng.normal(size=n)) == expected


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(0, 9))
def test_zaslavsky_for_random_lines(seed, n):
    """Random lines are in general position (a.s.): exact cell count = 1 + n + C(n, 2)."""
    rng = np.random.default_rng(seed)
    cells = arrangements.count_cells(rng.normal(size=(n, 2)), rng.normal(size=n))
    assert cells == arrangements.general_position_cells(n, 2) == 1 + n + math.comb(n, 2)


def test_degenerate_arrangements_in_the_plane():
    # 4 concurrent lines (8 sectors) plus x = -1, which crosses 3 of them: 8 + 4 = 12
    normals = [[1, 0], [0, 1], [1, 1], [1, -1], [1, 0]]
    assert arrangements.count_cells(normals, [0, 0, 0, 0, 1]) == 12
    # parallel lines only, with a repeated one (opposite orientation): 3 distinct -> 4 cells
    assert arrangements.count_cells([[1, 2], [2, 4], [-1, -2], [1, 2]], [0, 1, 0, 5]) == 4
    # a 3 x 3 grid of lines: 16 cells
    assert arrangements.count_cells([[1, 0]] * 3 + [[0, 1]] * 3, [0, 1, 2, 0, 1, 2]) == 16
    assert arrangements.count_cells(np.zeros((0, 2)), np.zeros(0)) == 1


def test_characteristic_polynomial_known_arrangements():
    # two parallel planes in R^3: chi = t^3 - 2 t^2, 3 cells (the general-position formula says 4)
    assert arrangements.characteristic_polynomial([[1, 0, 0], [2, 0, 0]], [0, -1]) == (0, 0, -2, 1)
    assert arrangements.zaslavsky_cells([[1, 0, 0], [2, 0, 0]], [0, -1]) == 3 == arrangements.count_cells(
        [[1, 0, 0], [2, 0, 0]], [0, -1])
    assert arrangements.general_position_cells(2, 3) == 4
    # three coordinate planes through 0: chi = (t - 1)^3, 8 cells; a repeated plane changes nothing
    assert arrangements.characteristic_polynomial(np.eye(3), np.zeros(3)) == (-1, 3, -3, 1)
    assert arrangements.characteristic_polynomial(np.vstack([np.eye(3), [[-2, 0, 0]]]), np.zeros(4)) == (-1, 3, -3, 1)
    # 4 concurrent lines and one more: 12 cells; a 3 x 3 grid: 16; no hyperplane: 1
    assert arrangements.zaslavsky_cells([[1, 0], [0, 1], [1, 1], [1, -1], [1, 0]], [0, 0, 0, 0, 1]) == 12
    assert arrangements.zaslavsky_cells([[1, 0]] * 3 + [[0, 1]] * 3, [0, 1, 2, 0, 1, 2]) == 16
    assert arrangements.characteristic_polynomial(np.zeros((0, 2)), np.zeros(0)) == (0, 0, 1)
    assert arrangements.zaslavsky_cells([[0, 0], [1, 0]], [1, 0]) == 2  # a zero normal is ignored


@pytest.mark.parametrize("n,d", [(3, 2), (7, 2), (5, 3), (8, 3), (3, 5), (6, 4)])
def test_characteristic_polynomial_general_position(n, d):
    """Random hyperplanes: chi(t) = sum_k (-1)^k C(n, k) t^(d - k), so the cells are sum_k C(n, k)."""
    rng = np.random.default_rng(10 * n + d)
    chi = arrangements.characteristic_polynomial(rng.normal(size=(n, d)), rng.normal(size=n))
    assert chi == tuple((-1) ** (d - j) * math.comb(n, d - j) for j in range(d + 1))
    assert arrangements.zaslavsky_cells(rng.normal(size=(n, d)), rng.normal(size=n)) == arrangements.general_position_cells(n, d)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(0, 7))
def test_zaslavsky_agrees_with_the_geometric_count_on_degenerate_lines(seed, n):
    """Small integer coefficients make parallel, concurrent and repeated lines common."""
    rng = np.random.default_rng(seed)
    normals, offsets = rng.integers(-2, 3, size=(n, 2)), rng.integers(-2, 3, size=n)
    assert arrangements.zaslavsky_cells(normals, offsets) == arrangements.count_cells(normals, offsets)


def test_characteristic_polynomial_bad_inputs():
    with pytest.raises(ValueError, match="same length"):
        arrangements.characteristic_polynomial(np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="normals"):
        arrangements.zaslavsky_cells(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="offsets"):
        arrangements.characteristic_polynomial(np.ones((2, 2)), ["a", "b"])
    with pytest.raises(ValueError, match="max_subsets"):  # 12 lines through one point: 2^12 subsets
        arrangements.characteristic_polynomial(np.random.default_rng(0).normal(size=(12, 2)), np.zeros(12),
                                          max_subsets=1000)
    with pytest.raises(ValueError, match="same length"):
        arrangements.count_cells(np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="d"):
        arrangements.general_position_cells(3, 0)
    with pytest.raises(TypeError, match="n"):
        arrangements.general_position_cells(2.5, 2)


def test_count_cells_rejects_degenerate_arrangements_in_space():
    """Four planes through one point of R^3 are outside what the vertex method covers."""
    normals = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]
    with pytest.raises(ValueError, match="degenerate"):
        arrangements.count_cells(normals, [0, 0, 0, 0])
    assert arrangements.zaslavsky_cells(normals, [0, 0, 0, 0]) == 14  # Zaslavsky covers it
