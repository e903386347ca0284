"""Path counting for bias-free ReLU networks: finite-width moments of the tangent kernel.

Setting (Chapter 9). A bias-free ReLU network with widths (n_0, n_1, ..., n_L, 1) in the
NTK parameterization, every layer scaled by sqrt(2 / fan-in), readout included:

    z^(l) = sqrt(2 / n_{l-1}) h^(l-1) W^(l),   h^(l) = ReLU(z^(l)),   h^(0) = x,

with W^(l) of N(0, 1) entries and the output f(x) = z^(L+1), i.e.
``nets.mlp((n_0, ..., n_L, 1), "relu", w_std=sqrt(2), b_std=0, out_w_std=sqrt(2))``
(:func:`relu_network`). A *path* gamma = (p, i_1, ..., i_L, q) picks one unit per layer;
its weight is W_gamma = prod_{l=1}^{L+1} sqrt(2 / n_{l-1}) W^(l)[i_{l-1}, i_l] and its
indicator xi_gamma(x) = prod_{l=1}^{L} 1{z^(l)_{i_l}(x) > 0} (JAX's relu'(0) = 0). Then

    f_q(x) = sum_p x_p sum_{gamma from p to q} W_gamma xi_gamma(x)     (path expansion),

and the input-output derivative is df_q / dx_p = sum_gamma W_gamma xi_gamma. For Gaussian
weights (P2/P3/P5 of the errata): E[(df/dx_p)^2] = 2 / n_0 and
E[(df/dx_p)^4] = (12 / n_0^2) prod_k (1 + 5 / n_k); the tangent kernel with respect to the
N(0, 1) weights has E[Theta(x, x)] = 2 (L + 1) ||x||^2 / n_0, each of the L + 1 layers
contributing 2 ||x||^2 / n_0; beta = sum_k 1 / n_k over the hidden widths.

Ensembles are drawn by :meth:`lecturekit.nets.MLP.init_many` (the one sampler), ``chunk``
networks at a time: network ``i`` is network ``i % chunk`` of
``init_many(jax.random.fold_in(key, i // chunk), chunk)``. Other weight laws with unit
variance are transforms of those normals (:func:`transform_weights`).
"""

from __future__ import annotations

import itertools
import math
from functools import partial
from typing import Any, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import nets as _nets
from . import training as _training
from ._validation import (
    as_float_array, check_choice, check_key, check_params_pytree, check_positive_int, check_real,
)

__all__ = ["relu_network", "beta", "derivative_moments", "ntk_diagonal_mean", "enumerate_paths",
           "path_expansion", "input_gradients", "transform_weights", "ntk_layer_terms",
           "input_gradient_ensemble", "ntk_diagonal_ensemble", "relative_second_moment",
           "DerivativeMoments", "TrainedChange", "trained_kernel_change"]

LAWS = ("gaussian", "uniform", "rademacher")
MAX_PATHS = 1_000_000


def _check_scalar_net(net: Any) -> None:
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a nets.mlp network, got {type(net).__name__}")
    if net.output_dim != 1:
        raise ValueError(f"net must have a scalar output, got {net.output_dim} outputs")


def _check_layers(params: Any, net: _nets.MLP | None = None, *, batched: bool = False) -> None:
    """A list of {"W", "b"} dicts with floating, finite leaves (shapes of ``net`` if given)."""
    if not isinstance(params, (list, tuple)) or not params:
        raise ValueError("params must be a non-empty list of {'W', 'b'} layer dicts")
    for i, layer in enumerate(params):
        if not isinstance(layer, dict) or set(layer) != {"W", "b"}:
            raise ValueError(f"params[{i}] must be a dict with keys 'W' and 'b'")
    check_params_pytree(list(params))
    if net is None:
        return
    if len(params) != net.depth + 1:
        raise ValueError(f"params must have {net.depth + 1} layers for this network, got {len(params)}")
    lead = np.shape(params[0]["W"])[:1] if batched else ()
    if batched and (len(lead) != 1 or lead[0] < 1):
        raise ValueError("params must carry one leading network axis (from net.init_many)")
    for i, (layer, n_in, n_out) in enumerate(zip(params, net.widths[:-1], net.widths[1:])):
        if np.shape(layer["W"]) != lead + (n_in, n_out) or np.shape(layer["b"]) != lead + (n_out,):
            raise ValueError(f"params[{i}] must have W of shape {lead + (n_in, n_out)} and b of shape "
                             f"{lead + (n_out,)}, got {np.shape(layer['W'])} and {np.shape(layer['b'])}")


def _check_hidden(hidden: Any) -> tuple[int, ...]:
    if isinstance(hidden, (str, bytes, dict)) or not hasattr(hidden, "__len__"):
        raise TypeError(f"hidden must be a sequence of positive integers (n_1, ..., n_L), got {hidden!r}")
    if len(hidden) < 1:
        raise ValueError("hidden must list at least one hidden width")
    return tuple(check_positive_int(n, name=f"hidden[{i}]") for i, n in enumerate(hidden))


def relu_network(n0: int, hidden: Sequence[int]) -> _nets.MLP:
    """The chapter's network: bias-free ReLU, every layer scaled by sqrt(2 / fan-in).

    It is ``nets.mlp((n0, *hidden, 1), "relu", w_std=sqrt(2), b_std=0, out_w_std=sqrt(2),
    out_b_std=0)`` in the NTK parameterization: the biases exist as parameters but have
    multiplier 0, so they change neither the output nor the tangent kernel.

    Args:
        n0: input dimension, >= 1.
        hidden: the hidden widths (n_1, ..., n_L), L >= 1.

    Returns:
        The :class:`lecturekit.nets.MLP`.

    Example:
        >>> from lecturekit import path_counting
        >>> net = path_counting.relu_network(4, (12, 12, 12))
        >>> net.widths, round(net.out_w_std**2, 12)
        ((4, 12, 12, 12, 1), 2.0)
    """
    n0 = check_positive_int(n0, name="n0")
    hidden = _check_hidden(hidden)
    return _nets.mlp((n0, *hidden, 1), "relu", w_std=2**0.5, b_std=0.0, out_w_std=2**0.5, out_b_std=0.0)


def beta(hidden: Sequence[int]) -> float:
    """beta = sum_k 1 / n_k over the hidden widths: about depth / width.

    Args:
        hidden: the hidden widths (n_1, ..., n_L).

    Returns:
        beta, a float.

    Example:
        >>> from lecturekit import path_counting
        >>> path_counting.beta((8, 8)), path_counting.beta((48,) * 12)
        (0.25, 0.25)
    """
    return float(sum(1.0 / n for n in _check_hidden(hidden)))


class DerivativeMoments(NamedTuple):
    """Exact moments of an input-output derivative d f / d x_p (Gaussian weights).

    Attributes:
        second: E[(df/dx_p)^2] = 2 / n_0.
        fourth: E[(df/dx_p)^4] = (12 / n_0^2) prod_k (1 + 5 / n_k).
        fourth_exp: the approximation (12 / n_0^2) exp(5 beta).

    Example:
        >>> from lecturekit import path_counting
        >>> m = path_counting.derivative_moments(4, (12, 12, 12))
        >>> print(f"{m.second:.3f} {m.fourth:.4f} {m.fourth_exp:.4f}")
        0.500 2.1324 2.6178
    """

    second: float
    fourth: float
    fourth_exp: float


def derivative_moments(n0: int, hidden: Sequence[int]) -> DerivativeMoments:
    """Second and fourth moment of df/dx_p for the network of :func:`relu_network`.

    With Gaussian weights and an input without exact zero pre-activations (almost every
    input), (df/dx_p)^2 = (2 / n_0) chi^2_1 prod_k (2 / n_k) chi^2_{K_k} in law, with
    independent K_k ~ Binomial(n_k, 1/2) and chi-squares; E[(2/n) chi^2_K] = 1 and
    E[((2/n) chi^2_K)^2] = 1 + 5/n give the two moments.

    Args:
        n0: input dimension.
        hidden: the hidden widths (n_1, ..., n_L).

    Returns:
        A :class:`DerivativeMoments`.

    Example:
        >>> from lecturekit import path_counting
        >>> m = path_counting.derivative_moments(2, (5,))
        >>> print(f"{m.second:.2f} {m.fourth:.2f}")
        1.00 6.00
    """
    n0 = check_positive_int(n0, name="n0")
    hidden = _check_hidden(hidden)
    prod = math.prod(1.0 + 5.0 / n for n in hidden)
    return DerivativeMoments(2.0 / n0, 12.0 / n0**2 * prod, 12.0 / n0**2 * math.exp(5.0 * beta(hidden)))


def ntk_diagonal_mean(x: ArrayLike, depth: int) -> np.ndarray:
    """E[Theta(x, x)] = 2 (L + 1) ||x||^2 / n_0 for the network of :func:`relu_network`.

    The tangent kernel is taken with respect to the N(0, 1) weights of all L + 1 layers;
    each layer contributes 2 ||x||^2 / n_0 whatever the hidden widths.

    Args:
        x: inputs, shape (n, n_0).
        depth: number of hidden layers L >= 1.

    Returns:
        The means, shape (n,).

    Example:
        >>> from lecturekit import path_counting
        >>> path_counting.ntk_diagonal_mean(np.array([[1.0, 1.0]]), 3).tolist()
        [8.0]
    """
    x = np.asarray(as_float_array(x, name="x", ndim=2), dtype=float)
    depth = check_positive_int(depth, name="depth")
    return 2.0 * (depth + 1) * np.sum(x**2, axis=1) / x.shape[1]


def _check_bias_free_relu(net: Any) -> None:
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a nets.mlp network, got {type(net).__name__}")
    if net.activation.name != "relu" or net.output_activation is not None:
        raise ValueError("net must be a ReLU network without output activation")
    if net.parameterization != "ntk" or net.b_std != 0 or net.out_b_std != 0:
        raise ValueError("net must be bias-free: parameterization 'ntk' with b_std = out_b_std = 0")


def enumerate_paths(widths: Sequence[int]) -> np.ndarray:
    """Every path (p, i_1, ..., i_L, q) through a network with widths (n_0, ..., n_L, k).

    Args:
        widths: the widths of all layers, input first and output last (at least 3).

    Returns:
        An int array (n_0 n_1 ... n_L k, L + 2), rows in lexicographic order.

    Raises:
        ValueError: if there are more than a million paths.

    Example:
        >>> from lecturekit import path_counting
        >>> paths = path_counting.enumerate_paths((2, 3, 1))
        >>> paths.shape, paths[:2].tolist()
        ((6, 3), [[0, 0, 0], [0, 1, 0]])
    """
    if isinstance(widths, (str, bytes, dict)) or not hasattr(widths, "__len__"):
        raise TypeError(f"widths must be a sequence of positive integers, got {widths!r}")
    if len(widths) < 3:
        raise ValueError(f"widths must list the input, >= 1 hidden and the output width, got {widths!r}")
    widths = tuple(check_positive_int(w, name=f"widths[{i}]") for i, w in enumerate(widths))
    if math.prod(widths) > MAX_PATHS:
        raise ValueError(f"widths {widths} have {math.prod(widths)} paths; at most {MAX_PATHS} are enumerated")
    return np.array(list(itertools.product(*(range(w) for w in widths))), dtype=np.int64)


def path_expansion(net: _nets.MLP, params: Any, x: ArrayLike) -> np.ndarray:
    """The output f(x) = sum_p x_p sum_gamma W_gamma xi_gamma(x), summed path by path.

    The activation indicators xi come from the forward pass (1{z > 0}); everything else
    is the explicit sum over :func:`enumerate_paths` (host NumPy, float64): a check of
    the identity against ``net.apply``, for tiny networks.

    Args:
        net: a bias-free ReLU ``nets.mlp`` network (b_std = out_b_std = 0).
        params: its parameters (from ``net.init``).
        x: inputs, shape (n, n_0).

    Returns:
        The outputs, shape (n,) for one output, else (n, k).

    Example:
        >>> from lecturekit import path_counting
        >>> net = path_counting.relu_network(3, (4, 2))
        >>> p, x = net.init(jax.random.key(0)), jnp.ones((2, 3))
        >>> bool(np.allclose(path_counting.path_expansion(net, p, x),
        ...                  net.apply(p, x)))
        True
    """
    _check_bias_free_relu(net)
    zs, _, _ = net.forward(params, x)
    x = np.asarray(x, dtype=float)
    paths = enumerate_paths(net.widths)
    weight = np.ones(len(paths))
    for l, (layer, (mw, _)) in enumerate(zip(params, net.multipliers())):
        weight = weight * mw * np.asarray(layer["W"], dtype=float)[paths[:, l], paths[:, l + 1]]
    active = np.ones((x.shape[0], len(paths)))
    for l in range(net.depth):
        active = active * (np.asarray(zs[l])[:, paths[:, l + 1]] > 0)
    terms = x[:, paths[:, 0]] * weight * active            # (n, paths)
    out = np.zeros((x.shape[0], net.output_dim))
    for q in range(net.output_dim):
        out[:, q] = terms[:, paths[:, -1] == q].sum(axis=1)
    return out[:, 0] if net.output_dim == 1 else out


def input_gradients(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """df/dx of a scalar-output network, from its one backward pass.

    df/dx = mW_1 W^(1) delta_1, with delta_1 = df/dz^(1) from :meth:`lecturekit.nets.MLP.backward`
    and mW_1 the first layer's multiplier. Traceable (vmap it over networks).

    Args:
        net: a scalar-output ``nets.mlp`` network.
        params: its parameters.
        x: inputs, shape (n, n_0).

    Returns:
        The gradients, shape (n, n_0).

    Example:
        >>> from lecturekit import path_counting
        >>> net = path_counting.relu_network(3, (8,))
        >>> p, x = net.init(jax.random.key(0)), jnp.ones((2, 3))
        >>> g = path_counting.input_gradients(net, p, x)
        >>> auto = jax.vmap(jax.grad(lambda v: net.apply(p, v[None])[0]))(x)
        >>> bool(jnp.allclose(g, auto))
        True
    """
    _check_scalar_net(net)
    bw = net.backward(params, x)
    return net.multipliers()[0][0] * bw.deltas[0][:, 0, :] @ params[0]["W"].T


def transform_weights(params: Any, law: str) -> Any:
    """Map N(0, 1) weights to unit-variance weights of another law (biases kept).

    "gaussian" keeps them; "rademacher" takes sign(g); "uniform" takes
    sqrt(3) (2 Phi(g) - 1), uniform on [-sqrt 3, sqrt 3] (Phi the normal CDF). All three
    laws are symmetric with variance 1. Works on batched parameters and under tracing.

    Args:
        params: list of ``{"W", "b"}`` layer dicts with N(0, 1) weights.
        law: "gaussian", "uniform" or "rademacher".

    Returns:
        The transformed parameters (same structure).

    Example:
        >>> from lecturekit import path_counting
        >>> p = [{"W": jnp.array([[-0.3, 2.0]]), "b": jnp.zeros(2)}]
        >>> path_counting.transform_weights(p, "rademacher")[0]["W"].tolist()
        [[-1.0, 1.0]]
    """
    check_choice(law, LAWS, name="law")
    _check_layers(params)
    if law == "gaussian":
        return params
    if law == "rademacher":
        fn = jnp.sign
    else:
        fn = lambda g: 3**0.5 * (2 * jax.scipy.stats.norm.cdf(g) - 1)  # noqa: E731
    return [{"W": fn(layer["W"]), "b": layer["b"]} for layer in params]


def ntk_layer_terms(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """The per-layer parts of Theta(x, x) = sum_l (mW_l^2 ||h_{l-1}||^2 + mb_l^2) ||delta_l||^2.

    The tangent kernel (with respect to every parameter of the network) on the diagonal,
    split by dense layer; it sums to ``tangent.empirical_ntk``'s diagonal. Traceable.

    Args:
        net: a scalar-output ``nets.mlp`` network.
        params: its parameters.
        x: inputs, shape (n, n_0).

    Returns:
        Shape (n, L + 1): column l - 1 is the part of dense layer l (the readout last).

    Example:
        >>> from lecturekit import path_counting, tangent
        >>> net = path_counting.relu_network(3, (8, 8))
        >>> p, x = net.init(jax.random.key(0)), jnp.ones((2, 3))
        >>> terms = path_counting.ntk_layer_terms(net, p, x)
        >>> full = tangent.empirical_ntk(net.apply, p, x)
        >>> terms.shape, bool(jnp.allclose(terms.sum(1), jnp.diag(full)))
        ((2, 3), True)
    """
    _check_scalar_net(net)
    bw = net.backward(params, x)
    cols = [(mw**2 * jnp.sum(h**2, axis=1) + mb**2) * jnp.sum(d[:, 0, :] ** 2, axis=1)
            for (mw, mb), h, d in zip(net.multipliers(), bw.inputs, bw.deltas)]
    return jnp.stack(cols, axis=1)


@partial(jax.jit, static_argnums=(0, 1, 3))
def _chunk_of(net, what, params, law, x):
    params = transform_weights(params, law)
    fn = input_gradients if what == "gradients" else ntk_layer_terms
    return jax.vmap(lambda p: fn(net, p, x))(params)


def _ensemble(net, what, key, count, x, law, chunk, dtype):
    _check_scalar_net(net)
    check_key(key)
    count = check_positive_int(count, name="count")
    chunk = check_positive_int(chunk, name="chunk")
    check_choice(law, LAWS, name="law")
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(f"x must have shape (n, {net.input_dim}), got {tuple(x.shape)}")
    try:
        dtype = jnp.dtype(jnp.float64 if dtype is None else dtype)
    except TypeError:
        raise TypeError(f"dtype must be a floating dtype such as jnp.float32, got {dtype!r}") from None
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"dtype must be a floating dtype such as jnp.float32, got {dtype}")
    x = x.astype(dtype)
    # the draws come from the sampler's precompiled host path (a concrete key): only the
    # vmapped forward/backward pass is compiled per architecture
    parts = [np.asarray(_chunk_of(net, what, net.init_many(jax.random.fold_in(key, c), chunk, dtype=dtype),
                                  law, x))
             for c in range(-(-count // chunk))]
    return np.concatenate(parts)[:count].astype(float)


def input_gradient_ensemble(net: _nets.MLP, key: jax.Array, count: int, x: ArrayLike, *,
                            law: str = "gaussian", chunk: int = 4096, dtype: Any = None) -> np.ndarray:
    """df/dx for ``count`` independent networks: Monte Carlo over initializations.

    Networks are drawn by ``net.init_many`` ``chunk`` at a time (network i is network
    i % chunk of ``init_many(fold_in(key, i // chunk), chunk)``), their weights mapped to
    ``law`` by :func:`transform_weights`, and :func:`input_gradients` is vmapped over them
    in one compiled program per chunk size.

    Args:
        net: a scalar-output ``nets.mlp`` network.
        key: a JAX PRNG key.
        count: number of networks.
        x: inputs, shape (n, n_0).
        law: weight law, "gaussian", "uniform" or "rademacher".
        chunk: networks per compiled batch (memory: chunk x num_params numbers).
        dtype: float dtype of the draws (default float64).

    Returns:
        NumPy float64 array (count, n, n_0).

    Example:
        >>> from lecturekit import path_counting
        >>> net = path_counting.relu_network(2, (6,))
        >>> g = path_counting.input_gradient_ensemble(
        ...     net, jax.random.key(0), 500, np.ones((1, 2)), chunk=250)
        >>> g.shape
        (500, 1, 2)
    """
    return _ensemble(net, "gradients", key, count, x, law, chunk, dtype)


def ntk_diagonal_ensemble(net: _nets.MLP, key: jax.Array, count: int, x: ArrayLike, *,
                          law: str = "gaussian", chunk: int = 4096, dtype: Any = None) -> np.ndarray:
    """Per-layer parts of Theta(x, x) for ``count`` independent networks.

    Drawn as in :func:`input_gradient_ensemble`, then :func:`ntk_layer_terms` vmapped;
    ``result.sum(-1)`` is the diagonal of the empirical tangent kernel of each network.

    Args:
        net: a scalar-output ``nets.mlp`` network.
        key: a JAX PRNG key.
        count: number of networks.
        x: inputs, shape (n, n_0).
        law: weight law, "gaussian", "uniform" or "rademacher".
        chunk: networks per compiled batch.
        dtype: float dtype of the draws (default float64).

    Returns:
        NumPy float64 array (count, n, L + 1).

    Example:
        >>> from lecturekit import path_counting
        >>> net = path_counting.relu_network(2, (6, 6))
        >>> t = path_counting.ntk_diagonal_ensemble(
        ...     net, jax.random.key(0), 300, np.ones((1, 2)), chunk=300)
        >>> t.shape
        (300, 1, 3)
    """
    return _ensemble(net, "ntk", key, count, x, law, chunk, dtype)


def relative_second_moment(samples: ArrayLike) -> float:
    """E[T^2] / E[T]^2 estimated by the plug-in ratio mean(T^2) / mean(T)^2.

    For the tangent kernel's diagonal this is 1 + Var / mean^2, the quantity that
    Hanin and Nica compare with exp(5 beta). Use :func:`lecturekit.stats.bootstrap` for
    its standard error.

    Args:
        samples: draws of T, shape (r,) with r >= 2 (a bootstrap resample may be passed
            as shape (..., r): the ratio is taken along the last axis).

    Returns:
        The ratio (a float, or an array of the leading shape).

    Example:
        >>> from lecturekit import path_counting
        >>> path_counting.relative_second_moment(np.array([1.0, 3.0]))
        1.25
    """
    s = np.asarray(as_float_array(samples, name="samples", min_ndim=1), dtype=float)
    if s.shape[-1] < 2:
        raise ValueError(f"samples needs at least 2 draws along its last axis, got shape {s.shape}")
    ratio = np.mean(s**2, axis=-1) / np.mean(s, axis=-1) ** 2
    return float(ratio) if np.ndim(ratio) == 0 else ratio


class TrainedChange(NamedTuple):
    """What :func:`trained_kernel_change` returns, one entry per network.

    Attributes:
        kernel_change: ||Theta_T - Theta_0||_F / ||Theta_0||_F on the training inputs.
        final_loss: the square loss (1/2n) sum (f - y)^2 after training.
        initial_loss: the loss at initialization.

    Example:
        >>> from lecturekit import path_counting
        >>> out = path_counting.TrainedChange(np.zeros(2), np.ones(2), np.ones(2))
        >>> out.kernel_change.shape
        (2,)
    """

    kernel_change: np.ndarray
    final_loss: np.ndarray
    initial_loss: np.ndarray


@partial(jax.jit, static_argnums=(0, 5))
def _train_many(net, params, x, y, lr, steps):
    observe = _training.ntk_observer(net.apply, x)

    def one(p):
        loss = lambda q: _training.square_loss(net.apply(q, x), y)  # noqa: E731
        run = _training.descend(loss, p, lr=lr, steps=steps, observe=observe)
        change = _training.relative_kernel_change(run.observed[-1], run.observed[0])
        return change, run.losses[-1], run.losses[0]

    return jax.vmap(one)(params)


def trained_kernel_change(net: _nets.MLP, params: Any, x: ArrayLike, y: ArrayLike, *,
                          lr: float, steps: int) -> TrainedChange:
    """Train a batch of networks by gradient descent and measure how far each kernel moved.

    Every network (leading axis of ``params``, e.g. from ``net.init_many``) runs
    :func:`lecturekit.training.descend` on the square loss (1/2n) sum_i (f(x_i) - y_i)^2;
    its empirical tangent kernel on x is recorded before and after, and the relative change
    is :func:`lecturekit.training.relative_kernel_change`. One compiled program, vmapped
    over the networks.

    Args:
        net: a scalar-output ``nets.mlp`` network.
        params: parameters with a leading network axis.
        x: training inputs, shape (n, n_0).
        y: training targets, shape (n,).
        lr: learning rate, > 0.
        steps: number of gradient-descent steps, >= 1.

    Returns:
        A :class:`TrainedChange` of NumPy arrays, shape (count,) each.

    Example:
        >>> from lecturekit import path_counting
        >>> net = path_counting.relu_network(2, (16, 16))
        >>> many = net.init_many(jax.random.key(0), 3)
        >>> x, y = np.eye(2), np.array([1.0, -1.0])
        >>> out = path_counting.trained_kernel_change(net, many, x, y, lr=0.2,
        ...                                           steps=50)
        >>> out.kernel_change.shape, bool(np.all(out.final_loss < out.initial_loss))
        ((3,), True)
    """
    _check_scalar_net(net)
    _check_layers(params, net, batched=True)
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    if x.shape[1] != net.input_dim or y.shape[0] != x.shape[0]:
        raise ValueError(f"x must have shape (n, {net.input_dim}) and y shape (n,), got "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    out = _train_many(net, params, x, y, lr, steps)
    return TrainedChange(*(np.asarray(v, dtype=float) for v in out))
