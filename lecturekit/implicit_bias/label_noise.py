r"""Label-noise SGD on a diagonal linear network: the sharpness and its predicted drift.

At an interpolant of the diagonal network :math:`\beta = \theta_+^2 - \theta_-^2` with
the loss :math:`\mathcal L = \frac1{2N}\sum_n (\langle\beta, x_n\rangle - y_n)^2` (the
book's normalization), the Hessian is the Gauss--Newton matrix :math:`H = J^\top J/N`,
with
:math:`J` the (N, 2d) Jacobian of the outputs, rows
:math:`(2x_n\odot\theta_+,\ -2x_n\odot\theta_-)`. Its trace is

.. math::

    \operatorname{tr} H = \frac4N \sum_j c_j\,(\theta_{+,j}^2 + \theta_{-,j}^2), \qquad
    c_j = \sum_n x_{nj}^2 .

Label-noise gradient descent (step :math:`\eta`, label noise :math:`\sigma`, the full
batch: :func:`lecturekit.training.stochastic_descend`) has gradient noise of covariance
:math:`\eta^2(\sigma^2/N) H` at the interpolants. In the small-step limit of Li, Wang
and Arora (and of Blanc et al., Damian et al.) it drifts along the manifold of
interpolants down the gradient of :math:`\operatorname{tr} H` projected on the
manifold's tangent space, by

.. math::

    \Delta\theta \approx -\frac{\eta^2\sigma^2}{4N}\, P_T \nabla\operatorname{tr} H
    \quad\text{per step}, \qquad P_T = I - J^\top (J J^\top)^{-1} J .

:func:`diagonal_sharpness` computes the trace, :func:`label_noise_drift` the drift.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from .._validation import as_float_array, check_real

__all__ = ["diagonal_sharpness", "label_noise_drift"]


def _state(theta_plus: ArrayLike, theta_minus: ArrayLike, X: ArrayLike):
    Xa = as_float_array(X, name="X", ndim=2)
    if Xa.shape[0] == 0 or Xa.shape[1] == 0:
        raise ValueError(
            f"X must have at least one row and one column, got shape {tuple(Xa.shape)}"
        )
    tp = np.asarray(as_float_array(theta_plus, name="theta_plus", ndim=1), float)
    tm = np.asarray(as_float_array(theta_minus, name="theta_minus", ndim=1), float)
    d = Xa.shape[1]
    if tp.shape != (d,) or tm.shape != (d,):
        raise ValueError(
            f"theta_plus and theta_minus must have shape ({d},) (one entry per column "
            f"of X), got {tp.shape} and {tm.shape}"
        )
    return np.asarray(Xa, float), tp, tm


def diagonal_sharpness(
    theta_plus: ArrayLike, theta_minus: ArrayLike, X: ArrayLike
) -> float:
    r""":math:`\operatorname{tr} H = \frac4N\sum_j c_j(\theta_{+,j}^2 + \theta_{-,j}^2)`
    of the Gauss--Newton Hessian.

    The trace of :math:`J^\top J/N` for the diagonal network on the design X (N, d), the
    Hessian of :math:`\frac1{2N}\sum_n(\langle\beta, x_n\rangle - y_n)^2` at any
    interpolant.

    Args:
        theta_plus: shape (d,).
        theta_minus: shape (d,).
        X: design, shape (N, d).

    Returns:
        float.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> implicit_bias.diagonal_sharpness(np.ones(2), np.zeros(2), np.eye(2))
        4.0
    """
    Xn, tp, tm = _state(theta_plus, theta_minus, X)
    c = np.sum(Xn**2, axis=0)
    return float(4.0 / Xn.shape[0] * np.sum(c * (tp**2 + tm**2)))


def label_noise_drift(
    theta_plus: ArrayLike,
    theta_minus: ArrayLike,
    X: ArrayLike,
    *,
    lr: float,
    label_noise: float,
) -> tuple[jnp.ndarray, jnp.ndarray]:
    r"""Predicted drift per step of label-noise gradient descent along the interpolants.

    :math:`-\frac{\eta^2\sigma^2}{4N} P_T\nabla\operatorname{tr}H` (see the module
    docstring), split into its :math:`\theta_+` and :math:`\theta_-` parts. Valid at an
    interpolant, for a small step (:math:`\eta\lambda_{\max}(H) \ll 1`); the tangent
    projector needs J of full row rank.

    Args:
        theta_plus: shape (d,), at an interpolant.
        theta_minus: shape (d,).
        X: design, shape (N, d).
        lr: the step :math:`\eta` > 0.
        label_noise: :math:`\sigma` >= 0.

    Returns:
        (drift of theta_plus, drift of theta_minus), each of shape (d,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> dp, dm = implicit_bias.label_noise_drift(
        ...     np.array([1.0, 1.0]), np.array([0.5, 1.0]), np.array([[1.0, 1.0]]),
        ...     lr=0.1, label_noise=1.0)
        >>> bool(np.all(dp < 0) and np.all(dm < 0))    # both scales shrink
        True
    """
    Xn, tp, tm = _state(theta_plus, theta_minus, X)
    eta = check_real(lr, name="lr", positive=True)
    sigma = check_real(label_noise, name="label_noise", nonnegative=True)
    n = Xn.shape[0]
    c = np.sum(Xn**2, axis=0)
    J = np.concatenate([2 * Xn * tp, -2 * Xn * tm], axis=1)
    grad = 8.0 / n * np.concatenate([c * tp, c * tm])
    tangent = grad - J.T @ np.linalg.solve(J @ J.T, J @ grad)
    drift = -(eta**2 * sigma**2) / (4 * n) * tangent
    d = Xn.shape[1]
    return jnp.asarray(drift[:d]), jnp.asarray(drift[d:])
