"""Output heads of multi-output networks and the tangent kernel of the headed model.

Conventions. ``net`` is a :func:`lecturekit.nets.mlp` network with k outputs and no
output activation (the pre-head f(x) in R^k). A *head* g maps f(x) to the model's
output: ``"linear"`` (g = f), ``"softmax"`` (class probabilities) or any activation name
of
:mod:`lecturekit.activations` applied elementwise (``"swish"``, ``"softplus"``, ...).
The tangent kernel of g o f on inputs x_1..x_n is the (n k) x (n k) matrix

    K[(i, a), (j, b)] = < d g_a(f(x_i)) / d theta , d g_b(f(x_j)) / d theta >,

rows ordered example-major ((i, a) -> i k + a). It is computed layer by layer from one
backward pass of the network (:meth:`lecturekit.nets.MLP.backward`) and the network's
per-layer formula (:func:`lecturekit.nets.layer_ntk_term`),
K = sum_l (mW_l^2 <h_l(x_i), h_l(x_j)> + mb_l^2) <delta_l^a(x_i), delta_l^b(x_j)>, with
h_l the input of dense layer l and delta_l^a = d g_a / d z_l = (dg_a/df) d f / d z_l
(never forming the Jacobian).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from . import activations as _act
from . import nets as _nets
from ._validation import as_float_array

__all__ = ["head_fn", "model", "head_ntk"]


def head_fn(head: str) -> Callable[[jax.Array], jax.Array]:
    """The map g: R^k -> R^k of a head name, applied to one example's pre-head output.

    Args:
        head: ``"linear"``, ``"softmax"`` or an activation name of
            :mod:`lecturekit.activations` (applied elementwise).

    Returns:
        A function of a vector of shape (k,).

    Example:
        >>> from lecturekit import heads
        >>> heads.head_fn("softmax")(jnp.zeros(4)).tolist()
        [0.25, 0.25, 0.25, 0.25]
    """
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
            f"unknown head {head!r}; expected 'linear', 'softmax' or an activation "
            "name "
            f"({', '.join(_act.NAMES)})"
        ) from None


def model(
    net: _nets.MLP, head: str = "linear"
) -> Callable[[Any, jax.Array], jax.Array]:
    """The model (params, x) -> g(f(x)) of a network and a head name.

    Args:
        net: a :func:`lecturekit.nets.mlp` network without output activation.
        head: see :func:`head_fn`.

    Returns:
        A function of (params, x), x of shape (n, d), with outputs of shape (n, k) (k =
        1 included).

    Example:
        >>> from lecturekit import heads, nets
        >>> net = nets.mlp((2, 8, 3), "tanh")
        >>> f = heads.model(net, "softmax")
        >>> out = f(net.init(jax.random.key(0)), jnp.ones((5, 2)))
        >>> out.shape, bool(jnp.allclose(out.sum(axis=1), 1.0))
        ((5, 3), True)
    """
    net, g = _nets.check_mlp(net, output_activation=False), head_fn(head)

    def apply(params, x):
        out = net.apply(params, x)
        out = out[:, None] if out.ndim == 1 else out
        return jax.vmap(g)(out)

    return apply


def head_ntk(
    net: _nets.MLP, params: Any, x: ArrayLike, head: str = "linear"
) -> jax.Array:
    """Empirical tangent kernel of the model g o f, shape (n k, n k) (module docstring).

    Traceable (it may be called inside ``jit``/``vmap``, e.g. as a training observer).

    Args:
        net: a :func:`lecturekit.nets.mlp` network with k outputs, no output activation.
        params: its parameters.
        x: inputs, shape (n, d).
        head: see :func:`head_fn`.

    Returns:
        The kernel, rows and columns ordered example-major ((i, a) -> i k + a).

    Example:
        >>> from lecturekit import heads, nets
        >>> net = nets.mlp((2, 16, 3), "tanh")
        >>> k = heads.head_ntk(net, net.init(jax.random.key(0)), jnp.ones((4, 2)),
        ...                    "softmax")
        >>> k.shape, bool(jnp.allclose(k, k.T))
        ((12, 12), True)
    """
    net = _nets.check_mlp(net, output_activation=False)
    net.check_params(params)
    g = head_fn(head)
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(
            f"x must have {net.input_dim} columns, got shape {tuple(x.shape)}"
        )
    back = net.backward(params, x)
    n, k = back.output.reshape(x.shape[0], -1).shape
    pre_head = back.output.reshape(n, k)
    jac = jax.vmap(jax.jacfwd(g))(pre_head)  # (n, k_out, k): d g_a / d f_k
    kernel = 0.0
    for (mw, mb), h, delta in zip(net.multipliers(), back.inputs, back.deltas):
        d = jnp.einsum("nak,nkw->naw", jac, delta)  # d g_a / d z_l
        kernel = kernel + _nets.layer_ntk_term(mw, mb, h, d, h, d)
    return kernel.reshape(n * k, n * k)
