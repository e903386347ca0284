r"""Separable data: gradient descent turns towards the max-margin direction (Soudry et
al. 2018).

Gradient descent on the mean exponential or logistic loss
:math:`\mathcal L(w) = \frac1N\sum_i \ell(y_i\langle w, x_i\rangle)` of linearly
separable data (a linear model without bias) drives :math:`\|w\| \to \infty` along
:math:`\hat w\log t`, with :math:`\hat w` the hard-margin SVM through the origin:
:func:`train_linear_classifier` runs gradient descent (through the engine
:func:`lecturekit.training.gradient_descent`), :func:`hard_margin_svm` solves the SVM,
:func:`angle` measures directions, :func:`two_clouds` draws the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy import optimize

from .. import losses as _losses
from .. import sampling as _sampling
from .. import training as _training
from .._validation import (
    as_float_array,
    check_broadcastable,
    check_choice,
    check_key,
    check_positive_int,
    check_real,
    concrete,
)

__all__ = [
    "SVMSolution",
    "angle",
    "hard_margin_svm",
    "train_linear_classifier",
    "two_clouds",
]


class SVMSolution(NamedTuple):
    r"""Hard-margin SVM through the origin (:func:`hard_margin_svm`).

    Attributes:
        w: the SVM vector :math:`\hat w = \sum_i a_i y_i x_i`, shape (d,).
        dual: the dual variables :math:`a \ge 0`, shape (N,).
        support: boolean mask of the support vectors :math:`\{i : a_i > 0\}`, shape
            (N,).

    Example:
        >>> from lecturekit import implicit_bias
        >>> implicit_bias.SVMSolution._fields
        ('w', 'dual', 'support')
    """

    w: jax.Array
    dual: jax.Array
    support: jax.Array


def _check_classification(X: ArrayLike, y: ArrayLike) -> tuple[jax.Array, jax.Array]:
    Xa = as_float_array(X, name="X", ndim=2)
    ya = as_float_array(y, name="y", ndim=1)
    if ya.shape[0] != Xa.shape[0]:
        raise ValueError(
            f"y must have one label per row of X ({Xa.shape[0]}), got {ya.shape[0]}"
        )
    labels = concrete(ya)
    if labels is not None and not np.all(np.abs(labels) == 1.0):
        raise ValueError("y must contain labels +1 and -1 only")
    return Xa, ya


def hard_margin_svm(
    X: ArrayLike, y: ArrayLike, *, support_tol: float = 1e-7
) -> SVMSolution:
    r"""The hard-margin SVM through the origin, :math:`\min \frac12\|w\|^2`
    s.t. :math:`y_i\langle w, x_i\rangle \ge 1`.

    Solved through its dual, :math:`\max_{a\ge0} \sum_i a_i - \frac12\sum_{ij} a_i a_j
    y_i y_j\langle x_i, x_j\rangle` (bounded quasi-Newton, L-BFGS-B), then polished by
    solving the active constraints on the support exactly. KKT: :math:`w = \sum_i a_i
    y_i x_i` and
    :math:`a_i(y_i\langle w, x_i\rangle - 1) = 0`, so the support vectors
    :math:`\{i : a_i > 0\}` sit on the margin. Runs in NumPy on the host.

    Args:
        X: data, shape (N, d).
        y: labels +1 or -1, shape (N,).
        support_tol: a dual variable counts as positive above ``support_tol`` times
            :math:`\max(\max_j a_j, 1)`.

    Returns:
        :class:`SVMSolution` (w, dual, support).

    Raises:
        ValueError: if the data are not linearly separable through the origin.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> X = np.array([[2.0, 0.0], [3.0, 1.0], [-1.0, 0.5], [-2.0, -2.0]])
        >>> svm = implicit_bias.hard_margin_svm(X, np.array([1.0, 1.0, -1.0, -1.0]))
        >>> [round(float(v), 4) for v in svm.w], np.asarray(svm.support).tolist()
        ([0.8333, -0.3333], [False, False, True, True])
    """
    Xa, ya = _check_classification(X, y)
    support_tol = check_real(support_tol, name="support_tol", nonnegative=True)
    # on the host: no compilation
    Z = np.asarray(ya, float)[:, None] * np.asarray(Xa, float)
    G = Z @ Z.T
    n = Z.shape[0]
    res = optimize.minimize(
        lambda a: 0.5 * a @ G @ a - a.sum(),
        np.zeros(n),
        jac=lambda a: G @ a - 1.0,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * n,
        options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 20_000},
    )
    a = res.x
    support = a > support_tol * max(a.max(), 1.0)
    # polish: on the support, Z_S Z_S^T a_S = 1 (active constraints) exactly
    if support.any():
        a_s = np.linalg.lstsq(
            G[np.ix_(support, support)], np.ones(support.sum()), rcond=None
        )[0]
        polished = np.zeros(n)
        polished[support] = a_s
        if np.all(a_s > 0) and np.min(Z @ (Z.T @ polished)) >= 1.0 - 1e-12:
            a = polished
    w = Z.T @ a
    margins = Z @ w
    if (
        not np.isfinite(res.fun)
        or np.min(margins) < 1.0 - 1e-5
        or np.linalg.norm(w) > 1e8
    ):
        raise ValueError(
            "hard_margin_svm: the data are not linearly separable through the origin"
        )
    return SVMSolution(
        jnp.asarray(w), jnp.asarray(a), jnp.asarray(a > support_tol * max(a.max(), 1.0))
    )


def angle(u: ArrayLike, v: ArrayLike) -> jax.Array:
    r"""Angle (radians) between u and v along the last axis, :math:`2\arctan(\|\hat u -
    \hat v\|/\|\hat u + \hat v\|)`, :math:`\hat u = u/\|u\|`.

    This form (Kahan's) is accurate for tiny angles, where the arccosine of the cosine
    loses half the digits.

    Args:
        u: shape (..., d), non-zero along the last axis.
        v: shape (..., d), broadcastable with ``u``, non-zero along the last axis.

    Returns:
        The angles in [0, pi], of the broadcast shape without the last axis.

    Example:
        >>> from lecturekit import implicit_bias
        >>> round(float(implicit_bias.angle([1.0, 0.0], [1.0, 1.0])), 6)
        0.785398
    """
    a = as_float_array(u, name="u", min_ndim=1)
    b = as_float_array(v, name="v", min_ndim=1)
    check_broadcastable(u=a, v=b)
    for name, arr in (("u", a), ("v", b)):
        host = concrete(arr)
        if host is not None and np.any(np.linalg.norm(host, axis=-1) == 0):
            raise ValueError(
                f"{name} must be non-zero along the last axis (an angle needs a "
                "direction)"
            )
    a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
    b = b / jnp.linalg.norm(b, axis=-1, keepdims=True)
    return 2.0 * jnp.arctan2(
        jnp.linalg.norm(a - b, axis=-1), jnp.linalg.norm(a + b, axis=-1)
    )


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class _MeanMarginLoss:
    """w -> mean_i l(z_i . w), z_i = y_i x_i, as data: training.gradient_descent traces
    Z (one compilation per shape, loss and step count)."""

    Z: jax.Array
    loss: str = field(metadata=dict(static=True))

    def __call__(self, w):
        return jnp.mean(_losses.margin_loss(self.loss)(self.Z @ w))


def train_linear_classifier(
    X: ArrayLike,
    y: ArrayLike,
    checkpoints: ArrayLike,
    *,
    loss: str = "exp",
    lr: float | None = None,
    w0: ArrayLike | None = None,
) -> jax.Array:
    r"""Gradient descent on :math:`\mathcal L(w) = \frac1N\sum_i \ell(y_i\langle w,
    x_i\rangle)`; w at each checkpoint.

    The loss is the mean over examples, with :math:`\ell(u) = e^{-u}` (``"exp"``) or
    :math:`\log(1 + e^{-u})` (``"logistic"``). The default step
    :math:`\mathrm{lr} = 1/\max_i\|x_i\|^2` keeps lr times the largest Hessian
    eigenvalue below :math:`\mathcal L(w) \le 1` from :math:`w_0 = 0` (exponential loss;
    the logistic loss has :math:`\ell'' \le 1/4`).

    Args:
        X: data, shape (N, d).
        y: labels +1 or -1, shape (N,).
        checkpoints: increasing non-negative step counts, shape (k,).
        loss: ``"exp"`` or ``"logistic"``.
        lr: learning rate, > 0; default :math:`1/\max_i\|x_i\|^2`.
        w0: starting point, shape (d,); default zeros.

    Returns:
        The iterates at the checkpoints, shape (k, d).

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> X, y = np.array([[1.0, 0.5], [-1.0, 0.5]]), np.array([1.0, -1.0])
        >>> W = implicit_bias.train_linear_classifier(X, y, [10, 100])
        >>> W.shape, bool(W[1, 0] > W[0, 0] > 0)
        ((2, 2), True)
    """
    Xa, ya = _check_classification(X, y)
    check_choice(loss, ("exp", "logistic"), name="loss")
    if isinstance(checkpoints, (str, bytes)) or checkpoints is None:
        raise TypeError(
            "checkpoints must be a sequence of step counts, got "
            f"{type(checkpoints).__name__}"
        )
    ts = np.asarray(checkpoints)
    if ts.dtype == object or not (np.issubdtype(ts.dtype, np.integer) or ts.size == 0):
        raise TypeError(
            f"checkpoints must be integers (step counts), got dtype {ts.dtype}"
        )
    if (
        ts.ndim != 1
        or ts.size == 0
        or not np.issubdtype(ts.dtype, np.integer)
        or np.any(np.diff(ts) <= 0)
        or ts[0] < 0
    ):
        raise ValueError(
            "checkpoints must be a non-empty increasing 1-D sequence of non-negative "
            "integers"
        )
    lr = None if lr is None else check_real(lr, name="lr", positive=True)
    w = jnp.zeros(Xa.shape[1]) if w0 is None else as_float_array(w0, name="w0", ndim=1)
    if w.shape != (Xa.shape[1],):
        raise ValueError(
            f"w0 must have shape ({Xa.shape[1]},) (one weight per column of X), got "
            f"{tuple(w.shape)}"
        )
    Z = ya[:, None] * Xa
    rate = 1.0 / float(jnp.max(jnp.sum(Xa**2, axis=1))) if lr is None else lr
    # one run to the last checkpoint, observed at multiples of their gcd (every step for
    # a log-spaced grid: (max(checkpoints) + 1, d) numbers are kept, then the rows
    # picked)
    every = max(math.gcd(*(int(t) for t in ts)), 1)
    run = _training.gradient_descent(
        _MeanMarginLoss(Z, loss),
        w,
        rate,
        int(ts[-1]),
        every=every,
        observe=_training.ParamsObserver(),
    )
    return run.observed[ts // every]


def two_clouds(key: jax.Array, n: int = 20) -> tuple[jax.Array, jax.Array]:
    r"""Two Gaussian clouds in the plane with labels +1 and -1, usually separable
    through the origin.

    The first n // 2 points have label +1, the others -1; point i is
    :math:`x_i = (\xi_{i1}, 0.6\,\xi_{i2}) + y_i\,(1.6, 0.8)` with :math:`\xi` standard
    normal (:func:`lecturekit.sampling.standard_normal`). Separability is likely, not
    certain: :func:`hard_margin_svm` raises if a draw is not separable.

    Args:
        key: a ``jax.random`` key.
        n: number of points, >= 2.

    Returns:
        (X, y) with X of shape (n, 2) and y of shape (n,).

    Example:
        >>> import jax
        >>> from lecturekit import implicit_bias
        >>> X, y = implicit_bias.two_clouds(jax.random.key(0), n=6)
        >>> X.shape, y.tolist()
        ((6, 2), [1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    """
    check_key(key)
    n_ = check_positive_int(n, name="n", minimum=2)
    X = _sampling.standard_normal(key, (n_, 2)) * jnp.array([1.0, 0.6])
    y = jnp.where(jnp.arange(n_) < n_ // 2, 1.0, -1.0)
    return X + y[:, None] * jnp.array([1.6, 0.8]), y
