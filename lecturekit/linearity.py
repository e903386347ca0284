"""Transition to linearity: tangent kernels of multi-output heads, gradient descent with
kernel snapshots, the relative kernel change Delta K, and the norms behind the Hessian bound.

Conventions. ``net`` is a :func:`lecturekit.nets.mlp` network with k outputs and no output
activation (the pre-head f(x) in R^k). A *head* g maps f(x) to the model's output:
``"linear"`` (g = f), ``"softmax"`` (class probabilities) or any activation name of
:mod:`lecturekit.activations` applied elementwise (``"swish"``, ``"softplus"``, ...).
The tangent kernel of g o f on inputs x_1..x_n is the (n k) x (n k) matrix

    K[(i, a), (j, b)] = < d g_a(f(x_i)) / d theta , d g_b(f(x_j)) / d theta >,

rows ordered example-major ((i, a) -> i k + a). It is computed layer by layer,
K = sum_l (mW_l^2 <h_l(x_i), h_l(x_j)> + mb_l^2) <delta_l^a(x_i), delta_l^b(x_j)>,
with h_l the input of dense layer l and delta_l^a = d g_a / d z_l (never forming the
Jacobian). The relative kernel change along a trajectory is

    Delta K = sup_t ||K_t - K_0||_F / ||K_0||_F          (Liu, Zhu & Belkin 2020).

:func:`gradient_descent` is a plain full-batch GD loop (``lax.scan``) that records a
user-supplied function of the parameters every ``record_every`` steps; it is jit- and
vmap-friendly so that several seeds run as one batched computation.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax.flatten_util

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import activations as _act
from . import hessian as _hessian
from . import nets as _nets
from ._validation import (
    as_float_array, as_host_float_array, check_callable, check_choice, check_key, check_params_pytree,
    check_positive_int, check_range, check_real, concrete,
)

HEADS = ("linear", "softmax")  # plus every elementwise activation name


# --------------------------------------------------------------------------- heads
def head_fn(head: str) -> Callable[[jax.Array], jax.Array]:
    """The map g: R^k -> R^k of a head name (applied to one example's pre-head output)."""
    if not isinstance(head, str):
        raise TypeError(f"head must be a string, got {head!r}")
    if head == "linear":
        return lambda z: z
    if head == "softmax":
        return jax.nn.softmax
    try:
        return _act.get(head, name="head").fn
    except ValueError:
        raise ValueError(
            f"unknown head {head!r}; expected 'linear', 'softmax' or an activation name "
            f"({', '.join(_act.NAMES)})"
        ) from None


def _check_net(net: Any) -> _nets.MLP:
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}")
    if net.output_activation is not None:
        raise ValueError("net must have no output_activation: pass the non-linearity as head=...")
    return net


def model(net: _nets.MLP, head: str = "linear") -> Callable[[Any, jax.Array], jax.Array]:
    """The function (params, x) -> g(f(x)) of shape (n, k) for a head name."""
    net, g = _check_net(net), head_fn(head)

    def apply(params, x):
        out = net.apply(params, x)
        out = out[:, None] if out.ndim == 1 else out
        return jax.vmap(g)(out)

    return apply


# --------------------------------------------------------------------------- fast init
def init_params(net: _nets.MLP, key: jax.Array) -> list[dict[str, jax.Array]]:
    """Parameters with the distribution of ``net.init`` (N(0, 1) entries, NTK
    parameterization) drawn from fixed-size chunks of one stream.

    Width sweeps create many shapes; ``jax.random.normal`` compiles its generator anew for
    each shape (about a second on a small CPU), while this draws every parameter from
    chunks of one compiled shape. The numbers differ from ``net.init(key)``'s; their law is
    the same.
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}")
    if net.parameterization != "ntk":
        raise ValueError("init_params needs a net in the NTK parameterization")
    check_key(key)
    sizes = [(n_in * n_out, n_out) for n_in, n_out in zip(net.widths[:-1], net.widths[1:])]
    total = sum(a + b for a, b in sizes)
    flat = _hessian.normal_stream(key, total)
    params, start = [], 0
    for (n_in, n_out), (a, b) in zip(zip(net.widths[:-1], net.widths[1:]), sizes):
        params.append({"W": jax.device_put(flat[start:start + a].reshape(n_in, n_out)),
                       "b": jax.device_put(flat[start + a:start + a + b])})
        start += a + b
    return params


# --------------------------------------------------------------------------- kernels
def _head_ntk(net: _nets.MLP, params, x: jax.Array, head: str) -> jax.Array:
    """Per-layer tangent kernel of g o f, (n k, n k); inputs already validated."""
    g = head_fn(head)
    zs, hs, _ = net.forward(params, x)
    n, k = zs[-1].shape
    delta = jax.vmap(jax.jacfwd(g))(zs[-1])  # (n, k_out, k): d g_a / d z_L
    deltas = [delta]
    mults = net.multipliers()
    for layer in range(net.depth - 1, -1, -1):
        mw = mults[layer + 1][0]
        back = mw * jnp.einsum("nak,wk->naw", delta, params[layer + 1]["W"])
        delta = net.activation.grad(zs[layer])[:, None, :] * back
        deltas.append(delta)
    deltas = deltas[::-1]
    kernel = 0.0
    for (mw, mb), h, d in zip(mults, hs, deltas):
        inner = mw**2 * (h @ h.T) + mb**2  # (n, n)
        kernel = kernel + inner[:, None, :, None] * jnp.einsum("iaw,jbw->iajb", d, d)
    return kernel.reshape(n * k, n * k)


def head_ntk(net: _nets.MLP, params: Any, x: ArrayLike, head: str = "linear") -> jax.Array:
    """Empirical tangent kernel (n k, n k) of the model g o f (see the module docstring)."""
    net = _check_net(net)
    net.check_params(params)
    head_fn(head)
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(f"x must have {net.input_dim} columns, got shape {tuple(x.shape)}")
    return _head_ntk(net, params, x, head)


def relative_change(kernels: ArrayLike, reference: ArrayLike | None = None) -> jax.Array:
    """||K_t - K_0||_F / ||K_0||_F for a stack of kernels (T, N, N); K_0 = kernels[0] by default."""
    ks = as_float_array(kernels, name="kernels", ndim=3, nonempty=True)
    if reference is None:
        k0 = ks[0]
    else:
        k0 = as_float_array(reference, name="reference", ndim=2)
        if k0.shape != ks.shape[1:]:
            raise ValueError(
                f"reference must have the shape {tuple(ks.shape[1:])} of one of the kernels, got {tuple(k0.shape)}"
            )
    host = concrete(k0)
    if host is not None and not np.any(host):
        raise ValueError("the reference kernel K_0 is zero: the relative change is undefined")
    return jnp.sqrt(jnp.sum((ks - k0) ** 2, axis=(-2, -1)) / jnp.sum(k0**2))


# --------------------------------------------------------------------------- training
class Trajectory(NamedTuple):
    """Result of :func:`gradient_descent`: final params, the loss and the recorded values at
    steps 0, record_every, 2 record_every, ..., steps (leading axis of ``losses``/``records``)."""

    params: Any
    losses: jax.Array
    records: Any


def gradient_descent(
    loss: Callable[[Any], jax.Array],
    params0: Any,
    *,
    lr: float,
    steps: int,
    record_every: int,
    record: Callable[[Any], Any] | None = None,
) -> Trajectory:
    """Full-batch gradient descent theta <- theta - lr grad loss(theta), ``steps`` steps.

    Records ``loss(theta)`` and ``record(theta)`` (any pytree, e.g. a kernel matrix) at
    steps 0, record_every, ..., steps; ``steps`` must be a multiple of ``record_every``.
    Pure and traceable: wrap it in ``jax.jit`` / ``jax.vmap`` (over params0) as needed.
    """
    check_callable(loss, name="loss", what="a scalar function loss(params)")
    check_params_pytree(params0, name="params0")
    if record is not None:
        check_callable(record, name="record", what="a function of params")
    steps = check_positive_int(steps, name="steps")
    record_every = check_positive_int(record_every, name="record_every")
    if steps % record_every:
        raise ValueError(f"steps ({steps}) must be a multiple of record_every ({record_every})")
    lr = check_real(lr, name="lr", positive=True)
    record = (lambda p: ()) if record is None else record
    chunks = steps // record_every

    # One scan over chunks 0..chunks: record, then take record_every steps (the last chunk
    # only records: its steps are masked out). The loss and the record then appear once in
    # the compiled program, not twice (initial value + loop body): half the compile time.
    def chunk(params, i):
        out = (loss(params), record(params))
        active = i < chunks

        def one_step(p, _):
            grads = jax.grad(loss)(p)
            return jax.tree_util.tree_map(lambda a, g: jnp.where(active, a - lr * g, a), p, grads), None

        params, _ = jax.lax.scan(one_step, params, None, length=record_every)
        return params, out

    final, (losses, records) = jax.lax.scan(chunk, params0, jnp.arange(chunks + 1))
    return Trajectory(final, losses, records)


# --------------------------------------------------------------------------- data and losses
def synthetic_classes(key: jax.Array, n: int, d: int, classes: int, *, noise: float = 0.5) -> tuple[jax.Array, jax.Array]:
    """n points in R^d from ``classes`` Gaussian clusters, on the sphere of radius sqrt(d).

    Labels are balanced (i mod classes); x = normalize(mu_y + noise * xi) * sqrt(d) with
    class means mu_c uniform on the unit sphere and xi ~ N(0, I/d), so x.x/d = 1 (the
    normalization of nets.mlp's input kernel). Returns (x (n, d), one-hot labels (n, classes)).
    """
    check_key(key)
    n = check_positive_int(n, name="n")
    d = check_positive_int(d, name="d")
    classes = check_positive_int(classes, name="classes", minimum=2)
    noise = check_real(noise, name="noise", nonnegative=True)
    k_mu, k_xi = jax.random.split(key)
    mu = jax.random.normal(k_mu, (classes, d))
    mu = mu / jnp.linalg.norm(mu, axis=1, keepdims=True)
    labels = jnp.arange(n) % classes
    x = mu[labels] + noise * jax.random.normal(k_xi, (n, d)) / jnp.sqrt(d)
    x = x / jnp.linalg.norm(x, axis=1, keepdims=True) * jnp.sqrt(d)
    return x, jax.nn.one_hot(labels, classes)


def cross_entropy(logits: jax.Array, onehot: jax.Array) -> jax.Array:
    """Mean over examples of -sum_a y_a log softmax(logits)_a; logits and onehot of shape (n, k)."""
    logits, onehot = _check_outputs(logits, onehot, "logits", "onehot")
    return -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(logits), axis=-1))


def square_loss(outputs: jax.Array, targets: jax.Array) -> jax.Array:
    """(1/2n) sum_i ||outputs_i - targets_i||^2 for outputs and targets of shape (n, k)."""
    outputs, targets = _check_outputs(outputs, targets, "outputs", "targets")
    return 0.5 * jnp.mean(jnp.sum((outputs - targets) ** 2, axis=-1))


def _check_outputs(outputs: Any, targets: Any, name: str, target_name: str) -> tuple[jax.Array, jax.Array]:
    out = as_float_array(outputs, name=name, ndim=2)
    tgt = as_float_array(targets, name=target_name, ndim=2)
    if out.shape != tgt.shape:
        raise ValueError(f"{name} and {target_name} must have the same shape (n, k), got {out.shape} and {tgt.shape}")
    return out, tgt


# --------------------------------------------------------------------------- norms of the bound


def norm_221(tensor: ArrayLike) -> float:
    """(2,2,1)-norm of T (p, q, m): sup_{|u|=|v|=1} sum_k |u^T T[:, :, k] v|, exactly.

    Uses sum_k |c_k| = max over signs s of sum_k s_k c_k, so the norm is the largest
    spectral norm of sum_k s_k T_k over the 2^(m-1) sign patterns (up to a global sign):
    exponential in m, meant for m <= 16.
    """
    t = as_host_float_array(tensor, name="tensor", ndim=3, nonempty=True)
    m = t.shape[2]
    if m > 16:
        raise ValueError(f"tensor has m = {m} > 16 slices: norm_221 enumerates 2^(m-1) sign patterns, too many")
    bits = (np.arange(2 ** (m - 1))[:, None] >> np.arange(m)[None, :]) & 1
    signs = 1.0 - 2.0 * bits  # the last sign is always +1 (a global flip changes nothing)
    mats = np.einsum("sk,pqk->spq", signs, t)
    return float(np.max(np.linalg.norm(mats, ord=2, axis=(1, 2))))


def layer_output_gradients(net: _nets.MLP, params: Any, x: ArrayLike) -> list[jax.Array]:
    """d f / d alpha^(l) for each hidden layer l = 1..L of a scalar-output net, at one input.

    alpha^(l) is the post-activation vector of hidden layer l; returns a list of (n_l,)
    arrays, the quantities whose sup-norm (Q_inf) and Euclidean norm control the Hessian
    and the gradient respectively.
    """
    net = _check_net(net)
    net.check_params(params)
    x = as_float_array(x, name="x", ndim=1)

    def grads(params, x):
        zs, hs, _ = net.forward(params, x[None])
        mults = net.multipliers()
        delta = jnp.ones((1, 1))
        out = []
        for layer in range(net.depth - 1, -1, -1):
            grad_alpha = mults[layer + 1][0] * (delta @ params[layer + 1]["W"].T)  # d f / d alpha
            out.append(grad_alpha[0])
            delta = net.activation.grad(zs[layer]) * grad_alpha
        return out[::-1]

    # one compiled program per shape instead of one compiled kernel per eager operation
    return jax.jit(grads)(params, x)


class KernelRun(NamedTuple):
    """Batched result of :func:`kernel_change_run` (leading axis: seeds).

    losses (S, R); delta_k: dict head -> (S, R) relative kernel change at each record;
    sup_delta_k: dict head -> (S,); l2_move and linf_move: (S,) Euclidean and largest
    per-weight distance ||theta_T - theta_0|| of the final parameters.
    """

    losses: jax.Array
    delta_k: dict[str, jax.Array]
    sup_delta_k: dict[str, jax.Array]
    l2_move: jax.Array
    linf_move: jax.Array


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
    record_every: int,
    scales: ArrayLike | None = None,
) -> KernelRun:
    """Train g o f by GD from one initialization per key; track the tangent kernels.

    The trained model is g(f(x; theta)) with g = ``train_head``; with ``scales`` (one
    alpha per key) it is Chizat and Bach's rescaled, centred model
    alpha (g(f(x; theta)) - g(f(x; theta_0))) with the loss divided by alpha^2, whose
    function-space dynamics do not depend on alpha. ``loss`` is "cross_entropy" (model
    outputs as logits) or "square". The tangent kernel of every head in ``kernel_heads``
    (on the same trajectory) is recorded every ``record_every`` steps. Parameters are drawn
    outside the compiled loop (random-number kernels compile slowly); all runs then go
    through one vmapped, jitted computation.
    """
    return kernel_change_runs(net, keys, x, targets, [dict(train_head=train_head, loss=loss, kernel_heads=kernel_heads)],
                              lr=lr, steps=steps, record_every=record_every, scales=scales)[0]


def kernel_change_runs(
    net: _nets.MLP,
    keys: jax.Array,
    x: ArrayLike,
    targets: ArrayLike,
    configs: list[dict[str, Any]],
    *,
    lr: float,
    steps: int,
    record_every: int,
    scales: ArrayLike | None = None,
) -> list[KernelRun]:
    """Several :func:`kernel_change_run` trainings from the same initializations, compiled
    together: ``configs`` is a list of dicts with keys ``train_head``, ``loss`` and
    ``kernel_heads``; returns one :class:`KernelRun` per config, in order.

    Each new network shape costs an XLA compilation (seconds on a small CPU); a width sweep
    that trains two models per width pays it once per width instead of twice.
    """
    net = _check_net(net)
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(f"x must have {net.input_dim} columns, got shape {tuple(x.shape)}")
    targets = as_float_array(targets, name="targets", ndim=2)
    if targets.shape != (x.shape[0], net.output_dim):
        raise ValueError(
            f"targets must have shape {(x.shape[0], net.output_dim)} (one row per row of x, one column per "
            f"output of net), got {tuple(targets.shape)}"
        )
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    record_every = check_positive_int(record_every, name="record_every")
    if steps % record_every:
        raise ValueError(f"steps ({steps}) must be a multiple of record_every ({record_every})")
    if not isinstance(configs, (list, tuple)) or not configs:
        raise ValueError("configs must be a non-empty list of dicts with train_head, loss and kernel_heads")
    parsed = []
    for cfg in configs:
        if not isinstance(cfg, dict) or set(cfg) != {"train_head", "loss", "kernel_heads"}:
            raise ValueError(
                f"each entry of configs must be a dict with keys train_head, loss, kernel_heads; got {cfg!r}"
            )
        check_choice(cfg["loss"], ("cross_entropy", "square"), name="loss")
        if isinstance(cfg["kernel_heads"], str) or not isinstance(cfg["kernel_heads"], (list, tuple)):
            raise TypeError(f"kernel_heads must be a tuple of head names, got {cfg['kernel_heads']!r}")
        for head in cfg["kernel_heads"]:
            try:
                head_fn(head)
            except (TypeError, ValueError) as err:
                raise type(err)(f"kernel_heads: {err}") from None
        try:
            trained = model(net, cfg["train_head"])
        except (TypeError, ValueError) as err:
            raise type(err)(f"train_head: {err}") from None
        parsed.append((trained, cross_entropy if cfg["loss"] == "cross_entropy" else square_loss,
                       tuple(cfg["kernel_heads"])))
    if not isinstance(keys, jax.Array) or keys.ndim != 1 or not jnp.issubdtype(keys.dtype, jax.dtypes.prng_key):
        raise TypeError("keys must be a 1-D array of JAX PRNG keys, e.g. jax.random.split(jax.random.key(0), 3)")
    centred = scales is not None
    alphas = jnp.ones(keys.shape[0]) if scales is None else as_float_array(scales, name="scales", ndim=1)
    if alphas.shape != keys.shape:
        raise ValueError(f"scales must hold one positive number per key ({keys.shape[0]}), got shape {alphas.shape}")
    check_range(alphas, name="scales", lo=0.0, lo_open=True)
    params0 = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *[init_params(net, k) for k in keys])

    def one(params0, alpha, apply, loss_fn, kernel_heads):
        out0 = apply(params0, x)

        def objective(params):
            out = apply(params, x)
            if centred:
                out = alpha * (out - out0)
            return loss_fn(out, targets) / alpha**2

        def record(params):
            return {h: _head_ntk(net, params, x, h) for h in kernel_heads}

        traj = gradient_descent(objective, params0, lr=lr, steps=steps, record_every=record_every, record=record)
        dk = {h: relative_change(traj.records[h]) for h in kernel_heads}
        move = jax.flatten_util.ravel_pytree(jax.tree_util.tree_map(jnp.subtract, traj.params, params0))[0]
        return traj.losses, dk, {h: jnp.max(v) for h, v in dk.items()}, jnp.linalg.norm(move), jnp.max(jnp.abs(move))

    def all_runs(params0, alphas):
        return [jax.vmap(lambda p, a, c=c: one(p, a, *c))(params0, alphas) for c in parsed]

    results = []
    return [KernelRun(*out) for out in jax.jit(all_runs)(params0, alphas)]
