"""Path counting for bias-free ReLU networks: finite-width moments of the tangent
kernel.

Setting (Chapter 9). A bias-free ReLU network with widths (n_0, n_1, ..., n_L, 1) in the
NTK parameterization, every layer scaled by sqrt(2 / fan-in), readout included:

    z^(l) = sqrt(2 / n_{l-1}) h^(l-1) W^(l),   h^(l) = ReLU(z^(l)),   h^(0) = x,

with W^(l) of N(0, 1) entries and the output f(x) = z^(L+1), i.e.
``nets.mlp((n_0, ..., n_L, 1), "relu", w_std=sqrt(2), b_std=0, out_w_std=sqrt(2))``
(:func:`relu_network`). A *path* gamma = (p, i_1, ..., i_L, q) picks one unit per layer;
its weight is W_gamma = prod_{l=1}^{L+1} sqrt(2 / n_{l-1}) W^(l)[i_{l-1}, i_l] and its
indicator xi_gamma(x) = prod_{l=1}^{L} 1{z^(l)_{i_l}(x) > 0} (JAX's relu'(0) = 0). Then

    f_q(x) = sum_p x_p sum_{gamma from p to q} W_gamma xi_gamma(x)     (path expansion),

and the input-output derivative is df_q / dx_p = sum_gamma W_gamma xi_gamma. For
Gaussian weights (P2/P3/P5 of the errata): E[(df/dx_p)^2] = 2 / n_0 and
E[(df/dx_p)^4] = (12 / n_0^2) prod_k (1 + 5 / n_k); the tangent kernel with respect to
the N(0, 1) weights has E[Theta(x, x)] = 2 (L + 1) ||x||^2 / n_0, each of the L + 1
layers contributing 2 ||x||^2 / n_0; beta = sum_k 1 / n_k over the hidden widths.

Ensembles are drawn by :meth:`lecturekit.nets.MLP.init_many` (the one sampler),
``chunk`` networks at a time: network ``i`` is network ``i % chunk`` of
``init_many(jax.random.fold_in(key, i // chunk), chunk)``. Other weight laws with unit
variance are transforms of those normals (:func:`transform_weights`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import nets as _nets
from . import sampling as _sampling
from . import stats as _stats
from . import training as _training
from ._validation import (
    as_float_array,
    as_host_float_array,
    check_choice,
    check_key,
    check_params_pytree,
    check_positive_int,
    check_real,
)

__all__ = [
    "relu_network",
    "beta",
    "derivative_moments",
    "ntk_diagonal_mean",
    "enumerate_paths",
    "path_expansion",
    "input_gradients",
    "transform_weights",
    "ntk_layer_terms",
    "input_gradient_ensemble",
    "ntk_diagonal_ensemble",
    "relative_second_moment",
    "DerivativeMoments",
    "TrainedChange",
    "trained_kernel_change",
    "SignCensus",
    "sign_census",
    "derivative_law_sample",
    "ratio_estimate",
    "layer_factor_ratio",
    "layer_product_moment",
    "part_ratio_stderr",
]

LAWS = ("gaussian", "uniform", "rademacher")
MAX_PATHS = 1_000_000


def _check_scalar_net(net: Any) -> None:
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a nets.mlp network, got {type(net).__name__}")
    if net.output_dim != 1:
        raise ValueError(f"net must have a scalar output, got {net.output_dim} outputs")


def _check_layers(
    params: Any, net: _nets.MLP | None = None, *, batched: bool = False
) -> None:
    """A list of {"W", "b"} dicts with floating, finite leaves (shapes of ``net`` if
    given).
    """
    if not isinstance(params, (list, tuple)) or not params:
        raise ValueError("params must be a non-empty list of {'W', 'b'} layer dicts")
    for i, layer in enumerate(params):
        if not isinstance(layer, dict) or set(layer) != {"W", "b"}:
            raise ValueError(f"params[{i}] must be a dict with keys 'W' and 'b'")
    check_params_pytree(list(params))
    if net is None:
        return
    if len(params) != net.depth + 1:
        raise ValueError(
            f"params must have {net.depth + 1} layers for this network, got "
            f"{len(params)}"
        )
    lead = np.shape(params[0]["W"])[:1] if batched else ()
    if batched and (len(lead) != 1 or lead[0] < 1):
        raise ValueError(
            "params must carry one leading network axis (from net.init_many)"
        )
    for i, (layer, n_in, n_out) in enumerate(
        zip(params, net.widths[:-1], net.widths[1:])
    ):
        if np.shape(layer["W"]) != lead + (n_in, n_out) or np.shape(
            layer["b"]
        ) != lead + (n_out,):
            raise ValueError(
                f"params[{i}] must have W of shape {lead + (n_in, n_out)} and b of "
                "shape "
                f"{lead + (n_out,)}, got {np.shape(layer['W'])} and "
                f"{np.shape(layer['b'])}"
            )


def _check_hidden(hidden: Any) -> tuple[int, ...]:
    if isinstance(hidden, (str, bytes, dict)) or not hasattr(hidden, "__len__"):
        raise TypeError(
            "hidden must be a sequence of positive integers (n_1, ..., n_L), got "
            f"{hidden!r}"
        )
    if len(hidden) < 1:
        raise ValueError("hidden must list at least one hidden width")
    return tuple(
        check_positive_int(n, name=f"hidden[{i}]") for i, n in enumerate(hidden)
    )


def relu_network(n0: int, hidden: Sequence[int]) -> _nets.MLP:
    """The chapter's network: bias-free ReLU, every layer scaled by sqrt(2 / fan-in).

    It is ``nets.mlp((n0, *hidden, 1), "relu", w_std=sqrt(2), b_std=0,
    out_w_std=sqrt(2), out_b_std=0)`` in the NTK parameterization: the biases exist as
    parameters but have multiplier 0, so they change neither the output nor the tangent
    kernel.

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
    return _nets.mlp(
        (n0, *hidden, 1),
        "relu",
        w_std=2**0.5,
        b_std=0.0,
        out_w_std=2**0.5,
        out_b_std=0.0,
    )


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
    return DerivativeMoments(
        2.0 / n0, 12.0 / n0**2 * prod, 12.0 / n0**2 * math.exp(5.0 * beta(hidden))
    )


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
        raise ValueError(
            "net must be bias-free: parameterization 'ntk' with b_std = out_b_std = 0"
        )


def enumerate_paths(widths: Sequence[int]) -> np.ndarray:
    """Every path (p, i_1, ..., i_L, q) through a network with widths (n_0, ..., n_L,
    k).

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
        raise TypeError(
            f"widths must be a sequence of positive integers, got {widths!r}"
        )
    if len(widths) < 3:
        raise ValueError(
            "widths must list the input, >= 1 hidden and the output width, got "
            f"{widths!r}"
        )
    widths = tuple(
        check_positive_int(w, name=f"widths[{i}]") for i, w in enumerate(widths)
    )
    if math.prod(widths) > MAX_PATHS:
        raise ValueError(
            f"widths {widths} have {math.prod(widths)} paths; at most {MAX_PATHS} are "
            "enumerated"
        )
    return np.array(
        list(itertools.product(*(range(w) for w in widths))), dtype=np.int64
    )


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
    for i, (layer, (mw, _)) in enumerate(zip(params, net.multipliers())):
        w = np.asarray(layer["W"], dtype=float)
        weight = weight * mw * w[paths[:, i], paths[:, i + 1]]
    active = np.ones((x.shape[0], len(paths)))
    for i in range(net.depth):
        active = active * (np.asarray(zs[i])[:, paths[:, i + 1]] > 0)
    terms = x[:, paths[:, 0]] * weight * active  # (n, paths)
    out = np.zeros((x.shape[0], net.output_dim))
    for q in range(net.output_dim):
        out[:, q] = terms[:, paths[:, -1] == q].sum(axis=1)
    return out[:, 0] if net.output_dim == 1 else out


def input_gradients(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """df/dx of a scalar-output network, from its one backward pass.

    df/dx = mW_1 W^(1) delta_1, with delta_1 = df/dz^(1)
    from :meth:`lecturekit.nets.MLP.backward` and mW_1 the first layer's multiplier.
    Traceable (vmap it over networks).

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
        fn = lambda g: 3**0.5 * (2 * jax.scipy.stats.norm.cdf(g) - 1)
    return [{"W": fn(layer["W"]), "b": layer["b"]} for layer in params]


def ntk_layer_terms(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """The per-layer parts of Theta(x, x) = sum_l (mW_l^2 ||h_{l-1}||^2 + mb_l^2)
    ||delta_l||^2.

    The tangent kernel (with respect to every parameter of the network) on the diagonal,
    split by dense layer (the network's own terms,
    :meth:`lecturekit.nets.MLP.ntk_terms` with ``diagonal=True``); it sums to
    ``tangent.empirical_ntk``'s diagonal. Traceable.

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
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(
            f"x must have {net.input_dim} columns, got shape {tuple(x.shape)}"
        )
    return jnp.stack(net.ntk_terms(params, x, diagonal=True), axis=1)


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
        raise ValueError(
            f"x must have shape (n, {net.input_dim}), got {tuple(x.shape)}"
        )
    try:
        dtype = jnp.dtype(jnp.float64 if dtype is None else dtype)
    except TypeError:
        raise TypeError(
            f"dtype must be a floating dtype such as jnp.float32, got {dtype!r}"
        ) from None
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(
            f"dtype must be a floating dtype such as jnp.float32, got {dtype}"
        )
    x = x.astype(dtype)
    # the draws come from the sampler's precompiled host path (a concrete key): only the
    # vmapped forward/backward pass is compiled per architecture
    parts = [
        np.asarray(
            _chunk_of(
                net,
                what,
                net.init_many(jax.random.fold_in(key, c), chunk, dtype=dtype),
                law,
                x,
            )
        )
        for c in range(-(-count // chunk))
    ]
    return np.concatenate(parts)[:count].astype(float)


def input_gradient_ensemble(
    net: _nets.MLP,
    key: jax.Array,
    count: int,
    x: ArrayLike,
    *,
    law: str = "gaussian",
    chunk: int = 4096,
    dtype: Any = None,
) -> np.ndarray:
    """df/dx for ``count`` independent networks: Monte Carlo over initializations.

    Networks are drawn by ``net.init_many`` ``chunk`` at a time (network i is network
    i % chunk of ``init_many(fold_in(key, i // chunk), chunk)``), their weights mapped
    to ``law`` by :func:`transform_weights`, and :func:`input_gradients` is vmapped over
    them in one compiled program per chunk size.

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


def ntk_diagonal_ensemble(
    net: _nets.MLP,
    key: jax.Array,
    count: int,
    x: ArrayLike,
    *,
    law: str = "gaussian",
    chunk: int = 4096,
    dtype: Any = None,
) -> np.ndarray:
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
        raise ValueError(
            f"samples needs at least 2 draws along its last axis, got shape {s.shape}"
        )
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


def _train_one(net, x, y, lr, steps, params):
    """training.gradient_descent of one network, its tangent kernel on x observed at the
    start and the end: (kernel change, final loss, initial loss)."""
    observe = _training.KernelObserver(net.apply, x)
    run = _training.gradient_descent(
        net.apply, params, lr, steps, x=x, y=y, observe=observe
    )
    change = _training.relative_kernel_change(run.observed[-1], run.observed[0])
    return change, run.losses[-1], run.losses[0]


def trained_kernel_change(
    net: _nets.MLP, params: Any, x: ArrayLike, y: ArrayLike, *, lr: float, steps: int
) -> TrainedChange:
    """Train a batch of networks by gradient descent and measure how far each kernel
    moved.

    Every network (leading axis of ``params``, e.g. from ``net.init_many``) runs
    :func:`lecturekit.training.gradient_descent` on the square loss
    (1/2n) sum_i (f(x_i) - y_i)^2;
    its empirical tangent kernel on x is recorded before and after, and the relative
    change is :func:`lecturekit.training.relative_kernel_change`. One compiled program,
    vmapped over the networks.

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
        raise ValueError(
            f"x must have shape (n, {net.input_dim}) and y shape (n,), got "
            f"{tuple(x.shape)} and {tuple(y.shape)}"
        )
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    # vmap of the compiled entry: its one program, batched over the networks
    out = jax.vmap(partial(_train_one, net, x, y, lr, steps))(params)
    return TrainedChange(*(np.asarray(v, dtype=float) for v in out))


class SignCensus(NamedTuple):
    """What :func:`sign_census` returns: exact activation patterns of integer-weight
    networks.

    Attributes:
        active: int array (count, L), the number K_l of active units of each hidden
            layer.
        ties: int array (count, L), units whose pre-activation is exactly 0 although the
            layer below has an active unit (a dead layer below makes every
            pre-activation 0; those are not counted).
        flat_ties: int array (count, L), the ties whose pre-activation has zero
            derivative in every input coordinate (its integer coefficient row is 0).
        coefficients: int array (count, n_0): the output is f(x) = scale * coefficients
            . x with the pattern frozen, so df/dx_p = scale * coefficients[:, p].
        scale: the product of the layer scales, prod_{l=1}^{L+1} sqrt(2 / n_{l-1}).

    Example:
        >>> from lecturekit import path_counting
        >>> c = path_counting.SignCensus(*(np.zeros((1, 1), int),) * 4, 1.0)
        >>> c.scale
        1.0
    """

    active: np.ndarray
    ties: np.ndarray
    flat_ties: np.ndarray
    coefficients: np.ndarray
    scale: float


def sign_census(signs: Sequence[ArrayLike], x: ArrayLike) -> SignCensus:
    """Activation patterns of bias-free ReLU networks with integer weights, in exact
    arithmetic.

    The networks of :func:`relu_network` with weights ``signs`` (integers, e.g. +-1 for
    Rademacher weights) before the scales sqrt(2 / fan-in). Every pre-activation is
    z = scale_l * (C . x) with an integer row C (the path sums from each input
    coordinate with the pattern frozen); the rows are carried exactly (float64 holds
    these integers exactly), and a unit is active when C . x > 0, tied when C . x == 0.
    For a generic input (coordinates without an integer relation among them) a tie
    happens only when C = 0: the tied unit's pre-activation has zero derivative in every
    input coordinate. An input with integer entries that cancel, such as (3, -4, 5, -6),
    has ties with C != 0 (C . x is then computed exactly too).

    Args:
        signs: one integer array per dense layer, shapes (count, n_{l-1}, n_l) in the
            library's orientation (row = input unit), the readout (count, n_L, 1) last.
        x: one input, shape (n_0,).

    Returns:
        A :class:`SignCensus`.

    Raises:
        ValueError: if the shapes do not chain, the readout is not (count, n_L, 1), the
            entries are not integers, or x is not a finite vector of length n_0.

    Example:
        >>> from lecturekit import path_counting
        >>> s = [np.array([[[1, -1], [1, 1]]]), np.array([[[1], [1]]])]
        >>> c = path_counting.sign_census(s, np.array([1.0, 1.0]))
        >>> c.active.tolist(), c.ties.tolist(), c.coefficients.tolist()
        ([[1]], [[1]], [[1, 1]])
    """
    if isinstance(signs, (str, bytes, dict)) or not hasattr(signs, "__len__"):
        raise TypeError(
            "signs must be a list of integer arrays (count, n_in, n_out), readout "
            "last; "
            f"got {type(signs).__name__}"
        )
    if len(signs) < 2:
        raise ValueError(
            "signs must list at least two integer arrays (count, n_in, n_out), readout "
            "last"
        )
    mats = [as_host_float_array(s, name=f"signs[{i}]") for i, s in enumerate(signs)]
    for i, m in enumerate(mats):
        if m.ndim != 3:
            raise ValueError(
                f"signs[{i}] must have shape (count, n_in, n_out), got {m.shape}"
            )
        if not np.array_equal(m, np.round(m)):
            raise ValueError(
                f"signs[{i}] must hold integers (e.g. +-1), got non-integer entries"
            )
    count = mats[0].shape[0]
    for i, (a, b) in enumerate(zip(mats[:-1], mats[1:])):
        if b.shape[0] != count or b.shape[1] != a.shape[2]:
            raise ValueError(
                f"signs[{i + 1}] must have shape ({count}, {a.shape[2]}, n_out) to "
                "follow "
                f"signs[{i}] of shape {a.shape}, got {b.shape}"
            )
    if mats[-1].shape[2] != 1:
        raise ValueError(
            "the readout signs[-1] must have shape (count, n_L, 1), got "
            f"{mats[-1].shape}"
        )
    n0 = mats[0].shape[1]
    x = np.asarray(as_float_array(x, name="x", ndim=1), dtype=float)
    if x.shape != (n0,):
        raise ValueError(f"x must have shape ({n0},) to match signs[0], got {x.shape}")
    # rows: units, columns: input coordinates
    coef = np.broadcast_to(np.eye(n0), (count, n0, n0))
    active, ties, flat = [], [], []
    for m in mats[:-1]:
        alive = np.any(coef != 0, axis=(1, 2))
        # (count, n_l, n0), integers
        pre = np.matmul(np.swapaxes(m.astype(float), 1, 2), coef)
        z = pre @ x
        tie = (z == 0) & alive[:, None]
        active.append((z > 0).sum(1))
        ties.append(tie.sum(1))
        flat.append((tie & np.all(pre == 0, axis=2)).sum(1))
        coef = pre * (z > 0)[..., None]
    out = np.matmul(np.swapaxes(mats[-1].astype(float), 1, 2), coef)[:, 0, :]
    scale = math.prod(math.sqrt(2.0 / m.shape[1]) for m in mats)
    stack = lambda v: np.stack(v, axis=1).astype(np.int64)
    return SignCensus(
        stack(active), stack(ties), stack(flat), np.rint(out).astype(np.int64), scale
    )


def derivative_law_sample(
    key: jax.Array, n0: int, hidden: Sequence[int], count: int
) -> np.ndarray:
    """Draws of df/dx_p from its exact law for Gaussian weights, without building
    networks.

    The law (Chapter 9): df/dx_p = sqrt(2 / n_0) g prod_k sqrt((2 / n_k) chi^2_{K_k})
    with independent g ~ N(0, 1), K_k ~ Binomial(n_k, 1/2) and chi-squares. Each hidden
    factor is drawn as (2 / n_k) sum_j relu(g_kj)^2 over n_k fresh normals, which has
    exactly that law (the number of positive g_kj is Binomial(n_k, 1/2), and a positive
    normal squared is chi^2_1). All normals come
    from :func:`lecturekit.sampling.standard_normal`.

    Args:
        key: a JAX PRNG key.
        n0: input dimension.
        hidden: the hidden widths (n_1, ..., n_L).
        count: number of draws.

    Returns:
        A float64 NumPy array of shape (count,).

    Example:
        >>> from lecturekit import path_counting
        >>> d = path_counting.derivative_law_sample(jax.random.key(0), 4, (12, 12),
        ...                                         200_000)
        >>> bool(abs(np.mean(d**2) - 0.5) < 0.01)
        True
    """
    check_key(key)
    n0 = check_positive_int(n0, name="n0")
    hidden = _check_hidden(hidden)
    count = check_positive_int(count, name="count")
    g = np.asarray(
        _sampling.standard_normal(key, (count, 1 + sum(hidden)), jnp.float64)
    )
    out = math.sqrt(2.0 / n0) * g[:, 0]
    start = 1
    for n in hidden:
        out = out * np.sqrt(
            2.0 / n * np.sum(np.maximum(g[:, start : start + n], 0.0) ** 2, axis=1)
        )
        start += n
    return out


def ratio_estimate(samples: ArrayLike, *, batches: int = 20) -> _stats.Estimate:
    """E[T^2] / E[T]^2 with a standard error from independent batches (grouped
    jackknife).

    The value is :func:`relative_second_moment` of all the draws. The draws are split
    into ``batches`` consecutive blocks of equal size (independent, since every draw
    is), the ratio is recomputed with each block left out, and the standard error is the
    jackknife sqrt((B - 1)/B sum_b (R_(-b) - mean)^2). For a smooth statistic this
    agrees with the delta method; it is cheaper than the bootstrap and uses no random
    numbers.

    Args:
        samples: draws of T, shape (r,), with r >= 2 * batches.
        batches: number of blocks B >= 2 (the last r mod B draws join no block but count
            in the value).

    Returns:
        A :class:`lecturekit.stats.Estimate` (value, stderr).

    Raises:
        ValueError: if there are fewer than 2 draws per block.

    Example:
        >>> from lecturekit import path_counting
        >>> g = sampling.standard_normal(jax.random.key(0), (40_000,))
        >>> t = np.abs(np.asarray(g))
        >>> est = path_counting.ratio_estimate(t)       # E[g^2] / E[|g|]^2 = pi / 2
        >>> bool(abs(est.value - np.pi / 2) < 4 * est.stderr), round(est.stderr, 3)
        (True, 0.004)
    """
    s = np.asarray(as_float_array(samples, name="samples", ndim=1), dtype=float)
    batches = check_positive_int(batches, name="batches", minimum=2)
    size = s.size // batches
    if size < 2:
        raise ValueError(
            f"samples needs at least 2 draws per batch ({2 * batches}), got {s.size}"
        )
    blocks = s[: batches * size].reshape(batches, size)
    s1, s2 = blocks.sum(1), (blocks**2).sum(1)
    left1, left2 = s1.sum() - s1, s2.sum() - s2
    n_left = (batches - 1) * size
    loo = (left2 / n_left) / (left1 / n_left) ** 2
    stderr = math.sqrt((batches - 1) / batches * np.sum((loo - loo.mean()) ** 2))
    return _stats.Estimate(relative_second_moment(s), float(stderr))


def layer_factor_ratio(hidden: Sequence[int]) -> float:
    """E[Theta^2] / E[Theta]^2 in the layer-factor model of the tangent kernel's
    diagonal.

    Theta(x, x) is the sum of the L + 1 layers' parts Theta_k, and Theta_k / E[Theta_k]
    is the product of a forward factor F_l for every hidden layer l < k and a backward
    factor B_l for every l >= k. The model treats the pairs (F_l, B_l) of different
    layers as independent, with E[F_l^2] = E[B_l^2] = 1 + 5/n_l and E[F_l B_l] = 1 +
    1/n_l (both factors (2/n_l) chi^2 over the same K_l ~ Binomial(n_l, 1/2) active
    units). Then

        E[Theta^2] / E[Theta]^2 = (L + 1)^-2 sum_{k, k'} prod_l m_l(k, k'),

    m_l = 1 + 5/n_l if layer l is on the same side of k and k' (both forward or both
    backward), 1 + 1/n_l if it lies between them. Every diagonal term is
    prod_l (1 + 5/n_l) <= exp(5 beta). The model is exact for one hidden layer
    (1 + 3/n); from two hidden layers on it leaves out the correlation of forward and
    backward factors through the weights they share (Chapter 9 computes the missing
    term for two layers: it is O(1/(n_1 n_2))).

    Args:
        hidden: the hidden widths (n_1, ..., n_L).

    Returns:
        The model's ratio, a float.

    Example:
        >>> from lecturekit import path_counting
        >>> path_counting.layer_factor_ratio((16,))          # 1 + 3/16
        1.1875
        >>> round(path_counting.layer_factor_ratio((8, 8)), 4)
        1.974
    """
    n = np.asarray(_check_hidden(hidden), dtype=float)
    L = n.size
    big, small = np.log1p(5.0 / n), np.log1p(1.0 / n)
    # prefix sums over layers l = 1..L (index l - 1): layers below a, between a and b,
    # from b on
    cb = np.concatenate([[0.0], np.cumsum(big)])
    cs = np.concatenate([[0.0], np.cumsum(small)])
    k = np.arange(1, L + 2)
    a, b = np.minimum.outer(k, k), np.maximum.outer(k, k)
    # forward for both: l < a; between: a <= l < b; backward for both: l >= b
    log_m = cb[a - 1] + (cs[b - 1] - cs[a - 1]) + (cb[L] - cb[b - 1])
    return float(np.exp(log_m).sum() / (L + 1) ** 2)


def layer_product_moment(hidden: Sequence[int], order: int) -> float:
    """E[Y^m] for Y = prod_k (2 / n_k) chi^2_{K_k}, K_k ~ Binomial(n_k, 1/2), exactly.

    Y is the hidden layers' factor of the derivative law of Chapter 9 and, normalized by
    its mean 1, the law of one layer's part Theta_k / E[Theta_k] of the tangent kernel's
    diagonal (Gaussian weights). Given K, E[(chi^2_K)^m] = K (K + 2) ... (K + 2m - 2);
    the binomial average is summed exactly over K = 0..n. Order 2 gives prod_k (1 + 5 /
    n_k).

    Args:
        hidden: the hidden widths (n_1, ..., n_L).
        order: the moment m >= 1.

    Returns:
        E[Y^m], a float.

    Example:
        >>> from lecturekit import path_counting
        >>> path_counting.layer_product_moment((8, 8), 2), (1 + 5 / 8) ** 2
        (2.640625, 2.640625)
    """
    hidden = _check_hidden(hidden)
    order = check_positive_int(order, name="order")
    out = 1.0
    for n in hidden:
        k = np.arange(n + 1)
        pmf = np.array([math.comb(n, int(j)) for j in k], dtype=float) / 2.0**n
        rising = np.prod([k + 2.0 * j for j in range(order)], axis=0)
        out *= float(pmf @ rising) * (2.0 / n) ** order
    return out


def part_ratio_stderr(hidden: Sequence[int], count: int) -> float:
    """Standard error of the plug-in ratio mean(T^2) / mean(T)^2 of ``count`` draws of
    one part.

    T = Theta_k / E[Theta_k], one layer's part of the tangent kernel's diagonal, has the
    law of Y in :func:`layer_product_moment` (E[T] = 1). The delta method gives the
    variance (mu_4 - mu_2^2 + 4 mu_2^2 (mu_2 - 1) - 4 mu_2 (mu_3 - mu_2)) / count with
    the exact moments mu_m = E[T^m]. Use it where the sample's own error (bootstrap,
    jackknife) is too small because the fourth moment is carried by draws rarer than the
    sample resolves.

    Args:
        hidden: the hidden widths (n_1, ..., n_L).
        count: the number of networks.

    Returns:
        The standard error, a float.

    Example:
        >>> from lecturekit import path_counting
        >>> round(path_counting.part_ratio_stderr((8, 8), 40_000), 4)
        0.0264
    """
    count = check_positive_int(count, name="count")
    m2, m3, m4 = (layer_product_moment(hidden, m) for m in (2, 3, 4))
    return math.sqrt((m4 - m2**2 + 4 * m2**2 * (m2 - 1) - 4 * m2 * (m3 - m2)) / count)
