r"""Diagonal linear networks and their implicit regularizer (Woodworth et al. 2020).

Parameters :math:`\theta_+, \theta_- \in \mathbb R^d`, linear predictor
:math:`\beta = \theta_+^2 - \theta_-^2` (entrywise), square loss
:math:`\mathcal L = \frac12 \sum_n (\langle \beta, x_n\rangle - y_n)^2` on a design X of
shape (N, d), initialization :math:`\theta_+ = \theta_- = \alpha\,\theta_0`. Gradient
flow converges to :math:`\operatorname{argmin}\{Q_{\alpha,\theta_0}(\beta) : X\beta =
y\}` with

.. math::

    q(z) = 2 - \sqrt{4 + z^2} + z \operatorname{arcsinh}(z/2), \qquad
    Q_{\alpha,\theta_0}(\beta) = \sum_i s_i\, q(\beta_i / s_i), \quad
    s_i = \alpha^2\theta_{0,i}^2.

:func:`train_diagonal_net` integrates the flow; :func:`argmin_Q` solves the convex
program through its dual and :func:`argmin_Q_primal` (slower, independent) on the
primal;
:func:`min_l1_interpolant` and :func:`min_weighted_l2_interpolant` are the
:math:`\alpha \to 0` and :math:`\alpha \to \infty`
limits; :func:`sparse_regression_problem` draws the test problems.

Normalization. The loss here is the sum :math:`\frac12\sum_n`, not the mean
:math:`\frac1{2N}\sum_n` of :func:`lecturekit.training.square_loss`. A constant factor
in the loss only rescales the time of gradient flow (the flow of :math:`c\mathcal L` at
time t is the flow of :math:`\mathcal L` at time ct), so the limit, the only thing these
functions return, is the same for both; only the ``time`` reported by
:func:`train_diagonal_net_info` is in the units of the sum (N times shorter than in
those of the mean).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy import optimize

from .. import sampling as _sampling
from .._validation import (
    as_float_array,
    check_key,
    check_positive_int,
    check_range,
    check_real,
    warn_if_below_precision,
)
from ._checks import check_regression

__all__ = [
    "DiagonalNetInfo",
    "L1Certificate",
    "Q",
    "SparseProblem",
    "argmin_Q",
    "argmin_Q_primal",
    "l1_certificate",
    "min_l1_interpolant",
    "min_weighted_l2_interpolant",
    "q",
    "sparse_regression_problem",
    "train_diagonal_net",
    "train_diagonal_net_info",
]


def q(z: ArrayLike) -> jax.Array:
    r"""The potential of diagonal networks, :math:`q(z) = 2 - \sqrt{4 + z^2} +
    z\operatorname{arcsinh}(z/2)`.

    Properties: q(0) = 0, :math:`q'(z) = \operatorname{arcsinh}(z/2)`,
    :math:`q''(z) = 1/\sqrt{4 + z^2} > 0` (strictly convex), q even;
    :math:`q(z) = z^2/4 - z^4/192 + O(z^6)` near 0 and
    :math:`q(z) = |z|\log|z| - |z| + 2 - 1/|z| + O(|z|^{-3})` at infinity (natural log).
    Evaluated as :math:`z\operatorname{arcsinh}(z/2) - z^2/(2 + \sqrt{4 + z^2})`, which
    avoids the cancellation of the closed form at small z.

    Args:
        z: real array of any shape.

    Returns:
        q(z), elementwise, same shape as ``z``.

    Example:
        >>> from lecturekit import implicit_bias
        >>> [round(float(v), 4) for v in implicit_bias.q([0.0, 1.0, -1.0])]
        [0.0, 0.2451, 0.2451]
    """
    z = as_float_array(z, name="z")
    return z * jnp.arcsinh(z / 2.0) - z**2 / (2.0 + jnp.sqrt(4.0 + z**2))


def _theta0(theta0: ArrayLike | None, d: int) -> jax.Array:
    if theta0 is None:
        return jnp.ones(d)
    t = as_float_array(theta0, name="theta0", ndim=1)
    if t.shape[0] != d:
        raise ValueError(
            f"theta0 must have {d} entries (one per coordinate of beta), got "
            f"{t.shape[0]}"
        )
    # a zero entry would freeze its coordinate
    check_range(
        t, name="theta0", lo=0.0, lo_open=True, what="a vector of initialization scales"
    )
    return t


def Q(beta: ArrayLike, alpha: float, theta0: ArrayLike | None = None) -> jax.Array:
    r"""The implicit regularizer :math:`Q_{\alpha,\theta_0}(\beta) = \sum_i
    s_i\,q(\beta_i/s_i)`, :math:`s_i = \alpha^2\theta_{0,i}^2`.

    Strictly convex in beta, with gradient :math:`\operatorname{arcsinh}(\beta_i/(2
    s_i))`. Its limits: :math:`\alpha^2 Q \to \sum_i \beta_i^2/(4\theta_{0,i}^2)` as
    :math:`\alpha \to \infty`, :math:`Q/\log(1/\alpha^2) \to \|\beta\|_1` as
    :math:`\alpha \to 0`.

    Args:
        beta: shape (d,) or (..., d); Q is taken over the last axis.
        alpha: initialization scale, > 0.
        theta0: initialization shape, shape (d,), positive entries; default ones.

    Returns:
        Q, of shape ``beta.shape[:-1]``.

    Example:
        >>> from lecturekit import implicit_bias
        >>> round(float(implicit_bias.Q([1.0, -1.0], alpha=1.0)), 4)
        0.4903
    """
    b = as_float_array(beta, name="beta")
    if b.ndim < 1:
        raise ValueError("beta must be at least 1-D")
    a = check_real(alpha, name="alpha", positive=True)
    s = a**2 * _theta0(theta0, b.shape[-1]) ** 2
    return jnp.sum(s * q(b / s), axis=-1)


class DiagonalNetInfo(NamedTuple):
    r"""The end of a gradient-flow run of a diagonal network
    (:func:`train_diagonal_net_info`).

    Attributes:
        beta: the predictor :math:`\theta_+^2 - \theta_-^2`, shape (d,).
        theta_plus: :math:`\theta_+` at the end, shape (d,).
        theta_minus: :math:`\theta_-` at the end, shape (d,).
        steps: number of integration steps taken (int).
        time: gradient-flow time reached, the sum of the step sizes, in the units of the
            loss :math:`\frac12\sum_n` (float).
        residual: :math:`\|X\beta - y\|` at the end (float).

    Example:
        >>> from lecturekit import implicit_bias
        >>> implicit_bias.DiagonalNetInfo._fields
        ('beta', 'theta_plus', 'theta_minus', 'steps', 'time', 'residual')
    """

    beta: jax.Array
    theta_plus: jax.Array
    theta_minus: jax.Array
    steps: int
    time: float
    residual: float


_BLOCK = 8  # steps between two convergence tests (amortizes the while loop's overhead)
_STABILITY = 0.25  # eta * (bound on the Hessian) <= _STABILITY


@jax.jit
def _integrate_flow(X, y, start, step_scale, tol, max_iter):
    """Explicit (multiplicative-Euler) integration of the flow with step-size
    control.
    """
    abs_x = jnp.abs(X)
    col = abs_x.T @ jnp.ones(X.shape[0])
    spectral_sq = jnp.linalg.norm(X, ord=2) ** 2
    target = tol * jnp.linalg.norm(y)

    def residual(tp, tm):
        return X @ (tp**2 - tm**2) - y

    def cond(state):
        _, _, k, _, rnorm = state
        return (rnorm > target) & (k < max_iter)

    def step(_, state):
        tp, tm, k, t = state
        g = X.T @ residual(tp, tm)
        # bound on the Hessian: 4 lambda_max(X diag(w) X^T) + 2 max|g|, w = tp^2 + tm^2,
        # with lambda_max(X diag(w) X^T) <= min(Gershgorin row sum, ||X||_2^2 max w)
        w = tp**2 + tm**2
        gram = jnp.minimum(jnp.max(abs_x @ (w * col)), spectral_sq * jnp.max(w))
        gmax = jnp.max(jnp.abs(g))
        curvature = 4.0 * gram + 2.0 * gmax
        # stability: eta * curvature <= 1/4; accuracy: each factor 1 -+ 2 eta g_i within
        # step_scale of 1
        eta = jnp.minimum(_STABILITY / curvature, step_scale / (2.0 * gmax + 1e-300))
        return tp - 2.0 * eta * g * tp, tm + 2.0 * eta * g * tm, k + 1, t + eta

    def block(state):
        tp, tm, k, t, _ = state
        tp, tm, k, t = jax.lax.fori_loop(0, _BLOCK, step, (tp, tm, k, t), unroll=True)
        return tp, tm, k, t, jnp.linalg.norm(residual(tp, tm))

    init = (
        start,
        start,
        jnp.asarray(0),
        jnp.asarray(0.0, start.dtype),
        jnp.linalg.norm(residual(start, start)),
    )
    return jax.lax.while_loop(cond, block, init)


def train_diagonal_net_info(
    X: ArrayLike,
    y: ArrayLike,
    *,
    alpha: float,
    theta0: ArrayLike | None = None,
    step_scale: float = 0.02,
    tol: float = 1e-9,
    max_iter: int = 5_000_000,
) -> DiagonalNetInfo:
    r"""Gradient flow of a diagonal linear network, with the state at its end.

    The flow of :math:`\mathcal L = \frac12\sum_n (\langle\theta_+^2 - \theta_-^2,
    x_n\rangle - y_n)^2` (X of shape (N, d)) from :math:`\theta_\pm = \alpha\theta_0`
    (so :math:`\beta(0) = 0`) is followed by steps

    .. math::

        \theta_\pm \leftarrow \theta_\pm \mp 2\eta\, g \odot \theta_\pm, \quad
        g = X^\top r,\ r = X\beta - y, \qquad
        \eta = \min\Big(\frac{1/4}{\lambda},\ \frac{c}{2\max_i |g_i|}\Big),

    with c = ``step_scale`` and
    :math:`\lambda = 4\min\big(\max_n (|X|\,\mathrm{diag}(w)\,|X|^\top \mathbf 1)_n,\
    \|X\|_2^2\max_i w_i\big) + 2\max_i|g_i|`,
    :math:`w = \theta_+^2 + \theta_-^2`, a bound on the largest Hessian eigenvalue
    (Gershgorin or spectral norm). One rule serves the stiff large-alpha regime and the
    slow small-alpha one (API.md asks for every alpha in [0.05, 20] in seconds). The run
    stops when :math:`\|r\| \le` ``tol`` :math:`\|y\|`.

    Why an integrator of its own rather than :func:`lecturekit.training.descend`: what
    is wanted is the limit of the gradient *flow*, not gradient descent at a chosen
    learning rate. Like an ODE solver's step-size control, the step is recomputed from
    the state at every iteration; the number of steps is not known in advance (from
    hundreds to tens of thousands, depending on alpha and the data) and the loop stops
    on a tolerance. The engine runs a fixed number of steps at a fixed ``lr`` and
    records the loss at every step, which fits none of the three. The accuracy of the
    integrator: gradient descent multiplies :math:`\theta_\pm` by :math:`1 \mp 2\eta g`
    instead of the flow's
    :math:`e^{\mp 2\eta g}`, so its limit is the flow's limit for the shape
    :math:`\sqrt{\theta_+\theta_-}/\alpha` instead of :math:`\theta_0`; that shape
    drifts by O(``step_scale``), and the relative distance to :func:`argmin_Q` is about
    0.03--0.1 times ``step_scale`` at alpha = 0.05 on sparse Gaussian problems.

    Args:
        X: design, shape (N, d).
        y: targets, shape (N,); X beta = y must be solvable.
        alpha: initialization scale, > 0.
        theta0: initialization shape, shape (d,), positive entries; default ones.
        step_scale: accuracy of the integration, in (0, 1] (see above).
        tol: relative residual at which the run stops.
        max_iter: most steps; a run that needs more raises ``RuntimeError``.

    Returns:
        :class:`DiagonalNetInfo` with beta, the final parameters, the number of steps,
        the flow time reached and the final residual.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> X, y = np.array([[1.0, 2.0]]), np.array([1.0])
        >>> run = implicit_bias.train_diagonal_net_info(X, y, alpha=1.0, tol=1e-5)
        >>> bool(abs(float(X[0] @ run.beta) - 1.0) < 1e-5), run.steps > 0
        (True, True)
    """
    Xa, ya = check_regression(X, y)
    a = check_real(alpha, name="alpha", positive=True)
    c = check_real(step_scale, name="step_scale", positive=True)
    if c > 1.0:
        raise ValueError(
            "step_scale must be in (0, 1] (a fraction of the stable step), got "
            f"{step_scale}"
        )
    tol_ = check_real(tol, name="tol", positive=True)
    n_max = check_positive_int(max_iter, name="max_iter")
    t0 = _theta0(theta0, Xa.shape[1])
    # the residual is computed in Xa's dtype: a tol below its rounding is never reached
    warn_if_below_precision(tol_, Xa.dtype)
    tp, tm, steps, time, rnorm = _integrate_flow(Xa, ya, a * t0, c, tol_, n_max)
    steps, rnorm = int(steps), float(rnorm)
    if rnorm > tol_ * float(jnp.linalg.norm(ya)):
        raise RuntimeError(
            f"train_diagonal_net did not reach ||X beta - y|| <= {tol_:g} ||y|| in "
            f"{n_max} steps "
            f"(residual {rnorm:.3g}); increase max_iter or tol, or check that X beta = "
            "y is solvable"
        )
    return DiagonalNetInfo(tp**2 - tm**2, tp, tm, steps, float(time), rnorm)


def train_diagonal_net(
    X: ArrayLike,
    y: ArrayLike,
    *,
    alpha: float,
    theta0: ArrayLike | None = None,
    step_scale: float = 0.02,
    tol: float = 1e-9,
    max_iter: int = 5_000_000,
) -> jax.Array:
    r"""Gradient flow of a diagonal linear network: :math:`\beta = \theta_+^2 -
    \theta_-^2` at convergence.

    The same run as :func:`train_diagonal_net_info` (see there for the loss
    :math:`\frac12\sum_n`, the step rule and why it is an integrator of its own),
    returning only beta. Gradient flow converges to :func:`argmin_Q`.

    Args:
        X: design, shape (N, d).
        y: targets, shape (N,).
        alpha: initialization scale, > 0.
        theta0: initialization shape, shape (d,), positive entries; default ones.
        step_scale: accuracy of the integration, in (0, 1].
        tol: relative residual :math:`\|X\beta - y\|/\|y\|` at which the run stops.
        max_iter: most steps (``RuntimeError`` beyond).

    Returns:
        beta, shape (d,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> X, y = np.array([[1.0, 2.0]]), np.array([1.0])
        >>> beta = implicit_bias.train_diagonal_net(X, y, alpha=1.0, tol=1e-5)
        >>> beta.shape, bool(abs(float(X[0] @ beta) - 1.0) < 1e-5)
        ((2,), True)
    """
    return train_diagonal_net_info(
        X,
        y,
        alpha=alpha,
        theta0=theta0,
        step_scale=step_scale,
        tol=tol,
        max_iter=max_iter,
    ).beta


def argmin_Q(
    X: ArrayLike,
    y: ArrayLike,
    *,
    alpha: float,
    theta0: ArrayLike | None = None,
    tol: float = 1e-11,
    max_iter: int = 500,
) -> jax.Array:
    r""":math:`\operatorname{argmin}\{Q_{\alpha,\theta_0}(\beta) : X\beta = y\}`, by
    Newton's method on the dual.

    KKT: :math:`\operatorname{arcsinh}(\beta_i/(2 s_i)) = (X^\top\nu)_i`, i.e.
    :math:`\beta(\nu) = 2 s \sinh(X^\top\nu)` with :math:`s = \alpha^2\theta_0^2`; the
    multiplier minimizes the smooth convex dual
    :math:`D(\nu) = \sum_i 2 s_i\cosh((X^\top\nu)_i) - \nu\cdot y`, whose gradient is
    :math:`X\beta(\nu) - y`. Damped Newton steps (backtracking line search) stop when
    :math:`\|X\beta - y\| \le` ``tol`` :math:`\|y\|` or when the step reaches rounding
    level. Runs in NumPy on the host.

    Args:
        X: design, shape (N, d), of full row rank (N <= d).
        y: targets, shape (N,).
        alpha: initialization scale, > 0.
        theta0: initialization shape, shape (d,), positive entries; default ones.
        tol: relative residual at which Newton's method stops.
        max_iter: most Newton steps (``RuntimeError`` beyond).

    Returns:
        The minimizer beta, shape (d,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> beta = implicit_bias.argmin_Q(np.array([[1.0, 1.0]]), np.array([1.0]),
        ...                               alpha=1.0)
        >>> np.round(np.asarray(beta), 6).tolist()
        [0.5, 0.5]
    """
    Xa, ya = check_regression(X, y)
    a = check_real(alpha, name="alpha", positive=True)
    tol = check_real(tol, name="tol", positive=True)
    n_iter = check_positive_int(max_iter, name="max_iter")
    Xn = np.asarray(Xa, float)
    yn = np.asarray(ya, float)
    s2 = 2.0 * a**2 * np.asarray(_theta0(theta0, Xn.shape[1]), float) ** 2
    if np.linalg.matrix_rank(Xn) < Xn.shape[0]:
        raise ValueError(
            "X must have full row rank (independent equations) for argmin_Q"
        )

    def dual(nu):
        # cosh overflows to inf on rejected line-search trials
        with np.errstate(over="ignore"):
            return np.sum(s2 * np.cosh(Xn.T @ nu)) - nu @ yn

    nu = np.zeros(Xn.shape[0])
    scale = max(np.linalg.norm(yn), 1e-300)
    for _ in range(n_iter):
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
        # rounding level
        if t * np.linalg.norm(step) <= 1e-15 * (1.0 + np.linalg.norm(nu)):
            break
    else:
        raise RuntimeError(
            f"argmin_Q: Newton's method did not converge in max_iter = {n_iter} "
            "iterations"
        )
    return jnp.asarray(s2 * np.sinh(Xn.T @ nu))


def min_l1_interpolant(
    X: ArrayLike, y: ArrayLike, weights: ArrayLike | None = None
) -> jax.Array:
    r""":math:`\operatorname{argmin}\{\|\beta\|_1 : X\beta = y\}`, the :math:`\alpha \to
    0` limit of :func:`argmin_Q`.

    Solved as the linear program :math:`\min \sum_i w_i(u_i + v_i)` over
    :math:`\beta = u - v`, :math:`u, v \ge 0` (scipy's HiGHS). With ``weights`` w it
    minimizes the weighted norm :math:`\sum_i w_i|\beta_i|` instead (the limit of
    label-noise SGD on a diagonal network, Chapter 5).

    Args:
        X: design, shape (N, d).
        y: targets, shape (N,).
        weights: positive weights, shape (d,), or None (all ones).

    Returns:
        beta, shape (d,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> beta = implicit_bias.min_l1_interpolant(
        ...     np.array([[1.0, 2.0]]), np.array([2.0]))
        >>> np.round(np.asarray(beta), 6).tolist()
        [0.0, 1.0]
        >>> heavy = implicit_bias.min_l1_interpolant(  # coordinate 2 costs 3
        ...     np.array([[1.0, 2.0]]), np.array([2.0]),
        ...     weights=np.array([1.0, 3.0]))
        >>> np.round(np.asarray(heavy), 6).tolist()
        [2.0, 0.0]
    """
    Xa, ya = check_regression(X, y)
    Xn, yn = np.asarray(Xa, float), np.asarray(ya, float)
    d = Xn.shape[1]
    w = (
        np.ones(d)
        if weights is None
        else np.asarray(as_float_array(weights, name="weights", ndim=1), float)
    )
    if w.shape != (d,) or np.any(w <= 0):
        raise ValueError(
            f"weights must be positive, of shape ({d},), got shape {w.shape}"
        )
    res = optimize.linprog(
        np.concatenate([w, w]),
        A_eq=np.hstack([Xn, -Xn]),
        b_eq=yn,
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        raise ValueError(
            f"min_l1_interpolant: the linear program failed ({res.message})"
        )
    return jnp.asarray(res.x[:d] - res.x[d:])


class L1Certificate(NamedTuple):
    r"""The dual certificate of the minimum-:math:`\ell_1` interpolant that is furthest
    from tight (:func:`l1_certificate`).

    Attributes:
        support: boolean mask of the support S of the minimum-:math:`\ell_1`
            interpolant.
        mu: the certificate :math:`\mu`, shape (N,): :math:`X_S^\top\mu =
            \operatorname{sign}(\beta^\star_S)`.
        kappa: :math:`\kappa^\star = \max_{i\notin S}|(X^\top\mu)_i|`, minimized over
            such
            :math:`\mu` (< 1 when the interpolant is unique and the certificate strict).
        exponent: :math:`2(1 - \kappa^\star)`, the predicted power of :math:`\alpha` in
            :math:`\|\operatorname{argmin} Q_\alpha - \beta^\star\|` as :math:`\alpha
            \to 0`.

    Example:
        >>> from lecturekit import implicit_bias
        >>> implicit_bias.L1Certificate._fields
        ('support', 'mu', 'kappa', 'exponent')
    """

    support: np.ndarray
    mu: np.ndarray
    kappa: float
    exponent: float


def l1_certificate(X: ArrayLike, y: ArrayLike, *, tol: float = 1e-9) -> L1Certificate:
    r"""The dual certificate of :math:`\min\{\|\beta\|_1 : X\beta = y\}` with the
    smallest off-support correlation.

    With :math:`\beta^\star` = :func:`min_l1_interpolant` and its support S (entries
    above ``tol`` times its largest), solves the linear program

    .. math::

        \kappa^\star = \min_{\mu}\ \max_{i\notin S}|(X^\top\mu)_i|
        \quad\text{s.t.}\quad X_S^\top\mu = \operatorname{sign}(\beta^\star_S)

    (scipy's HiGHS). As :math:`\alpha \to 0` the minimizer of :math:`Q_\alpha` has
    :math:`\nabla Q = X^\top\mu_\alpha` with :math:`\mu_\alpha \approx
    \log(1/\alpha^2)\,\mu` for such a certificate, so its off-support coordinates are of
    order
    :math:`\alpha^{2(1-|(X^\top\mu)_i|)}`; the dominant ones decide the approach, and
    the certificate that makes them smallest gives the predicted exponent
    :math:`2(1 - \kappa^\star)` (a heuristic argument; Chapter 5 checks it numerically).

    Args:
        X: design, shape (N, d).
        y: targets, shape (N,).
        tol: relative threshold for the support.

    Returns:
        :class:`L1Certificate`.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> X = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])
        >>> cert = implicit_bias.l1_certificate(X, np.array([1.0, 0.0]))
        >>> cert.support.tolist(), round(cert.kappa, 6), round(cert.exponent, 6)
        ([True, False, False], 0.333333, 1.333333)
    """
    Xa, ya = check_regression(X, y)
    tol = check_real(tol, name="tol", positive=True)
    Xn = np.asarray(Xa, float)
    beta = np.asarray(min_l1_interpolant(Xa, ya))
    support = np.abs(beta) > tol * np.max(np.abs(beta))
    n_rows, off = Xn.shape[0], Xn[:, ~support]
    k = off.shape[1]
    if k == 0:
        raise ValueError(
            "the minimum-l1 interpolant has no zero coordinate: nothing to certify"
        )
    # variables (mu, t): minimize t
    cost = np.r_[np.zeros(n_rows), 1.0]
    A_ub = np.vstack([np.c_[off.T, -np.ones(k)], np.c_[-off.T, -np.ones(k)]])
    A_eq = np.c_[Xn[:, support].T, np.zeros(int(support.sum()))]
    res = optimize.linprog(
        cost,
        A_ub=A_ub,
        b_ub=np.zeros(2 * k),
        A_eq=A_eq,
        b_eq=np.sign(beta[support]),
        bounds=[(None, None)] * n_rows + [(0, None)],
        method="highs",
    )
    if res.status != 0:
        raise ValueError(f"l1_certificate: the linear program failed ({res.message})")
    kappa = float(res.x[-1])
    return L1Certificate(support, res.x[:n_rows], kappa, 2.0 * (1.0 - kappa))


def min_weighted_l2_interpolant(
    X: ArrayLike, y: ArrayLike, theta0: ArrayLike | None = None
) -> jax.Array:
    r""":math:`\operatorname{argmin}\{\sum_i \beta_i^2/\theta_{0,i}^2 : X\beta = y\}`,
    the :math:`\alpha \to \infty` limit of :func:`argmin_Q`.

    Closed form :math:`\beta = W X^\top (X W X^\top)^{-1} y` with
    :math:`W = \mathrm{diag}(\theta_0^2)`.

    Args:
        X: design, shape (N, d), of full row rank.
        y: targets, shape (N,).
        theta0: shape (d,), positive entries; default ones (the minimum-norm
            interpolant).

    Returns:
        beta, shape (d,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> beta = implicit_bias.min_weighted_l2_interpolant(
        ...     np.array([[1.0, 2.0]]), np.array([5.0]))
        >>> np.round(np.asarray(beta), 6).tolist()
        [1.0, 2.0]
    """
    Xa, ya = check_regression(X, y)
    w = _theta0(theta0, Xa.shape[1]) ** 2
    return w * (Xa.T @ jnp.linalg.solve((Xa * w) @ Xa.T, ya))


class SparseProblem(NamedTuple):
    """A noiseless sparse regression problem (:func:`sparse_regression_problem`).

    Attributes:
        X: design, shape (n, d), entries N(0, 1).
        y: labels X @ beta, shape (n,).
        beta: the sparse truth, shape (d,), k non-zero entries.

    Example:
        >>> from lecturekit import implicit_bias
        >>> implicit_bias.SparseProblem._fields
        ('X', 'y', 'beta')
    """

    X: jax.Array
    y: jax.Array
    beta: jax.Array


def sparse_regression_problem(
    key: jax.Array, *, n: int = 20, d: int = 40, k: int = 3
) -> SparseProblem:
    """Gaussian design, k-sparse truth, noiseless labels y = X beta.

    X has n x d entries N(0, 1), read row by row off the stream of
    :func:`lecturekit.sampling.standard_normal`, so the problem with n rows is the first
    n rows of the problem with more (same key, same d and k): nested training sets. The
    support is k coordinates drawn without replacement; each non-zero entry is +-(0.5 +
    U[0, 1]) with a fair random sign. The key is split into four (design, support,
    signs, magnitudes), so the same key always gives the same problem.

    Args:
        key: a ``jax.random`` key.
        n: number of examples (rows of X).
        d: dimension (columns of X).
        k: number of non-zero entries of the truth, <= d.

    Returns:
        :class:`SparseProblem` (X, y, beta).

    Example:
        >>> import jax
        >>> from lecturekit import implicit_bias
        >>> X, y, beta = implicit_bias.sparse_regression_problem(
        ...     jax.random.key(0), n=5, d=8, k=2)
        >>> X.shape, y.shape, int((beta != 0).sum())
        ((5, 8), (5,), 2)
    """
    check_key(key)
    n_, d_ = check_positive_int(n, name="n"), check_positive_int(d, name="d")
    k_ = check_positive_int(k, name="k")
    if k_ > d_:
        raise ValueError(
            f"k must be <= d = {d_} (the number of non-zero coordinates), got {k}"
        )
    k_x, k_supp, k_sign, k_mag = jax.random.split(key, 4)
    X = _sampling.standard_normal(k_x, (n_, d_))
    support = _sampling.choice_without_replacement(k_supp, d_, k_)
    signs = jnp.where(_sampling.bernoulli(k_sign, 0.5, k_), 1.0, -1.0)
    magnitudes = 0.5 + _sampling.uniform(k_mag, k_)
    beta = jnp.zeros(d_).at[support].set(signs * magnitudes)
    return SparseProblem(X, X @ beta, beta)


def argmin_Q_primal(
    X: ArrayLike, y: ArrayLike, *, alpha: float, theta0: ArrayLike | None = None
) -> jax.Array:
    r""":math:`\operatorname{argmin}\{Q_{\alpha,\theta_0}(\beta) : X\beta = y\}` by
    scipy's trust-constr on the primal.

    An independent reference for :func:`argmin_Q` (which works on the dual): it uses
    only Q, its gradient :math:`\operatorname{arcsinh}(\beta_i/(2 s_i))` and its
    diagonal Hessian
    :math:`1/(s_i\sqrt{4 + (\beta_i/s_i)^2})`, :math:`s = \alpha^2\theta_0^2`, starting
    from the minimum-norm interpolant; the objective is divided by its starting value so
    that the tolerances (gtol 1e-12, xtol 1e-14) mean the same thing for every alpha.
    Slower than :func:`argmin_Q`.

    Args:
        X: design, shape (N, d).
        y: targets, shape (N,).
        alpha: initialization scale, > 0.
        theta0: initialization shape, shape (d,), positive entries; default ones.

    Returns:
        The minimizer beta, shape (d,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> X, y = np.array([[1.0, 1.0]]), np.array([1.0])
        >>> beta = implicit_bias.argmin_Q_primal(X, y, alpha=1.0)
        >>> np.round(np.asarray(beta), 5).tolist()
        [0.5, 0.5]
    """
    Xa, ya = check_regression(X, y)
    a = check_real(alpha, name="alpha", positive=True)
    Xn, yn = np.asarray(Xa, float), np.asarray(ya, float)
    s = a**2 * np.asarray(_theta0(theta0, Xn.shape[1]), float) ** 2

    def qf(u):  # q on the host, in the form of q() above
        return u * np.arcsinh(u / 2) - u * u / (2 + np.sqrt(4 + u * u))

    start = np.linalg.lstsq(Xn, yn, rcond=None)[0]
    scale = max(float(np.sum(s * qf(start / s))), 1e-300)
    res = optimize.minimize(
        lambda b: np.sum(s * qf(b / s)) / scale,
        start,
        jac=lambda b: np.arcsinh(b / (2 * s)) / scale,
        hess=lambda b: np.diag(1 / (s * np.sqrt(4 + (b / s) ** 2))) / scale,
        method="trust-constr",
        constraints=[optimize.LinearConstraint(Xn, yn, yn)],
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000},
    )
    return jnp.asarray(res.x)
