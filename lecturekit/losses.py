"""Losses: the one home of lecturekit's loss functions.

Every loss of the library and the chapters is one of these (traceable: use them inside
losses that are jitted or differentiated):

* :func:`square_loss`, L = (1/2n) sum_i ||f_i - y_i||^2: the book's one normalization
  of the square loss, so that gradient descent with step ``lr`` for s steps follows
  gradient flow up to time t = lr s (:mod:`lecturekit.training`,
  :mod:`lecturekit.regression`);
* :func:`cross_entropy`, L = -(1/n) sum_i sum_a y_ia log softmax(f_i)_a;
* :func:`per_example`, the loss l(f_i, y_i) of every example for ``"square"``
  (||f_i - y_i||^2 / 2) or ``"cross_entropy"`` (softmax, or the sigmoid of a binary
  logit): the per-example form the Hessian decompositions of
  :mod:`lecturekit.loss_hessian` differentiate;
* :func:`margin_loss`, the margin losses l(u) = e^{-u} (``"exp"``) and
  log(1 + e^{-u}) (``"logistic"``) of a margin u = y <w, x> (Chapter 5,
  :mod:`lecturekit.implicit_bias.margin`).

Layer 1: imports only the package's private checks (``lecturekit._validation``) and JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from ._validation import as_float_array, check_choice

__all__ = ["square_loss", "cross_entropy", "per_example", "margin_loss"]

PER_EXAMPLE = ("square", "cross_entropy")


def square_loss(outputs: ArrayLike, targets: ArrayLike) -> jax.Array:
    """The square loss (1/2n) sum_i ||outputs_i - targets_i||^2, n = the leading axis.

    The one normalization of the square loss in lecturekit: half the mean over examples
    of the squared Euclidean error (summed over the outputs of an example). Gradient
    descent on it with step ``lr`` for s steps follows the gradient flow of
    :mod:`lecturekit.regression` up to time t = lr s. Traceable (use it inside losses
    that are jitted or differentiated).

    Args:
        outputs: model outputs, shape (n,) or (n, k, ...).
        targets: labels of the same shape.

    Returns:
        A scalar JAX array.

    Raises:
        ValueError: if the shapes differ.

    Example:
        >>> from lecturekit import losses
        >>> float(losses.square_loss(jnp.array([1.0, 3.0]), jnp.array([0.0, 0.0])))
        2.5
    """
    out, tgt = _check_outputs(outputs, targets, "outputs", "targets", ndim=None)
    n = out.shape[0]
    return 0.5 * jnp.sum((out - tgt) ** 2) / n


def cross_entropy(logits: ArrayLike, onehot: ArrayLike) -> jax.Array:
    """The cross-entropy loss -(1/n) sum_i sum_a onehot_ia log softmax(logits_i)_a.

    The mean over the n examples (the leading axis) of the cross-entropy between the
    softmax of the logits and the labels (one-hot or any probability vectors).
    Traceable.

    Args:
        logits: shape (n, k).
        onehot: labels, shape (n, k).

    Returns:
        A scalar JAX array.

    Example:
        >>> from lecturekit import losses
        >>> round(float(losses.cross_entropy(jnp.zeros((1, 2)), jnp.eye(2)[:1])), 4)
        0.6931
    """
    logits, onehot = _check_outputs(logits, onehot, "logits", "onehot", ndim=2)
    return -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(logits), axis=-1))


def per_example(outputs: ArrayLike, targets: ArrayLike, *, loss: str) -> jax.Array:
    """The loss l(f_i, y_i) of every example i, for outputs and targets of shape (n, k).

    ``loss="square"``: l = ||f_i - y_i||^2 / 2 (its mean over i is :func:`square_loss`).
    ``loss="cross_entropy"``: l = -sum_a y_ia log softmax(f_i)_a for k >= 2, and for a
    binary logit (k = 1) l = -t log sigmoid(z) - (1 - t) log sigmoid(-z) with z = f_i,
    t = y_i in [0, 1]. Traceable.

    Args:
        outputs: model outputs f, shape (n, k).
        targets: targets y, shape (n, k).
        loss: ``"square"`` or ``"cross_entropy"``.

    Returns:
        A JAX array of shape (n,).

    Example:
        >>> from lecturekit import losses
        >>> f, y = jnp.array([[1.0, 2.0], [0.0, 0.0]]), jnp.zeros((2, 2))
        >>> losses.per_example(f, y, loss="square").tolist()
        [2.5, 0.0]
        >>> z = jnp.zeros((1, 1))
        >>> round(float(losses.per_example(z, z, loss="cross_entropy")[0]), 4)
        0.6931
    """
    loss = check_choice(loss, PER_EXAMPLE, name="loss")
    f, y = _check_outputs(outputs, targets, "outputs", "targets", ndim=2)
    return _per_example(loss, f, y)


def _per_example(loss: str, f: jax.Array, y: jax.Array) -> jax.Array:
    """:func:`per_example` without the checks (arguments trusted)."""
    if loss == "square":
        return 0.5 * jnp.sum((f - y) ** 2, axis=1)
    if f.shape[1] == 1:  # binary logit
        z, t = f[:, 0], y[:, 0]
        return -t * jax.nn.log_sigmoid(z) - (1 - t) * jax.nn.log_sigmoid(-z)
    return -jnp.sum(y * jax.nn.log_softmax(f, axis=1), axis=1)


def _exponential(u: jax.Array) -> jax.Array:
    return jnp.exp(-u)


def _logistic(u: jax.Array) -> jax.Array:
    return jnp.logaddexp(0.0, -u)


_MARGIN = {"exp": _exponential, "logistic": _logistic}


def margin_loss(name: str) -> Callable[[Any], jax.Array]:
    """The margin loss l(u) of a margin u = y <w, x>, applied entrywise.

    ``"exp"``: l(u) = e^{-u}; ``"logistic"``: l(u) = log(1 + e^{-u}) (computed as
    logaddexp(0, -u), finite for every u). Both are decreasing with tail e^{-u}, which
    is what makes gradient descent on separable data converge in direction to the
    max-margin classifier (Soudry et al.; Chapter 5).

    Args:
        name: ``"exp"`` or ``"logistic"``.

    Returns:
        The function u -> l(u), entrywise and traceable.

    Example:
        >>> from lecturekit import losses
        >>> losses.margin_loss("exp")(jnp.array([0.0])).tolist()
        [1.0]
        >>> round(float(losses.margin_loss("logistic")(jnp.array(0.0))), 4)
        0.6931
    """
    return _MARGIN[check_choice(name, tuple(_MARGIN), name="name")]


def _check_outputs(
    outputs: Any, targets: Any, name: str, target_name: str, *, ndim
) -> tuple[jax.Array, jax.Array]:
    out = as_float_array(outputs, name=name, ndim=ndim, min_ndim=1, finite=False)
    tgt = as_float_array(targets, name=target_name, ndim=ndim, min_ndim=1, finite=False)
    if out.shape != tgt.shape:
        raise ValueError(
            f"{name} and {target_name} must have the same shape, got "
            f"{tuple(out.shape)} and {tuple(tgt.shape)}"
        )
    return out, tgt
