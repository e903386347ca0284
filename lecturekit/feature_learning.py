"""Measurements of feature learning: how far the hidden layer of a network moves
(Chapter 7).

Conventions. Networks are :func:`lecturekit.nets.mlp` networks; their first-layer weight
matrix W is stored as (fan_in, fan_out) = (d, m), so hidden unit i has the weight vector
w_i = W[:, i]. Relative changes are Frobenius ratios ||A_1 - A_0||_F / ||A_0||_F. The
feature kernel of a network at parameters theta is the Gram matrix of its last hidden
layer, Phi(x_i) . Phi(x_j) / n_L. Training uses the one engine
:func:`lecturekit.training.gradient_descent` on the square loss
(1/2n) sum_i (f(x_i) - y_i)^2 or, with a scale alpha, on the lazy loss
:func:`lecturekit.training.lazy_loss`.

* :func:`single_index_data`: Gaussian inputs and the single-index target (<u, x>)^2 - 1;
* :func:`relative_change`, :func:`feature_kernel`, :func:`top_direction_overlap`,
  :func:`direction_energy`: what moved;
* :func:`largest_stable_lr`: 2n / lambda_max of the empirical tangent kernel, the
  largest stable step of gradient descent on the linearized model;
* :func:`feature_movement`: one training run and the relative change of the first-layer
  weights and of the feature kernel;
* :func:`effective_scalings`: the initial variance and the step of every layer's
  effective weights, the per-layer table of a parameterization (standard, NTK, muP);
* :func:`lr_sweep` and :func:`best_lr`: the training loss after a fixed number of steps
  on a grid of learning rates and initializations (one compiled program), and the best
  learning rate read off it (hyperparameter transfer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import nets as _nets
from . import sampling as _sampling
from . import tangent as _tangent
from . import training as _training
from ._validation import (
    as_float_array,
    as_host_float_array,
    check_key,
    check_params_pytree,
    check_positive_int,
    check_real,
)

__all__ = [
    "single_index_data",
    "relative_change",
    "feature_kernel",
    "top_direction_overlap",
    "direction_energy",
    "largest_stable_lr",
    "FeatureMovement",
    "feature_movement",
    "LayerScalings",
    "effective_scalings",
    "lr_sweep",
    "best_lr",
]


def _unit(u: ArrayLike, name: str = "u") -> np.ndarray:
    """u / ||u|| as a NumPy array (checked on the host: nothing is compiled on bad
    input).
    """
    u = np.asarray(as_float_array(u, name=name, ndim=1))
    norm = float(np.linalg.norm(u))
    if norm == 0.0:
        raise ValueError(f"{name} must be a nonzero vector")
    return u / norm


def single_index_data(
    key: jax.Array, n: int, u: ArrayLike
) -> tuple[jax.Array, jax.Array]:
    """n Gaussian inputs and the single-index target y = (<u, x>)^2 - 1.

    x_i ~ N(0, I_d) i.i.d. (drawn by :func:`lecturekit.sampling.standard_normal`
    (key, (n, d))) and y_i = (<u, x_i>)^2 - 1 with u normalized to unit length, so that
    E y = 0 and Var y = 2. The target depends on x only through one direction.

    Args:
        key: a single JAX PRNG key.
        n: number of points, >= 1.
        u: the direction, a nonzero vector of length d (normalized here).

    Returns:
        (x, y) of shapes (n, d) and (n,).

    Example:
        >>> from lecturekit import feature_learning as fl
        >>> x, y = fl.single_index_data(jax.random.key(0), 4, jnp.array([2.0, 0.0]))
        >>> x.shape, bool(jnp.allclose(y, x[:, 0] ** 2 - 1))
        ((4, 2), True)
    """
    key = check_key(key)
    n = check_positive_int(n, name="n")
    u = _unit(u)
    x = _sampling.standard_normal(key, (n, u.shape[0]), u.dtype)
    return x, (x @ jnp.asarray(u)) ** 2 - 1.0


def relative_change(a0: ArrayLike, a1: ArrayLike) -> float:
    """||a1 - a0||_F / ||a0||_F, the relative change of an array.

    Args:
        a0: the initial array (nonzero).
        a1: the final array, same shape.

    Returns:
        A float.

    Example:
        >>> from lecturekit import feature_learning as fl
        >>> fl.relative_change(jnp.array([3.0, 4.0]), jnp.array([3.0, 4.5]))
        0.1
    """
    a0 = as_float_array(a0, name="a0")
    a1 = as_float_array(a1, name="a1")
    if a0.shape != a1.shape:
        raise ValueError(
            f"a0 and a1 must have the same shape, got {a0.shape} and {a1.shape}"
        )
    a0, a1 = np.asarray(a0), np.asarray(a1)
    norm = float(np.linalg.norm(a0))
    if norm == 0.0:
        raise ValueError("a0 must be nonzero (the change is relative to it)")
    return float(np.linalg.norm(a1 - a0)) / norm


def feature_kernel(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """The feature kernel Phi Phi^T / n_L of the last hidden layer, an (n, n) array.

    Phi(x) in R^{n_L} is the activation of the last hidden layer (the input of the
    readout, :meth:`lecturekit.nets.MLP.forward`); the 1/n_L makes the kernel O(1) at
    every width. As n_L -> infinity it converges to E[phi(z) phi(z')], the kernel of the
    last hidden layer's activations; in the NTK and standard parameterizations the
    output's NNGP (:meth:`lecturekit.nets.MLP.nngp`) is out_w_std^2 times it plus
    out_b_std^2, so the two agree at the defaults out_w_std = 1, out_b_std = 0.

    Args:
        net: a :func:`lecturekit.nets.mlp` network.
        params: its parameters.
        x: inputs, shape (n, d).

    Returns:
        The (n, n) kernel.

    Example:
        >>> from lecturekit import nets, feature_learning as fl
        >>> net = nets.mlp((2, 3, 1), "identity", w_std=2**0.5)
        >>> p = net.init(jax.random.key(0))
        >>> k = fl.feature_kernel(net, p, jnp.eye(2))
        >>> bool(jnp.allclose(k, p[0]["W"] @ p[0]["W"].T * 2 / 2 / 3))
        True
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.MLP, got {type(net).__name__}")
    phi = net.forward(params, x)[1][-1]
    return phi @ phi.T / phi.shape[1]


def top_direction_overlap(w0: ArrayLike, w1: ArrayLike, u: ArrayLike) -> float:
    """The absolute cosine between u and the top input-side singular vector of W_1 -
    W_0.

    W is a first-layer weight matrix in the (d, m) layout of :mod:`lecturekit.nets`
    (hidden unit i is the column W[:, i]); v is the top left singular vector of
    W_1 - W_0, i.e. the top right singular vector of the (m, d) matrix of unit changes,
    the direction in input space along which the hidden units moved most. Returns
    abs(<v, u>) / ||u||: 1 when all units moved along u, about 1/sqrt(d) for a random
    direction.

    Args:
        w0: initial weights, shape (d, m).
        w1: final weights, shape (d, m).
        u: a nonzero direction of length d.

    Returns:
        A float in [0, 1].

    Example:
        >>> from lecturekit import feature_learning as fl
        >>> w0 = jnp.zeros((3, 2))
        >>> w1 = jnp.array([[1.0, -2.0], [0.0, 0.0], [0.0, 0.0]])
        >>> fl.top_direction_overlap(w0, w1, jnp.array([1.0, 1.0, 0.0]))
        0.7071067811865475
    """
    w0 = as_float_array(w0, name="w0", ndim=2)
    w1 = as_float_array(w1, name="w1", ndim=2)
    if w0.shape != w1.shape:
        raise ValueError(
            f"w0 and w1 must have the same shape, got {w0.shape} and {w1.shape}"
        )
    u = _unit(u)
    if u.shape[0] != w0.shape[0]:
        raise ValueError(
            f"u must have length {w0.shape[0]} (the rows of w0), got {u.shape[0]}"
        )
    left = np.linalg.svd(np.asarray(w1) - np.asarray(w0), full_matrices=False)[0]
    return float(np.abs(left[:, 0] @ np.asarray(u)))


def direction_energy(w: ArrayLike, u: ArrayLike) -> float:
    """How much of a weight matrix lies along u, relative to an isotropic one.

    Returns d ||W^T u||^2 / (||u||^2 ||W||_F^2) for W of shape (d, m) (hidden unit i is
    the column W[:, i]). For W with i.i.d. entries its mean is about 1; it is d when
    every unit points along u. A measure of learned features that, unlike
    :func:`top_direction_overlap`, also sees how large the learned part is next to the
    random initialization.

    Args:
        w: weights, shape (d, m), nonzero.
        u: a nonzero direction of length d.

    Returns:
        A float in [0, d].

    Example:
        >>> from lecturekit import feature_learning as fl
        >>> w = jnp.array([[1.0, 1.0], [0.0, 0.0]])
        >>> fl.direction_energy(w, jnp.array([1.0, 0.0])), fl.direction_energy(
        ...     jnp.eye(2), jnp.array([3.0, 4.0]))
        (2.0, 1.0)
    """
    w = as_float_array(w, name="w", ndim=2)
    u = _unit(u)
    if u.shape[0] != w.shape[0]:
        raise ValueError(
            f"u must have length {w.shape[0]} (the rows of w), got {u.shape[0]}"
        )
    w, u = np.asarray(w), np.asarray(u)
    total = float(np.sum(w**2))
    if total == 0.0:
        raise ValueError("w must be nonzero")
    return float(w.shape[0] * np.sum((u @ w) ** 2) / total)


def largest_stable_lr(
    net: _nets.MLP, params: Any, x: ArrayLike, *, biases_only: bool = False
) -> float:
    """2n / lambda_max(Theta): the largest stable step for the linearized network.

    Theta is the empirical tangent kernel of ``net`` at ``params`` on the n inputs x
    (:func:`lecturekit.tangent.empirical_ntk`, per-layer formula). For the square loss
    (1/2n) sum_i (f(x_i) - y_i)^2 of the model linearized at ``params`` the residual
    evolves as r <- (I - lr Theta / n) r, which is stable iff lr < 2n / lambda_max.
    With ``biases_only`` the kernel is that of the biases alone,
    Theta_b = J_b J_b^T = sum_l mb_l^2 delta_l delta_l^T (J_b the Jacobian of the
    outputs with respect to every bias, delta_l the output gradient of layer l from
    :meth:`lecturekit.nets.MLP.backward`): the threshold of a step that moves only the
    biases.

    Args:
        net: a scalar-output :func:`lecturekit.nets.mlp` network.
        params: its parameters.
        x: inputs, shape (n, d).
        biases_only: use the kernel of the biases alone.

    Returns:
        The step 2n / lambda_max, a float.

    Example:
        >>> from lecturekit import nets, feature_learning as fl
        >>> net = nets.mlp((1, 1, 1), "identity", w_std=1.0, b_std=1.0, out_b_std=1.0)
        >>> p = [{"W": jnp.ones((1, 1)), "b": jnp.zeros(1)}] * 2
        >>> fl.largest_stable_lr(net, p, jnp.ones((1, 1)))   # Theta = 1 + 1 + 1 + 1
        0.5
        >>> fl.largest_stable_lr(net, p, jnp.ones((1, 1)), biases_only=True)   # 1 + 1
        1.0
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.MLP, got {type(net).__name__}")
    if net.output_dim != 1:
        raise ValueError(f"net must have one output, got {net.output_dim}")
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(
            f"x must have shape (n, {net.input_dim}) for this network, got "
            f"{tuple(x.shape)}"
        )
    if biases_only:
        net.check_params(params)
        theta = _bias_kernel(net, params, x)
    else:
        theta = _tangent.empirical_ntk(
            net.apply, params, x, implementation="structured", net=net
        )
    return float(2 * x.shape[0] / jnp.linalg.eigvalsh(theta)[-1])


@partial(jax.jit, static_argnums=0)
def _bias_kernel(net: _nets.MLP, params: Any, x: jax.Array) -> jax.Array:
    """sum_l mb_l^2 delta_l delta_l^T: the tangent kernel of the biases of a scalar
    network.
    """
    bw = net.backward(params, x)
    return sum(
        mb**2 * (d[:, 0, :] @ d[:, 0, :].T)
        for (_, mb), d in zip(net.multipliers(), bw.deltas)
    )


class FeatureMovement(NamedTuple):
    """What :func:`feature_movement` returns.

    Attributes:
        weight_change: ||W_T - W_0||_F / ||W_0||_F of the first layer.
        kernel_change: ||K_T - K_0||_F / ||K_0||_F of the :func:`feature_kernel` on x.
        losses: the training losses, shape (steps + 1,).
        final_params: the trained parameters.

    Example:
        >>> from lecturekit import feature_learning as fl
        >>> fl.FeatureMovement(0.1, 0.2, jnp.zeros(2), None).weight_change
        0.1
    """

    weight_change: float
    kernel_change: float
    losses: jax.Array
    final_params: Any


def feature_movement(
    net: _nets.MLP,
    params: Any,
    x: ArrayLike,
    y: ArrayLike,
    *,
    lr: float,
    steps: int,
    alpha: float | None = None,
) -> FeatureMovement:
    """Train ``net`` by full-batch gradient descent and measure how far its features
    moved.

    Runs :func:`lecturekit.training.gradient_descent` for ``steps`` steps of size
    ``lr`` on the square loss (1/2n) sum_i (f(x_i) - y_i)^2 (``alpha=None``) or on the
    lazy loss (1/alpha^2) L(alpha (f - f_0), y) of
    :func:`lecturekit.training.lazy_loss`, and returns the relative change of the
    first-layer weights and of the :func:`feature_kernel` on x.

    Args:
        net: a scalar-output :func:`lecturekit.nets.mlp` network.
        params: its initial parameters.
        x: training inputs, shape (n, d).
        y: labels, shape (n,).
        lr: the step, > 0.
        steps: number of steps, >= 0.
        alpha: the lazy scale, > 0, or None for the plain loss.

    Returns:
        A :class:`FeatureMovement`.

    Example:
        >>> from lecturekit import nets, feature_learning as fl
        >>> net = nets.mlp((2, 16, 1), "tanh")
        >>> x, y = jnp.eye(2), jnp.array([1.0, -1.0])
        >>> out = fl.feature_movement(net, net.init(jax.random.key(0)), x, y,
        ...                           lr=0.5, steps=20)
        >>> bool(out.losses[-1] < out.losses[0]), 0 < out.weight_change < 1
        (True, True)
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.MLP, got {type(net).__name__}")
    net.check_params(params)
    check_params_pytree(params)
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps", minimum=0)
    if alpha is not None:
        alpha = check_real(alpha, name="alpha", positive=True)
    if x.shape[1] != net.input_dim or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"x and y must have shapes (n, {net.input_dim}) and (n,), got "
            f"{tuple(x.shape)} and "
            f"{tuple(y.shape)}"
        )
    # (1/alpha^2) L(alpha (f - f_0), y) = L(f - f_0, y / alpha): one compiled run serves
    # every alpha (and every step size) of a network; the division is done on the host
    targets = y if alpha is None else np.asarray(y) / alpha
    model = net.apply if alpha is None else _Centred(params, net.apply)
    run = _training.gradient_descent(model, params, lr, steps, x=x, y=targets)
    final = run.final_params
    k0, k1 = feature_kernel(net, params, x), feature_kernel(net, final, x)
    return FeatureMovement(
        relative_change(params[0]["W"], final[0]["W"]),
        relative_change(k0, k1),
        run.losses,
        final,
    )


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class _Centred:
    """The centred model f(params, x) - f(params0, x) as data (params0 a leaf, so
    training.gradient_descent traces it): L(f - f_0, y) is the lazy loss, alpha = 1."""

    params0: Any
    f: Callable = field(metadata=dict(static=True))

    def __call__(self, params, x):
        return self.f(params, x) - self.f(self.params0, x)


class LayerScalings(NamedTuple):
    """What :func:`effective_scalings` returns: one entry per dense layer, the readout
    last.

    A layer of a :func:`lecturekit.nets.mlp` network computes z = mW h W + mb b; its
    *effective* weights are mW W and mb b. Gradient descent with step lr on the stored
    W moves the effective weights by lr mW^2 times the gradient with respect to them, so
    mW^2 is the layer's step in units of the global lr.

    Attributes:
        weight_variance: initial variance of the entries of mW W, shape (L + 1,).
        weight_lr: mW^2, the step of the effective weights per unit of lr.
        bias_variance: initial variance of the entries of mb b.
        bias_lr: mb^2.

    Example:
        >>> from lecturekit import feature_learning as fl
        >>> fl.LayerScalings(*[np.ones(2)] * 4).weight_lr
        array([1., 1.])
    """

    weight_variance: np.ndarray
    weight_lr: np.ndarray
    bias_variance: np.ndarray
    bias_lr: np.ndarray


def effective_scalings(net: _nets.MLP) -> LayerScalings:
    """The per-layer table of a network's parameterization: initial variances and steps.

    Read off the network's forward multipliers (:meth:`lecturekit.nets.MLP.multipliers`)
    and the standard deviations its :meth:`~lecturekit.nets.MLP.init` draws
    (:meth:`lecturekit.nets.MLP.init_stds`): for the effective weights mW W of each
    layer, the initial variance (mW std_W)^2 and the step mW^2 per unit of the global lr
    (and the same for the biases). Evaluated at two widths, the table gives the
    exponents of width that define a parameterization, e.g. muP for SGD: variance
    1/fan_in and step proportional to fan_out for the input layer, variance 1/fan_in^2
    and step 1/fan_in for the readout (Tensor Programs V).

    Args:
        net: a :func:`lecturekit.nets.mlp` network.

    Returns:
        A :class:`LayerScalings` of NumPy arrays of shape (depth + 1,).

    Example:
        >>> from lecturekit import nets, feature_learning as fl
        >>> for m in (64, 128):     # input: 2/d and 2 m/d; readout: 1/m^2 and 1/m
        ...     net = nets.mlp((4, m, 1), parameterization="mup")
        ...     var, lr = fl.effective_scalings(net)[:2]
        ...     print(m, var * [2, m**2], lr * [2 / m, m])
        64 [1. 1.] [1. 1.]
        128 [1. 1.] [1. 1.]
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.MLP, got {type(net).__name__}")
    mults, stds = (
        np.array(net.multipliers(), dtype=float),
        np.array(net.init_stds(), dtype=float),
    )
    return LayerScalings(
        (mults[:, 0] * stds[:, 0]) ** 2,
        mults[:, 0] ** 2,
        (mults[:, 1] * stds[:, 1]) ** 2,
        mults[:, 1] ** 2,
    )


def lr_sweep(
    net: _nets.MLP,
    x: ArrayLike,
    y: ArrayLike,
    lrs: ArrayLike,
    *,
    key: jax.Array,
    seeds: int,
    steps: int,
    dtype: Any = None,
    stop_above: float = 1e6,
    batch_size: int | None = None,
) -> jax.Array:
    """Training loss after ``steps`` steps of gradient descent, for every
    (initialization, lr).

    Draws ``seeds`` networks with :meth:`lecturekit.nets.MLP.init_many` (key, seeds,
    dtype) and trains each from its initialization at every step size of ``lrs`` by
    full-batch gradient descent (:func:`lecturekit.training.gradient_descent`) on the
    square loss (1/2n) sum_i (f(x_i) - y_i)^2, all runs in one compiled program. A run
    whose loss becomes non-finite or exceeds ``stop_above`` is stopped and reported as
    +inf (diverged).

    Args:
        net: a scalar-output :func:`lecturekit.nets.mlp` network.
        x: training inputs, shape (n, d).
        y: targets, shape (n,).
        lrs: the step sizes, shape (r,), positive.
        key: a JAX PRNG key for the initializations.
        seeds: number of initializations, >= 1.
        steps: number of gradient-descent steps, >= 1.
        dtype: floating dtype of the runs (parameters and data), None for JAX's default.
        stop_above: loss above which a run counts as diverged, > 0.
        batch_size: how many runs are vectorized together (``jax.lax.map``'s batch
            size); None vectorizes the r step sizes of one initialization. Only the
            speed depends on it.

    Returns:
        The final losses, shape (seeds, r): entry [s, j] is network s trained at lrs[j].

    Example:
        >>> from lecturekit import nets, feature_learning as fl
        >>> net = nets.mlp((2, 32, 1), "tanh")
        >>> x, y = jnp.eye(2), jnp.array([1.0, -1.0])
        >>> loss = fl.lr_sweep(net, x, y, [0.1, 1.0, 100.0], key=jax.random.key(0),
        ...                    seeds=2, steps=50)
        >>> loss.shape, bool(loss[0, 1] < loss[0, 0]), bool(jnp.isinf(loss[0, 2]))
        ((2, 3), True, True)
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.MLP, got {type(net).__name__}")
    if net.output_dim != 1:
        raise ValueError(f"net must have one output, got {net.output_dim}")
    key = check_key(key)
    seeds = check_positive_int(seeds, name="seeds")
    steps = check_positive_int(steps, name="steps")
    stop_above = check_real(stop_above, name="stop_above", positive=True)
    x = as_float_array(x, name="x", ndim=2)
    y = as_float_array(y, name="y", ndim=1)
    if x.shape[1] != net.input_dim or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"x and y must have shapes (n, {net.input_dim}) and (n,), got "
            f"{tuple(x.shape)} and "
            f"{tuple(y.shape)}"
        )
    lrs = np.asarray(as_float_array(lrs, name="lrs", ndim=1))
    if lrs.size == 0 or np.any(lrs <= 0):
        raise ValueError("lrs must be a non-empty vector of positive step sizes")
    batch_size = (
        lrs.size
        if batch_size is None
        else check_positive_int(batch_size, name="batch_size")
    )
    params = net.init_many(key, seeds, dtype)
    dtype = jax.tree_util.tree_leaves(params)[0].dtype
    return _lr_sweep(
        net,
        params,
        x.astype(dtype),
        y.astype(dtype),
        jnp.asarray(lrs, dtype),
        steps,
        stop_above,
        batch_size,
    )


@partial(jax.jit, static_argnums=(0, 5, 6, 7))
def _lr_sweep(net, params, x, y, lrs, steps, stop_above, batch_size):
    # one program for the grid: lax.map over batches of runs of the compiled entry
    def final_loss(run):
        p, lr = run
        return _training.gradient_descent(
            net.apply, p, lr, steps, x=x, y=y, stop_above=stop_above
        ).losses[-1]

    seeds, r = jax.tree_util.tree_leaves(params)[0].shape[0], lrs.shape[0]
    every = jax.tree_util.tree_map(lambda a: jnp.repeat(a, r, axis=0), params)
    losses = jax.lax.map(
        final_loss, (every, jnp.tile(lrs, seeds)), batch_size=batch_size
    )
    return losses.reshape(seeds, r)


def best_lr(lrs: ArrayLike, losses: ArrayLike) -> np.ndarray:
    """The best step size of each row of a sweep: the vertex of a parabola in log-log
    axes.

    ``lrs`` is a geometric grid (constant ratio). For each row of ``losses`` (one per
    initialization) let k be the grid point of the smallest loss. The estimate is the
    vertex of the parabola through (log lr, log loss) at k - 1, k, k + 1, which lies
    within half a grid step of lrs[k]; if the loss at k + 1 is not finite (the run
    diverged: the optimum sits at the divergence cliff) it is lrs[k] itself. Where k is
    the first or the last grid point the optimum is not bracketed and the result is NaN.

    Args:
        lrs: the step sizes, shape (r,), r >= 3, increasing geometrically.
        losses: final losses, shape (..., r), positive (+inf for diverged runs).

    Returns:
        The estimated best step size per row, shape losses.shape[:-1].

    Example:
        >>> from lecturekit import feature_learning as fl
        >>> lrs = 2.0 ** np.arange(-4, 5)
        >>> losses = np.exp((np.log(lrs) - np.log(1.5)) ** 2)    # minimum at lr = 1.5
        >>> print(np.round(fl.best_lr(lrs, losses[None]), 6))
        [1.5]
    """
    grid = np.asarray(as_float_array(lrs, name="lrs", ndim=1), dtype=float)
    if grid.size < 3 or np.any(grid <= 0):
        raise ValueError(
            f"lrs must hold at least 3 positive step sizes, got shape {grid.shape}"
        )
    ratios = grid[1:] / grid[:-1]
    if np.any(ratios <= 1) or not np.allclose(ratios, ratios[0], rtol=1e-6):
        raise ValueError(
            "lrs must increase geometrically (a constant ratio between neighbours)"
        )
    values = as_host_float_array(losses, name="losses", finite=False)
    if values.ndim < 1 or values.shape[-1] != grid.size:
        raise ValueError(
            f"losses must have shape (..., {grid.size}), got {values.shape}"
        )
    if np.any(np.isnan(values)) or np.any(values <= 0):
        raise ValueError(
            "losses must be positive (+inf for diverged runs), without NaN"
        )
    flat = values.reshape(-1, grid.size)
    out = np.full(flat.shape[0], np.nan)
    step = np.log(ratios[0])
    for row, loss in enumerate(flat):
        k = int(np.argmin(loss))
        if k == 0 or k == grid.size - 1 or not np.isfinite(loss[k]):
            continue
        if not np.isfinite(loss[k + 1]):
            out[row] = grid[k]
            continue
        left, mid, right = np.log(loss[k - 1 : k + 2])
        curvature = left - 2 * mid + right  # >= 0 since mid is the smallest
        offset = 0.5 * step * (left - right) / curvature if curvature > 0 else 0.0
        out[row] = grid[k] * np.exp(offset)
    return out.reshape(values.shape[:-1])
