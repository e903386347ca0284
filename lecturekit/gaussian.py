"""Gaussian expectations: the one quadrature rule and the dual activations.

Everything in lecturekit that averages a function over a Gaussian goes through this
module:

* :func:`gauss_hermite_rule` is the quadrature rule: probabilists' Gauss-Hermite nodes
  z_i and weights w_i (summing to 1), so that E[g(z)] ~ sum_i w_i g(z_i) for z ~ N(0,
  1), exact for polynomials of degree < 2 nodes.
* :func:`expectation` is E[g(z)] for z ~ N(0, K), elementwise over an array of variances
  K (the rule applied to g(sqrt(K) z)).
* :func:`dual_expectations` and :func:`dual_fn` give the *dual activation* of phi and of
  its derivative phi',

      E[phi(u) phi(v)]  and  E[phi'(u) phi'(v)],  (u, v) ~ N(0, [[k11, k12], [k12,
      k22]]),

  the two Gaussian expectations of the infinite-width kernel recursion
  (:mod:`lecturekit.kernels`) and of the signal-propagation maps
  (:mod:`lecturekit.criticality`). They are closed forms for "relu" (the arc-cosine
  kernels of Cho & Saul), "erf" and "identity", and a tensor Gauss-Hermite rule with
  ``nodes`` x ``nodes`` points for every other activation. The one-input case
  (k11 = k12 = k22 = K) is :meth:`DualActivation.diagonal`: a one-dimensional rule
  there.

With 128 nodes (:data:`QUADRATURE_NODES`) the tensor rule integrates the smooth
activations (tanh, softplus, swish) to about 1e-10 for variances up to a few units; the
one-dimensional rule with the same number of nodes is less accurate for tanh at large
variance (1e-8 for E[tanh(u)^2] and 4e-7 for E[tanh'(u)^2] at K = 2.5, 1e-11 at K = 1),
as tested against adaptive quadrature in tests/test_gaussian.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import activations as _act
from ._validation import (
    as_float_array,
    check_broadcastable,
    check_callable,
    check_positive_int,
    concrete,
)

__all__ = [
    "QUADRATURE_NODES",
    "gauss_hermite_rule",
    "expectation",
    "Duals",
    "DualActivation",
    "dual_fn",
    "dual_expectations",
]

QUADRATURE_NODES = 128
"""Default number of Gauss-Hermite nodes (per dimension) of every expectation here."""


def gauss_hermite_rule(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The quadrature rule of lecturekit: probabilists' Gauss-Hermite nodes and weights.

    E[g(z)] ~ sum_i w_i g(z_i) for z ~ N(0, 1), exact when g is a polynomial of degree
    < 2 ``nodes``. The weights sum to 1. Cached: each ``nodes`` is computed once.

    Args:
        nodes: number of nodes (>= 1).

    Returns:
        ``(z, w)``: two float64 NumPy arrays of shape (nodes,), z increasing.

    Example:
        >>> from lecturekit import gaussian
        >>> z, w = gaussian.gauss_hermite_rule(3)
        >>> print(round(float(w.sum()), 12), round(float(w @ z**4), 12))
        1.0 3.0
    """
    return _gauss_hermite_rule(check_positive_int(nodes, name="nodes"))


@cache
def _gauss_hermite_rule(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    return z, w / np.sqrt(2.0 * np.pi)


def _expect(
    fn: Callable[[jax.Array], jax.Array], variance: jax.Array, nodes: int
) -> jax.Array:
    """sum_i w_i fn(sqrt(variance) z_i), elementwise over variance (pure jnp, no
    checks).
    """
    z, w = _gauss_hermite_rule(nodes)
    z, w = jnp.asarray(z), jnp.asarray(w)
    scale = jnp.sqrt(jnp.maximum(variance, 0.0))[..., None]
    return jnp.sum(w * fn(scale * z), axis=-1)


def expectation(
    fn: Callable[[jax.Array], jax.Array],
    variance: ArrayLike,
    *,
    nodes: int = QUADRATURE_NODES,
) -> jax.Array:
    """E[fn(z)] for z ~ N(0, variance), elementwise over an array of variances.

    Computed as sum_i w_i fn(sqrt(variance) z_i) with :func:`gauss_hermite_rule`.

    Args:
        fn: a function acting elementwise on arrays (``jnp.tanh``, an activation's
            ``grad``).
        variance: array of variances K >= 0, any shape.
        nodes: number of quadrature nodes.

    Returns:
        Array of the shape of ``variance``.

    Example:
        >>> from lecturekit import gaussian
        >>> e = gaussian.expectation(lambda z: z**4, jnp.array([1.0, 2.0]))
        >>> print(np.round(np.asarray(e), 10))
        [ 3. 12.]
    """
    check_callable(fn, name="fn", what="a function of an array")
    k = check_variance(variance, "variance")
    nodes = check_positive_int(nodes, name="nodes", minimum=1)
    return _expect(fn, k, nodes)


def check_variance(value: ArrayLike, name: str) -> jax.Array:
    """``value`` as a float array, checked >= 0 where it is concrete (internal
    helper).
    """
    k = as_float_array(value, name=name)
    values = concrete(k)
    if values is not None and np.any(values < 0):
        raise ValueError(
            f"{name} is a variance and must be >= 0, got min {float(values.min()):g}"
        )
    return k


def check_covariance(k11: jax.Array, k12: jax.Array, k22: jax.Array) -> None:
    """Broadcastable, and k12^2 <= k11 k22 where concrete (internal helper)."""
    check_broadcastable(k11=k11, k12=k12, k22=k22)
    a, c, b = concrete(k11), concrete(k12), concrete(k22)
    if (
        a is not None
        and c is not None
        and b is not None
        and np.any(c**2 > a * b * (1 + 1e-9) + 1e-300)
    ):
        raise ValueError("k12 must satisfy k12^2 <= k11 k22 (a valid 2x2 covariance)")


# --------------------------------------------------------------------------------------
# Dual activations


class Duals(NamedTuple):
    """The two Gaussian expectations of a dual activation (arrays of one shape).

    Attributes:
        phi: E[phi(u) phi(v)] for (u, v) ~ N(0, [[k11, k12], [k12, k22]]).
        dphi: E[phi'(u) phi'(v)].

    Example:
        >>> from lecturekit import gaussian
        >>> phi, dphi = gaussian.dual_fn("identity")(2.0, 0.5, 1.0)
        >>> print(float(phi), float(dphi))
        0.5 1.0
    """

    phi: jax.Array
    dphi: jax.Array


def _correlation(k11, k12, k22):
    norm = jnp.sqrt(k11 * k22)
    safe = jnp.where(norm > 0, norm, 1.0)
    rho = jnp.clip(jnp.where(norm > 0, k12 / safe, 0.0), -1.0, 1.0)
    return norm, rho


def _relu_pair(k11, k12, k22):
    # Cho & Saul arc-cosine kernels of degree 1 and 0 for phi = max(0, .).
    norm, rho = _correlation(k11, k12, k22)
    theta = jnp.arccos(rho)
    e_phi = norm * (jnp.sqrt(1.0 - rho**2) + (jnp.pi - theta) * rho) / (2.0 * jnp.pi)
    e_dphi = jnp.where(norm > 0, (jnp.pi - theta) / (2.0 * jnp.pi), 0.0)
    return e_phi, e_dphi


def _relu_diagonal(k):
    return k / 2.0, jnp.where(k > 0, 0.5, 0.0)


def _erf_pair(k11, k12, k22):
    a, b = 1.0 + 2.0 * k11, 1.0 + 2.0 * k22
    ratio = jnp.clip(2.0 * k12 / jnp.sqrt(a * b), -1.0, 1.0)
    e_phi = (2.0 / jnp.pi) * jnp.arcsin(ratio)
    e_dphi = (4.0 / jnp.pi) / jnp.sqrt(a * b - 4.0 * k12**2)
    return e_phi, e_dphi


def _erf_diagonal(k):
    return (2.0 / jnp.pi) * jnp.arcsin(2.0 * k / (1.0 + 2.0 * k)), (
        4.0 / jnp.pi
    ) / jnp.sqrt(1.0 + 4.0 * k)


def _identity_pair(k11, k12, k22):
    return k12, jnp.ones_like(k12)


def _identity_diagonal(k):
    return k, jnp.ones_like(k)


_CLOSED_FORMS = {
    "relu": (_relu_pair, _relu_diagonal),
    "erf": (_erf_pair, _erf_diagonal),
    "identity": (_identity_pair, _identity_diagonal),
}


def _quadrature_pair(act: _act.Activation, nodes: int, k11, k12, k22):
    z, w = _gauss_hermite_rule(nodes)  # NumPy constants
    z1, z2 = z[:, None], z[None, :]
    w2 = w[:, None] * w[None, :]

    def scalar(a, c, b):
        # (u, v) = S z with S the symmetric square root of the covariance, so that the
        # rule is exactly symmetric under swapping the two inputs: S = (C + s I) / t
        # with s = sqrt(det C), t = sqrt(tr C + 2 s).
        s = jnp.sqrt(jnp.maximum(a * b - c**2, 0.0))
        t = jnp.sqrt(a + b + 2.0 * s)
        t = jnp.where(t > 0, t, 1.0)
        u = ((a + s) * z1 + c * z2) / t
        v = (c * z1 + (b + s) * z2) / t
        return (
            jnp.sum(w2 * act.fn(u) * act.fn(v)),
            jnp.sum(w2 * act.grad(u) * act.grad(v)),
        )

    shape = jnp.broadcast_shapes(jnp.shape(k11), jnp.shape(k12), jnp.shape(k22))
    a = jnp.broadcast_to(k11, shape).reshape(-1, shape[-1] if shape else 1)
    c = jnp.broadcast_to(k12, shape).reshape(a.shape)
    b = jnp.broadcast_to(k22, shape).reshape(a.shape)
    # lax.map over rows keeps memory at (row length) x nodes^2.
    e_phi, e_dphi = jax.lax.map(lambda r: jax.vmap(scalar)(*r), (a, c, b))
    return e_phi.reshape(shape), e_dphi.reshape(shape)


@dataclass(frozen=True)
class DualActivation:
    """The dual activation of phi: (k11, k12, k22) -> :class:`Duals`, pure jnp.

    Calling it gives E[phi(u) phi(v)] and E[phi'(u) phi'(v)] for
    (u, v) ~ N(0, [[k11, k12], [k12, k22]]) (arrays broadcast against each other);
    :meth:`diagonal` gives the one-input case E[phi(u)^2], E[phi'(u)^2] for u ~ N(0, K).
    No checks of the array arguments: usable inside ``jit``, ``vmap`` and ``lax.scan``
    (callers validate their inputs). Hashable, so it can be a static argument of
    ``jit``. Build it with :func:`dual_fn`.

    Attributes:
        activation: the :class:`lecturekit.activations.Activation` phi.
        quadrature: True when the Gauss-Hermite rule is used (no closed form, or
            forced).
        nodes: nodes of the rule per dimension.

    Example:
        >>> from lecturekit import gaussian
        >>> dual = gaussian.dual_fn("relu")
        >>> print(round(float(dual(1.0, 0.0, 1.0).phi), 6),
        ...       float(dual.diagonal(2.0).dphi))
        0.159155 0.5
    """

    activation: _act.Activation
    quadrature: bool
    nodes: int

    def __call__(self, k11: ArrayLike, k12: ArrayLike, k22: ArrayLike) -> Duals:
        """:class:`Duals` at the covariance [[k11, k12], [k12, k22]]."""
        return _dual_pair(self, k11, k12, k22)

    def diagonal(self, variance: ArrayLike) -> Duals:
        """:class:`Duals` at k11 = k12 = k22 = ``variance``: E[phi(u)^2],
        E[phi'(u)^2].
        """
        return _dual_diagonal(self, variance)


@partial(jax.jit, static_argnums=0)
def _dual_pair(dual: DualActivation, k11, k12, k22) -> Duals:
    if not dual.quadrature:
        return Duals(*_CLOSED_FORMS[dual.activation.name][0](k11, k12, k22))
    return Duals(*_quadrature_pair(dual.activation, dual.nodes, k11, k12, k22))


@partial(jax.jit, static_argnums=0)
def _dual_diagonal(dual: DualActivation, k) -> Duals:
    if not dual.quadrature:
        return Duals(*_CLOSED_FORMS[dual.activation.name][1](k))
    act = dual.activation
    return Duals(
        _expect(lambda z: act.fn(z) ** 2, k, dual.nodes),
        _expect(lambda z: act.grad(z) ** 2, k, dual.nodes),
    )


def dual_fn(
    activation: str | _act.Activation,
    *,
    quadrature: bool = False,
    nodes: int = QUADRATURE_NODES,
) -> DualActivation:
    """The dual activation of ``activation`` as a :class:`DualActivation` (no input
    checks).

    Closed forms for "relu" (arc-cosine), "erf" and "identity"; the ``nodes`` x
    ``nodes`` Gauss-Hermite rule otherwise, or for every activation when
    ``quadrature=True`` (which is how the closed forms are tested).

    Args:
        activation: a name of :mod:`lecturekit.activations` or an ``Activation``.
        quadrature: force the quadrature rule.
        nodes: quadrature nodes per dimension (>= 2).

    Returns:
        A :class:`DualActivation`; ``dual_fn(a)(k11, k12, k22)`` is a :class:`Duals`.

    Example:
        >>> from lecturekit import gaussian
        >>> exact = gaussian.dual_fn("erf")(1.0, 0.5, 1.0).phi
        >>> quad = gaussian.dual_fn("erf", quadrature=True, nodes=64)(
        ...     1.0, 0.5, 1.0).phi
        >>> print(round(float(exact), 8), bool(abs(exact - quad) < 1e-10))
        0.2163469 True
    """
    act = _act.get(activation)
    nodes = check_positive_int(nodes, name="nodes", minimum=2)
    if not isinstance(quadrature, (bool, np.bool_)):
        raise TypeError(f"quadrature must be True or False, got {quadrature!r}")
    return DualActivation(act, bool(quadrature) or act.name not in _CLOSED_FORMS, nodes)


def dual_expectations(
    activation: str | _act.Activation,
    k11: ArrayLike,
    k12: ArrayLike,
    k22: ArrayLike,
    *,
    quadrature: bool = False,
    nodes: int = QUADRATURE_NODES,
) -> Duals:
    """E[phi(u) phi(v)] and E[phi'(u) phi'(v)] for (u, v) ~ N(0, [[k11, k12], [k12,
    k22]]).

    The checked form of :func:`dual_fn`: k11, k22 >= 0 and k12^2 <= k11 k22 (where the
    values are concrete); the arrays broadcast against each other.

    Args:
        activation: a name of :mod:`lecturekit.activations` or an ``Activation``.
        k11: variance of u.
        k12: covariance of u and v.
        k22: variance of v.
        quadrature: force the Gauss-Hermite rule even where a closed form exists.
        nodes: quadrature nodes per dimension (>= 2).

    Returns:
        :class:`Duals` ``(phi, dphi)`` of the broadcast shape.

    Example:
        >>> from lecturekit import gaussian
        >>> e = gaussian.dual_expectations("relu", 1.0, 1.0, 1.0)
        >>> print(round(float(e.phi), 12), round(float(e.dphi), 12))
        0.5 0.5
    """
    dual = dual_fn(activation, quadrature=quadrature, nodes=nodes)
    a, c, b = (
        check_variance(k11, "k11"),
        as_float_array(k12, name="k12"),
        check_variance(k22, "k22"),
    )
    check_covariance(a, c, b)
    return dual(a, c, b)
