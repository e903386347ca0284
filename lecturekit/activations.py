"""Pointwise activation functions by name, with their first and second derivatives.

The derivatives are written out (not obtained by autodiff) so that they can be used
inside kernel recursions and Hessian formulas at no extra cost. ReLU uses the
convention relu'(0) = 0 and relu'' = 0 (the distributional delta at 0 is dropped;
it has measure zero under any Gaussian with positive variance).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

__all__ = ["Activation", "NAMES", "get"]

ArrayFn = Callable[[jax.Array], jax.Array]

# a Python float: no float32 constant frozen at import
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


@dataclass(frozen=True)
class Activation:
    """A scalar non-linearity phi with phi' and phi'' (all applied elementwise).

    Calling the activation applies ``fn``. Frozen and hashable, so it can be a static
    argument of ``jax.jit``.

    Attributes:
        name: the registry name ("relu", "tanh", ...).
        fn: phi.
        grad: phi', written out (relu'(0) = 0).
        hess: phi'' (0 for relu and the identity).

    Example:
        >>> from lecturekit import activations
        >>> act = activations.get("tanh")
        >>> print(act.name, float(act(jnp.array(0.0))),
        ...       float(act.grad(jnp.array(0.0))))
        tanh 0.0 1.0
    """

    name: str
    fn: ArrayFn
    grad: ArrayFn
    hess: ArrayFn

    def __call__(self, z: jax.Array) -> jax.Array:
        return self.fn(z)


def _sigmoid(z: jax.Array) -> jax.Array:
    return jax.nn.sigmoid(z)


def _swish_grad(z: jax.Array) -> jax.Array:
    s = _sigmoid(z)
    return s + z * s * (1.0 - s)


def _swish_hess(z: jax.Array) -> jax.Array:
    s = _sigmoid(z)
    return s * (1.0 - s) * (2.0 + z * (1.0 - 2.0 * s))


def _erf_grad(z: jax.Array) -> jax.Array:
    return 2.0 * _INV_SQRT_PI * jnp.exp(-(z**2))


_REGISTRY: dict[str, Activation] = {
    "relu": Activation(
        "relu",
        lambda z: jnp.maximum(z, 0.0),
        lambda z: (z > 0).astype(z.dtype),
        jnp.zeros_like,
    ),
    "erf": Activation(
        "erf", jax.scipy.special.erf, _erf_grad, lambda z: -2.0 * z * _erf_grad(z)
    ),
    "tanh": Activation(
        "tanh",
        jnp.tanh,
        lambda z: 1.0 - jnp.tanh(z) ** 2,
        lambda z: -2.0 * jnp.tanh(z) * (1.0 - jnp.tanh(z) ** 2),
    ),
    "identity": Activation("identity", lambda z: z, jnp.ones_like, jnp.zeros_like),
    "softplus": Activation(
        "softplus",
        jax.nn.softplus,
        _sigmoid,
        lambda z: _sigmoid(z) * (1.0 - _sigmoid(z)),
    ),
    "swish": Activation("swish", lambda z: z * _sigmoid(z), _swish_grad, _swish_hess),
    "sigmoid": Activation(
        "sigmoid",
        _sigmoid,
        lambda z: _sigmoid(z) * (1.0 - _sigmoid(z)),
        lambda z: _sigmoid(z) * (1.0 - _sigmoid(z)) * (1.0 - 2.0 * _sigmoid(z)),
    ),
    "sin": Activation("sin", jnp.sin, jnp.cos, lambda z: -jnp.sin(z)),
}

NAMES: tuple[str, ...] = tuple(_REGISTRY)
"""The names :func:`get` knows: relu, erf, tanh, identity, softplus, swish, sigmoid,
sin."""


def get(activation: str | Activation, *, name: str = "activation") -> Activation:
    """Look up an activation by name, case-insensitively (or pass an :class:`Activation`
    through).

    Args:
        activation: one of :data:`NAMES`, or an :class:`Activation`.
        name: the argument name used in error messages.

    Returns:
        The :class:`Activation`.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
        TypeError: for anything but a string or an :class:`Activation`.

    Example:
        >>> from lecturekit import activations
        >>> relu = activations.get("ReLU")
        >>> print(relu.name, np.asarray(relu.grad(jnp.array([-1.0, 0.0, 2.0]))))
        relu [0. 0. 1.]
    """
    if isinstance(activation, Activation):
        return activation
    if not isinstance(activation, str):
        raise TypeError(
            f"{name} must be a string naming an activation, got {activation!r}"
        )
    try:
        return _REGISTRY[activation.lower()]
    except KeyError:
        raise ValueError(
            f"unknown {name} {activation!r}; expected one of {', '.join(NAMES)}"
        ) from None
