"""Tests of lecturekit.training, and the 10% agreement of a wide deep ReLU net's NTK with theory."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import lecturekit
from lecturekit import nets, regression, tangent, training

jax.config.update("jax_enable_x64", True)


def _data(n=6, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    return x, np.sin(x[:, 0]) + x[:, 1]


def _quadratic(a=2.0):
    return lambda th: 0.5 * a * th**2


def _hand_loop(loss_fn, params, lr, steps):
    """The reference: a plain Python loop of gradient steps, losses before every step and after."""
    grad = jax.grad(loss_fn)
    losses = []
    for _ in range(steps):
        losses.append(float(loss_fn(params)))
        params = jax.tree_util.tree_map(lambda a, g: a - lr * g, params, grad(params))
    losses.append(float(loss_fn(params)))
    return params, np.array(losses)


def test_square_loss_and_cross_entropy_normalizations():
    out, tgt = jnp.array([[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]), jnp.zeros((3, 2))
    np.testing.assert_allclose(training.square_loss(out, tgt), (5.0 + 0.0 + 9.0) / (2 * 3))
    np.testing.assert_allclose(training.square_loss(out[:, 0], tgt[:, 0]), 10.0 / 6)
    logits = jnp.array([[2.0, 0.0], [0.0, 1.0]])
    onehot = jnp.eye(2)
    expected = -np.mean(np.log(np.exp([2.0, 1.0]) / np.array([np.exp(2.0) + 1, 1 + np.exp(1.0)])))
    np.testing.assert_allclose(training.cross_entropy(logits, onehot), expected, rtol=1e-12)
    x, y = _data()
    f = lambda w, x: x @ w  # noqa: E731
    np.testing.assert_allclose(training.mse_loss(f, x, y)(jnp.ones(3)), training.square_loss(x @ np.ones(3), y))
    with pytest.raises(ValueError, match="same shape"):
        training.square_loss(jnp.ones((3, 1)), jnp.ones(3))
    with pytest.raises(ValueError, match="logits"):
        training.cross_entropy(jnp.ones(3), jnp.ones(3))


def test_descend_matches_a_hand_written_loop_on_a_network():
    x, y = _data()
    net = nets.mlp((3, 16, 1), "tanh")
    p0 = net.init(jax.random.key(0))
    loss = training.mse_loss(net.apply, x, y)
    run = training.descend(loss, p0, lr=0.3, steps=17, every=5, observe=lambda p: net.apply(p, x))
    final, losses = _hand_loop(loss, p0, 0.3, 17)
    np.testing.assert_allclose(run.losses, losses, rtol=1e-10)
    for got, want in zip(jax.tree_util.tree_leaves(run.final_params), jax.tree_util.tree_leaves(final)):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    assert run.steps.tolist() == [0, 5, 10, 15, 17]
    assert run.observed.shape == (5, 6)
    np.testing.assert_allclose(run.observed[-1], net.apply(final, x), rtol=1e-10)
    np.testing.assert_allclose(run.observed[0], net.apply(p0, x), rtol=1e-12)
    assert int(run.diverged_at) == -1


@pytest.mark.parametrize("steps, every, at", [(7, 3, [0, 3, 6, 7]), (6, 3, [0, 3, 6]), (5, None, [0, 5]),
                                              (0, None, [0]), (4, 10, [0, 4]), (3, 1, [0, 1, 2, 3])])
def test_observation_steps_on_a_quadratic(steps, every, at):
    # L = 1/2 a theta^2: theta_k = (1 - lr a)^k theta_0, observed at 0, every, ..., steps.
    a, lr = 2.0, 0.1
    run = jax.jit(lambda th: training.descend(_quadratic(a), th, lr=lr, steps=steps, every=every,
                                              observe=lambda t: 2 * t))(jnp.asarray(1.5))
    assert run.steps.tolist() == at
    np.testing.assert_allclose(run.observed, 2 * 1.5 * (1 - lr * a) ** np.array(at), rtol=1e-12)
    np.testing.assert_allclose(run.losses, 0.5 * a * (1.5 * (1 - lr * a) ** np.arange(steps + 1)) ** 2, rtol=1e-12)
    np.testing.assert_allclose(run.final_params, 1.5 * (1 - lr * a) ** steps, rtol=1e-12)
    assert run.losses.shape == (steps + 1,)


def test_stop_above_freezes_the_iterate():
    # theta_k = (1 - lr a)^k = (-2)^k for lr a = 3: losses 0.5, 2, 8, 32 > 10 at step 3
    run = training.descend(_quadratic(1.0), jnp.asarray(1.0), lr=3.0, steps=8, every=2, stop_above=10.0,
                           observe=lambda t: t)
    assert int(run.diverged_at) == 3
    np.testing.assert_allclose(run.losses[:3], [0.5, 2.0, 8.0])
    assert np.all(np.isinf(run.losses[3:]))
    assert float(run.final_params) == -8.0                       # the iterate whose loss exceeded
    np.testing.assert_allclose(run.observed, [1.0, 4.0, -8.0, -8.0, -8.0])
    # a NaN loss counts as diverged too; without stop_above nothing is frozen, diverged_at
    # marks the first non-finite loss
    free = training.descend(_quadratic(1.0), jnp.asarray(1.0), lr=3.0, steps=2000)
    assert not np.isfinite(free.losses[-1]) and int(free.diverged_at) > 0
    assert np.all(np.isfinite(free.losses[:int(free.diverged_at)]))
    stopped = training.descend(lambda t: jnp.where(t < -3.0, jnp.nan, 0.5 * t**2), jnp.asarray(1.0),
                               lr=3.0, steps=8, stop_above=1e9)
    assert int(stopped.diverged_at) == 3 and float(stopped.final_params) == -8.0
    # divergence found at the very last loss
    last = training.descend(_quadratic(1.0), jnp.asarray(1.0), lr=3.0, steps=3, stop_above=10.0)
    assert int(last.diverged_at) == 3 and np.isinf(last.losses[-1]) and float(last.final_params) == -8.0


def test_descend_vmaps_over_lr_and_params_and_jits():
    x, y = _data()
    net = nets.mlp((3, 16, 1), "tanh")
    params = net.init_many(jax.random.key(0), 3) if hasattr(net, "init_many") else \
        jax.vmap(net.init)(jax.random.split(jax.random.key(0), 3))
    loss = training.mse_loss(net.apply, x, y)
    many = jax.jit(jax.vmap(lambda p: training.descend(loss, p, lr=0.1, steps=20, every=10)))(params)
    assert many.losses.shape == (3, 21) and many.diverged_at.shape == (3,)
    one = training.descend(loss, jax.tree_util.tree_map(lambda l: l[1], params), lr=0.1, steps=20)
    np.testing.assert_allclose(many.final_params[0]["W"][1], one.final_params[0]["W"], rtol=1e-10)
    np.testing.assert_allclose(many.losses[1], one.losses, rtol=1e-10)
    # a learning-rate sweep: one compiled program, the same numbers as separate runs
    lrs = jnp.array([0.5, 1.0, 3.0])
    sweep = jax.jit(jax.vmap(lambda lr: training.descend(_quadratic(), jnp.asarray(1.0), lr=lr, steps=6,
                                                         every=2, observe=lambda t: t, stop_above=100.0)))(lrs)
    assert sweep.observed.shape == (3, 4)
    assert sweep.diverged_at.tolist() == [-1, -1, 2]   # lr a = 6: the losses are 1, 25, 625 > 100
    for i, lr in enumerate([0.5, 1.0, 3.0]):
        alone = training.descend(_quadratic(), jnp.asarray(1.0), lr=lr, steps=6, stop_above=100.0)
        np.testing.assert_allclose(sweep.losses[i], alone.losses, rtol=1e-12)


def test_the_step_and_the_observer_are_compiled_once():
    # the loss/gradient and the observer appear once in the program whatever steps/every are
    calls = {"loss": 0, "observe": 0}

    def loss(t):
        calls["loss"] += 1
        return 0.5 * t**2

    def observe(t):
        calls["observe"] += 1
        return t

    jax.make_jaxpr(lambda t: training.descend(loss, t, lr=0.1, steps=1000, every=7, observe=observe))(1.0)
    assert calls["observe"] == 1 and calls["loss"] <= 2, calls    # gradient step + final loss


def test_gradient_descent_observes_kernels_and_params():
    x, y = _data()
    net = nets.mlp((3, 32, 1), "relu")
    p0 = net.init(jax.random.key(1))
    kernel = training.ntk_observer(net.apply, x)
    traj = training.gradient_descent(net.apply, p0, 0.2, 25, x=x, y=y, every=10,
                                     observe=lambda p: (p, kernel(p)))
    params, kernels = traj.observed
    assert traj.steps.tolist() == [0, 10, 20, 25]
    assert traj.losses.shape == (26,)
    assert kernels.shape == (4, 6, 6)
    assert params[0]["W"].shape[0] == 4
    loss = training.mse_loss(net.apply, x, y)
    np.testing.assert_allclose(traj.losses[0], loss(p0), rtol=1e-12)
    np.testing.assert_allclose(traj.losses[-1], loss(traj.final_params), rtol=1e-12)
    np.testing.assert_allclose(kernels[0], tangent.empirical_ntk(net.apply, p0, x), rtol=1e-12)
    np.testing.assert_allclose(params[1]["W"][-1], traj.final_params[1]["W"])
    assert traj.losses[-1] < traj.losses[0]
    dk = training.relative_kernel_change(kernels, kernels[0])
    assert dk.shape == (4,) and float(dk[0]) == 0.0 and float(dk[-1]) > 0.0


def test_loss_form_and_generic_model_kernel():
    x, y = _data(n=4)
    traj = training.gradient_descent(lambda p: jnp.sum((p - 3.0) ** 2), jnp.zeros(2), 0.25, 4)
    np.testing.assert_allclose(traj.final_params, 3.0 * (1 - 0.5**4) * np.ones(2), rtol=1e-12)
    assert traj.observed is None and traj.steps.tolist() == [0, 4]
    model = lambda p, x: jnp.tanh(x @ p["w"]) * p["a"]  # noqa: E731
    p0 = {"w": jnp.ones(3) * 0.3, "a": jnp.asarray(1.2)}
    traj = training.gradient_descent(model, p0, 0.1, 3, x=x, y=y, observe=training.ntk_observer(model, x[:2]))
    assert traj.observed.shape == (2, 2, 2)
    np.testing.assert_allclose(traj.observed[-1], tangent.jacobian_ntk(model, traj.final_params, jnp.asarray(x[:2])))


def test_gradient_descent_inside_jit():
    x, y = _data()
    f = lambda w, x: x @ w  # noqa: E731
    run = jax.jit(lambda w0: training.gradient_descent(f, w0, 0.1, 10, x=x, y=y).losses)
    plain = training.gradient_descent(f, jnp.zeros(3), 0.1, 10, x=x, y=y)
    np.testing.assert_allclose(run(jnp.zeros(3)), plain.losses, rtol=1e-12)


def test_gradient_descent_warns_on_divergence():
    with pytest.warns(lecturekit.NumericalWarning, match="from step 3"):
        traj = training.gradient_descent(_quadratic(1.0), jnp.asarray(1.0), 3.0, 10, stop_above=10.0)
    assert int(traj.diverged_at) == 3


def test_gradient_descent_of_linearized_wide_net_matches_kernel_flow():
    x, y = _data(n=5)
    net = nets.mlp((3, 64, 1), "erf")
    p0 = net.init(jax.random.key(2))
    f_lin = tangent.linearize(net.apply, p0)
    lr, steps = 0.01, 2000
    traj = training.gradient_descent(f_lin, p0, lr, steps, x=x, y=y)
    k0 = tangent.empirical_ntk(net.apply, p0, x)
    pred = regression.gradient_flow_predictor(k0, y, lr * steps, f0_train=net.apply(p0, x))
    np.testing.assert_allclose(f_lin(traj.final_params, x), pred, atol=2e-3)


def test_relative_kernel_change():
    k0 = jnp.eye(2)
    np.testing.assert_allclose(training.relative_kernel_change(2 * k0, k0), 1.0)
    stack = jnp.stack([k0, 1.5 * k0])
    np.testing.assert_allclose(training.relative_kernel_change(stack, k0), [0.0, 0.5])
    with pytest.raises(ValueError, match="zero"):
        training.relative_kernel_change(k0, 0 * k0)
    with pytest.raises(ValueError, match="shape"):
        training.relative_kernel_change(jnp.eye(3), k0)
    with pytest.raises(ValueError, match="finite"):
        training.relative_kernel_change(k0 * np.nan, k0)
    traced = jax.jit(training.relative_kernel_change)(stack, k0)   # the jax.numpy path
    np.testing.assert_allclose(traced, [0.0, 0.5])


def test_bad_inputs():
    x, y = _data()
    net = nets.mlp((3, 8, 1))
    p0 = net.init(jax.random.key(0))
    with pytest.raises(ValueError, match="lr"):
        training.gradient_descent(net.apply, p0, -0.1, 3, x=x, y=y)
    with pytest.raises(TypeError, match="steps"):
        training.gradient_descent(net.apply, p0, 0.1, 2.5, x=x, y=y)
    with pytest.raises(ValueError, match="both"):
        training.gradient_descent(net.apply, p0, 0.1, 3, x=x)
    with pytest.raises(ValueError, match="scalar"):
        training.gradient_descent(lambda p: p[0]["b"], p0, 0.1, 3)
    with pytest.raises(ValueError, match="same number of rows"):
        training.mse_loss(net.apply, x, y[:3])
    with pytest.raises(ValueError, match="same shape"):
        training.gradient_descent(lambda p, x: net.apply(p, x)[:, None], p0, 0.1, 3, x=x, y=y)
    with pytest.raises(TypeError):
        training.gradient_descent(42, p0, 0.1, 3)
    with pytest.raises(ValueError, match="every"):
        training.gradient_descent(net.apply, p0, 0.1, 3, x=x, y=y, every=0)
    with pytest.raises(TypeError, match="observe"):
        training.gradient_descent(net.apply, p0, 0.1, 3, x=x, y=y, observe=3)
    with pytest.raises(TypeError, match="stop_above"):
        training.descend(_quadratic(), jnp.asarray(1.0), lr=0.1, steps=3, stop_above="big")
    with pytest.raises(ValueError, match="lr"):
        training.descend(_quadratic(), jnp.asarray(1.0), lr=0.0, steps=3)
    with pytest.raises(TypeError, match="positional"):
        training.descend(_quadratic(), jnp.asarray(1.0), 0.1, 3)          # lr and steps are keywords


def test_wide_two_hidden_layer_relu_ntk_within_ten_percent():
    # Width 4096, 2 hidden ReLU layers, NTK parameterization: the relative Frobenius error of
    # the empirical NTK is O(1/sqrt(width)) (about 2-4% here); 10% leaves room for any seed.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(10, 5))
    net = nets.mlp((5, 4096, 4096, 1), "relu", b_std=0.1)
    theory = net.kernels(x).ntk
    for seed in range(2):
        emp = tangent.empirical_ntk(net.apply, net.init(jax.random.key(seed)), x)
        err = float(jnp.linalg.norm(emp - theory) / jnp.linalg.norm(theory))
        assert err < 0.10, err


# --------------------------------------------------------------------------------------
# Empirical NTKs at several widths


def test_ntk_errors_match_a_direct_computation():
    d = 3
    x = np.random.default_rng(1).normal(size=(4, d))
    make = lambda width: nets.mlp((d, width, 1), "relu", w_std=2**0.5)  # noqa: E731
    theory = make(1).kernels(x).ntk
    errors, kernels = training.ntk_errors(make, [8, 32], 2, jax.random.key(3), x, theory)
    assert [e.shape for e in errors] == [(2,), (2,)] and kernels[0].shape == (2, 4, 4)
    drawn = make(32).init_many(jax.random.key(3), 4)                     # the same draw
    first = jax.tree_util.tree_map(lambda a: a[0], nets.sub_network(drawn, 8))
    direct = tangent.empirical_ntk(make(8).apply, first, x)
    np.testing.assert_allclose(kernels[0][0], direct, rtol=1e-10)
    np.testing.assert_allclose(errors[0][0], np.linalg.norm(direct - theory) / np.linalg.norm(theory))
    nested, _ = training.ntk_errors(make, [8, 32], 2, jax.random.key(3), x, theory, nested=True)
    assert nested[0].shape == (8,) and nested[1].shape == (2,)      # 4 blocks of 8 per draw
    with pytest.raises(ValueError, match="theory"):
        training.ntk_errors(make, [8], 1, jax.random.key(0), x, np.eye(3))
    with pytest.raises(ValueError, match="out_b_std"):
        training.ntk_errors(lambda w: nets.mlp((d, w, 1), out_b_std=1.0), [8], 1, jax.random.key(0), x, theory)


def test_lazy_loss_alpha_one_is_the_centred_loss_and_large_alpha_is_linear():
    from lecturekit import nets, tangent
    net = nets.mlp((3, 32, 1), "tanh", parameterization="mean_field")
    key = jax.random.key(5)
    p0 = net.init(key)
    x = jax.random.normal(jax.random.key(6), (8, 3))
    y = jnp.sin(x[:, 0])
    f0 = net.apply(p0, x)
    p1 = jax.tree_util.tree_map(lambda a: a + 0.1, p0)
    centred = training.square_loss(net.apply(p1, x) - f0, y)
    np.testing.assert_allclose(training.lazy_loss(net.apply, p0, x, y, alpha=1.0)(p1), centred, rtol=1e-12)
    # large alpha: GD on the lazy loss follows GD on the linearized model alpha (f_lin - f_0)
    lin = tangent.linearize(net.apply, p0)
    steps, lr = 200, 20.0
    gaps = []
    for alpha in (10.0, 100.0, 1000.0):
        run = training.descend(training.lazy_loss(net.apply, p0, x, y, alpha=alpha), p0, lr=lr, steps=steps)
        run_lin = training.descend(training.lazy_loss(lin, p0, x, y, alpha=alpha), p0, lr=lr, steps=steps)
        out = alpha * (net.apply(run.final_params, x) - f0)
        out_lin = alpha * (lin(run_lin.final_params, x) - f0)
        gaps.append(float(jnp.linalg.norm(out - out_lin) / jnp.linalg.norm(out_lin)))
    # the gap between the model and its linearization shrinks like 1/alpha (rejects: constant gap)
    assert gaps[0] > 5 * gaps[1] > 25 * gaps[2] and gaps[2] < 1e-3, gaps


def test_noisy_descend_floor_scales_with_lr_and_robbins_monro_converges():
    a = jnp.array([1.0, 10.0])
    quad = lambda w: 0.5 * jnp.sum(a * w**2)  # noqa: E731
    floors = []
    for lr in (0.02, 0.01):
        run = training.noisy_descend(quad, jnp.ones(2), lr=lr, steps=40000, noise=1.0, key=jax.random.key(0))
        floors.append(float(jnp.mean(run.losses[5000:])))
        # stationary mean loss (lr sigma^2 / 2) sum_i 1 / (2 - lr lambda_i)
        exact = lr / 2 * float(jnp.sum(1 / (2 - lr * a)))
        assert abs(floors[-1] / exact - 1) < 0.1, (floors, exact)
    rm = training.noisy_descend(quad, jnp.ones(2), lr=0.09, steps=40000, noise=1.0, key=jax.random.key(0), decay=20.0)
    assert float(jnp.mean(rm.losses[-1000:])) < floors[1] / 20
    plain = training.noisy_descend(quad, jnp.ones(2), lr=0.09, steps=5, noise=0.0, key=jax.random.key(0))
    gd = training.descend(quad, jnp.ones(2), lr=0.09, steps=5)
    np.testing.assert_allclose(plain.losses, gd.losses, rtol=1e-12)


# ----------------------------------------------------------------------------------------
# stochastic_descend: mini-batches and label noise (Chapter 5)


def _linear_model(w, x):
    return x @ w


def test_stochastic_descend_full_batch_without_noise_is_descend():
    x, y = _data(n=5, d=3)
    w0 = jnp.zeros(3)
    sgd = training.stochastic_descend(_linear_model, w0, x, y, lr=0.1, steps=40,
                                      key=jax.random.key(0), every=10, observe=lambda w: w)
    gd = training.descend(lambda w: training.square_loss(_linear_model(w, x), y), w0,
                          lr=0.1, steps=40, every=10, observe=lambda w: w)
    np.testing.assert_allclose(sgd.losses, gd.losses, rtol=1e-12)
    np.testing.assert_allclose(sgd.final_params, gd.final_params, rtol=1e-12)
    np.testing.assert_allclose(sgd.observed, gd.observed, rtol=1e-12)
    assert sgd.steps.tolist() == [0, 10, 20, 30, 40] and int(sgd.diverged_at) == -1


def test_label_noise_step_is_gd_plus_the_documented_noise():
    # one step of full-batch label-noise GD on a linear model, reproduced from the documented
    # draw: w1 = w0 - lr X^T (X w0 - y) / n + lr sigma X^T xi / n, xi = the sampler's numbers
    from lecturekit import sampling

    x, y = _data(n=4, d=2, seed=3)
    w0, lr, sigma, n = jnp.array([0.3, -0.2]), 0.2, 0.7, 4
    key = jax.random.key(1)
    w1 = training.stochastic_descend(_linear_model, w0, x, y, lr=lr, steps=1, key=key,
                                     label_noise=sigma).final_params
    xi = sampling.standard_normal(jax.random.split(key)[1], (1, 1, n))[0, 0]
    expected = w0 - lr * x.T @ (x @ w0 - y) / n + lr * sigma * x.T @ xi / n
    np.testing.assert_allclose(w1, expected, rtol=1e-12)
    # its mean over 200 independent keys is the gradient step (4 standard errors)
    step = jax.vmap(lambda k: training.stochastic_descend(
        _linear_model, w0, x, y, lr=lr, steps=1, key=k, label_noise=sigma).final_params)
    draws = np.asarray(step(jax.random.split(jax.random.key(2), 200)))
    gd = w0 - lr * x.T @ (x @ w0 - y) / n
    se = draws.std(0) / np.sqrt(200)
    assert np.all(np.abs(draws.mean(0) - gd) < 4 * se), (draws.mean(0), gd, se)


def test_minibatch_sgd_interpolates_and_batches_are_without_replacement():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(6, 10))
    y = x @ rng.normal(size=10)
    run = training.stochastic_descend(_linear_model, jnp.zeros(10), x, y, lr=0.05,
                                      steps=3000, key=jax.random.key(4), batch=2)
    assert run.losses[-1] < 1e-10 * run.losses[0]
    # batch = n draws every example once: the full-batch run
    full = training.stochastic_descend(_linear_model, jnp.zeros(10), x, y, lr=0.05,
                                       steps=50, key=jax.random.key(4), batch=6)
    ref = training.stochastic_descend(_linear_model, jnp.zeros(10), x, y, lr=0.05,
                                      steps=50, key=jax.random.key(9))
    np.testing.assert_allclose(full.final_params, ref.final_params, rtol=1e-10)


def test_stochastic_descend_bad_inputs():
    x, y = _data(n=4, d=2)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="batch"):
        training.stochastic_descend(_linear_model, jnp.zeros(2), x, y, lr=0.1, steps=5,
                                    key=key, batch=5)
    with pytest.raises(ValueError, match="every must divide"):
        training.stochastic_descend(_linear_model, jnp.zeros(2), x, y, lr=0.1, steps=5,
                                    key=key, every=2)
    with pytest.raises(ValueError, match="label_noise"):
        training.stochastic_descend(_linear_model, jnp.zeros(2), x, y, lr=0.1, steps=5,
                                    key=key, label_noise=-1.0)
    with pytest.raises(ValueError, match="y must have shape"):
        training.stochastic_descend(_linear_model, jnp.zeros(2), x, y[:3], lr=0.1, steps=5,
                                    key=key)
    with pytest.raises(TypeError, match="key"):
        training.stochastic_descend(_linear_model, jnp.zeros(2), x, y, lr=0.1, steps=5,
                                    key=0)


def test_bernoulli_batch_steps_are_the_documented_masked_gradient_on_stacked_chains():
    # three chains stacked as the rows of theta, f = theta @ x.T: every step is
    # theta - lr (M * (theta x^T - y)) x / b with M the sampler's (3, n) Bernoulli(b/n) draw
    from lecturekit import sampling

    x, y = _data(n=5, d=2, seed=4)
    b, lr, steps = 2.0, 0.1, 4
    keys = jax.random.split(jax.random.key(3), steps)
    rule = training.BernoulliBatchGradient(jnp.asarray(x), jnp.asarray(y), keys, b,
                                           lambda th, xx: th @ xx.T)
    theta0 = jnp.asarray(np.random.default_rng(0).normal(size=(3, 2)))
    run = training.descend(lambda th: 0.0 * jnp.sum(th), theta0, lr=lr, steps=steps,
                           update=rule)
    theta = np.asarray(theta0)
    for t in range(steps):
        mask = np.asarray(sampling.bernoulli(keys[t], b / 5, (3, 5)), dtype=float)
        theta = theta - lr * ((mask * (theta @ x.T - y)) @ x) / b
    np.testing.assert_allclose(run.final_params, theta, rtol=1e-12)
    # unbiased: the mean step over 400 keys is the full-batch gradient step (4 s.e.)
    one = jax.vmap(lambda k: training.BernoulliBatchGradient(
        jnp.asarray(x), jnp.asarray(y), k[None], b, lambda th, xx: xx @ th).update(
        None, (), theta0[0], lr, 0)[0])
    draws = np.asarray(one(jax.random.split(jax.random.key(5), 400)))
    gd = theta0[0] - lr * x.T @ (x @ theta0[0] - y) / 5
    se = draws.std(0) / np.sqrt(400)
    assert np.all(np.abs(draws.mean(0) - gd) < 4 * se), (draws.mean(0), gd, se)


def test_a_rule_that_takes_its_own_gradient_gets_none_and_no_gradient_is_taken():
    """needs_gradient = False: descend hands the rule grads=None and never differentiates
    loss_fn (whose backward pass raises here); a rule without the attribute gets the
    gradient of loss_fn."""

    @jax.custom_vjp
    def recorded(w):
        return 0.5 * jnp.sum(w**2)

    def no_backward(residual, cotangent):
        raise AssertionError("descend differentiated the recorded loss")

    recorded.defvjp(lambda w: (recorded(w), None), no_backward)
    seen = []

    class OwnGradient(training.GradientStep):
        needs_gradient = False

        def update(self, grads, state, params, lr, step):
            seen.append(grads)
            return params - lr * 2.0 * params, state

    run = training.descend(recorded, jnp.array([1.0, -2.0]), lr=0.25, steps=3,
                           update=OwnGradient())
    assert seen and all(g is None for g in seen)
    np.testing.assert_allclose(run.final_params, [0.125, -0.25])
    np.testing.assert_allclose(run.losses, [2.5, 0.625, 0.15625, 0.0390625])

    class FullGradient(training.GradientStep):
        def update(self, grads, state, params, lr, step):
            seen.append(grads)
            return params - lr * grads, state

    seen.clear()
    run = training.descend(lambda w: 0.5 * jnp.sum(w**2), jnp.array([1.0, -2.0]), lr=0.5,
                           steps=2, update=FullGradient())
    assert seen and all(g is not None for g in seen)
    np.testing.assert_allclose(run.final_params, [0.25, -0.5])
    with pytest.raises(AssertionError, match="differentiated the recorded loss"):
        training.descend(recorded, jnp.array([1.0]), lr=0.5, steps=1, update=FullGradient())

    class Unhashable(FullGradient):  # a static rule must be hashable
        __hash__ = None

    with pytest.raises(TypeError, match="update must be a pytree .* hashable object, got an unhashable Unhashable"):
        training.descend(recorded, jnp.array([1.0]), lr=0.5, steps=1, update=Unhashable())


@pytest.mark.default_xla  # bit-for-bit equality of two different programs
def test_observers_record_kernels_sharpness_outputs_and_params():
    net = nets.mlp((2, 8, 1), "tanh")
    p0 = net.init(jax.random.key(3))
    x, y = jnp.array([[1.0, 0.0], [0.3, -1.0], [0.5, 0.5]]), jnp.array([1.0, -1.0, 0.2])
    observe = {
        "k": training.KernelObserver(net.apply, x),
        "d": training.KernelObserver(net.apply, x, diagonal=True),
        "s": training.SharpnessObserver(net.apply, x, y, jax.random.key(0), 12),
        "o": training.OutputObserver(net.apply, x),
        "p": training.ParamsObserver(),
    }
    run = training.gradient_descent(net.apply, p0, 0.2, 6, x=x, y=y, every=3, observe=observe)
    rec = run.observed
    assert np.allclose(rec["d"], np.diagonal(rec["k"], axis1=1, axis2=2), rtol=1e-10)
    assert np.allclose(rec["o"][-1], net.apply(run.final_params, x))
    assert np.allclose(rec["p"][0]["W"][0], p0[0]["W"])
    loss = training.mse_loss(net.apply, x, y)
    dense = jax.hessian(lambda v: loss(jax.flatten_util.ravel_pytree(p0)[1](v)))(
        jax.flatten_util.ravel_pytree(run.final_params)[0])
    assert np.isclose(rec["s"][-1], np.linalg.eigvalsh(dense)[-1], rtol=1e-6)
    # the same observers as a tuple, through descend: the same records
    again = training.descend(loss, p0, lr=0.2, steps=6, every=3, observe=(observe["k"], observe["p"]))
    assert np.array_equal(again.observed[0], rec["k"])
    with pytest.raises(TypeError, match="observe"):
        training.descend(loss, p0, lr=0.2, steps=1, observe=(observe["k"], 3))
    with pytest.raises(TypeError, match="diagonal"):
        training.KernelObserver(net.apply, x, diagonal=1)
