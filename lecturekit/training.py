"""Full-batch gradient descent with snapshots of the loss, the parameters and the tangent kernel.

Conventions. A model is any f(params, x) mapping a batch x of shape (n, d) to (n,) (or
(n, c)); params is any pytree of float arrays. The default loss is the mean squared error

    L(params) = (1/2n) sum_i ||f(params, x_i) - y_i||^2,

so that gradient descent with step ``lr`` for s steps approximates gradient flow up to time
t = lr * s and, for a linear model with tangent kernel K, the outputs follow
d f_S/dt = -(1/n) K (f_S - y) (see :mod:`lecturekit.regression`).

* :func:`descend` is the pure inner loop (``lax.scan`` over steps of theta <- theta - lr grad L);
  it can be jitted and ``vmap``-ed (over seeds, learning rates, ...).
* :func:`descend_observed` is ``descend`` with snapshots: nested ``lax.scan`` loops that
  evaluate ``observe(params)`` every ``every`` steps; also pure (jit it, vmap it).
* :func:`gradient_descent` validates its arguments and runs ``descend_observed`` as ONE
  jitted program (one compilation per call), recording the parameters and, optionally, the
  empirical NTK (``tangent.empirical_ntk``) at every snapshot.
* :func:`relative_kernel_change` is Delta K = ||K_t - K_0||_F / ||K_0||_F.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import tangent as _tangent
from ._validation import (
    as_float_array, check_callable, check_params_pytree, check_positive_int, check_range, check_real, concrete,
    is_traced, warn_numerical,
)

__all__ = [
    "mse_loss",
    "descend",
    "descend_observed",
    "snapshot_steps",
    "gradient_descent",
    "relative_kernel_change",
    "Trajectory",
]

Model = Callable[[Any, jax.Array], jax.Array]


def mse_loss(f: Model, x: ArrayLike, y: ArrayLike) -> Callable[[Any], jax.Array]:
    """The loss params -> (1/2n) sum_i ||f(params, x_i) - y_i||^2 on the batch (x, y)."""
    check_callable(f, name="f", what="a model f(params, x)")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=(1, 2))
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"x and y must have the same number of rows, got {x.shape[0]} and {y.shape[0]}")
    n = x.shape[0]

    def loss(params):
        return 0.5 * jnp.sum((f(params, x) - y) ** 2) / n

    return loss


def descend(loss_fn: Callable[[Any], jax.Array], params: Any, lr: float | jax.Array, steps: int):
    """``steps`` steps of gradient descent theta <- theta - lr grad L(theta), by ``lax.scan``.

    Returns (final params, losses) where losses[k] is L before step k (shape (steps,)).
    Pure and traceable: jit it, or vmap it over params/lr (``steps`` must be a Python int).
    """
    _check_loop(loss_fn, params, lr, steps)

    def step(p, _):
        value, grad = jax.value_and_grad(loss_fn)(p)
        p = jax.tree_util.tree_map(lambda a, g: a - lr * g, p, grad)
        return p, value

    return jax.lax.scan(step, params, None, length=steps)


def snapshot_steps(steps: int, every: int) -> np.ndarray:
    """The step counts 0, every, 2 every, ... at which :func:`descend_observed` observes, plus ``steps``."""
    steps = check_positive_int(steps, name="steps", minimum=0)
    every = check_positive_int(every, name="every")
    return np.unique(np.append(np.arange(0, steps + 1, every), steps))


def descend_observed(
    loss_fn: Callable[[Any], jax.Array],
    params: Any,
    lr: float | jax.Array,
    steps: int,
    every: int,
    observe: Callable[[Any], Any],
):
    """``descend`` with snapshots: gradient descent observed every ``every`` steps.

    Returns (final params, losses, observations): ``losses`` has shape (steps + 1,), the loss
    before every step and after the last one; ``observations`` is ``observe(params)`` at the
    steps :func:`snapshot_steps` ``(steps, every)`` = 0, every, 2 every, ..., steps, every leaf
    stacked along a new leading axis. The full chunks run as a ``lax.scan`` over chunks of an
    inner ``lax.scan`` over steps, so the step is compiled once whatever ``steps`` is. Pure
    and traceable (``steps`` and ``every`` must be Python ints).
    """
    _check_loop(loss_fn, params, lr, steps)
    every = check_positive_int(every, name="every")
    check_callable(observe, name="observe", what="a function of params")
    full, rest = divmod(steps, every)

    def chunk(p, _):
        p, losses = descend(loss_fn, p, lr, every)
        return p, (losses, observe(p))

    first = observe(params)
    p, (losses, seen) = jax.lax.scan(chunk, params, None, length=full)
    losses = [losses.reshape(-1)]
    seen = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a[None], b]), first, seen)
    if rest:
        p, last_losses = descend(loss_fn, p, lr, rest)
        losses.append(last_losses)
        seen = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b[None]]), seen, observe(p))
    losses.append(jnp.reshape(loss_fn(p), (1,)))
    return p, jnp.concatenate(losses), seen


class Trajectory(NamedTuple):
    """What :func:`gradient_descent` records.

    ``steps``: (s,) step counts of the snapshots (0 first, the last step last);
    ``losses``: (steps + 1,) the loss before every step and after the last one;
    ``params``: the snapshot parameters, every leaf stacked along a leading axis of size s
    (None if ``keep_params=False``); ``kernels``: (s, n_k, n_k) empirical NTKs at the
    snapshots on ``kernel_x`` (None if not asked for); ``final_params``: the last iterate.
    """

    steps: np.ndarray
    losses: jax.Array
    params: Any
    kernels: jax.Array | None
    final_params: Any


def gradient_descent(
    f: Callable,
    params: Any,
    lr: float,
    steps: int,
    *,
    x: ArrayLike | None = None,
    y: ArrayLike | None = None,
    snapshot_every: int | None = None,
    kernel_x: ArrayLike | None = None,
    track_kernel: bool = False,
    keep_params: bool = True,
) -> Trajectory:
    """Full-batch gradient descent with snapshots.

    Two ways to call it:

    * ``gradient_descent(f, params, lr, steps, x=x, y=y)``: f(params, x) is a model and the
      loss is the mean squared error (1/2n) sum (f - y)^2 (see :func:`mse_loss`);
    * ``gradient_descent(loss_fn, params, lr, steps)``: loss_fn(params) is any scalar loss.

    Snapshots (parameters, and the empirical NTK if ``track_kernel`` or ``kernel_x`` is given)
    are taken at steps 0, snapshot_every, 2 snapshot_every, ... and at the last step
    (default: only 0 and the last). Kernels need the model form; they are computed on
    ``kernel_x`` (default: the training inputs x) with ``tangent.empirical_ntk``, which needs
    a scalar-output model. The whole run (steps, snapshots, kernels) is one jitted program
    (:func:`descend_observed`), compiled once per call. A loss that becomes NaN or infinite
    (``lr`` beyond the stable step) gives a :class:`~lecturekit.NumericalWarning`.
    """
    check_callable(f, name="f", what="a model f(params, x) or a loss loss_fn(params)")
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps", minimum=0)
    every = steps if snapshot_every is None else check_positive_int(snapshot_every, name="snapshot_every")
    every = max(every, 1)
    check_params_pytree(params)
    if (x is None) != (y is None):
        raise ValueError("give both x and y (model form) or neither (loss form)")
    model_form = x is not None
    loss_fn = mse_loss(f, x, y) if model_form else f
    what = "f(params, x)" if model_form else "loss_fn(params)"
    try:
        shape = jax.eval_shape(loss_fn, params).shape
    except Exception as err:  # a model that cannot take these params or inputs: say so here
        raise ValueError(f"{what} could not be evaluated: {type(err).__name__}: {err}") from None
    if shape != ():
        raise ValueError(f"{what} must give a scalar loss, got shape {shape}")
    want_kernel = track_kernel or kernel_x is not None
    if want_kernel and not model_form:
        raise ValueError("kernel snapshots need the model form gradient_descent(f, params, ..., x=x, y=y)")
    if want_kernel:
        kx = as_float_array(x if kernel_x is None else kernel_x, name="kernel_x", ndim=2)
        if kx.shape[1] != np.shape(x)[1]:
            raise ValueError(f"kernel_x must have the {np.shape(x)[1]} columns of x, got shape {tuple(kx.shape)}")

        def kernel_fn(p):
            return _tangent.empirical_ntk(f, p, kx)

    def observe(p):
        return (p if keep_params else None, kernel_fn(p) if want_kernel else None)

    run = jax.jit(lambda p: descend_observed(loss_fn, p, lr, steps, every, observe))
    final, losses, (snap_params, snap_kernels) = run(params)
    _warn_divergence(losses, lr)
    return Trajectory(
        steps=snapshot_steps(steps, every),
        losses=losses,
        params=snap_params,
        kernels=snap_kernels,
        final_params=final,
    )


def relative_kernel_change(k_t: ArrayLike, k_0: ArrayLike) -> jax.Array:
    """Delta K = ||K_t - K_0||_F / ||K_0||_F; K_t may carry leading (snapshot) axes.

    Computed with NumPy for concrete arrays (nothing to compile), with jax.numpy when traced.
    """
    kt = as_float_array(k_t, name="k_t", finite=False)
    k0 = as_float_array(k_0, name="k_0", ndim=2, finite=False)
    if kt.shape[-2:] != k0.shape:
        raise ValueError(f"k_t must end with the shape of k_0 {tuple(k0.shape)}, got {tuple(kt.shape)}")
    if isinstance(kt, jax.core.Tracer) or isinstance(k0, jax.core.Tracer):
        return jnp.sqrt(jnp.sum((kt - k0) ** 2, axis=(-2, -1))) / jnp.linalg.norm(k0)
    kt, k0 = np.asarray(kt), np.asarray(k0)
    for name, arr in (("k_t", kt), ("k_0", k0)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, but it contains NaN or infinity")
    norm0 = np.linalg.norm(k0)
    if norm0 == 0.0:
        raise ValueError("k_0 is the zero matrix: the relative change is undefined")
    return jnp.asarray(np.sqrt(np.sum((kt - k0) ** 2, axis=(-2, -1))) / norm0)


def _check_loop(loss_fn: Any, params: Any, lr: Any, steps: Any) -> None:
    """Checks of :func:`descend`'s arguments that hold under jit and vmap too (values of a
    traced ``lr`` are not inspected; ``lr`` itself is passed on unchanged)."""
    check_callable(loss_fn, name="loss_fn", what="a scalar loss loss_fn(params)")
    check_params_pytree(params)
    if not is_traced(lr):
        lr_array = as_float_array(lr, name="lr", ndim=0)
        check_range(lr_array, name="lr", lo=0.0, lo_open=True, what="a learning rate")
    check_positive_int(steps, name="steps", minimum=0)


def _warn_divergence(losses: jax.Array, lr: float) -> None:
    """Warn if gradient descent blew up: a non-finite loss means lr is beyond the stable step."""
    values = concrete(losses)
    bad = np.zeros(0, dtype=int) if values is None else np.nonzero(~np.isfinite(values))[0]
    if bad.size:
        warn_numerical(
            f"gradient_descent diverged: the loss is not finite from step {int(bad[0])} on; "
            f"lr = {lr:g} is too large for this problem (gradient descent is stable for lr < 2 / "
            "the largest Hessian eigenvalue)",
            stacklevel=4,
        )
