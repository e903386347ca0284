"""Quadratic (second-order Taylor) models of networks and the catapult phase.

Three groups of tools:

* **Quadratic models of any network.** :func:`quadratic_model` turns a model f(params, x)
  into its second-order Taylor model around params0,

      f_quad(params, x) = f(params0, x) + J(x) d + (1/2) d^T H(x) d,   d = params - params0,

  evaluated with two nested forward-mode products (``jax.jvp``): the directional
  derivatives g'(0) and g''(0) of g(s) = f(params0 + s d, x). Neither the Jacobian J nor
  the Hessian H is formed, and nothing is specific to an architecture.
  :func:`perturbative_minimizer` gives the first-order minimizer theta* = theta^F +
  eps theta^I of an explicit quadratic model z = Phi^T theta + (eps/2) theta^T Psi theta.

* **The one-point catapult.** For one example (x, y) and the one-hidden-layer ReLU network
  f = sum_i v_i relu(u_i . x / sqrt(d)) / sqrt(m), the quadratic model is the
  frozen-activation bilinear model z = sum_i s_i v_i u_i . x / sqrt(m d),
  s_i = 1{u_i(0) . x > 0} (the convention relu'(0) = 0 of lecturekit and of JAX; the tie
  u_i(0) . x = 0 has probability zero). Gradient descent on L = (z - y)^2 / 2 with step eta closes on
  the residual r = z - y and the tangent kernel lambda = ||grad z||^2:

      r_{t+1}      = r_t (1 - eta lambda_t + eta^2 c z_t r_t),
      lambda_{t+1} = lambda_t + eta c r_t^2 (eta lambda_t - 4 z_t / r_t),   c = ||x||^2 / (m d).

  :func:`catapult_recursion` iterates it (``lax.scan``, vectorizable with ``vmap``),
  :func:`catapult_constants` computes (r_0, lambda_0, c) from a network's parameters,
  :func:`classify_regime`, :func:`catapult_peak` and :func:`catapult_duration` turn a
  trajectory into the quantities of the phase diagram.

* **Gradient descent with measurements.** :func:`gd_one_point` runs full-batch gradient
  descent on (1/2) sum (f - y)^2 and records the loss and the tangent kernel
  lambda_t = ||grad f(x)||^2 of a one-example problem; :func:`top_hessian_eigenvalue`
  estimates the largest eigenvalue of a loss Hessian by Lanczos on Hessian-vector products
  (the sharpness), and :func:`gd_with_sharpness` records it along a GD run.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from jax.typing import ArrayLike

from ._validation import (
    as_float_array, as_host_float_array, check_callable, check_key, check_model, check_params_pytree,
    check_positive_int, check_range, check_real, check_same_structure,
)

Model = Callable[[Any, jax.Array], jax.Array]

# A trajectory whose residual exceeds this is called divergent and is frozen there, so
# that a divergent run never produces inf/NaN (which would poison vmapped sweeps).
DIVERGED = 1e100


# ----------------------------------------------------------------------------- quadratic models
def quadratic_model(f: Model, params0: Any) -> Model:
    """The second-order Taylor model of ``f`` around ``params0`` (any architecture).

        f_quad(params, x) = f(params0, x) + J(x) d + (1/2) d^T H(x) d,  d = params - params0,

    where J and H are the Jacobian and Hessian of f(., x) at params0. Computed as
    g(0) + g'(0) + g''(0)/2 for g(s) = f(params0 + s d, x), with nested ``jax.jvp``.
    For ReLU networks autodiff uses relu'' = 0, so the model is exact in the weights of each
    activation region: the Taylor model of the region containing params0.
    """
    check_model(f)
    check_params_pytree(params0, name="params0")

    def f_quad(params, x):
        return _quad_apply(f, params0, params, x)

    return f_quad


def taylor_terms(f: Model, params0: Any, params: Any, x: ArrayLike) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The three terms (f(params0, x), J d, d^T H d) of the expansion, d = params - params0."""
    check_model(f)
    check_params_pytree(params0, name="params0")
    check_params_pytree(params)
    check_same_structure(params, params0, name="params", reference_name="params0")
    x = as_float_array(x, name="x")
    delta = jax.tree_util.tree_map(jnp.subtract, params, params0)

    def first(p):
        return jax.jvp(lambda q: f(q, x), (p,), (delta,))

    (value, slope), (_, curvature) = jax.jvp(first, (params0,), (delta,))
    return value, slope, curvature


class PerturbativeMinimizer(NamedTuple):
    """theta* = theta_F + eps theta_I + O(eps^2) and the deformed labels Y + eps Y_I."""

    theta_f: jax.Array
    theta_i: jax.Array
    label_shift: jax.Array


def perturbative_minimizer(phi: ArrayLike, psi: ArrayLike, y: ArrayLike) -> PerturbativeMinimizer:
    """First-order minimizer of z(x_a; theta) = Phi_a^T theta + (eps/2) theta^T Psi_a theta.

    phi: (p, n), columns Phi_a = Phi(x_a) (the features); psi: (n, p, p), symmetric
    Psi_a = Psi(x_a) (the meta-features); y: (n,). With p >= n and Phi of full column rank,

        theta_F = (Phi Phi^T)^+ Phi Y           (the minimum-norm interpolant: Phi^T theta_F = Y)
        Y_I     = -(1/2) (theta_F^T Psi_a theta_F)_a
        theta_I = (Phi Phi^T)^+ Phi Y_I

    so theta_F + eps theta_I is the linear model's minimum-norm fit of the deformed labels
    Y + eps Y_I, and Phi_a^T (theta_F + eps theta_I) + (eps/2) q_a = y_a + O(eps^2). Only the
    component of theta_I in span{Phi_a} is determined at this order (this is that one).
    """
    phi = as_float_array(phi, name="phi", ndim=2)
    psi = as_float_array(psi, name="psi", ndim=3)
    y = as_float_array(y, name="y", ndim=1)
    p, n = phi.shape
    if psi.shape != (n, p, p):
        raise ValueError(f"psi must have shape (n, p, p) = {(n, p, p)} for phi of shape {(p, n)}, got {psi.shape}")
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if p < n:
        raise ValueError(f"need at least as many parameters as examples (p >= n), got p={p}, n={n}")
    # small dense linear algebra: NumPy on the host (no XLA compilation per problem size)
    phi, psi, y = (np.asarray(a, dtype=np.float64) for a in (phi, psi, y))
    gram = phi.T @ phi
    if np.linalg.matrix_rank(gram) < n:
        raise ValueError("the features Phi(x_a) must be linearly independent (Phi^T Phi invertible)")
    theta_f = phi @ np.linalg.solve(gram, y)
    shift = -0.5 * np.einsum("i,aij,j->a", theta_f, psi, theta_f)
    theta_i = phi @ np.linalg.solve(gram, shift)
    return PerturbativeMinimizer(jnp.asarray(theta_f), jnp.asarray(theta_i), jnp.asarray(shift))


# ----------------------------------------------------------------------------- catapult recursion
class CatapultConstants(NamedTuple):
    """Initial residual r0 = z0 - y, kernel lambda0 = ||grad z||^2, and c = ||x||^2/(m d)."""

    r0: float
    lam0: float
    c: float
    y: float


def catapult_constants(net: Any, params: Any, x: ArrayLike, y: float) -> CatapultConstants:
    """(r0, lambda0, c, y) of the one-point problem for a one-hidden-layer ReLU ``nets.mlp``.

    The network must be ``nets.mlp((d, m, 1), "relu", w_std=s_w, b_std=0, out_w_std=s_v,
    out_b_std=0)`` (NTK parameterization), i.e. f(x) = s_v s_w sum_i v_i relu(u_i . x) / sqrt(m d)
    with u_i = W1[:, i], v_i = W2[i, 0]; with s_w = s_v = 1 this is the network
    f = sum_i v_i relu(u_i . x / sqrt(d)) / sqrt(m) of the catapult analysis. Then, with
    kappa = s_v s_w / sqrt(m d), a_i = u_i . x and s_i = 1{a_i > 0} (relu'(0) = 0),

        lambda0 = kappa^2 sum_i s_i (v_i^2 ||x||^2 + a_i^2),   c = kappa^2 ||x||^2,   r0 = f(x) - y.

    x: shape (d,).
    """
    from . import nets as _nets

    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}")
    if (net.depth != 1 or net.activation.name != "relu" or net.parameterization != "ntk"
            or net.b_std != 0 or net.out_b_std != 0 or net.output_activation is not None
            or net.output_dim != 1):
        raise ValueError(
            "net must be a one-hidden-layer ReLU network in the NTK parameterization with "
            "b_std = out_b_std = 0, no output activation and one output (the one-point recursion's model)"
        )
    net.check_params(params)
    x = as_float_array(x, name="x", ndim=1)
    y = check_real(y, name="y")
    d, m = net.widths[0], net.widths[1]
    if x.shape != (d,):
        raise ValueError(f"x must have shape ({d},) for this network, got {x.shape}")
    # NumPy on the host: a few reductions, and no XLA compilation for each new width m
    x = np.asarray(x, dtype=np.float64)
    u, v = np.asarray(params[0]["W"], dtype=np.float64), np.asarray(params[1]["W"], dtype=np.float64)[:, 0]
    kappa = net.w_std * net.out_w_std / np.sqrt(m * d)
    a = x @ u
    s = (a > 0).astype(np.float64)  # relu'(0) = 0, the convention of lecturekit and of jax
    xx = x @ x
    lam0 = kappa**2 * np.sum(s * (v**2 * xx + a**2))
    z0 = kappa * np.sum(v * np.maximum(a, 0.0))  # = net.apply(params, x[None])[0] (biases have multiplier 0)
    return CatapultConstants(float(z0 - y), float(lam0), float(kappa**2 * xx), float(y))


@partial(jax.jit, static_argnames="steps")
def _recursion(r0, lam0, c, y, eta, steps):
    def step(state, _):
        r, lam, dead = state
        z = r + y
        r_new = r * (1.0 - eta * lam + eta**2 * c * z * r)
        lam_new = lam + eta * c * r * (eta * lam * r - 4.0 * z)
        dead_new = dead | (jnp.abs(r_new) > DIVERGED) | ~jnp.isfinite(r_new)
        r_new = jnp.where(dead_new, jnp.sign(r) * DIVERGED, r_new)
        lam_new = jnp.where(dead_new, lam, lam_new)
        return (r_new, lam_new, dead_new), (r_new, lam_new)

    init = (r0, lam0, jnp.asarray(False))
    _, (rs, lams) = jax.lax.scan(step, init, None, length=steps)
    rs = jnp.concatenate([jnp.atleast_1d(r0), rs])
    lams = jnp.concatenate([jnp.atleast_1d(lam0), lams])
    return rs, lams


def catapult_recursion(
    r0: ArrayLike, lam0: ArrayLike, c: ArrayLike, y: ArrayLike, eta: ArrayLike, steps: int
) -> tuple[jax.Array, jax.Array]:
    """Iterate the one-point recursion for ``steps`` steps; returns (r_t, lambda_t), t = 0..steps.

        r_{t+1}      = r_t (1 - eta lambda_t + eta^2 c z_t r_t),           z_t = r_t + y,
        lambda_{t+1} = lambda_t + eta c r_t (eta lambda_t r_t - 4 z_t)   (= ... (eta lambda_t - 4 z_t/r_t) r_t^2).

    Arguments are scalars (use ``jax.vmap`` over any of them for sweeps). A residual that
    exceeds ``DIVERGED`` = 1e100 is frozen at +-1e100 (divergence), lambda at its last value.
    """
    steps = check_positive_int(steps, name="steps")
    _check_catapult_scalars(r0=r0, lam0=lam0, c=c, y=y, eta=eta)
    args = [jnp.asarray(a, dtype=jnp.result_type(float)) for a in (r0, lam0, c, y, eta)]
    return _recursion(*args, steps)


def _check_catapult_scalars(**scalars) -> None:
    """Each argument a real scalar (finite if concrete); lam0 and c >= 0, eta > 0."""
    for name, value in scalars.items():
        a = as_float_array(value, name=name)
        if a.ndim != 0:
            raise ValueError(f"{name} must be a scalar (vmap the function for sweeps), got shape {tuple(a.shape)}")
        if name in ("lam0", "c"):
            check_range(a, name=name, lo=0.0)
        elif name == "eta":
            check_range(a, name=name, lo=0.0, lo_open=True, what="a learning rate")


def catapult_sweep(
    r0: ArrayLike, lam0: ArrayLike, c: ArrayLike, y: ArrayLike, etas: ArrayLike, steps: int
) -> tuple[jax.Array, jax.Array]:
    """:func:`catapult_recursion` for every learning rate in ``etas`` at once (vectorized).

    Returns (r, lambda) of shape (len(etas), steps + 1).
    """
    steps = check_positive_int(steps, name="steps")
    etas = as_float_array(etas, name="etas", ndim=1)
    check_range(etas, name="etas", lo=0.0, lo_open=True, what="learning rates")
    _check_catapult_scalars(r0=r0, lam0=lam0, c=c, y=y)
    scalars = [jnp.asarray(a, dtype=jnp.result_type(float)) for a in (r0, lam0, c, y)]
    return jax.vmap(lambda eta: _recursion(*scalars, eta, steps))(etas)


def classify_regime(losses: ArrayLike, lams: ArrayLike | None = None, *, tol: float = 1e-8) -> str:
    """'linear', 'catapult', 'divergent', 'dead' or 'undecided' from a trajectory L_0..L_T.

    * divergent: the last loss is not finite or exceeds 1e100 (or, without ``lams``, is not
      below the first);
    * dead (needs the tangent kernels ``lams``): the loss is stuck because the kernel has
      collapsed, lambda_T < 1e-10 lambda_0 (a ReLU network whose units all switched off);
    * linear: converged (L_T < tol max(L_0, 1)) and the loss never rose above L_0;
    * catapult: converged after the loss rose above L_0;
    * undecided: none of these (run longer).
    """
    loss = as_host_float_array(losses, name="losses", ndim=1, finite=False)
    if loss.size < 2:
        raise ValueError(f"losses must be a 1-D trajectory with at least 2 entries, got shape {loss.shape}")
    tol = check_real(tol, name="tol", positive=True)
    if lams is not None:
        lam = as_host_float_array(lams, name="lams", ndim=1, finite=False)
        if lam.shape != loss.shape:
            raise ValueError(f"lams must have the shape of losses {loss.shape}, got {lam.shape}")
    first, last = loss[0], loss[-1]
    if not np.isfinite(last) or last > DIVERGED:
        return "divergent"
    if last < tol * max(first, 1.0):
        return "catapult" if np.max(loss[1:]) > first else "linear"
    if lams is not None:
        if np.isfinite(lam[-1]) and lam[-1] < 1e-10 * lam[0]:
            return "dead"
        return "undecided"
    return "divergent" if last >= first else "undecided"


def catapult_peak(losses: ArrayLike) -> tuple[float, int]:
    """(peak loss, step at which it is reached) of a trajectory."""
    loss = as_host_float_array(losses, name="losses", ndim=1, finite=False, nonempty=True)
    t = int(np.argmax(loss))
    return float(loss[t]), t


def catapult_duration(lams: ArrayLike, eta: float, *, level: float = 0.5) -> int:
    """Number of steps until the tangent kernel has fallen ``level`` of the way to 2/eta.

    First t with lambda_t <= lambda_0 - level (lambda_0 - 2/eta): the end of the catapult's
    rise, when the kernel has moved by a finite fraction of what it must lose. Returns -1 if
    it never gets there (no catapult).
    """
    lam = as_host_float_array(lams, name="lams", ndim=1, finite=False, nonempty=True)
    eta = check_real(eta, name="eta", positive=True)
    level = check_real(level, name="level", positive=True, at_most=1.0)
    target = lam[0] - level * (lam[0] - 2.0 / eta)
    hit = np.nonzero(lam <= target)[0]
    return int(hit[0]) if hit.size else -1


# ----------------------------------------------------------------------------- gradient descent
def _quad_apply(f, center, params, x):
    """f_quad(params, x) around ``center`` (a traced argument: no constants baked into jit)."""
    delta = jax.tree_util.tree_map(jnp.subtract, params, center)

    def first(p):
        return jax.jvp(lambda q: f(q, x), (p,), (delta,))

    (value, slope), (_, curvature) = jax.jvp(first, (center,), (delta,))
    return value + slope + 0.5 * curvature


def _gd_run(f, quadratic, params0, x, y, eta, steps):
    model = (lambda p, xx: _quad_apply(f, params0, p, xx)) if quadratic else f
    one_example = x.shape[0] == 1

    def step(state, _):
        p, dead = state
        out, pullback = jax.vjp(lambda q: model(q, x), p)   # one forward pass for both gradients
        r = out - y
        loss = 0.5 * jnp.sum(r**2)
        # gradient of f(x_0) (cotangent e_0) and of the loss (cotangent r); for one example
        # the latter is r_0 times the former, so one backward pass serves both
        g0 = pullback(jnp.zeros_like(out).at[0].set(1.0))[0]
        g = jax.tree_util.tree_map(lambda a: r[0] * a, g0) if one_example else pullback(r)[0]
        lam = sum(jnp.sum(leaf**2) for leaf in jax.tree_util.tree_leaves(g0))
        dead = dead | ~jnp.isfinite(loss) | (loss > DIVERGED)
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(dead, a, a - eta * b), p, g)
        return (new, dead), (jnp.where(dead, jnp.inf, loss), jnp.where(dead, jnp.inf, lam))

    (final, _), (losses, lams) = jax.lax.scan(step, (params0, jnp.asarray(False)), None, length=steps)
    return final, losses, lams


_gd_one = jax.jit(_gd_run, static_argnames=("f", "quadratic", "steps"))


@partial(jax.jit, static_argnames=("f", "quadratic", "steps"))
def _gd_many(f, quadratic, params0, x, y, etas, steps):
    return jax.vmap(lambda e: _gd_run(f, quadratic, params0, x, y, e, steps)[1:])(etas)


def _check_gd_args(f, params0, x, y, steps):
    check_model(f)
    check_params_pytree(params0, name="params0")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    if y.shape != (x.shape[0],):
        raise ValueError(f"y must have shape ({x.shape[0]},) for x of shape {tuple(x.shape)}, got {y.shape}")
    return x, y, check_positive_int(steps, name="steps")


def gd_one_point(
    f: Model, params0: Any, x: ArrayLike, y: ArrayLike, eta: float, steps: int, *, quadratic: bool = False
) -> tuple[Any, jax.Array, jax.Array]:
    """Gradient descent on L = (1/2) sum_a (f(params, x_a) - y_a)^2 with step ``eta``.

    x: (n, d), y: (n,). With ``quadratic=True`` the model trained is the quadratic model of
    ``f`` around ``params0`` (:func:`quadratic_model`), else ``f`` itself. Returns
    (final params, losses L_0..L_{steps-1}, lambda_t) where lambda_t = ||grad f(x_0)||^2 is
    the tangent kernel of the first example at the same step (the whole kernel when n = 1).
    A run whose loss exceeds 1e100 is stopped (loss and lambda reported as inf). ``f`` is a
    static argument of a jitted loop: pass the same function object to reuse compilations.
    """
    x, y, steps = _check_gd_args(f, params0, x, y, steps)
    eta = check_real(eta, name="eta", positive=True)
    return _gd_one(f, bool(quadratic), params0, x, y, eta, steps)


def gd_sweep(
    f: Model, params0: Any, x: ArrayLike, y: ArrayLike, etas: ArrayLike, steps: int, *, quadratic: bool = False
) -> tuple[jax.Array, jax.Array]:
    """:func:`gd_one_point` for every step size in ``etas`` (vectorized with ``vmap``).

    Returns (losses, lambdas), each of shape (len(etas), steps).
    """
    x, y, steps = _check_gd_args(f, params0, x, y, steps)
    etas = as_float_array(etas, name="etas", ndim=1)
    check_range(etas, name="etas", lo=0.0, lo_open=True, what="learning rates")
    return _gd_many(f, bool(quadratic), params0, x, y, etas, steps)


def lanczos_top_eigenvalue(matvec: Callable[[jax.Array], jax.Array], v0: jax.Array, num_iter: int) -> jax.Array:
    """Largest eigenvalue of a symmetric operator from ``num_iter`` Lanczos steps.

    Full reorthogonalization (the basis is stored: fine for the small models this is used
    on); the eigenvalues of the tridiagonal matrix are computed with ``eigh``. Jit-friendly.
    """
    check_callable(matvec, name="matvec", what="a function v -> A v")
    v0 = as_float_array(v0, name="v0", ndim=1, nonempty=True)
    num_iter = check_positive_int(num_iter, name="num_iter")
    dim = v0.shape[0]
    k = num_iter
    q0 = v0 / jnp.linalg.norm(v0)
    basis = jnp.zeros((k, dim), v0.dtype).at[0].set(q0)

    def body(j, carry):
        basis, alphas, betas = carry
        q = basis[j]
        w = matvec(q)
        alpha = q @ w
        # full reorthogonalization against every stored vector (rows > j are zero)
        w = w - basis.T @ (basis @ w)
        w = w - basis.T @ (basis @ w)
        beta = jnp.linalg.norm(w)
        nxt = jnp.where(beta > 1e-12, w / jnp.where(beta > 1e-12, beta, 1.0), 0.0)
        basis = jnp.where(j + 1 < k, basis.at[jnp.minimum(j + 1, k - 1)].set(nxt), basis)
        return basis, alphas.at[j].set(alpha), betas.at[j].set(beta)

    _, alphas, betas = jax.lax.fori_loop(0, k, body, (basis, jnp.zeros(k, v0.dtype), jnp.zeros(k, v0.dtype)))
    tri = jnp.diag(alphas) + jnp.diag(betas[:-1], 1) + jnp.diag(betas[:-1], -1)
    return jnp.linalg.eigvalsh(tri)[-1]


def top_hessian_eigenvalue(loss_fn: Callable[[Any], jax.Array], params: Any, key: jax.Array, num_iter: int = 30) -> jax.Array:
    """Sharpness: the largest eigenvalue of the Hessian of ``loss_fn`` at ``params``.

    Lanczos (``num_iter`` steps) on Hessian-vector products jvp(grad(loss)); the Hessian is
    never formed. Start vector drawn from ``key``.
    """
    check_callable(loss_fn, name="loss_fn", what="a function of params")
    check_params_pytree(params)
    check_key(key)
    num_iter = check_positive_int(num_iter, name="num_iter", minimum=2)
    flat, unravel = ravel_pytree(params)
    return _top_eig(loss_fn, flat, unravel, key, num_iter)


@partial(jax.jit, static_argnames=("loss_fn", "unravel", "num_iter"))
def _top_eig(loss_fn, flat, unravel, key, num_iter):
    grad = jax.grad(lambda w: loss_fn(unravel(w)))

    def hvp(v):
        return jax.jvp(grad, (flat,), (v,))[1]

    v0 = jax.random.normal(key, flat.shape, flat.dtype)
    return lanczos_top_eigenvalue(hvp, v0, min(num_iter, flat.shape[0]))


def gd_with_sharpness(
    f: Model,
    params0: Any,
    x: ArrayLike,
    y: ArrayLike,
    eta: float,
    steps: int,
    *,
    every: int = 10,
    key: jax.Array,
    num_iter: int = 20,
) -> tuple[jax.Array, jax.Array]:
    """Full-batch GD on L = (1/2n) sum_a (f(params, x_a) - y_a)^2, with the sharpness.

    Returns (losses at every step, sharpness lambda_max(Hessian of L) every ``every`` steps),
    the latter by :func:`top_hessian_eigenvalue` with ``num_iter`` Lanczos steps.
    """
    check_model(f)
    check_params_pytree(params0, name="params0")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    if y.shape != (x.shape[0],):
        raise ValueError(f"y must have shape ({x.shape[0]},) for x of shape {tuple(x.shape)}, got {y.shape}")
    eta = check_real(eta, name="eta", positive=True)
    steps = check_positive_int(steps, name="steps")
    every = check_positive_int(every, name="every")
    num_iter = check_positive_int(num_iter, name="num_iter", minimum=2)
    check_key(key)
    if steps % every:
        raise ValueError(f"steps ({steps}) must be a multiple of every ({every})")
    flat0, unravel = ravel_pytree(params0)
    return _gd_sharp(f, unravel, flat0, x, y, eta, steps // every, every, key, num_iter)


@partial(jax.jit, static_argnames=("f", "unravel", "blocks", "every", "num_iter"))
def _gd_sharp(f, unravel, flat0, x, y, eta, blocks, every, key, num_iter):
    def loss_flat(w):
        return 0.5 * jnp.mean((f(unravel(w), x) - y) ** 2)

    grad = jax.grad(loss_flat)

    def inner(w, _):
        loss, g = jax.value_and_grad(loss_flat)(w)
        return w - eta * g, loss

    def outer(w, k):
        sharp = lanczos_top_eigenvalue(lambda v: jax.jvp(grad, (w,), (v,))[1],
                                       jax.random.normal(k, w.shape, w.dtype), num_iter)
        w, losses = jax.lax.scan(inner, w, None, length=every)
        return w, (losses, sharp)

    keys = jax.random.split(key, blocks)
    _, (losses, sharps) = jax.lax.scan(outer, flat0, keys)
    return losses.reshape(-1), sharps
