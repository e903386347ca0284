"""Quadratic (second-order Taylor) models of networks, and their first-order minimizer.

:func:`quadratic_model` turns a model f(params, x) into its second-order Taylor model
around params0,

    f_quad(params, x) = f(params0, x) + J(x) d + (1/2) d^T H(x) d,   d = params -
    params0,

evaluated with two nested forward-mode products (``jax.jvp``) by
:func:`lecturekit.tangent.second_order_terms`: the directional derivatives g'(0) and
g''(0) of g(s) = f(params0 + s d, x). Neither the Jacobian J nor the Hessian H is
formed, and nothing is specific to an architecture; :func:`taylor_terms` returns the
three terms separately. :func:`perturbative_minimizer` gives the first-order minimizer
theta* = theta^F + eps theta^I of an explicit quadratic model
z = Phi^T theta + (eps/2) theta^T Psi theta.

The catapult recursion of one-example gradient descent and its regimes live in
:mod:`lecturekit.catapult`, which also runs gradient descent on networks and their
quadratic models with measurements of the tangent kernel and of the sharpness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import tangent as _tangent
from ._validation import (
    as_float_array,
    check_params_pytree,
    check_same_structure,
)

__all__ = [
    "quadratic_model",
    "taylor_terms",
    "PerturbativeMinimizer",
    "perturbative_minimizer",
]

Model = Callable[[Any, jax.Array], jax.Array]


def quadratic_model(f: Model, params0: Any) -> Model:
    """The second-order Taylor model of ``f`` around ``params0`` (any architecture).

        f_quad(params, x) = f(params0, x) + J(x) d + (1/2) d^T H(x) d,  d = params -
        params0,

    where J and H are the Jacobian and Hessian of f(., x) at params0, computed as
    g(0) + g'(0) + g''(0)/2 for g(s) = f(params0 + s d, x) with nested ``jax.jvp``. For
    ReLU networks autodiff uses relu'' = 0, so the model is exact in the weights of each
    activation region: the Taylor model of the region containing params0.

    Args:
        f: the model f(params, x), x of shape (n, d) -> (n,) (or any output shape).
        params0: the expansion point, a pytree of floating arrays.

    Returns:
        ``f_quad(params, x)``, a function like ``f`` (traceable).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import quadratic
        >>> f = lambda p, x: jnp.exp(p * x[:, 0])                    # f(p) = e^(p x)
        >>> fq = quadratic.quadratic_model(f, jnp.array(0.0))
        >>> [round(float(v), 6)
        ...  for v in fq(jnp.array(0.5), jnp.array([[1.0], [2.0]]))]
        [1.625, 2.5]
    """
    terms = _tangent.second_order_terms(f, params0)

    def f_quad(params, x):
        value, slope, curvature = terms(params, x)
        return value + slope + 0.5 * curvature

    return f_quad


def taylor_terms(
    f: Model, params0: Any, params: Any, x: ArrayLike
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The three terms of the second-order expansion of ``f`` around ``params0``.

    Args:
        f: the model f(params, x).
        params0: the expansion point.
        params: the point of evaluation (same structure); d = params - params0.
        x: the inputs.

    Returns:
        (f(params0, x), J d, d^T H d), each of the output shape of ``f``; the quadratic
        model is their sum with weights (1, 1, 1/2).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import quadratic
        >>> f = lambda p, x: jnp.exp(p * x[:, 0])
        >>> terms = quadratic.taylor_terms(f, jnp.array(0.0), jnp.array(0.5),
        ...                                jnp.array([[2.0]]))
        >>> [round(float(t[0]), 6) for t in terms]
        [1.0, 1.0, 1.0]
    """
    terms = _tangent.second_order_terms(f, params0)
    check_params_pytree(params)
    check_same_structure(params, params0, name="params", reference_name="params0")
    return terms(params, as_float_array(x, name="x"))


class PerturbativeMinimizer(NamedTuple):
    """Output of :func:`perturbative_minimizer`: theta* = theta_F + eps theta_I +
    O(eps^2).

    Attributes:
        theta_f: the minimum-norm interpolant of the linear model, shape (p,).
        theta_i: the first-order correction (its part in span{Phi_a}), shape (p,).
        label_shift: the label deformation Y_I, shape (n,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import quadratic
        >>> sol = quadratic.perturbative_minimizer(np.eye(2), np.zeros((2, 2, 2)),
        ...                                        np.array([1.0, 2.0]))
        >>> sol.theta_f.tolist(), sol.theta_i.tolist()  # Psi = 0: no correction
        ([1.0, 2.0], [0.0, 0.0])
    """

    theta_f: jax.Array
    theta_i: jax.Array
    label_shift: jax.Array


def perturbative_minimizer(
    phi: ArrayLike, psi: ArrayLike, y: ArrayLike
) -> PerturbativeMinimizer:
    """First-order minimizer of z(x_a; theta) = Phi_a^T theta + (eps/2) theta^T Psi_a
    theta.

    With p >= n and Phi of full column rank,

        theta_F = (Phi Phi^T)^+ Phi Y           (the minimum-norm interpolant: Phi^T
        theta_F = Y) Y_I     = -(1/2) (theta_F^T Psi_a theta_F)_a
        theta_I = (Phi Phi^T)^+ Phi Y_I

    so theta_F + eps theta_I is the linear model's minimum-norm fit of the deformed
    labels Y + eps Y_I, and Phi_a^T (theta_F + eps theta_I) + (eps/2) q_a = y_a +
    O(eps^2). Only the component of theta_I in span{Phi_a} is determined at this order
    (this is that one). Computed in NumPy (float64).

    Args:
        phi: (p, n), columns Phi_a = Phi(x_a) (the features).
        psi: (n, p, p), symmetric Psi_a = Psi(x_a) (the meta-features).
        y: (n,) labels.

    Returns:
        :class:`PerturbativeMinimizer`.

    Example:
        >>> import numpy as np
        >>> from lecturekit import quadratic
        >>> sol = quadratic.perturbative_minimizer(np.array([[1.0], [0.0]]),
        ...                                        np.eye(2)[None], np.array([2.0]))
        >>> sol.theta_f.tolist(), sol.label_shift.tolist(), sol.theta_i.tolist()
        ([2.0, 0.0], [-2.0], [-2.0, 0.0])
    """
    phi = as_float_array(phi, name="phi", ndim=2)
    psi = as_float_array(psi, name="psi", ndim=3)
    y = as_float_array(y, name="y", ndim=1)
    p, n = phi.shape
    if psi.shape != (n, p, p):
        raise ValueError(
            f"psi must have shape (n, p, p) = {(n, p, p)} for phi of shape {(p, n)}, "
            f"got {psi.shape}"
        )
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if p < n:
        raise ValueError(
            f"need at least as many parameters as examples (p >= n), got p={p}, n={n}"
        )
    # small dense linear algebra: NumPy on the host (no XLA compilation per problem
    # size)
    phi, psi, y = (np.asarray(a, dtype=np.float64) for a in (phi, psi, y))
    gram = phi.T @ phi
    if np.linalg.matrix_rank(gram) < n:
        raise ValueError(
            "the features Phi(x_a) must be linearly independent (Phi^T Phi invertible)"
        )
    theta_f = phi @ np.linalg.solve(gram, y)
    shift = -0.5 * np.einsum("i,aij,j->a", theta_f, psi, theta_f)
    theta_i = phi @ np.linalg.solve(gram, shift)
    return PerturbativeMinimizer(
        jnp.asarray(theta_f), jnp.asarray(theta_i), jnp.asarray(shift)
    )
