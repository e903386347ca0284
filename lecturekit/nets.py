"""Fully connected networks whose description also gives their infinite-width kernels.

``mlp(widths, activation, ...)`` returns an :class:`MLP` with ``init(key)``,
``apply(params, x)`` and ``kernels(x1, x2)``: one description of a network gives its
random initialization, its forward function and its NNGP/NTK limit (the idea of
neural-tangents' ``stax``).

Parameterizations (a layer with fan-in n maps h to z; W, b have N(0, 1) entries at init):

* ``"ntk"``:      z = (w_std / sqrt(n)) h W + b_std b;
* ``"standard"``: z = h W + b with W ~ N(0, w_std^2 / n), b ~ N(0, b_std^2) at init.

Both give the same function distribution at initialization (hence the same NNGP); they
differ in their gradients and so in their tangent kernels. Hidden layers use
(w_std, b_std) and are followed by ``activation``; the readout uses (out_w_std,
out_b_std) and is followed by ``output_activation`` if one is given.

Parameters are a list with one ``{"W": (fan_in, fan_out), "b": (fan_out,)}`` dict per
dense layer (a pytree). Inputs are batches x of shape (n, d); a scalar-output network
returns shape (n,), a k-output network (n, k).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from . import activations as _act
from . import kernels as _kernels
from ._validation import (
    as_float_array, check_choice, check_inputs_pair, check_key, check_params_pytree, check_positive_int, check_real,
)

Params = list[dict[str, jax.Array]]
PARAMETERIZATIONS = ("ntk", "standard")


@dataclass(frozen=True)
class MLP:
    """A fully connected network; build it with :func:`mlp`."""

    widths: tuple[int, ...]
    activation: _act.Activation
    w_std: float
    b_std: float
    out_w_std: float
    out_b_std: float
    parameterization: str
    output_activation: _act.Activation | None

    # ----------------------------------------------------------------- structure
    @property
    def depth(self) -> int:
        """Number of hidden layers."""
        return len(self.widths) - 2

    @property
    def input_dim(self) -> int:
        return self.widths[0]

    @property
    def output_dim(self) -> int:
        return self.widths[-1]

    def layer_stds(self) -> list[tuple[float, float]]:
        """(weight std, bias std) of each dense layer, readout last."""
        hidden = [(self.w_std, self.b_std)] * self.depth
        return hidden + [(self.out_w_std, self.out_b_std)]

    def multipliers(self) -> list[tuple[float, float]]:
        """Forward multipliers (of W, of b) of each layer: z = mW * h W + mb * b."""
        if self.parameterization == "standard":
            return [(1.0, 1.0)] * (self.depth + 1)
        return [(w / fan_in**0.5, b) for (w, b), fan_in in zip(self.layer_stds(), self.widths[:-1])]

    def num_params(self) -> int:
        return sum(n_in * n_out + n_out for n_in, n_out in zip(self.widths[:-1], self.widths[1:]))

    # ----------------------------------------------------------------- init / apply
    def init(self, key: jax.Array) -> Params:
        """Draw parameters: N(0, 1) entries (NTK) or N(0, std^2/fan_in), N(0, b_std^2) (standard)."""
        check_key(key)
        keys = jax.random.split(key, 2 * (self.depth + 1))
        params = []
        for i, (n_in, n_out) in enumerate(zip(self.widths[:-1], self.widths[1:])):
            w = jax.random.normal(keys[2 * i], (n_in, n_out))
            b = jax.random.normal(keys[2 * i + 1], (n_out,))
            if self.parameterization == "standard":
                w_std, b_std = self.layer_stds()[i]
                w, b = w * (w_std / n_in**0.5), b * b_std
            params.append({"W": w, "b": b})
        return params

    def check_params(self, params: Any) -> None:
        """Raise a clear error unless ``params`` has this network's structure and shapes, floating
        leaves, and (for concrete arrays) finite entries."""
        if not isinstance(params, (list, tuple)) or len(params) != self.depth + 1:
            got = f"length {len(params)}" if isinstance(params, (list, tuple)) else type(params).__name__
            raise ValueError(f"params must be a list of {self.depth + 1} layer dicts (from net.init), got {got}")
        for i, (layer, n_in, n_out) in enumerate(zip(params, self.widths[:-1], self.widths[1:])):
            if not isinstance(layer, dict) or set(layer) != {"W", "b"}:
                raise ValueError(f"params[{i}] must be a dict with keys 'W' and 'b'")
            if tuple(jnp.shape(layer["W"])) != (n_in, n_out) or tuple(jnp.shape(layer["b"])) != (n_out,):
                raise ValueError(
                    f"params[{i}] must have W of shape {(n_in, n_out)} and b of shape {(n_out,)}, "
                    f"got {tuple(jnp.shape(layer['W']))} and {tuple(jnp.shape(layer['b']))}"
                )
        check_params_pytree(list(params))

    def _check_x(self, x: ArrayLike) -> jax.Array:
        x = as_float_array(x, name="x", ndim=2)
        if x.shape[1] != self.input_dim:
            raise ValueError(
                f"x must have shape (n, {self.input_dim}) for this network, got {tuple(x.shape)}"
            )
        return x

    def forward(self, params: Params, x: ArrayLike) -> tuple[list[jax.Array], list[jax.Array], jax.Array]:
        """Pre-activations z^(l), layer inputs h^(l-1) (h^(0) = x) and the output.

        Returns (zs, hs, out): zs[l] and hs[l] are the pre-activation of dense layer l+1
        and its input, for l = 0..depth (the readout last); ``out`` is ``apply``'s result.
        """
        self.check_params(params)
        h = self._check_x(x)
        zs, hs = [], []
        for i, (layer, (mw, mb)) in enumerate(zip(params, self.multipliers())):
            hs.append(h)
            z = mw * (h @ layer["W"]) + mb * layer["b"]
            zs.append(z)
            if i < self.depth:
                h = self.activation.fn(z)
        out = zs[-1] if self.output_activation is None else self.output_activation.fn(zs[-1])
        return zs, hs, (out[:, 0] if self.output_dim == 1 else out)

    def apply(self, params: Params, x: ArrayLike) -> jax.Array:
        """The network on a batch: x of shape (n, d) -> (n,) (scalar output) or (n, k)."""
        return self.forward(params, x)[2]

    # ----------------------------------------------------------------- infinite width
    def _check_kernel_limit(self, which: str) -> None:
        if self.output_activation is not None:
            raise ValueError(
                f"the infinite-width {which} of a network with an output activation is not "
                "deterministic (its tangent kernel depends on the random output f); use the "
                "empirical kernel (lecturekit.tangent.empirical_ntk) instead"
            )

    def nngp(self, x1: ArrayLike, x2: ArrayLike | None = None) -> jax.Array:
        """Infinite-width output covariance E[f(x1) f(x2)] per output (both parameterizations)."""
        self._check_kernel_limit("NNGP")
        return self._recursion(x1, x2).nngp

    def kernels(self, x1: ArrayLike, x2: ArrayLike | None = None) -> _kernels.Kernels:
        """Infinite-width NNGP and NTK of this network, (n1, n2) arrays (x2=None: x2 = x1).

        For k outputs the kernels are K (x) I_k; the (n1, n2) block K is returned.
        Only the NTK parameterization has a width-independent tangent kernel: for the
        standard one use :meth:`nngp` (its NTK grows with width).
        """
        self._check_kernel_limit("NTK")
        if self.parameterization != "ntk":
            raise ValueError(
                "the tangent kernel of the standard parameterization grows with width and has "
                "no infinite-width limit; use parameterization='ntk', or net.nngp(...) for the NNGP"
            )
        return self._recursion(x1, x2)

    def _recursion(self, x1: ArrayLike, x2: ArrayLike | None) -> _kernels.Kernels:
        a, b = check_inputs_pair(x1, x2, dim=self.input_dim)
        return _kernels.mlp_kernels(
            a, None if x2 is None else b, depth=self.depth, activation=self.activation, w_std=self.w_std,
            b_std=self.b_std, out_w_std=self.out_w_std, out_b_std=self.out_b_std,
        )


def mlp(
    widths: Sequence[int],
    activation: str = "relu",
    *,
    w_std: float = 2**0.5,
    b_std: float = 0.0,
    out_w_std: float = 1.0,
    out_b_std: float = 0.0,
    parameterization: str = "ntk",
    output_activation: str | None = None,
) -> MLP:
    """A fully connected network with widths (d, n_1, ..., n_L, k).

    ``widths[0]`` is the input dimension, ``widths[-1]`` the number of outputs and the
    L >= 1 entries between are the hidden widths (all may differ: a small one is a
    bottleneck). See the module docstring for the parameterizations.
    """
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__"):
        raise TypeError(f"widths must be a sequence of integers (d, n_1, ..., n_L, k), got {widths!r}")
    widths = tuple(check_positive_int(w, name=f"widths[{i}]") for i, w in enumerate(widths))
    if len(widths) < 3:
        raise ValueError(
            f"widths must list the input dimension, at least one hidden width and the output "
            f"width (depth >= 1), got {widths}"
        )
    check_choice(parameterization, PARAMETERIZATIONS, name="parameterization")
    return MLP(
        widths=widths,
        activation=_act.get(activation),
        w_std=check_real(w_std, name="w_std", nonnegative=True),
        b_std=check_real(b_std, name="b_std", nonnegative=True),
        out_w_std=check_real(out_w_std, name="out_w_std", nonnegative=True),
        out_b_std=check_real(out_b_std, name="out_b_std", nonnegative=True),
        parameterization=parameterization,
        output_activation=None if output_activation is None else _act.get(output_activation, name="output_activation"),
    )
