"""lecturekit.approximation (Chapter 11) and the Chapter 11 exercise checks (right answers
pass, classic wrong ones fail with a message that says why)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import approximation, nets, sampling, tangent
from lecturekit.exercises import ExerciseCheckError, ch11

jax.config.update("jax_enable_x64", True)


# ------------------------------------------------------------------ learning on cells

def _cells(m):
    def target(key, x):
        v = np.asarray(sampling.standard_normal(key, (x.shape[0], m)))
        return np.take_along_axis(v, np.minimum((x * m).astype(int), m - 1), axis=1)
    return target


def test_unseen_cell_errors_match_the_variance_bounds():
    learners = {"zero": lambda xt, yt, xs: np.zeros_like(xs),
                "nn": lambda xt, yt, xs: yt[np.abs(np.subtract.outer(xs, xt)).argmin(1)]}
    err = approximation.unseen_cell_errors(jax.random.key(3), _cells(20), 20, learners, reps=300)
    assert abs(err["zero"].mean - 1) < 4 * err["zero"].stderr
    assert abs(err["nn"].mean - 2) < 4 * err["nn"].stderr


def test_unseen_cell_errors_validates():
    with pytest.raises(TypeError, match="learners"):
        approximation.unseen_cell_errors(jax.random.key(0), _cells(4), 4, {})
    with pytest.raises(ValueError, match="target must return shape"):
        approximation.unseen_cell_errors(jax.random.key(0), lambda k, x: x[:, :1], 4,
                                         {"z": lambda a, b, c: c}, reps=3)
    with pytest.raises(ValueError, match="num_cells"):
        approximation.unseen_cell_errors(jax.random.key(0), _cells(4), 1, {"z": lambda a, b, c: c})


# ------------------------------------------------------------------ zigzags

def test_zigzag_cover_radius_is_one_over_n_and_attained():
    rng = np.random.default_rng(0)
    fine = 512
    for n in (1, 4, 32):
        slopes = rng.uniform(-1, 1, (50, fine))
        f = np.concatenate([np.zeros((50, 1)), np.cumsum(slopes, 1) / fine], 1)
        f = np.concatenate([np.zeros((1, fine + 1)), f])            # f = 0 first
        s = approximation.zigzag_encode(f[:, :: fine // n])
        err = np.abs(approximation.zigzag(s, np.arange(fine + 1) / fine) - f).max(1) * n
        assert err.max() <= 1 + 1e-12 and err[0] == pytest.approx(1.0)


def test_zigzag_packing_distance_is_two_steps():
    n = 6
    words = np.array(list(itertools.product((-1, 1), repeat=n)))
    x = np.arange(n + 1) / n
    g = approximation.zigzag(words, x)
    d = np.abs(g[:, None] - g[None]).max(2)
    off = d[~np.eye(len(words), dtype=bool)]
    assert off.min() == pytest.approx(2 / n)


def test_zigzag_validates():
    with pytest.raises(ValueError, match=r"\+1 and -1"):
        approximation.zigzag([1, 0], [0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        approximation.zigzag([1, -1], [1.5])
    with pytest.raises(ValueError, match="f\\(0\\) = 0"):
        approximation.zigzag_encode([0.1, 0.2])


# ------------------------------------------------------------------ ellipsoids

def test_ellipsoid_bounds_are_exact_in_one_dimension_and_ordered():
    # a segment [-s, s]: 2^n balls of radius eps cover it iff eps >= s 2^-n
    lo, hi = approximation.ellipsoid_entropy_bounds([2.0], [0, 1, 5])
    np.testing.assert_allclose(lo, 2.0 * 2.0 ** -np.array([0, 1, 5]))
    assert np.all(hi >= lo)
    axes = 1 / np.arange(1, 300)
    lo, hi = approximation.ellipsoid_entropy_bounds(axes, [10, 100], tail=1 / 300)
    assert np.all(lo <= hi) and np.all(np.diff(lo) < 0) and np.all(np.diff(hi) < 0)


def test_ellipsoid_lower_bound_against_a_direct_count():
    # in 2D with axes (1, 1/2), a grid cover of the bounding box gives an upper bound that
    # the lower bound must not exceed
    lo, _ = approximation.ellipsoid_entropy_bounds([1.0, 0.5], [6])
    side = 8                                            # 8 x 8 = 2^6 squares
    grid_radius = math.hypot(1.0 / side, 0.5 / side)    # half-diagonal of a cell
    assert lo[0] <= grid_radius


def test_ellipsoid_validates():
    with pytest.raises(ValueError, match="non-increasing"):
        approximation.ellipsoid_entropy_bounds([1.0, 2.0], [1])
    with pytest.raises(ValueError, match="bits"):
        approximation.ellipsoid_entropy_bounds([1.0], [-1])


# ------------------------------------------------------------------ bits in one number

def test_pack_unpack_round_trip_exact_and_float_limit():
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2, 120).tolist()
    t = approximation.pack_bits(bits)
    assert isinstance(t, Fraction) and approximation.unpack_bits(t, 120) == bits
    tf = approximation.pack_bits([1] + bits[:59], exact=False)
    # float64 keeps 53 significant digits from the leading 1
    assert approximation.unpack_bits(tf, 53) == ([1] + bits[:59])[:53]
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        approximation.unpack_bits(Fraction(3, 2), 3)
    with pytest.raises(ValueError, match="0 and 1"):
        approximation.pack_bits([2])


# ------------------------------------------------------------------ networks

def test_interpolation_network_is_the_interpolant():
    v = np.array([0.0, 0.3, -0.2, 0.1])
    net, params = approximation.interpolation_network(v)
    x = np.linspace(0, 1, 101)
    np.testing.assert_allclose(net.apply(params, x[:, None]), np.interp(x, np.arange(4) / 3, v),
                               atol=1e-12)
    # 3 inner weights, 2 nonzero biases (-1/3, -2/3), 3 slope changes, readout bias v[0] = 0
    assert approximation.nonzero_parameters(params) == 8


@pytest.mark.parametrize("N, M", [(1, 3), (2, 5), (6, 4), (16, 20)])
def test_bit_extraction_network_computes_the_zigzag(N, M):
    rng = np.random.default_rng(N * 100 + M)
    signs = rng.choice([-1, 1], N * M)
    net, params = approximation.bit_extraction_network(signs, N)
    h = 1 / (N * M)
    x = np.linspace(0, 1, 16 * N * M + 1)
    err = np.abs(np.asarray(jax.jit(net.apply)(params, x[:, None])) - approximation.zigzag(signs, x))
    assert err.max() <= h / 4 + 1e-12, err.max() / h
    assert net.depth == 2 * M + 2 and net.parameterization == "standard"


def test_bit_extraction_network_misreads_when_a_code_weight_moves():
    N, M = 4, 12
    signs = np.random.default_rng(0).choice([-1, 1], N * M)
    net, params = approximation.bit_extraction_network(signs, N)
    x = np.linspace(0, 1, 8 * N * M + 1)[:, None]
    base = np.asarray(net.apply(params, x))
    moved = [dict(layer) for layer in params]
    moved[2] = {"W": params[2]["W"], "b": params[2]["b"].at[0].add(0.75)}   # a ramp's bias
    assert np.abs(np.asarray(net.apply(moved, x)) - base).max() > 1 / (N * M)


def test_bit_extraction_network_validates():
    with pytest.raises(ValueError, match="divide"):
        approximation.bit_extraction_network([1, -1, 1], 2)
    with pytest.raises(ValueError, match="float64"):
        approximation.bit_extraction_network(np.ones(2 * 50, int), 2)


def test_gradient_norms_against_autodiff():
    net = nets.mlp((3, 7, 5, 1), "tanh", b_std=0.3)
    params = net.init(jax.random.key(2))
    x = np.asarray(sampling.standard_normal(jax.random.key(3), (4, 3)))
    gx = jax.vmap(jax.grad(lambda xi: net.apply(params, xi[None])[0]))(jnp.asarray(x))
    np.testing.assert_allclose(approximation.input_gradient_norms(net, params, x),
                               jnp.linalg.norm(gx, axis=1), rtol=1e-10)
    ntk = tangent.empirical_ntk(net.apply, params, x, implementation="jacobian")
    np.testing.assert_allclose(approximation.parameter_gradient_norms(net, params, x) ** 2,
                               jnp.diag(ntk), rtol=1e-10)
    with pytest.raises(TypeError, match="nets.MLP"):
        approximation.input_gradient_norms(lambda p, x: x, params, x)


def test_perturb_nonzero_size_and_support():
    params = [{"W": np.array([[1.0, 0.0], [0.0, 2.0]]), "b": np.array([0.0, 3.0])}]
    q = approximation.perturb_nonzero(params, jax.random.key(0), 0.25)
    diff = np.concatenate([(q[0][k] - params[0][k]).ravel() for k in "Wb"])
    assert np.linalg.norm(diff) == pytest.approx(0.25)
    assert q[0]["W"][0, 1] == 0 and q[0]["b"][0] == 0
    with pytest.raises(ValueError, match="no nonzero"):
        approximation.perturb_nonzero([{"W": np.zeros(2), "b": np.zeros(1)}], jax.random.key(0), 1.0)


# ------------------------------------------------------------------ JL

def test_jl_ratios_shrink_with_dimension_and_bound_value():
    small = approximation.jl_ratios(jax.random.key(0), 16, 8, 50)
    large = approximation.jl_ratios(jax.random.key(1), 16, 400, 50)
    assert np.all(small >= 1) and np.median(large) < np.median(small)
    # ratio 2: eps = 3/5, 4 / (9/50 - 9/125) = 1000/27 per ln k
    assert approximation.jl_dimension_bound(2**7) == pytest.approx(1000 / 27 * 7 * math.log(2))
    with pytest.raises(ValueError, match="ratio"):
        approximation.jl_dimension_bound(10, ratio=1.0)


# ------------------------------------------------------------------ extensions

def test_mcshane_interpolates_and_is_lipschitz():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((7, 2))
    y = rng.standard_normal(7)
    L = approximation.lipschitz_constant(x, y)
    np.testing.assert_allclose(approximation.mcshane_extension(x, y, L, x), y, atol=1e-12)
    q = rng.standard_normal((40, 2))
    up = approximation.mcshane_extension(x, y, L, q)
    lo = approximation.mcshane_extension(x, y, L, q, lower=True)
    assert np.all(lo <= up + 1e-12)
    both = np.concatenate([x, q])
    assert approximation.lipschitz_constant(both, np.concatenate([y, up])) <= L * (1 + 1e-12)


def test_kirszbraun_two_points_closed_form():
    # two points at distance 2 with values at distance 2 (L = 1), new point at their
    # midpoint: the balls of radius 1 touch at the midpoint of the values, t* = 1
    x = np.array([[0.0], [2.0]])
    y = np.array([[0.0, 0.0], [2.0, 0.0]])
    pt = approximation.kirszbraun_point(x, y, np.array([1.0]))
    assert pt.ratio == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(pt.value, [1.0, 0.0], atol=1e-5)
    # at a data point the value is the data
    assert approximation.kirszbraun_point(x, y, np.array([2.0])).ratio == 0.0


def test_kirszbraun_holds_in_euclidean_space_and_fails_in_l1():
    for seed in range(20):
        key = jax.random.key(seed)
        x = np.asarray(sampling.standard_normal(key, (6, 3)))
        y = np.asarray(sampling.standard_normal(jax.random.fold_in(key, 1), (5, 4)))
        pt = approximation.kirszbraun_point(x[:5], y, x[5])
        assert pt.ratio <= 1 + 1e-6
    d = 3
    x = np.concatenate([np.eye(d), -np.eye(d)])
    y = np.sqrt(2) * np.eye(2 * d)
    pt = approximation.kirszbraun_point(x, y, np.zeros(d), lipschitz=1.0, p=1)
    assert pt.ratio == pytest.approx(math.sqrt((2 * d - 1) / d), abs=1e-6)


def test_extension_validation():
    with pytest.raises(ValueError, match="distinct"):
        approximation.lipschitz_constant([[0.0], [0.0]], [1.0, 2.0])
    with pytest.raises(ValueError, match="p must be >= 1"):
        approximation.mcshane_extension([[0.0]], [0.0], 1.0, [[1.0]], p=0.5)
    with pytest.raises(ValueError, match="x_new"):
        approximation.kirszbraun_point([[0.0, 1.0]], [[1.0]], np.zeros(3))


# ------------------------------------------------------------------ exercise checks

def test_check_jl_dimension():
    ch11.check_jl_dimension(lambda k, r: 4 * np.log(k) / (((r * r - 1) / (r * r + 1)) ** 2 / 2
                                                          - ((r * r - 1) / (r * r + 1)) ** 3 / 3))
    with pytest.raises(ExerciseCheckError, match="notes' formula"):
        ch11.check_jl_dimension(lambda k, r: 8 * np.log(k) / 0.25)
    with pytest.raises(ExerciseCheckError, match="natural logarithm"):     # log2 instead of ln
        ch11.check_jl_dimension(lambda k, r: approximation.jl_dimension_bound(k, r) / np.log(2))
    with pytest.raises(ExerciseCheckError, match="not implemented"):
        ch11.check_jl_dimension(lambda k, r: (_ for _ in ()).throw(NotImplementedError))


def _encode(values):
    n = len(values) - 1
    g, out = 0.0, []
    for k in range(n):
        s = 1 if values[k + 1] >= g else -1
        out.append(s)
        g += s / n
    return np.array(out)


def test_check_zigzag_encoder():
    ch11.check_zigzag_encoder(_encode)
    ch11.check_zigzag_encoder(approximation.zigzag_encode)
    with pytest.raises(ExerciseCheckError, match="not of f's own increment|own increment"):
        ch11.check_zigzag_encoder(lambda v: np.where(np.diff(v) >= 0, 1, -1))
    with pytest.raises(ExerciseCheckError, match=r"each \+1 or -1"):
        ch11.check_zigzag_encoder(lambda v: np.diff(v))
    with pytest.raises(ExerciseCheckError, match="None"):
        ch11.check_zigzag_encoder(lambda v: None)


def test_check_entropy_lower_bound():
    ch11.check_entropy_lower_bound(
        lambda axes, n: float(approximation.ellipsoid_entropy_bounds(axes, [n])[0][0]))
    with pytest.raises(ExerciseCheckError, match="best k"):
        ch11.check_entropy_lower_bound(lambda axes, n: 2.0 ** -n * axes[0])
    with pytest.raises(ExerciseCheckError, match="k-th root"):     # no root: the product
        ch11.check_entropy_lower_bound(lambda axes, n: max(2.0 ** -n * np.prod(axes[:k])
                                                           for k in range(1, 5)))


def test_check_mcshane():
    ch11.check_mcshane(lambda xk, yk, L: (lambda x: approximation.mcshane_extension(xk, yk, L, x)))
    with pytest.raises(ExerciseCheckError, match="smallest extension"):
        ch11.check_mcshane(lambda xk, yk, L: (
            lambda x: approximation.mcshane_extension(xk, yk, L, x, lower=True)))
    with pytest.raises(ExerciseCheckError, match="largest|upper cones|Every L-Lipschitz"):
        ch11.check_mcshane(lambda xk, yk, L: (   # nearest neighbour's value: not Lipschitz
            lambda x: yk[np.linalg.norm(x[:, None] - xk[None], axis=2).argmin(1)]))
    with pytest.raises(ExerciseCheckError, match="should be a function"):
        ch11.check_mcshane(lambda xk, yk, L: 3.0)


def test_check_extension_constant():
    ch11.check_extension_constant(lambda d: np.sqrt((2 * d - 1) / d))
    with pytest.raises(ExerciseCheckError, match="limit as d grows"):
        ch11.check_extension_constant(lambda d: np.sqrt(2))
    with pytest.raises(ExerciseCheckError, match="circumradius"):
        ch11.check_extension_constant(lambda d: 1.0)


def test_lipschitz_constant_in_the_max_norm():
    """p = inf (documented as allowed) measures the domain in the max norm, not l_2."""
    x, y = [[0.0, 0.0], [1.0, 2.0]], [0.0, 2.0]
    assert approximation.lipschitz_constant(x, y, p=np.inf) == 1.0
    assert abs(approximation.lipschitz_constant(x, y) - 2 / np.sqrt(5)) < 1e-15
