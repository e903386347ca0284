"""The Hessian of a training loss: Gauss-Newton part, residual part, Fisher, class
structure.

Convention: a model ``apply(params, x)`` maps inputs x of shape (n, d) to outputs of
shape (n, k) (or (n,), read as k = 1); the loss is the mean of a per-example loss,

    L(theta) = (1/n) sum_i l(f_i, y_i),   f_i = apply(theta, x)[i] in R^k,

with ``loss="square"``: l(f, y) = ||f - y||^2 / 2 (so L is ``training.square_loss``), or
``loss="cross_entropy"``: l(f, y) = -sum_a y_a log softmax(f)_a with y one-hot (k >= 2;
for k = 1 the logit f is the binary logit, l = -y log s(f) - (1 - y) log s(-f) with the
logistic s, y in {0, 1}). The chain rule splits the Hessian in two,

    nabla^2 L = G + R,   G = (1/n) sum_i J_i^T A_i J_i,
                         R = (1/n) sum_i sum_a (d l / d f_ia) nabla^2 f_ia,

with J_i = d f_i / d theta (k x P) and A_i = d^2 l / d f_i^2 (k x k): A_i = I for the
square loss, A_i = diag(p_i) - p_i p_i^T for the cross-entropy (p_i = softmax(f_i)). G
is the Gauss-Newton matrix; rank G <= n k (for the cross-entropy <= n (k - 1): A_i 1 =
0). For the cross-entropy G is also the Fisher information of the model's label
distribution, G = (1/n) sum_i sum_c p_ic g_ic g_ic^T with the scores g_ic = nabla log
p_c(x_i) = J_i^T (e_c - p_i).

Dense matrices (``decompose``, ``fisher_information``, ``class_decomposition``) are for
tiny models (P <= ``max_params``); ``gauss_newton_product`` and ``residual_product``
give G v and R v at the cost of a few forward and backward passes, for any size. Every
derivative is taken by the engines of :mod:`lecturekit.hessian`
(:func:`~lecturekit.hessian.gauss_newton_split`, the matrix-free products,
:func:`~lecturekit.hessian.output_jacobian`, with its flattening and dense-size guard);
this module names the losses and assembles the Fisher and class decompositions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import hessian as _hessian
from . import losses as _losses
from ._validation import (
    as_class_labels,
    as_host_float_array,
    check_choice,
    check_params_pytree,
    host_ravel,
)

__all__ = [
    "loss_value",
    "Decomposition",
    "decompose",
    "gauss_newton_product",
    "residual_product",
    "fisher_information",
    "ClassDecomposition",
    "class_decomposition",
    "subspace_overlap",
]

LOSSES = _losses.PER_EXAMPLE

# one function object per loss: the engines of lecturekit.hessian compile once per loss
_PER_EXAMPLE = {
    name: functools.partial(_losses.per_example, loss=name) for name in LOSSES
}


# --------------------------------------------------------------------------- helpers
def _per_example_loss(y, loss):
    """The per-example loss named ``loss``; y None is refused first (clear message)."""
    if y is None:
        raise TypeError(
            "y must be an array of targets of shape (n, k) or (n,), got None"
        )
    return _PER_EXAMPLE[check_choice(loss, LOSSES, name="loss")]


def _log_label_probabilities(f):
    """log p over the label values: log softmax of (n, k) logits, k >= 2, or of [0, z]
    for a binary logit z (k = 1)."""
    logits = jnp.concatenate([jnp.zeros_like(f), f], axis=1) if f.shape[1] == 1 else f
    return jax.nn.log_softmax(logits, axis=1)


_log_softmax = functools.partial(jax.nn.log_softmax, axis=1)


def loss_value(
    apply: Callable, params: Any, x: Any, y: Any, *, loss: str = "square"
) -> jax.Array:
    """The training loss L(theta) = (1/n) sum_i l(f_i, y_i) of the module's convention.

    Args:
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: its parameters (a pytree).
        x: inputs, shape (n, d).
        y: targets, shape (n, k) (or (n,) for k = 1): values for ``"square"``, one-hot
            labels (or {0, 1} for a binary logit) for ``"cross_entropy"``.
        loss: ``"square"`` or ``"cross_entropy"``.

    Returns:
        a scalar JAX array.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import loss_hessian
        >>> lin = lambda w, x: x @ w
        >>> float(loss_hessian.loss_value(lin, jnp.ones(2), jnp.eye(2),
        ...                               jnp.zeros(2)))            # (1 + 1) / (2*2)
        0.5
    """
    return _hessian.output_loss(_per_example_loss(y, loss), apply, params, x, y)


#: Output of :func:`decompose`: the same type as
#: :class:`lecturekit.hessian.GaussNewtonSplit`, (hessian, gauss_newton, residual).
Decomposition = _hessian.GaussNewtonSplit


def decompose(
    apply: Callable,
    params: Any,
    x: Any,
    y: Any,
    *,
    loss: str = "square",
    max_params: int = 4096,
) -> Decomposition:
    """The Hessian of the loss and its Gauss-Newton and residual parts, each computed on
    its own.

    The three matrices come from three separate computations (so
    ``hessian - gauss_newton - residual`` tests the chain rule, it is not zero by
    construction): ``jax.hessian`` of L; the Jacobian J (n k x P) with A_i; and the
    Hessian of theta -> (1/n) sum_ia r_ia f_ia(theta) with the output gradients
    r_ia = d l / d f_ia held fixed at the point.

    Args:
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: the point (pytree; matrices in ``ravel_pytree`` order).
        x: inputs, shape (n, d).
        y: targets as in :func:`loss_value`.
        loss: ``"square"`` or ``"cross_entropy"``.
        max_params: refuse (ValueError) models with more parameters.

    Returns:
        :class:`Decomposition`.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import loss_hessian
        >>> f = lambda p, x: jnp.tanh(x @ p["w"]) * p["a"]
        >>> p = {"w": jnp.array([0.3, -0.2]), "a": jnp.array(1.5)}
        >>> H, G, R = loss_hessian.decompose(f, p, jnp.eye(2), jnp.ones(2))
        >>> bool(jnp.allclose(H, G + R, atol=1e-6)), G.shape
        (True, (3, 3))
    """
    parts = _hessian.gauss_newton_split(
        _per_example_loss(y, loss), apply, params, x, y, max_params=max_params
    )
    return parts


def gauss_newton_product(
    apply: Callable, params: Any, x: Any, y: Any, v: Any, *, loss: str = "square"
) -> Any:
    """G v = (1/n) sum_i J_i^T A_i (J_i v), matrix-free: one jvp, the loss Hessian, one
    vjp.

    Args:
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: the point (pytree).
        x: inputs, shape (n, d).
        y: targets as in :func:`loss_value`.
        v: the direction, a pytree shaped like params.
        loss: ``"square"`` or ``"cross_entropy"``.

    Returns:
        G v, a pytree shaped like params.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import loss_hessian
        >>> lin = lambda w, x: x @ w                      # G = X^T X / n
        >>> x = jnp.array([[1.0, 2.0], [0.0, 1.0]])
        >>> gv = loss_hessian.gauss_newton_product(lin, jnp.zeros(2), x,
        ...                                        jnp.zeros(2), jnp.ones(2))
        >>> [float(t) for t in gv]
        [1.5, 3.5]
    """
    return _hessian.gauss_newton_vector_product(
        _per_example_loss(y, loss), apply, params, x, y, v
    )


def residual_product(
    apply: Callable, params: Any, x: Any, y: Any, v: Any, *, loss: str = "square"
) -> Any:
    """R v = (1/n) sum_ia r_ia nabla^2 f_ia v with r_ia = d l / d f_ia fixed,
    matrix-free.

    Args:
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: the point (pytree).
        x: inputs, shape (n, d).
        y: targets as in :func:`loss_value`.
        v: the direction, a pytree shaped like params.
        loss: ``"square"`` or ``"cross_entropy"``.

    Returns:
        R v, a pytree shaped like params.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import loss_hessian
        >>> lin = lambda w, x: x @ w                      # linear: R = 0
        >>> rv = loss_hessian.residual_product(lin, jnp.ones(2), jnp.eye(2),
        ...                                    jnp.zeros(2), jnp.ones(2))
        >>> [float(t) for t in rv]
        [0.0, 0.0]
    """
    return _hessian.residual_vector_product(
        _per_example_loss(y, loss), apply, params, x, y, v
    )


def fisher_information(
    apply: Callable, params: Any, x: Any, *, max_params: int = 4096
) -> jax.Array:
    """Fisher information of the model's label distribution, from its scores (dense, P x
    P).

    F = (1/n) sum_i sum_c p_ic g_ic g_ic^T with p_i = softmax of the logits at x_i (for
    a binary logit z: p_i = (s(-z), s(z)), labels {0, 1}) and g_ic = nabla_theta log
    p_ic. Computed from the scores themselves (outer products), not from the Jacobian
    formula, so that it can be compared with :func:`decompose`.

    Args:
        apply: the model, logits ``apply(params, x) -> (n, k)`` or ``(n,)`` (binary).
        params: the point (pytree).
        x: inputs, shape (n, d).
        max_params: refuse (ValueError) models with more parameters.

    Returns:
        F, shape (P, P), in ``ravel_pytree`` order.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import loss_hessian
        >>> lin = lambda w, x: x @ w              # logistic regression at w = 0
        >>> F = loss_hessian.fisher_information(lin, jnp.zeros(2), jnp.eye(2))
        >>> F.tolist()                            # (1/n) sum p (1 - p) x x^T
        [[0.125, 0.0], [0.0, 0.125]]
    """
    scores, logp = _hessian.output_jacobian(
        _log_label_probabilities, apply, params, x, max_params=max_params
    )
    return _fisher_sum(scores, logp)


@jax.jit
def _fisher_sum(scores, logp):
    """(1/n) sum_i sum_c p_ic g_ic g_ic^T from scores g (n, c, P) and log p (n, c)."""
    return jnp.einsum("ic,icp,icq->pq", jnp.exp(logp), scores, scores) / logp.shape[0]


class ClassDecomposition(NamedTuple):
    """Output of :func:`class_decomposition` (dense NumPy float64 arrays).

    Attributes:
        gauss_newton: G (P x P), = class_term + cross_term + within_term.
        class_term: sum_c W_cc mu_cc mu_cc^T (C terms: example class c, label c).
        cross_term: sum_{c != c'} W_cc' mu_cc' mu_cc'^T (C (C - 1) terms).
        within_term: sum_i sum_c' w_ic' (g_ic' - mu_{y_i c'})(...)^T.
        weights: W, shape (C, C): W_cc' = (1/n) sum_{i in c} p_ic'.
        means: mu, shape (C, C, P): the W-weighted means of the scores g_ic'.

    Example:
        >>> import numpy as np
        >>> from lecturekit import loss_hessian
        >>> z = np.zeros((2, 2, 1))
        >>> d = loss_hessian.ClassDecomposition(*(np.zeros((1, 1)),) * 4,
        ...                                     np.eye(2), z)
        >>> d.weights.shape, d.means.shape
        ((2, 2), (2, 2, 1))
    """

    gauss_newton: np.ndarray
    class_term: np.ndarray
    cross_term: np.ndarray
    within_term: np.ndarray
    weights: np.ndarray
    means: np.ndarray


def class_decomposition(
    apply: Callable, params: Any, x: Any, labels: Any, *, max_params: int = 4096
) -> ClassDecomposition:
    """A three-level split (after Papyan) of the Gauss-Newton matrix of a C-class
    softmax model.

    G = (1/n) sum_i sum_c' p_ic' g_ic' g_ic'^T (scores g_ic' = J_i^T (e_c' - p_i)) is a
    weighted sum of outer products over pairs (example i, label c'). Grouping the pairs
    by (c = class of i, c') with total weights W_cc' and weighted means mu_cc' gives,
    exactly,

        G = sum_cc' W_cc' mu_cc' mu_cc'^T + sum_i sum_c' w_ic' (g_ic' - mu_cc')(...)^T,

    and the first sum splits into its C diagonal terms (c' = c: class) and C (C - 1)
    off-diagonal ones (cross-class). Since sum_c' p_ic' g_ic' = 0 for every i, the means
    of one class obey sum_c' W_cc' mu_cc' = 0: each class term lies in the span of that
    class's cross terms, and rank(class + cross) <= C (C - 1). (Papyan's class means
    average the scores over the incorrect labels c' != c without these weights; with
    them the split is exact.) Computed in float64 on the host from the Jacobian.

    Args:
        apply: the model, logits ``apply(params, x) -> (n, C)``, C >= 2.
        params: the point (pytree).
        x: inputs, shape (n, d).
        labels: integer classes 0..C-1, shape (n,); every class present.
        max_params: refuse (ValueError) models with more parameters.

    Returns:
        :class:`ClassDecomposition`.

    Example:
        >>> import numpy as np, jax.numpy as jnp
        >>> from lecturekit import loss_hessian
        >>> lin = lambda w, x: x @ w.reshape(2, 2)
        >>> x = jnp.array([[1.0, 0.2], [0.1, 1.0], [0.9, -0.3]])
        >>> d = loss_hessian.class_decomposition(lin, jnp.zeros(4), x,
        ...                                      np.array([0, 1, 0]))
        >>> parts = d.class_term + d.cross_term + d.within_term
        >>> bool(np.allclose(parts, d.gauss_newton)), d.weights.round(3).tolist()
        (True, [[0.333, 0.333], [0.167, 0.167]])
    """
    n, c = _hessian.output_shape(apply, params, x)
    if c < 2:
        raise ValueError(f"class_decomposition needs C >= 2 logits, got {c}")
    labels, _ = as_class_labels(labels, n=n, num_classes=c)
    scores, logp = _hessian.output_jacobian(
        _log_softmax, apply, params, x, max_params=max_params
    )
    # (n, C, P)
    scores = np.asarray(scores, dtype=np.float64)
    w = np.exp(np.asarray(logp, dtype=np.float64)) / n  # (n, C)
    onehot = np.eye(c)[labels]  # (n, C)
    weights = onehot.T @ w  # W[c, c']
    means = np.einsum("ic,id,idp->cdp", onehot, w, scores) / weights[:, :, None]
    gram = lambda rows: rows.T @ rows  # (sum of outer products, by BLAS)
    gn = gram((np.sqrt(w)[:, :, None] * scores).reshape(-1, scores.shape[2]))
    within = gram(
        (np.sqrt(w)[:, :, None] * (scores - means[labels])).reshape(-1, scores.shape[2])
    )
    between = gram((np.sqrt(weights)[:, :, None] * means).reshape(-1, scores.shape[2]))
    # mu_cc, (C, P)
    diagonal = means[np.arange(c), np.arange(c)]
    class_term = gram(np.sqrt(np.diag(weights))[:, None] * diagonal)
    return ClassDecomposition(
        gn, class_term, between - class_term, within, weights, means
    )


def subspace_overlap(vector: Any, basis: Any) -> float:
    """The fraction ||P_V g||^2 / ||g||^2 of a vector's squared norm inside span(V).

    Args:
        vector: g, a pytree (e.g. a gradient) or a flat array.
        basis: orthonormal vectors of V: a list of pytrees shaped like ``vector`` (e.g.
            ``hessian.top_eigenpairs(...).vectors``) or an array of shape (k, P).

    Returns:
        a Python float in [0, 1].

    Example:
        >>> import numpy as np
        >>> from lecturekit import loss_hessian
        >>> loss_hessian.subspace_overlap(np.array([3.0, 4.0]), np.eye(2)[:1])
        0.36
    """
    check_params_pytree(vector, name="vector")
    host = lambda tree: host_ravel(tree).astype(np.float64)  # (nothing compiled)
    g = host(vector)
    if isinstance(basis, (list, tuple)):
        if not basis:
            raise ValueError("basis must hold at least one vector")
        v = np.stack([host(b) for b in basis])
    else:
        v = np.atleast_2d(
            as_host_float_array(basis, name="basis", ndim=(1, 2), nonempty=True)
        )
    if v.shape[1] != g.size:
        raise ValueError(
            f"basis vectors must have {g.size} entries (like vector), got {v.shape[1]}"
        )
    norm = float(g @ g)
    if norm == 0.0:
        raise ValueError("vector must be non-zero")
    q, _ = np.linalg.qr(v.T)
    proj = q.T @ g
    return float(proj @ proj / norm)
