"""Does the tangent kernel move during training? The kernel-change experiments of
Chapter 3.

Conventions. The relative kernel change along a gradient-descent trajectory is

    Delta K = sup_t ||K_t - K_0||_F / ||K_0||_F          (Liu, Zhu & Belkin 2020),

with K_t the empirical tangent kernel at step t. Every run here trains by full-batch
gradient descent through the one engine of :mod:`lecturekit.training`, on the square
loss (1/2n) sum_i ||o_i - t_i||^2 or the mean cross-entropy, so a learning rate ``lr``
means the same thing everywhere in the book.

* :func:`kernel_change_run` / :func:`kernel_change_runs`: multi-output networks with a
  head (:mod:`lecturekit.heads`), many initializations at once, the kernel of several
  heads along one trajectory, Chizat and Bach's output rescaling (:class:`KernelRun`).
* :func:`relu_kernel_split`: a one-hidden-layer ReLU network; the kernel change caused
  by activation patterns that flip, and the rest (:class:`ReluSplit`).
* :func:`first_units_width_sweep`: scalar-input tanh networks of several widths made of
  the first units of one draw, trained next to their linearization (:class:`UnitsFit`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import heads as _heads
from . import losses as _losses
from . import nets as _nets
from . import sampling as _sampling
from . import training as _training
from ._validation import (
    as_float_array,
    as_host_float_array,
    check_choice,
    check_key,
    check_positive_int,
    check_range,
    check_real,
)

__all__ = [
    "KernelRun",
    "kernel_change_run",
    "kernel_change_runs",
    "ReluSplit",
    "relu_kernel_split",
    "UnitsFit",
    "first_units_width_sweep",
]


# -------------------------------------------------------- heads: Delta K along training
class KernelRun(NamedTuple):
    """Result of :func:`kernel_change_run` (leading axis S: one entry per
    initialization).

    Attributes:
        losses: (S, R) the training loss at the R observation steps 0, every, ...,
            steps.
        delta_k: dict head -> (S, R) relative kernel change ||K_t - K_0||_F / ||K_0||_F
            at the observation steps.
        sup_delta_k: dict head -> (S,) its supremum over the run, Delta K.
        l2_move: (S,) Euclidean distance ||theta_T - theta_0|| of the final parameters.
        linf_move: (S,) largest change of a single parameter.
        l2_path: (S, R) Euclidean distance ||theta_t - theta_0|| at the observation
            steps (its last column is ``l2_move``); None when built by hand without it.

    Example:
        >>> from lecturekit import kernel_change
        >>> run = kernel_change.KernelRun(jnp.zeros((2, 3)), {}, {}, jnp.ones(2),
        ...                               jnp.ones(2))
        >>> run.losses.shape, run.l2_move.tolist()
        ((2, 3), [1.0, 1.0])
    """

    losses: jax.Array
    delta_k: dict[str, jax.Array]
    sup_delta_k: dict[str, jax.Array]
    l2_move: jax.Array
    linf_move: jax.Array
    l2_path: jax.Array | None = None


def kernel_change_run(
    net: _nets.MLP,
    keys: jax.Array,
    x: ArrayLike,
    targets: ArrayLike,
    *,
    train_head: str,
    loss: str,
    kernel_heads: tuple[str, ...],
    lr: float,
    steps: int,
    every: int,
    scales: ArrayLike | None = None,
) -> KernelRun:
    """Train g o f by gradient descent from one initialization per key; track tangent
    kernels.

    The trained model is g(f(x; theta)) with g = ``train_head``
    (:func:`lecturekit.heads.model`); with ``scales`` (one alpha per key) it is Chizat
    and Bach's rescaled, centred model alpha (g(f(x; theta)) - g(f(x; theta_0))) with
    the loss divided by alpha^2, whose function-space dynamics do not depend on alpha.
    ``loss`` is "cross_entropy" (model outputs as logits, mean over examples) or
    "square" ((1/2n) sum_i ||o_i - t_i||^2). The tangent kernel
    (:func:`lecturekit.heads.head_ntk`) of every head in ``kernel_heads`` is observed
    every ``every`` steps on the same trajectory. All runs go through one compiled,
    vmapped program.

    Args:
        net: a :func:`lecturekit.nets.mlp` network with k outputs, no output activation.
        keys: 1-D array of PRNG keys, one initialization each.
        x: training inputs, shape (n, d).
        targets: shape (n, k) (one-hot labels for the cross-entropy).
        train_head: the head of the trained model.
        loss: "cross_entropy" or "square".
        kernel_heads: heads whose tangent kernels are observed.
        lr: learning rate.
        steps: number of gradient-descent steps, a multiple of ``every``.
        every: observation period.
        scales: optional output scales alpha > 0, one per key.

    Returns:
        :class:`KernelRun`.

    Example:
        >>> from lecturekit import datasets, kernel_change, nets
        >>> x, y = datasets.synthetic_classes(jax.random.key(0), 6, 4, 2)
        >>> net = nets.mlp((4, 16, 2), "tanh", w_std=1.0)
        >>> run = kernel_change.kernel_change_run(
        ...     net, jax.random.split(jax.random.key(1), 2), x, y,
        ...     train_head="linear", loss="cross_entropy", kernel_heads=("linear",),
        ...     lr=1.0, steps=20, every=10)
        >>> run.losses.shape, run.delta_k["linear"].shape
        ((2, 3), (2, 3))
    """
    return kernel_change_runs(
        net,
        keys,
        x,
        targets,
        [dict(train_head=train_head, loss=loss, kernel_heads=kernel_heads)],
        lr=lr,
        steps=steps,
        every=every,
        scales=scales,
    )[0]


def _parse_config(net: _nets.MLP, cfg: Any) -> tuple[Any, str, tuple[str, ...]]:
    """The checked (train_head, loss, kernel_heads) of a config: static, hashable."""
    if not isinstance(cfg, dict) or set(cfg) != {"train_head", "loss", "kernel_heads"}:
        raise ValueError(
            "each entry of configs must be a dict with keys train_head, loss, "
            f"kernel_heads; got {cfg!r}"
        )
    check_choice(cfg["loss"], ("cross_entropy", "square"), name="loss")
    if isinstance(cfg["kernel_heads"], str) or not isinstance(
        cfg["kernel_heads"], (list, tuple)
    ):
        raise TypeError(
            f"kernel_heads must be a tuple of head names, got {cfg['kernel_heads']!r}"
        )
    for head in cfg["kernel_heads"]:
        try:
            _heads.head_fn(head)
        except (TypeError, ValueError) as err:
            raise type(err)(f"kernel_heads: {err}") from None
    try:
        _heads.model(net, cfg["train_head"])
    except (TypeError, ValueError) as err:
        raise type(err)(f"train_head: {err}") from None
    return cfg["train_head"], cfg["loss"], tuple(cfg["kernel_heads"])


_LOSSES = {"cross_entropy": _losses.cross_entropy, "square": _losses.square_loss}


@partial(jax.jit, static_argnames=("net", "configs", "steps", "every", "centred"))
def _kernel_runs(net, configs, params0, alphas, x, targets, lr, steps, every, centred):
    """Every config's :func:`kernel_change_run`, vmapped over the initializations: one
    program, compiled once per network, configs, steps and every."""

    def one(params0, alpha, train_head, loss, kernel_heads):
        apply = _heads.model(net, train_head)
        loss_fn = _LOSSES[loss]
        out0 = apply(params0, x)

        def objective(params):
            out = apply(params, x)
            if centred:
                out = alpha * (out - out0)
            return loss_fn(out, targets) / alpha**2

        def distance(params):
            return jax.flatten_util.ravel_pytree(
                jax.tree_util.tree_map(jnp.subtract, params, params0)
            )[0]

        def observe(params):
            kernels = {h: _heads.head_ntk(net, params, x, h) for h in kernel_heads}
            return kernels, jnp.linalg.norm(distance(params))

        traj = _training.descend(
            objective, params0, lr=lr, steps=steps, every=every, observe=observe
        )
        observed, path = traj.observed
        dk = {h: _training.relative_kernel_change(k, k[0]) for h, k in observed.items()}
        move = distance(traj.final_params)
        sup = {h: jnp.max(v) for h, v in dk.items()}
        return (
            traj.losses[::every],
            dk,
            sup,
            jnp.linalg.norm(move),
            jnp.max(jnp.abs(move)),
            path,
        )

    return [jax.vmap(lambda p, a, c=c: one(p, a, *c))(params0, alphas) for c in configs]


def kernel_change_runs(
    net: _nets.MLP,
    keys: jax.Array,
    x: ArrayLike,
    targets: ArrayLike,
    configs: list[dict[str, Any]],
    *,
    lr: float,
    steps: int,
    every: int,
    scales: ArrayLike | None = None,
) -> list[KernelRun]:
    """Several :func:`kernel_change_run` trainings from the same initializations,
    compiled together.

    Each new network shape costs an XLA compilation (seconds on a small CPU); a width
    sweep that trains two models per width pays it once per width instead of twice.

    Args:
        net, keys, x, targets, lr, steps, every, scales: as
            in :func:`kernel_change_run`.
        configs: a list of dicts with keys ``train_head``, ``loss`` and
            ``kernel_heads``.

    Returns:
        One :class:`KernelRun` per config, in order.

    Example:
        >>> from lecturekit import datasets, kernel_change, nets
        >>> x, y = datasets.synthetic_classes(jax.random.key(0), 6, 4, 2)
        >>> net = nets.mlp((4, 16, 2), "tanh", w_std=1.0)
        >>> configs = [
        ...     dict(train_head="linear", loss="cross_entropy",
        ...          kernel_heads=("softmax",)),
        ...     dict(train_head="swish", loss="square", kernel_heads=("swish",))]
        >>> ce, sq = kernel_change.kernel_change_runs(
        ...     net, jax.random.split(jax.random.key(1), 2), x, y, configs, lr=1.0,
        ...     steps=20, every=10)
        >>> sorted(ce.sup_delta_k), sorted(sq.sup_delta_k)
        (['softmax'], ['swish'])
    """
    net = _nets.check_mlp(net, output_activation=False)
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(
            f"x must have {net.input_dim} columns, got shape {tuple(x.shape)}"
        )
    targets = as_float_array(targets, name="targets", ndim=2)
    if targets.shape != (x.shape[0], net.output_dim):
        raise ValueError(
            f"targets must have shape {(x.shape[0], net.output_dim)} (one row per row "
            "of x, one column per "
            f"output of net), got {tuple(targets.shape)}"
        )
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    every = check_positive_int(every, name="every")
    if steps % every:
        raise ValueError(f"steps ({steps}) must be a multiple of every ({every})")
    if not isinstance(configs, (list, tuple)) or not configs:
        raise ValueError(
            "configs must be a non-empty list of dicts with train_head, loss and "
            "kernel_heads"
        )
    parsed = [_parse_config(net, cfg) for cfg in configs]
    if (
        not isinstance(keys, jax.Array)
        or keys.ndim != 1
        or not jnp.issubdtype(keys.dtype, jax.dtypes.prng_key)
    ):
        raise TypeError(
            "keys must be a 1-D array of JAX PRNG keys, e.g. "
            "jax.random.split(jax.random.key(0), 3)"
        )
    centred = scales is not None
    alphas = (
        jnp.ones(keys.shape[0])
        if scales is None
        else as_float_array(scales, name="scales", ndim=1)
    )
    if alphas.shape != keys.shape:
        raise ValueError(
            f"scales must hold one positive number per key ({keys.shape[0]}), got "
            f"shape {alphas.shape}"
        )
    check_range(alphas, name="scales", lo=0.0, lo_open=True)
    params0 = jax.tree_util.tree_map(
        lambda *a: jnp.stack(a), *[net.init(k) for k in keys]
    )

    parsed = tuple(parsed)
    runs = _kernel_runs(
        net, parsed, params0, alphas, x, targets, lr, steps, every, centred
    )
    return [KernelRun(*out) for out in runs]


# ---------------------------------------------------------------------- ReLU: the kinks
class ReluSplit(NamedTuple):
    """Result of :func:`relu_kernel_split` (floats).

    Attributes:
        kink: ||K_T - K_frz||_F / ||K_0||_F, the change caused by activation indicators
            that flipped during training.
        smooth: ||K_frz - K_0||_F / ||K_0||_F, the change of the smooth model with the
            initial indicators.
        flipped: fraction of (input, unit) activation indicators that flipped.
        loss: the final training loss.

    Example:
        >>> from lecturekit import kernel_change
        >>> split = kernel_change.ReluSplit(kink=0.03, smooth=0.01, flipped=0.02,
        ...                                 loss=0.0)
        >>> split.kink > split.smooth
        True
    """

    kink: float
    smooth: float
    flipped: float
    loss: float


def _relu_net(params, x):
    """m^{-1/2} sum_i v_i relu(<W_i, x>) (the factor sqrt(2/d) is in W)."""
    return jax.nn.relu(x @ params["W"].T) @ params["v"] / jnp.sqrt(params["v"].shape[0])


def _relu_kernel(x, W, v, pattern):
    """The tangent kernel of :func:`_relu_net` with respect to (W, v) on the inputs x
    (n, d), with the activation indicators ``pattern`` (n, m) in place of those of W:

        m^{-1} sum_i [v_i^2 p_i(x) p_i(x') <x, x'> + p_i(x) <W_i, x> p_i(x') <W_i, x'>].

    With p = 1{x W^T > 0} it is the network's kernel (a test compares it with autodiff).
    """
    lin = (x @ W.T) * pattern  # relu(<W_i, x>) through the pattern
    return ((pattern * v**2) @ pattern.T * (x @ x.T) + lin @ lin.T) / W.shape[0]


def relu_kernel_split(
    m: int,
    key: jax.Array,
    x: ArrayLike,
    y: ArrayLike,
    *,
    lr: float = 2.0,
    steps: int = 400,
) -> ReluSplit:
    """Train a one-hidden-layer ReLU network by gradient descent and split its kernel
    change at the kinks.

    f(x) = m^{-1/2} sum_i v_i relu(<W_i, x>), started from W_i = sqrt(2/d) w_i with
    w_i ~ N(0, I_d) and v_i ~ N(0, 1), and trained on (W, v) (the factor sqrt(2/d) is in
    the trained weights) by :func:`lecturekit.training.descend` on the square loss
    (1/2n) sum_j (f(x_j) - y_j)^2 with step ``lr``. Its tangent kernel with respect to
    (W, v) is
    K(x, x') = m^{-1} sum_i [v_i^2 p_i(x) p_i(x') <x, x'> + relu_i(x) relu_i(x')]
    with the activation indicators p_i(x) = 1{<W_i, x> > 0} and relu_i(x) =
    p_i(x) <W_i, x>. K_frz is that formula with the final weights and the *initial*
    indicators: the kernel of the smooth model that the almost-everywhere Hessian
    describes. One compilation per width.

    Args:
        m: width.
        key: PRNG key of the initialization
            (:func:`lecturekit.sampling.standard_normal`).
        x: training inputs, shape (n, d).
        y: targets, shape (n,).
        lr: learning rate.
        steps: number of gradient-descent steps.

    Returns:
        :class:`ReluSplit`.

    Example:
        >>> from lecturekit import kernel_change
        >>> x = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([0.5, -0.5])
        >>> split = kernel_change.relu_kernel_split(256, jax.random.key(0), x, y)
        >>> bool(split.loss < 1e-6), bool(0 <= split.flipped < 0.2)
        (True, True)
    """
    m = check_positive_int(m, name="m")
    check_key(key)
    x = as_host_float_array(x, name="x", ndim=2, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1)
    if y.shape != (x.shape[0],):
        raise ValueError(
            f"y must have one entry per row of x ({x.shape[0]}), got shape {y.shape}"
        )
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    d = x.shape[1]
    draws = np.asarray(_sampling.standard_normal(key, (m * (d + 1),)))
    W0, v0 = draws[: m * d].reshape(m, d) * np.sqrt(2.0 / d), draws[m * d :]
    run = _training.gradient_descent(_relu_net, {"W": W0, "v": v0}, lr, steps, x=x, y=y)
    final, loss = run.final_params, run.losses[-1]
    W, v = np.asarray(final["W"]), np.asarray(final["v"])

    p0, pT = (x @ W0.T > 0).astype(float), (x @ W.T > 0).astype(float)
    k0, kT = _relu_kernel(x, W0, v0, p0), _relu_kernel(x, W, v, pT)
    k_frz = _relu_kernel(x, W, v, p0)
    scale = np.linalg.norm(k0)
    return ReluSplit(
        float(np.linalg.norm(kT - k_frz) / scale),
        float(np.linalg.norm(k_frz - k0) / scale),
        float(np.mean(p0 != pT)),
        float(loss),
    )


# ------------------------------------------------------------------- the width explorer
class UnitsFit(NamedTuple):
    """One width of :func:`first_units_width_sweep` (NumPy arrays and floats).

    Attributes:
        network: (e,) the trained network on ``x_eval``.
        linearized: (e,) the linearized model trained by the same steps, on ``x_eval``.
        slices0: (e, n) kernel slices K_0(x_eval, x_j) before training.
        slicesT: (e, n) the same after training.
        delta_k: ||K_T - K_0||_F / ||K_0||_F on the training inputs.
        loss: the final training loss (1/2n) sum_j (f(x_j) - y_j)^2.

    Example:
        >>> from lecturekit import kernel_change
        >>> fit = kernel_change.UnitsFit(np.zeros(3), np.zeros(3), np.eye(3),
        ...                              np.eye(3), 0.1, 0.0)
        >>> fit.delta_k, fit.slices0.shape
        (0.1, (3, 3))
    """

    network: np.ndarray
    linearized: np.ndarray
    slices0: np.ndarray
    slicesT: np.ndarray
    delta_k: float
    loss: float


def _units_outputs_and_gradients(x, h, v, s):
    """f(x) = sum_i s_i v_i h_i(x) and its gradient blocks (d/dw, d/db, d/dv) for
    h_i = tanh(w_scale w_i x + b_i) (the w block still lacks the factor w_scale), from
    which the tangent kernels are formed in NumPy."""
    dh = (1.0 - h**2) * (s * v)
    return h @ (s * v), (x[:, None] * dh, dh, h * s)


def _units_mask(m, width, xp):
    """1/sqrt(m) on the first m of ``width`` units, 0 on the others (xp: np or jnp)."""
    return xp.where(xp.arange(width) < m, 1.0 / xp.sqrt(m * 1.0), 0.0)


@partial(jax.jit, static_argnames=("width", "steps"))
def _units_train(m, theta, x, y, w_scale, lr, width, steps):
    """The width-m network's gradient descent, compiled once for every m."""
    s = _units_mask(m, width, jnp)

    def loss(theta):
        w, b, v = theta
        return _training.square_loss(
            jnp.tanh(w_scale * jnp.outer(x, w) + b) @ (s * v), y
        )

    return _training.descend(loss, theta, lr=lr, steps=steps).final_params


def first_units_width_sweep(
    x: ArrayLike,
    y: ArrayLike,
    x_eval: ArrayLike,
    widths: tuple[int, ...],
    key: jax.Array,
    *,
    max_width: int = 1024,
    lr: float = 1.6,
    steps: int = 400,
    w_scale: float = 2.0,
) -> dict[int, UnitsFit]:
    """Train f_m(x) = m^{-1/2} sum_{i<m} v_i tanh(w_scale w_i x + b_i) and its
    linearization.

    Scalar inputs. One draw (w, b, v) ~ N(0, 1) of ``max_width`` units; the network of
    width m uses the first m of them (the others get the factor 0 and never move), so
    every width runs through one compiled gradient-descent loop
    (:func:`lecturekit.training.descend`): ``steps`` steps of size ``lr`` on the square
    loss L = (1/2n) sum_j (f(x_j) - y_j)^2. The linearized model trained by the same
    steps is, in closed form with eta = lr / n, f_lin = f_0 - K_0(., X) U diag((1 - (1 -
    eta lam)^T) / lam) U^T (f_0(X) - y) with K_0 = U diag(lam) U^T on the training
    inputs (the factor -> eta T as lam -> 0).

    Args:
        x: training inputs, shape (n,).
        y: targets, shape (n,).
        x_eval: evaluation inputs, shape (e,).
        widths: widths m <= max_width.
        key: PRNG key of the units.
        max_width: number of units drawn.
        lr: learning rate.
        steps: number of gradient-descent steps.
        w_scale: the input weight multiplier.

    Returns:
        dict width -> :class:`UnitsFit`.

    Example:
        >>> from lecturekit import kernel_change
        >>> xs = np.linspace(-1, 1, 4)
        >>> out = kernel_change.first_units_width_sweep(
        ...     xs, np.sin(xs), np.zeros(1), (8, 16), jax.random.key(0),
        ...     max_width=16, steps=20)
        >>> sorted(out), out[8].slices0.shape
        ([8, 16], (1, 4))
    """
    x = as_host_float_array(x, name="x", ndim=1, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1)
    if y.shape != x.shape:
        raise ValueError(f"y must have the shape {x.shape} of x, got {y.shape}")
    x_eval = as_host_float_array(x_eval, name="x_eval", ndim=1, nonempty=True)
    check_key(key)
    max_width = check_positive_int(max_width, name="max_width")
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Iterable):
        raise TypeError(
            f"widths must be a sequence of positive integers, got {widths!r}"
        )
    widths = tuple(check_positive_int(m, name="widths[i]") for m in widths)
    if not widths or max(widths) > max_width:
        raise ValueError(
            f"widths must be a non-empty tuple of widths <= max_width = {max_width}, "
            f"got {widths}"
        )
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    w_scale = check_real(w_scale, name="w_scale", positive=True)
    n = x.size
    # (w, b, v)
    theta0 = tuple(
        np.split(np.asarray(_sampling.standard_normal(key, (3 * max_width,))), 3)
    )
    both = np.concatenate([x, x_eval])
    units0 = np.tanh(w_scale * np.outer(both, theta0[0]) + theta0[1])

    def gram(ga, gb):
        return sum(a @ b.T for a, b in zip(ga, gb))

    out = {}
    for m in widths:
        s = _units_mask(m, max_width, np)
        trained = _units_train(m, theta0, x, y, w_scale, lr, max_width, steps)
        w, b, v = (np.asarray(a) for a in trained)
        f0, g0 = _units_outputs_and_gradients(both, units0, theta0[2], s)
        fT, gT = _units_outputs_and_gradients(
            both, np.tanh(w_scale * np.outer(both, w) + b), v, s
        )
        g0 = (w_scale * g0[0], g0[1], g0[2])
        gT = (w_scale * gT[0], gT[1], gT[2])
        k0, kT = (gram([g[:n] for g in gs], [g[:n] for g in gs]) for gs in (g0, gT))
        slices0, slicesT = (
            gram([g[n:] for g in gs], [g[:n] for g in gs]) for gs in (g0, gT)
        )
        lam, vecs = np.linalg.eigh(k0)
        big = lam > 1e-12
        eta = lr / n  # the step on the summed loss
        coef = np.where(
            big,
            (1.0 - (1.0 - eta * lam) ** steps) / np.where(big, lam, 1.0),
            eta * steps,
        )
        f_lin = f0[n:] - slices0 @ (vecs @ (coef * (vecs.T @ (f0[:n] - y))))
        out[m] = UnitsFit(
            network=fT[n:],
            linearized=f_lin,
            slices0=slices0,
            slicesT=slicesT,
            delta_k=float(np.linalg.norm(kT - k0) / np.linalg.norm(k0)),
            loss=float(0.5 * np.mean((fT[:n] - y) ** 2)),
        )
    return out
