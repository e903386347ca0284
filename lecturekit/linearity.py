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

from typing import Any, Callable, Iterable, NamedTuple

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


# --------------------------------------------------------------------------- one hidden layer, in closed form
# The networks of Sections 3.1-3.5: f = m^{-1/2} sum_i v_i tanh(z_i) with z_i = <w_i, x~>.
# Everything below runs in NumPy on the host (no compilation per width).


def _tanh_derivatives(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.tanh(z)
    d1 = 1.0 - t**2
    return t, d1, -2.0 * t * d1


def _check_vz(v: ArrayLike, z: ArrayLike, scale: Any) -> tuple[np.ndarray, np.ndarray, float]:
    v = as_host_float_array(v, name="v", ndim=1, nonempty=True)
    z = as_host_float_array(z, name="z", ndim=1, nonempty=True)
    if v.shape != z.shape:
        raise ValueError(f"v and z must have the same shape (m,), got {v.shape} and {z.shape}")
    return v, z, check_real(scale, name="scale", positive=True)


def one_hidden_layer_hessian_eigenvalues(v: ArrayLike, z: ArrayLike, scale: float = 1.0) -> np.ndarray:
    """The 2m non-zero-block eigenvalues (increasing) of the Hessian of a one-hidden-layer tanh net.

    Model: f = m^{-1/2} sum_i v_i tanh(<w_i, x~>) at one input x~ of norm ``scale`` = |x~|,
    Hessian with respect to all (w_i, v_i); ``z`` holds the pre-activations z_i = <w_i, x~>.
    Neuron i acts only in the plane spanned by (x~/|x~|, 0) and (0, e_i), where its block is
    m^{-1/2} [[a_i, c_i], [c_i, 0]] with a_i = v_i tanh''(z_i) |x~|^2 and c_i = tanh'(z_i) |x~|:
    eigenvalues (a_i +- sqrt(a_i^2 + 4 c_i^2)) / (2 sqrt(m)). (Every other direction of w_i
    is a zero eigenvalue, not returned.) For a scalar input x, |x~| = |x| and z_i = w_i x.
    """
    v, z, s = _check_vz(v, z, scale)
    _, d1, d2 = _tanh_derivatives(z)
    a, c = v * d2 * s**2, d1 * s
    root = np.sqrt(a**2 + 4.0 * c**2)
    return np.sort(np.concatenate([a - root, a + root])) / (2.0 * np.sqrt(v.size))


def one_hidden_layer_hessian_norm(v: ArrayLike, z: ArrayLike, scale: float = 1.0) -> float:
    """||H||_2 = max_i (|a_i| + sqrt(a_i^2 + 4 c_i^2)) / (2 sqrt m) for the model of
    :func:`one_hidden_layer_hessian_eigenvalues` (same arguments)."""
    v, z, s = _check_vz(v, z, scale)
    _, d1, d2 = _tanh_derivatives(z)
    a, c = v * d2 * s**2, d1 * s
    return float(np.max(np.abs(a) + np.sqrt(a**2 + 4.0 * c**2)) / (2.0 * np.sqrt(v.size)))


def mlp_hessian_norm(net: _nets.MLP, params: Any, x: ArrayLike) -> float:
    """Exact ||H||_2 of a one-hidden-layer tanh ``nets.mlp`` with one output, at one input x.

    With multipliers z = mW0 W^T x + mb0 b (hidden) and f = mW1 sum_i v_i tanh(z_i) + mb1 b1
    (NTK parameterization: mW1 = out_w_std / sqrt(m)), neuron i's parameters (W_i, b_i, v_i)
    see the input x~ = (mW0 x, mb0) and the block of :func:`one_hidden_layer_hessian_norm`
    with |x~| and an extra factor out_w_std; the output bias is linear.
    """
    net = _check_net(net)
    if net.depth != 1 or net.output_dim != 1 or net.activation.name != "tanh":
        raise ValueError("mlp_hessian_norm needs a one-hidden-layer tanh net with one output, "
                         f"got widths {net.widths} and activation {net.activation.name!r}")
    if net.parameterization != "ntk":
        raise ValueError("mlp_hessian_norm needs a net in the NTK parameterization")
    net.check_params(params)
    x = as_host_float_array(x, name="x", ndim=1)
    if x.size != net.input_dim:
        raise ValueError(f"x must have {net.input_dim} entries, got {x.size}")
    (mw0, mb0), _ = net.multipliers()
    W, b = np.asarray(params[0]["W"]), np.asarray(params[0]["b"])
    v = np.asarray(params[1]["W"])[:, 0]
    z = mw0 * (x @ W) + mb0 * b
    scale = float(np.sqrt(mw0**2 * (x @ x) + mb0**2))
    if scale == 0.0:
        return 0.0
    return net.out_w_std * one_hidden_layer_hessian_norm(v, z, scale)


# --------------------------------------------------------------------------- expected maxima
_T_GRID = np.linspace(0.0, 12.0, 3001)  # the maxima below have negligible mass beyond 12


def _max_moments(survival: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and s.d. of the maximum of m i.i.d. copies of a variable >= 0 with survival
    function S on _T_GRID: E[max] = int (1 - (1 - S)^m) dt, E[max^2] = int 2t (1 - (1 - S)^m) dt."""
    with np.errstate(divide="ignore"):  # S = 1 gives log 0 = -inf: (1 - S)^m = 0, as it should
        tail = -np.expm1(m[:, None] * np.log1p(-np.clip(survival, 0.0, 1.0)))
    mean = np.trapezoid(tail, _T_GRID, axis=1)
    second = np.trapezoid(2.0 * _T_GRID * tail, _T_GRID, axis=1)
    return mean, np.sqrt(np.maximum(second - mean**2, 0.0))


def _widths(m: ArrayLike) -> np.ndarray:
    arr = as_host_float_array(m, name="m", ndim=(0, 1), nonempty=True)
    if np.any(arr < 1) or np.any(arr != np.round(arr)):
        raise ValueError(f"m must hold positive integers (numbers of neurons), got {arr}")
    return np.atleast_1d(arr)


def gaussian_max_abs_moments(m: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of max_{i <= m} |g_i| for i.i.d. g_i ~ N(0, 1), by quadrature.

    E[max] = int_0^inf (1 - erf(t / sqrt 2)^m) dt; it grows like sqrt(2 ln m) (slowly: 2.46
    at m = 50, 3.44 at m = 1024). Returns arrays of the shape of ``m`` (1-D).
    """
    import scipy.special

    return _max_moments(scipy.special.erfc(_T_GRID / np.sqrt(2.0)), _widths(m))


def max_block_norm_moments(m: ArrayLike, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of sqrt(m) ||H||_2 for the model of
    :func:`one_hidden_layer_hessian_norm` with v_i ~ N(0, 1) and z_i ~ N(0, scale^2) i.i.d.

    sqrt(m) ||H||_2 = max_i g_i with g = (|a| + sqrt(a^2 + 4c^2)) / 2, a = v tanh''(z) s^2,
    c = tanh'(z) s. Given z, g <= t iff |a| <= t - c^2 / t, so
    P(g > t) = E_z[1{t <= |c|} + 1{t > |c|} erfc((t - c^2/t) / (sqrt 2 |tanh''(z)| s^2))],
    computed on a fine grid of z; then the moments of a maximum of m i.i.d. copies follow
    by quadrature in t. This is the prediction, not a fit, of the Hessian norm against width.
    """
    import scipy.special

    widths = _widths(m)
    s = check_real(scale, name="scale", positive=True)
    z = np.linspace(-9.0, 9.0, 3601) * s
    weights = np.exp(-0.5 * (z / s) ** 2)
    weights /= weights.sum()
    _, d1, d2 = _tanh_derivatives(z)
    c, spread = np.abs(d1) * s, np.abs(d2) * s**2
    t = _T_GRID[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        room = t - c**2 / np.where(t > 0, t, 1.0)
        tail = np.where(spread > 0, scipy.special.erfc(room / (np.sqrt(2.0) * spread)), 0.0)
    survival = np.where(t <= c, 1.0, tail) @ weights
    return _max_moments(survival, widths)


# --------------------------------------------------------------------------- ReLU: the kinks
class ReluSplit(NamedTuple):
    """Result of :func:`relu_kernel_split` (floats): relative kernel changes ||.||_F / ||K_0||_F
    of the pattern flips (``kink``) and of the rest (``smooth``), the fraction of
    (input, unit) activation indicators that flipped, and the final training loss."""

    kink: float
    smooth: float
    flipped: float
    loss: float


def relu_kernel_split(m: int, key: jax.Array, x: ArrayLike, y: ArrayLike, *, lr: float = 0.5,
                      steps: int = 400) -> ReluSplit:
    """Train a one-hidden-layer ReLU network by GD and split its kernel change at the kinks.

    f(x) = m^{-1/2} sum_i v_i relu(<w_i, x> sqrt(2/d)), w_i ~ N(0, I_d), v_i ~ N(0, 1), trained
    on L = 1/2 sum_j (f(x_j) - y_j)^2 with step ``lr``. Its tangent kernel is
    K(x, x') = m^{-1} sum_i [v_i^2 p_i(x) p_i(x') (2/d) <x, x'> + relu_i(x) relu_i(x')] with the
    activation indicators p_i(x) = 1{<w_i, x> > 0}. K_frz is that formula with the final
    weights and the *initial* indicators: the kernel of the smooth model that the almost-
    everywhere Hessian describes. Returns ||K_T - K_frz|| (the flips; the a.e. Hessian does
    not see them) and ||K_frz - K_0||, both relative to ||K_0||_F.
    """
    m = check_positive_int(m, name="m")
    check_key(key)
    x = as_host_float_array(x, name="x", ndim=2, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1)
    if y.shape != (x.shape[0],):
        raise ValueError(f"y must have one entry per row of x ({x.shape[0]}), got shape {y.shape}")
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    n, d = x.shape
    draws = _hessian.normal_stream(key, m * (d + 1))
    W0, v0 = draws[: m * d].reshape(m, d) * np.sqrt(2.0 / d), draws[m * d:]
    W, v = W0.copy(), v0.copy()
    for _ in range(steps):
        pre = x @ W.T
        act = (pre > 0).astype(float)
        r = np.maximum(pre, 0.0) @ v / np.sqrt(m) - y
        W -= lr * ((act * v) * r[:, None]).T @ x / np.sqrt(m)
        v -= lr * (np.maximum(pre, 0.0) * r[:, None]).sum(axis=0) / np.sqrt(m)
    loss = 0.5 * float(np.sum((np.maximum(x @ W.T, 0.0) @ v / np.sqrt(m) - y) ** 2))

    def kernel(W_, v_, pattern):
        lin = (x @ W_.T) * pattern                                    # relu via the pattern
        return ((pattern * v_**2) @ pattern.T * (x @ x.T) + lin @ lin.T) / m

    p0, pT = (x @ W0.T > 0).astype(float), (x @ W.T > 0).astype(float)
    k0, kT, k_frz = kernel(W0, v0, p0), kernel(W, v, pT), kernel(W, v, p0)
    scale = np.linalg.norm(k0)
    return ReluSplit(float(np.linalg.norm(kT - k_frz) / scale), float(np.linalg.norm(k_frz - k0) / scale),
                     float(np.mean(p0 != pT)), loss)


def _check_scalar_net(w: ArrayLike, v: ArrayLike, x: Any) -> tuple[np.ndarray, np.ndarray, float]:
    w = as_host_float_array(w, name="w", ndim=1, nonempty=True)
    v = as_host_float_array(v, name="v", ndim=1, nonempty=True)
    if v.shape != w.shape:
        raise ValueError(f"w and v must have the same shape (m,), got {w.shape} and {v.shape}")
    return w, v, check_real(x, name="x")


def tanh_net_gradient(w: ArrayLike, v: ArrayLike, x: float) -> np.ndarray:
    """Gradient of f(w, v; x) = m^{-1/2} sum_i v_i tanh(w_i x) with respect to theta = (w, v):
    (v_i tanh'(w_i x) x, tanh(w_i x)) / sqrt(m), shape (2m,), w first."""
    w, v, x = _check_scalar_net(w, v, x)
    t, d1, _ = _tanh_derivatives(w * x)
    return np.concatenate([v * d1 * x, t]) / np.sqrt(w.size)


def tanh_net_hvp(w: ArrayLike, v: ArrayLike, x: float, u: ArrayLike) -> np.ndarray:
    """H(w, v; x) u for the model of :func:`tanh_net_gradient` (2x2 blocks, never formed):
    (H u)_{w_i} = (a_i u_{w_i} + c_i u_{v_i}) / sqrt m, (H u)_{v_i} = c_i u_{w_i} / sqrt m with
    a_i = v_i tanh''(w_i x) x^2, c_i = tanh'(w_i x) x."""
    w, v, x = _check_scalar_net(w, v, x)
    u = as_host_float_array(u, name="u", ndim=1)
    if u.size != 2 * w.size:
        raise ValueError(f"u must have 2m = {2 * w.size} entries (w then v), got {u.size}")
    _, d1, d2 = _tanh_derivatives(w * x)
    a, c = v * d2 * x**2, d1 * x
    uw, uv = u[: w.size], u[w.size:]
    return np.concatenate([a * uw + c * uv, c * uw]) / np.sqrt(w.size)


# --------------------------------------------------------------------------- a width-1 bottleneck
def bottleneck_mixed_block_norm(net: _nets.MLP, params: Any, x: ArrayLike) -> float:
    """Norm of the Hessian block coupling the parameters below and above a width-1 bottleneck.

    For a tanh ``nets.mlp`` with widths (d, m, 1, m', 1), alpha = tanh(z_b) is the output of
    the bottleneck and f = G(alpha; theta_up). Since alpha does not depend on theta_up,
    d^2 f / (d theta_low d theta_up) = grad_low(alpha) grad_up(dG/dalpha)^T: a rank-one block
    of norm |tanh'(z_b)| ||grad_low z_b|| ||grad_up dG/dalpha||, computed here in closed form.
    It bounds ||H||_2 from below (an off-diagonal block of a symmetric matrix).
    """
    net = _check_net(net)
    if (len(net.widths) != 5 or net.widths[2] != 1 or net.output_dim != 1 or net.activation.name != "tanh"
            or net.parameterization != "ntk"):
        raise ValueError("bottleneck_mixed_block_norm needs a tanh net in the NTK parameterization with "
                         f"widths (d, m, 1, m', 1), got widths {net.widths}, activation {net.activation.name!r}")
    net.check_params(params)
    x = as_host_float_array(x, name="x", ndim=1)
    if x.size != net.input_dim:
        raise ValueError(f"x must have {net.input_dim} entries, got {x.size}")
    (mw0, mb0), (mw1, mb1), (mw2, mb2), (mw3, _) = net.multipliers()
    p = [{k: np.asarray(val) for k, val in layer.items()} for layer in params]
    h1, dh1, _ = _tanh_derivatives(mw0 * (x @ p[0]["W"]) + mb0 * p[0]["b"])
    s = p[1]["W"][:, 0]
    z_b = mw1 * (h1 @ s) + mb1 * p[1]["b"][0]
    alpha, d_alpha, _ = _tanh_derivatives(np.array(z_b))
    low_sq = mw1**2 * (h1 @ h1) + mb1**2 + mw1**2 * np.sum(s**2 * dh1**2) * (mw0**2 * (x @ x) + mb0**2)
    u, v = p[2]["W"][0], p[3]["W"][:, 0]
    _, d1, d2 = _tanh_derivatives(mw2 * u * alpha + mb2 * p[2]["b"])
    up_sq = np.sum((mw3 * mw2 * u * d1) ** 2                                # d/dv_k of dG/dalpha
                   + (mw3 * mw2 * v * (d1 + mw2 * u * alpha * d2)) ** 2     # d/du_k
                   + (mw3 * mw2 * v * u * d2 * mb2) ** 2)                   # d/db_k
    return float(abs(d_alpha) * np.sqrt(low_sq * up_sq))


# --------------------------------------------------------------------------- the width explorer
def _units_outputs_and_gradients(x, h, v, s):
    """f(x) = sum_i s_i v_i h_i(x) and its gradient blocks (d/dw, d/db, d/dv) for
    h_i = tanh(w_scale w_i x + b_i) (the w block still lacks the factor w_scale).
    Array arithmetic only: it serves traced arrays and NumPy arrays alike."""
    dh = (1.0 - h**2) * (s * v)
    return h @ (s * v), (x[:, None] * dh, dh, h * s)


def first_units_width_sweep(
    x: ArrayLike,
    y: ArrayLike,
    x_eval: ArrayLike,
    widths: tuple[int, ...],
    key: jax.Array,
    *,
    max_width: int = 1024,
    lr: float = 0.2,
    steps: int = 400,
    w_scale: float = 2.0,
) -> dict[int, dict[str, Any]]:
    """Train f_m(x) = m^{-1/2} sum_{i<m} v_i tanh(w_scale w_i x + b_i) and its linearization.

    Scalar inputs. One draw (w, b, v) ~ N(0, 1) of ``max_width`` units; the network of width
    m uses the first m of them (the others get the factor 0 and never move), so every width
    runs through one compiled gradient-descent loop: ``steps`` steps of size ``lr`` on
    L = 1/2 sum_j (f(x_j) - y_j)^2. The linearized model trained by the same steps is, in
    closed form, f_lin = f_0 - K_0(., X) U diag((1 - (1 - lr lam)^T) / lam) U^T (f_0(X) - y)
    with K_0 = U diag(lam) U^T on the training inputs (the factor -> lr T as lam -> 0).
    Returns, per width: ``network`` and ``linearized`` on ``x_eval``; the kernel slices
    ``slices0``/``slicesT`` = K(x_eval, x_j) before and after training; ``delta_k`` =
    ||K_T - K_0||_F / ||K_0||_F on the training inputs; the final ``loss``.
    """
    x = as_host_float_array(x, name="x", ndim=1, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1)
    if y.shape != x.shape:
        raise ValueError(f"y must have the shape {x.shape} of x, got {y.shape}")
    x_eval = as_host_float_array(x_eval, name="x_eval", ndim=1, nonempty=True)
    check_key(key)
    max_width = check_positive_int(max_width, name="max_width")
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Iterable):
        raise TypeError(f"widths must be a sequence of positive integers, got {widths!r}")
    widths = tuple(check_positive_int(m, name="widths[i]") for m in widths)
    if not widths or max(widths) > max_width:
        raise ValueError(f"widths must be a non-empty tuple of widths <= max_width = {max_width}, got {widths}")
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    w_scale = check_real(w_scale, name="w_scale", positive=True)
    n = x.size
    theta0 = tuple(np.split(_hessian.normal_stream(key, 3 * max_width), 3))      # (w, b, v)
    both = np.concatenate([x, x_eval])
    units0 = np.tanh(w_scale * np.outer(both, theta0[0]) + theta0[1])

    def mask(m, xp):
        return xp.where(xp.arange(max_width) < m, 1.0 / xp.sqrt(m * 1.0), 0.0)

    @jax.jit
    def train(m, theta):
        s, x_dev, y_dev = mask(m, jnp), jnp.asarray(x), jnp.asarray(y)

        def step(theta, _):
            w, b, v = theta
            f, (gw, gb, gv) = _units_outputs_and_gradients(x_dev, jnp.tanh(w_scale * jnp.outer(x_dev, w) + b), v, s)
            grads = (w_scale * gw, gb, gv)
            return tuple(p - lr * g.T @ (f - y_dev) for p, g in zip(theta, grads)), None

        return jax.lax.scan(step, theta, None, length=steps)[0]

    def gram(ga, gb):
        return sum(a @ b.T for a, b in zip(ga, gb))

    out = {}
    for m in widths:
        s = mask(m, np)
        w, b, v = (np.asarray(a) for a in train(m, theta0))
        f0, g0 = _units_outputs_and_gradients(both, units0, theta0[2], s)
        fT, gT = _units_outputs_and_gradients(both, np.tanh(w_scale * np.outer(both, w) + b), v, s)
        g0 = (w_scale * g0[0], g0[1], g0[2])
        gT = (w_scale * gT[0], gT[1], gT[2])
        k0, kT = (gram([g[:n] for g in gs], [g[:n] for g in gs]) for gs in (g0, gT))
        slices0, slicesT = (gram([g[n:] for g in gs], [g[:n] for g in gs]) for gs in (g0, gT))
        lam, vecs = np.linalg.eigh(k0)
        big = lam > 1e-12
        coef = np.where(big, (1.0 - (1.0 - lr * lam) ** steps) / np.where(big, lam, 1.0), lr * steps)
        f_lin = f0[n:] - slices0 @ (vecs @ (coef * (vecs.T @ (f0[:n] - y))))
        out[m] = dict(network=fT[n:], linearized=f_lin, slices0=slices0, slicesT=slicesT,
                      delta_k=float(np.linalg.norm(kT - k0) / np.linalg.norm(k0)),
                      loss=float(0.5 * np.sum((fT[:n] - y) ** 2)))
    return out
