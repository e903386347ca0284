"""Measurements of feature learning: how far the hidden layer of a network moves (Chapter 7).

Conventions. Networks are :func:`lecturekit.nets.mlp` networks; their first-layer weight
matrix W is stored as (fan_in, fan_out) = (d, m), so hidden unit i has the weight vector
w_i = W[:, i]. Relative changes are Frobenius ratios ||A_1 - A_0||_F / ||A_0||_F. The
feature kernel of a network at parameters theta is the Gram matrix of its last hidden
layer, Phi(x_i) . Phi(x_j) / n_L. Training uses the one engine :func:`lecturekit.training.descend`
on the square loss (1/2n) sum_i (f(x_i) - y_i)^2 or, with a scale alpha, on the lazy loss
:func:`lecturekit.training.lazy_loss`.

* :func:`single_index_data`: Gaussian inputs and the single-index target (<u, x>)^2 - 1;
* :func:`relative_change`, :func:`feature_kernel`, :func:`top_direction_overlap`,
  :func:`direction_energy`: what moved;
* :func:`largest_stable_lr`: 2n / lambda_max of the empirical tangent kernel, the largest
  stable step of gradient descent on the linearized model;
* :func:`feature_movement`: one training run and the relative change of the first-layer
  weights and of the feature kernel.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import nets as _nets
from . import sampling as _sampling
from . import tangent as _tangent
from . import training as _training
from ._validation import as_float_array, check_key, check_params_pytree, check_positive_int, check_real

__all__ = [
    "single_index_data",
    "relative_change",
    "feature_kernel",
    "top_direction_overlap",
    "direction_energy",
    "largest_stable_lr",
    "FeatureMovement",
    "feature_movement",
]


def _unit(u: ArrayLike, name: str = "u") -> np.ndarray:
    """u / ||u|| as a NumPy array (checked on the host: nothing is compiled on bad input)."""
    u = np.asarray(as_float_array(u, name=name, ndim=1))
    norm = float(np.linalg.norm(u))
    if norm == 0.0:
        raise ValueError(f"{name} must be a nonzero vector")
    return u / norm


def single_index_data(key: jax.Array, n: int, u: ArrayLike) -> tuple[jax.Array, jax.Array]:
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
        raise ValueError(f"a0 and a1 must have the same shape, got {a0.shape} and {a1.shape}")
    a0, a1 = np.asarray(a0), np.asarray(a1)
    norm = float(np.linalg.norm(a0))
    if norm == 0.0:
        raise ValueError("a0 must be nonzero (the change is relative to it)")
    return float(np.linalg.norm(a1 - a0)) / norm


def feature_kernel(net: _nets.MLP, params: Any, x: ArrayLike) -> jax.Array:
    """The feature kernel Phi Phi^T / n_L of the last hidden layer, an (n, n) array.

    Phi(x) in R^{n_L} is the activation of the last hidden layer (the input of the
    readout, :meth:`lecturekit.nets.MLP.forward`); the 1/n_L makes the kernel O(1) at
    every width (it converges to the NNGP's last-layer kernel as n_L -> infinity).

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
    """The absolute cosine between u and the top input-side singular vector of W_1 - W_0.

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
        raise ValueError(f"w0 and w1 must have the same shape, got {w0.shape} and {w1.shape}")
    u = _unit(u)
    if u.shape[0] != w0.shape[0]:
        raise ValueError(f"u must have length {w0.shape[0]} (the rows of w0), got {u.shape[0]}")
    left = np.linalg.svd(np.asarray(w1) - np.asarray(w0), full_matrices=False)[0]
    return float(np.abs(left[:, 0] @ np.asarray(u)))


def direction_energy(w: ArrayLike, u: ArrayLike) -> float:
    """How much of a weight matrix lies along u, relative to an isotropic one.

    Returns d ||W^T u||^2 / (||u||^2 ||W||_F^2) for W of shape (d, m) (hidden unit i is
    the column W[:, i]). For W with i.i.d. entries its mean is about 1; it is d when every
    unit points along u. A measure of learned features that, unlike
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
        raise ValueError(f"u must have length {w.shape[0]} (the rows of w), got {u.shape[0]}")
    w, u = np.asarray(w), np.asarray(u)
    total = float(np.sum(w**2))
    if total == 0.0:
        raise ValueError("w must be nonzero")
    return float(w.shape[0] * np.sum((u @ w) ** 2) / total)


def largest_stable_lr(net: _nets.MLP, params: Any, x: ArrayLike) -> float:
    """2n / lambda_max(Theta): the largest stable step for the linearized network.

    Theta is the empirical tangent kernel of ``net`` at ``params`` on the n inputs x
    (:func:`lecturekit.tangent.empirical_ntk`, per-layer formula). For the square loss
    (1/2n) sum_i (f(x_i) - y_i)^2 of the model linearized at ``params`` the residual
    evolves as r <- (I - lr Theta / n) r, which is stable iff lr < 2n / lambda_max.

    Args:
        net: a scalar-output :func:`lecturekit.nets.mlp` network.
        params: its parameters.
        x: inputs, shape (n, d).

    Returns:
        The step 2n / lambda_max, a float.

    Example:
        >>> from lecturekit import nets, feature_learning as fl
        >>> net = nets.mlp((1, 1, 1), "identity", w_std=1.0)
        >>> p = [{"W": jnp.ones((1, 1)), "b": jnp.zeros(1)}] * 2
        >>> fl.largest_stable_lr(net, p, jnp.ones((1, 1)))   # Theta = 1 + 1
        1.0
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a lecturekit.nets.MLP, got {type(net).__name__}")
    if net.output_dim != 1:
        raise ValueError(f"net must have one output, got {net.output_dim}")
    x = as_float_array(x, name="x", ndim=2)
    if x.shape[1] != net.input_dim:
        raise ValueError(f"x must have shape (n, {net.input_dim}) for this network, got {tuple(x.shape)}")
    theta = _tangent.empirical_ntk(net.apply, params, x, implementation="structured", net=net)
    return float(2 * x.shape[0] / jnp.linalg.eigvalsh(theta)[-1])


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


def feature_movement(net: _nets.MLP, params: Any, x: ArrayLike, y: ArrayLike, *, lr: float, steps: int,
                     alpha: float | None = None) -> FeatureMovement:
    """Train ``net`` by full-batch gradient descent and measure how far its features moved.

    Runs :func:`lecturekit.training.descend` for ``steps`` steps of size ``lr`` on the
    square loss (1/2n) sum_i (f(x_i) - y_i)^2 (``alpha=None``) or on the lazy loss
    (1/alpha^2) L(alpha (f - f_0), y) of :func:`lecturekit.training.lazy_loss`, jitted,
    and returns the relative change of the first-layer weights and of the
    :func:`feature_kernel` on x.

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
    if alpha is None:
        loss = _training.mse_loss(net.apply, x, y)
    else:
        loss = _training.lazy_loss(net.apply, params, x, y, alpha=alpha)
    run = jax.jit(lambda p: _training.descend(loss, p, lr=lr, steps=steps))(params)
    final = run.final_params
    k0, k1 = feature_kernel(net, params, x), feature_kernel(net, final, x)
    return FeatureMovement(relative_change(params[0]["W"], final[0]["W"]), relative_change(k0, k1),
                           run.losses, final)
