"""lecturekit.path_counting: the path expansion, exact finite-width moments and the ensembles
of Chapter 9; and the Chapter 9 exercise checkers (right answers pass, wrong ones fail)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from lecturekit import nets, path_counting, sampling, stats, tangent
from lecturekit.exercises import ExerciseCheckError, ch09

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("widths", [(3, 4, 1), (2, 3, 4, 2), (3, 2, 3, 2, 1)])
def test_path_expansion_is_the_forward_pass(widths):
    net = nets.mlp(widths, "relu", w_std=2**0.5, out_w_std=2**0.5)
    params = net.init(jax.random.key(len(widths)))
    x = np.random.default_rng(0).standard_normal((7, widths[0]))
    got = path_counting.path_expansion(net, params, x)
    np.testing.assert_allclose(got, net.apply(params, x), rtol=1e-12, atol=1e-12)


def test_enumerate_paths_counts_and_order():
    paths = path_counting.enumerate_paths((2, 3, 4, 1))
    assert paths.shape == (24, 4)
    assert len({tuple(p) for p in paths}) == 24
    assert paths[0].tolist() == [0, 0, 0, 0] and paths[-1].tolist() == [1, 2, 3, 0]


def test_input_gradients_and_layer_terms_match_autodiff():
    net = path_counting.relu_network(3, (5, 4))
    params = net.init(jax.random.key(1))
    x = np.random.default_rng(1).standard_normal((4, 3))
    auto = jax.vmap(jax.grad(lambda v: net.apply(params, v[None])[0]))(jnp.asarray(x))
    np.testing.assert_allclose(path_counting.input_gradients(net, params, x), auto, rtol=1e-12)
    dense = tangent.empirical_ntk(net.apply, params, x, implementation="jacobian")
    terms = path_counting.ntk_layer_terms(net, params, x)
    np.testing.assert_allclose(terms.sum(1), jnp.diag(dense), rtol=1e-12)


def test_weight_laws_have_unit_variance():
    g = {"W": jnp.asarray(np.random.default_rng(2).standard_normal((400, 500))), "b": jnp.zeros(500)}
    rade = path_counting.transform_weights([g], "rademacher")[0]["W"]
    unif = path_counting.transform_weights([g], "uniform")[0]["W"]
    assert set(np.unique(rade).tolist()) == {-1.0, 1.0}
    assert float(jnp.max(jnp.abs(unif))) <= 3**0.5
    for w in (rade, unif):       # 2e5 draws: standard errors ~ 0.002 (mean), ~ 0.003 (variance)
        assert abs(float(w.mean())) < 0.01 and abs(float(w.var()) - 1) < 0.015
    assert path_counting.transform_weights([g], "gaussian")[0]["W"] is g["W"]


def test_ensemble_networks_are_blocks_of_init_many():
    net = path_counting.relu_network(2, (3,))
    key, x = jax.random.key(5), np.array([[0.3, -1.0]])
    grads = path_counting.input_gradient_ensemble(net, key, 5, x, chunk=2)
    for i in range(5):
        params = net.init_many(jax.random.fold_in(key, i // 2), 2)
        one = [{"W": layer["W"][i % 2], "b": layer["b"][i % 2]} for layer in params]
        np.testing.assert_allclose(grads[i], path_counting.input_gradients(net, one, x), rtol=1e-12)


def test_monte_carlo_moments_match_the_exact_formulas():
    """20 000 Gaussian networks, widths (6, 6): E[J^2] = 2/n0, E[J^4] exact, E[Theta] = 2(L+1)|x|^2/n0."""
    net = path_counting.relu_network(3, (6, 6))
    x = np.array([[0.5, -1.2, 0.9]])
    j = path_counting.input_gradient_ensemble(net, jax.random.key(6), 20_000, x)[:, 0, 1]
    exact = path_counting.derivative_moments(3, (6, 6))
    for power, want in ((2, exact.second), (4, exact.fourth)):
        est = stats.mean_and_stderr(j**power)
        assert abs(est.mean - want) < 4 * est.stderr, (power, est, want)
    theta = path_counting.ntk_diagonal_ensemble(net, jax.random.key(7), 20_000, x)[:, 0].sum(1)
    est = stats.mean_and_stderr(theta)
    assert abs(est.mean - path_counting.ntk_diagonal_mean(x, 2)[0]) < 4 * est.stderr


def test_derivative_moments_formula():
    k = sp.Symbol("k", integer=True)
    for width in (3, 7):       # one layer's factor, from the binomial pmf
        factor = sp.Rational(4, width**2) * sp.summation(
            (k**2 + 2 * k) * sp.binomial(width, k) / 2**width, (k, 0, width))
        assert factor == 1 + sp.Rational(5, width)
    m = path_counting.derivative_moments(5, (3, 7))
    assert m.second == pytest.approx(0.4)
    assert m.fourth == pytest.approx(12 / 25 * (1 + 5 / 3) * (1 + 5 / 7), rel=1e-14)
    assert m.fourth_exp == pytest.approx(12 / 25 * np.exp(5 * (1 / 3 + 1 / 7)), rel=1e-14)
    assert path_counting.beta((4, 4, 8)) == pytest.approx(0.625)


def test_relative_second_moment_and_bootstrap():
    draws = np.random.default_rng(8).exponential(size=4000)      # E[T^2]/E[T]^2 = 2
    est = stats.bootstrap(jax.random.key(9), draws, path_counting.relative_second_moment)
    assert abs(est.value - 2) < 4 * est.stderr
    again = stats.bootstrap(jax.random.key(9), draws, path_counting.relative_second_moment)
    assert again == est                                        # keyed: reproducible
    mean_est = stats.bootstrap(jax.random.key(10), draws, np.mean, resamples=400)
    assert mean_est.stderr == pytest.approx(draws.std() / np.sqrt(draws.size), rel=0.15)
    batch = path_counting.relative_second_moment(np.stack([draws, 2 * draws]))
    np.testing.assert_allclose(batch, [est.value, est.value])


def test_trained_kernel_change_runs_descend_per_network():
    net = path_counting.relu_network(2, (32, 32))
    many = net.init_many(jax.random.key(11), 3)
    x, y = np.array([[1.0, 0.5], [-0.3, 1.2]]), np.array([0.5, -0.5])
    tiny = path_counting.trained_kernel_change(net, many, x, y, lr=1e-9, steps=1)
    assert np.all(tiny.kernel_change < 1e-6)
    run = path_counting.trained_kernel_change(net, many, x, y, lr=0.1, steps=300)
    assert np.all(run.final_loss < 1e-3 * run.initial_loss) and np.all(run.kernel_change > 0)


def test_path_expansion_rejects_biases():
    with pytest.raises(ValueError, match="bias-free"):
        path_counting.path_expansion(nets.mlp((2, 3, 1), b_std=0.5), nets.mlp((2, 3, 1)).init(jax.random.key(0)),
                                     np.ones((1, 2)))


def _brute_census(signs, x):
    """Forward pass of one integer network in exact fractions: (active, ties, flat ties, coefficients)."""
    from fractions import Fraction
    n0 = len(x)
    coef = [[Fraction(int(i == p)) for p in range(n0)] for i in range(n0)]
    act, tie, flat = [], [], []
    for m in signs[:-1]:
        alive = any(c != 0 for row in coef for c in row)
        pre = [[sum(int(m[i, j]) * coef[i][p] for i in range(len(coef))) for p in range(n0)]
               for j in range(m.shape[1])]
        z = [sum(row[p] * Fraction(x[p]) for p in range(n0)) for row in pre]
        act.append(sum(v > 0 for v in z))
        tie.append(sum(alive and v == 0 for v in z))
        flat.append(sum(alive and v == 0 and all(c == 0 for c in row) for v, row in zip(z, pre)))
        coef = [row if v > 0 else [Fraction(0)] * n0 for row, v in zip(pre, z)]
    out = [sum(int(signs[-1][i, 0]) * coef[i][p] for i in range(len(coef))) for p in range(n0)]
    return act, tie, flat, out


@pytest.mark.parametrize("x", [np.array([3.0, -4.0, 5.0, -6.0]), np.array([0.71, -1.3, 0.2, 2.9])])
def test_sign_census_matches_exact_fractions(x):
    rng = np.random.default_rng(12)
    widths = (4, 3, 3, 2, 1)
    signs = [rng.choice([-1, 1], size=(40, a, b)) for a, b in zip(widths[:-1], widths[1:])]
    census = path_counting.sign_census(signs, x)
    for i in range(40):
        act, tie, flat, out = _brute_census([s[i] for s in signs], x)
        assert census.active[i].tolist() == act and census.ties[i].tolist() == tie
        assert census.flat_ties[i].tolist() == flat and census.coefficients[i].tolist() == out
    assert census.scale == pytest.approx(np.sqrt(2 / 4 * (2 / 3) ** 2 * 2 / 2))
    assert census.ties.sum() > 0           # this sample has ties, so the comparison means something


def test_sign_census_is_the_network():
    """With the scales, the coefficients are the input gradient of the Rademacher network."""
    net = path_counting.relu_network(3, (5, 4))
    params = path_counting.transform_weights(net.init_many(jax.random.key(13), 6), "rademacher")
    x = np.array([0.3, -1.7, 0.9])
    census = path_counting.sign_census([np.asarray(l["W"]) for l in params], x)
    grads = jax.vmap(lambda p: path_counting.input_gradients(net, p, x[None]))(params)[:, 0]
    np.testing.assert_allclose(census.scale * census.coefficients, grads, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="integers"):
        path_counting.sign_census([np.asarray(l["W"]) + 0.5 for l in params], x)
    with pytest.raises(ValueError, match="readout"):
        path_counting.sign_census([np.asarray(l["W"]) for l in params][:-1], x)
    with pytest.raises(ValueError, match="x must have shape"):
        path_counting.sign_census([np.asarray(l["W"]) for l in params], x[:2])


def test_derivative_law_sample_moments():
    d = path_counting.derivative_law_sample(jax.random.key(14), 4, (6, 6), 200_000)
    exact = path_counting.derivative_moments(4, (6, 6))
    for power, want in ((2, exact.second), (4, exact.fourth)):
        est = stats.mean_and_stderr(d**power)
        assert abs(est.mean - want) < 4 * est.stderr, (power, est, want)
    assert abs(stats.mean_and_stderr(d).mean) < 4 * stats.mean_and_stderr(d).stderr   # symmetric


def test_ratio_estimate_matches_the_spread_over_seeds():
    """Exponential draws (ratio 2): the jackknife error predicts the spread over 40 keys."""
    values, errors = [], []
    for seed in range(40):
        g = np.asarray(sampling.standard_normal(jax.random.key(100 + seed), (4000, 2)))
        t = 0.5 * (g**2).sum(1)                                # Exp(1)
        est = path_counting.ratio_estimate(t, batches=20)
        values.append(est.value)
        errors.append(est.stderr)
    assert abs(np.std(values, ddof=1) / np.mean(errors) - 1) < 0.3
    assert abs(np.mean(values) - 2) < 4 * np.std(values) / np.sqrt(40)
    with pytest.raises(ValueError, match="per batch"):
        path_counting.ratio_estimate(np.ones(10), batches=20)


def test_layer_factor_ratio():
    assert path_counting.layer_factor_ratio((16,)) == pytest.approx(1 + 3 / 16, rel=1e-14)
    n1, n2 = 7, 11       # by hand: the six pair moments of two hidden layers
    big1, big2, sm1, sm2 = 1 + 5 / n1, 1 + 5 / n2, 1 + 1 / n1, 1 + 1 / n2
    pairs = 3 * big1 * big2 + 2 * sm1 * big2 + 2 * big1 * sm2 + 2 * sm1 * sm2
    assert path_counting.layer_factor_ratio((n1, n2)) == pytest.approx(pairs / 9, rel=1e-14)
    # every term is at most prod(1 + 5/n) (Cauchy-Schwarz), at least prod(1 + 1/n)
    hidden = (9, 4, 13)
    r = path_counting.layer_factor_ratio(hidden)
    assert np.prod([1 + 1 / n for n in hidden]) < r < np.prod([1 + 5 / n for n in hidden])
    # the large-depth limit at fixed beta = L/n: e^{5 beta} 2 (a - 1 + e^{-a}) / a^2, a = 4 beta
    a = 1.0
    limit = np.exp(1.25) * 2 * (a - 1 + np.exp(-a)) / a**2
    assert path_counting.layer_factor_ratio((4000,) * 1000) == pytest.approx(limit, rel=2e-3)


# ----------------------------------------------------------------------------- exercise checkers
def test_check_layer_moment():
    ch09.check_layer_moment(lambda n: 1 + 5 / n)
    ch09.check_layer_moment(lambda n: (2 / n) ** 2 * (n**2 / 4 + 5 * n / 4))
    with pytest.raises(ExerciseCheckError, match="at n=1"):
        ch09.check_layer_moment(lambda n: 1 + 3 / n)            # chi^2 variance forgotten
    with pytest.raises(ExerciseCheckError, match="sympy expression"):
        ch09.check_layer_moment(lambda n: np.ones(2))
    with pytest.raises(ExerciseCheckError, match="symbols"):
        ch09.check_layer_moment(lambda n: 1 + 5 / sp.Symbol("m"))


def test_check_paths_through_weight():
    ch09.check_paths_through_weight(lambda w, k: int(np.prod(w)) // (w[k - 1] * w[k]))
    with pytest.raises(ExerciseCheckError, match="layer"):
        ch09.check_paths_through_weight(lambda w, k: int(np.prod(w)) // (w[-2] * w[-3]))   # the notes' count


def test_check_one_layer_ratio():
    ch09.check_one_layer_ratio(lambda n: 1 + 3 / n)
    with pytest.raises(ExerciseCheckError):
        ch09.check_one_layer_ratio(lambda n: sp.exp(5 / n))
    with pytest.raises(ExerciseCheckError):
        ch09.check_one_layer_ratio(lambda n: 1 + 5 / n)      # the derivative's layer factor


def test_check_active_probability():
    def exact(x):
        signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * len(x))).reshape(len(x), -1).T
        return float(np.mean(signs @ x > 0))

    ch09.check_active_probability(exact)
    with pytest.raises(ExerciseCheckError, match="3"):
        ch09.check_active_probability(lambda x: 0.5)
    with pytest.raises(ExerciseCheckError):               # ties counted as active
        ch09.check_active_probability(lambda x: 1 - exact(x))


def test_check_tie_moment():
    def exact(x):
        signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * len(x))).reshape(len(x), -1).T
        return 4 / len(x) * float(np.mean(signs @ x > 0))

    ch09.check_tie_moment(exact)
    assert exact(np.ones(4)) == 5 / 16
    with pytest.raises(ExerciseCheckError, match="1. 1. 1. 1."):
        ch09.check_tie_moment(lambda x: 2 / len(x))          # fair coins
    with pytest.raises(ExerciseCheckError):                   # P(active) without 4/n_0
        ch09.check_tie_moment(lambda x: exact(x) * len(x) / 4)
    with pytest.raises(ExerciseCheckError):                   # ties counted as active
        ch09.check_tie_moment(lambda x: 4 / len(x) - exact(x))


def test_check_depth_limit():
    def right(beta):
        a = 4 * beta
        return float(np.exp(5 * beta) * 2 * (a - 1 + np.exp(-a)) / a**2)

    ch09.check_depth_limit(right)
    assert abs(right(0.25) - path_counting.layer_factor_ratio((4000,) * 1000)) < 5e-3
    with pytest.raises(ExerciseCheckError, match="the bound"):
        ch09.check_depth_limit(lambda beta: float(np.exp(5 * beta)))
    with pytest.raises(ExerciseCheckError, match="first order"):
        ch09.check_depth_limit(lambda beta: 1 + 11 * beta / 3)
    with pytest.raises(ExerciseCheckError, match="count 1 instead"):     # E[F B] taken as 1
        ch09.check_depth_limit(lambda beta: float(np.exp(5 * beta) * 2 * (5 * beta - 1
                                                  + np.exp(-5 * beta)) / (5 * beta) ** 2))
    with pytest.raises(ExerciseCheckError, match="expected"):
        ch09.check_depth_limit(lambda beta: 2.0)


def test_layer_product_moment():
    assert path_counting.layer_product_moment((5, 9), 1) == pytest.approx(1.0, rel=1e-14)
    assert path_counting.layer_product_moment((5, 9), 2) == pytest.approx((1 + 5 / 5) * (1 + 5 / 9))
    # order 4 against the sampled law (chi^2 as the sum of squared positive normals)
    d = path_counting.derivative_law_sample(jax.random.key(15), 2, (12,), 400_000)
    y = d**2 / 1.0      # (2/n0) g^2 Y with n0 = 2: E[d^4] = 3 E[Y^2], E[d^8] = 105 E[Y^4]
    est = stats.mean_and_stderr(y**2)
    assert abs(est.mean - 3 * path_counting.layer_product_moment((12,), 2)) < 4 * est.stderr
    k = sp.Symbol("k", integer=True)       # E[((2/n) chi^2_K)^3] by the pmf, n = 6
    third = sp.Rational(8, 216) * sp.summation(k * (k + 2) * (k + 4) * sp.binomial(6, k) / 64,
                                               (k, 0, 6))
    assert path_counting.layer_product_moment((6,), 3) == pytest.approx(float(third), rel=1e-14)


def test_part_ratio_stderr_is_the_spread_of_the_plug_in_ratio():
    """200 runs of 2000 draws from the law of one part: the exact error predicts their spread."""
    ys = []
    for seed in range(200):
        g = np.asarray(sampling.standard_normal(jax.random.key(900 + seed), (2000, 12)))
        ys.append(np.prod([2 / 6 * np.sum(np.maximum(g[:, 6 * i:6 * i + 6], 0) ** 2, 1)
                           for i in range(2)], axis=0))
    ratios = [path_counting.relative_second_moment(y) for y in ys]
    want = path_counting.part_ratio_stderr((6, 6), 2000)
    assert abs(np.std(ratios, ddof=1) / want - 1) < 0.25, (np.std(ratios, ddof=1), want)
    assert abs(np.mean(ratios) - (1 + 5 / 6) ** 2) < 4 * want / np.sqrt(200) + 0.02
