"""Many one-hidden-layer networks of a scalar input, trained side by side as one model.

Chapter 2 trains dozens of small networks of different widths (and activations) at
once: packed into one parameter vector they share no parameter, so gradient descent on
the sum of their losses trains each on its own loss, in one compiled program.
:func:`shallow` describes such a pack (:class:`Shallow`: its ``apply`` and its
closed-form tangent kernel ``ntk``), and :func:`shallow_kernel_change` trains it with
:func:`lecturekit.training.gradient_descent` and measures how far every network's
tangent kernel moves (Delta K), and the part of it carried by units whose pre-activation
changes sign.

Network r has m_r hidden units and computes, in the NTK parameterization,

    f_r(x) = sqrt(scale / m_r) sum_{u in r} v_u phi_r(w_u x + b_u),   w, b, v ~ N(0, 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import activations as _activations
from ._validation import (
    as_float_array,
    check_key,
    check_params_pytree,
    check_positive_int,
    check_real,
    check_sequence,
)
from .sampling import standard_normal as _standard_normal
from .training import gradient_descent

__all__ = ["Shallow", "shallow", "KernelChange", "shallow_kernel_change"]


class Shallow(NamedTuple):
    """R one-hidden-layer networks of a scalar input, trained side by side as one model.

    Network r has ``widths[r]`` hidden units and computes

        f_r(x) = sqrt(scale / m_r) sum_{u in r} v_u phi_r(w_u x + b_u),

    the NTK parameterization (all of w, b, v are N(0, 1) at initialization); with
    ``scale = 2`` and phi = relu it is ``nets.mlp((1, m, 1), "relu", w_std=sqrt(2),
    b_std=sqrt(2))``. The units of network r are consecutive. ``activations[r]`` names
    the activation phi_r of network r, and ``readout[r]`` says whether it trains its
    readout v (otherwise only w and b are trained: the gradient with respect to v is
    zero). The networks share no parameter, so gradient descent on the sum of their
    losses trains each on its own loss. Parameters are a dict of three (U,) arrays
    ``{"w", "b", "v"}`` with U = sum(widths). Build it with :func:`shallow`.

    Attributes:
        widths: the hidden widths m_r, one per network.
        activations: the activation name of every network.
        readout: whether each network trains its readout weights v.
        scale: the weight variance sigma_w^2 of the hidden layer (2 for He-scaled ReLU).

    Example:
        >>> from lecturekit import shallow
        >>> pack = shallow.shallow([3, 5], ["relu", "tanh"])
        >>> p = pack.init(jax.random.key(0))
        >>> pack.units, p["w"].shape, pack.apply(p, jnp.ones((4, 1))).shape
        (8, (8,), (4, 2))
    """

    widths: tuple[int, ...]
    activations: tuple[str, ...]
    readout: tuple[bool, ...]
    scale: float = 2.0

    @property
    def units(self) -> int:
        """The total number U of hidden units, sum(widths)."""
        return sum(self.widths)

    def owner(self) -> np.ndarray:
        """The network of every hidden unit, shape (U,)."""
        return np.repeat(np.arange(len(self.widths)), self.widths)

    def init(self, key: jax.Array, dtype=None) -> dict:
        """All parameters i.i.d. N(0, 1): rows w, b, v of
        :func:`lecturekit.sampling.standard_normal` (key, (3, U), dtype) (``dtype``
        default: JAX's default float)."""
        check_key(key)
        return dict(zip("wbv", _standard_normal(key, (3, self.units), dtype)))

    def runs(self) -> list[tuple[int, int, int, int, str]]:
        """(first network, first unit, number of networks, width, activation) of every
        run of consecutive networks with the same width and activation."""
        out, start, r = [], 0, 0
        while r < len(self.widths):
            key, count = (self.widths[r], self.activations[r]), 1
            while (
                r + count < len(self.widths)
                and (self.widths[r + count], self.activations[r + count]) == key
            ):
                count += 1
            out.append((r, start, count) + key)
            start, r = start + count * key[0], r + count
        return out

    def _activation_slices(self) -> list[tuple[slice, str]]:
        """(units, activation name) of every run of consecutive networks with one
        activation.
        """
        out, start, r = [], 0, 0
        while r < len(self.widths):
            end = r
            while (
                end < len(self.widths) and self.activations[end] == self.activations[r]
            ):
                end += 1
            stop = start + sum(self.widths[r:end])
            out.append((slice(start, stop), self.activations[r]))
            start, r = stop, end
        return out

    def _features(self, params: dict, x: jax.Array, derivative: bool) -> jax.Array:
        """phi_r(w_u x + b_u) (or phi_r') for every input and unit: shape (n, U)."""
        pre = x[:, :1] * params["w"] + params["b"]
        acts = [
            (units, _activations.get(name)) for units, name in self._activation_slices()
        ]
        parts = [
            (act.grad if derivative else act.fn)(pre[:, units]) for units, act in acts
        ]
        return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=1)

    def apply(self, params: dict, x: jax.Array) -> jax.Array:
        """Outputs of all networks on x of shape (n, 1): shape (n, R)."""
        v = params["v"]
        if not all(self.readout):
            trained = jnp.asarray(
                np.repeat(np.asarray(self.readout, bool), self.widths)
            )
            v = jnp.where(trained, v, jax.lax.stop_gradient(v))
        coef = jnp.sqrt(
            self.scale / np.repeat(np.asarray(self.widths, float), self.widths)
        ).astype(v.dtype)
        terms = coef * v * self._features(params, x, False)  # (n, U)
        sums = jax.ops.segment_sum(
            terms.T,
            jnp.asarray(self.owner()),
            num_segments=len(self.widths),
            indices_are_sorted=True,
        )
        return sums.T

    def ntk(
        self,
        params: dict,
        x: jax.Array,
        x2: jax.Array | None = None,
        *,
        unit_mask: jax.Array | None = None,
    ) -> jax.Array:
        """Tangent kernels of all networks with respect to their trained parameters,
        Theta_r(x_i, x2_j) for x (n1, 1) and x2 (n2, 1) (default x): shape (R, n1, n2),

            Theta_r(x, x') = (scale / m_r) sum_{u in r} mask_u [rho_r phi(p_u) phi(p_u')
                             + v_u^2 phi'(p_u) phi'(p_u') (x x' + 1)],   p_u = w_u x +
                               b_u,

        with rho_r = 1 if network r trains its readout, else 0, and mask_u =
        ``unit_mask`` (default 1): a 0/1 mask gives the part of the kernel carried by a
        subset of units. Computed in closed form, one contraction for all the networks
        of each width.
        """
        x2 = x if x2 is None else x2
        mask = (
            jnp.ones_like(params["v"])
            if unit_mask is None
            else unit_mask.astype(params["v"].dtype)
        )
        phi1, phi2 = self._features(params, x, False), self._features(params, x2, False)
        dphi1 = self._features(params, x, True) * params["v"]
        dphi2 = dphi1 if x2 is x else self._features(params, x2, True) * params["v"]
        inner = x[:, :1] @ x2[:, :1].T + 1.0
        readout = np.asarray(self.readout, float)
        widths = np.asarray(self.widths)
        starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
        order, out = [], []
        # all networks of one width: gather, one contraction
        for width in np.unique(widths):
            nets_w = np.flatnonzero(widths == width)
            cols = (starts[nets_w][:, None] + np.arange(width)[None, :]).ravel()
            group = lambda a: a[:, cols].reshape(a.shape[0], len(nets_w), width)  # noqa: B023
            read = jnp.einsum("icm,jcm->cij", group(phi1 * mask), group(phi2))
            hidden = (
                jnp.einsum("icm,jcm->cij", group(dphi1 * mask), group(dphi2)) * inner
            )
            rho = jnp.asarray(readout[nets_w], read.dtype)[:, None, None]
            out.append(self.scale / width * (rho * read + hidden))
            order.extend(nets_w)
        kernels = jnp.concatenate(out)
        return kernels if order == sorted(order) else kernels[np.argsort(order)]


def shallow(
    widths: Sequence[int],
    activation: str | Sequence[str] = "relu",
    *,
    scale: float = 2.0,
    readout: bool | Sequence[bool] = True,
) -> Shallow:
    """A :class:`Shallow` description of ``len(widths)`` networks trained side by side.

    Args:
        widths: the hidden width of every network (positive ints).
        activation: one activation name for all networks, or one per network.
        scale: sigma_w^2 of the hidden layer, > 0 (network r computes
            sqrt(scale / m_r) sum_u v_u phi(w_u x + b_u)).
        readout: whether the readout weights are trained, one bool or one per network.

    Returns:
        A :class:`Shallow`.

    Example:
        >>> from lecturekit import shallow
        >>> pack = shallow.shallow([2, 2, 4], "relu", readout=[True, False, True])
        >>> pack.widths, pack.owner().tolist()
        ((2, 2, 4), [0, 0, 1, 1, 2, 2, 2, 2])
    """
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__"):
        raise TypeError(
            f"widths must be a non-empty sequence of positive integers, got {widths!r}"
        )
    if len(widths) == 0:
        raise ValueError(
            "widths must be a non-empty sequence of positive integers, got an empty one"
        )
    widths = tuple(
        check_positive_int(w, name=f"widths[{i}]") for i, w in enumerate(widths)
    )
    count = len(widths)
    if not isinstance(activation, str):
        check_sequence(
            activation,
            name="activation",
            what="an activation name or a sequence of them",
        )
    names = (activation,) * count if isinstance(activation, str) else tuple(activation)
    if len(names) != count:
        raise ValueError(
            f"activation must be one name or one per network ({count}), got "
            f"{len(names)}"
        )
    for name in dict.fromkeys(names):
        _activations.get(name)
    if not isinstance(readout, (bool, np.bool_)):
        check_sequence(readout, name="readout", what="True/False or a sequence of them")
    flags = (
        (readout,) * count if isinstance(readout, (bool, np.bool_)) else tuple(readout)
    )
    if len(flags) != count:
        raise ValueError(
            f"readout must be True/False or one per network ({count}), got {readout!r}"
        )
    scale = check_real(scale, name="scale", positive=True)
    return Shallow(widths, names, tuple(bool(f) for f in flags), scale)


class KernelChange(NamedTuple):
    """What :func:`shallow_kernel_change` measures, one entry per network r.

    Delta K_r = ||Theta_T - Theta_0||_F / ||Theta_0||_F on the training inputs; the
    "flipped" part is the kernel carried by the units whose pre-activation changed sign
    on at least one training input.

    Attributes:
        delta_k: (R,) relative kernel change of every network.
        delta_k_flipped: (R,) the same for the kernel part of the units that flipped.
        flipped: (R,) fraction of units whose pre-activation changed sign.
        losses: (steps + 1,) summed loss.
        final: the trained parameters.

    Example:
        >>> from lecturekit import shallow
        >>> shallow.KernelChange._fields  # see shallow_kernel_change for a run
        ('delta_k', 'delta_k_flipped', 'flipped', 'losses', 'final')
    """

    delta_k: jax.Array
    delta_k_flipped: jax.Array
    flipped: jax.Array
    losses: jax.Array
    final: Any


def shallow_kernel_change(
    sh: Shallow, params: dict, x: ArrayLike, y: ArrayLike, lr: float, steps: int
) -> KernelChange:
    """Train the networks of ``sh`` by gradient descent and measure how far their
    kernels move.

    Every network r is trained on its own loss (1/2n) sum_i (f_r(x_i) - y_i)^2 (``y``
    (n,), the same labels for all) with step ``lr`` for ``steps`` steps, from ``params``
    (the dtype of ``params`` is the working precision). Tangent kernels are those of
    :meth:`Shallow.ntk` on the training inputs, at the start and at the end. The run is
    one call of :func:`lecturekit.training.gradient_descent`, compiled once per pack and
    ``steps``.

    Args:
        sh: the :class:`Shallow` pack.
        params: its parameters, a dict of w, b, v of shape (U,) (e.g. ``sh.init(key)``).
        x: training inputs (n, 1).
        y: labels (n,), shared by all networks.
        lr: step size, > 0.
        steps: number of steps, >= 1.

    Returns:
        A :class:`KernelChange`.

    Example:
        >>> from lecturekit import shallow
        >>> pack = shallow.shallow([16, 16], readout=[True, False])
        >>> x = jnp.linspace(-1.0, 1.0, 6)[:, None]
        >>> run = shallow.shallow_kernel_change(pack, pack.init(jax.random.key(1)),
        ...                                     x, jnp.sin(3 * x[:, 0]), 0.2, 20)
        >>> bool(run.losses[-1] < run.losses[0]), run.delta_k.shape, run.losses.shape
        (True, (2,), (21,))
    """
    if not isinstance(sh, Shallow):
        raise TypeError(
            "sh must be a Shallow description (shallow.shallow), got "
            f"{type(sh).__name__}"
        )
    for name in ("w", "b", "v"):
        if (
            not isinstance(params, dict)
            or name not in params
            or np.shape(params[name]) != (sh.units,)
        ):
            raise ValueError(
                f"params must be a dict of w, b, v of shape ({sh.units},), e.g. "
                "sh.init(key)"
            )
    check_params_pytree(params)
    dtype = params["v"].dtype
    x = as_float_array(x, name="x", ndim=2).astype(dtype)
    if x.shape[1] != 1:
        raise ValueError(
            f"x must have shape (n, 1) (a scalar input), got {tuple(x.shape)}"
        )
    y = as_float_array(y, name="y", ndim=1).astype(dtype)
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"y must have {x.shape[0]} entries (one per row of x), got {y.shape[0]}"
        )
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    targets = jnp.broadcast_to(y[:, None], (x.shape[0], len(sh.widths)))
    run = gradient_descent(sh.apply, params, lr, steps, x=x, y=targets)
    return _kernel_change(sh, params, run.final_params, x, run.losses)


@partial(jax.jit, static_argnums=0)
def _kernel_change(sh, params, final, x, losses):
    """The :class:`KernelChange` of a run from ``params`` to ``final``."""
    signs = lambda p: x[:, :1] * p["w"] + p["b"] > 0
    flipped = jnp.any(signs(params) != signs(final), axis=0)
    # kernels of (start, end) x (all units, flipped units), one traced contraction
    pair = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), params, final)
    masks = jnp.stack([jnp.ones_like(flipped), flipped])
    k = jax.vmap(lambda p: jax.vmap(lambda mk: sh.ntk(p, x, unit_mask=mk))(masks))(pair)
    norm0 = jnp.linalg.norm(k[0, 0], axis=(1, 2))
    change = lambda a, b: jnp.linalg.norm(a - b, axis=(1, 2)) / norm0
    owner = jnp.asarray(sh.owner())
    fraction = jax.ops.segment_sum(
        flipped.astype(x.dtype), owner, len(sh.widths)
    ) / jnp.asarray(sh.widths, x.dtype)
    return KernelChange(
        change(k[1, 0], k[0, 0]), change(k[1, 1], k[0, 1]), fraction, losses, final
    )
