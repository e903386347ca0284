"""Feature-learning measurements: data, overlaps, stable steps, movement against width and alpha."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import feature_learning as fl
from lecturekit import nets, sampling, tangent, training

jax.config.update("jax_enable_x64", True)


def test_single_index_data_has_the_stated_law():
    u = jnp.array([3.0, 0.0, 4.0])
    x, y = fl.single_index_data(jax.random.key(0), 20000, u)
    assert x.shape == (20000, 3)
    np.testing.assert_allclose(y, (x @ (u / 5)) ** 2 - 1, rtol=1e-12, atol=1e-12)
    # E y = 0 and Var y = 2: standard errors sqrt(2/n) = 0.01 and about 0.05
    assert abs(float(jnp.mean(y))) < 0.05 and abs(float(jnp.var(y)) - 2) < 0.25
    x2, _ = fl.single_index_data(jax.random.key(0), 5, u)
    np.testing.assert_array_equal(x2, sampling.standard_normal(jax.random.key(0), (5, 3)))


def test_overlap_and_energy_by_hand():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((6, 40))
    u = np.eye(6)[2]
    # every unit moves along u by a random amount: the top direction of the change is u
    w1 = w0 + np.outer(u, rng.standard_normal(40))
    assert abs(fl.top_direction_overlap(w0, w1, 5 * u) - 1) < 1e-12
    # energy along u: d * sum_i <w_i, u>^2 / ||W||^2, by hand
    assert abs(fl.direction_energy(w1, u) - 6 * np.sum(w1[2] ** 2) / np.sum(w1**2)) < 1e-12
    assert fl.direction_energy(np.outer(u, np.ones(3)), u) == pytest.approx(6.0)
    assert fl.relative_change(w0, 2 * w0) == pytest.approx(1.0)


def test_feature_kernel_is_the_last_hidden_gram_matrix():
    net = nets.mlp((3, 8, 5, 1), "tanh", b_std=0.3)
    p = net.init(jax.random.key(2))
    x = jax.random.normal(jax.random.key(3), (4, 3))
    h = jnp.tanh(net.forward(p, x)[0][1])
    np.testing.assert_allclose(fl.feature_kernel(net, p, x), h @ h.T / 5, rtol=1e-12)


def test_largest_stable_lr_is_the_edge_of_stability_of_the_linearized_model():
    net = nets.mlp((3, 64, 1), "tanh")
    p = net.init(jax.random.key(4))
    x = jax.random.normal(jax.random.key(5), (10, 3))
    y = jnp.sin(x[:, 0])
    lr = fl.largest_stable_lr(net, p, x)
    theta = tangent.empirical_ntk(net.apply, p, x, implementation="jacobian")
    assert lr == pytest.approx(20 / float(jnp.linalg.eigvalsh(theta)[-1]), rel=1e-10)
    lin = tangent.linearize(net.apply, p)
    loss = training.mse_loss(lin, x, y)
    below = training.descend(loss, p, lr=0.95 * lr, steps=400).losses
    above = training.descend(loss, p, lr=1.05 * lr, steps=400).losses
    assert below[-1] < below[0] and above[-1] > 1e3 * above[0]


def test_feature_movement_scales_with_width_and_alpha():
    x = jax.random.normal(jax.random.key(6), (10, 4))
    y = jnp.sin(2 * x[:, 0])
    moves = []
    for m in (64, 1024):
        net = nets.mlp((4, m, 1), "relu")
        moves.append(fl.feature_movement(net, net.init(jax.random.key(m)), x, y, lr=1.0, steps=100))
    # NTK parameterization: 16x wider moves the weights ~4x less (m^-1/2), the kernel more
    ratio_w = moves[0].weight_change / moves[1].weight_change
    ratio_k = moves[0].kernel_change / moves[1].kernel_change
    assert 2.5 < ratio_w < 6.5 and ratio_k > ratio_w, (ratio_w, ratio_k)
    mf = nets.mlp((4, 256, 1), "relu", parameterization="mean_field")
    p0 = mf.init(jax.random.key(7))
    by_alpha = [fl.feature_movement(mf, p0, x, y, lr=256.0, steps=100, alpha=a).weight_change
                for a in (1.0, 100.0, 1000.0)]
    assert by_alpha[0] > 0.5 and 8 < by_alpha[1] / by_alpha[2] < 12, by_alpha


def test_chapter_7_exercise_checks_accept_the_solutions_and_reject_the_notes():
    from lecturekit.exercises import ExerciseCheckError, ch07
    ch07.check_contraction_factor(lambda lams, lr: float(np.max(np.abs(1 - lr * np.asarray(lams)))))
    with pytest.raises(ExerciseCheckError, match="got 0.81 where 0.9"):
        ch07.check_contraction_factor(lambda lams, lr: 1 - lr * min(lams))
    ch07.check_best_step(lambda a, b: (2 / (a + b), (b - a) / (b + a)))
    with pytest.raises(ExerciseCheckError, match="optimal step"):
        ch07.check_best_step(lambda a, b: (1 / b, 1 - a / b))
    ch07.check_noise_floor(lambda lams, lr, s: lr * s**2 / 2 * float(np.sum(1 / (2 - lr * np.asarray(lams)))))
    with pytest.raises(ExerciseCheckError, match="stationary mean loss"):
        ch07.check_noise_floor(lambda lams, lr, s: lr * s**2 * len(lams) / 4)   # small-lr approximation
    ch07.check_ntk_alpha(lambda m: float(np.sqrt(m)))
    with pytest.raises(ExerciseCheckError, match="alpha for width"):
        ch07.check_ntk_alpha(lambda m: float(m))
    with pytest.raises(ExerciseCheckError, match="alpha for width"):
        ch07.check_ntk_alpha(lambda m: float(1 / np.sqrt(m)))   # the inverse
    # muP's table, written from TP V's scalings (not from the library's multipliers)
    table = {"input": lambda fi, fo: (1 / fi, fo), "hidden": lambda fi, fo: (1 / fi, 1.0),
             "readout": lambda fi, fo: (1 / fi**2, 1 / fi)}
    ch07.check_mup_scalings(lambda fi, fo, layer: table[layer](fi, fo))
    # constants do not matter, only the width dependence
    ch07.check_mup_scalings(lambda fi, fo, layer: tuple(3.0 * v for v in table[layer](fi, fo)))
    wrong = {"standard parameterization": lambda fi, fo, layer: (1 / fi, 1.0),
             "NTK parameterization": lambda fi, fo, layer: (1 / fi, 1 / fi),
             "muP for Adam": lambda fi, fo, layer: {"input": (1 / fi, 1.0), "hidden": (1 / fi, 1 / fi),
                                                    "readout": (1 / fi**2, 1 / fi)}[layer],
             "muP for SGD": lambda fi, fo, layer: (table[layer](fi, fo)[0], 1.0)}   # steps forgotten
    for match, answer in wrong.items():
        with pytest.raises(ExerciseCheckError, match=match):
            ch07.check_mup_scalings(answer)
    with pytest.raises(ExerciseCheckError, match="input dimension doubles"):     # variance 1, not 1/d
        ch07.check_mup_scalings(lambda fi, fo, layer: (1.0, fo) if layer == "input"
                                else table[layer](fi, fo))


def test_structured_ntk_of_the_mean_field_net_matches_autodiff_and_decays_like_one_over_width():
    x = jax.random.normal(jax.random.key(8), (6, 3))
    traces = []
    for m in (16, 1024):
        net = nets.mlp((3, m, m, 1), "tanh", b_std=0.2, out_b_std=0.1, parameterization="mean_field")
        p = net.init(jax.random.key(9))
        structured = tangent.empirical_ntk(net.apply, p, x, implementation="structured", net=net)
        if m == 16:
            np.testing.assert_allclose(structured, tangent.jacobian_ntk(net.apply, p, x), rtol=1e-10, atol=1e-14)
        # subtract the readout-bias term out_b_std^2, which does not decay
        traces.append(float(jnp.trace(structured)) - 6 * 0.1**2)
    # NTK part ~ 1/m: 64x wider, about 64x smaller (rejects 1/sqrt(m): 8x)
    assert 40 < traces[0] / traces[1] < 100, traces


@pytest.mark.parametrize("name", ["check_contraction_factor", "check_best_step", "check_noise_floor",
                                  "check_ntk_alpha", "check_mup_scalings"])
def test_chapter_7_checks_explain_non_answers(name):
    from lecturekit.exercises import ExerciseCheckError, ch07

    def stub(*args):
        raise NotImplementedError("Exercise: write your solution in this cell")

    check = getattr(ch07, name)
    for answer in (None, 3.0, stub, lambda *args: None):
        with pytest.raises(ExerciseCheckError):
            check(answer)


# ------------------------------------------------------------------ muP and learning-rate sweeps
def _exponents(par, depth=2):
    tables = [fl.effective_scalings(nets.mlp((5,) + (m,) * depth + (1,), "relu", b_std=0.5, out_b_std=0.5,
                                             parameterization=par)) for m in (256, 1024)]
    return {name: np.log(getattr(tables[1], name) / getattr(tables[0], name)) / np.log(4)
            for name in fl.LayerScalings._fields}


def test_effective_scalings_give_the_tensor_programs_v_table():
    # width exponents (input, hidden, readout) of TP V's table for SGD: muP has variances
    # 1/fan_in (input, hidden), 1/fan_in^2 (readout) and steps fan_out, 1, 1/fan_in; biases
    # step fan_out. SP: variances 1/fan_in, every step 1. NTK: steps 1/fan_in.
    expected = {
        "mup": ([0, -1, -2], [1, 0, -1], [0, 0, 0], [1, 1, 0]),
        "standard": ([0, -1, -1], [0, 0, 0], [0, 0, 0], [0, 0, 0]),
        "ntk": ([0, -1, -1], [0, -1, -1], [0, 0, 0], [0, 0, 0]),
        "mean_field": ([0, -1, -2], [0, -1, -2], [0, 0, 0], [0, 0, 0]),
    }
    for par, table in expected.items():
        got = _exponents(par)
        for name, want in zip(fl.LayerScalings._fields, table):
            np.testing.assert_allclose(got[name], want, atol=1e-12, err_msg=f"{par} {name}")
    # by hand for one muP network: w_std^2/d, w_std^2 n/d (input), out^2/n^2, out^2/n (readout)
    t = fl.effective_scalings(nets.mlp((4, 32, 1), w_std=1.5, out_w_std=0.5, parameterization="mup"))
    np.testing.assert_allclose(t.weight_variance, [1.5**2 / 4, 0.25 / 32**2], rtol=1e-14)
    np.testing.assert_allclose(t.weight_lr, [1.5**2 * 32 / 4, 0.25 / 32], rtol=1e-14)
    with pytest.raises(TypeError, match="lecturekit.nets.MLP"):
        fl.effective_scalings("mup")


def test_lr_sweep_is_a_grid_of_descend_runs():
    net = nets.mlp((3, 16, 1), "tanh")
    x = jax.random.normal(jax.random.key(10), (8, 3))
    y = jnp.sin(x[:, 0])
    lrs = [0.1, 1.0, 50.0]
    swept = fl.lr_sweep(net, x, y, lrs, key=jax.random.key(11), seeds=3, steps=20)
    inits = nets.unstack(net.init_many(jax.random.key(11), 3))
    for s, p in enumerate(inits):
        for j, lr in enumerate(lrs[:2]):
            run = training.descend(training.mse_loss(net.apply, x, y), p, lr=lr, steps=20)
            np.testing.assert_allclose(swept[s, j], run.losses[-1], rtol=1e-10)
    assert np.all(np.isinf(np.asarray(swept[:, 2])))            # diverged: +inf
    again = fl.lr_sweep(net, x, y, lrs, key=jax.random.key(11), seeds=3, steps=20, batch_size=1)
    np.testing.assert_allclose(again, swept, rtol=1e-12)           # batching changes nothing
    low = fl.lr_sweep(net, x, y, lrs, key=jax.random.key(11), seeds=1, steps=20, dtype=jnp.float32)
    assert low.dtype == jnp.float32
    for kwargs, match in (({"lrs": [0.1, -1.0]}, "positive step sizes"), ({"seeds": 0}, "seeds"),
                          ({"steps": 0}, "steps"), ({"y": jnp.ones(5)}, "shapes")):
        args = dict(net=net, x=x, y=y, lrs=lrs, key=jax.random.key(0), seeds=2, steps=5)
        args.update(kwargs)
        with pytest.raises(ValueError, match=match):
            fl.lr_sweep(**args)


def test_best_lr_interpolates_brackets_and_stops_at_the_cliff():
    lrs = 2.0 ** np.arange(-3, 4)
    bowl = np.exp(0.7 * (np.log(lrs) - np.log(0.8)) ** 2)        # log-loss a parabola
    assert fl.best_lr(lrs, bowl) == pytest.approx(0.8, rel=1e-12)
    cliff = np.array([5.0, 4.0, 3.0, 2.0, np.inf, np.inf, np.inf])
    assert fl.best_lr(lrs, cliff) == lrs[3]                     # the last stable grid point
    edge = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])        # not bracketed
    out = fl.best_lr(lrs, np.stack([bowl, edge, edge[::-1]]))
    assert out[0] == pytest.approx(0.8) and np.isnan(out[1]) and np.isnan(out[2])
    # within half a grid step of the best grid point, whatever the neighbours
    rng = np.random.default_rng(0)
    rows = rng.uniform(1, 2, (200, 7))
    est = fl.best_lr(lrs, rows)
    k = np.argmin(rows, axis=1)
    inside = (k > 0) & (k < 6)
    assert np.all(np.abs(np.log2(est[inside] / lrs[k[inside]])) <= 0.5 + 1e-12)
    for bad, match in (([1.0, 2.0], "at least 3"), ([1.0, 2.0, 5.0], "geometrically")):
        with pytest.raises(ValueError, match=match):
            fl.best_lr(bad, np.ones(len(bad)))
    with pytest.raises(ValueError, match="shape"):
        fl.best_lr(lrs, np.ones(5))
    with pytest.raises(ValueError, match="positive"):
        fl.best_lr(lrs, -bowl)


def test_bias_threshold_is_that_of_the_bias_jacobian():
    net = nets.mlp((3, 12, 9, 1), "tanh", b_std=0.7, out_b_std=0.3, parameterization="standard")
    p = net.init(jax.random.key(12))
    x = jax.random.normal(jax.random.key(13), (7, 3))
    f_b = lambda bs: net.apply([dict(layer, b=b) for layer, b in zip(p, bs)], x)  # noqa: E731
    jac = jax.jacrev(f_b)([layer["b"] for layer in p])
    j_b = jnp.concatenate([j.reshape(7, -1) for j in jac], axis=1)
    want = 14 / float(jnp.linalg.eigvalsh(j_b @ j_b.T)[-1])
    assert fl.largest_stable_lr(net, p, x, biases_only=True) == pytest.approx(want, rel=1e-10)
    assert fl.largest_stable_lr(net, p, x) < want          # the weights only add curvature


def test_feature_movement_on_the_lazy_loss_is_descent_on_lazy_loss():
    # feature_movement trains L(f - f_0, y / alpha), which equals the lazy loss
    # (1/alpha^2) L(alpha (f - f_0), y) as a function of the parameters
    net = nets.mlp((3, 32, 1), "tanh", parameterization="mean_field")
    p0 = net.init(jax.random.key(14))
    x = jax.random.normal(jax.random.key(15), (6, 3))
    y = jnp.cos(x[:, 1])
    for alpha in (1.0, 7.0):
        out = fl.feature_movement(net, p0, x, y, lr=32.0, steps=40, alpha=alpha)
        ref = training.descend(training.lazy_loss(net.apply, p0, x, y, alpha=alpha), p0, lr=32.0, steps=40)
        np.testing.assert_allclose(out.losses, ref.losses, rtol=1e-9)
        np.testing.assert_allclose(out.final_params[0]["W"], ref.final_params[0]["W"], rtol=1e-9)
    with pytest.raises(ValueError, match="alpha"):
        fl.feature_movement(net, p0, x, y, lr=1.0, steps=1, alpha=0.0)
