"""Tests of lecturekit.regions: exact breakpoints, sawtooth counts, arrangement cells."""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lecturekit import arrangements, nets, regions

jax.config.update("jax_enable_x64", True)


def random_net(seed: int, widths, b_std: float = 1.0):
    """An NTK-parameterized ReLU mlp with N(0, 1) parameters drawn by NumPy (as net.init does;
    NumPy avoids compiling JAX's sampler for every shape, which dominates on a busy machine)."""
    net = nets.mlp(widths, "relu", b_std=b_std, out_b_std=0.5)
    rng = np.random.default_rng(seed)
    params = [{"W": rng.normal(size=(i, o)), "b": rng.normal(size=o)} for i, o in zip(widths[:-1], widths[1:])]
    return net, params


def f(net, params, x):
    """Independent NumPy forward pass z = mW h W + mb b (checked against net.apply below)."""
    h = np.asarray(x, float).reshape(-1, 1) if net.input_dim == 1 else np.asarray(x, float)
    for i, (layer, (mw, mb)) in enumerate(zip(params, net.multipliers())):
        h = mw * h @ np.asarray(layer["W"]) + mb * np.asarray(layer["b"])
        if i < net.depth:
            h = np.maximum(h, 0.0)
    return h[:, 0]


def test_reference_forward_matches_net_apply():
    net, params = random_net(0, (1, 6, 5, 1))
    x = np.linspace(-3, 3, 64)
    np.testing.assert_allclose(f(net, params, x), np.asarray(net.apply(params, x[:, None])), rtol=1e-13, atol=1e-13)
    net2, params2 = random_net(1, (2, 4, 4, 1))
    x2 = np.random.default_rng(0).normal(size=(64, 2))
    np.testing.assert_allclose(f(net2, params2, x2), np.asarray(net2.apply(params2, x2)), rtol=1e-13, atol=1e-13)


DEEP = [(1, 8, 1), (1, 5, 7, 1), (1, 6, 6, 6, 1), (1, 10, 3, 10, 4, 1), (1, 4, 4, 4, 4, 4, 4, 1)]


# ----------------------------------------------------------------------------- 1-D
@pytest.mark.parametrize("widths", DEEP)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_affine_between_breakpoints(widths, seed):
    """Between consecutive breakpoints the network agrees with the line through the ends."""
    net, params = random_net(seed, widths)
    a, b = -3.0, 3.0
    bp = np.asarray(regions.breakpoints_1d(net, params, a, b))
    assert np.all(np.diff(bp) > 0) and np.all((bp > a) & (bp < b))
    ends = np.concatenate([[a], bp, [b]])
    lo, hi = ends[:-1, None], ends[1:, None]
    t = np.random.default_rng(seed).uniform(size=(len(lo), 7))
    values = f(net, params, np.concatenate([ends, (lo + t * (hi - lo)).ravel()]))
    f_ends, inside = values[: len(ends)], values[len(ends):].reshape(t.shape)
    line = f_ends[:-1, None] + t * (f_ends[1:, None] - f_ends[:-1, None])
    scale = 1.0 + np.abs(f_ends[:-1, None]) + np.abs(f_ends[1:, None])
    assert np.max(np.abs(inside - line) / scale) < 1e-9


@pytest.mark.parametrize("widths", DEEP)
@pytest.mark.parametrize("seed", [0, 3])
def test_every_breakpoint_is_a_kink(widths, seed):
    """The one-sided slopes at each breakpoint differ (measured by finite differences)."""
    net, params = random_net(seed, widths)
    bp = np.asarray(regions.breakpoints_1d(net, params, -3.0, 3.0))
    gaps = np.diff(np.concatenate([[-3.0], bp, [3.0]]))
    h = 0.25 * np.minimum(gaps[:-1], gaps[1:])
    f_left, f_mid, f_right = f(net, params, np.concatenate([bp - h, bp, bp + h])).reshape(3, -1)
    left, right = (f_mid - f_left) / h, (f_right - f_mid) / h
    # rounding of the outputs (~1e-15 relative) divided by h bounds the finite-difference error
    fd_err = 1e-7 * (1 + np.abs(left) + np.abs(right)) + 1e-12 / h
    assert np.all(np.abs(right - left) > fd_err), np.min(np.abs(right - left) - fd_err)


def test_trace_slopes_match_autodiff():
    net, params = random_net(5, (1, 9, 9, 9, 1))
    tr = regions.trace_1d(net, params, -2.0, 2.0)
    mids = 0.5 * (tr.knots[:-1] + tr.knots[1:])
    grad = jax.grad(lambda x: net.apply(params, x[:, None]).sum())(mids)
    np.testing.assert_allclose(np.asarray(grad), tr.slopes, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tr.intercepts + tr.slopes * mids, f(net, params, mids), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("widths", [(1, 6, 1), (1, 5, 5, 5, 1)])
def test_exact_mode_agrees_with_float(widths):
    net, params = random_net(7, widths)
    exact = regions.breakpoints_1d_exact(net, params, -2.0, 2.0)
    approx = np.asarray(regions.breakpoints_1d(net, params, -2.0, 2.0))
    assert all(isinstance(x, Fraction) for x in exact)
    assert len(exact) == len(approx)
    np.testing.assert_allclose(np.array(exact, dtype=float), approx, rtol=1e-12, atol=1e-12)


def test_count_on_whole_line_and_grid_lower_bound():
    net, params = random_net(11, (1, 12, 12, 1))
    n_inf = regions.count_pieces_1d(net, params, -np.inf, np.inf)
    n_box = regions.count_pieces_1d(net, params, -2.0, 2.0)
    assert n_box <= n_inf
    # slopes seen on a fine grid can only be fewer than the pieces (a lower bound)
    xs = np.linspace(-2.0, 2.0, 40001)
    slopes = np.round(np.diff(f(net, params, xs)) / (xs[1] - xs[0]), 6)
    changes = 1 + np.count_nonzero(np.abs(np.diff(slopes)) > 1e-4)
    assert changes <= 2 * n_box


def test_one_hidden_layer_breakpoints_closed_form():
    """For one hidden layer the breakpoints are the points -mb b_j / (mW W_j)."""
    net, params = random_net(3, (1, 20, 1))
    (mw, mb), _ = net.multipliers()
    w, b = np.asarray(params[0]["W"])[0] * mw, np.asarray(params[0]["b"]) * mb
    expected = np.sort(-b / w)
    expected = expected[(expected > -5) & (expected < 5)]
    np.testing.assert_allclose(np.asarray(regions.breakpoints_1d(net, params, -5, 5)), expected, rtol=1e-13)
    assert regions.count_pieces_1d(net, params, -np.inf, np.inf) == 21  # n1 + 1, generic weights


def test_dead_readout_neuron_is_not_a_kink():
    net, params = random_net(4, (1, 5, 1))
    params[1]["W"][2, 0] = 0.0
    assert regions.count_pieces_1d(net, params, -np.inf, np.inf) == 5


@pytest.mark.parametrize("depth", range(1, 11))
def test_sawtooth_has_2_to_the_L_pieces(depth):
    net, params = regions.sawtooth(depth)
    assert net.depth == 2 * depth and sum(net.widths[1:-1]) == 3 * depth
    assert regions.count_pieces_1d(net, params, 0.0, 1.0) == 2**depth
    assert regions.count_pieces_1d(net, params, -np.inf, np.inf) == 2**depth + 2
    bp = np.asarray(regions.breakpoints_1d(net, params, 0.0, 1.0))
    np.testing.assert_array_equal(bp, np.arange(1, 2**depth) / 2**depth)


@pytest.mark.parametrize("depth", [1, 4, 7])
def test_sawtooth_exact_and_values(depth):
    net, params = regions.sawtooth(depth)
    bp = regions.breakpoints_1d_exact(net, params, 0, 1)
    assert bp == [Fraction(k, 2**depth) for k in range(1, 2**depth)]
    xs = np.linspace(-0.5, 1.5, 101)
    ref = xs.copy()
    for _ in range(depth):
        ref = regions.tent(ref)
    np.testing.assert_allclose(f(net, params, xs), ref, atol=1e-12)


def test_tent_values():
    assert regions.tent(Fraction(1, 3)) == Fraction(2, 3)
    assert regions.tent(Fraction(3, 4)) == Fraction(1, 2)
    assert regions.tent(2.0) == 0.0 and regions.tent(-1.0) == 0.0


# ----------------------------------------------------------------------------- 2-D
def test_count_regions_2d_shallow_matches_polygons():
    for seed in range(3):
        net, params = random_net(seed, (2, 9, 1))
        exact = regions.count_regions_2d_shallow(net, params)
        assert exact == arrangements.general_position_cells(9, 2)
        big = regions.activation_regions_2d(net, params, (-1e4, 1e4, -1e4, 1e4))
        assert big.count == exact


def test_count_regions_2d_shallow_cancelling_neurons():
    """relu(z) - relu(-z) = z has no kink; relu(z) + relu(-z) = |z| has one."""
    net = nets.mlp((2, 2, 1), "relu", parameterization="standard")
    w = np.array([[1.0, -1.0], [2.0, -2.0]])
    b = np.array([0.5, -0.5])
    linear = [{"W": w, "b": b}, {"W": np.array([[1.0], [-1.0]]), "b": np.zeros(1)}]
    kinked = [{"W": w, "b": b}, {"W": np.array([[1.0], [1.0]]), "b": np.zeros(1)}]
    assert regions.count_regions_2d_shallow(net, linear) == 1
    assert regions.count_regions_2d_shallow(net, kinked) == 2


def test_activation_regions_2d_partition_the_box():
    net, params = random_net(2, (2, 8, 8, 8, 1))
    box = (-1.0, 2.0, -1.5, 0.5)
    reg = regions.activation_regions_2d(net, params, box)
    area = sum(0.5 * abs(np.dot(p[:, 0], np.roll(p[:, 1], 1)) - np.dot(p[:, 1], np.roll(p[:, 0], 1)))
               for p in reg.polygons)
    assert abs(area - 6.0) < 1e-10
    centres = np.array([p.mean(axis=0) for p in reg.polygons])
    np.testing.assert_array_equal(np.asarray(regions.activation_patterns(net, params, centres)), reg.patterns)
    # the network is affine on each polygon with the recorded gradient: compare at its vertices
    vertices = np.concatenate(reg.polygons)
    owner = np.repeat(np.arange(reg.count), [len(p) for p in reg.polygons])
    predicted = f(net, params, centres)[owner] + np.einsum("ij,ij->i", vertices - centres[owner], reg.gradients[owner])
    np.testing.assert_allclose(f(net, params, vertices), predicted, atol=1e-10)
    labels, seen = regions.pattern_map_2d(net, params, box, 150)
    assert labels.shape == (150, 150) and seen <= reg.count


# ----------------------------------------------------------------------------- bad input
def test_bad_inputs():
    net, params = random_net(0, (1, 4, 1))
    with pytest.raises(ValueError, match="a < b"):
        regions.count_pieces_1d(net, params, 1.0, 1.0)
    with pytest.raises(TypeError, match="net"):
        regions.count_pieces_1d("net", params, 0.0, 1.0)
    with pytest.raises(ValueError, match="relu"):
        regions.count_pieces_1d(nets.mlp((1, 4, 1), "tanh"), params, 0.0, 1.0)
    net2, params2 = random_net(0, (2, 3, 1))
    with pytest.raises(ValueError, match="input dimension"):
        regions.count_pieces_1d(net2, params2, 0, 1)
    with pytest.raises(ValueError, match="finite"):
        regions.breakpoints_1d_exact(net, params, 0.0, np.inf)
    with pytest.raises(ValueError, match="params"):
        regions.count_pieces_1d(net, params[:1], 0.0, 1.0)
    with pytest.raises(ValueError, match="depth"):
        regions.sawtooth(0)
    with pytest.raises(TypeError, match="depth"):
        regions.sawtooth(2.5)
    with pytest.raises(ValueError, match="box"):
        regions.activation_regions_2d(net2, params2, (1, 0, 0, 1))


# ----------------------------------------------------------------------------- Chapter 6 revision
def silent_switch_net():
    """f = relu(1 - relu(x)), plus a first-layer neuron relu(x - 2) that switches where the
    second layer is off: knots 0, 1, 2 on R, slope changes only at 0 and 1."""
    net = nets.mlp((1, 2, 1, 1), "relu", parameterization="standard")
    params = [{"W": np.array([[1.0, 1.0]]), "b": np.array([0.0, -2.0])},
              {"W": np.array([[-1.0], [-3.0]]), "b": np.array([1.0])},
              {"W": np.array([[1.0]]), "b": np.zeros(1)}]
    return net, params


def test_line_counts_silent_switch():
    net, params = silent_switch_net()
    counts = regions.line_counts(net, params, radius=1.5)
    assert counts == regions.LineCounts(pieces=3, activation_regions=4, pieces_inside=3,
                                        activation_regions_inside=3, zeros_per_layer=(2, 1))
    exact = regions.trace_1d_exact(net, params, -5, 5)
    assert list(exact.knots[1:-1]) == [0, 1, 2] and list(exact.breakpoints) == [0, 1]
    assert exact.slopes[2] == exact.slopes[3] == 0  # flat on both sides of the silent switch at 2


@pytest.mark.parametrize("widths", DEEP)
def test_line_counts_match_the_tracer(widths):
    net, params = random_net(21, widths)
    counts = regions.line_counts(net, params, radius=1.3)
    assert counts.pieces == regions.count_pieces_1d(net, params, -np.inf, np.inf)
    assert counts.pieces_inside == regions.count_pieces_1d(net, params, -1.3, 1.3)
    box = regions.trace_1d(net, params, -1.3, 1.3)
    assert counts.activation_regions_inside == len(box.knots) - 1
    assert counts.pieces <= counts.activation_regions and counts.pieces_inside <= counts.activation_regions_inside
    assert counts.activation_regions == 1 + sum(counts.zeros_per_layer)
    if len(widths) == 3:  # one hidden layer, generic weights: no silent switch
        assert counts.pieces == counts.activation_regions == widths[1] + 1


def test_line_counts_bad_inputs():
    net, params = random_net(0, (1, 4, 1))
    with pytest.raises(ValueError, match="radius"):
        regions.line_counts(net, params, radius=0.0)
    with pytest.raises(TypeError, match="radius"):
        regions.line_counts(net, params, radius="1")
    with pytest.raises(ValueError, match="input dimension"):
        regions.line_counts(*random_net(0, (2, 3, 1)))


def test_exact_trace_matches_float_trace_and_kinds():
    """trace_1d_exact: the same knots, slopes and breakpoints as trace_1d, as Fractions;
    breakpoints_1d is a float64 JAX array, breakpoints_1d_exact a list of Fractions."""
    net, params = random_net(8, (1, 5, 4, 1))
    approx = regions.trace_1d(net, params, -2.0, 2.0)
    exact = regions.trace_1d_exact(net, params, -2, 2)
    assert exact.knots.dtype == object and all(isinstance(k, Fraction) for k in exact.knots)
    np.testing.assert_allclose(np.array(exact.knots, float), approx.knots, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.array(exact.slopes, float), approx.slopes, rtol=1e-10, atol=1e-12)
    assert exact.new_knots == approx.new_knots
    bp = regions.breakpoints_1d(net, params, -2.0, 2.0)
    assert isinstance(bp, jax.Array) and bp.dtype == np.float64
    assert regions.breakpoints_1d_exact(net, params, -2, 2) == list(exact.breakpoints)
    with pytest.raises(TypeError, match="b"):
        regions.trace_1d_exact(net, params, 0, "1")


def test_hidden_lines_are_the_first_layer_hyperplanes():
    net, params = random_net(9, (2, 6, 3, 1))
    normals, offsets = regions.hidden_lines(net, params)
    (mw, mb), *_ = net.multipliers()
    assert normals.shape == (6, 2) and offsets.shape == (6,)
    x = np.random.default_rng(1).normal(size=(5, 2))
    zs, _, _ = net.forward(params, x)
    np.testing.assert_allclose(x @ normals.T + offsets, np.asarray(zs[0]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_lines_in_box_gives_the_region_count_by_euler(seed):
    """One hidden layer, generic weights: regions in a box = 1 + lines meeting it + crossings."""
    net, params = random_net(30 + seed, (2, 10, 1))
    box = (-1.0, 1.5, -0.5, 1.0)
    counts = regions.lines_in_box(net, params, box)
    assert regions.activation_regions_2d(net, params, box).count == 1 + counts.lines + counts.crossings
    # every line meets a huge box, and every pair crosses inside it
    huge = regions.lines_in_box(net, params, (-1e6, 1e6, -1e6, 1e6))
    assert huge == (10, 45)


def test_lines_in_box_parallel_and_deep():
    """Parallel lines never cross; a deep network counts its first layer's lines only."""
    net = nets.mlp((2, 3, 2, 1), "relu", parameterization="standard")
    params = [{"W": np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0]]), "b": np.array([0.0, -1.0, 5.0])},
              {"W": np.ones((3, 2)), "b": np.zeros(2)}, {"W": np.ones((2, 1)), "b": np.zeros(1)}]
    # x1 = 0 and x1 = 1/2 (parallel) meet the box; x2 = -5 does not
    assert regions.lines_in_box(net, params, (-1.0, 1.0, -1.0, 1.0)) == regions.LinesInBox(2, 0)
    with pytest.raises(ValueError, match="box"):
        regions.lines_in_box(net, params, (1.0, 0.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="input dimension"):
        regions.lines_in_box(*random_net(0, (1, 3, 1)))


# ----------------------------------------------------------------------------- depth separation
def test_pwl_l1_distance_against_a_fine_quadrature():
    rng = np.random.default_rng(5)
    x1 = np.concatenate([[0.0], np.sort(rng.uniform(size=7)), [1.0]])
    x2 = np.concatenate([[0.0], np.sort(rng.uniform(size=4)), [1.0]])
    y1, y2 = rng.normal(size=x1.size), rng.normal(size=x2.size)
    grid = (np.arange(400_000) + 0.5) / 400_000      # midpoint rule, error O(h^2) per kink
    numeric = np.mean(np.abs(np.interp(grid, x1, y1) - np.interp(grid, x2, y2)))
    exact = regions.pwl_l1_distance(x1, y1, x2, y2)
    assert abs(exact - numeric) < 1e-6, (exact, numeric)
    assert regions.pwl_l1_distance(x1, y1, x1, y1) == 0.0
    # symmetric, and a constant shift c gives |c| (b - a)
    assert abs(regions.pwl_l1_distance(x2, y2, x1, y1) - exact) < 1e-15
    assert abs(regions.pwl_l1_distance(x1, y1 + 0.3, x1, y1) - 0.3) < 1e-14


def test_pwl_l1_distance_crossing_triangle_and_bad_inputs():
    # h goes from 1 to -1 over [0, 1]: two triangles of area 1/4
    assert abs(regions.pwl_l1_distance([0, 1], [1, -1], [0, 1], [0, 0]) - 0.5) < 1e-15
    with pytest.raises(ValueError, match="ends"):
        regions.pwl_l1_distance([0, 1], [0, 0], [0, 2], [0, 0])
    with pytest.raises(ValueError, match="increasing"):
        regions.pwl_l1_distance([0, 0.5, 0.5, 1], [0, 1, 1, 0], [0, 1], [0, 0])
    with pytest.raises(ValueError, match="same length"):
        regions.pwl_l1_distance([0, 1], [0, 1, 2], [0, 1], [0, 0])


@pytest.mark.parametrize("depth", [1, 3, 5])
def test_sawtooth_as_pwl_and_its_distance_to_one_half(depth):
    net, params = regions.sawtooth(depth)
    knots, values = regions.network_pwl(net, params, 0.0, 1.0)
    assert np.array_equal(knots, np.arange(2**depth + 1) / 2**depth)
    assert np.array_equal(values, np.arange(2**depth + 1) % 2)
    # f_L is equidistributed on [0, 1]: int |f_L - 1/2| = 1/4 for every L
    assert abs(regions.pwl_l1_distance(knots, values, [0, 1], [0.5, 0.5]) - 0.25) < 1e-15


def test_network_pwl_matches_the_network(seed=3):
    net, params = random_net(seed, (1, 6, 5, 1))
    knots, values = regions.network_pwl(net, params, -2.0, 1.5)
    assert knots[0] == -2.0 and knots[-1] == 1.5
    assert np.allclose(values, f(net, params, knots), atol=1e-12)
    grid = np.linspace(-2.0, 1.5, 2001)
    assert np.allclose(np.interp(grid, knots, values), f(net, params, grid), atol=1e-12)
    with pytest.raises(ValueError, match="finite"):
        regions.network_pwl(net, params, -np.inf, 1.0)


def test_pwl_network_round_trip():
    rng = np.random.default_rng(8)
    x = np.concatenate([[-0.5], np.sort(rng.uniform(-0.5, 2.0, size=6)), [2.0]])
    y = rng.normal(size=x.size)
    net, params = regions.pwl_network(x, y)
    assert net.widths == (1, x.size - 1, 1) and net.parameterization == "standard"
    grid = np.linspace(-0.5, 2.0, 1001)
    assert np.allclose(np.asarray(net.apply(params, grid[:, None])), np.interp(grid, x, y),
                       atol=1e-12)
    knots, values = regions.network_pwl(net, params, -0.5, 2.0)
    assert np.allclose(knots, x, atol=1e-12) and np.allclose(values, y, atol=1e-12)


def test_pwl_least_squares_recovers_a_pwl_and_checks_inputs():
    kn = np.array([0.0, 0.3, 0.55, 1.0])
    truth = np.array([1.0, -0.5, 2.0, 0.25])
    x = np.linspace(0, 1, 500)
    assert np.allclose(regions.pwl_least_squares(x, np.interp(x, kn, truth), kn), truth,
                       atol=1e-10)
    with pytest.raises(ValueError, match="between"):
        regions.pwl_least_squares(np.array([1.5]), np.array([0.0]), kn)
    with pytest.raises(ValueError, match="same shape"):
        regions.pwl_least_squares(x, x[:-1], kn)


def test_sawtooth_l1_bound_holds_for_least_squares_fits():
    depth = 4
    net, params = regions.sawtooth(depth)
    sk, sv = regions.network_pwl(net, params, 0.0, 1.0)
    x = (np.arange(2048) + 0.5) / 2048
    y = np.interp(x, sk, sv)
    rng = np.random.default_rng(0)
    for p in (1, 2, 3, 5, 8):
        for _ in range(20):
            knots = np.concatenate([[0.0], np.sort(rng.uniform(size=p - 1)), [1.0]])
            values = regions.pwl_least_squares(x, y, knots)
            err = regions.pwl_l1_distance(knots, values, sk, sv)
            assert err >= regions.sawtooth_l1_bound(p, depth) - 1e-12, (p, err)
    # the bound's values: 1/16 at p = 2^(L-2) - 1, 0 once 2p + 2 >= 2^L
    assert regions.sawtooth_l1_bound(3, 4) == 1 / 16
    assert regions.sawtooth_l1_bound(7, 4) == 0.0
    with pytest.raises(ValueError, match="pieces"):
        regions.sawtooth_l1_bound(0, 4)
