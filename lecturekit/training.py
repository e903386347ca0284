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

Width sweeps (Chapter 2):

* :func:`standard_normal`, :func:`init_many`, :func:`init_one` draw N(0, 1) entries (NTK
  parameterization) in one call of the generator; :func:`sub_network` cuts a wide
  initialization into independent narrower ones; :func:`ntk_errors` measures the relative
  error of empirical NTKs against the infinite-width kernel at several widths.
* :func:`shallow` describes many one-hidden-layer networks of a scalar input, trained side by
  side as one model (:class:`Shallow`, with ``apply`` and the closed-form tangent kernel
  ``ntk``); :func:`shallow_kernel_change` trains them and measures Delta K, and the part of it
  carried by units whose pre-activation changes sign.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, Iterable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from . import activations as _activations
from . import nets as _nets
from . import tangent as _tangent
from ._validation import (
    as_float_array, check_callable, check_key, check_params_pytree, check_positive_int, check_range, check_real,
    concrete, is_traced, warn_numerical,
)

__all__ = [
    "mse_loss",
    "descend",
    "descend_observed",
    "snapshot_steps",
    "gradient_descent",
    "relative_kernel_change",
    "Trajectory",
    "standard_normal",
    "init_many",
    "init_one",
    "sub_network",
    "ntk_errors",
    "Shallow",
    "shallow",
    "KernelChange",
    "shallow_kernel_change",
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


def _check_sequence(value: Any, *, name: str, what: str) -> None:
    """Require a sequence (any iterable but a string); ``what`` describes it in the message."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be {what}, got {value!r}")


def _check_mlp_layers(params: Any) -> None:
    """Require the parameters of a ``nets.mlp`` network with at least one hidden layer: layer
    dicts of W (..., n_in, n_out) and b (..., n_out) that chain, floating and (if concrete)
    finite; leading batch axes are allowed."""
    if not isinstance(params, (list, tuple)) or len(params) < 2:
        raise ValueError("params must be the list of layer dicts of an MLP with at least one hidden layer")
    for i, layer in enumerate(params):
        if not isinstance(layer, dict) or set(layer) != {"W", "b"}:
            raise ValueError(f"params[{i}] must be a dict with keys 'W' and 'b'")
    check_params_pytree(params)
    previous = None
    for i, layer in enumerate(params):
        w, b = np.shape(layer["W"]), np.shape(layer["b"])
        if len(w) < 2 or len(b) < 1 or w[-1] != b[-1] or w[:-2] != b[:-1]:
            raise ValueError(f"params[{i}] must have W of shape (..., n_in, n_out) and b of shape (..., n_out), "
                             f"got {w} and {b}")
        if previous is not None and w[-2] != previous:
            raise ValueError(f"params[{i}]['W'] must have {previous} rows (the width of layer {i - 1}), got shape {w}")
        previous = w[-1]


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


# ----------------------------------------------------------------------------------------
# Random initializations drawn in one call (used by the width sweeps of Chapter 2)


def standard_normal(key: jax.Array, shape: Sequence[int]) -> jax.Array:
    """``jax.random.normal(key, shape)`` drawn as one flat vector and reshaped.

    The same distribution (i.i.d. N(0, 1) entries, default float dtype); the flat draw
    keeps compilation cheap on the CPU, where the generator compiles slowly for some
    2-D shapes.
    """
    check_key(key)
    _check_sequence(shape, name="shape", what="a sequence of integers >= 0")
    shape = tuple(check_positive_int(s, name=f"shape[{i}]", minimum=0) for i, s in enumerate(shape))
    return _flat_normal(key, shape)


@partial(jax.jit, static_argnums=1)
def _flat_normal(key, shape):
    return jax.random.normal(key, (math.prod(shape),)).reshape(shape)


def init_many(net: _nets.MLP, key: jax.Array, count: int) -> Any:
    """``count`` independent initializations of an NTK-parameterized ``net``, stacked.

    Every parameter array gets a new leading axis of size ``count``; every entry is
    N(0, 1), the distribution of ``net.init`` (NTK parameterization), drawn in ONE call to
    the generator (in float32, then stored in the default float dtype: ample for random
    weights). Compiled once per (net, count).
    """
    if not isinstance(net, _nets.MLP):
        raise TypeError(f"net must be a network from nets.mlp, got {type(net).__name__}")
    if net.parameterization != "ntk":
        raise ValueError(f"net must use the NTK parameterization, got {net.parameterization!r}")
    check_key(key)
    count = check_positive_int(count, name="count")
    return _init_many(net, key, count)


@partial(jax.jit, static_argnums=(0, 2))
def _init_many(net, key, count):
    leaves, treedef = jax.tree_util.tree_flatten(jax.eval_shape(net.init, key))
    sizes = [leaf.size for leaf in leaves]
    rows = jax.random.normal(key, (count, sum(sizes)), jnp.float32).astype(float)
    parts = jnp.split(rows, np.cumsum(sizes)[:-1], axis=1)
    return jax.tree_util.tree_unflatten(
        treedef, [p.reshape((count,) + leaf.shape) for p, leaf in zip(parts, leaves)])


def init_one(net: _nets.MLP, key: jax.Array) -> Any:
    """One initialization of ``net``, drawn like :func:`init_many` (first of one)."""
    return jax.tree_util.tree_map(lambda a: a[0], init_many(net, key, 1))


def sub_network(params: Any, width: int, block: int = 0) -> Any:
    """Hidden units ``block*width ... (block+1)*width - 1`` of every hidden layer of an MLP.

    ``params`` are the parameters of a ``nets.mlp`` network (leading batch axes allowed)
    whose hidden layers all have at least ``(block+1)*width`` units. In the NTK
    parameterization every entry is N(0, 1) whatever the width, so the result is exactly
    an initialization of the width-``width`` network, and different blocks are
    independent of each other (they share only the readout bias).
    """
    _check_mlp_layers(params)
    width = check_positive_int(width, name="width")
    block = check_positive_int(block, name="block", minimum=0)
    units = slice(block * width, (block + 1) * width)
    hidden = min(np.shape(layer["W"])[-1] for layer in params[:-1])
    if units.stop > hidden:
        raise ValueError(f"block {block} of width {width} needs {units.stop} hidden units, the network has {hidden}")
    last = len(params) - 1
    return [{"W": layer["W"][..., slice(None) if i == 0 else units, units if i < last else slice(None)],
             "b": layer["b"][..., units] if i < last else layer["b"]} for i, layer in enumerate(params)]


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
    """Relative errors ||Theta_m - Theta||_F / ||Theta||_F of empirical NTKs at several widths.

    ``make_net(width)`` builds the network (NTK parameterization, readout bias std 0);
    ``theory`` is its infinite-width NTK on ``x``. Returns (errors, kernels): one array per
    width, of shapes (draws,) and (draws, n, n). Every network is drawn at the largest
    width M in one compiled program. By default there are ``len(widths) * seeds`` draws and
    the width-m networks are the first m units of ``seeds`` draws of their own
    (independent across widths). With ``nested=True`` there are ``seeds`` draws and the
    width-m networks are all M // m disjoint blocks of m units of each (independent of
    each other, but parts of the widest networks: cheaper, and errors at different widths
    are correlated).
    """
    check_callable(make_net, name="make_net", what="a function width -> nets.mlp network")
    _check_sequence(widths, name="widths", what="a sequence of positive integers")
    widths = tuple(check_positive_int(w, name="widths") for w in widths)
    if not widths:
        raise ValueError("widths must not be empty")
    seeds = check_positive_int(seeds, name="seeds")
    check_key(key)
    x = as_float_array(x, name="x", ndim=2)
    theory = np.asarray(as_float_array(theory, name="theory", ndim=2))
    if theory.shape != (x.shape[0], x.shape[0]):
        raise ValueError(f"theory must have shape {(x.shape[0], x.shape[0])} (n x n for the n rows of x), "
                         f"got {theory.shape}")
    net1 = make_net(1)
    if net1.out_b_std != 0.0:
        raise ValueError("make_net must build networks with out_b_std = 0 (blocks share the readout bias)")
    if x.shape[1] != net1.input_dim:
        raise ValueError(f"x must have shape (n, {net1.input_dim}) (the networks' input dimension), "
                         f"got {tuple(x.shape)}")
    emp = [np.asarray(k) for k in _ntk_draws(make_net, widths, seeds, key, x, nested)]
    errors = [np.linalg.norm(k - theory, axis=(-2, -1)) / np.linalg.norm(theory) for k in emp]
    return errors, emp


@partial(jax.jit, static_argnums=(0, 1, 2, 5))
def _ntk_draws(make_net, widths, seeds, key, x, nested):
    big = max(widths)
    drawn = _init_many(make_net(big), key, seeds if nested else len(widths) * seeds)
    drawn = jax.lax.optimization_barrier(drawn)  # generate once (XLA would recompute it per use)
    emp = []
    for i, width in enumerate(widths):
        if nested:
            blocks = [sub_network(drawn, width, b) for b in range(big // width)]
            own = jax.tree_util.tree_map(lambda *a: jnp.concatenate(a), *blocks)
        else:
            own = sub_network(jax.tree_util.tree_map(lambda a: a[i * seeds:(i + 1) * seeds], drawn), width)
        emp.append(jax.vmap(lambda p: _tangent.empirical_ntk(make_net(width).apply, p, x))(own))
    return emp


# ----------------------------------------------------------------------------------------
# Many one-hidden-layer networks with a scalar input, side by side


class Shallow(NamedTuple):
    """R one-hidden-layer networks of a scalar input, trained side by side as one model.

    Network r has ``widths[r]`` hidden units and computes

        f_r(x) = sqrt(scale / m_r) sum_{u in r} v_u phi_r(w_u x + b_u),

    the NTK parameterization (all of w, b, v are N(0, 1) at initialization); with
    ``scale = 2`` and phi = relu it is ``nets.mlp((1, m, 1), "relu", w_std=sqrt(2),
    b_std=sqrt(2))``. The units of network r are consecutive. ``activations[r]`` names the
    activation phi_r of network r, and ``readout[r]`` says whether it trains its readout v
    (otherwise only w and b are trained: the gradient with respect to v is zero). The
    networks share no parameter, so gradient descent on the sum of their losses trains each
    on its own loss. Parameters are a dict of three (U,) arrays ``{"w", "b", "v"}`` with
    U = sum(widths). Build it with :func:`shallow`.
    """

    widths: tuple[int, ...]
    activations: tuple[str, ...]
    readout: tuple[bool, ...]
    scale: float = 2.0

    @property
    def units(self) -> int:
        return sum(self.widths)

    def owner(self) -> np.ndarray:
        """The network of every hidden unit, shape (U,)."""
        return np.repeat(np.arange(len(self.widths)), self.widths)

    def init(self, key: jax.Array, dtype=None) -> dict:
        """All parameters i.i.d. N(0, 1), drawn in one call (``dtype`` default: float)."""
        check_key(key)
        draw = _flat_normal(key, (3, self.units))
        return dict(zip("wbv", draw if dtype is None else draw.astype(dtype)))

    def runs(self) -> list[tuple[int, int, int, int, str]]:
        """(first network, first unit, number of networks, width, activation) of every run of
        consecutive networks with the same width and activation."""
        out, start, r = [], 0, 0
        while r < len(self.widths):
            key, count = (self.widths[r], self.activations[r]), 1
            while r + count < len(self.widths) and (self.widths[r + count], self.activations[r + count]) == key:
                count += 1
            out.append((r, start, count) + key)
            start, r = start + count * key[0], r + count
        return out

    def _features(self, params: dict, x: jax.Array, derivative: bool) -> jax.Array:
        """phi_r(w_u x + b_u) (or phi_r') for every input and unit: shape (n, U)."""
        pre = x[:, :1] * params["w"] + params["b"]
        parts, start, r = [], 0, 0          # one slice per run of networks with one activation
        while r < len(self.widths):
            end = r
            while end < len(self.widths) and self.activations[end] == self.activations[r]:
                end += 1
            stop = start + sum(self.widths[r:end])
            act = _activations.get(self.activations[r])
            piece = pre[:, start:stop]
            parts.append(act.grad(piece) if derivative else act.fn(piece))
            start, r = stop, end
        return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=1)

    def apply(self, params: dict, x: jax.Array) -> jax.Array:
        """Outputs of all networks on x of shape (n, 1): shape (n, R)."""
        v = params["v"]
        if not all(self.readout):
            trained = jnp.asarray(np.repeat(np.asarray(self.readout, bool), self.widths))
            v = jnp.where(trained, v, jax.lax.stop_gradient(v))
        coef = jnp.sqrt(self.scale / np.repeat(np.asarray(self.widths, float), self.widths)).astype(v.dtype)
        terms = coef * v * self._features(params, x, False)  # (n, U)
        sums = jax.ops.segment_sum(terms.T, jnp.asarray(self.owner()), num_segments=len(self.widths),
                                   indices_are_sorted=True)
        return sums.T

    def ntk(self, params: dict, x: jax.Array, x2: jax.Array | None = None, *,
            unit_mask: jax.Array | None = None) -> jax.Array:
        """Tangent kernels of all networks with respect to their trained parameters,
        Theta_r(x_i, x2_j) for x (n1, 1) and x2 (n2, 1) (default x): shape (R, n1, n2),

            Theta_r(x, x') = (scale / m_r) sum_{u in r} mask_u [rho_r phi(p_u) phi(p_u')
                             + v_u^2 phi'(p_u) phi'(p_u') (x x' + 1)],   p_u = w_u x + b_u,

        with rho_r = 1 if network r trains its readout, else 0, and mask_u = ``unit_mask``
        (default 1): a 0/1 mask gives the part of the kernel carried by a subset of units.
        Computed in closed form, one contraction for all the networks of each width.
        """
        x2 = x if x2 is None else x2
        mask = jnp.ones_like(params["v"]) if unit_mask is None else unit_mask.astype(params["v"].dtype)
        phi1, phi2 = self._features(params, x, False), self._features(params, x2, False)
        dphi1 = self._features(params, x, True) * params["v"]
        dphi2 = dphi1 if x2 is x else self._features(params, x2, True) * params["v"]
        inner = x[:, :1] @ x2[:, :1].T + 1.0
        readout = np.asarray(self.readout, float)
        widths = np.asarray(self.widths)
        starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
        order, out = [], []
        for width in np.unique(widths):  # all networks of one width: gather, one contraction
            nets_w = np.flatnonzero(widths == width)
            cols = (starts[nets_w][:, None] + np.arange(width)[None, :]).ravel()
            group = lambda a: a[:, cols].reshape(a.shape[0], len(nets_w), width)  # noqa: E731
            read = jnp.einsum("icm,jcm->cij", group(phi1 * mask), group(phi2))
            hidden = jnp.einsum("icm,jcm->cij", group(dphi1 * mask), group(dphi2)) * inner
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

    ``activation`` and ``readout`` are one value for all networks or one per network.
    """
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__"):
        raise TypeError(f"widths must be a non-empty sequence of positive integers, got {widths!r}")
    if len(widths) == 0:
        raise ValueError("widths must be a non-empty sequence of positive integers, got an empty one")
    widths = tuple(check_positive_int(w, name=f"widths[{i}]") for i, w in enumerate(widths))
    count = len(widths)
    if not isinstance(activation, str):
        _check_sequence(activation, name="activation", what="an activation name or a sequence of them")
    names = (activation,) * count if isinstance(activation, str) else tuple(activation)
    if len(names) != count:
        raise ValueError(f"activation must be one name or one per network ({count}), got {len(names)}")
    for name in dict.fromkeys(names):
        _activations.get(name)
    if not isinstance(readout, (bool, np.bool_)):
        _check_sequence(readout, name="readout", what="True/False or a sequence of them")
    flags = (readout,) * count if isinstance(readout, (bool, np.bool_)) else tuple(readout)
    if len(flags) != count:
        raise ValueError(f"readout must be True/False or one per network ({count}), got {readout!r}")
    scale = check_real(scale, name="scale", positive=True)
    return Shallow(widths, names, tuple(bool(f) for f in flags), scale)


class KernelChange(NamedTuple):
    """What :func:`shallow_kernel_change` measures, one entry per network.

    ``delta_k``: ||Theta_T - Theta_0||_F / ||Theta_0||_F (R,); ``delta_k_flipped``: the same
    for the part of the kernel carried by the units whose pre-activation changed sign on
    at least one training input (R,); ``flipped``: the fraction of such units (R,);
    ``losses``: the summed loss before every step (steps,); ``final``: the trained parameters.
    """

    delta_k: jax.Array
    delta_k_flipped: jax.Array
    flipped: jax.Array
    losses: jax.Array
    final: Any


def shallow_kernel_change(sh: Shallow, params: dict, x: ArrayLike, y: ArrayLike, lr: float, steps: int) -> KernelChange:
    """Train the networks of ``sh`` by gradient descent and measure how far their kernels move.

    Every network r is trained on its own loss (1/2n) sum_i (f_r(x_i) - y_i)^2 (``y`` (n,),
    the same labels for all) with step ``lr`` for ``steps`` steps, from ``params`` (the
    dtype of ``params`` is the working precision). Tangent kernels are those of
    :meth:`Shallow.ntk` on the training inputs, at the start and at the end.
    """
    if not isinstance(sh, Shallow):
        raise TypeError(f"sh must be a Shallow description (training.shallow), got {type(sh).__name__}")
    for name in ("w", "b", "v"):
        if not isinstance(params, dict) or name not in params or np.shape(params[name]) != (sh.units,):
            raise ValueError(f"params must be a dict of w, b, v of shape ({sh.units},), e.g. sh.init(key)")
    check_params_pytree(params)
    dtype = params["v"].dtype
    x = as_float_array(x, name="x", ndim=2).astype(dtype)
    if x.shape[1] != 1:
        raise ValueError(f"x must have shape (n, 1) (a scalar input), got {tuple(x.shape)}")
    y = as_float_array(y, name="y", ndim=1).astype(dtype)
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"y must have {x.shape[0]} entries (one per row of x), got {y.shape[0]}")
    lr = check_real(lr, name="lr", positive=True)
    steps = check_positive_int(steps, name="steps")
    return _shallow_kernel_change(sh, params, x, y, lr, steps)


@partial(jax.jit, static_argnums=(0, 5))
def _shallow_kernel_change(sh, params, x, y, lr, steps):
    targets = jnp.broadcast_to(y[:, None], (x.shape[0], len(sh.widths)))
    final, losses = descend(mse_loss(sh.apply, x, targets), params, lr, steps)
    signs = lambda p: x[:, :1] * p["w"] + p["b"] > 0  # noqa: E731
    flipped = jnp.any(signs(params) != signs(final), axis=0)
    # kernels of (start, end) x (all units, flipped units), one traced contraction
    pair = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), params, final)
    masks = jnp.stack([jnp.ones_like(flipped), flipped])
    k = jax.vmap(lambda p: jax.vmap(lambda mk: sh.ntk(p, x, unit_mask=mk))(masks))(pair)
    norm0 = jnp.linalg.norm(k[0, 0], axis=(1, 2))
    change = lambda a, b: jnp.linalg.norm(a - b, axis=(1, 2)) / norm0  # noqa: E731
    owner = jnp.asarray(sh.owner())
    fraction = jax.ops.segment_sum(flipped.astype(x.dtype), owner, len(sh.widths)) / jnp.asarray(sh.widths, x.dtype)
    return KernelChange(change(k[1, 0], k[0, 0]), change(k[1, 1], k[0, 1]), fraction, losses, final)
