r"""The implicit bias of SGD noise: stationary laws of Markov chains.

Three models, each simulated by independent chains (time averages after a burn-in) and
computed exactly or in a continuum limit:

* **Fluctuation--dissipation relations** (Yaida 2019) for least squares with Bernoulli
  mini-batches: :func:`sgd_least_squares_fdr` (simulation) and
  :func:`batch_second_moment_trace` (the exact second moment).
* **SGD with label noise on a circle** with a sharp and a flat minimum
  (:func:`circle_model`): :func:`circle_sgd_occupation` (simulation),
  :func:`circle_chain_stationary` (the chain's kernel discretized on a grid) and
  :func:`circle_fokker_planck` (the small-lr limit).
* **The two-speed random walk**: :func:`two_speed_walk_occupation` (simulation),
  :func:`two_speed_transition_matrix`, :func:`two_speed_chain_stationary` (exact) and
  :func:`two_speed_expected_occupation` (the exact mean of the simulation's estimate).

The losses are means over examples, :math:`\mathcal L = \frac1{2m}\sum_k
(x_k\cdot\theta - y_k)^2` (the normalization
of :func:`lecturekit.training.square_loss`). The SGD chains of the
fluctuation--dissipation relations run on :func:`lecturekit.training.descend` with the
:class:`lecturekit.training.BernoulliBatchGradient` rule (all chains in one run), their
time averages read off its records. The circle chains and the walk take no gradient;
they share one time-averaging loop (``_time_average_sums``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from .. import sampling as _sampling
from .. import training as _training
from .._validation import as_float_array, check_key, check_positive_int, check_real
from ._checks import check_regression, check_run_length

__all__ = [
    "FDRAverages",
    "batch_second_moment_trace",
    "circle_chain_stationary",
    "circle_chain_stationary_profile",
    "circle_fokker_planck",
    "circle_model",
    "circle_sgd_occupation",
    "sgd_least_squares_fdr",
    "two_speed_chain_stationary",
    "two_speed_expected_occupation",
    "two_speed_transition_matrix",
    "two_speed_walk_occupation",
]


def _time_average_sums(step, observe, state, burn_inputs, run_inputs):
    """Run state <- step(state, u) once per input u (a key or a row of noise), burn-in
    inputs first; return the sums of observe(state) over the run part, each observed
    before its step (callers divide by the number of run steps)."""
    state, _ = jax.lax.scan(lambda s, u: (step(s, u), None), state, burn_inputs)

    def body(carry, u):
        s, acc = carry
        return (step(s, u), jax.tree.map(jnp.add, acc, observe(s))), None

    zeros = jax.tree.map(
        lambda o: jnp.zeros(o.shape, o.dtype), jax.eval_shape(observe, state)
    )
    (_, sums), _ = jax.lax.scan(body, (state, zeros), run_inputs)
    return sums


# --------------------------------------------------------------------------------------
# Fluctuation-dissipation relations for least squares with Bernoulli batches
# --------------------------------------------------------------------------------------


def batch_second_moment_trace(
    theta: ArrayLike, X: ArrayLike, y: ArrayLike, batch: float
) -> jax.Array:
    r""":math:`\operatorname{tr}\tilde C(\theta)`, the second moment of the mini-batch
    gradient of least squares.

    Loss :math:`\mathcal L = \frac1{2m}\sum_k (x_k\cdot\theta - y_k)^2`. Each example
    enters the batch independently with probability p = batch / m and
    :math:`\mathcal L^B = \frac1{\mathrm{batch}}\sum_{k\in B}\ell_k`, so
    :math:`\mathbb E\nabla\mathcal L^B = \nabla\mathcal L` and
    :math:`\tilde C_{ii} = \mathbb E[(\partial_i\mathcal L^B)^2] = C_{ii} +
    (\partial_i\mathcal L)^2` with :math:`C = \frac{p(1-p)}{\mathrm{batch}^2}\sum_k g_k
    g_k^\top`,
    :math:`g_k = (x_k\cdot\theta - y_k)\,x_k`.

    Args:
        theta: parameters, shape (n,) or (..., n).
        X: design, shape (m, n).
        y: targets, shape (m,).
        batch: expected batch size, in (0, m].

    Returns:
        The trace, shape ``theta.shape[:-1]``.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> X, y = np.eye(2), np.zeros(2)
        >>> round(float(implicit_bias.batch_second_moment_trace(
        ...     np.ones(2), X, y, 2.0)), 6)
        0.5
    """
    Xa, ya = check_regression(X, y)
    th = as_float_array(theta, name="theta", min_ndim=1)
    if th.shape[-1] != Xa.shape[1]:
        raise ValueError(
            f"theta must have {Xa.shape[1]} entries along its last axis (columns of "
            f"X), got shape {tuple(th.shape)}"
        )
    b = _check_batch(batch, Xa.shape[0])
    return _trace_c_tilde(th, Xa, ya, b)


def _check_batch(batch, m: int) -> float:
    b = check_real(batch, name="batch", positive=True)
    if b > m:
        raise ValueError(f"batch must be <= the number of examples {m}, got {batch}")
    return b


def _trace_c_tilde(theta, X, y, b):
    m = X.shape[0]
    p = b / m
    r = theta @ X.T - y  # (..., m)
    sq = jnp.sum(X**2, axis=1)
    full = (r @ X) / m
    return p * (1 - p) / b**2 * jnp.sum(r**2 * sq, axis=-1) + jnp.sum(full**2, axis=-1)


class FDRAverages(NamedTuple):
    r"""Per-chain time averages over the stationary part of SGD runs
    (:func:`sgd_least_squares_fdr`).

    Attributes:
        grad: :math:`\langle\nabla\mathcal L\rangle`, shape (chains, n).
        alignment: :math:`\langle(\theta - c)\cdot\nabla\mathcal L\rangle`, shape
            (chains,).
        half_lr_trace: :math:`\frac{\mathrm{lr}}2\langle\operatorname{tr}\tilde
            C\rangle`, shape (chains,).
        loss: :math:`\langle\mathcal L\rangle`, shape (chains,).

    Example:
        >>> from lecturekit import implicit_bias
        >>> implicit_bias.FDRAverages._fields
        ('grad', 'alignment', 'half_lr_trace', 'loss')
    """

    grad: jax.Array
    alignment: jax.Array
    half_lr_trace: jax.Array
    loss: jax.Array


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
    r"""Independent SGD chains on least squares with Bernoulli batches, time-averaged.

    Update :math:`\theta \leftarrow \theta - \mathrm{lr}\,\nabla\mathcal L^B(\theta)`
    (the batches of :func:`batch_second_moment_trace`), :math:`\theta(0) = c` =
    ``center`` (default: the least-squares minimizer). The averages are taken over steps
    burn_in, ..., steps - 1. At stationarity the fluctuation--dissipation relations say
    :math:`\langle\nabla\mathcal L\rangle = 0` and
    :math:`\langle(\theta - c)\cdot\nabla\mathcal L\rangle =
    \frac{\mathrm{lr}}2\langle\operatorname{tr}\tilde C\rangle` exactly, for any fixed
    c.

    Args:
        key: a ``jax.random`` key.
        X: design, shape (m, n).
        y: targets, shape (m,).
        lr: learning rate, > 0.
        batch: expected batch size, in (0, m].
        steps: steps per chain.
        burn_in: steps left out of the averages, < steps.
        chains: number of independent chains.
        center: the point c, shape (n,).

    Returns:
        :class:`FDRAverages`, one row per chain.

    Example:
        >>> import jax, numpy as np
        >>> from lecturekit import implicit_bias
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([1.0, 0.0, 0.5])
        >>> avg = implicit_bias.sgd_least_squares_fdr(jax.random.key(0), X, y, lr=0.1,
        ...     batch=1.5, steps=20, burn_in=10, chains=4)
        >>> avg.grad.shape, avg.alignment.shape
        ((4, 2), (4,))
    """
    Xa, ya = check_regression(X, y)
    eta = check_real(lr, name="lr", positive=True)
    b = _check_batch(batch, Xa.shape[0])
    n_steps, n_burn = check_run_length(steps, burn_in)
    n_chains = check_positive_int(chains, name="chains")
    check_key(key)
    c = (
        jnp.linalg.lstsq(Xa, ya)[0]
        if center is None
        else as_float_array(center, name="center", ndim=1)
    )
    if c.shape != (Xa.shape[1],):
        raise ValueError(
            f"center must have shape ({Xa.shape[1]},) (one entry per column of X), got "
            f"{tuple(c.shape)}"
        )
    return _fdr_run(key, Xa, ya, c, eta, b, n_steps, n_burn, n_chains)


def _chain_outputs(theta, X):
    """The outputs X theta_c of every chain c: theta (chains, n) -> (chains, m)."""
    return theta @ X.T


@partial(jax.jit, static_argnames=("steps", "burn_in", "chains"))
def _fdr_run(key, X, y, center, lr, b, steps, burn_in, chains):
    m = X.shape[0]

    def loss(theta):  # the chains' full-batch losses, summed (only recorded)
        return 0.5 * jnp.sum((_chain_outputs(theta, X) - y) ** 2) / m

    def run_chains(theta, keys, observe):
        """The chains (rows of theta), each on its own Bernoulli batches (keys[t])."""
        rule = _training.BernoulliBatchGradient(X, y, keys, b, _chain_outputs)
        return _training.descend(
            loss, theta, lr=lr, steps=len(keys), every=1, observe=observe, update=rule
        )

    def observe(theta):
        r = theta @ X.T - y
        g = (r @ X) / m
        return (
            g,
            jnp.sum((theta - center) * g, -1),
            0.5 * lr * _trace_c_tilde(theta, X, y, b),
            0.5 * jnp.mean(r**2, -1),
        )

    k_burn, k_run = jax.random.split(key)
    theta0 = jnp.broadcast_to(center, (chains, X.shape[1]))
    burnt = run_chains(theta0, jax.random.split(k_burn, burn_in), None).final_params
    run = run_chains(burnt, jax.random.split(k_run, steps - burn_in), observe)
    # the time averages over the states before each run step (the last record is after)
    return FDRAverages(*(jnp.mean(o[:-1], axis=0) for o in run.observed))


# --------------------------------------------------------------------------------------
# SGD with label noise on a circle: a sharp and a flat minimum
# --------------------------------------------------------------------------------------


def _check_kappa(kappa) -> float:
    """The asymmetry kappa of f(theta) = sin(theta) (1 + kappa cos(theta)), |kappa|
    < 1.
    """
    k = check_real(kappa, name="kappa")
    if abs(k) >= 1:
        raise ValueError(f"kappa must satisfy |kappa| < 1, got {kappa}")
    return k


def _check_circle_noise(kappa, lr, label_sd, tilt_sd, *, tilt_positive: bool):
    """kappa, lr, label_sd, tilt_sd of the circle chain (tilt_sd > 0 where a density
    needs it).
    """
    k = _check_kappa(kappa)
    eta = check_real(lr, name="lr", positive=True)
    ls = check_real(label_sd, name="label_sd", nonnegative=True)
    ts = check_real(tilt_sd, name="tilt_sd", positive=tilt_positive, nonnegative=True)
    return k, eta, ls, ts


def circle_model(theta: ArrayLike, kappa: float) -> tuple[jax.Array, jax.Array]:
    r"""The model on the circle, :math:`f(\theta) = \sin\theta\,(1 + \kappa\cos\theta)`,
    and :math:`f'(\theta)`.

    The loss is :math:`\mathcal L = f^2/2`, with two global minima: :math:`\theta = 0`,
    of curvature :math:`(1 + \kappa)^2` (sharp for kappa > 0), and :math:`\theta = \pi`,
    of curvature :math:`(1 - \kappa)^2` (flat).

    Args:
        theta: angles, any shape.
        kappa: asymmetry, :math:`|\kappa| < 1`.

    Returns:
        (f, f'), each of the shape of ``theta``.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> f, fp = implicit_bias.circle_model(np.array([0.0, np.pi]), 0.5)
        >>> np.round(np.asarray(fp) ** 2, 6).tolist()
        [2.25, 0.25]
    """
    th = as_float_array(theta, name="theta")
    k = _check_kappa(kappa)
    return _circle_f(th, k)


def _circle_f(th, k, xp=jnp):
    """f and f' with the array module xp (jnp inside compiled code, np on host
    grids).
    """
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
    r"""Fraction of time each SGD chain on the circle spends in the flat
    basin :math:`\{\cos\theta < 0\}`.

    One step of online SGD with the per-example loss
    :math:`\frac12(f(\theta) - \varepsilon)^2 + z_1\cos\theta + z_2\sin\theta`,
    :math:`\varepsilon \sim N(0, \mathrm{label\_sd}^2)` (label noise, the batch folded
    into the sd) and :math:`z \sim N(0, \mathrm{tilt\_sd}^2 I)`:
    :math:`\theta \leftarrow \theta - \mathrm{lr}\,ff' +
    \mathrm{lr}\sqrt{\mathrm{label\_sd}^2 f'^2 + \mathrm{tilt\_sd}^2}\;\xi`,
    :math:`\xi \sim N(0, 1)` (f of :func:`circle_model`). The gradient noise is larger
    where the loss is sharp (:math:`f'^2 = \mathcal L''` at a minimum) when label_sd
    > 0. Chains start uniformly on the circle; averages over steps burn_in, ...,
    steps - 1.

    Args:
        key: a ``jax.random`` key.
        kappa: asymmetry of the model, :math:`|\kappa| < 1`.
        lr: learning rate, > 0.
        label_sd: label-noise sd, >= 0.
        tilt_sd: tilt-noise sd, >= 0.
        steps: steps per chain.
        burn_in: steps left out of the averages, < steps.
        chains: number of independent chains.

    Returns:
        The occupation fractions, shape (chains,).

    Example:
        >>> import jax
        >>> from lecturekit import implicit_bias
        >>> occ = implicit_bias.circle_sgd_occupation(
        ...     jax.random.key(0), kappa=0.5, lr=0.1, label_sd=1.0, tilt_sd=1.0,
        ...     steps=50, burn_in=10, chains=3)
        >>> occ.shape, bool(((occ >= 0) & (occ <= 1)).all())
        ((3,), True)
    """
    k, eta, ls, ts = _check_circle_noise(
        kappa, lr, label_sd, tilt_sd, tilt_positive=False
    )
    n_steps, n_burn = check_run_length(steps, burn_in)
    n_chains = check_positive_int(chains, name="chains")
    check_key(key)
    return _circle_run(key, k, eta, ls, ts, n_steps, n_burn, n_chains)


@partial(jax.jit, static_argnames=("steps", "burn_in", "chains"))
def _circle_run(key, kappa, lr, label_sd, tilt_sd, steps, burn_in, chains):
    k_init, k_run = jax.random.split(key)
    th0 = _sampling.uniform(k_init, chains, minval=-jnp.pi, maxval=jnp.pi)

    def step(th, xi):
        mean, sd = _circle_step_params(th, kappa, lr, label_sd, tilt_sd)
        return jnp.mod(mean + sd * xi + jnp.pi, 2 * jnp.pi) - jnp.pi

    # all the noise in one draw of the one sampler: row t drives step t of every chain
    noise = _sampling.standard_normal(k_run, (steps, chains), th0.dtype)
    sums = _time_average_sums(
        step,
        lambda th: (jnp.cos(th) < 0).astype(th.dtype),
        th0,
        noise[:burn_in],
        noise[burn_in:],
    )
    return sums / (steps - burn_in)


def circle_chain_stationary(
    *, kappa: float, lr: float, label_sd: float, tilt_sd: float, grid: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    r"""Stationary density of the circle SGD chain, from its Gaussian transition kernel
    on a grid.

    The kernel :math:`P(\theta \to \theta') = N(\theta';\ \mathrm{mean}(\theta),
    \mathrm{sd}(\theta)^2)` (wrapped on the circle, see :func:`circle_sgd_occupation`)
    is discretized on ``grid`` cells of :math:`[-\pi, \pi)`; the stationary vector
    solves :math:`\pi = \pi P`, by state reduction (the Grassmann--Taksar--Heyman
    algorithm: accurate entry by entry however slowly the chain mixes; time grows like
    ``grid`` cubed, 0.2 s at 600 cells). Runs in NumPy on the host.

    Args:
        kappa: asymmetry of the model, :math:`|\kappa| < 1`.
        lr: learning rate, > 0.
        label_sd: label-noise sd, >= 0.
        tilt_sd: tilt-noise sd, > 0 (the kernel must not be degenerate).
        grid: number of cells, >= 16.

    Returns:
        (cell centres, density), NumPy arrays of shape (grid,); the density integrates
        to 1.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> th, p = implicit_bias.circle_chain_stationary(
        ...     kappa=0.5, lr=0.1, label_sd=1.0, tilt_sd=1.0, grid=64)
        >>> p.shape, round(float(p.sum() * (th[1] - th[0])), 6)
        ((64,), 1.0)
    """
    k, eta, ls, ts = _check_circle_noise(
        kappa, lr, label_sd, tilt_sd, tilt_positive=True
    )
    n = check_positive_int(grid, name="grid", minimum=16)
    h = 2 * np.pi / n
    th = -np.pi + h * (np.arange(n) + 0.5)
    # host grid: nothing to compile
    mean, sd = _circle_step_params(th, k, eta, ls, ts, xp=np)
    return th, _gaussian_chain_density(th, mean, sd, h)


def _gaussian_chain_density(th, mean, sd, h):
    """Stationary density on the grid th (spacing h) of the chain theta' ~ N(mean,
    sd^2), wrapped on the circle (nearest image: sd << pi)."""
    diff = np.mod(th[None, :] - mean[:, None] + np.pi, 2 * np.pi) - np.pi
    P = np.exp(-0.5 * (diff / sd[:, None]) ** 2)
    P /= P.sum(axis=1, keepdims=True)
    reducible = (
        f"grid: with the step sd down to {sd.min() / h:.2g} cells of the grid, the "
        "probability of a move to another cell underflows and the discretized chain "
        "falls apart; use fewer cells or more noise"
    )
    return _stationary_vector(P, reducible=reducible) / h


def circle_chain_stationary_profile(
    step_sd: Callable[[np.ndarray], np.ndarray],
    *,
    kappa: float,
    lr: float,
    grid: int = 1000,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Stationary density of the circle chain for any position-dependent noise level.

    The chain of :func:`circle_chain_stationary` with its noise sd per step replaced by
    ``step_sd(theta)``: :math:`\theta' = \theta - \mathrm{lr}\,ff' +
    \mathrm{step\_sd}(\theta)\,\xi`. With ``step_sd = lambda th: lr * sqrt(label_sd^2
    f'(th)^2 + tilt_sd^2)`` it is that chain; other profiles (e.g. one noise model in
    one region of the circle and another elsewhere, discontinuities allowed) separate
    the effect of the noise in one region from that in the others. Runs in NumPy on the
    host.

    Args:
        step_sd: a function of the array of cell centres returning the noise sd per step
            there, positive and finite, of the same shape.
        kappa: asymmetry of the model, :math:`|\kappa| < 1`.
        lr: learning rate, > 0.
        grid: number of cells, >= 16.

    Returns:
        (cell centres, density), NumPy arrays of shape (grid,); the density integrates
        to 1.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> th, p = implicit_bias.circle_chain_stationary_profile(
        ...     lambda t: 0.2 * np.ones_like(t), kappa=0.5, lr=0.1, grid=64)
        >>> _, q = implicit_bias.circle_chain_stationary(
        ...     kappa=0.5, lr=0.1, label_sd=0.0, tilt_sd=2.0, grid=64)
        >>> bool(np.allclose(p, q))       # the same chain as isotropic noise of sd 2
        True
    """
    k = _check_kappa(kappa)
    eta = check_real(lr, name="lr", positive=True)
    n = check_positive_int(grid, name="grid", minimum=16)
    if not callable(step_sd):
        raise TypeError(
            f"step_sd must be a function of theta, got {type(step_sd).__name__}"
        )
    h = 2 * np.pi / n
    th = -np.pi + h * (np.arange(n) + 0.5)
    sd = np.asarray(step_sd(th), dtype=float)
    if sd.shape != th.shape or not np.all(np.isfinite(sd)) or np.any(sd <= 0):
        raise ValueError(
            f"step_sd must return positive finite values of shape {th.shape}"
        )
    f, fp = _circle_f(th, k, xp=np)
    return th, _gaussian_chain_density(th, th - eta * f * fp, sd, h)


def circle_fokker_planck(
    theta: ArrayLike,
    *,
    kappa: float,
    lr: float,
    label_sd: float,
    tilt_sd: float,
    prefactor: bool = True,
) -> np.ndarray:
    r"""Fokker--Planck (small lr, Itô) approximation of the stationary density of the
    circle chain.

    With drift :math:`a = -\mathrm{lr}\,ff'` and variance
    :math:`D = \mathrm{lr}^2(\mathrm{label\_sd}^2 f'^2 + \mathrm{tilt\_sd}^2)` per step
    (see
    :func:`circle_sgd_occupation`), the zero-flux stationary solution of
    :math:`\partial_t p = -(ap)' + (Dp)''/2` is :math:`p = D^{-1}\exp\int 2a/D`. The
    integral is taken by the trapezoidal rule on ``theta`` (periodic here: a/D is odd
    about 0). ``prefactor=False`` drops the 1/D factor, to separate its effect from that
    of the position-dependent exponent; it changes the density's shape, not its type.
    Runs in NumPy on the host.

    Args:
        theta: an increasing uniform grid covering one period, at least 3 points.
        kappa: asymmetry of the model, :math:`|\kappa| < 1`.
        lr: learning rate, > 0.
        label_sd: label-noise sd, >= 0.
        tilt_sd: tilt-noise sd, > 0.
        prefactor: keep the factor 1/D.

    Returns:
        The density on ``theta`` (NumPy), integrating to 1 by the trapezoidal rule.

    Example:
        >>> import numpy as np
        >>> from lecturekit import implicit_bias
        >>> th = np.linspace(-np.pi, np.pi, 101)
        >>> p = implicit_bias.circle_fokker_planck(th, kappa=0.5, lr=0.1,
        ...                                       label_sd=1.0, tilt_sd=1.0)
        >>> round(float(np.trapezoid(p, th)), 6)
        1.0
    """
    th = np.asarray(as_float_array(theta, name="theta", ndim=1), float)
    if th.size < 3 or np.any(np.diff(th) <= 0):
        raise ValueError("theta must be an increasing grid of at least 3 points")
    k, eta, ls, ts = _check_circle_noise(
        kappa, lr, label_sd, tilt_sd, tilt_positive=True
    )
    f, fp = _circle_f(th, k, xp=np)
    D = eta**2 * (ls**2 * fp**2 + ts**2)
    rate = 2 * (-eta * f * fp) / D
    exponent = np.concatenate(
        [[0.0], np.cumsum((rate[1:] + rate[:-1]) / 2 * np.diff(th))]
    )
    dens = np.exp(exponent - exponent.max()) / (D if prefactor else 1.0)
    return dens / np.trapezoid(dens, th)


def _stationary_vector(P: np.ndarray, *, reducible: str) -> np.ndarray:
    """pi = pi P, sum(pi) = 1 for an irreducible stochastic matrix P, by the
    Grassmann-Taksar-Heyman algorithm (state reduction); a ValueError with the message
    ``reducible`` if P is reducible in floating point.

    Gaussian elimination that never subtracts: the pivot 1 - P_kk is taken as the sum of
    the off-diagonal row, so every entry of pi has a small relative error however
    slowly the chain mixes. A direct solve of (P^T - I) pi = 0 does not: for a chain
    whose density spans 38 orders of magnitude it returned peaks 0.8 % and 2.3 % off
    (grids 1000, 1500) and negative entries (grid 3000), differently on different CPUs.
    O(n^3) in general; a sparse row updates only its nonzero block.
    """
    A = np.array(P, dtype=np.float64)
    n = A.shape[0]
    for k in range(n - 1, 0, -1):
        row = A[k, :k]
        out_mass = row.sum()
        if out_mass == 0:  # state k reaches none of the states left: reducible
            raise ValueError(reducible)
        A[:k, k] /= out_mass
        rows, cols = np.flatnonzero(A[:k, k]), np.flatnonzero(row)
        if rows.size * cols.size > k * k // 4:
            A[:k, :k] += np.outer(A[:k, k], row)
        else:
            A[np.ix_(rows, cols)] += np.outer(A[rows, k], row[cols])
    pi = np.empty(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ A[:k, k]
    return pi / pi.sum()


# --------------------------------------------------------------------------------------
# The two-speed random walk on the circle
# --------------------------------------------------------------------------------------


def _check_speeds(slow, fast) -> tuple[int, int]:
    return check_positive_int(slow, name="slow"), check_positive_int(fast, name="fast")


def two_speed_transition_matrix(
    n_per_half: int, *, slow: int = 1, fast: int = 2
) -> np.ndarray:
    r"""Transition matrix P (2n x 2n, rows sum to 1) of the two-speed lattice walk on
    the circle.

    Site j sits at :math:`\theta = j\pi/n`. From a lower site (j < n) the walk moves
    :math:`\pm` ``slow`` sites, from an upper one :math:`\pm` ``fast`` sites, each with
    probability 1/2, indices modulo 2n.

    Args:
        n_per_half: n, sites per half, >= 2.
        slow: step (in sites) on the lower half.
        fast: step (in sites) on the upper half.

    Returns:
        P, a NumPy array of shape (2n, 2n).

    Example:
        >>> from lecturekit import implicit_bias
        >>> P = implicit_bias.two_speed_transition_matrix(2)
        >>> for row in P.tolist():
        ...     print(row)
        [0.0, 0.5, 0.0, 0.5]
        [0.5, 0.0, 0.5, 0.0]
        [1.0, 0.0, 0.0, 0.0]
        [0.0, 1.0, 0.0, 0.0]
    """
    n = check_positive_int(n_per_half, name="n_per_half", minimum=2)
    s, f = _check_speeds(slow, fast)
    size = 2 * n
    P = np.zeros((size, size))
    for j in range(size):
        step = s if j < n else f
        P[j, (j + step) % size] += 0.5
        P[j, (j - step) % size] += 0.5
    return P


def two_speed_chain_stationary(
    n_per_half: int, *, slow: int = 1, fast: int = 2
) -> np.ndarray:
    r"""Exact stationary law of the two-speed lattice walk
    (:func:`two_speed_transition_matrix`).

    Solves :math:`\pi = \pi P`, :math:`\sum\pi = 1`. n must be even: for odd n (with
    fast = 2) half of the upper sites are transient and get mass 0. With slow = 1 and
    fast = 2 the mass of the lower half is 4n/(5n + 2).

    Args:
        n_per_half: n, sites per half, even, >= 2.
        slow: step (in sites) on the lower half.
        fast: step (in sites) on the upper half.

    Returns:
        The stationary probability vector (NumPy), shape (2n,).

    Example:
        >>> from lecturekit import implicit_bias
        >>> p = implicit_bias.two_speed_chain_stationary(10)
        >>> round(float(p[:10].sum()), 6), round(40 / 52, 6)
        (0.769231, 0.769231)
    """
    n = check_positive_int(n_per_half, name="n_per_half", minimum=2)
    if n % 2:
        raise ValueError(f"n_per_half must be even, got {n_per_half}")
    reducible = (
        f"slow, fast: the walk with steps {slow} and {fast} on {2 * n} sites is "
        "reducible, so its stationary law is not unique"
    )
    P = two_speed_transition_matrix(n, slow=slow, fast=fast)
    return _stationary_vector(P, reducible=reducible)


def two_speed_walk_occupation(
    key: jax.Array,
    n_per_half: int,
    *,
    walkers: int,
    steps: int,
    burn_in: int,
    slow: int = 1,
    fast: int = 2,
) -> jax.Array:
    r"""Monte Carlo of the two-speed walk: the fraction of time each walker spends on
    the lower half.

    Walkers start uniformly on the 2n sites of :func:`two_speed_transition_matrix`;
    averages over steps burn_in, ..., steps - 1 (their exact mean is
    :func:`two_speed_expected_occupation`).

    Args:
        key: a ``jax.random`` key.
        n_per_half: n, sites per half, >= 2.
        walkers: number of independent walkers.
        steps: steps per walker.
        burn_in: steps left out of the averages, < steps.
        slow: step (in sites) on the lower half.
        fast: step (in sites) on the upper half.

    Returns:
        The occupation fractions, shape (walkers,).

    Example:
        >>> import jax
        >>> from lecturekit import implicit_bias
        >>> occ = implicit_bias.two_speed_walk_occupation(
        ...     jax.random.key(0), 4, walkers=3, steps=20, burn_in=5)
        >>> occ.shape
        (3,)
    """
    n = check_positive_int(n_per_half, name="n_per_half", minimum=2)
    n_w = check_positive_int(walkers, name="walkers")
    n_steps, n_burn = check_run_length(steps, burn_in)
    s, f = _check_speeds(slow, fast)
    check_key(key)
    return _walk_run(key, n, n_w, n_steps, n_burn, s, f)


@partial(jax.jit, static_argnames=("n", "walkers", "steps", "burn_in", "slow", "fast"))
def _walk_run(key, n, walkers, steps, burn_in, slow, fast):
    k_init, k_run = jax.random.split(key)
    pos0 = _sampling.randint(k_init, walkers, 0, 2 * n)

    def step(pos, k):
        sign = 2 * _sampling.bernoulli(k, 0.5, walkers).astype(pos.dtype) - 1
        return jnp.mod(pos + sign * jnp.where(pos < n, slow, fast), 2 * n)

    keys = jax.random.split(k_run, steps)
    # counts of at most 2**24 are exact in float32
    sums = _time_average_sums(
        step,
        lambda pos: (pos < n).astype(jnp.float32),
        pos0,
        keys[:burn_in],
        keys[burn_in:],
    )
    return sums.astype(jnp.result_type(float)) / (steps - burn_in)


def two_speed_expected_occupation(
    n_per_half: int, *, steps: int, burn_in: int, slow: int = 1, fast: int = 2
) -> float:
    r"""The exact mean of :func:`two_speed_walk_occupation`:
    :math:`\frac1{T}\sum_{t=\mathrm{burn\_in}}^{\mathrm{steps}-1}
    P(\text{lower half at } t)`.

    T = steps - burn_in, from the uniform start, by propagating the law
    :math:`p_{t+1} = p_t P` (:func:`two_speed_transition_matrix`). It differs from the
    stationary mass by the transient, which decays geometrically with burn_in.

    Args:
        n_per_half: n, sites per half, >= 2.
        steps: steps per walker.
        burn_in: steps left out of the average, < steps.
        slow: step (in sites) on the lower half.
        fast: step (in sites) on the upper half.

    Returns:
        The expected occupation fraction (float).

    Example:
        >>> from lecturekit import implicit_bias
        >>> round(implicit_bias.two_speed_expected_occupation(
        ...     10, steps=3000, burn_in=1000), 6)
        0.769231
    """
    P = two_speed_transition_matrix(n_per_half, slow=slow, fast=fast)
    n = P.shape[0] // 2
    n_steps, n_burn = check_run_length(steps, burn_in)
    p = np.full(2 * n, 1.0 / (2 * n))
    total = 0.0
    for t in range(n_steps):
        if t >= n_burn:
            total += p[:n].sum()
        p = p @ P
    return float(total / (n_steps - n_burn))
