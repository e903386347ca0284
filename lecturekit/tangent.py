"""Empirical neural tangent kernels and the linearized model.

The empirical NTK of a model f(params, x) is

    Theta(x, x') = sum over all parameters theta_p of  df(x)/dtheta_p  df(x')/dtheta_p,

the Gram matrix of the feature map x -> grad_theta f(x; theta). No normalization is
applied: with the NTK parameterization the 1/sqrt(fan_in) factors are inside f, so the
kernel has a finite limit as the widths grow.

Three methods, chosen by ``implementation=`` in :func:`empirical_ntk`:

* ``"structured"``: networks built by :func:`lecturekit.nets.mlp` use the per-layer
  formula Theta = sum_l (mW_l^2 <h_l(x), h_l(x')> + mb_l^2) <delta_l(x), delta_l(x')>,
  where h_l is the input of dense layer l, delta_l = df/dz_l the backpropagated error at
  its pre-activation (both from :meth:`lecturekit.nets.MLP.backward`) and (mW_l, mb_l)
  the layer's forward multipliers. The network owns it
  (:meth:`lecturekit.nets.MLP.empirical_ntk`); it never forms the Jacobian: cost
  O(n1 n2 width) per layer;
* ``"vector_products"`` (:func:`vector_product_ntk`), Jacobian-free for any model:
  column j of the kernel is J(x1) (J(x2)^T e_j), one gradient (a VJP) at x2_j pushed
  forward by one JVP through the batch x1, ``chunk`` columns at a time, so memory is
  O(chunk x #params);
* ``"jacobian"`` (:func:`jacobian_ntk`): contract the Jacobians (``jax.jacrev``), exact
  but with memory proportional to (number of inputs) x (number of parameters).

Appendix "Computing kernels and Hessians fast" compares the three.

Taylor models of a network in its parameters: :func:`linearize` (first order, one
``jax.jvp``) and :func:`second_order_terms` (second order, two nested ``jax.jvp``; the
quadratic models of :mod:`lecturekit.quadratic` are built on it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from . import nets as _nets
from ._validation import (
    check_choice,
    check_inputs_pair,
    check_model,
    check_params_pytree,
    check_positive_int,
)

__all__ = [
    "empirical_ntk",
    "vector_product_ntk",
    "jacobian_ntk",
    "linearize",
    "second_order_terms",
]

Model = Callable[[Any, jax.Array], jax.Array]


IMPLEMENTATIONS = ("auto", "structured", "vector_products", "jacobian")


def _structured_network(f: Any) -> _nets.MLP | None:
    """The :class:`~lecturekit.nets.MLP` that ``f`` is, or whose bound ``apply`` it is
    (possibly wrapped in ``jax.jit``, which does not change the function), else None.

    Only the object itself is looked at (``__self__``, ``__func__`` and the
    ``__wrapped__`` of a jitted function), never what a function refers to: a lambda or
    any other function around ``net.apply`` is a generic model."""
    if isinstance(f, _nets.MLP):
        return f
    seen = 0
    while (
        hasattr(f, "__wrapped__")
        and type(f).__name__ in ("PjitFunction", "JitWrapped")
        and seen < 8
    ):
        f, seen = f.__wrapped__, seen + 1
    owner = getattr(f, "__self__", None)
    if isinstance(owner, _nets.MLP) and getattr(f, "__func__", None) is _nets.MLP.apply:
        return owner
    return None


def empirical_ntk(
    f: Model | _nets.MLP,
    params: Any,
    x1: ArrayLike,
    x2: ArrayLike | None = None,
    *,
    implementation: str = "auto",
    net: _nets.MLP | None = None,
) -> jax.Array:
    """Empirical NTK, (n1, n2): Result[i, j] = <df(x1_i)/dtheta, df(x2_j)/dtheta>.

    The sum runs over every leaf of ``params``; no normalization (the NTK
    parameterization's 1/sqrt(fan_in) factors are inside f). ``x2=None`` means x2 = x1,
    and the structured method then runs its forward and backward pass once.

    ``implementation`` picks the method (all give the same kernel up to rounding):

    * ``"structured"``: the per-layer formula of a :func:`lecturekit.nets.mlp` network,
      sum_l (mW_l^2 <h_{l-1}, h'_{l-1}> + mb_l^2) <delta_l, delta'_l>
      (:meth:`lecturekit.nets.MLP.empirical_ntk`, one
      :meth:`~lecturekit.nets.MLP.backward` pass per batch); needs the network: ``f``
      is the network itself, its bound ``net.apply`` or ``jax.jit(net.apply)``, or any
      ``f`` with the network passed as ``net=`` (then ``f`` is trusted to compute
      ``net.apply``). Raises ``ValueError`` without a network.
    * ``"vector_products"``: :func:`vector_product_ntk`, Jacobian-free, any f.
    * ``"jacobian"``: :func:`jacobian_ntk`, the Jacobians contracted (small models).
    * ``"auto"``: "structured" when the network is known (as above), else
      "vector_products". Only ``f`` itself is examined, never what it refers to: a
      lambda, a ``functools.partial`` or any other function around ``net.apply`` is a
      generic model and gets vector products (never the Jacobian); pass the network (as
      ``f`` or ``net=``) for the per-layer formula.

    Args:
        f: the model, ``f(params, x)`` maps a batch (n, d) to (n,) (scalar outputs),
            or a :class:`~lecturekit.nets.MLP` (its ``apply``).
        params: its parameters, any pytree of floating arrays.
        x1: inputs (n1, d).
        x2: inputs (n2, d), or None for x1.
        implementation: "auto", "structured", "vector_products" or "jacobian".
        net: the :class:`~lecturekit.nets.MLP` that ``f`` computes, for a wrapped apply.

    Returns:
        The (n1, n2) kernel matrix.

    Example:
        >>> from lecturekit import nets, tangent
        >>> net = nets.mlp((3, 64, 1), "tanh")
        >>> params, x = net.init(jax.random.key(0)), jnp.ones((4, 3))
        >>> fast = tangent.empirical_ntk(net, params, x)    # or net.apply
        >>> slow = tangent.empirical_ntk(net.apply, params, x,
        ...                              implementation="jacobian")
        >>> fast.shape, bool(jnp.allclose(fast, slow))
        ((4, 4), True)
    """
    found = _structured_network(f)
    if isinstance(f, _nets.MLP):
        f = f.apply
    check_model(f)
    check_choice(implementation, IMPLEMENTATIONS, name="implementation")
    if net is not None and not isinstance(net, _nets.MLP):
        raise TypeError(
            "net must be a lecturekit.nets.mlp network or None, got "
            f"{type(net).__name__}"
        )
    if net is not None and found is not None and found != net:
        raise ValueError("net= is a different network from the one whose apply is f")
    net = net if net is not None else found
    if implementation == "structured" and net is None:
        raise ValueError(
            "implementation='structured' needs a nets.mlp network: pass the network "
            "(or net.apply) as f, or net=net if f wraps it; for any other model use "
            "implementation='vector_products' or 'jacobian'"
        )
    if implementation == "auto":
        implementation = "structured" if net is not None else "vector_products"
    if implementation == "jacobian":
        return jacobian_ntk(f, params, x1, x2)
    if implementation == "vector_products":
        return vector_product_ntk(f, params, x1, x2)
    return net.empirical_ntk(params, x1, x2)


def jacobian_ntk(
    f: Model, params: Any, x1: jax.Array, x2: jax.Array | None = None
) -> jax.Array:
    """Reference method: J(x1) J(x2)^T with the Jacobians materialized leaf by leaf.

    Exact for any model, but the Jacobians need memory (n1 + n2) x (number of
    parameters): use it for small models and as the reference in tests.

    Args:
        f: the model, ``f(params, x)`` maps a batch (n, d) to (n,).
        params: its parameters, any pytree of floating arrays.
        x1: inputs (n1, d).
        x2: inputs (n2, d), or None for x1.

    Returns:
        The (n1, n2) kernel matrix.

    Example:
        >>> from lecturekit import tangent
        >>> f = lambda p, x: x @ p["w"]
        >>> tangent.jacobian_ntk(f, {"w": jnp.ones(2)},
        ...                      jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        Array([[ 5., 11.],
               [11., 25.]], dtype=float64)
    """
    a, b = _check_generic_model(f, params, x1, x2)
    x1, x2 = a, (None if x2 is None else b)
    j1 = jax.jacrev(f)(params, x1)
    j2 = j1 if x2 is None else jax.jacrev(f)(params, x2)
    terms = jax.tree_util.tree_map(
        lambda u, v: u.reshape(u.shape[0], -1) @ v.reshape(v.shape[0], -1).T, j1, j2
    )
    return sum(jax.tree_util.tree_leaves(terms))


def vector_product_ntk(
    f: Model,
    params: Any,
    x1: ArrayLike,
    x2: ArrayLike | None = None,
    *,
    chunk: int = 16,
) -> jax.Array:
    """Jacobian-free empirical NTK of any model, (n1, n2), from vector products.

    Column j is J(x1) g_j with g_j = grad_theta f(x2_j) (a VJP): the JVP of the batch x1
    along g_j. ``chunk`` columns are computed at once (vmapped), the chunks in sequence
    (``lax.map``), so the memory is O(chunk x #params + n1 x n2) and never holds a
    Jacobian; the work is about that of 2 n2 forward passes through the batch x1.

    Args:
        f: the model, ``f(params, x)`` maps a batch (n, d) to (n,).
        params: its parameters, any pytree of floating arrays.
        x1: inputs (n1, d).
        x2: inputs (n2, d), or None for x1.
        chunk: columns computed at once, >= 1.

    Returns:
        The (n1, n2) kernel matrix.

    Example:
        >>> from lecturekit import tangent
        >>> f = lambda p, x: jnp.tanh(x @ p["w"])
        >>> p, x = {"w": jnp.array([0.5, -0.2])}, jnp.array([[1.0, 2.0], [3.0, 4.0]])
        >>> bool(jnp.allclose(tangent.vector_product_ntk(f, p, x, chunk=1),
        ...                   tangent.jacobian_ntk(f, p, x)))
        True
    """
    a, b = _check_generic_model(f, params, x1, x2)
    chunk = check_positive_int(chunk, name="chunk")
    return _vector_product_ntk(f, params, a, b, min(chunk, b.shape[0]))


@partial(jax.jit, static_argnums=(0, 4))
def _vector_product_ntk(
    f: Model, params, x1: jax.Array, x2: jax.Array, chunk: int
) -> jax.Array:
    gradients = jax.vmap(jax.grad(lambda p, x: f(p, x[None])[0]), in_axes=(None, 0))

    def push_forward(tangent):  # J(x1) t, one JVP through the batch x1
        return jax.jvp(lambda p: f(p, x1), (params,), (tangent,))[1]

    def columns(x2_chunk):  # (chunk, d) -> (chunk, n1)
        return jax.vmap(push_forward)(gradients(params, x2_chunk))

    n2, pad = x2.shape[0], -x2.shape[0] % chunk
    # repeats, dropped below
    padded = jnp.concatenate([x2, jnp.repeat(x2[-1:], pad, axis=0)])
    blocks = jax.lax.map(columns, padded.reshape(-1, chunk, x2.shape[1]))
    return blocks.reshape(-1, x1.shape[0])[:n2].T


def _check_generic_model(
    f: Model, params: Any, x1: ArrayLike, x2: ArrayLike | None
) -> tuple[jax.Array, jax.Array]:
    """Validate a model f(params, x) -> (n,) with its parameters and inputs; the checked
    (x1, x2).
    """
    check_model(f)
    check_params_pytree(params)
    a, b = check_inputs_pair(x1, x2)
    try:
        out_shape = jax.eval_shape(f, params, a).shape
    # a model that cannot take these params or inputs: say so here
    except Exception as err:
        raise ValueError(
            f"f(params, x1) could not be evaluated: {type(err).__name__}: {err}"
        ) from None
    if out_shape != (a.shape[0],):
        raise ValueError(
            f"f(params, x) must return shape (n,) = ({a.shape[0]},) for x of shape "
            f"{tuple(a.shape)}, "
            f"got {out_shape}"
        )
    return a, b


def linearize(f: Model, params0: Any) -> Model:
    """The first-order Taylor model around params0:

        f_lin(params, x) = f(params0, x) + J(x; params0) (params - params0),

    evaluated with one forward-mode product (``jax.jvp``), never forming J.

    Args:
        f: the model, ``f(params, x)``.
        params0: the expansion point, a pytree of floating arrays.

    Returns:
        The function ``f_lin(params, x)``.

    Example:
        >>> from lecturekit import nets, tangent
        >>> net = nets.mlp((2, 8, 1), "tanh")
        >>> p0, x = net.init(jax.random.key(0)), jnp.ones((3, 2))
        >>> f_lin = tangent.linearize(net.apply, p0)
        >>> bool(jnp.allclose(f_lin(p0, x), net.apply(p0, x)))
        True
    """
    check_model(f)
    check_params_pytree(params0, name="params0")

    def f_lin(params, x):
        delta = jax.tree_util.tree_map(jnp.subtract, params, params0)
        value, tangent = jax.jvp(lambda p: f(p, x), (params0,), (delta,))
        return value + tangent

    return f_lin


def second_order_terms(
    f: Model, params0: Any
) -> Callable[[Any, jax.Array], tuple[jax.Array, jax.Array, jax.Array]]:
    """The three terms of the second-order Taylor expansion of ``f`` around params0:

        terms(params, x) = (f(params0, x), J(x) d, d^T H(x) d),   d = params - params0,

    J and H the Jacobian and Hessian of f(., x) at params0, evaluated as g(0), g'(0) and
    g''(0) of g(s) = f(params0 + s d, x) with two nested forward-mode products
    (``jax.jvp``), never forming J or H. The second-order Taylor model (the quadratic
    model of :func:`lecturekit.quadratic.quadratic_model`) is their sum with weights
    (1, 1, 1/2); :func:`linearize` is the first two.

    Args:
        f: the model, ``f(params, x)``.
        params0: the expansion point, a pytree of floating arrays.

    Returns:
        The function ``terms(params, x)`` (traceable); each term has the output shape
        of f.

    Example:
        >>> from lecturekit import tangent
        >>> f = lambda p, x: jnp.exp(p * x[:, 0])                    # f(p) = e^(p x)
        >>> terms = tangent.second_order_terms(f, jnp.array(0.0))
        >>> [round(float(t[0]), 6) for t in terms(jnp.array(0.5), jnp.array([[2.0]]))]
        [1.0, 1.0, 1.0]
    """
    check_model(f)
    check_params_pytree(params0, name="params0")

    def terms(params, x):
        delta = jax.tree_util.tree_map(jnp.subtract, params, params0)

        def first(p):
            return jax.jvp(lambda q: f(q, x), (p,), (delta,))

        (value, slope), (_, curvature) = jax.jvp(first, (params0,), (delta,))
        return value, slope, curvature

    return terms
