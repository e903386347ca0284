"""Fully connected networks whose description also gives their infinite-width kernels.

``mlp(widths, activation, ...)`` returns an :class:`MLP` with ``init(key)``,
``init_many(key, count)``, ``apply(params, x)``, ``backward(params, x)``,
``empirical_ntk(params, x1, x2)`` and ``kernels(x1, x2)``: one description of a network
gives its random initialization (drawn by :func:`lecturekit.sampling.standard_normal`,
the one sampler), its forward function, its one backward pass, its empirical tangent
kernel layer by layer (:meth:`MLP.ntk_terms`, built on :func:`layer_ntk_term`) and its
NNGP/NTK limit (the idea of neural-tangents' ``stax``).
:func:`sub_network` cuts a wide initialization into narrower ones.

Parameterizations (a layer with fan-in n maps h to z; W, b have N(0, 1) entries at
init):

* ``"ntk"``:      z = (w_std / sqrt(n)) h W + b_std b;
* ``"standard"``: z = h W + b with W ~ N(0, w_std^2 / n), b ~ N(0, b_std^2) at init;
* ``"mean_field"``: hidden layers as in ``"ntk"``; the readout is scaled by 1/n instead
  of 1/sqrt(n): z = (out_w_std / n) h W + out_b_std b. With one hidden layer of width m
  this is f(x) = (out_w_std / m) sum_i a_i phi(w_i . x w_std / sqrt(d) + b_std b_i) (+
  bias), the mean-field (Mei-Montanari-Nguyen, Rotskoff-Vanden-Eijnden) network.
  Gradient descent on the (1/2n) square loss moves each hidden unit by O(1) only if lr
  grows like the width m (lr = c m); then the hidden features move by O(1) at every
  width (feature learning), while in ``"ntk"`` with lr = O(1) they move by O(1/sqrt(m)).
* ``"mup"``: the maximal-update parameterization (muP) for SGD of Yang and Hu (Tensor
  Programs IV) in the form of Yang et al. (Tensor Programs V, their table of per-layer
  scalings), written so that ONE global step ``lr`` gives every layer its muP learning
  rate. A layer computes z = mW h W + mb b with the multipliers and initial standard
  deviations (of the stored W, b entries)

  ====================  ==========================  =========================
  layer                 mW, mb                      std of W, b at init
  ====================  ==========================  =========================
  input (fan-in d)      w_std sqrt(n_1 / d),        1/sqrt(n_1), 1/sqrt(n_1)
                        b_std sqrt(n_1)
  hidden l >= 2         w_std, b_std sqrt(n_l)      1/sqrt(n_{l-1}), 1/sqrt(n_l)
  readout (fan-in n_L)  out_w_std / sqrt(n_L),      1/sqrt(n_L), 1
                        out_b_std
  ====================  ==========================  =========================

  so that the effective weights mW W have the initial variances w_std^2/d (input),
  w_std^2/n_{l-1} (hidden) and out_w_std^2/n_L^2 (readout), and gradient descent with
  step lr on the stored parameters moves them with the per-layer steps lr mW^2:
  lr w_std^2 n_1/d (input: proportional to fan-out), lr w_std^2 (hidden: width-free),
  lr out_w_std^2/n_L (readout: 1/fan-in), lr b_std^2 n_l (hidden biases: fan-out) and
  lr out_b_std^2 (readout bias, fan-out k). With equal hidden widths n and
  out_b_std = 0 the network at step lr is the ``"mean_field"`` network at step lr * n:
  the same function at init (same draw) and the same gradient-descent trajectory.

``"ntk"`` and ``"standard"`` give the same function distribution at initialization
(hence the same NNGP); they differ in their gradients and so in their tangent kernels.
The mean-field output is ``1/sqrt(n_L)`` times the NTK-parameterized one at the same
draw, so its output variance and its tangent kernel vanish as the width grows: it has no
width-independent NNGP or NTK (:meth:`MLP.nngp` and :meth:`MLP.kernels` raise); so has
``"mup"``, whose function at init is the mean-field one. Hidden layers use
(w_std, b_std) and are followed by ``activation``; the readout uses (out_w_std,
out_b_std) and is followed by ``output_activation`` if one is given.

Parameters are a list with one ``{"W": (fan_in, fan_out), "b": (fan_out,)}`` dict per
dense layer (a pytree). Inputs are batches x of shape (n, d); a scalar-output network
returns shape (n,), a k-output network (n, k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import activations as _act
from . import kernels as _kernels
from . import sampling as _sampling
from ._validation import (
    as_float_array,
    check_choice,
    check_inputs_pair,
    check_params_pytree,
    check_positive_int,
    check_real,
)

__all__ = [
    "mlp",
    "MLP",
    "Backward",
    "check_mlp",
    "layer_ntk_term",
    "sub_network",
    "unstack",
]

Params = list[dict[str, jax.Array]]
PARAMETERIZATIONS = ("ntk", "standard", "mean_field", "mup")


class Backward(NamedTuple):
    """What :meth:`MLP.backward` returns (one entry per dense layer, the readout last).

    Attributes:
        inputs: ``inputs[l]`` is the input h of dense layer l + 1, shape (n, fan_in);
            ``inputs[0]`` is x.
        deltas: ``deltas[l]`` is d f_k / d z of dense layer l + 1 for every output k,
            shape (n, k, fan_out), in the network's multiplier convention.
        output: the network's output, ``apply(params, x)``.

    Example:
        >>> from lecturekit import nets
        >>> net = nets.mlp((2, 4, 3))
        >>> bw = net.backward(net.init(jax.random.key(1)), jnp.ones((6, 2)))
        >>> bw.deltas[-1].shape, bw.output.shape
        ((6, 3, 3), (6, 3))
    """

    inputs: list[jax.Array]
    deltas: list[jax.Array]
    output: jax.Array


@dataclass(frozen=True)
class MLP:
    """A fully connected network; build it with :func:`mlp`.

    A frozen description (hashable: it can be a static argument of ``jax.jit``). Its
    methods draw parameters (:meth:`init`, :meth:`init_many`), run the network
    (:meth:`apply`, :meth:`forward`, :meth:`backward`) and give its infinite-width
    kernels (:meth:`kernels`, :meth:`nngp`). Conventions: see :mod:`lecturekit.nets`.

    Example:
        >>> from lecturekit import nets
        >>> net = nets.mlp((3, 16, 16, 1), "tanh")
        >>> net.depth, net.input_dim, net.output_dim, net.num_params()
        (2, 3, 1, 353)
    """

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
        """Input dimension d (``widths[0]``)."""
        return self.widths[0]

    @property
    def output_dim(self) -> int:
        """Number of outputs k (``widths[-1]``)."""
        return self.widths[-1]

    def layer_stds(self) -> list[tuple[float, float]]:
        """(weight std, bias std) of each dense layer, readout last."""
        hidden = [(self.w_std, self.b_std)] * self.depth
        return hidden + [(self.out_w_std, self.out_b_std)]

    def multipliers(self) -> list[tuple[float, float]]:
        """Forward multipliers (of W, of b) of each layer: z = mW * h W + mb * b."""
        if self.parameterization == "standard":
            return [(1.0, 1.0)] * (self.depth + 1)
        if self.parameterization == "mup":
            return self._mup_multipliers()
        mults = [
            (w / fan_in**0.5, b)
            for (w, b), fan_in in zip(self.layer_stds(), self.widths[:-1])
        ]
        if self.parameterization == "mean_field":
            mults[-1] = (self.out_w_std / self.widths[-2], self.out_b_std)
        return mults

    def _mup_multipliers(self) -> list[tuple[float, float]]:
        """The muP multipliers of the module docstring's table (input, hidden,
        readout).
        """
        fans = list(zip(self.widths[:-1], self.widths[1:]))
        mults = []
        for layer, (n_in, n_out) in enumerate(fans[:-1]):
            mw = self.w_std * (n_out / n_in) ** 0.5 if layer == 0 else self.w_std
            mults.append((mw, self.b_std * n_out**0.5))
        return mults + [(self.out_w_std / fans[-1][0] ** 0.5, self.out_b_std)]

    def init_stds(self) -> list[tuple[float, float]]:
        """Standard deviations (of W entries, of b entries) that :meth:`init` draws, per
        layer.

        ``"ntk"`` and ``"mean_field"``: (1, 1) for every layer; ``"standard"``:
        (w_std / sqrt(fan_in), b_std) (readout: out_w_std, out_b_std); ``"mup"``: the
        table of the module docstring. The effective weight of a layer is mW W (mW from
        :meth:`multipliers`), so its initial variance is (mW * std)^2.

        Example:
            >>> from lecturekit import nets
            >>> nets.mlp((2, 16, 1), parameterization="mup").init_stds()
            [(0.25, 0.25), (0.25, 1.0)]
        """
        fans = list(zip(self.widths[:-1], self.widths[1:]))
        if self.parameterization == "standard":
            return [
                (w / n_in**0.5, b) for (w, b), (n_in, _) in zip(self.layer_stds(), fans)
            ]
        if self.parameterization == "mup":
            hidden = [
                (n_out**-0.5 if layer == 0 else n_in**-0.5, n_out**-0.5)
                for layer, (n_in, n_out) in enumerate(fans[:-1])
            ]
            return hidden + [(fans[-1][0] ** -0.5, 1.0)]
        return [(1.0, 1.0)] * (self.depth + 1)

    def num_params(self) -> int:
        """Number of parameters P: all weights and biases of all dense layers."""
        return sum(
            n_in * n_out + n_out
            for n_in, n_out in zip(self.widths[:-1], self.widths[1:])
        )

    # ----------------------------------------------------------------- init / apply
    def init(self, key: jax.Array, dtype: Any = None) -> Params:
        """Draw the parameters of one network.

        All parameters are read, layer by layer (W then b of each dense layer, readout
        last, each in row-major order), off one draw
        ``sampling.standard_normal(key, (num_params,), dtype)``: entries are N(0, 1) in
        the NTK and mean-field parameterizations; in the standard one W is scaled by
        w_std/sqrt(fan_in) and b by b_std; in the muP one by the stds
        of :meth:`init_stds`. One draw for the whole network: a new architecture
        compiles nothing (:func:`lecturekit.sampling.standard_normal` is compiled once
        per dtype).

        Args:
            key: a single JAX PRNG key.
            dtype: floating dtype of the parameters; ``None`` is JAX's default float.
                The numbers depend on it (each dtype has its own stream).

        Returns:
            A list of ``{"W": (fan_in, fan_out), "b": (fan_out,)}`` dicts, one per
            layer.

        Example:
            >>> from lecturekit import nets
            >>> net = nets.mlp((3, 16, 1))
            >>> [layer["W"].shape for layer in net.init(jax.random.key(0))]
            [(3, 16), (16, 1)]
        """
        return self._cut(
            _sampling.standard_normal_host(key, (self.num_params(),), dtype)
        )

    def init_many(self, key: jax.Array, count: int, dtype: Any = None) -> Params:
        """Draw ``count`` independent networks at once (for Monte Carlo over networks).

        Network i is read off the numbers ``i * P ... (i + 1) * P - 1`` (P =
        ``num_params()``) of ``sampling.standard_normal(key, (count * P,), dtype)``, cut
        as in :meth:`init`. Because the stream is prefix-stable, network 0 is
        ``init(key)`` and ``init_many(key, m)`` is the first m networks of
        ``init_many(key, n)`` for m < n. Compiles nothing per architecture or count (the
        sampler is compiled once per dtype); it also works on a traced key (inside
        ``jit`` or ``vmap``).

        Args:
            key: a single JAX PRNG key.
            count: number of networks, >= 1.
            dtype: floating dtype of the parameters (``None``: JAX's default float).

        Returns:
            The pytree of :meth:`init` with a leading axis ``count`` on every leaf.

        Example:
            >>> from lecturekit import nets
            >>> net = nets.mlp((3, 16, 1))
            >>> many = net.init_many(jax.random.key(0), 4)
            >>> first = net.init(jax.random.key(0))
            >>> same = jnp.array_equal(many[0]["W"][0], first[0]["W"])
            >>> many[0]["W"].shape, bool(same)
            ((4, 3, 16), True)
        """
        count = check_positive_int(count, name="count")
        return self._cut(
            _sampling.standard_normal_host(key, (count, self.num_params()), dtype)
        )

    def _cut(self, flat: np.ndarray | jax.Array) -> Params:
        """Rows (..., num_params) of N(0, 1) numbers -> parameters with the law of
        init.
        """
        lead, params, start = flat.shape[:-1], [], 0
        for (n_in, n_out), (w_std, b_std) in zip(
            zip(self.widths[:-1], self.widths[1:]), self.layer_stds()
        ):
            w = flat[..., start : start + n_in * n_out].reshape(lead + (n_in, n_out))
            b = flat[..., start + n_in * n_out : start + n_in * n_out + n_out]
            start += n_in * n_out + n_out
            if self.parameterization == "standard":
                w, b = w * (w_std / n_in**0.5), b * b_std
            params.append({"W": w, "b": b})
        if self.parameterization == "mup":
            params = [
                {"W": layer["W"] * sw, "b": layer["b"] * sb}
                for layer, (sw, sb) in zip(params, self.init_stds())
            ]
        return jax.device_put(params) if isinstance(flat, np.ndarray) else params

    def check_params(self, params: Any) -> None:
        """Raise a clear error unless ``params`` has this network's structure and
        shapes, floating leaves, and (for concrete arrays) finite entries."""
        if not isinstance(params, (list, tuple)) or len(params) != self.depth + 1:
            got = (
                f"length {len(params)}"
                if isinstance(params, (list, tuple))
                else type(params).__name__
            )
            raise ValueError(
                f"params must be a list of {self.depth + 1} layer dicts (from "
                f"net.init), got {got}"
            )
        for i, (layer, n_in, n_out) in enumerate(
            zip(params, self.widths[:-1], self.widths[1:])
        ):
            if not isinstance(layer, dict) or set(layer) != {"W", "b"}:
                raise ValueError(f"params[{i}] must be a dict with keys 'W' and 'b'")
            if tuple(jnp.shape(layer["W"])) != (n_in, n_out) or tuple(
                jnp.shape(layer["b"])
            ) != (n_out,):
                raise ValueError(
                    f"params[{i}] must have W of shape {(n_in, n_out)} and b of shape "
                    f"{(n_out,)}, "
                    f"got {tuple(jnp.shape(layer['W']))} and "
                    f"{tuple(jnp.shape(layer['b']))}"
                )
        check_params_pytree(list(params))

    def _check_x(self, x: ArrayLike) -> jax.Array:
        x = as_float_array(x, name="x", ndim=2)
        if x.shape[1] != self.input_dim:
            raise ValueError(
                f"x must have shape (n, {self.input_dim}) for this network, got "
                f"{tuple(x.shape)}"
            )
        return x

    def forward(
        self, params: Params, x: ArrayLike
    ) -> tuple[list[jax.Array], list[jax.Array], jax.Array]:
        """Pre-activations z^(l), layer inputs h^(l-1) (h^(0) = x) and the output.

        Returns (zs, hs, out): zs[l] and hs[l] are the pre-activation of dense layer l+1
        and its input, for l = 0..depth (the readout last); ``out`` is ``apply``'s
        result.
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
        out = (
            zs[-1]
            if self.output_activation is None
            else self.output_activation.fn(zs[-1])
        )
        return zs, hs, (out[:, 0] if self.output_dim == 1 else out)

    def apply(self, params: Params, x: ArrayLike) -> jax.Array:
        """The network on a batch: x of shape (n, d) -> (n,) (scalar output) or (n,
        k).
        """
        return self.forward(params, x)[2]

    def backward(self, params: Params, x: ArrayLike) -> Backward:
        """One forward and one backward pass: every layer's input and output gradient.

        For dense layer l (l = 1 ... depth + 1, the readout last) with forward
        multipliers (mW_l, mb_l) (see :meth:`multipliers`), z_l = mW_l h_{l-1} W_l +
        mb_l b_l, the result holds the layer input h_{l-1} (h_0 = x) and delta_l = d f /
        d z_l for every output f_k (k = ``output_dim``, also for a scalar network, k =
        1):

            d f_k(x_i) / d W_l = mW_l outer(h_{l-1}[i], delta_l[i, k]),
            d f_k(x_i) / d b_l = mb_l delta_l[i, k].

        This is the one backpropagation of lecturekit: the per-layer empirical NTK
        (:func:`lecturekit.tangent.empirical_ntk`) and the heads of multi-output
        networks are built on it.

        Args:
            params: parameters of this network (from :meth:`init`).
            x: inputs, shape (n, d).

        Returns:
            A :class:`Backward` with ``inputs[l-1]`` of shape (n, fan_in_l),
            ``deltas[l-1]`` of shape (n, k, fan_out_l) and ``output`` = ``apply(params,
            x)``.

        Example:
            >>> from lecturekit import nets
            >>> net = nets.mlp((3, 8, 1), "tanh")
            >>> bw = net.backward(net.init(jax.random.key(0)), jnp.ones((5, 3)))
            >>> [h.shape for h in bw.inputs], [d.shape for d in bw.deltas]
            ([(5, 3), (5, 8)], [(5, 1, 8), (5, 1, 1)])
        """
        zs, hs, out = self.forward(params, x)
        n, k = zs[-1].shape
        eye = jnp.eye(k, dtype=zs[-1].dtype)
        if self.output_activation is None:
            delta = jnp.broadcast_to(eye, (n, k, k))
        else:
            delta = self.output_activation.grad(zs[-1])[:, None, :] * eye
        deltas, mults = [delta], self.multipliers()
        derivative = self.activation.grad  # phi'
        for layer in range(self.depth - 1, -1, -1):
            back = mults[layer + 1][0] * (delta @ params[layer + 1]["W"].T)
            delta = derivative(zs[layer])[:, None, :] * back
            deltas.append(delta)
        return Backward(inputs=hs, deltas=deltas[::-1], output=out)

    # ----------------------------------------------------------------- tangent kernel
    def ntk_terms(
        self,
        params: Params,
        x1: ArrayLike,
        x2: ArrayLike | None = None,
        *,
        diagonal: bool = False,
    ) -> list[jax.Array]:
        """The empirical tangent kernel of this network split by dense layer.

        Term l (readout last) is :func:`layer_ntk_term` of dense layer l: the part of
        Theta(x, x') = sum over parameters of df(x)/dtheta df(x')/dtheta that comes from
        W_l and b_l,

            (mW_l^2 <h_{l-1}(x), h_{l-1}(x')> + mb_l^2) <delta_l(x), delta_l(x')>,

        from :meth:`backward` (one pass per batch; one in all for ``x2=None``). It never
        forms the Jacobian: cost O(n1 n2 width) per layer. Traceable (the checks only
        look at shapes and dtypes of traced arguments).

        Args:
            params: parameters of this network (from :meth:`init`).
            x1: inputs, shape (n1, d).
            x2: inputs, shape (n2, d), or None for x1.
            diagonal: only the diagonal Theta(x_i, x_i) of each term (needs ``x2=None``
                and a scalar output): (n1,) arrays, at the cost of n1 inner products.

        Returns:
            One array per dense layer: (n1, n2) for a scalar output, (n1, k, n2, k)
            for k outputs (entry [i, a, j, b] pairs output a at x1_i with output b at
            x2_j), (n1,) with ``diagonal=True``.

        Example:
            >>> from lecturekit import nets
            >>> net = nets.mlp((3, 8, 8, 1), "tanh")
            >>> p, x = net.init(jax.random.key(0)), jnp.ones((4, 3))
            >>> terms = net.ntk_terms(p, x)
            >>> len(terms), bool(jnp.allclose(sum(terms), net.empirical_ntk(p, x)))
            (3, True)
        """
        self.check_params(params)
        a, b = check_inputs_pair(x1, x2, dim=self.input_dim)
        if not isinstance(diagonal, bool):
            raise TypeError(f"diagonal must be True or False, got {diagonal!r}")
        if diagonal and (x2 is not None or self.output_dim != 1):
            raise ValueError(
                "diagonal=True needs x2=None and a scalar-output network, got "
                f"x2={'None' if x2 is None else 'an array'} and "
                f"{self.output_dim} outputs"
            )
        return _ntk_terms(self, params, a, None if x2 is None else b, diagonal)

    def empirical_ntk(
        self, params: Params, x1: ArrayLike, x2: ArrayLike | None = None
    ) -> jax.Array:
        """Empirical tangent kernel of a scalar network, the sum of :meth:`ntk_terms`.

        Result[i, j] = <df(x1_i)/dtheta, df(x2_j)/dtheta> over every weight and bias:
        the per-layer formula sum_l (mW_l^2 <h_{l-1}, h'_{l-1}> + mb_l^2)
        <delta_l, delta'_l>, added layer by layer (input layer first), in the dtype of
        x1 and params. ``x2=None`` runs the forward and backward pass once.
        :func:`lecturekit.tangent.empirical_ntk` uses it for ``net.apply`` or ``net``.

        Args:
            params: parameters of this network (from :meth:`init`).
            x1: inputs, shape (n1, d).
            x2: inputs, shape (n2, d), or None for x1.

        Returns:
            The (n1, n2) kernel matrix.

        Example:
            >>> from lecturekit import nets
            >>> net = nets.mlp((1, 16, 1), "relu")
            >>> x = jnp.array([[1.0], [-1.0]])
            >>> net.empirical_ntk(net.init(jax.random.key(0)), x).shape
            (2, 2)
        """
        self.check_params(params)
        if self.output_dim != 1:
            raise ValueError(
                "empirical_ntk needs a scalar-output network, this one has "
                f"{self.output_dim} outputs; take one output at a time, e.g. "
                "lambda p, x: net.apply(p, x)[:, j]"
            )
        a, b = check_inputs_pair(x1, x2, dim=self.input_dim)
        return _empirical_ntk(self, params, a, None if x2 is None else b)

    def _ntk_factors(self, params: Params, x: jax.Array) -> list[tuple]:
        """Per dense layer: (mW, mb, input h (n, fan_in), delta (n, [k,] fan_out))."""
        bw = self.backward(params, x)
        return [
            (mw, mb, h, d[:, 0, :] if self.output_dim == 1 else d)
            for (mw, mb), h, d in zip(self.multipliers(), bw.inputs, bw.deltas)
        ]

    # ----------------------------------------------------------------- infinite width
    def _check_kernel_limit(self, which: str) -> None:
        if self.output_activation is not None:
            raise ValueError(
                f"the infinite-width {which} of a network with an output activation is "
                "not "
                "deterministic (its tangent kernel depends on the random output f); "
                "use the "
                "empirical kernel (lecturekit.tangent.empirical_ntk) instead"
            )

    def nngp(self, x1: ArrayLike, x2: ArrayLike | None = None) -> jax.Array:
        """Infinite-width output covariance E[f(x1) f(x2)] per output ("ntk" and
        "standard").

        The mean-field parameterization has none (its output variance is O(1/width)):
        it raises ``ValueError``.
        """
        self._check_kernel_limit("NNGP")
        if self.parameterization in ("mean_field", "mup"):
            raise ValueError(
                f"the {self._par_name()} parameterization has no width-independent "
                "NNGP: its output "
                "variance decays like 1/width; use parameterization='ntk' for the "
                "limit kernels"
            )
        return self._recursion(x1, x2).nngp

    def kernels(self, x1: ArrayLike, x2: ArrayLike | None = None) -> _kernels.Kernels:
        """Infinite-width NNGP and NTK of this network, (n1, n2) arrays (x2=None: x2 =
        x1).

        For k outputs the kernels are K (x) I_k; the (n1, n2) block K is returned.
        Only the NTK parameterization has a width-independent tangent kernel: for the
        standard one use :meth:`nngp` (its NTK grows with width).
        """
        self._check_kernel_limit("NTK")
        if self.parameterization in ("mean_field", "mup"):
            raise ValueError(
                f"the tangent kernel of the {self._par_name()} parameterization decays "
                "like 1/width and "
                "has no width-independent limit; use parameterization='ntk' (the same "
                "network "
                "times sqrt(width)) for the limit kernels"
            )
        if self.parameterization != "ntk":
            raise ValueError(
                "the tangent kernel of the standard parameterization grows with width "
                "and has "
                "no infinite-width limit; use parameterization='ntk', or net.nngp(...) "
                "for the NNGP"
            )
        return self._recursion(x1, x2)

    def _par_name(self) -> str:
        return {"mean_field": "mean-field", "mup": "muP"}.get(
            self.parameterization, self.parameterization
        )

    def _recursion(self, x1: ArrayLike, x2: ArrayLike | None) -> _kernels.Kernels:
        a, b = check_inputs_pair(x1, x2, dim=self.input_dim)
        return _kernels.mlp_kernels(
            a,
            None if x2 is None else b,
            depth=self.depth,
            activation=self.activation,
            w_std=self.w_std,
            b_std=self.b_std,
            out_w_std=self.out_w_std,
            out_b_std=self.out_b_std,
        )


@partial(jax.jit, static_argnums=(0, 4))
def _ntk_terms(
    net: MLP, params: Params, x1: jax.Array, x2: jax.Array | None, diagonal: bool
) -> list[jax.Array]:
    """:meth:`MLP.ntk_terms` on checked arguments (x2=None: one pass for both sides)."""
    first = net._ntk_factors(params, x1)
    if diagonal:
        return [
            (mw**2 * jnp.sum(h**2, axis=1) + mb**2) * jnp.sum(d**2, axis=1)
            for mw, mb, h, d in first
        ]
    second = first if x2 is None else net._ntk_factors(params, x2)
    return [
        layer_ntk_term(mw, mb, h1, d1, h2, d2)
        for (mw, mb, h1, d1), (_, _, h2, d2) in zip(first, second)
    ]


@partial(jax.jit, static_argnums=0)
def _empirical_ntk(
    net: MLP, params: Params, x1: jax.Array, x2: jax.Array | None
) -> jax.Array:
    """:meth:`MLP.empirical_ntk` on checked arguments: terms added in layer order."""
    kernel = None
    for term in _ntk_terms(net, params, x1, x2, False):
        kernel = term if kernel is None else kernel + term
    return kernel.astype(jnp.result_type(x1, params[0]["W"]))


def layer_ntk_term(
    mw: float,
    mb: float,
    h1: ArrayLike,
    delta1: ArrayLike,
    h2: ArrayLike,
    delta2: ArrayLike,
) -> jax.Array:
    """A dense layer's part of a tangent kernel: (mW^2 <h, h'> + mb^2) <delta, delta'>.

    For a layer z = mW h W + mb b, df/dW = mW outer(h, delta) and df/db = mb delta with
    delta = df/dz, so the inner product of the gradients with respect to (W, b) at two
    inputs is (mW^2 <h, h'> + mb^2) <delta, delta'>. This is the formula behind
    :meth:`MLP.ntk_terms` and :meth:`MLP.empirical_ntk`, written once; pass other
    deltas (e.g. those of a head g o f, chained through dg/df) for the kernel of another
    output. Traceable.

    Args:
        mw: the layer's weight multiplier mW (see :meth:`MLP.multipliers`).
        mb: its bias multiplier mb.
        h1: layer inputs at the first batch, shape (n1, fan_in).
        delta1: output gradients df/dz at the first batch, (n1, fan_out) for one output
            or (n1, k, fan_out) for k outputs.
        h2: layer inputs at the second batch, shape (n2, fan_in).
        delta2: output gradients at the second batch, shaped like ``delta1``.

    Returns:
        (n1, n2) for (n, fan_out) deltas; (n1, k, n2, k) for (n, k, fan_out) deltas.

    Example:
        >>> from lecturekit import nets
        >>> h, d = jnp.array([[1.0, 2.0]]), jnp.array([[3.0]])
        >>> nets.layer_ntk_term(0.5, 1.0, h, d, h, d).tolist()   # (0.25 * 5 + 1) * 9
        [[20.25]]
    """
    mw = check_real(mw, name="mw")
    mb = check_real(mb, name="mb")
    h1 = as_float_array(h1, name="h1", ndim=2)
    h2 = as_float_array(h2, name="h2", ndim=2)
    delta1 = as_float_array(delta1, name="delta1", ndim=(2, 3))
    delta2 = as_float_array(delta2, name="delta2", ndim=delta1.ndim)
    for name, h, d in (("1", h1, delta1), ("2", h2, delta2)):
        if h.shape[0] != d.shape[0]:
            raise ValueError(
                f"h{name} and delta{name} must have the same number of rows (inputs), "
                f"got shapes {tuple(h.shape)} and {tuple(d.shape)}"
            )
    if h1.shape[1] != h2.shape[1]:
        raise ValueError(
            "h1 and h2 must have the same number of columns (one layer's fan-in), got "
            f"shapes {tuple(h1.shape)} and {tuple(h2.shape)}"
        )
    if delta1.shape[1:] != delta2.shape[1:]:
        raise ValueError(
            "delta1 and delta2 must agree but for their first axis (one layer), got "
            f"shapes {tuple(delta1.shape)} and {tuple(delta2.shape)}"
        )
    inner = mw**2 * (h1 @ h2.T) + mb**2
    if delta1.ndim == 2:
        return inner * (delta1 @ delta2.T)
    return inner[:, None, :, None] * jnp.einsum("iaw,jbw->iajb", delta1, delta2)


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

    Args:
        widths: (d, n_1, ..., n_L, k), positive integers, L >= 1.
        activation: name of the hidden activation ("relu", "erf", "tanh", "identity",
            "softplus", "swish", ...).
        w_std: weight scale of the hidden layers.
        b_std: bias scale of the hidden layers.
        out_w_std: weight scale of the readout.
        out_b_std: bias scale of the readout.
        parameterization: "ntk", "standard", "mean_field" or "mup" (module docstring).
        output_activation: name of an activation applied to the readout, or None.

    Returns:
        The :class:`MLP`.

    Example:
        >>> from lecturekit import nets
        >>> net = nets.mlp((2, 32, 1), "relu")
        >>> x = jnp.array([[1.0, 0.0], [0.6, 0.8]])
        >>> net.apply(net.init(jax.random.key(0)), x).shape
        (2,)
        >>> np.round(np.asarray(net.kernels(x).ntk), 3)
        array([[1.  , 0.55],
               [0.55, 1.  ]])
    """
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__"):
        raise TypeError(
            "widths must be a sequence of integers (d, n_1, ..., n_L, k), got "
            f"{widths!r}"
        )
    widths = tuple(
        check_positive_int(w, name=f"widths[{i}]") for i, w in enumerate(widths)
    )
    if len(widths) < 3:
        raise ValueError(
            "widths must list the input dimension, at least one hidden width and the "
            "output "
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
        output_activation=None
        if output_activation is None
        else _act.get(output_activation, name="output_activation"),
    )


def check_mlp(net: Any, *, output_activation: bool = True) -> MLP:
    """``net`` if it is a :func:`mlp` network, else a clear error.

    Args:
        net: the object to check.
        output_activation: whether an output activation is allowed; with False a
            network with one raises ``ValueError`` (for code that puts its own head on
            the outputs, e.g. :mod:`lecturekit.heads`).

    Returns:
        ``net``, unchanged.

    Raises:
        TypeError: ``net`` is not an :class:`MLP`.
        ValueError: it has an output activation and ``output_activation`` is False.

    Example:
        >>> from lecturekit import nets
        >>> nets.check_mlp(nets.mlp((2, 4, 1))).widths
        (2, 4, 1)
    """
    if not isinstance(output_activation, bool):
        raise TypeError(
            f"output_activation must be True or False, got {output_activation!r}"
        )
    if not isinstance(net, MLP):
        raise TypeError(
            f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}"
        )
    if not output_activation and net.output_activation is not None:
        raise ValueError(
            "net must have no output_activation: pass the non-linearity as head=..."
        )
    return net


def sub_network(params: Params, width: int, block: int = 0) -> Params:
    """Hidden units ``block*width ... (block+1)*width - 1`` of every hidden layer of an
    MLP.

    ``params`` are the parameters of a :func:`mlp` network (leading batch axes allowed,
    as from :meth:`MLP.init_many`) whose hidden layers all have at least
    ``(block+1)*width`` units. In the NTK parameterization every entry is N(0, 1)
    whatever the width, so the result is exactly an initialization of the
    width-``width`` network, and different blocks are independent of each other (they
    share only the readout bias).

    Args:
        params: list of ``{"W": (..., fan_in, fan_out), "b": (..., fan_out)}`` layer
            dicts.
        width: hidden width of the sub-network, >= 1.
        block: which block of ``width`` units, >= 0.

    Returns:
        The parameters of the width-``width`` network (same leading axes).

    Example:
        >>> from lecturekit import nets
        >>> wide = nets.mlp((3, 64, 64, 1)).init(jax.random.key(0))
        >>> [layer["W"].shape for layer in nets.sub_network(wide, 16, block=2)]
        [(3, 16), (16, 16), (16, 1)]
    """
    _check_mlp_layers(params)
    width = check_positive_int(width, name="width")
    block = check_positive_int(block, name="block", minimum=0)
    units = slice(block * width, (block + 1) * width)
    hidden = min(np.shape(layer["W"])[-1] for layer in params[:-1])
    if units.stop > hidden:
        raise ValueError(
            f"block {block} of width {width} needs {units.stop} hidden units, the "
            f"network has {hidden}"
        )
    last = len(params) - 1
    return [
        {
            "W": layer["W"][
                ...,
                slice(None) if i == 0 else units,
                units if i < last else slice(None),
            ],
            "b": layer["b"][..., units] if i < last else layer["b"],
        }
        for i, layer in enumerate(params)
    ]


def unstack(params: Params) -> list[Params]:
    """The networks of a batch of parameters (leading axis, as
    from :meth:`MLP.init_many`), one parameter list each, as NumPy arrays on the host.

    Host arrays make per-network work that runs in Python (exact region counting, plots)
    cheap: slicing a JAX array per network would dispatch one device operation per leaf
    and network. Pass a network's parameters to any ``MLP`` method as they are.

    Args:
        params: list of ``{"W": (count, fan_in, fan_out), "b": (count, fan_out)}``
            dicts.

    Returns:
        ``count`` lists of ``{"W": (fan_in, fan_out), "b": (fan_out,)}`` dicts of NumPy
        arrays.

    Example:
        >>> from lecturekit import nets
        >>> net = nets.mlp((2, 8, 1))
        >>> batch = nets.unstack(net.init_many(jax.random.key(0), 3))
        >>> len(batch), batch[2][0]["W"].shape, type(batch[2][0]["W"]).__name__
        (3, (2, 8), 'ndarray')
    """
    _check_mlp_layers(params)
    host = [
        {"W": np.asarray(layer["W"]), "b": np.asarray(layer["b"])} for layer in params
    ]
    shape = host[0]["W"].shape
    if len(shape) != 3 or any(
        layer["W"].ndim != 3 or layer["b"].ndim != 2 for layer in host
    ):
        raise ValueError(
            "params must have exactly one leading (network) axis, got W of shape "
            f"{shape}"
        )
    return [
        [{"W": layer["W"][i], "b": layer["b"][i]} for layer in host]
        for i in range(shape[0])
    ]


def _check_mlp_layers(params: Any) -> None:
    """Require the parameters of a ``nets.mlp`` network with at least one hidden layer:
    layer dicts of W (..., n_in, n_out) and b (..., n_out) that chain, floating and (if
    concrete) finite; leading batch axes are allowed."""
    if not isinstance(params, (list, tuple)) or len(params) < 2:
        raise ValueError(
            "params must be the list of layer dicts of an MLP with at least one hidden "
            "layer"
        )
    for i, layer in enumerate(params):
        if not isinstance(layer, dict) or set(layer) != {"W", "b"}:
            raise ValueError(f"params[{i}] must be a dict with keys 'W' and 'b'")
    check_params_pytree(params)
    previous = None
    for i, layer in enumerate(params):
        w, b = np.shape(layer["W"]), np.shape(layer["b"])
        if len(w) < 2 or len(b) < 1 or w[-1] != b[-1] or w[:-2] != b[:-1]:
            raise ValueError(
                f"params[{i}] must have W of shape (..., n_in, n_out) and b of shape "
                "(..., n_out), "
                f"got {w} and {b}"
            )
        if previous is not None and w[-2] != previous:
            raise ValueError(
                f"params[{i}]['W'] must have {previous} rows (the width of layer "
                f"{i - 1}), got shape {w}"
            )
        previous = w[-1]
