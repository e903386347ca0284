"""Gradient descent: the one loop of lecturekit, its losses, trajectories and Delta K.

Conventions. A model is any f(params, x) mapping a batch x of shape (n, d) to (n,) or
(n, k); params is any pytree of float arrays. The square loss has ONE normalization in
lecturekit,

    L(params) = (1/2n) sum_i ||f(params, x_i) - y_i||^2          (:func:`square_loss`),

so that gradient descent with step ``lr`` for s steps approximates gradient flow up to
time t = lr s and, for a model linear in its parameters with tangent kernel K, the
training outputs follow d f_S/dt = -(1/n) K (f_S - y)
(see :mod:`lecturekit.regression`).

* :func:`descend` is the engine: ``steps`` steps of theta <- theta - lr grad L(theta),
  the loss before every step and after the last, ``observe(params)`` every ``every``
  steps, an optional divergence stop. It is pure and traceable: jit it, ``vmap`` it over
  initializations or over a traced ``lr``. Every gradient-descent loop of the library
  and of the chapters is a call of it. Its step is an update rule (Optax's
  ``init``/``update`` convention): :class:`GradientStep` (the default),
  :class:`NoisyGradient`, :class:`StochasticGradient`.
* :func:`gradient_descent` is the host wrapper: it checks its arguments, builds the
  loss (:func:`mse_loss`) from a model and data, runs :func:`descend` as one jitted
  program (compiled once per model, steps and options; data, parameters and ``lr``
  traced) and warns when the loss diverges.
* :func:`noisy_descend` is the stochastic-gradient variant (Gaussian gradient noise and
  an optional Robbins-Monro schedule lr_t = lr / (1 + t / decay)), for Chapter 7: the
  one loop with the :class:`NoisyGradient` rule.
* :func:`stochastic_descend` is stochastic gradient descent on the square loss of a
  model and data: a random mini-batch at every step and optional label noise (fresh
  Gaussian noise added to the targets at every step), for Chapter 5.
* :func:`lazy_loss` is the lazy-training scale alpha of Chizat, Oyallon and Bach: the
  loss of the rescaled, centred model alpha (f(theta) - f(theta_0)) divided by alpha^2
  (Chapter 7).
* :class:`Trajectory` is what both return; :func:`ntk_observer` is the observer that
  records the empirical tangent kernel; :func:`relative_kernel_change` is
  Delta K = ||K_t - K_0||_F / ||K_0||_F.

Width sweeps (Chapter 2): :func:`ntk_errors` measures the relative error of empirical
NTKs against the infinite-width kernel at several widths (networks drawn by
:meth:`lecturekit.nets.MLP.init_many`, cut by :func:`lecturekit.nets.sub_network`).

The packed one-hidden-layer networks of Chapter 2 (``shallow``, ``Shallow``,
``shallow_kernel_change``) live in :mod:`lecturekit.shallow`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any, ClassVar, NamedTuple

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import hessian as _hessian
from . import nets as _nets
from . import sampling as _sampling
from . import tangent as _tangent
from ._validation import (
    as_float_array,
    check_callable,
    check_key,
    check_params_pytree,
    check_positive_int,
    check_range,
    check_real,
    check_sequence,
    concrete,
    is_traced,
    warn_numerical,
)
from .losses import cross_entropy, square_loss

__all__ = [
    "square_loss",
    "mse_loss",
    "cross_entropy",
    "Trajectory",
    "GradientStep",
    "NoisyGradient",
    "StochasticGradient",
    "BernoulliBatchGradient",
    "descend",
    "noisy_descend",
    "stochastic_descend",
    "gradient_descent",
    "lazy_loss",
    "ntk_observer",
    "ParamsObserver",
    "OutputObserver",
    "KernelObserver",
    "SharpnessObserver",
    "relative_kernel_change",
    "ntk_errors",
]

Model = Callable[[Any, jax.Array], jax.Array]


# --------------------------------------------------------------------------------------
# Losses of a model on data (the losses themselves live in lecturekit.losses;
# square_loss and cross_entropy are re-exported here)


def mse_loss(f: Model, x: ArrayLike, y: ArrayLike) -> Callable[[Any], jax.Array]:
    """The loss params -> :func:`square_loss` (f(params, x), y) of a model on a batch
    (x, y).

    Args:
        f: a model f(params, x) mapping x of shape (n, d) to outputs of the shape of
            ``y``.
        x: inputs, shape (n, d).
        y: labels, shape (n,) or (n, k).

    Returns:
        A function loss_fn(params) -> (1/2n) sum_i ||f(params, x_i) - y_i||^2 (a
        scalar), to hand to :func:`descend`.

    Example:
        >>> from lecturekit import training
        >>> loss = training.mse_loss(lambda w, x: x @ w, jnp.eye(2),
        ...                          jnp.array([1.0, 1.0]))
        >>> float(loss(jnp.zeros(2)))
        0.5
    """
    check_callable(f, name="f", what="a model f(params, x)")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=(1, 2))
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"x and y must have the same number of rows, got {x.shape[0]} and "
            f"{y.shape[0]}"
        )

    def loss(params):
        return square_loss(f(params, x), y)

    return loss


def lazy_loss(
    f: Model, params0: Any, x: ArrayLike, y: ArrayLike, *, alpha: float
) -> Callable[[Any], jax.Array]:
    """The lazy-training loss of Chizat, Oyallon and Bach: scale alpha, centred model.

    Returns params -> (1/alpha^2) L(alpha (f(params, x) - f(params0, x)), y) with L the
    square loss (1/2n) sum_i ||.||^2 of :func:`square_loss`. Gradient descent on it with
    a fixed step is gradient descent on the model alpha (f - f_0) with step lr /
    alpha^2, the scaling under which the time needed to fit the data does not depend on
    alpha. As alpha -> infinity the parameters move by O(1/alpha) and training follows
    the model linearized at params0 (the lazy, kernel regime); small alpha is the rich
    regime. alpha = 1 is the plain centred loss L(f - f_0, y). For a mean-field network
    of width m, alpha = sqrt(m) with step lr is the NTK-parameterized network with step
    lr / m.

    Args:
        f: a model f(params, x) -> (n,) or (n, k).
        params0: the initial parameters theta_0 (the centring point), a pytree.
        x: inputs, shape (n, d).
        y: labels, shape (n,) or (n, k).
        alpha: the scale, > 0.

    Returns:
        A function loss_fn(params) -> a scalar, to hand to :func:`descend`.

    Example:
        >>> from lecturekit import training
        >>> f = lambda w, x: jnp.tanh(x @ w)
        >>> x, y = jnp.eye(2), jnp.array([0.5, -0.5])
        >>> loss = training.lazy_loss(f, jnp.zeros(2), x, y, alpha=10.0)
        >>> float(loss(jnp.zeros(2)))   # (1/100) (1/4) (0.25 + 0.25)
        0.00125
    """
    check_callable(f, name="f", what="a model f(params, x)")
    check_params_pytree(params0, name="params0")
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=(1, 2))
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"x and y must have the same number of rows, got {x.shape[0]} and "
            f"{y.shape[0]}"
        )
    alpha = check_real(alpha, name="alpha", positive=True)
    f0 = f(params0, x)

    def loss(params):
        return square_loss(alpha * (f(params, x) - f0), y) / alpha**2

    return loss


# --------------------------------------------------------------------------------------
# Update rules of the engine (the Optax convention: init(params), update(grads, ...))


def _gradient_step(params: Any, grads: Any, lr: Any) -> Any:
    """params - lr grads, leaf by leaf: the step every gradient rule ends with."""
    return jax.tree_util.tree_map(lambda a, g: a - lr * g, params, grads)


class _Stateless:
    """An update rule without state: ``init`` gives ()."""

    def init(self, params: Any) -> tuple:
        """The rule's state before the first step: () (it has none)."""
        return ()


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class GradientStep(_Stateless):
    """The plain gradient step theta <- theta - lr g: :func:`descend`'s default rule.

    An update rule: ``init(params)`` gives the (empty) state and ``update(grads, state,
    params, lr, step)`` returns (new params, state). Applied leaf by leaf of the pytree.

    Example:
        >>> from lecturekit import training
        >>> rule = training.GradientStep()
        >>> new, state = rule.update(jnp.ones(2), rule.init(None), jnp.zeros(2),
        ...                          0.5, 0)
        >>> new.tolist(), state
        ([-0.5, -0.5], ())
    """

    def update(self, grads, state, params, lr, step):
        """(params - lr grads, state)."""
        return _gradient_step(params, grads, lr), state


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class NoisyGradient(_Stateless):
    """Gaussian gradient noise and an optional Robbins-Monro step: noisy_descend's rule.

    theta_{t+1} = theta_t - lr_t (grad L(theta_t) + scale xi_t), with xi_t = row t of
    ``noises`` (steps, P) over the P parameters flattened in pytree order, and
    lr_t = lr (``decay`` None) or lr / (1 + t / decay). The noise is drawn up front (by
    :func:`lecturekit.sampling.standard_normal` in :func:`noisy_descend`), so the rule
    is pure. Stateless.

    Attributes:
        noises: (steps, P) array, row t for step t.
        scale: the noise standard deviation, >= 0.
        decay: the schedule's time scale (> 0) or None; static.

    Example:
        >>> from lecturekit import training
        >>> rule = training.NoisyGradient(jnp.ones((3, 2)), 0.5, decay=1.0)
        >>> new, _ = rule.update(jnp.zeros(2), (), jnp.zeros(2), 1.0, 1)
        >>> new.tolist()     # lr_1 = 1 / 2, step -(1/2)(0 + 0.5)
        [-0.25, -0.25]
    """

    noises: jax.Array
    scale: float | jax.Array
    decay: float | None = field(default=None, metadata=dict(static=True))

    def update(self, grads, state, params, lr, step):
        """(params - lr_t (grads + scale noises[step]), state), on the flat vector."""
        flat, unravel = jax.flatten_util.ravel_pytree(params)
        grad = jax.flatten_util.ravel_pytree(grads)[0]
        rate = lr if self.decay is None else lr / (1.0 + step / self.decay)
        return unravel(flat - rate * (grad + self.scale * self.noises[step])), state


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class StochasticGradient(_Stateless):
    """A mini-batch, label-noise gradient in place of the full one (Chapter 5).

    Step t takes theta <- theta - lr grad L_t(theta) with L_t the square loss
    (:func:`square_loss`) of ``f`` on ``batch`` distinct examples drawn uniformly (all
    of them when ``batch`` = n) and targets y_i + label_noise noise[t, i]; the batch
    comes from :func:`lecturekit.sampling.choice_without_replacement` with ``key``
    folded by t. It takes its own gradient (``needs_gradient`` is False), so
    :func:`descend` hands it ``grads=None`` and evaluates only the clean loss it
    records. The rule of :func:`stochastic_descend`. Stateless.

    Attributes:
        x: inputs (n, d).
        y: targets (n,).
        key: the batch key.
        noise: (steps, batch) standard normal label noise, row t for step t.
        f: the model f(params, x); static.
        batch: examples per step; static.
        label_noise: the noise scale sigma; static.

    Example:
        >>> from lecturekit import training
        >>> rule = training.StochasticGradient(jnp.eye(2), jnp.ones(2),
        ...     jax.random.key(0), jnp.zeros((1, 2)), lambda w, x: x @ w, 2, 0.0)
        >>> rule.update(None, (), jnp.zeros(2), 1.0, 0)[0].tolist()   # grad -(1/2) y
        [0.5, 0.5]
    """

    x: jax.Array
    y: jax.Array
    key: jax.Array
    noise: jax.Array
    f: Callable = field(metadata=dict(static=True))
    batch: int = field(metadata=dict(static=True))
    label_noise: float = field(metadata=dict(static=True))
    needs_gradient: ClassVar[bool] = False

    def update(self, grads, state, params, lr, step):
        """(params - lr grad L_step(params), state); ``grads`` is not used."""
        n = self.x.shape[0]
        full = self.batch == n
        idx = (
            None
            if full
            else _sampling.choice_without_replacement(
                jax.random.fold_in(self.key, step), n, self.batch
            )
        )

        def batch_loss(p):
            xb, yb = (self.x, self.y) if full else (self.x[idx], self.y[idx])
            return square_loss(self.f(p, xb), yb + self.label_noise * self.noise[step])

        g = jax.grad(batch_loss)(params)
        return _gradient_step(params, g, lr), state


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class BernoulliBatchGradient(_Stateless):
    """A Bernoulli mini-batch gradient: each example in the batch independently.

    Step t takes theta <- theta - lr grad L^B_t(theta) with

        L^B_t(theta) = (1/2b) sum_i M_{t,i} (f(theta, x)_i - y_i)^2,

    M_{t,i} i.i.d. Bernoulli(b/n) over the entries i of the output f(theta, x) (n =
    ``x.shape[0]`` examples, b = ``batch`` the expected batch size), drawn by
    :func:`lecturekit.sampling.bernoulli` from ``keys[t]`` in the shape of the output.
    The mean over M of L^B_t is :func:`square_loss` (f(theta, x), y), so this is
    unbiased SGD (Yaida's fluctuation--dissipation setting, Chapter 5). An output with a
    leading axis of independent copies, shape (c, n) (e.g. ``theta`` of shape (c, p)
    and f = theta @ x.T), sums the copies' batch losses: c independent chains in one
    run, one (c, n) draw per step. It takes its own gradient (``needs_gradient`` is
    False), so :func:`descend` hands it ``grads=None`` and evaluates only the loss it
    records. Stateless.

    Attributes:
        x: inputs (n, d).
        y: targets (n,), broadcast against the output.
        keys: (steps,) PRNG keys, keys[t] for step t.
        batch: the expected batch size b, in (0, n] (a float or a traced scalar).
        f: the model f(params, x); static.

    Example:
        >>> from lecturekit import training
        >>> rule = training.BernoulliBatchGradient(jnp.eye(2), jnp.ones(2),
        ...     jax.random.split(jax.random.key(0), 1), 2.0, lambda w, x: x @ w)
        >>> rule.update(None, (), jnp.zeros(2), 1.0, 0)[0].tolist()   # p = 1: all in
        [0.5, 0.5]
    """

    x: jax.Array
    y: jax.Array
    keys: jax.Array
    batch: float | jax.Array
    f: Callable = field(metadata=dict(static=True))
    needs_gradient: ClassVar[bool] = False

    def update(self, grads, state, params, lr, step):
        """(params - lr grad L^B_step(params), state); ``grads`` is not used."""
        shape = jax.eval_shape(self.f, params, self.x).shape
        p = self.batch / self.x.shape[0]
        mask = _sampling.bernoulli(self.keys[step], p, shape).astype(self.x.dtype)

        def batch_loss(q):
            return 0.5 * jnp.sum(mask * (self.f(q, self.x) - self.y) ** 2) / self.batch

        g = jax.grad(batch_loss)(params)
        return _gradient_step(params, g, lr), state


def _check_rule(update: Any) -> Any:
    """Require an update rule: an object with init(params) and update(grads, ...)."""
    if not (
        callable(getattr(update, "init", None))
        and callable(getattr(update, "update", None))
    ):
        raise TypeError(
            "update must be an update rule with init(params) and update(grads, state, "
            "params, lr, step), e.g. training.GradientStep(), got "
            f"{type(update).__name__}"
        )
    if not _is_pytree_node(update):  # a static argument of the compiled program
        try:
            hash(update)
        except TypeError:
            raise TypeError(
                "update must be a pytree (e.g. a dataclass registered with "
                "jax.tree_util.register_dataclass) or a hashable object, got an "
                f"unhashable {type(update).__name__}"
            ) from None
    return update


# --------------------------------------------------------------------------------------
# The engine


class Trajectory(NamedTuple):
    """A gradient-descent run: what :func:`descend` and :func:`gradient_descent` return.

    With s = the number of observations (``steps // every + 1``, one more if ``every``
    does not divide ``steps``):

    Attributes:
        steps: (s,) int array, the step counts of the observations: 0, every, 2
            every, ..., and ``steps`` last.
        losses: (steps + 1,) array: ``losses[k]`` is the loss after k steps (before step
            k + 1), ``losses[-1]`` the loss of the final iterate. With ``stop_above``,
            the entries from ``diverged_at`` on are +inf.
        observed: ``observe(params)`` at the observation steps, every leaf stacked on a
            leading axis of size s (None if there was no ``observe``). After a
            divergence stop the observations are those of the frozen iterate.
        final_params: the last iterate (the frozen one after a divergence stop).
        diverged_at: int array (): the first k whose loss was non-finite or above
            ``stop_above``, or -1 if there was none.

    Under ``jax.vmap`` every field (``steps`` too) gets the batch axis in front.

    Example:
        >>> from lecturekit import training
        >>> run = training.descend(lambda w: jnp.sum(w**2), jnp.ones(2), lr=0.25,
        ...                        steps=2, observe=lambda w: w)
        >>> (run.steps.tolist(), run.losses.tolist(), run.observed.shape,
        ...  int(run.diverged_at))
        ([0, 2], [2.0, 0.5, 0.125], (2, 2), -1)
    """

    steps: jax.Array
    losses: jax.Array
    observed: Any
    final_params: Any
    diverged_at: jax.Array


def descend(
    loss_fn: Callable[[Any], jax.Array],
    params: Any,
    *,
    lr: float | jax.Array,
    steps: int,
    every: int | None = None,
    observe: Callable[[Any], Any] | None = None,
    stop_above: float | None = None,
    update: Any = None,
) -> Trajectory:
    """Gradient descent theta <- theta - lr grad L(theta): the one loop of lecturekit.

    Runs ``steps`` steps from ``params`` on the scalar loss ``loss_fn``, records the
    loss before every step and after the last, and evaluates ``observe(params)`` at
    steps 0, every, 2 every, ..., and ``steps``. Pure and traceable: jit it, ``vmap`` it
    over ``params`` (many initializations) or over a traced ``lr`` (a learning-rate
    sweep); ``steps`` and ``every`` are Python ints. The run is a ``lax.scan`` over
    observation periods of an inner ``lax.scan`` over steps, so the gradient step and
    the observer each appear once in the compiled program, whatever ``steps`` is.

    Divergence: with ``stop_above`` set, the first iterate whose loss is not finite or
    exceeds ``stop_above`` is frozen (no more steps are taken), every later loss is
    recorded as +inf and ``diverged_at`` is its step. Without it the iteration goes on
    (a non-finite loss stays non-finite) and ``diverged_at`` marks the first non-finite
    loss.

    The step itself is an update rule (the Optax convention): an object with
    ``init(params) -> state`` and ``update(grads, state, params, lr, step) ->
    (new_params, state)``, called with the gradient of ``loss_fn`` at step ``step``
    (a traced int). A rule that takes a gradient of its own (a mini-batch one) says so
    with the class attribute ``needs_gradient = False``: it gets ``grads=None`` and the
    loop evaluates only the loss it records. The default :class:`GradientStep` is the
    plain step above;
    :class:`NoisyGradient` adds Gaussian gradient noise (:func:`noisy_descend`),
    :class:`StochasticGradient` swaps in a mini-batch gradient
    (:func:`stochastic_descend`). The rules are frozen dataclasses registered as pytrees
    (arrays as leaves, options as static data), so equal rules reuse one compiled
    program. A rule of your own may be any object with the two methods: a pytree is
    traced like the library's, anything else is a static argument (hashable; a new,
    unequal instance compiles anew).

    Args:
        loss_fn: a scalar function of the parameters, e.g. :func:`mse_loss` (f, x, y).
        params: the initial parameters, any pytree of float arrays.
        lr: the step size, > 0 (a float or a traced scalar).
        steps: number of steps, an int >= 0.
        every: observation period, an int >= 1 (default: ``steps``, i.e. observe at the
            start and at the end only).
        observe: a function of the parameters returning any pytree of arrays (a kernel,
            an output, the parameters themselves; e.g. a :class:`KernelObserver`), a
            tuple or dict of such functions (recorded with that structure), or None.
        stop_above: loss above which the run counts as diverged and stops, or None.
        update: the update rule (default :class:`GradientStep` ()).

    Returns:
        A :class:`Trajectory`.

    Example:
        >>> from lecturekit import training
        >>> run = training.descend(lambda w: 0.5 * w**2, jnp.array(1.0), lr=0.5,
        ...                        steps=4, every=2, observe=lambda w: w)
        >>> run.steps.tolist(), run.observed.tolist(), run.losses.shape
        ([0, 2, 4], [1.0, 0.25, 0.0625], (5,))
        >>> grow = training.descend(lambda w: 0.5 * w**2, jnp.array(1.0), lr=3.0,
        ...                         steps=10, stop_above=10.0)
        >>> int(grow.diverged_at), float(grow.final_params), grow.losses[:5].tolist()
        (3, -8.0, [0.5, 2.0, 8.0, inf, inf])
    """
    _check_loop(loss_fn, params, lr, steps)
    every = max(steps, 1) if every is None else check_positive_int(every, name="every")
    observe = _check_observe(observe)
    if stop_above is not None and not is_traced(stop_above):
        stop_above = check_real(stop_above, name="stop_above")
    rule = GradientStep() if update is None else _check_rule(update)
    static, traced = _split_static((loss_fn, observe))
    if _is_pytree_node(rule):  # the library's rules: their arrays and numbers traced
        static, traced = (*static, None), (*traced, rule)
    else:  # any other object with init and update: a static argument
        static, traced = (*static, rule), (*traced, None)
    return _descend_program(static, traced, params, lr, steps, every, stop_above)


@partial(jax.jit, static_argnums=(0, 4, 5))
def _descend_program(static, traced, params, lr, steps, every, stop_above):
    """:func:`descend` as one compiled program: the loss and the observer static when
    they are plain functions and traced when they carry arrays (observers), the rule
    traced when it is a pytree (the library's rules) and static otherwise, params, lr
    and stop_above traced. Called inside a trace, it is inlined."""
    loss_fn, observe, rule = _join_static(static, traced)
    return _descend(
        loss_fn, params, lr, steps, every, _recorder(observe), stop_above, rule
    )


def _descend(loss_fn, params, lr, steps, every, observe, stop_above, rule):
    """:func:`descend` without the checks (arguments trusted).

    The inner step is kept as lean as the plain loop whenever it can be (XLA's CPU loops
    pay for every extra operation on every step): no divergence bookkeeping without
    ``stop_above`` (``diverged_at`` is read off the recorded losses afterwards), no
    masking unless the last observation period is short, and no outer loop without an
    observer.
    """
    if getattr(rule, "needs_gradient", True):
        value_and_grad = jax.value_and_grad(loss_fn)
    else:  # the rule takes its own gradient: only the recorded loss is evaluated

        def value_and_grad(p):
            return loss_fn(p), None

    at = jnp.asarray(_observation_steps(steps, every), dtype=jnp.int32)
    freeze = stop_above is not None

    def judge(value, k, diverged_at):
        """(loss as recorded, diverged_at) for the loss ``value`` of step k, with
        stop_above.
        """
        bad = ~jnp.isfinite(value) | (value > stop_above)
        diverged_at = jnp.where((diverged_at < 0) & bad, k, diverged_at)
        return jnp.where(diverged_at >= 0, jnp.inf, value), diverged_at

    def make_step(masked):
        def step(carry, k):
            p, state, diverged_at = carry
            value, grad = value_and_grad(p)
            new, new_state = rule.update(grad, state, p, lr, k)
            if not (freeze or masked):
                return (new, new_state, diverged_at), value
            move = k < steps
            if freeze:
                value, found = judge(value, k, diverged_at)
                diverged_at = jnp.where(move, found, diverged_at)
                move = move & (diverged_at < 0)
            keep = partial(jax.tree_util.tree_map, lambda b, a: jnp.where(move, b, a))
            return (keep(new, p), keep(new_state, state), diverged_at), value

        return step

    def last_loss(p, state, diverged_at):
        value = loss_fn(p)
        return judge(value, steps, diverged_at) if freeze else (value, diverged_at)

    start = (params, rule.init(params), jnp.asarray(-1, dtype=jnp.int32))
    if observe is None:  # one flat loop, the final loss after it
        (final, _, diverged_at), losses = jax.lax.scan(
            make_step(False), start, jnp.arange(steps, dtype=jnp.int32)
        )
        value, diverged_at = last_loss(final, None, diverged_at)
        losses = jnp.append(losses, value)
        observed = None
    else:
        # observation periods; the last may be short
        chunks = -(-steps // every)
        step = make_step(steps % every != 0)

        def period(carry, i):
            # observe, then take `every` steps; the extra last period (i == chunks) only
            # records the final loss: the step and the observer are each compiled once.
            record = observe(carry[0])

            def run(carry):
                return jax.lax.scan(
                    step, carry, i * every + jnp.arange(every, dtype=jnp.int32)
                )

            def finish(carry):
                value, diverged_at = last_loss(*carry)
                return (*carry[:2], diverged_at), jnp.full(
                    (every,), value, dtype=jnp.result_type(value)
                )

            carry, losses = jax.lax.cond(i < chunks, run, finish, carry)
            return carry, (losses, record)

        (final, _, diverged_at), (losses, observed) = jax.lax.scan(
            period, start, jnp.arange(chunks + 1, dtype=jnp.int32)
        )
        losses = jnp.concatenate(
            [losses[:chunks].reshape(-1)[:steps], losses[chunks, :1]]
        )
    # the first non-finite loss, read off afterwards
    if not freeze:
        bad = ~jnp.isfinite(losses)
        diverged_at = jnp.where(jnp.any(bad), jnp.argmax(bad), -1).astype(jnp.int32)
    return Trajectory(at, losses, observed, final, diverged_at)


def noisy_descend(
    loss_fn: Callable[[Any], jax.Array],
    params: Any,
    *,
    lr: float,
    steps: int,
    noise: float,
    key: jax.Array,
    decay: float | None = None,
) -> Trajectory:
    """Gradient descent with Gaussian gradient noise and an optional decaying step.

    theta_{t+1} = theta_t - lr_t (grad L(theta_t) + noise xi_t), t = 0, ..., steps - 1,
    with xi_t i.i.d. N(0, I) (one entry per parameter; all steps*P numbers are drawn at
    once by
    :func:`lecturekit.sampling.standard_normal` (key, (steps, P)), row t for step t, so
    keep steps * P moderate) and

    * lr_t = lr (constant step; ``decay=None``): on a quadratic the iterates reach a
      stationary spread whose mean excess loss is proportional to lr (a noise floor);
    * lr_t = lr / (1 + t / decay): a Robbins-Monro schedule (sum lr_t = infinity,
      sum lr_t^2 < infinity), under which the iterates converge to the minimizer.

    This models stochastic gradients (an unbiased gradient with noise of fixed size).
    Pure and traceable like :func:`descend` (``steps`` is a Python int).

    Args:
        loss_fn: a scalar loss of the parameters.
        params: the initial parameters, a pytree of float arrays.
        lr: the initial step, > 0.
        steps: number of steps, >= 0.
        noise: standard deviation of the noise added to every gradient entry, >= 0.
        key: a single JAX PRNG key.
        decay: the time scale of the schedule lr / (1 + t / decay), > 0, or None.

    Returns:
        A :class:`Trajectory` with the losses (before every step and after the last),
        ``steps`` = [0, steps], ``observed`` None and the final parameters.

    Example:
        >>> from lecturekit import training
        >>> quad = lambda w: 0.5 * jnp.sum(w**2)
        >>> run = training.noisy_descend(quad, jnp.ones(2), lr=0.5, steps=3,
        ...                              noise=0.0, key=jax.random.key(0))
        >>> run.losses.tolist()     # noise 0: plain GD, w halves every step
        [1.0, 0.25, 0.0625, 0.015625]
    """
    _check_loop(loss_fn, params, lr, steps)
    lr = check_real(lr, name="lr", positive=True)
    noise = check_real(noise, name="noise", nonnegative=True)
    key = check_key(key, name="key")
    if decay is not None:
        decay = check_real(decay, name="decay", positive=True)
    return _noisy_descend(loss_fn, params, lr, steps, noise, key, decay)


@partial(jax.jit, static_argnums=(0, 3, 6))
def _noisy_descend(loss_fn, params, lr, steps, noise, key, decay):
    flat = jax.flatten_util.ravel_pytree(params)[0]
    # all the noise in one draw of the one sampler: row t drives step t
    noises = _sampling.standard_normal(key, (steps,) + flat.shape, flat.dtype)
    rule = NoisyGradient(noises, noise, decay)
    run = _descend(loss_fn, params, lr, steps, max(steps, 1), None, None, rule)
    return run._replace(steps=jnp.asarray([0, steps], dtype=jnp.int32))


def stochastic_descend(
    f: Model,
    params: Any,
    x: ArrayLike,
    y: ArrayLike,
    *,
    lr: float | jax.Array,
    steps: int,
    key: jax.Array,
    batch: int | None = None,
    label_noise: float = 0.0,
    every: int | None = None,
    observe: Callable[[Any], Any] | None = None,
) -> Trajectory:
    """Stochastic gradient descent on the square loss: random mini-batches and label
    noise.

    Step t draws a batch B_t of ``batch`` = b distinct examples uniformly at random (all
    n examples when ``batch`` is None) and fresh labels y_i + sigma xi_{t,i}, xi i.i.d.
    N(0, 1), sigma = ``label_noise``, and takes one gradient step on

        L_t(params) = (1/2b) sum_{i in B_t} (f(params, x_i) - y_i - sigma xi_{t,i})^2,

    the book's normalization (:func:`square_loss`). Its mean over batches and noise is
    the clean loss L = (1/2n) sum_i (f(params, x_i) - y_i)^2 plus a constant, so this is
    unbiased SGD on L; with sigma > 0 and the full batch it is the label-noise gradient
    descent of Blanc et al., whose noise covariance at a global minimum is
    lr^2 (sigma^2/n) times the Gauss-Newton Hessian of L. ``losses`` records the clean
    loss L before every step and after the last.

    Randomness: the batches come from
    :func:`lecturekit.sampling.choice_without_replacement` with keys folded from ``key``
    by the step number; the label noise from one draw of
    :func:`lecturekit.sampling.standard_normal` ((steps, b) numbers, held in memory:
    keep steps * b moderate). Pure and traceable like :func:`descend`: ``vmap`` it over
    keys for independent chains, or over a traced ``lr``.

    Args:
        f: the model f(params, x), a batch of shape (n, d) -> (n,).
        params: the initial parameters, a pytree of float arrays.
        x: inputs, shape (n, d).
        y: targets, shape (n,).
        lr: the step, > 0.
        steps: number of steps, an int >= 1.
        key: a single JAX PRNG key.
        batch: examples per step, 1 <= batch <= n, or None for all of them.
        label_noise: sigma >= 0 (a Python number).
        every: observation period, an int >= 1 dividing ``steps`` (default: ``steps``
            if it is at most 1000, else gcd(steps, 1000)).
        observe: a function of the parameters returning any pytree of arrays, or None.

    Returns:
        A :class:`Trajectory`: ``steps`` = 0, every, ..., steps; ``losses`` the clean
        loss, shape (steps + 1,); ``observed`` at the observation steps (None without
        ``observe``); the final parameters; ``diverged_at`` the first non-finite loss or
        -1.

    Raises:
        ValueError: ``batch`` outside [1, n], ``every`` not dividing ``steps``, a
            negative ``label_noise``, or shapes of x and y that do not match.

    Example:
        >>> from lecturekit import training
        >>> f = lambda w, x: x @ w
        >>> x, y = jnp.eye(3), jnp.array([1.0, -1.0, 2.0])
        >>> run = training.stochastic_descend(f, jnp.zeros(3), x, y, lr=1.0,
        ...                                   steps=300, key=jax.random.key(0),
        ...                                   batch=1)
        >>> bool(run.losses[-1] < 1e-12), run.losses.shape   # it interpolates
        (True, (301,))
        >>> noisy = training.stochastic_descend(f, y, x, y, lr=0.5, steps=2000,
        ...                                     key=jax.random.key(1),
        ...                                     label_noise=1.0)
        >>> bool(0 < noisy.losses[-1] < 1)     # label noise keeps it off the minimum
        True
    """
    check_callable(f, name="f", what="a model f(params, x)")
    _check_loop(lambda p: 0.0, params, lr, steps)
    steps = check_positive_int(steps, name="steps")
    key = check_key(key, name="key")
    xa = as_float_array(x, name="x", ndim=2)
    ya = as_float_array(y, name="y", ndim=1)
    n = xa.shape[0]
    if ya.shape != (n,):
        raise ValueError(
            f"y must have shape ({n},) (one target per row of x), got {tuple(ya.shape)}"
        )
    b = n if batch is None else check_positive_int(batch, name="batch")
    if b > n:
        raise ValueError(
            f"batch must be between 1 and the number of examples {n}, got {batch}"
        )
    sigma = check_real(label_noise, name="label_noise", nonnegative=True)
    if every is None:
        every = steps if steps <= 1000 else int(np.gcd(steps, 1000))
    every = check_positive_int(every, name="every")
    if steps % every:
        raise ValueError(
            f"every must divide steps, got every = {every} and steps = {steps}"
        )
    static, traced = _split_static((f, _check_observe(observe)))
    return _stochastic_program(
        static, traced, params, xa, ya, lr, key, steps, b, sigma, every
    )


@partial(jax.jit, static_argnums=(0, 7, 8, 9, 10))
def _stochastic_program(static, traced, params, x, y, lr, key, steps, b, sigma, every):
    """:func:`stochastic_descend` as one compiled program (model and observer static or
    traced as in :func:`descend`; steps, batch, noise scale and period static)."""
    f, observe = _join_static(static, traced)
    return _stochastic_descend(
        f, params, x, y, lr, steps, key, b, sigma, every, _recorder(observe)
    )


def _stochastic_descend(f, params, x, y, lr, steps, key, b, sigma, every, observe):
    """:func:`stochastic_descend` without the checks (arguments trusted)."""
    k_batch, k_noise = jax.random.split(key)
    # all the label noise in one draw of the one sampler: row t drives step t
    shape = (steps // every, every, b)
    if sigma > 0:
        noise = _sampling.standard_normal(k_noise, shape, x.dtype).reshape(steps, b)
    else:
        noise = jnp.zeros((steps, b), x.dtype)
    rule = StochasticGradient(x, y, k_batch, noise, f, b, sigma)
    loss = partial(_model_loss, f, x, y)
    return _descend(loss, params, lr, steps, every, observe, None, rule)


def _model_loss(f, x, y, params):
    """:func:`square_loss` of f(params, x) against y (the loss of :func:`mse_loss`)."""
    return square_loss(f(params, x), y)


def _observation_steps(steps: int, every: int) -> np.ndarray:
    """0, every, 2 every, ... and ``steps``: where :func:`descend` observes."""
    return np.unique(np.append(np.arange(0, steps + 1, every), steps))


def gradient_descent(
    f: Callable,
    params: Any,
    lr: float,
    steps: int,
    *,
    x: ArrayLike | None = None,
    y: ArrayLike | None = None,
    every: int | None = None,
    observe: Callable[[Any], Any] | None = None,
    stop_above: float | None = None,
) -> Trajectory:
    """Full-batch gradient descent on a model and data, or on any loss: :func:`descend`
    checked, jitted, and warning when the loss diverges.

    Two ways to call it:

    * ``gradient_descent(f, params, lr, steps, x=x, y=y)``: f(params, x) is a model and
      the loss is the square loss (1/2n) sum_i ||f(params, x_i) - y_i||^2
      (:func:`mse_loss`);
    * ``gradient_descent(loss_fn, params, lr, steps)``: loss_fn(params) is any scalar
      loss.

    The whole run is one jitted program, compiled once per model (or loss), ``steps``,
    ``every``, ``observe`` and ``stop_above``: the data, parameters and ``lr`` are
    traced, and so are the arrays inside observers and inside a model that is a pytree
    (a registered dataclass with a ``__call__``). It may itself be called inside
    ``jit`` or ``vmap`` (the warning is then skipped). A loss that becomes NaN or
    infinite (``lr`` beyond the stable step) gives
    a :class:`~lecturekit.NumericalWarning`.

    Args:
        f: the model f(params, x) (with ``x`` and ``y``) or the loss loss_fn(params).
        params: initial parameters, a pytree of float arrays.
        lr: step size, > 0.
        steps: number of steps, >= 0.
        x: training inputs (n, d), model form only.
        y: labels (n,) or (n, k), model form only.
        every: observation period (default ``steps``: the start and the end).
        observe: what to record every ``every`` steps: an observer
            (:class:`KernelObserver`, :class:`SharpnessObserver`,
            :class:`OutputObserver`, :class:`ParamsObserver`; traced, so new data of
            the same shapes compiles nothing), a tuple or dict of them (recorded with
            that structure), or any function of the parameters (static).
        stop_above: see :func:`descend`.

    Returns:
        A :class:`Trajectory`.

    Example:
        >>> from lecturekit import training
        >>> x, y = jnp.eye(3), jnp.array([1.0, 2.0, 3.0])
        >>> run = training.gradient_descent(lambda w, x: x @ w, jnp.zeros(3), 3.0, 50,
        ...                                 x=x, y=y, every=25)
        >>> (run.steps.tolist(), bool(run.losses[-1] < 1e-6),
        ...  bool(jnp.allclose(run.final_params, y)))
        ([0, 25, 50], True, True)
    """
    check_callable(f, name="f", what="a model f(params, x) or a loss loss_fn(params)")
    if not is_traced(lr):
        lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps", minimum=0)
    every = max(steps, 1) if every is None else check_positive_int(every, name="every")
    check_params_pytree(params)
    observe = _check_observe(observe)
    if stop_above is not None and not is_traced(stop_above):
        stop_above = check_real(stop_above, name="stop_above")
    if (x is None) != (y is None):
        raise ValueError("give both x and y (model form) or neither (loss form)")
    if x is not None:
        x = as_float_array(x, name="x", ndim=2)
        y = as_float_array(y, name="y", ndim=(1, 2))
    loss_fn = f if x is None else mse_loss(f, x, y)
    what = "f(params, x)" if x is not None else "loss_fn(params)"
    try:
        shape = jax.eval_shape(loss_fn, params).shape
    except ValueError as err:  # a model whose outputs do not match y: say so here
        raise ValueError(f"{what}: {err}") from None
    except Exception as err:  # a model that cannot take these params or inputs
        raise ValueError(
            f"{what} could not be evaluated: {type(err).__name__}: {err}"
        ) from None
    if shape != ():
        raise ValueError(f"{what} must give a scalar loss, got shape {shape}")
    static, traced = _split_static((f, observe))
    traj = _fit(static, traced, params, x, y, lr, steps, every, stop_above)
    _warn_divergence(traj, lr, stop_above)
    return traj


@partial(jax.jit, static_argnums=(0, 6, 7, 8))
def _fit(static, traced, params, x, y, lr, steps, every, stop_above):
    """:func:`gradient_descent`'s one compiled program. The model (or loss) and the
    observer are each either static (a plain function) or traced (a pytree of arrays:
    the observers of this module); steps, every and stop_above are static, the params,
    data and lr traced."""
    f, observe = _join_static(static, traced)
    loss_fn = f if x is None else partial(_model_loss, f, x, y)
    return _descend(
        loss_fn,
        params,
        lr,
        steps,
        every,
        _recorder(observe),
        stop_above,
        GradientStep(),
    )


# --------------------------------------------------------------------------------------
# Observers: what a run records, as data (arrays traced, options static)


def _split_static(values: tuple) -> tuple[tuple, tuple]:
    """(static, traced) halves of ``values`` for a jitted program: a value that carries
    arrays (:func:`_is_data`) goes in the traced half, any other (a plain function,
    None) in the static half, None in its place in the other half."""
    traced = tuple(v if _is_data(v) else None for v in values)
    static = tuple(None if _is_data(v) else v for v in values)
    return static, traced


def _join_static(static: tuple, traced: tuple) -> tuple:
    """The values :func:`_split_static` split, inside the program."""
    return tuple(s if t is None else t for s, t in zip(static, traced))


def _is_data(value: Any) -> bool:
    """Whether ``value`` travels through jit as traced data: an array, or a pytree node
    (an observer, a tuple or dict of them, a model that carries its arrays) whose leaves
    are all arrays. Anything else (a plain function, a number, None) is static."""
    if isinstance(value, (jax.Array, np.ndarray)):
        return True
    leaves, treedef = jax.tree_util.tree_flatten(value)
    return not jax.tree_util.treedef_is_leaf(treedef) and all(
        isinstance(leaf, (jax.Array, np.ndarray)) for leaf in leaves
    )


def _is_pytree_node(value: Any) -> bool:
    """Whether ``value`` is a registered pytree node (a tuple, a registered dataclass),
    whatever its leaves, rather than a leaf."""
    return not jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(value))


def _register_observer(cls: type) -> type:
    """Register a frozen dataclass as a pytree: fields holding data (:func:`_is_data`)
    are children, the others (functions, ints, bools) static. Unflattening bypasses
    ``__init__`` (its checks would see tracers)."""
    names = tuple(f.name for f in fields(cls))

    def flatten(obj):
        values = tuple(getattr(obj, name) for name in names)
        data = tuple(_is_data(v) for v in values)
        children = tuple(v for v, d in zip(values, data) if d)
        static = tuple((n, v) for n, v, d in zip(names, values, data) if not d)
        return children, (data, static)

    def unflatten(aux, children):
        data, static = aux
        obj = object.__new__(cls)
        values = dict(static)
        it = iter(children)
        for name, d in zip(names, data):
            object.__setattr__(obj, name, next(it) if d else values[name])
        return obj

    jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    return cls


@_register_observer
@dataclass(frozen=True)
class ParamsObserver:
    """The observer params -> params: records the weights along a run.

    Observers are frozen dataclasses registered as pytrees (arrays as leaves, the rest
    static); :func:`descend` and :func:`gradient_descent` take one, or a tuple or dict
    of them (recorded with the same structure). :func:`gradient_descent` traces them, so
    new data of the same shapes reuses its compiled program.

    Example:
        >>> from lecturekit import training
        >>> training.ParamsObserver()(jnp.ones(2)).tolist()
        [1.0, 1.0]
    """

    def __call__(self, params: Any) -> Any:
        """The parameters themselves."""
        return params


@_register_observer
@dataclass(frozen=True)
class OutputObserver:
    """The observer params -> f(params, x): the model's outputs on a batch.

    Attributes:
        f: the model f(params, x) (static, or a pytree of arrays that is traced).
        x: the inputs (n, d).

    Example:
        >>> from lecturekit import training
        >>> observe = training.OutputObserver(lambda w, x: x @ w, jnp.eye(2))
        >>> observe(jnp.array([1.0, 2.0])).tolist()
        [1.0, 2.0]
    """

    f: Model
    x: jax.Array

    def __post_init__(self):
        check_callable(self.f, name="f", what="a model f(params, x)")
        object.__setattr__(self, "x", as_float_array(self.x, name="x", ndim=2))

    def __call__(self, params: Any) -> jax.Array:
        """f(params, x)."""
        return self.f(params, self.x)


@_register_observer
@dataclass(frozen=True)
class KernelObserver:
    """The observer params -> empirical tangent kernel of ``f`` on a batch ``x``.

    Theta(x_i, x_j) = <grad f(x_i), grad f(x_j)> summed over every parameter leaf, by
    :func:`lecturekit.tangent.empirical_ntk` (n, n); with ``diagonal=True`` only
    Theta(x_i, x_i) = ||grad f(x_i)||^2, shape (n,), one gradient per example. ``f``
    has a scalar output per example.

    Attributes:
        f: the model f(params, x) (static, or a pytree of arrays that is traced).
        x: the inputs (n, d).
        diagonal: record the diagonal only (static).

    Example:
        >>> from lecturekit import training
        >>> f = lambda w, x: x @ w
        >>> training.KernelObserver(f, 2 * jnp.eye(2))(jnp.zeros(2)).tolist()
        [[4.0, 0.0], [0.0, 4.0]]
        >>> training.KernelObserver(f, jnp.ones((1, 2)), diagonal=True)(
        ...     jnp.zeros(2)).tolist()
        [2.0]
    """

    f: Model
    x: jax.Array
    diagonal: bool = False

    def __post_init__(self):
        check_callable(self.f, name="f", what="a model f(params, x)")
        object.__setattr__(self, "x", as_float_array(self.x, name="x", ndim=2))
        if not isinstance(self.diagonal, bool):
            raise TypeError(f"diagonal must be a bool, got {self.diagonal!r}")

    def __call__(self, params: Any) -> jax.Array:
        """The kernel (n, n), or its diagonal (n,)."""
        if not self.diagonal:
            return _tangent.empirical_ntk(self.f, params, self.x)

        def squared_gradient(xi):
            g = jax.grad(lambda q: self.f(q, xi[None])[0])(params)
            return sum(jnp.sum(leaf**2) for leaf in jax.tree_util.tree_leaves(g))

        return jax.vmap(squared_gradient)(self.x)


@_register_observer
@dataclass(frozen=True)
class SharpnessObserver:
    """The observer params -> sharpness lambda_max(nabla^2 L) of the square loss.

    L = :func:`square_loss` (f(params, x), y) on (x, y); its top Hessian eigenvalue by
    :func:`lecturekit.hessian.top_eigenvalue` (``steps`` Lanczos steps from the start
    vector drawn with ``key``, the same at every observation).

    Attributes:
        f: the model f(params, x) (static, or a pytree of arrays that is traced).
        x: inputs (n, d).
        y: labels (n,) or (n, k).
        key: PRNG key of the Lanczos start vector.
        steps: Lanczos steps, >= 2 (static).

    Example:
        >>> from lecturekit import training
        >>> observe = training.SharpnessObserver(lambda w, x: x @ w,
        ...     jnp.array([[2.0, 0.0], [0.0, 1.0]]), jnp.ones(2), jax.random.key(0))
        >>> round(float(observe(jnp.zeros(2))), 4)     # nabla^2 L = X^T X / n
        2.0
    """

    f: Model
    x: jax.Array
    y: jax.Array
    key: jax.Array
    steps: int = 20

    def __post_init__(self):
        check_callable(self.f, name="f", what="a model f(params, x)")
        x = as_float_array(self.x, name="x", ndim=2)
        y = as_float_array(self.y, name="y", ndim=(1, 2))
        if y.shape[0] != x.shape[0]:
            raise ValueError(
                f"x and y must have the same number of rows, got {x.shape[0]} and "
                f"{y.shape[0]}"
            )
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        check_key(self.key)
        check_positive_int(self.steps, name="steps", minimum=2)

    def __call__(self, params: Any) -> jax.Array:
        """lambda_max of the Hessian of the square loss at ``params``."""
        loss = partial(_model_loss, self.f, self.x, self.y)
        return _hessian.top_eigenvalue(loss, params, key=self.key, steps=self.steps)


def _check_observe(observe: Any) -> Any:
    """Require None, an observer (any function of the parameters), or a tuple, list or
    dict of them."""
    if observe is None or callable(observe):
        return observe
    parts = observe.values() if isinstance(observe, dict) else observe
    if not isinstance(observe, (tuple, list, dict)) or not all(map(callable, parts)):
        raise TypeError(
            "observe must be a function of params (e.g. training.KernelObserver(f, x)) "
            f"or a tuple or dict of them, got {type(observe).__name__}"
        )
    return tuple(observe) if isinstance(observe, list) else observe


def _recorder(observe: Any) -> Callable[[Any], Any] | None:
    """The function params -> record of an observer, or of a tuple or dict of them."""
    if observe is None or callable(observe):
        return observe
    return lambda params: jax.tree_util.tree_map(
        lambda o: o(params), observe, is_leaf=callable
    )


def ntk_observer(f: Model, x: ArrayLike) -> Callable[[Any], jax.Array]:
    """The observer params -> empirical tangent kernel of ``f`` on ``x``,
    for :func:`descend`.

    Records Theta_t(x_i, x_j) = <grad f(x_i), grad f(x_j)> (summed over every parameter
    leaf) with :func:`lecturekit.tangent.empirical_ntk`; f must have a scalar output per
    example.

    Args:
        f: a model f(params, x), x (n, d) -> (n,).
        x: the inputs (n, d) on which the kernel is recorded.

    Returns:
        A :class:`KernelObserver` (f, x): a function params -> (n, n) array, traced
        by :func:`gradient_descent` (new inputs of the same shape compile nothing).

    Example:
        >>> from lecturekit import training
        >>> observe = training.ntk_observer(lambda w, x: x @ w, jnp.eye(2))
        >>> observe(jnp.zeros(2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return KernelObserver(f, x)


def relative_kernel_change(k_t: ArrayLike, k_0: ArrayLike) -> jax.Array:
    """Delta K = ||K_t - K_0||_F / ||K_0||_F, the relative change of a tangent kernel.

    The one measure of kernel movement in lecturekit (Frobenius norms). ``k_t`` may
    carry leading axes (a stack of snapshots, e.g. the ``observed`` of
    an :func:`ntk_observer` run); the result has those axes. Computed with NumPy for
    concrete arrays (nothing to compile), with jax.numpy when traced.

    Args:
        k_t: kernels (..., n, n).
        k_0: the reference kernel (n, n), not zero.

    Returns:
        A JAX array of shape ``k_t.shape[:-2]``.

    Example:
        >>> from lecturekit import training
        >>> k0 = jnp.eye(2)
        >>> training.relative_kernel_change(jnp.stack([k0, 2 * k0]), k0).tolist()
        [0.0, 1.0]
    """
    kt = as_float_array(k_t, name="k_t", finite=False, min_ndim=2)
    k0 = as_float_array(k_0, name="k_0", ndim=2, finite=False)
    if kt.shape[-2:] != k0.shape:
        raise ValueError(
            f"k_t must end with the shape of k_0 {tuple(k0.shape)}, got "
            f"{tuple(kt.shape)}"
        )
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


# --------------------------------------------------------------------------------------
# Checks


def _check_loop(loss_fn: Any, params: Any, lr: Any, steps: Any) -> None:
    """Checks of :func:`descend`'s arguments that hold under jit and vmap too (values of
    a traced ``lr`` are not inspected; ``lr`` itself is passed on unchanged)."""
    check_callable(loss_fn, name="loss_fn", what="a scalar loss loss_fn(params)")
    check_params_pytree(params)
    if not is_traced(lr):
        lr_array = as_float_array(lr, name="lr", ndim=0)
        check_range(lr_array, name="lr", lo=0.0, lo_open=True, what="a learning rate")
    check_positive_int(steps, name="steps", minimum=0)


def _warn_divergence(traj: Trajectory, lr: Any, stop_above: Any) -> None:
    """Warn if gradient descent blew up: a non-finite loss means lr is beyond the stable
    step.
    """
    at = concrete(traj.diverged_at)
    if at is None or at.ndim or int(at) < 0:
        return
    rate = concrete(lr)
    what = (
        "is not finite"
        if stop_above is None
        else f"is not finite or above stop_above = {stop_above:g}"
    )
    warn_numerical(
        f"gradient_descent diverged: the loss {what} from step {int(at)} on; "
        f"lr = {float(rate):g} is too large for this problem (gradient descent is "
        "stable for lr < 2 / "
        "the largest Hessian eigenvalue)",
        stacklevel=4,
    )


# --------------------------------------------------------------------------------------
# Empirical NTKs at several widths (Chapter 2)


def ntk_errors(
    make_net: Callable[[int], _nets.MLP],
    widths: Sequence[int],
    seeds: int,
    key: jax.Array,
    x: ArrayLike,
    theory: ArrayLike,
    *,
    nested: bool = False,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Relative errors ||Theta_m - Theta||_F / ||Theta||_F of empirical NTKs at several
    widths.

    ``make_net(width)`` builds the network (NTK parameterization, readout bias std 0);
    ``theory`` is its infinite-width NTK on ``x``. Returns (errors, kernels): one array
    per width, of shapes (draws,) and (draws, n, n). Every network is drawn at the
    largest width M in one compiled program. By default there are ``len(widths) *
    seeds`` draws and the width-m networks are the first m units of ``seeds`` draws of
    their own (independent across widths). With ``nested=True`` there are ``seeds``
    draws and the width-m networks are all M // m disjoint blocks of m units of each
    (independent of each other, but parts of the widest networks: cheaper, and errors at
    different widths are correlated). The networks are drawn on the host by
    :meth:`lecturekit.nets.MLP.init_many` (nothing compiled per width), the kernels of
    all widths are computed in one compiled program.

    Args:
        make_net: a function width -> ``nets.mlp`` network (NTK parameterization,
            ``out_b_std = 0``).
        widths: the widths m (positive ints); the largest must be a multiple of each
            when ``nested``.
        seeds: networks per width (or per draw when ``nested``), >= 1.
        key: a JAX PRNG key.
        x: inputs (n, d).
        theory: the infinite-width NTK on x (n, n).
        nested: cut every width from the same ``seeds`` widest networks.

    Returns:
        (errors, kernels): lists with one (draws,) and one (draws, n, n) array per
        width.

    Example:
        >>> from lecturekit import nets, training
        >>> x = jnp.eye(3)
        >>> make = lambda m: nets.mlp((3, m, 1))
        >>> errors, emp = training.ntk_errors(make, [16, 64], 2, jax.random.key(0), x,
        ...                                   make(1).kernels(x).ntk)
        >>> [e.shape for e in errors], emp[1].shape
        ([(2,), (2,)], (2, 3, 3))
    """
    check_callable(
        make_net, name="make_net", what="a function width -> nets.mlp network"
    )
    check_sequence(widths, name="widths", what="a sequence of positive integers")
    widths = tuple(check_positive_int(w, name="widths") for w in widths)
    if not widths:
        raise ValueError("widths must not be empty")
    seeds = check_positive_int(seeds, name="seeds")
    check_key(key)
    x = as_float_array(x, name="x", ndim=2)
    theory = np.asarray(as_float_array(theory, name="theory", ndim=2))
    if theory.shape != (x.shape[0], x.shape[0]):
        raise ValueError(
            f"theory must have shape {(x.shape[0], x.shape[0])} (n x n for the n rows "
            "of x), "
            f"got {theory.shape}"
        )
    net1 = make_net(1)
    if net1.out_b_std != 0.0:
        raise ValueError(
            "make_net must build networks with out_b_std = 0 (blocks share the readout "
            "bias)"
        )
    if x.shape[1] != net1.input_dim:
        raise ValueError(
            f"x must have shape (n, {net1.input_dim}) (the networks' input dimension), "
            f"got {tuple(x.shape)}"
        )
    emp = [np.asarray(k) for k in _ntk_draws(make_net, widths, seeds, key, x, nested)]
    errors = [
        np.linalg.norm(k - theory, axis=(-2, -1)) / np.linalg.norm(theory) for k in emp
    ]
    return errors, emp


def _ntk_draws(make_net, widths, seeds, key, x, nested):
    """The empirical NTKs of :func:`ntk_errors`, one (draws, n, n) array per width."""
    big = max(widths)
    # on the host
    drawn = make_net(big).init_many(key, seeds if nested else len(widths) * seeds)
    return _ntk_kernels(make_net, widths, seeds, drawn, x, nested)


@partial(jax.jit, static_argnums=(0, 1, 2, 5))
def _ntk_kernels(make_net, widths, seeds, drawn, x, nested):
    big = max(widths)
    emp = []
    for i, width in enumerate(widths):
        if nested:
            blocks = [_nets.sub_network(drawn, width, b) for b in range(big // width)]
            own = jax.tree_util.tree_map(lambda *a: jnp.concatenate(a), *blocks)
        else:
            own = _nets.sub_network(
                jax.tree_util.tree_map(lambda a: a[i * seeds : (i + 1) * seeds], drawn),  # noqa: B023
                width,
            )
        emp.append(
            jax.vmap(lambda p: _tangent.empirical_ntk(make_net(width).apply, p, x))(own)  # noqa: B023
        )
    return emp
