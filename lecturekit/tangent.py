"""Empirical neural tangent kernels and the linearized model.

The empirical NTK of a model f(params, x) is

    Theta(x, x') = sum over all parameters theta_p of  df(x)/dtheta_p  df(x')/dtheta_p,

the Gram matrix of the feature map x -> grad_theta f(x; theta). No normalization is
applied: with the NTK parameterization the 1/sqrt(fan_in) factors are inside f, so the
kernel has a finite limit as the widths grow.

Two methods:

* networks built by :func:`lecturekit.nets.mlp` use the per-layer formula
  Theta = sum_l (mW_l^2 <h_l(x), h_l(x')> + mb_l^2) <delta_l(x), delta_l(x')>, where h_l is
  the input of dense layer l, delta_l = df/dz_l the backpropagated error at its
  pre-activation and (mW_l, mb_l) the layer's forward multipliers. It never forms the
  Jacobian: cost O(n1 n2 width) per layer instead of O((n1 + n2) #params) memory;
* any other function falls back to contracting its Jacobian (``jax.jacrev``), which is
  exact but needs memory proportional to (number of inputs) x (number of parameters).

:func:`vector_product_ntk` is the Jacobian-free method for any model: column j of the kernel
is J(x1) (J(x2)^T e_j), one gradient (a VJP) at x2_j pushed forward by one JVP through the
batch x1, ``chunk`` columns at a time, so memory is O(chunk x #params) whatever n1 and n2.
Appendix "Computing kernels and Hessians fast" compares the three.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from . import nets as _nets
from ._validation import check_inputs_pair, check_model, check_params_pytree, check_positive_int

Model = Callable[[Any, jax.Array], jax.Array]


def structured_network(f: Model) -> _nets.MLP | None:
    """The :class:`~lecturekit.nets.MLP` behind ``f`` if ``f`` is its bound ``apply``, else None."""
    owner = getattr(f, "__self__", None)
    if isinstance(owner, _nets.MLP) and getattr(f, "__func__", None) is _nets.MLP.apply:
        return owner
    return None


def empirical_ntk(f: Model, params: Any, x1: ArrayLike, x2: ArrayLike | None = None) -> jax.Array:
    """Empirical NTK, (n1, n2): Result[i, j] = <df(x1_i)/dtheta, df(x2_j)/dtheta>.

    ``f(params, x)`` maps a batch (n, d) to (n,) (one scalar output per example). Uses the
    per-layer formula for ``net.apply`` of a ``nets.mlp`` network, else the Jacobian.
    """
    check_model(f)
    a, b = check_inputs_pair(x1, x2)
    same = x2 is None
    net = structured_network(f)
    if net is not None:
        net.check_params(params)
        if net.output_dim != 1:
            raise ValueError(
                f"empirical_ntk needs a scalar-output network, this one has {net.output_dim} outputs; "
                "take one output at a time, e.g. lambda p, x: net.apply(p, x)[:, j]"
            )
        if a.shape[1] != net.input_dim:
            raise ValueError(
                f"x1: inputs must have {net.input_dim} columns (the network's input dimension), "
                f"got shape {tuple(a.shape)}"
            )
        return _structured_ntk(net, params, a, a if same else b)
    return jacobian_ntk(f, params, a, None if same else b)


def jacobian_ntk(f: Model, params: Any, x1: jax.Array, x2: jax.Array | None = None) -> jax.Array:
    """Reference method: J(x1) J(x2)^T with the Jacobians materialized leaf by leaf."""
    a, b = _check_generic_model(f, params, x1, x2)
    x1, x2 = a, (None if x2 is None else b)
    j1 = jax.jacrev(f)(params, x1)
    j2 = j1 if x2 is None else jax.jacrev(f)(params, x2)
    terms = jax.tree_util.tree_map(
        lambda u, v: u.reshape(u.shape[0], -1) @ v.reshape(v.shape[0], -1).T, j1, j2
    )
    return sum(jax.tree_util.tree_leaves(terms))


def vector_product_ntk(
    f: Model, params: Any, x1: ArrayLike, x2: ArrayLike | None = None, *, chunk: int = 16
) -> jax.Array:
    """Jacobian-free empirical NTK of any model, (n1, n2), from vector products.

    Column j is J(x1) g_j with g_j = grad_theta f(x2_j) (a VJP): the JVP of the batch x1
    along g_j. ``chunk`` columns are computed at once (vmapped), the chunks in sequence
    (``lax.map``), so the memory is O(chunk x #params + n1 x n2) and never holds a Jacobian;
    the work is about that of 2 n2 forward passes through the batch x1.
    """
    a, b = _check_generic_model(f, params, x1, x2)
    chunk = check_positive_int(chunk, name="chunk")
    return _vector_product_ntk(f, params, a, b, min(chunk, b.shape[0]))


@partial(jax.jit, static_argnums=(0, 4))
def _vector_product_ntk(f: Model, params, x1: jax.Array, x2: jax.Array, chunk: int) -> jax.Array:
    gradients = jax.vmap(jax.grad(lambda p, x: f(p, x[None])[0]), in_axes=(None, 0))

    def push_forward(tangent):  # J(x1) t, one JVP through the batch x1
        return jax.jvp(lambda p: f(p, x1), (params,), (tangent,))[1]

    def columns(x2_chunk):  # (chunk, d) -> (chunk, n1)
        return jax.vmap(push_forward)(gradients(params, x2_chunk))

    n2, pad = x2.shape[0], -x2.shape[0] % chunk
    padded = jnp.concatenate([x2, jnp.repeat(x2[-1:], pad, axis=0)])  # repeats, dropped below
    blocks = jax.lax.map(columns, padded.reshape(-1, chunk, x2.shape[1]))
    return blocks.reshape(-1, x1.shape[0])[:n2].T


def _check_generic_model(f: Model, params: Any, x1: ArrayLike, x2: ArrayLike | None) -> tuple[jax.Array, jax.Array]:
    """Validate a model f(params, x) -> (n,) with its parameters and inputs; the checked (x1, x2)."""
    check_model(f)
    check_params_pytree(params)
    a, b = check_inputs_pair(x1, x2)
    try:
        out_shape = jax.eval_shape(f, params, a).shape
    except Exception as err:  # a model that cannot take these params or inputs: say so here
        raise ValueError(f"f(params, x1) could not be evaluated: {type(err).__name__}: {err}") from None
    if out_shape != (a.shape[0],):
        raise ValueError(
            f"f(params, x) must return shape (n,) = ({a.shape[0]},) for x of shape {tuple(a.shape)}, "
            f"got {out_shape}"
        )
    return a, b


@partial(jax.jit, static_argnums=0)
def _structured_ntk(net: _nets.MLP, params, x1: jax.Array, x2: jax.Array) -> jax.Array:
    deltas1, hs1 = _backprop(net, params, x1)
    deltas2, hs2 = _backprop(net, params, x2)
    kernel = jnp.zeros((x1.shape[0], x2.shape[0]), dtype=jnp.result_type(x1, params[0]["W"]))
    for (mw, mb), h1, h2, d1, d2 in zip(net.multipliers(), hs1, hs2, deltas1, deltas2):
        kernel = kernel + (mw**2 * (h1 @ h2.T) + mb**2) * (d1 @ d2.T)
    return kernel


def _backprop(net: _nets.MLP, params, x):
    """Layer inputs h_l and errors delta_l = df/dz_l of a scalar-output MLP, per example."""
    zs, hs, _ = net.forward(params, x)
    delta = jnp.ones_like(zs[-1])
    if net.output_activation is not None:
        delta = net.output_activation.grad(zs[-1])
    deltas = [delta]
    for layer in range(net.depth - 1, -1, -1):
        mw = net.multipliers()[layer + 1][0]
        delta = net.activation.grad(zs[layer]) * (mw * (delta @ params[layer + 1]["W"].T))
        deltas.append(delta)
    return deltas[::-1], hs


def linearize(f: Model, params0: Any) -> Model:
    """The first-order Taylor model around params0:

        f_lin(params, x) = f(params0, x) + J(x; params0) (params - params0),

    evaluated with one forward-mode product (``jax.jvp``), never forming J.
    """
    check_model(f)
    check_params_pytree(params0, name="params0")

    def f_lin(params, x):
        delta = jax.tree_util.tree_map(jnp.subtract, params, params0)
        value, tangent = jax.jvp(lambda p: f(p, x), (params0,), (delta,))
        return value + tangent

    return f_lin
