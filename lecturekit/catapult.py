"""The catapult phase: gradient descent with large steps, on one example in two numbers.

For one example (x, y) and the one-hidden-layer ReLU network
f = sum_i v_i relu(u_i . x / sqrt(d)) / sqrt(m), the quadratic model
(:func:`lecturekit.quadratic.quadratic_model`) is the frozen-activation bilinear model
z = sum_i s_i v_i u_i . x / sqrt(m d), s_i = 1{u_i(0) . x > 0} (the convention
relu'(0) = 0 of lecturekit and of JAX; the tie u_i(0) . x = 0 has probability zero).
Gradient descent on L = (z - y)^2 / 2 with learning rate ``lr`` (eta in the text) closes
on the residual r = z - y and the tangent kernel lambda = ||grad z||^2:

    r_{t+1}      = r_t (1 - eta lambda_t + eta^2 c z_t r_t),
    lambda_{t+1} = lambda_t + eta c r_t^2 (eta lambda_t - 4 z_t / r_t),   c = ||x||^2 /
    (m d).

* :func:`catapult_constants` computes (r_0, lambda_0, c) from a network's parameters;
* :func:`catapult_recursion` iterates the recursion (``lax.scan``, vectorizable with
  ``vmap``), :func:`catapult_sweep` for many learning rates at once;
* :func:`classify_regime`, :func:`catapult_peak` and :func:`catapult_duration` turn a
  trajectory into the quantities of the phase diagram (linear, catapult, divergent);
* :func:`gd_one_point` and :func:`gd_sweep` run gradient descent
  (:func:`lecturekit.training.gradient_descent`) on a network or on its quadratic model,
  recording the tangent kernel of the example at every step (a
  :class:`lecturekit.training.KernelObserver`), to test the recursion and to see where
  real networks leave it; :func:`gd_with_sharpness` records the sharpness
  lambda_max(nabla^2 L) along a run (the edge of stability).

Losses are the square loss of :mod:`lecturekit.training`, L = (1/2n) sum_a (f(x_a) -
y_a)^2, which for the one example of the recursion is L = r^2 / 2.

A trajectory whose residual exceeds ``DIVERGED`` = 1e100 is called divergent and is
frozen there, so that a divergent run never produces inf/NaN (which would poison vmapped
sweeps).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import training as _training
from ._validation import (
    NumericalWarning,
    as_float_array,
    as_host_float_array,
    check_key,
    check_model,
    check_params_pytree,
    check_positive_int,
    check_range,
    check_real,
)
from .quadratic import quadratic_model

__all__ = [
    "CatapultConstants",
    "catapult_constants",
    "catapult_recursion",
    "catapult_sweep",
    "classify_regime",
    "catapult_peak",
    "catapult_duration",
    "gd_one_point",
    "gd_sweep",
    "gd_with_sharpness",
]

Model = Callable[[Any, jax.Array], jax.Array]

#: A loss or residual above this is called divergent (runs are frozen there).
DIVERGED = 1e100


class CatapultConstants(NamedTuple):
    """The constants of the one-example recursion, from :func:`catapult_constants`.

    Attributes:
        r0: initial residual z_0 - y.
        lam0: initial tangent kernel lambda_0 = ||grad z||^2.
        c: ||x||^2 / (m d) times the multipliers squared
            (see :func:`catapult_constants`).
        y: the label.

    Example:
        >>> from lecturekit import catapult
        >>> cc = catapult.CatapultConstants(r0=0.3, lam0=1.0, c=1e-4, y=1.0)
        >>> rs, lams = catapult.catapult_recursion(cc.r0, cc.lam0, cc.c, cc.y,
        ...                                        1.5 / cc.lam0, 50)
        >>> abs(float(rs[-1])) < 1e-6  # eta lambda0 = 1.5: linear regime
        True
    """

    r0: float
    lam0: float
    c: float
    y: float


def catapult_constants(
    net: Any, params: Any, x: ArrayLike, y: float
) -> CatapultConstants:
    """(r0, lambda0, c, y) of the one-example problem for a one-hidden-layer ReLU
    network.

    The network must be ``nets.mlp((d, m, 1), "relu", w_std=s_w, b_std=0, out_w_std=s_v,
    out_b_std=0)`` (NTK parameterization), i.e. f(x) = s_v s_w sum_i v_i relu(u_i . x) /
    sqrt(m d) with u_i = W1[:, i], v_i = W2[i, 0]; with s_w = s_v = 1 this is the
    network f = sum_i v_i relu(u_i . x / sqrt(d)) / sqrt(m) of the catapult analysis.
    Then, with kappa = s_v s_w / sqrt(m d), a_i = u_i . x and s_i = 1{a_i > 0}
    (relu'(0) = 0),

        lambda0 = kappa^2 sum_i s_i (v_i^2 ||x||^2 + a_i^2),   c = kappa^2 ||x||^2,
        r0 = f(x) - y.

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
        >>> params = [{"W": np.array([[1.0, -1.0, 0.5], [0.0, 1.0, 0.5]]),
        ...            "b": np.zeros(3)},
        ...           {"W": np.array([[1.0], [2.0], [-1.0]]), "b": np.zeros(1)}]
        >>> cc = catapult.catapult_constants(net, params, np.array([1.0, 1.0]), 0.5)
        >>> round(cc.r0, 6), round(cc.lam0, 6), round(cc.c, 6)
        (-0.5, 1.0, 0.333333)
    """
    from . import nets as _nets

    if not isinstance(net, _nets.MLP):
        raise TypeError(
            f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}"
        )
    if (
        net.depth != 1
        or net.activation.name != "relu"
        or net.parameterization != "ntk"
        or net.b_std != 0
        or net.out_b_std != 0
        or net.output_activation is not None
        or net.output_dim != 1
    ):
        raise ValueError(
            "net must be a one-hidden-layer ReLU network in the NTK parameterization "
            "with "
            "b_std = out_b_std = 0, no output activation and one output (the one-point "
            "recursion's model)"
        )
    net.check_params(params)
    x = as_float_array(x, name="x", ndim=1)
    y = check_real(y, name="y")
    d, m = net.widths[0], net.widths[1]
    if x.shape != (d,):
        raise ValueError(f"x must have shape ({d},) for this network, got {x.shape}")
    # NumPy on the host: a few reductions, and no XLA compilation for each new width m
    x = np.asarray(x, dtype=np.float64)
    u, v = (
        np.asarray(params[0]["W"], dtype=np.float64),
        np.asarray(params[1]["W"], dtype=np.float64)[:, 0],
    )
    kappa = net.w_std * net.out_w_std / np.sqrt(m * d)
    a = x @ u
    # relu'(0) = 0, the convention of lecturekit and of jax
    s = (a > 0).astype(np.float64)
    xx = x @ x
    lam0 = kappa**2 * np.sum(s * (v**2 * xx + a**2))
    # = net.apply(params, x[None])[0] (biases have multiplier 0)
    z0 = kappa * np.sum(v * np.maximum(a, 0.0))
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
    r0: ArrayLike,
    lam0: ArrayLike,
    c: ArrayLike,
    y: ArrayLike,
    lr: ArrayLike,
    steps: int,
) -> tuple[jax.Array, jax.Array]:
    """Iterate the one-example recursion for ``steps`` steps at learning rate ``lr``
    (eta).

        r_{t+1}      = r_t (1 - eta lambda_t + eta^2 c z_t r_t),           z_t = r_t +
        y, lambda_{t+1} = lambda_t + eta c r_t (eta lambda_t r_t - 4 z_t).

    This is gradient descent on L = r^2/2 for the quadratic model of the network of
    :func:`catapult_constants`. A residual that exceeds ``DIVERGED`` = 1e100 is frozen
    at +-1e100 (divergence), lambda at its last value.

    Args:
        r0, lam0, c, y: scalars (e.g. the fields of :class:`CatapultConstants`); lam0, c
            >= 0.
        lr: the learning rate eta > 0 (a scalar; ``jax.vmap`` over any argument for
            sweeps).
        steps: number of steps (Python int >= 1).

    Returns:
        (r_t, lambda_t) for t = 0..steps, two arrays of shape (steps + 1,).

    Example:
        >>> from lecturekit import catapult
        >>> rs, lams = catapult.catapult_recursion(  # eta lambda0 = 3
        ...     0.3, 1.0, 1e-4, 1.0, 3.0, 300)
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
            raise ValueError(
                f"{name} must be a scalar (vmap the function for sweeps), got shape "
                f"{tuple(a.shape)}"
            )
        if name in ("lam0", "c"):
            check_range(a, name=name, lo=0.0)
        elif name == "lr":
            check_range(a, name=name, lo=0.0, lo_open=True, what="a learning rate")


def catapult_sweep(
    r0: ArrayLike,
    lam0: ArrayLike,
    c: ArrayLike,
    y: ArrayLike,
    lrs: ArrayLike,
    steps: int,
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
        >>> rs, lams = catapult.catapult_sweep(0.3, 1.0, 1e-4, 1.0,
        ...                                    np.array([1.5, 3.0, 5.0]), 300)
        >>> [catapult.classify_regime(0.5 * r**2, lam) for r, lam in zip(rs, lams)]
        ['linear', 'catapult', 'divergent']
    """
    steps = check_positive_int(steps, name="steps")
    lrs = as_float_array(lrs, name="lrs", ndim=1)
    check_range(lrs, name="lrs", lo=0.0, lo_open=True, what="learning rates")
    _check_catapult_scalars(r0=r0, lam0=lam0, c=c, y=y)
    scalars = [jnp.asarray(a, dtype=jnp.result_type(float)) for a in (r0, lam0, c, y)]
    return jax.vmap(lambda lr: _recursion(*scalars, lr, steps))(lrs)


def classify_regime(
    losses: ArrayLike, lams: ArrayLike | None = None, *, tol: float = 1e-8
) -> str:
    """The regime of a gradient-descent run from its losses L_0..L_T (and kernels).

    * ``"divergent"``: the last loss is not finite or exceeds 1e100 (or, without
      ``lams``, is not below the first);
    * ``"dead"`` (needs the tangent kernels ``lams``): the loss is stuck because the
      kernel has collapsed, lambda_T < 1e-10 lambda_0 (a ReLU network whose units all
      switched off);
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
        >>> (catapult.classify_regime([1.0, 0.5, 1e-12]),
        ...  catapult.classify_regime([1.0, 5.0, 1e-12]))
        ('linear', 'catapult')
    """
    loss = as_host_float_array(losses, name="losses", ndim=1, finite=False)
    if loss.size < 2:
        raise ValueError(
            "losses must be a 1-D trajectory with at least 2 entries, got shape "
            f"{loss.shape}"
        )
    tol = check_real(tol, name="tol", positive=True)
    if lams is not None:
        lam = as_host_float_array(lams, name="lams", ndim=1, finite=False)
        if lam.shape != loss.shape:
            raise ValueError(
                f"lams must have the shape of losses {loss.shape}, got {lam.shape}"
            )
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
    loss = as_host_float_array(
        losses, name="losses", ndim=1, finite=False, nonempty=True
    )
    t = int(np.argmax(loss))
    return float(loss[t]), t


def catapult_duration(lams: ArrayLike, lr: float, *, level: float = 0.5) -> int:
    """Number of steps until the tangent kernel has fallen ``level`` of the way to
    2/eta.

    The first t with lambda_t <= lambda_0 - level (lambda_0 - 2/eta), eta = ``lr``: the
    end of the catapult's rise, when the kernel has moved by a finite fraction of what
    it must lose.

    Args:
        lams: the kernels lambda_t, shape (T + 1,).
        lr: the learning rate eta > 0.
        level: the fraction, in (0, 1].

    Returns:
        the step (Python int), or -1 if the kernel never gets there (no catapult).

    Example:
        >>> from lecturekit import catapult
        >>> lams = [3.0, 2.9, 2.4, 1.5]
        >>> catapult.catapult_duration(lams, 1.0)  # target 3 - (3 - 2) / 2
        2
    """
    lam = as_host_float_array(lams, name="lams", ndim=1, finite=False, nonempty=True)
    lr = check_real(lr, name="lr", positive=True)
    level = check_real(level, name="level", positive=True, at_most=1.0)
    target = lam[0] - level * (lam[0] - 2.0 / lr)
    hit = np.nonzero(lam <= target)[0]
    return int(hit[0]) if hit.size else -1


# --------------------------------------------------------------------- gradient descent
@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class _QuadraticModel:
    """The quadratic model of f around params0 as data: params0 is a pytree leaf, so
    training.gradient_descent traces it (one compilation for every params0)."""

    params0: Any
    f: Callable = field(metadata=dict(static=True))

    def __call__(self, params, x):
        return quadratic_model(self.f, self.params0)(params, x)


def _kernel_run(f, quadratic, params0, x, y, lr, steps):
    """training.gradient_descent on the square loss, observing lambda = the tangent
    kernel's first diagonal entry ||grad f(x_0)||^2 every step, frozen past DIVERGED."""
    model = _QuadraticModel(params0, f) if quadratic else f
    observe = _training.KernelObserver(model, x[:1], diagonal=True)
    with warnings.catch_warnings():  # a divergent run is a result here, not a mistake
        warnings.simplefilter("ignore", NumericalWarning)
        run = _training.gradient_descent(
            model,
            params0,
            lr,
            steps,
            x=x,
            y=y,
            every=1,
            observe=observe,
            stop_above=DIVERGED,
        )
    return run._replace(observed=run.observed[:, 0])


def _check_gd_args(f, params0, x, y, steps):
    check_model(f)
    check_params_pytree(params0, name="params0")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    if y.shape != (x.shape[0],):
        raise ValueError(
            f"y must have shape ({x.shape[0]},) for x of shape {tuple(x.shape)}, got "
            f"{y.shape}"
        )
    return x, y, check_positive_int(steps, name="steps")


def gd_one_point(
    f: Model,
    params0: Any,
    x: ArrayLike,
    y: ArrayLike,
    lr: float,
    steps: int,
    *,
    quadratic: bool = False,
) -> _training.Trajectory:
    """Gradient descent on the square loss, recording the tangent kernel of the first
    example.

    :func:`lecturekit.training.descend` on L = (1/2n) sum_a (f(params, x_a) - y_a)^2
    (for one example, L = (f(x) - y)^2 / 2, the loss of the recursion) with learning
    rate ``lr``, observing lambda_t = ||grad_params f(params_t, x_0)||^2 at every step
    (the whole tangent kernel when n = 1). With ``quadratic=True`` the model trained is
    the quadratic model of ``f`` around ``params0``
    (:func:`lecturekit.quadratic.quadratic_model`), else ``f`` itself. A run whose loss
    exceeds ``DIVERGED`` = 1e100 (or is not finite) is frozen there: its later losses
    are +inf (``diverged_at`` says when). ``f`` is a static argument of a jitted
    program: pass the same function object to reuse compilations (``lr`` is traced: new
    values compile nothing).

    Args:
        f: the model f(params, x) -> (n,).
        params0: the initial parameters (and the centre of the quadratic model).
        x: inputs, shape (n, d).
        y: labels, shape (n,).
        lr: the learning rate eta > 0.
        steps: number of steps.
        quadratic: train the quadratic model of ``f`` instead of ``f``.

    Returns:
        a :class:`lecturekit.training.Trajectory`: ``losses`` L_0..L_steps (steps + 1,),
        ``observed`` the kernels lambda_0..lambda_steps (steps + 1,), ``final_params``,
        ``diverged_at`` (-1 if never).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import catapult
        >>> f = lambda p, x: p["a"] * p["b"] * x[:, 0]  # lambda = (a^2 + b^2) x^2
        >>> run = catapult.gd_one_point(f, {"a": jnp.array(1.0), "b": jnp.array(0.5)},
        ...                             jnp.ones((1, 1)), jnp.ones(1), 0.5, 40)
        >>> (run.losses.shape, round(float(run.observed[0]), 4),
        ...  float(run.losses[-1]) < 1e-12)
        ((41,), 1.25, True)
    """
    x, y, steps = _check_gd_args(f, params0, x, y, steps)
    lr = check_real(lr, name="lr", positive=True)
    return _kernel_run(f, bool(quadratic), params0, x, y, lr, steps)


def gd_sweep(
    f: Model,
    params0: Any,
    x: ArrayLike,
    y: ArrayLike,
    lrs: ArrayLike,
    steps: int,
    *,
    quadratic: bool = False,
) -> _training.Trajectory:
    """:func:`gd_one_point` for every learning rate in ``lrs`` at once (``vmap`` over
    lr).

    Args:
        f, params0, x, y, steps, quadratic: as in :func:`gd_one_point`.
        lrs: learning rates, shape (k,), all > 0.

    Returns:
        a :class:`lecturekit.training.Trajectory` whose every field has a leading axis
        k: ``losses`` and ``observed`` (the kernels) of shape (k, steps + 1).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import catapult
        >>> f = lambda p, x: p["a"] * p["b"] * x[:, 0]
        >>> runs = catapult.gd_sweep(f, {"a": jnp.array(1.0), "b": jnp.array(0.5)},
        ...                          jnp.ones((1, 1)), jnp.ones(1),
        ...                          jnp.array([0.5, 1.0]), 40)
        >>> runs.losses.shape, runs.observed.shape
        ((2, 41), (2, 41))
    """
    x, y, steps = _check_gd_args(f, params0, x, y, steps)
    lrs = as_float_array(lrs, name="lrs", ndim=1)
    check_range(lrs, name="lrs", lo=0.0, lo_open=True, what="learning rates")
    # vmap of the compiled entry: its one program, batched over the traced lr
    run = partial(_kernel_run, f, bool(quadratic), params0, x, y, steps=steps)
    return jax.vmap(run)(lrs)


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
    lanczos_steps: int = 20,
) -> _training.Trajectory:
    """Full-batch gradient descent on the square loss, observing the sharpness.

    :func:`lecturekit.training.descend` on L = (1/2n) sum_a (f(params, x_a) - y_a)^2
    with learning rate ``lr``, observing the sharpness lambda_max(nabla^2 L) every
    ``every`` steps by :func:`lecturekit.hessian.top_eigenvalue` (``lanczos_steps``
    Lanczos steps from the same start vector, drawn with ``key``, at every observation).
    ``lr`` is traced (a new value compiles nothing).

    Args:
        f: the model f(params, x) -> (n,).
        params0: the initial parameters.
        x: inputs, shape (n, d).
        y: labels, shape (n,).
        lr: the learning rate eta > 0.
        steps: number of steps.
        every: observation period.
        key: PRNG key of the Lanczos start vector.
        lanczos_steps: Lanczos steps per sharpness estimate (>= 2).

    Returns:
        a :class:`lecturekit.training.Trajectory`: ``losses`` (steps + 1,) and
        ``observed`` the sharpness at ``steps`` = 0, every, ..., steps.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from lecturekit import catapult
        >>> f = lambda p, x: x @ p  # linear: nabla^2 L = X^T X / n
        >>> run = catapult.gd_with_sharpness(
        ...     f, jnp.zeros(2), jnp.array([[2.0, 0.0], [0.0, 1.0]]), jnp.ones(2),
        ...     0.5, 20, every=10, key=jax.random.key(0))
        >>> run.steps.tolist(), [round(float(s), 4) for s in run.observed]
        ([0, 10, 20], [2.0, 2.0, 2.0])
    """
    x, y, steps = _check_gd_args(f, params0, x, y, steps)
    lr = check_real(lr, name="lr", positive=True)
    every = check_positive_int(every, name="every")
    lanczos_steps = check_positive_int(lanczos_steps, name="lanczos_steps", minimum=2)
    check_key(key)
    observe = _training.SharpnessObserver(f, x, y, key, lanczos_steps)
    return _training.gradient_descent(
        f, params0, lr, steps, x=x, y=y, every=every, observe=observe
    )
