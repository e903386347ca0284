"""Implicit bias of gradient methods: diagonal linear networks, max-margin, SGD noise.

Three models, each with an independent reference to compare the training dynamics with.

**Diagonal linear networks** (Woodworth et al. 2020). Parameters theta_+, theta_- in R^d,
linear predictor beta = theta_+**2 - theta_-**2, loss
L = 1/2 sum_n (<beta, x_n> - y_n)**2, initialisation theta_+ = theta_- = alpha * theta0.
Gradient flow converges to argmin Q_{alpha, theta0}(beta) subject to X beta = y, with

    q(z) = 2 - sqrt(4 + z**2) + z * arcsinh(z / 2),
    Q_{alpha, theta0}(beta) = sum_i alpha**2 theta0_i**2 q(beta_i / (alpha**2 theta0_i**2)).

:func:`train_diagonal_net` runs the dynamics, :func:`argmin_Q` solves the convex program
through its dual (:func:`argmin_Q_primal`, slower, on the primal), :func:`min_l1_interpolant`
and :func:`min_weighted_l2_interpolant` give the alpha -> 0 and alpha -> infinity limits;
:func:`sparse_regression_problem` draws the test problems.

**Max-margin** (Soudry et al. 2018). Gradient descent on the exponential or logistic loss
of linearly separable data (no bias) diverges in norm along the hard-margin SVM direction:
:func:`train_linear_classifier` and :func:`hard_margin_svm`.

**SGD noise.** Fluctuation-dissipation relations (Yaida 2019) for least squares with
Bernoulli mini-batches (:func:`sgd_least_squares_fdr`, :func:`batch_second_moment_trace`);
SGD with label noise on a circle with a sharp and a flat minimum
(:func:`circle_sgd_occupation`, :func:`circle_chain_stationary`, :func:`circle_fokker_planck`);
the two-speed random walk (:func:`two_speed_transition_matrix`, :func:`two_speed_chain_stationary`,
:func:`two_speed_walk_occupation`).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy import optimize

from ._validation import (
    as_float_array, check_broadcastable, check_choice, check_key, check_positive_int, check_range, check_real,
    concrete, warn_if_below_precision,
)

# ---------------------------------------------------------------------------------------
# Diagonal linear networks
# ---------------------------------------------------------------------------------------


def q(z: ArrayLike) -> jax.Array:
    """The potential of diagonal networks: q(z) = 2 - sqrt(4 + z^2) + z arcsinh(z/2).

    q(0) = 0, q'(z) = arcsinh(z/2), q''(z) = 1/sqrt(4 + z^2) > 0 (strictly convex), q even;
    q(z) = z^2/4 - z^4/192 + O(z^6) near 0 and
    q(z) = |z| log|z| - |z| + 2 - 1/|z| + O(|z|^-3) at infinity (natural logarithm).
    Evaluated as z arcsinh(z/2) - z^2 / (2 + sqrt(4 + z^2)) to avoid cancellation at small z.
    """
    z = as_float_array(z, name="z")
    return z * jnp.arcsinh(z / 2.0) - z**2 / (2.0 + jnp.sqrt(4.0 + z**2))


def _theta0(theta0: ArrayLike | None, d: int) -> jax.Array:
    if theta0 is None:
        return jnp.ones(d)
    t = as_float_array(theta0, name="theta0", ndim=1)
    if t.shape[0] != d:
        raise ValueError(f"theta0 must have {d} entries (one per coordinate of beta), got {t.shape[0]}")
    # a zero entry would freeze its coordinate
    check_range(t, name="theta0", lo=0.0, lo_open=True, what="a vector of initialization scales")
    return t


def Q(beta: ArrayLike, alpha: float, theta0: ArrayLike | None = None) -> jax.Array:
    """Implicit regularizer Q_{alpha,theta0}(beta) = sum_i s_i q(beta_i / s_i), s_i = alpha^2 theta0_i^2.

    ``beta`` has shape (d,) (or (..., d): Q is taken over the last axis); ``theta0`` defaults
    to ones. Strictly convex in beta; gradient arcsinh(beta_i / (2 s_i)).
    """
    b = as_float_array(beta, name="beta")
    if b.ndim < 1:
        raise ValueError("beta must be at least 1-D")
    a = check_real(alpha, name="alpha", positive=True)
    s = a**2 * _theta0(theta0, b.shape[-1]) ** 2
    return jnp.sum(s * q(b / s), axis=-1)


def _check_regression(X: ArrayLike, y: ArrayLike) -> tuple[jax.Array, jax.Array]:
    Xa = as_float_array(X, name="X", ndim=2)
    ya = as_float_array(y, name="y", ndim=1)
    if ya.shape[0] != Xa.shape[0]:
        raise ValueError(f"y must have one entry per row of X ({Xa.shape[0]}), got {ya.shape[0]}")
    return Xa, ya


class DiagonalNetResult(NamedTuple):
    """Outcome of :func:`train_diagonal_net` with ``return_info=True``."""

    beta: jax.Array
    theta_plus: jax.Array
    theta_minus: jax.Array
    steps: int
    time: float  # gradient-flow time reached, sum of the step sizes
    residual: float  # ||X beta - y|| at the end


_BLOCK = 8
_STABILITY = 0.25


@jax.jit
def _diagonal_gd(X, y, start, step_scale, tol, max_steps):
    abs_x = jnp.abs(X)
    col = abs_x.T @ jnp.ones(X.shape[0])
    spectral_sq = jnp.linalg.norm(X, ord=2) ** 2
    target = tol * jnp.linalg.norm(y)

    def residual(tp, tm):
        return X @ (tp**2 - tm**2) - y

    def cond(state):
        _, _, k, _, rnorm = state
        return (rnorm > target) & (k < max_steps)

    def gd_step(_, state):
        tp, tm, k, t = state
        g = X.T @ residual(tp, tm)
        # bound on the Hessian: 4 lambda_max(X diag(w) X^T) + 2 max|g|, w = tp^2 + tm^2, with
        # lambda_max(X diag(w) X^T) <= min(Gershgorin row sum, ||X||_2^2 max w)
        w = tp**2 + tm**2
        gram = jnp.minimum(jnp.max(abs_x @ (w * col)), spectral_sq * jnp.max(w))
        gmax = jnp.max(jnp.abs(g))
        curvature = 4.0 * gram + 2.0 * gmax
        # stability: eta * curvature <= 1/4; accuracy: each factor 1 -+ 2 eta g_i within step_scale of 1
        eta = jnp.minimum(_STABILITY / curvature, step_scale / (2.0 * gmax + 1e-300))
        return tp - 2.0 * eta * g * tp, tm + 2.0 * eta * g * tm, k + 1, t + eta

    def body(state):  # a block of _BLOCK steps between convergence tests (amortizes loop overhead)
        tp, tm, k, t, _ = state
        tp, tm, k, t = jax.lax.fori_loop(0, _BLOCK, gd_step, (tp, tm, k, t), unroll=True)
        return tp, tm, k, t, jnp.linalg.norm(residual(tp, tm))

    init = (start, start, jnp.asarray(0), jnp.asarray(0.0, start.dtype), jnp.linalg.norm(residual(start, start)))
    return jax.lax.while_loop(cond, body, init)


def train_diagonal_net(
    X: ArrayLike,
    y: ArrayLike,
    *,
    alpha: float,
    theta0: ArrayLike | None = None,
    step_scale: float = 0.02,
    tol: float = 1e-9,
    max_steps: int = 5_000_000,
    return_info: bool = False,
) -> jax.Array | DiagonalNetResult:
    """Gradient flow of a diagonal linear network; returns beta = theta_+^2 - theta_-^2 at convergence.

    Loss L = 1/2 sum_n (<theta_+^2 - theta_-^2, x_n> - y_n)^2 with X of shape (N, d),
    started at theta_+ = theta_- = alpha * theta0 (theta0 = ones by default, so beta(0) = 0).
    The flow is followed by gradient descent
    theta_+- <- theta_+- -+ 2 eta (X^T r) * theta_+-,  r = X beta - y, g = X^T r,
    with a step adapted at every iteration to the local curvature and gradient:
    eta = min(1/4 / lambda, step_scale / (2 max_i |g_i|)), where
    lambda = 4 min(max_n (|X| diag(w) |X|^T 1)_n, ||X||_2^2 max_i w_i) + 2 max_i |g_i|,
    w = theta_+^2 + theta_-^2, bounds the largest Hessian eigenvalue (Gershgorin / spectral
    norm): one rule serves the stiff large-alpha regime and the slow small-alpha one.
    Why the second bound: GD multiplies theta_+- by (1 -+ 2 eta g) instead of the flow's
    exp(-+ 2 eta g), so its limit is the flow's limit for the shape theta0 * exp(-delta),
    delta_i = sum over steps of 2 eta^2 g_i^2 + ..., which is O(step_scale). The relative
    distance to argmin Q is about 0.03-0.1 * step_scale at alpha = 0.05 on sparse Gaussian problems.
    Stops when ||r|| <= tol * ||y||; raises RuntimeError if that needs more than ``max_steps``.
    """
    Xa, ya = _check_regression(X, y)
    a = check_real(alpha, name="alpha", positive=True)
    c = check_real(step_scale, name="step_scale", positive=True)
    if c > 1.0:
        raise ValueError(f"step_scale must be in (0, 1] (a fraction of the stable step), got {step_scale}")
    tol_ = check_real(tol, name="tol", positive=True)
    n_max = check_positive_int(max_steps, name="max_steps")
    t0 = _theta0(theta0, Xa.shape[1])
    # the residual is computed in Xa's dtype: a tol below its rounding is never reached
    warn_if_below_precision(tol_, Xa.dtype)
    tp, tm, steps, time, rnorm = _diagonal_gd(Xa, ya, a * t0, c, tol_, n_max)
    steps, rnorm = int(steps), float(rnorm)
    if rnorm > tol_ * float(jnp.linalg.norm(ya)):
        raise RuntimeError(
            f"train_diagonal_net did not reach ||X beta - y|| <= {tol_:g} ||y|| in {n_max} steps "
            f"(residual {rnorm:.3g}); increase max_steps or tol, or check that X beta = y is solvable"
        )
    beta = tp**2 - tm**2
    if return_info:
        return DiagonalNetResult(beta, tp, tm, steps, float(time), rnorm)
    return beta


def argmin_Q(
    X: ArrayLike, y: ArrayLike, *, alpha: float, theta0: ArrayLike | None = None, tol: float = 1e-11
) -> jax.Array:
    """argmin Q_{alpha,theta0}(beta) subject to X beta = y, by Newton's method on the dual.

    KKT: arcsinh(beta_i / (2 s_i)) = (X^T nu)_i, i.e. beta(nu) = 2 s sinh(X^T nu) with
    s = alpha^2 theta0^2; nu minimizes the smooth convex dual D(nu) = sum_i 2 s_i cosh((X^T nu)_i) - nu.y,
    whose gradient is X beta(nu) - y. Needs X of full row rank (N <= d). Stops when
    ||X beta - y|| <= tol ||y|| or when the Newton step reaches rounding level.
    """
    Xa, ya = _check_regression(X, y)
    a = check_real(alpha, name="alpha", positive=True)
    tol = check_real(tol, name="tol", positive=True)
    Xn = np.asarray(Xa, float)
    yn = np.asarray(ya, float)
    s2 = 2.0 * a**2 * np.asarray(_theta0(theta0, Xn.shape[1]), float) ** 2
    if np.linalg.matrix_rank(Xn) < Xn.shape[0]:
        raise ValueError("X must have full row rank (independent equations) for argmin_Q")

    def dual(nu):
        with np.errstate(over="ignore"):  # cosh overflows to inf on rejected line-search trials
            return np.sum(s2 * np.cosh(Xn.T @ nu)) - nu @ yn

    nu = np.zeros(Xn.shape[0])
    scale = max(np.linalg.norm(yn), 1e-300)
    for _ in range(500):
        u = Xn.T @ nu
        grad = Xn @ (s2 * np.sinh(u)) - yn
        if np.linalg.norm(grad) <= tol * scale:
            break
        hess = (Xn * (s2 * np.cosh(u))) @ Xn.T
        step = np.linalg.solve(hess, grad)
        t, f0, slope = 1.0, dual(nu), grad @ step
        while dual(nu - t * step) > f0 - 0.25 * t * slope and t > 1e-14:
            t *= 0.5
        nu = nu - t * step
        if t * np.linalg.norm(step) <= 1e-15 * (1.0 + np.linalg.norm(nu)):  # rounding level
            break
    else:
        raise RuntimeError("argmin_Q: Newton's method did not converge in 500 iterations")
    return jnp.asarray(s2 * np.sinh(Xn.T @ nu))


def min_l1_interpolant(X: ArrayLike, y: ArrayLike) -> jax.Array:
    """argmin ||beta||_1 subject to X beta = y, as the linear program over beta = u - v, u, v >= 0."""
    Xa, ya = _check_regression(X, y)
    Xn, yn = np.asarray(Xa, float), np.asarray(ya, float)
    d = Xn.shape[1]
    res = optimize.linprog(
        np.ones(2 * d), A_eq=np.hstack([Xn, -Xn]), b_eq=yn, bounds=(0, None), method="highs"
    )
    if res.status != 0:
        raise ValueError(f"min_l1_interpolant: the linear program failed ({res.message})")
    return jnp.asarray(res.x[:d] - res.x[d:])


def min_weighted_l2_interpolant(X: ArrayLike, y: ArrayLike, theta0: ArrayLike | None = None) -> jax.Array:
    """argmin sum_i beta_i^2 / theta0_i^2 subject to X beta = y: beta = W X^T (X W X^T)^{-1} y, W = diag(theta0^2)."""
    Xa, ya = _check_regression(X, y)
    w = _theta0(theta0, Xa.shape[1]) ** 2
    return w * (Xa.T @ jnp.linalg.solve((Xa * w) @ Xa.T, ya))


class SparseProblem(NamedTuple):
    """Outcome of :func:`sparse_regression_problem`: design, noiseless labels, sparse truth."""

    X: jax.Array  # (n, d)
    y: jax.Array  # (n,) = X @ beta
    beta: jax.Array  # (d,), k non-zero entries


def sparse_regression_problem(key: jax.Array, *, n: int = 20, d: int = 40, k: int = 3) -> SparseProblem:
    """Gaussian design X (n x d, entries N(0, 1)), k-sparse truth, noiseless labels y = X beta.

    The support is k coordinates drawn without replacement; each non-zero entry is
    +-(0.5 + U[0, 1]) with a fair random sign. The key is split into four (design, support,
    signs, magnitudes), so the same key always gives the same problem.
    """
    check_key(key)
    n_, d_ = check_positive_int(n, name="n"), check_positive_int(d, name="d")
    k_ = check_positive_int(k, name="k")
    if k_ > d_:
        raise ValueError(f"k must be <= d = {d_} (the number of non-zero coordinates), got {k}")
    k_x, k_supp, k_sign, k_mag = jax.random.split(key, 4)
    X = jax.random.normal(k_x, (n_, d_))
    support = jax.random.choice(k_supp, d_, (k_,), replace=False)
    signs = jnp.where(jax.random.bernoulli(k_sign, 0.5, (k_,)), 1.0, -1.0)
    beta = jnp.zeros(d_).at[support].set(signs * (0.5 + jax.random.uniform(k_mag, (k_,))))
    return SparseProblem(X, X @ beta, beta)


def argmin_Q_primal(X: ArrayLike, y: ArrayLike, *, alpha: float, theta0: ArrayLike | None = None) -> jax.Array:
    """argmin Q_{alpha,theta0}(beta) subject to X beta = y, by scipy's trust-constr on the primal.

    An independent reference for :func:`argmin_Q` (which works on the dual): it uses only
    Q, its gradient arcsinh(beta_i / (2 s_i)) and its diagonal Hessian
    1 / (s_i sqrt(4 + (beta_i/s_i)^2)), s = alpha^2 theta0^2, starting from the minimum-norm
    interpolant; the objective is divided by its starting value so that the tolerances
    (gtol 1e-12, xtol 1e-14) mean the same thing for every alpha. Slower than argmin_Q.
    """
    Xa, ya = _check_regression(X, y)
    a = check_real(alpha, name="alpha", positive=True)
    Xn, yn = np.asarray(Xa, float), np.asarray(ya, float)
    s = a**2 * np.asarray(_theta0(theta0, Xn.shape[1]), float) ** 2

    def qf(u):
        return u * np.arcsinh(u / 2) - u * u / (2 + np.sqrt(4 + u * u))

    start = np.linalg.lstsq(Xn, yn, rcond=None)[0]
    scale = max(float(np.sum(s * qf(start / s))), 1e-300)
    res = optimize.minimize(
        lambda b: np.sum(s * qf(b / s)) / scale, start,
        jac=lambda b: np.arcsinh(b / (2 * s)) / scale,
        hess=lambda b: np.diag(1 / (s * np.sqrt(4 + (b / s) ** 2))) / scale,
        method="trust-constr", constraints=[optimize.LinearConstraint(Xn, yn, yn)],
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000},
    )
    return jnp.asarray(res.x)


# ---------------------------------------------------------------------------------------
# Max-margin
# ---------------------------------------------------------------------------------------


class SVMSolution(NamedTuple):
    """Hard-margin SVM through the origin: w = sum_i a_i y_i x_i; support = {i : a_i > 0}."""

    w: jax.Array
    dual: jax.Array
    support: jax.Array  # boolean mask


def _check_classification(X: ArrayLike, y: ArrayLike) -> tuple[jax.Array, jax.Array]:
    Xa = as_float_array(X, name="X", ndim=2)
    ya = as_float_array(y, name="y", ndim=1)
    if ya.shape[0] != Xa.shape[0]:
        raise ValueError(f"y must have one label per row of X ({Xa.shape[0]}), got {ya.shape[0]}")
    labels = concrete(ya)
    if labels is not None and not np.all(np.abs(labels) == 1.0):
        raise ValueError("y must contain labels +1 and -1 only")
    return Xa, ya


def hard_margin_svm(X: ArrayLike, y: ArrayLike, *, support_tol: float = 1e-7) -> SVMSolution:
    """min ||w||^2/2 subject to y_i <w, x_i> >= 1 (no bias), solved through its dual.

    Dual: max_a sum_i a_i - 1/2 sum_ij a_i a_j y_i y_j <x_i, x_j> over a >= 0 (bounded
    quasi-Newton, L-BFGS-B), then polished by solving the active constraints on the support
    exactly. KKT: w = sum_i a_i y_i x_i, a_i (y_i <w, x_i> - 1) = 0, so the
    support vectors {i : a_i > 0} sit on the margin. Raises ValueError if the data are not
    linearly separable through the origin.
    """
    Xa, ya = _check_classification(X, y)
    support_tol = check_real(support_tol, name="support_tol", nonnegative=True)
    Z = np.asarray(ya, float)[:, None] * np.asarray(Xa, float)  # on the host: no compilation
    G = Z @ Z.T
    n = Z.shape[0]
    res = optimize.minimize(
        lambda a: 0.5 * a @ G @ a - a.sum(), np.zeros(n), jac=lambda a: G @ a - 1.0,
        method="L-BFGS-B", bounds=[(0.0, None)] * n,
        options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 20_000},
    )
    a = res.x
    support = a > support_tol * max(a.max(), 1.0)
    if support.any():  # polish: on the support, Z_S Z_S^T a_S = 1 (active constraints) exactly
        a_s = np.linalg.lstsq(G[np.ix_(support, support)], np.ones(support.sum()), rcond=None)[0]
        polished = np.zeros(n)
        polished[support] = a_s
        if np.all(a_s > 0) and np.min(Z @ (Z.T @ polished)) >= 1.0 - 1e-12:
            a = polished
    w = Z.T @ a
    margins = Z @ w
    if not np.isfinite(res.fun) or np.min(margins) < 1.0 - 1e-5 or np.linalg.norm(w) > 1e8:
        raise ValueError("hard_margin_svm: the data are not linearly separable through the origin")
    return SVMSolution(jnp.asarray(w), jnp.asarray(a), jnp.asarray(a > support_tol * max(a.max(), 1.0)))


def angle(u: ArrayLike, v: ArrayLike) -> jax.Array:
    """Angle (radians) between u and v along the last axis: 2 arctan(|u^ - v^| / |u^ + v^|), u^ = u/|u|.

    This form (Kahan's) is accurate for tiny angles, where arccos of the cosine loses half the digits.
    """
    a = as_float_array(u, name="u", min_ndim=1)
    b = as_float_array(v, name="v", min_ndim=1)
    check_broadcastable(u=a, v=b)
    for name, arr in (("u", a), ("v", b)):
        host = concrete(arr)
        if host is not None and np.any(np.linalg.norm(host, axis=-1) == 0):
            raise ValueError(f"{name} must be non-zero along the last axis (an angle needs a direction)")
    a = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
    b = b / jnp.linalg.norm(b, axis=-1, keepdims=True)
    return 2.0 * jnp.arctan2(jnp.linalg.norm(a - b, axis=-1), jnp.linalg.norm(a + b, axis=-1))


_LOSSES = {
    "exp": lambda u: jnp.exp(-u),
    "logistic": lambda u: jnp.logaddexp(0.0, -u),
}


@partial(jax.jit, static_argnames=("loss",))
def _gd_classifier(Z, w, lr, n, loss):
    grad = jax.grad(lambda w: jnp.mean(_LOSSES[loss](Z @ w)))
    blocks, rest = divmod(n, 8)

    def block(_, w):
        return jax.lax.fori_loop(0, 8, lambda _, v: v - lr * grad(v), w, unroll=True)

    w = jax.lax.fori_loop(0, blocks, block, w)
    return jax.lax.fori_loop(0, rest, lambda _, v: v - lr * grad(v), w)


def train_linear_classifier(
    X: ArrayLike,
    y: ArrayLike,
    checkpoints: ArrayLike,
    *,
    loss: str = "exp",
    lr: float | None = None,
    w0: ArrayLike | None = None,
) -> jax.Array:
    """Gradient descent on L(w) = (1/N) sum_i loss(y_i <w, x_i>); returns w at each checkpoint.

    ``loss`` is "exp" (e^{-u}) or "logistic" (log(1 + e^{-u})). ``checkpoints`` is an
    increasing sequence of step counts; the result has shape (len(checkpoints), d).
    The default step lr = 1 / max_i ||x_i||^2 keeps lr * lambda_max(Hessian) <= L(w) <= 1 from w0 = 0.
    """
    Xa, ya = _check_classification(X, y)
    check_choice(loss, sorted(_LOSSES), name="loss")
    if isinstance(checkpoints, (str, bytes)) or checkpoints is None:
        raise TypeError(f"checkpoints must be a sequence of step counts, got {type(checkpoints).__name__}")
    ts = np.asarray(checkpoints)
    if ts.dtype == object or not (np.issubdtype(ts.dtype, np.integer) or ts.size == 0):
        raise TypeError(f"checkpoints must be integers (step counts), got dtype {ts.dtype}")
    if ts.ndim != 1 or ts.size == 0 or not np.issubdtype(ts.dtype, np.integer) or np.any(np.diff(ts) <= 0) or ts[0] < 0:
        raise ValueError("checkpoints must be a non-empty increasing 1-D sequence of non-negative integers")
    lr = None if lr is None else check_real(lr, name="lr", positive=True)
    w = jnp.zeros(Xa.shape[1]) if w0 is None else as_float_array(w0, name="w0", ndim=1)
    if w.shape != (Xa.shape[1],):
        raise ValueError(f"w0 must have shape ({Xa.shape[1]},) (one weight per column of X), got {tuple(w.shape)}")
    Z = ya[:, None] * Xa
    rate = 1.0 / float(jnp.max(jnp.sum(Xa**2, axis=1))) if lr is None else lr
    out, done = [], 0
    for t in ts:
        w = _gd_classifier(Z, w, rate, int(t) - done, loss)
        done = int(t)
        out.append(w)
    return jnp.stack(out)


# ---------------------------------------------------------------------------------------
# SGD: fluctuation-dissipation relations for least squares with Bernoulli batches
# ---------------------------------------------------------------------------------------


def batch_second_moment_trace(theta: ArrayLike, X: ArrayLike, y: ArrayLike, batch: float) -> jax.Array:
    """tr C~(theta) for L = (1/m) sum_k (x_k.theta - y_k)^2 / 2 and Bernoulli mini-batches.

    Each example enters the batch independently with probability p = batch/m and
    L^B = (1/batch) sum_{k in B} l_k, so E[grad L^B] = grad L and
    C~_ii = E[(d_i L^B)^2] = C_ii + (d_i L)^2 with C = (p (1 - p) / batch^2) sum_k g_k g_k^T,
    g_k = (x_k.theta - y_k) x_k. Returns tr C~ for theta of shape (n,) or (..., n).
    """
    Xa, ya = _check_regression(X, y)
    th = as_float_array(theta, name="theta", min_ndim=1)
    if th.shape[-1] != Xa.shape[1]:
        raise ValueError(
            f"theta must have {Xa.shape[1]} entries along its last axis (columns of X), got shape {tuple(th.shape)}"
        )
    b = check_real(batch, name="batch", positive=True)
    m = Xa.shape[0]
    if b > m:
        raise ValueError(f"batch must be <= the number of examples {m}, got {batch}")
    return _trace_c_tilde(th, Xa, ya, b)


def _trace_c_tilde(theta, X, y, b):
    m = X.shape[0]
    p = b / m
    r = theta @ X.T - y  # (..., m)
    sq = jnp.sum(X**2, axis=1)
    full = (r @ X) / m
    return p * (1 - p) / b**2 * jnp.sum(r**2 * sq, axis=-1) + jnp.sum(full**2, axis=-1)


class FDRAverages(NamedTuple):
    """Per-chain time averages over the stationary part of SGD runs (arrays of shape (chains, ...))."""

    grad: jax.Array  # <grad L>, (chains, n)
    alignment: jax.Array  # <(theta - center) . grad L>, (chains,)
    half_lr_trace: jax.Array  # (lr / 2) <tr C~>, (chains,)
    loss: jax.Array  # <L>, (chains,)


def sgd_least_squares_fdr(
    key: jax.Array,
    X: ArrayLike,
    y: ArrayLike,
    *,
    lr: float,
    batch: float,
    steps: int,
    burn_in: int,
    chains: int,
    center: ArrayLike | None = None,
) -> FDRAverages:
    """Run ``chains`` independent SGD chains on least squares with Bernoulli batches; time-average.

    Update theta <- theta - lr grad L^B(theta) (see :func:`batch_second_moment_trace`),
    theta(0) = center (default: the least-squares minimizer theta*). The averages are taken
    over steps burn_in, ..., steps - 1. At stationarity the fluctuation-dissipation relations
    say <grad L> = 0 and <(theta - c) . grad L> = (lr/2) <tr C~> exactly, for any fixed c.
    """
    Xa, ya = _check_regression(X, y)
    eta = check_real(lr, name="lr", positive=True)
    b = check_real(batch, name="batch", positive=True)
    if b > Xa.shape[0]:
        raise ValueError(f"batch must be <= the number of examples {Xa.shape[0]}, got {batch}")
    n_steps = check_positive_int(steps, name="steps")
    n_burn = check_positive_int(burn_in, name="burn_in", minimum=0)
    if n_burn >= n_steps:
        raise ValueError(f"burn_in must be < steps, got burn_in={burn_in}, steps={steps}")
    n_chains = check_positive_int(chains, name="chains")
    check_key(key)
    c = (jnp.linalg.lstsq(Xa, ya)[0] if center is None else as_float_array(center, name="center", ndim=1))
    if c.shape != (Xa.shape[1],):
        raise ValueError(f"center must have shape ({Xa.shape[1]},) (one entry per column of X), got {tuple(c.shape)}")
    return _fdr_run(key, Xa, ya, c, eta, b, n_steps, n_burn, n_chains)


@partial(jax.jit, static_argnames=("steps", "burn_in", "chains"))
def _fdr_run(key, X, y, center, lr, b, steps, burn_in, chains):
    m, n = X.shape
    p = b / m

    def grad_full(theta):
        return ((theta @ X.T - y) @ X) / m

    def step(carry, k):
        theta, sums = carry
        mask = jax.random.bernoulli(k, p, (chains, m)).astype(X.dtype)
        r = theta @ X.T - y
        g_batch = ((mask * r) @ X) / b
        g = grad_full(theta)
        obs = (g, jnp.sum((theta - center) * g, -1), 0.5 * lr * _trace_c_tilde(theta, X, y, b),
               0.5 * jnp.mean(r**2, -1))
        sums = jax.tree.map(lambda s, o: s + o, sums, obs)
        return (theta - lr * g_batch, sums), None

    theta0 = jnp.broadcast_to(center, (chains, n))
    zeros = (jnp.zeros((chains, n)), jnp.zeros(chains), jnp.zeros(chains), jnp.zeros(chains))
    k_burn, k_run = jax.random.split(key)

    def burn(carry, k):
        theta, _ = carry
        mask = jax.random.bernoulli(k, p, (chains, m)).astype(X.dtype)
        return (theta - lr * ((mask * (theta @ X.T - y)) @ X) / b, None), None

    (theta, _), _ = jax.lax.scan(burn, (theta0, None), jax.random.split(k_burn, burn_in)) if burn_in else ((theta0, None), None)
    (theta, sums), _ = jax.lax.scan(step, (theta, zeros), jax.random.split(k_run, steps - burn_in))
    count = steps - burn_in
    return FDRAverages(*(s / count for s in sums))


# ---------------------------------------------------------------------------------------
# SGD with label noise on a circle: a sharp and a flat minimum
# ---------------------------------------------------------------------------------------


def circle_model(theta: ArrayLike, kappa: float) -> tuple[jax.Array, jax.Array]:
    """f(theta) = sin(theta) (1 + kappa cos(theta)) and f'(theta); the loss is L = f^2 / 2.

    L has two global minima: theta = 0 with curvature L'' = (1 + kappa)^2 (sharp for kappa > 0)
    and theta = pi with curvature (1 - kappa)^2 (flat). Requires |kappa| < 1.
    """
    th = as_float_array(theta, name="theta")
    k = _check_kappa(kappa)
    return _circle_f(th, k)


def _circle_f(th, k, xp=jnp):
    """f and f' with the array module xp (jnp inside compiled code, np on host grids)."""
    f = xp.sin(th) * (1.0 + k * xp.cos(th))
    fp = xp.cos(th) + k * xp.cos(2.0 * th)
    return f, fp


def _circle_step_params(th, kappa, lr, label_sd, tilt_sd, xp=jnp):
    f, fp = _circle_f(th, kappa, xp)
    mean = th - lr * f * fp
    sd = lr * xp.sqrt(label_sd**2 * fp**2 + tilt_sd**2)
    return mean, sd


def circle_sgd_occupation(
    key: jax.Array,
    *,
    kappa: float,
    lr: float,
    label_sd: float,
    tilt_sd: float,
    steps: int,
    burn_in: int,
    chains: int,
) -> jax.Array:
    """Fraction of time each SGD chain spends in the flat basin {cos theta < 0} (around pi).

    One step of online SGD with per-example loss l = (f(theta) - eps)^2 / 2 + z1 cos(theta) + z2 sin(theta),
    eps ~ N(0, label_sd^2) (label noise, batch folded into the sd) and z ~ N(0, tilt_sd^2 I):
    theta <- theta - lr f f' + lr sqrt(label_sd^2 f'^2 + tilt_sd^2) xi, xi ~ N(0, 1).
    The mean loss is f^2 / 2 + const; the gradient noise has variance lr^2 (label_sd^2 f'^2 + tilt_sd^2),
    larger where the loss is sharp (f'^2 = L'' at a minimum) when label_sd > 0.
    Chains start uniformly on the circle; averages over steps burn_in .. steps - 1.
    """
    k = _check_kappa(kappa)
    eta = check_real(lr, name="lr", positive=True)
    ls = check_real(label_sd, name="label_sd", nonnegative=True)
    ts = check_real(tilt_sd, name="tilt_sd", nonnegative=True)
    n_steps = check_positive_int(steps, name="steps")
    n_burn = check_positive_int(burn_in, name="burn_in", minimum=0)
    if n_burn >= n_steps:
        raise ValueError(f"burn_in must be < steps, got burn_in={burn_in}, steps={steps}")
    n_chains = check_positive_int(chains, name="chains")
    check_key(key)
    return _circle_run(key, k, eta, ls, ts, n_steps, n_burn, n_chains)


@partial(jax.jit, static_argnames=("steps", "burn_in", "chains"))
def _circle_run(key, kappa, lr, label_sd, tilt_sd, steps, burn_in, chains):
    k_init, k_run = jax.random.split(key)
    th = jax.random.uniform(k_init, (chains,), minval=-jnp.pi, maxval=jnp.pi)

    def step(carry, k):
        th, acc, t = carry
        mean, sd = _circle_step_params(th, kappa, lr, label_sd, tilt_sd)
        acc = acc + jnp.where(t >= burn_in, (jnp.cos(th) < 0).astype(th.dtype), 0.0)
        th = mean + sd * jax.random.normal(k, th.shape)
        th = jnp.mod(th + jnp.pi, 2 * jnp.pi) - jnp.pi
        return (th, acc, t + 1), None

    (th, acc, _), _ = jax.lax.scan(step, (th, jnp.zeros(chains), 0), jax.random.split(k_run, steps))
    return acc / (steps - burn_in)


def circle_chain_stationary(
    *, kappa: float, lr: float, label_sd: float, tilt_sd: float, grid: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    """Stationary density of the circle SGD chain, from its Gaussian transition kernel on a grid.

    The kernel P(theta -> theta') = N(theta'; mean(theta), sd(theta)^2) (wrapped on the circle,
    see :func:`circle_sgd_occupation`) is discretized on ``grid`` cells of [-pi, pi); the
    stationary vector solves pi = pi P. Returns (cell centres, density).
    """
    k = _check_kappa(kappa)
    eta = check_real(lr, name="lr", positive=True)
    ls = check_real(label_sd, name="label_sd", nonnegative=True)
    ts = check_real(tilt_sd, name="tilt_sd", positive=True)
    n = check_positive_int(grid, name="grid", minimum=16)
    h = 2 * np.pi / n
    th = -np.pi + h * (np.arange(n) + 0.5)
    mean, sd = _circle_step_params(th, k, eta, ls, ts, xp=np)  # host grid: nothing to compile
    diff = th[None, :] - mean[:, None]
    diff = np.mod(diff + np.pi, 2 * np.pi) - np.pi  # nearest image (sd << pi)
    P = np.exp(-0.5 * (diff / sd[:, None]) ** 2)
    P /= P.sum(axis=1, keepdims=True)
    v = _stationary_vector(P)
    return th, v / h


def circle_fokker_planck(
    theta: ArrayLike, *, kappa: float, lr: float, label_sd: float, tilt_sd: float, prefactor: bool = True
) -> np.ndarray:
    """Fokker-Planck (small lr, Ito) approximation of the stationary density of the circle chain.

    With drift a = -lr f f' and variance D = lr^2 (label_sd^2 f'^2 + tilt_sd^2) per step (see
    :func:`circle_sgd_occupation`), the zero-flux stationary solution of
    dp/dt = -(a p)' + (D p)''/2 is p = D^{-1} exp(int 2a/D). The integral is taken by the
    trapezoidal rule on ``theta``, an increasing uniform grid covering one period (it is
    periodic here: a/D is odd about theta = 0). ``prefactor=False`` drops the 1/D factor,
    to separate its effect from that of the position-dependent exponent. Normalized so that
    the density integrates to 1 over the grid (trapezoidal rule).
    """
    th = np.asarray(as_float_array(theta, name="theta", ndim=1), float)
    if th.size < 3 or np.any(np.diff(th) <= 0):
        raise ValueError("theta must be an increasing grid of at least 3 points")
    k = _check_kappa(kappa)
    eta = check_real(lr, name="lr", positive=True)
    ls = check_real(label_sd, name="label_sd", nonnegative=True)
    ts = check_real(tilt_sd, name="tilt_sd", positive=True)
    f, fp = _circle_f(th, k, xp=np)
    D = eta**2 * (ls**2 * fp**2 + ts**2)
    rate = 2 * (-eta * f * fp) / D
    exponent = np.concatenate([[0.0], np.cumsum((rate[1:] + rate[:-1]) / 2 * np.diff(th))])
    dens = np.exp(exponent - exponent.max()) / (D if prefactor else 1.0)
    return dens / np.trapezoid(dens, th)


def _stationary_vector(P: np.ndarray) -> np.ndarray:
    """pi = pi P, sum(pi) = 1 for an irreducible stochastic matrix P (one balance equation replaced)."""
    A = P.T - np.eye(P.shape[0])
    A[-1, :] = 1.0
    rhs = np.zeros(P.shape[0])
    rhs[-1] = 1.0
    return np.linalg.solve(A, rhs)


# ---------------------------------------------------------------------------------------
# The two-speed random walk on the circle
# ---------------------------------------------------------------------------------------


def two_speed_chain_stationary(n_per_half: int, *, slow: int = 1, fast: int = 2) -> np.ndarray:
    """Exact stationary law of the lattice walk on 2n sites of the circle [0, 2 pi).

    Site j sits at theta = j pi / n. From a site in the lower half (j < n) the walk moves
    +-``slow`` sites, from the upper half +-``fast`` sites, each with probability 1/2.
    Returns the stationary probability vector (length 2n), solving pi = pi P. n must be even:
    for odd n (with fast = 2) half of the upper sites are transient and get mass 0.
    """
    n = check_positive_int(n_per_half, name="n_per_half", minimum=2)
    if n % 2:
        raise ValueError(f"n_per_half must be even, got {n_per_half}")
    return _stationary_vector(two_speed_transition_matrix(n, slow=slow, fast=fast))


def two_speed_transition_matrix(n_per_half: int, *, slow: int = 1, fast: int = 2) -> np.ndarray:
    """Transition matrix P (2n x 2n, rows sum to 1) of the two-speed lattice walk.

    P[j, j +- slow] = 1/2 for the lower sites j < n, P[j, j +- fast] = 1/2 for the upper ones,
    indices modulo 2n (see :func:`two_speed_chain_stationary`).
    """
    n = check_positive_int(n_per_half, name="n_per_half", minimum=2)
    s = check_positive_int(slow, name="slow")
    f = check_positive_int(fast, name="fast")
    size = 2 * n
    P = np.zeros((size, size))
    for j in range(size):
        step = s if j < n else f
        P[j, (j + step) % size] += 0.5
        P[j, (j - step) % size] += 0.5
    return P


def two_speed_walk_occupation(
    key: jax.Array, n_per_half: int, *, walkers: int, steps: int, burn_in: int, slow: int = 1, fast: int = 2
) -> jax.Array:
    """Monte Carlo of the two-speed walk: fraction of time each walker spends in the lower half.

    Walkers start uniformly on the 2n sites; averages over steps burn_in .. steps - 1.
    """
    n = check_positive_int(n_per_half, name="n_per_half", minimum=2)
    n_w = check_positive_int(walkers, name="walkers")
    n_steps = check_positive_int(steps, name="steps")
    n_burn = check_positive_int(burn_in, name="burn_in", minimum=0)
    if n_burn >= n_steps:
        raise ValueError(f"burn_in must be < steps, got burn_in={burn_in}, steps={steps}")
    s = check_positive_int(slow, name="slow")
    f = check_positive_int(fast, name="fast")
    check_key(key)
    return _walk_run(key, n, n_w, n_steps, n_burn, s, f)


@partial(jax.jit, static_argnames=("n", "walkers", "steps", "burn_in", "slow", "fast"))
def _walk_run(key, n, walkers, steps, burn_in, slow, fast):
    k_init, k_run = jax.random.split(key)
    pos = jax.random.randint(k_init, (walkers,), 0, 2 * n)

    def step(carry, k):
        pos, acc, t = carry
        lower = pos < n
        acc = acc + jnp.where(t >= burn_in, lower.astype(jnp.float32), 0.0)
        sign = 2 * jax.random.bernoulli(k, 0.5, (walkers,)).astype(pos.dtype) - 1
        pos = jnp.mod(pos + sign * jnp.where(lower, slow, fast), 2 * n)
        return (pos, acc, t + 1), None

    (_, acc, _), _ = jax.lax.scan(step, (pos, jnp.zeros(walkers, jnp.float32), 0), jax.random.split(k_run, steps))
    return acc.astype(jnp.result_type(float)) / (steps - burn_in)


def _check_kappa(kappa) -> float:
    """The asymmetry kappa of f(theta) = sin(theta) (1 + kappa cos(theta)), |kappa| < 1."""
    k = check_real(kappa, name="kappa")
    if abs(k) >= 1:
        raise ValueError(f"kappa must satisfy |kappa| < 1, got {kappa}")
    return k
