"""Kernel regression and the gradient-flow predictor of a linear (kernel) model.

Conventions. Training inputs S = (x_1, ..., x_n); ``k_train`` is the Gram matrix
K = [k(x_i, x_j)] (n, n); ``k_test_train`` is k(X_test, S) (n_test, n); labels y have
shape (n,) or (n, c) for c outputs (the kernel is shared by all outputs).

* Kernel ridge regression with ridge lambda >= 0 predicts

      f*(x) = k(x, S) (K + lambda I)^(-1) y,

  the minimizer of sum_i (f(x_i) - y_i)^2 + lambda ||f||_H^2 over the RKHS H of k
  (representer theorem). lambda = 0 is ridgeless (minimum-norm interpolating)
  regression.
* Gradient flow of a linear model f(x; theta) = f_0(x) + <grad f(x), theta - theta_0> on
  the loss L = (1/2n) sum_i (f(x_i) - y_i)^2 moves the training outputs by
  d f_S / dt = -(1/n) K (f_S - y), hence

      f_t(x) = f_0(x) + k(x, S) K^(-1) (I - exp(-t K / n)) (y - f_0(S)).

  For gradient descent with step ``lr`` the time after s steps is t = lr * s. The
  formula is evaluated in the eigenbasis K = U diag(mu) U^T with (1 - exp(-t mu/n))/mu,
  which tends to t/n as mu -> 0: it is finite for singular K, where K^(-1) itself is
  not. As t -> infinity it tends to ridgeless kernel regression on the corrected labels
  y - f_0(S).

* Gradient descent itself (step lr, s steps) on the same linear model has the exact
  solution

      f_s(x) = f_0(x) + k(x, S) K^(-1) (I - (I - lr K / n)^s) (y - f_0(S))

  (:func:`gradient_descent_predictor`): Euler's method for the flow, solved in closed
  form.
* The trained infinite-width ensemble (:func:`trained_ensemble_law`): f_t above is
  linear in f_0, so when f_0 is a centred Gaussian process with covariance K (the NNGP)
  and the tangent kernel Theta is deterministic (infinite width), f_t is Gaussian with
  mean Theta(x, S) M_t y and covariance
  K(x, x') - Theta(x, S) M_t K(S, x') - K(x, S) M_t Theta(S, x') + Theta(x, S) M_t K(S,
  S) M_t Theta(S, x'), M_t = Theta^(-1) (I - exp(-t Theta / n)) (Lee et al. 2019).

Evaluation. Each public function validates its arguments and then runs one numerical
core: with NumPy (LAPACK) for concrete arrays, so a call compiles nothing, or with
jax.numpy when its inputs are traced (inside ``jit``, ``vmap`` or ``grad``). The result
is a JAX array either way.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from ._validation import (
    as_float_array,
    check_positive_int,
    check_range,
    check_real,
    is_traced,
)

__all__ = [
    "kernel_regression",
    "kernel_coefficients",
    "rkhs_norm_squared",
    "gradient_flow_predictor",
    "gradient_flow_train_loss",
    "gradient_descent_predictor",
    "EnsembleLaw",
    "trained_ensemble_law",
]


class _KernelProblem(NamedTuple):
    """Validated arrays of a kernel-regression problem."""

    k_train: jax.Array
    y: jax.Array
    k_test_train: jax.Array


def _traced(*arrays) -> bool:
    return any(is_traced(a) for a in arrays)


def _array(
    value: ArrayLike, *, name: str, ndim=None, nonempty: bool = False
) -> jax.Array:
    """``as_float_array`` (its value checks run in NumPy, and are skipped for traced
    values).
    """
    return as_float_array(value, name=name, ndim=ndim, nonempty=nonempty)


def _zeros(shape, like: jax.Array):
    return (
        jnp.zeros(shape, like.dtype) if _traced(like) else np.zeros(shape, like.dtype)
    )


def _run(core, *arrays, **options) -> jax.Array:
    """core(xp, *arrays): with xp = numpy for concrete arrays, jax.numpy for traced
    ones.
    """
    if _traced(*arrays):
        return core(jnp, *arrays, **options)
    return jnp.asarray(core(np, *(np.asarray(a) for a in arrays), **options))


def _check_problem(
    k_train: ArrayLike, y: ArrayLike, k_test_train: ArrayLike | None
) -> _KernelProblem:
    k = _array(k_train, name="k_train", ndim=2, nonempty=True)
    if k.shape[0] != k.shape[1]:
        raise ValueError(
            f"k_train must be a square (n, n) Gram matrix, got shape {tuple(k.shape)}"
        )
    y = _array(y, name="y", ndim=(1, 2))
    if y.shape[0] != k.shape[0]:
        raise ValueError(
            f"y must have {k.shape[0]} rows (one per training point), got shape "
            f"{tuple(y.shape)}"
        )
    if k_test_train is None:
        kt = k
    else:
        kt = _array(k_test_train, name="k_test_train", ndim=2)
        if kt.shape[1] != k.shape[0]:
            raise ValueError(
                f"k_test_train must have shape (n_test, {k.shape[0]}) = k(X_test, S), "
                f"got {tuple(kt.shape)}"
            )
    return _KernelProblem(k, y, kt)


def kernel_coefficients(
    k_train: ArrayLike, y: ArrayLike, *, ridge: float = 0.0
) -> jax.Array:
    """The representer coefficients a = (K + ridge I)^(-1) y, shape like y.

    ``ridge = 0`` solves K a = y (K must then be non-singular; a least-squares solution
    is returned by the eigendecomposition, with eigenvalues below n eps times the
    largest treated as zero). The fitted function is f = sum_i a_i k(x_i, .).

    Args:
        k_train: the Gram matrix K (n, n), symmetric positive semi-definite.
        y: labels (n,) or (n, c).
        ridge: lambda >= 0.

    Returns:
        The coefficients a, shape of ``y``.

    Example:
        >>> from lecturekit import regression
        >>> regression.kernel_coefficients(2 * jnp.eye(2),
        ...                                jnp.array([1.0, 3.0])).tolist()
        [0.5, 1.5]
    """
    prob = _check_problem(k_train, y, None)
    ridge = check_real(ridge, name="ridge", nonnegative=True)
    return _run(_coefficients, prob.k_train, prob.y, ridge=ridge)


def _coefficients(xp, k, y, *, ridge):
    mu, u = xp.linalg.eigh(0.5 * (k + k.T))
    shifted = mu + ridge
    cutoff = k.shape[0] * xp.finfo(k.dtype).eps * xp.max(xp.abs(mu))
    kept = xp.abs(shifted) > cutoff
    inv = xp.where(kept, 1.0 / xp.where(kept, shifted, 1.0), 0.0)
    uy = u.T @ y
    return u @ (inv[:, None] * uy if y.ndim == 2 else inv * uy)


def kernel_regression(
    k_train: ArrayLike,
    y: ArrayLike,
    k_test_train: ArrayLike | None = None,
    *,
    ridge: float = 0.0,
) -> jax.Array:
    """Kernel (ridge) regression predictions f*(X_test) = k(X_test, S) (K + ridge
    I)^(-1) y.

    Args:
        k_train: the Gram matrix K = k(S, S) (n, n).
        y: labels (n,) or (n, c).
        k_test_train: k(X_test, S) (n_test, n); None predicts on the training set itself
            (K (K + ridge I)^(-1) y, which equals y when ridge = 0 and K is
            non-singular).
        ridge: lambda >= 0 (0: ridgeless, the minimum-norm interpolant).

    Returns:
        Predictions (n_test,) or (n_test, c).

    Example:
        >>> from lecturekit import regression
        >>> x = jnp.array([[0.0], [1.0]])
        >>> k = jnp.exp(-(x - x.T) ** 2)                      # a Gaussian kernel
        >>> k_mid = jnp.exp(-(0.5 - x.T) ** 2)                # k(0.5, S)
        >>> pred = regression.kernel_regression(k, jnp.array([1.0, 1.0]), k_mid)
        >>> round(float(pred[0]), 4)
        1.1387
    """
    prob = _check_problem(k_train, y, k_test_train)
    ridge = check_real(ridge, name="ridge", nonnegative=True)
    return _run(_predict, prob.k_train, prob.y, prob.k_test_train, ridge=ridge)


def _predict(xp, k, y, kt, *, ridge):
    return kt @ _coefficients(xp, k, y, ridge=ridge)


def rkhs_norm_squared(k_train: ArrayLike, coefficients: ArrayLike) -> jax.Array:
    """The squared RKHS norm ||f||_H^2 = a^T K a of f = sum_i a_i k(x_i, .).

    Args:
        k_train: the Gram matrix K (n, n).
        coefficients: a (n,) or (n, c) (summed over the c outputs).

    Returns:
        A scalar JAX array.

    Example:
        >>> from lecturekit import regression
        >>> float(regression.rkhs_norm_squared(2 * jnp.eye(2), jnp.array([1.0, 1.0])))
        4.0
    """
    k = _array(k_train, name="k_train", ndim=2)
    if k.shape[0] != k.shape[1]:
        raise ValueError(
            f"k_train must be a square (n, n) Gram matrix, got shape {tuple(k.shape)}"
        )
    a = _array(coefficients, name="coefficients", ndim=(1, 2))
    if a.shape[0] != k.shape[0]:
        raise ValueError(
            f"coefficients must have {k.shape[0]} rows, got shape {tuple(a.shape)}"
        )
    return _run(lambda xp, k, a: xp.sum(a * (k @ a)), k, a)


def _flow_factor(xp, mu, t, n: int):
    """(1 - exp(-t mu / n)) / mu, continuous at mu = 0 (value t / n), for t of any
    shape.
    """
    tt = t[..., None]
    small = xp.abs(mu) * tt / n < 1e-12
    safe_mu = xp.where(small, 1.0, mu)
    return xp.where(small, tt / n, -xp.expm1(-tt * safe_mu / n) / safe_mu)


def gradient_flow_predictor(
    k_train: ArrayLike,
    y: ArrayLike,
    t: ArrayLike,
    k_test_train: ArrayLike | None = None,
    *,
    f0_train: ArrayLike | None = None,
    f0_test: ArrayLike | None = None,
) -> jax.Array:
    """Outputs f_t(X_test) of gradient flow on L = (1/2n) sum (f - y)^2 for a fixed
    kernel.

        f_t(x) = f_0(x) + k(x, S) K^(-1) (I - exp(-t K / n)) (y - f_0(S)).

    Gradient descent with step lr for s steps corresponds to t = lr s.

    Args:
        k_train: the kernel K on the training inputs S (n, n).
        y: labels (n,) or (n, c).
        t: a time >= 0 or an array of times (the result then gets t's shape in front).
        k_test_train: k(X_test, S) (n_test, n); None predicts on S itself.
        f0_train: the model's outputs at initialization on S (default 0).
        f0_test: its outputs on X_test (default 0, or f0_train when predicting on S).

    Returns:
        f_t(X_test), shape t.shape + (n_test,) (+ (c,) for 2-D y).

    Example:
        >>> from lecturekit import regression
        >>> out = regression.gradient_flow_predictor(
        ...     jnp.eye(2), jnp.array([1.0, -1.0]), jnp.array([0.0, 2.0, 1e9]))
        >>> out.round(4).tolist()  # y (1 - exp(-t/2)) for K = I, n = 2
        [[0.0, -0.0], [0.6321, -0.6321], [1.0, -1.0]]
    """
    prob = _check_problem(k_train, y, k_test_train)
    times = _array(t, name="t")
    check_range(times, name="t", lo=0.0, what="a training time")
    f0s, f0t = _initial_outputs(prob, f0_train, f0_test, k_test_train)
    return _run(_flow_predict, prob.k_train, prob.y, times, prob.k_test_train, f0s, f0t)


def _flow_predict(xp, k, y, times, kt, f0s, f0t):
    n = k.shape[0]
    mu, u = xp.linalg.eigh(0.5 * (k + k.T))
    factor = _flow_factor(xp, mu, times, n)  # (..., n)
    resid = u.T @ (y - f0s)  # (n,) or (n, c)
    kt_u = kt @ u  # (n_test, n)
    if y.ndim == 1:
        moved = xp.einsum("tk,...k->...t", kt_u, factor * resid)
    else:
        moved = xp.einsum("tk,...k,kc->...tc", kt_u, factor, resid)
    return f0t + moved


def gradient_flow_train_loss(
    k_train: ArrayLike, y: ArrayLike, t: ArrayLike, *, f0_train: ArrayLike | None = None
) -> jax.Array:
    """The training loss along the gradient flow, L(t) = (1/2n) ||exp(-t K/n) (f_0(S) -
    y)||^2.

    Args:
        k_train: the kernel K on the training inputs (n, n).
        y: labels (n,) or (n, c).
        t: a time >= 0 or an array of times.
        f0_train: the model's outputs at initialization on S (default 0).

    Returns:
        L(t), shape of ``t``.

    Example:
        >>> from lecturekit import regression
        >>> regression.gradient_flow_train_loss(jnp.eye(2), jnp.array([1.0, 1.0]),
        ...                                     jnp.array([0.0, 1e9])).tolist()
        [0.5, 0.0]
    """
    prob = _check_problem(k_train, y, None)
    times = _array(t, name="t")
    check_range(times, name="t", lo=0.0, what="a training time")
    f0s = (
        _zeros(prob.y.shape, prob.y)
        if f0_train is None
        else _array(f0_train, name="f0_train")
    )
    if f0s.shape != prob.y.shape:
        raise ValueError(
            f"f0_train must have the shape of y {tuple(prob.y.shape)}, got "
            f"{tuple(f0s.shape)}"
        )
    return _run(_flow_train_loss, prob.k_train, prob.y, times, f0s)


def _flow_train_loss(xp, k, y, times, f0s):
    n = k.shape[0]
    mu, u = xp.linalg.eigh(0.5 * (k + k.T))
    r0 = u.T @ (f0s - y)
    decay = xp.exp(-times[..., None] * mu / n)  # (..., n)
    if y.ndim == 1:
        return 0.5 / n * xp.sum((decay * r0) ** 2, axis=-1)
    return 0.5 / n * xp.sum((decay[..., None] * r0) ** 2, axis=(-2, -1))


def gradient_descent_predictor(
    k_train: ArrayLike,
    y: ArrayLike,
    lr: float,
    steps: int,
    k_test_train: ArrayLike | None = None,
    *,
    f0_train: ArrayLike | None = None,
    f0_test: ArrayLike | None = None,
) -> jax.Array:
    """Outputs after ``steps`` steps of gradient descent with step ``lr`` on a linear
    model.

        f_s(x) = f_0(x) + k(x, S) K^(-1) (I - (I - lr K / n)^s) (y - f_0(S)),

    the exact iterates of theta <- theta - lr grad L for L = (1/2n) sum (f - y)^2 and a
    model linear in theta with tangent kernel K (for example a linearized network, with
    its empirical NTK). Evaluated in the eigenbasis of K, where the factor
    (1 - (1 - lr mu/n)^s)/mu tends to s lr / n as mu -> 0. Use it to check a run of
    :func:`lecturekit.training.gradient_descent` on a linearized network.

    Args:
        k_train: the kernel K on the training inputs (n, n).
        y: labels (n,) or (n, c).
        lr: step size, > 0.
        steps: number of steps, an integer >= 0.
        k_test_train: k(X_test, S) (n_test, n); None predicts on S itself.
        f0_train: outputs at initialization on S (default 0).
        f0_test: outputs at initialization on X_test.

    Returns:
        f_s(X_test), (n_test,) or (n_test, c).

    Example:
        >>> from lecturekit import regression
        >>> regression.gradient_descent_predictor(
        ...     jnp.eye(2), jnp.array([1.0, 2.0]), 1.0, 3).tolist()
        [0.875, 1.75]
    """
    prob = _check_problem(k_train, y, k_test_train)
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps", minimum=0)
    f0s, f0t = _initial_outputs(prob, f0_train, f0_test, k_test_train)
    return _run(
        _gd_predict,
        prob.k_train,
        prob.y,
        prob.k_test_train,
        f0s,
        f0t,
        lr=lr,
        steps=int(steps),
    )


def _gd_predict(xp, k, y, kt, f0s, f0t, *, lr, steps):
    n = k.shape[0]
    mu, u = xp.linalg.eigh(0.5 * (k + k.T))
    a = lr * mu / n
    small = xp.abs(a) < 1e-12
    safe_mu = xp.where(small, 1.0, mu)
    # 1 - (1 - a)^s: by expm1/log1p while 0 <= a < 1 (accurate for small a), directly
    # otherwise
    inside = (a >= 0) & (a < 1)
    power = xp.where(
        inside,
        -xp.expm1(steps * xp.log1p(-xp.where(inside, a, 0.0))),
        1.0 - (1.0 - a) ** steps,
    )
    factor = xp.where(small, steps * lr / n, power / safe_mu)
    resid = u.T @ (y - f0s)
    moved = (kt @ u) @ (factor * resid if y.ndim == 1 else factor[:, None] * resid)
    return f0t + moved


def _initial_outputs(prob, f0_train, f0_test, k_test_train):
    """The model's outputs at initialization on S and on X_test, checked against y's
    shape (default 0; with k_test_train None the test points are S, so f0_test defaults
    to f0_train)."""
    f0s = (
        _zeros(prob.y.shape, prob.y)
        if f0_train is None
        else _array(f0_train, name="f0_train")
    )
    if f0s.shape != prob.y.shape:
        raise ValueError(
            f"f0_train must have the shape of y {tuple(prob.y.shape)}, got "
            f"{tuple(f0s.shape)}"
        )
    out_shape = (prob.k_test_train.shape[0],) + prob.y.shape[1:]
    if f0_test is None:
        f0t = f0s if k_test_train is None else _zeros(out_shape, prob.y)
    else:
        f0t = _array(f0_test, name="f0_test")
        if f0t.shape != out_shape:
            raise ValueError(
                f"f0_test must have shape {out_shape}, got {tuple(f0t.shape)}"
            )
    return f0s, f0t


class EnsembleLaw(NamedTuple):
    """The Gaussian law of the trained outputs f_t(X_test) over initializations.

    Returned by :func:`trained_ensemble_law`; a leading time axis when ``t`` is an
    array.

    Attributes:
        mean: E f_t(X_test), shape t.shape + (n_test,).
        covariance: Cov f_t(X_test), shape t.shape + (n_test, n_test).

    Example:
        >>> from lecturekit import regression
        >>> law = regression.EnsembleLaw(jnp.zeros(2), jnp.eye(2))
        >>> law.mean.shape, law.covariance.shape
        ((2,), (2, 2))
    """

    mean: jax.Array
    covariance: jax.Array


def trained_ensemble_law(
    ntk: ArrayLike,
    nngp: ArrayLike,
    y: ArrayLike,
    t: ArrayLike,
    *,
    lr: float | None = None,
) -> EnsembleLaw:
    """Mean and covariance of f_t on test inputs for an ensemble of linearized networks.

    The model is the linearization of a network at its random initialization, trained by
    gradient flow on L = (1/2n) sum_i (f(x_i) - y_i)^2: with a fixed tangent kernel
    Theta,

        f_t(x) = f_0(x) + Theta(x, S) M_t (y - f_0(S)),   M_t = Theta^(-1) (I - exp(-t
        Theta / n)).

    If f_0 is a centred Gaussian process with covariance K and Theta does not depend on
    the initialization (both hold at infinite width: K is the NNGP, Theta the NTK), f_t
    is Gaussian, with mean Theta(x, S) M_t y and covariance

        K(x, x') - Theta(x, S) M_t K(S, x') - K(x, S) M_t Theta(S, x')
                 + Theta(x, S) M_t K(S, S) M_t Theta(S, x')

    (Lee et al. 2019; the same formula as neural-tangents'
    ``gradient_descent_mse_ensemble``). At t = 0 it is the prior (0, K); with Theta = K
    (only the readout trained) and t -> inf, the noise-free GP posterior of K. With
    ``lr`` the law is that of gradient descent with step lr for t / lr steps: exp(-t
    Theta / n) becomes (I - lr Theta / n)^(t / lr), which is exact for the linearized
    model. Evaluated in the eigenbasis of Theta(S, S), like
    :func:`gradient_flow_predictor` (finite for a singular kernel).

    Args:
        ntk: the tangent kernel Theta on the inputs (S, X_test), shape (n + m, n + m):
            the n training inputs first (n = len(y)), then the m test inputs.
        nngp: the covariance K of f_0 on the same inputs, same shape.
        y: training labels, shape (n,).
        t: a time >= 0 or an array of times (a leading axis of the result).
        lr: optional step size > 0: gradient descent instead of gradient flow; t / lr
            must be a whole number of steps.

    Returns:
        An :class:`EnsembleLaw` (mean, covariance) on the m test inputs.

    Raises:
        ValueError: if the kernels are not square of one shape, y has n >= n + m rows, a
            time is negative, or t / lr is not a whole number.

    Example:
        >>> from lecturekit import regression
        >>> k = jnp.array([[1.0, 0.5], [0.5, 1.0]])   # a training and a test input
        >>> law = regression.trained_ensemble_law(k, k, jnp.array([2.0]), 1e9)
        >>> float(law.mean[0]), float(law.covariance[0, 0])   # the GP posterior
        (1.0, 0.75)
    """
    theta = _array(ntk, name="ntk", ndim=2, nonempty=True)
    k = _array(nngp, name="nngp", ndim=2, nonempty=True)
    if theta.shape[0] != theta.shape[1]:
        raise ValueError(
            "ntk must be a square Gram matrix on (S, X_test), got shape "
            f"{tuple(theta.shape)}"
        )
    if k.shape != theta.shape:
        raise ValueError(
            f"nngp must have the shape of ntk {tuple(theta.shape)}, got "
            f"{tuple(k.shape)}"
        )
    y = _array(y, name="y", ndim=1, nonempty=True)
    n = y.shape[0]
    if n >= theta.shape[0]:
        raise ValueError(
            f"y has {n} labels, so ntk and nngp need more than {n} rows (the training "
            "inputs first, "
            f"then at least one test input); got shape {tuple(theta.shape)}"
        )
    times = _array(t, name="t")
    check_range(times, name="t", lo=0.0, what="a training time")
    if lr is None:
        steps = None
    else:
        lr = check_real(lr, name="lr", positive=True)
        steps = times / lr
        concrete_steps = np.asarray(steps) if not _traced(steps) else None
        if concrete_steps is not None and np.any(
            np.abs(concrete_steps - np.round(concrete_steps))
            > 1e-9 * (1 + concrete_steps)
        ):
            raise ValueError(
                "t / lr must be a whole number of gradient-descent steps, got t / lr "
                f"= {concrete_steps}"
            )
    return EnsembleLaw(*_run_law(theta, k, y, times, steps, lr))


def _run_law(theta, k, y, times, steps, lr):
    arrays = (theta, k, y, times) if steps is None else (theta, k, y, times, steps)
    if _traced(*arrays):
        return _law(jnp, *arrays, lr=lr)
    out = _law(np, *(np.asarray(a) for a in arrays), lr=lr)
    return tuple(jnp.asarray(o) for o in out)


def _law(xp, theta, k, y, times, steps=None, *, lr=None):
    n = y.shape[0]
    mu, u = xp.linalg.eigh(0.5 * (theta[:n, :n] + theta[:n, :n].T))
    if steps is None:
        factor = _flow_factor(xp, mu, times, n)  # (..., n): (1 - exp(-t mu / n)) / mu
    else:
        a = lr * mu / n
        small = xp.abs(a) < 1e-12
        safe_mu = xp.where(small, 1.0, mu)
        power = 1.0 - (1.0 - a) ** xp.round(steps)[..., None]
        factor = xp.where(small, xp.round(steps)[..., None] * lr / n, power / safe_mu)
    # Theta(*, S) M_t
    a_op = xp.einsum("tk,...k,jk->...tj", theta[n:, :n] @ u, factor, u)
    mean = a_op @ y
    k_st = k[:n, n:]
    cross = a_op @ k_st  # Theta(*, S) M_t K(S, *)
    cov = (
        k[n:, n:]
        - cross
        - xp.swapaxes(cross, -1, -2)
        + a_op @ k[:n, :n] @ xp.swapaxes(a_op, -1, -2)
    )
    return mean, cov
