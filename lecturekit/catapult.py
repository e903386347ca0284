"""The catapult phase: gradient descent with large steps on one example, in two numbers.

For one example (x, y) and the one-hidden-layer ReLU network
f = sum_i v_i relu(u_i . x / sqrt(d)) / sqrt(m), the quadratic model
(:func:`lecturekit.quadratic.quadratic_model`) is the frozen-activation bilinear model
z = sum_i s_i v_i u_i . x / sqrt(m d), s_i = 1{u_i(0) . x > 0} (the convention relu'(0) = 0
of lecturekit and of JAX; the tie u_i(0) . x = 0 has probability zero). Gradient descent on
L = (z - y)^2 / 2 with learning rate ``lr`` (eta in the text) closes on the residual
r = z - y and the tangent kernel lambda = ||grad z||^2:

    r_{t+1}      = r_t (1 - eta lambda_t + eta^2 c z_t r_t),
    lambda_{t+1} = lambda_t + eta c r_t^2 (eta lambda_t - 4 z_t / r_t),   c = ||x||^2 / (m d).

* :func:`catapult_constants` computes (r_0, lambda_0, c) from a network's parameters;
* :func:`catapult_recursion` iterates the recursion (``lax.scan``, vectorizable with
  ``vmap``), :func:`catapult_sweep` for many learning rates at once;
* :func:`classify_regime`, :func:`catapult_peak` and :func:`catapult_duration` turn a
  trajectory into the quantities of the phase diagram (linear, catapult, divergent).

A trajectory whose residual exceeds ``DIVERGED`` = 1e100 is called divergent and is frozen
there, so that a divergent run never produces inf/NaN (which would poison vmapped sweeps).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from jax.typing import ArrayLike

from . import hessian as _hessian
from ._validation import (
    as_float_array, as_host_float_array, check_key, check_model, check_params_pytree, check_positive_int, check_range,
    check_real,
)
from .quadratic import _quad_apply

__all__ = [
    "CatapultConstants",
    "catapult_constants",
    "catapult_recursion",
    "catapult_sweep",
    "classify_regime",
    "catapult_peak",
    "catapult_duration",
]

Model = Callable[[Any, jax.Array], jax.Array]

#: A loss or residual above this is called divergent (runs are frozen there).
DIVERGED = 1e100


class CatapultConstants(NamedTuple):
    """The constants of the one-example recursion, from :func:`catapult_constants`.

    Attributes:
        r0: initial residual z_0 - y.
        lam0: initial tangent kernel lambda_0 = ||grad z||^2.
        c: ||x||^2 / (m d) times the multipliers squared (see :func:`catapult_constants`).
        y: the label.
    """

    r0: float
    lam0: float
    c: float
    y: float


def catapult_constants(net: Any, params: Any, x: ArrayLike, y: float) -> CatapultConstants:
    """(r0, lambda0, c, y) of the one-example problem for a one-hidden-layer ReLU network.

    The network must be ``nets.mlp((d, m, 1), "relu", w_std=s_w, b_std=0, out_w_std=s_v,
    out_b_std=0)`` (NTK parameterization), i.e. f(x) = s_v s_w sum_i v_i relu(u_i . x) / sqrt(m d)
    with u_i = W1[:, i], v_i = W2[i, 0]; with s_w = s_v = 1 this is the network
    f = sum_i v_i relu(u_i . x / sqrt(d)) / sqrt(m) of the catapult analysis. Then, with
    kappa = s_v s_w / sqrt(m d), a_i = u_i . x and s_i = 1{a_i > 0} (relu'(0) = 0),

        lambda0 = kappa^2 sum_i s_i (v_i^2 ||x||^2 + a_i^2),   c = kappa^2 ||x||^2,   r0 = f(x) - y.

    Computed in NumPy on the host (no compilation per width).

    Args:
        net: a :func:`lecturekit.nets.mlp` network of that form.
        params: its parameters.
        x: the input, shape (d,).
        y: the label.

    Returns:
        :class:`CatapultConstants` of Python floats.

    Example:
        >>> import jax, numpy as np
        >>> from lecturekit import catapult, nets
        >>> net = nets.mlp((2, 3, 1), "relu", w_std=1.0)
        >>> params = [{"W": np.array([[1.0, -1.0, 0.5], [0.0, 1.0, 0.5]]), "b": np.zeros(3)},
        ...           {"W": np.array([[1.0], [2.0], [-1.0]]), "b": np.zeros(1)}]
        >>> cc = catapult.catapult_constants(net, params, np.array([1.0, 1.0]), 0.5)
        >>> round(cc.r0, 6), round(cc.lam0, 6), round(cc.c, 6)
        (-0.5, 1.0, 0.333333)
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
def _recursion(r0, lam0, c, y, lr, steps):
    def step(state, _):
        r, lam, dead = state
        z = r + y
        r_new = r * (1.0 - lr * lam + lr**2 * c * z * r)
        lam_new = lam + lr * c * r * (lr * lam * r - 4.0 * z)
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
    r0: ArrayLike, lam0: ArrayLike, c: ArrayLike, y: ArrayLike, lr: ArrayLike, steps: int
) -> tuple[jax.Array, jax.Array]:
    """Iterate the one-example recursion for ``steps`` steps at learning rate ``lr`` (eta).

        r_{t+1}      = r_t (1 - eta lambda_t + eta^2 c z_t r_t),           z_t = r_t + y,
        lambda_{t+1} = lambda_t + eta c r_t (eta lambda_t r_t - 4 z_t).

    This is gradient descent on L = r^2/2 for the quadratic model of the network of
    :func:`catapult_constants`. A residual that exceeds ``DIVERGED`` = 1e100 is frozen at
    +-1e100 (divergence), lambda at its last value.

    Args:
        r0, lam0, c, y: scalars (e.g. the fields of :class:`CatapultConstants`); lam0, c >= 0.
        lr: the learning rate eta > 0 (a scalar; ``jax.vmap`` over any argument for sweeps).
        steps: number of steps (Python int >= 1).

    Returns:
        (r_t, lambda_t) for t = 0..steps, two arrays of shape (steps + 1,).

    Example:
        >>> from lecturekit import catapult
        >>> rs, lams = catapult.catapult_recursion(0.3, 1.0, 1e-4, 1.0, 3.0, 300)   # eta lambda0 = 3
        >>> catapult.classify_regime(0.5 * rs**2, lams), bool(3.0 * lams[-1] < 2)
        ('catapult', True)
    """
    steps = check_positive_int(steps, name="steps")
    _check_catapult_scalars(r0=r0, lam0=lam0, c=c, y=y, lr=lr)
    args = [jnp.asarray(a, dtype=jnp.result_type(float)) for a in (r0, lam0, c, y, lr)]
    return _recursion(*args, steps)


def _check_catapult_scalars(**scalars) -> None:
    """Each argument a real scalar (finite if concrete); lam0 and c >= 0, lr > 0."""
    for name, value in scalars.items():
        a = as_float_array(value, name=name)
        if a.ndim != 0:
            raise ValueError(f"{name} must be a scalar (vmap the function for sweeps), got shape {tuple(a.shape)}")
        if name in ("lam0", "c"):
            check_range(a, name=name, lo=0.0)
        elif name == "lr":
            check_range(a, name=name, lo=0.0, lo_open=True, what="a learning rate")


def catapult_sweep(
    r0: ArrayLike, lam0: ArrayLike, c: ArrayLike, y: ArrayLike, lrs: ArrayLike, steps: int
) -> tuple[jax.Array, jax.Array]:
    """:func:`catapult_recursion` for every learning rate in ``lrs`` at once (``vmap``).

    Args:
        r0, lam0, c, y: scalars as in :func:`catapult_recursion`.
        lrs: learning rates, shape (k,), all > 0.
        steps: number of steps.

    Returns:
        (r, lambda), each of shape (k, steps + 1).

    Example:
        >>> import numpy as np
        >>> from lecturekit import catapult
        >>> rs, lams = catapult.catapult_sweep(0.3, 1.0, 1e-4, 1.0, np.array([1.5, 3.0, 5.0]), 300)
        >>> [catapult.classify_regime(0.5 * r**2, lam) for r, lam in zip(rs, lams)]
        ['linear', 'catapult', 'divergent']
    """
    steps = check_positive_int(steps, name="steps")
    lrs = as_float_array(lrs, name="lrs", ndim=1)
    check_range(lrs, name="lrs", lo=0.0, lo_open=True, what="learning rates")
    _check_catapult_scalars(r0=r0, lam0=lam0, c=c, y=y)
    scalars = [jnp.asarray(a, dtype=jnp.result_type(float)) for a in (r0, lam0, c, y)]
    return jax.vmap(lambda lr: _recursion(*scalars, lr, steps))(lrs)


def classify_regime(losses: ArrayLike, lams: ArrayLike | None = None, *, tol: float = 1e-8) -> str:
    """The regime of a gradient-descent run from its losses L_0..L_T (and kernels).

    * ``"divergent"``: the last loss is not finite or exceeds 1e100 (or, without ``lams``,
      is not below the first);
    * ``"dead"`` (needs the tangent kernels ``lams``): the loss is stuck because the kernel
      has collapsed, lambda_T < 1e-10 lambda_0 (a ReLU network whose units all switched off);
    * ``"linear"``: converged (L_T < tol max(L_0, 1)) and the loss never rose above L_0;
    * ``"catapult"``: converged after the loss rose above L_0;
    * ``"undecided"``: none of these (run longer).

    Args:
        losses: the losses, shape (T + 1,) with T >= 1 (non-finite values allowed).
        lams: the tangent kernels at the same steps, or None.
        tol: relative level of convergence.

    Returns:
        one of the five strings above.

    Example:
        >>> from lecturekit import catapult
        >>> catapult.classify_regime([1.0, 0.5, 1e-12]), catapult.classify_regime([1.0, 5.0, 1e-12])
        ('linear', 'catapult')
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
    """The highest loss of a trajectory and the step at which it is reached.

    Args:
        losses: the losses, shape (T + 1,).

    Returns:
        (peak loss, step), a Python float and int.

    Example:
        >>> from lecturekit import catapult
        >>> catapult.catapult_peak([1.0, 4.0, 9.0, 0.5])
        (9.0, 2)
    """
    loss = as_host_float_array(losses, name="losses", ndim=1, finite=False, nonempty=True)
    t = int(np.argmax(loss))
    return float(loss[t]), t


def catapult_duration(lams: ArrayLike, lr: float, *, level: float = 0.5) -> int:
    """Number of steps until the tangent kernel has fallen ``level`` of the way to 2/eta.

    The first t with lambda_t <= lambda_0 - level (lambda_0 - 2/eta), eta = ``lr``: the end
    of the catapult's rise, when the kernel has moved by a finite fraction of what it must
    lose.

    Args:
        lams: the kernels lambda_t, shape (T + 1,).
        lr: the learning rate eta > 0.
        level: the fraction, in (0, 1].

    Returns:
        the step (Python int), or -1 if the kernel never gets there (no catapult).

    Example:
        >>> from lecturekit import catapult
        >>> catapult.catapult_duration([3.0, 2.9, 2.4, 1.5], 1.0)        # target 3 - (3 - 2) / 2
        2
    """
    lam = as_host_float_array(lams, name="lams", ndim=1, finite=False, nonempty=True)
    lr = check_real(lr, name="lr", positive=True)
    level = check_real(level, name="level", positive=True, at_most=1.0)
    target = lam[0] - level * (lam[0] - 2.0 / lr)
    hit = np.nonzero(lam <= target)[0]
    return int(hit[0]) if hit.size else -1


# ----------------------------------------------------------------------------- gradient descent
def _gd_run(f, quadratic, params0, x, y, lr, steps):
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
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(dead, a, a - lr * b), p, g)
        return (new, dead), (jnp.where(dead, jnp.inf, loss), jnp.where(dead, jnp.inf, lam))

    (final, _), (losses, lams) = jax.lax.scan(step, (params0, jnp.asarray(False)), None, length=steps)
    return final, losses, lams


_gd_one = jax.jit(_gd_run, static_argnames=("f", "quadratic", "steps"))


@partial(jax.jit, static_argnames=("f", "quadratic", "steps"))
def _gd_many(f, quadratic, params0, x, y, lrs, steps):
    return jax.vmap(lambda e: _gd_run(f, quadratic, params0, x, y, e, steps)[1:])(lrs)


def _check_gd_args(f, params0, x, y, steps):
    check_model(f)
    check_params_pytree(params0, name="params0")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    if y.shape != (x.shape[0],):
        raise ValueError(f"y must have shape ({x.shape[0]},) for x of shape {tuple(x.shape)}, got {y.shape}")
    return x, y, check_positive_int(steps, name="steps")


def gd_one_point(
    f: Model, params0: Any, x: ArrayLike, y: ArrayLike, lr: float, steps: int, *, quadratic: bool = False
) -> tuple[Any, jax.Array, jax.Array]:
    """Gradient descent on L = (1/2) sum_a (f(params, x_a) - y_a)^2 with step ``lr``.

    x: (n, d), y: (n,). With ``quadratic=True`` the model trained is the quadratic model of
    ``f`` around ``params0`` (:func:`quadratic_model`), else ``f`` itself. Returns
    (final params, losses L_0..L_{steps-1}, lambda_t) where lambda_t = ||grad f(x_0)||^2 is
    the tangent kernel of the first example at the same step (the whole kernel when n = 1).
    A run whose loss exceeds 1e100 is stopped (loss and lambda reported as inf). ``f`` is a
    static argument of a jitted loop: pass the same function object to reuse compilations.
    """
    x, y, steps = _check_gd_args(f, params0, x, y, steps)
    lr = check_real(lr, name="lr", positive=True)
    return _gd_one(f, bool(quadratic), params0, x, y, lr, steps)


def gd_sweep(
    f: Model, params0: Any, x: ArrayLike, y: ArrayLike, lrs: ArrayLike, steps: int, *, quadratic: bool = False
) -> tuple[jax.Array, jax.Array]:
    """:func:`gd_one_point` for every step size in ``lrs`` (vectorized with ``vmap``).

    Returns (losses, lambdas), each of shape (len(lrs), steps).
    """
    x, y, steps = _check_gd_args(f, params0, x, y, steps)
    lrs = as_float_array(lrs, name="lrs", ndim=1)
    check_range(lrs, name="lrs", lo=0.0, lo_open=True, what="learning rates")
    return _gd_many(f, bool(quadratic), params0, x, y, lrs, steps)


def gd_with_sharpness(
    f: Model,
    params0: Any,
    x: ArrayLike,
    y: ArrayLike,
    lr: float,
    steps: int,
    *,
    every: int = 10,
    key: jax.Array,
    num_iter: int = 20,
) -> tuple[jax.Array, jax.Array]:
    """Full-batch GD on L = (1/2n) sum_a (f(params, x_a) - y_a)^2, with the sharpness.

    Returns (losses at every step, sharpness lambda_max(Hessian of L) every ``every`` steps),
    the latter by :func:`lecturekit.hessian.top_eigenvalue` with ``num_iter`` Lanczos steps.
    """
    check_model(f)
    check_params_pytree(params0, name="params0")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    if y.shape != (x.shape[0],):
        raise ValueError(f"y must have shape ({x.shape[0]},) for x of shape {tuple(x.shape)}, got {y.shape}")
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    every = check_positive_int(every, name="every")
    num_iter = check_positive_int(num_iter, name="num_iter", minimum=2)
    check_key(key)
    if steps % every:
        raise ValueError(f"steps ({steps}) must be a multiple of every ({every})")
    flat0, unravel = ravel_pytree(params0)
    return _gd_sharp(f, unravel, flat0, x, y, lr, steps // every, every, key, num_iter)


@partial(jax.jit, static_argnames=("f", "unravel", "blocks", "every", "num_iter"))
def _gd_sharp(f, unravel, flat0, x, y, lr, blocks, every, key, num_iter):
    def loss_flat(w):
        return 0.5 * jnp.mean((f(unravel(w), x) - y) ** 2)

    grad = jax.grad(loss_flat)

    def inner(w, _):
        loss, g = jax.value_and_grad(loss_flat)(w)
        return w - lr * g, loss

    def outer(w, k):
        sharp = _hessian.lanczos_quadrature(_hessian._tridiagonal(
            lambda v: jax.jvp(grad, (w,), (v,))[1], jax.random.normal(k, w.shape, w.dtype),
            min(num_iter, w.shape[0]), True)).nodes[-1]
        w, losses = jax.lax.scan(inner, w, None, length=every)
        return w, (losses, sharp)

    keys = jax.random.split(key, blocks)
    _, (losses, sharps) = jax.lax.scan(outer, flat0, keys)
    return losses.reshape(-1), sharps
