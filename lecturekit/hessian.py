"""Hessians of scalar functions of pytrees: products, Lanczos, extreme eigenvalues.

Convention: ``f(params)`` is a scalar function of a pytree of floating arrays (for a
network at one input, ``f = lambda p: net.apply(p, x[None])[0]``). Its Hessian H is the
P x P matrix of second derivatives with respect to every entry of every leaf, in the
order of ``jax.flatten_util.ravel_pytree(params)``.

* :func:`hvp` computes H v by forward-over-reverse differentiation,
  H v = d/dt grad f(params + t v) at t = 0, at the cost of a few gradient evaluations.
* The Lanczos iteration on those products (H is never formed) exists twice, for two
  uses:

  - :func:`lanczos` runs on the host with a stopping rule (below), full
    reorthogonalization while the Krylov basis fits in memory, and returns Ritz values,
    error bounds and optionally the basis; :func:`spectral_norm`,
    :func:`spectral_and_gradient_norm` and :func:`top_eigenpairs` use it;
  - :func:`lanczos_tridiagonal` runs a fixed number of steps and is traceable (use it
    inside ``jit``, ``vmap``, ``lax.scan``); it returns the tridiagonal matrix, whose
    Gauss quadrature :func:`lanczos_quadrature` gives the Ritz values and their weights;
    :func:`top_eigenvalue` (the sharpness along a training run) and
    :func:`spectral_density` (stochastic Lanczos quadrature: these rules averaged over
    random start vectors) use it.
* :func:`trace_estimate` is Hutchinson's estimate of tr H from Gaussian probes.
* :func:`dense_hessian` forms H with ``jax.hessian`` for tiny models (tests, figures).
* Losses of model outputs, L(theta) = (1/n) sum_i l(f_i(theta), y_i)
  (:func:`output_loss`, outputs read as (n, k) by :func:`output_shape`):
  :func:`gauss_newton_split` forms nabla^2 L and its
  Gauss-Newton and residual parts G + R for tiny models;
  :func:`gauss_newton_vector_product` and :func:`residual_vector_product` give G v and
  R v matrix-free; :func:`output_jacobian` the Jacobian of a map of the outputs (the
  scores of a Fisher information). :mod:`lecturekit.loss_hessian` names the losses.
* :func:`flatten` (with its hashable inverse :class:`Unravel`) and
  :func:`check_dense_size` are the one pytree flattening and dense-size guard of these
  engines.

Three-term recurrence (both versions): q_1 = v0/||v0||,
beta_j q_{j+1} = H q_j - alpha_j q_j - beta_{j-1} q_{j-1}, alpha_j = q_j . H q_j; after
k steps T_k = tridiag(beta, alpha, beta) is the matrix of H in the basis q_1..q_k.

Stopping rule of :func:`lanczos`. After k steps T_k has Ritz pairs (theta_j, s_j); the
Ritz vector's residual is r_j = ``|beta_k s_j[k-1]|``, and some eigenvalue of H lies
within min(r_j, r_j^2 / gap_j) of theta_j (gap_j: distance from theta_j to the other
Ritz values; Kahan-Parlett-Jiang). The iteration stops when both extreme Ritz values
(the largest and the smallest) satisfy this bound at the relative level ``tol`` of the
current norm estimate, never on "the estimate stopped changing", which stops far too
early when the extreme eigenvalues of a wide network are clustered.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
from jax.flatten_util import ravel_pytree
from jax.typing import ArrayLike

from . import sampling as _sampling
from ._validation import (
    as_float_array,
    as_host_float_array,
    check_callable,
    check_key,
    check_params_pytree,
    check_positive_int,
    check_real,
    check_same_structure,
    concrete,
    host_ravel,
    is_traced,
    warn_if_below_precision,
    warn_numerical,
)

__all__ = [
    "hvp",
    "lanczos",
    "LanczosResult",
    "lanczos_tridiagonal",
    "Tridiagonal",
    "lanczos_quadrature",
    "Quadrature",
    "spectral_norm",
    "spectral_and_gradient_norm",
    "SpectralAndGradientNorm",
    "top_eigenvalue",
    "top_eigenpairs",
    "Eigenpairs",
    "trace_estimate",
    "spectral_density",
    "SpectralDensity",
    "smoothed_density",
    "spectral_cdf",
    "dense_hessian",
    "flatten",
    "Unravel",
    "check_dense_size",
    "output_shape",
    "output_loss",
    "gauss_newton_split",
    "GaussNewtonSplit",
    "gauss_newton_vector_product",
    "residual_vector_product",
    "output_jacobian",
]

ScalarFn = Callable[[Any], jax.Array]

#: Largest Krylov basis (in bytes) kept for full reorthogonalization by :func:`lanczos`;
#: beyond it the iteration continues with the three-term recurrence alone (extreme Ritz
#: values stay correct in the exact-arithmetic theory of Paige; lost orthogonality only
#: duplicates them).
REORTH_BYTES = 1 << 29


class LanczosResult(NamedTuple):
    """Output of :func:`lanczos` (NumPy arrays on the host).

    Attributes:
        alpha: the diagonal of the tridiagonal Lanczos matrix T_k, shape (k,).
        beta: its off-diagonal, shape (k - 1,).
        ritz_values: eigenvalues of T_k in increasing order, shape (k,).
        ritz_vectors_t: eigenvectors of T_k as columns, shape (k, k).
        errors: the bound min(r, r^2/gap) on the distance from each Ritz value to an
            eigenvalue of the operator, shape (k,).
        basis: the (k, P) Lanczos vectors if they were kept, else None.
        converged: whether the stopping rule was met (or the Krylov space became
            invariant) before ``max_iter``.
        iterations: k, the number of Lanczos steps taken.

    Example:
        >>> import numpy as np
        >>> from lecturekit import hessian
        >>> res = hessian.lanczos(lambda v: np.array([1.0, 3.0]) * v, np.ones(2),
        ...                       tol=1e-10)
        >>> (res.iterations, res.alpha.shape, res.beta.shape,
        ...  [round(float(x), 4) for x in res.ritz_values])
        (2, (2,), (1,), [1.0, 3.0])
    """

    alpha: np.ndarray
    beta: np.ndarray
    ritz_values: np.ndarray
    ritz_vectors_t: np.ndarray
    errors: np.ndarray
    basis: np.ndarray | None
    converged: bool
    iterations: int


class Tridiagonal(NamedTuple):
    """The Lanczos matrix T = tridiag(beta, alpha, beta) of :func:`lanczos_tridiagonal`.

    Attributes:
        alpha: diagonal, shape (steps,) (a leading batch axis under ``vmap``).
        beta: off-diagonal, shape (steps - 1,).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> tri = hessian.lanczos_tridiagonal(lambda v: jnp.array([1.0, 3.0]) * v,
        ...                                   jnp.ones(2), 2)
        >>> ([round(float(a), 4) for a in tri.alpha],
        ...  [round(float(b), 4) for b in tri.beta])
        ([2.0, 2.0], [1.0])
    """

    alpha: jax.Array
    beta: jax.Array


class Quadrature(NamedTuple):
    """Gauss quadrature of a spectral measure, from :func:`lanczos_quadrature`.

    Attributes:
        nodes: eigenvalues of T (the Ritz values), increasing, shape (steps,).
        weights: squared first components of T's unit eigenvectors, shape (steps,);
            they sum to 1.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> tri = hessian.Tridiagonal(jnp.array([2.0, 2.0]), jnp.array([1.0]))
        >>> rule = hessian.lanczos_quadrature(tri)
        >>> ([round(float(x), 4) for x in rule.nodes],
        ...  [round(float(w), 4) for w in rule.weights])
        ([1.0, 3.0], [0.5, 0.5])
    """

    nodes: jax.Array
    weights: jax.Array


class SpectralAndGradientNorm(NamedTuple):
    """Output of :func:`spectral_and_gradient_norm`.

    Attributes:
        spectral_norm: max ``|eigenvalue|`` of the Hessian (Python float).
        gradient_norm: Euclidean norm of the gradient over all leaves (Python float).

    Example:
        >>> from lecturekit import hessian
        >>> norms = hessian.SpectralAndGradientNorm(spectral_norm=2.0,
        ...                                         gradient_norm=0.5)
        >>> h, g = norms                                   # unpacks like a pair
        >>> h, norms.gradient_norm
        (2.0, 0.5)
    """

    spectral_norm: float
    gradient_norm: float


class SpectralDensity(NamedTuple):
    """Output of :func:`spectral_density`: one Gauss quadrature rule per probe.

    The density estimate is the mean over probes i of
    sum_j weights[i, j] delta(lambda - nodes[i, j]) (smooth it, e.g. with a narrow
    Gaussian, to plot it).

    Attributes:
        nodes: Ritz values, shape (num_probes, num_steps), increasing along each row.
        weights: their weights, shape (num_probes, num_steps); each row sums to 1.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> f = lambda t: 0.5 * jnp.sum(jnp.array([1.0, 2.0, 3.0]) * t**2)
        >>> dens = hessian.spectral_density(f, jnp.ones(3), key=jax.random.key(1),
        ...                                 num_probes=2, num_steps=3)
        >>> dens.nodes.shape, dens.weights.shape
        ((2, 3), (2, 3))
    """

    nodes: jax.Array
    weights: jax.Array


class Eigenpairs(NamedTuple):
    """Output of :func:`top_eigenpairs`.

    Attributes:
        values: eigenvalues, largest ``|value|`` first, shape (k,).
        vectors: the k unit eigenvectors, each a pytree shaped like params.
        errors: the error bound min(r, r^2/gap) of each value, shape (k,).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> pairs = hessian.top_eigenpairs(
        ...     lambda t: 0.5 * jnp.sum(jnp.array([1.0, -2.0]) * t**2), jnp.ones(2))
        >>> [round(float(v), 4) for v in pairs.values], pairs.vectors[0].shape
        ([-2.0], (2,))
    """

    values: np.ndarray
    vectors: list[Any]
    errors: np.ndarray


# --------------------------------------------------------------------------- helpers
class Unravel(NamedTuple):
    """The inverse of :func:`flatten`: a flat vector (ravel_pytree order) back to the
    pytree. Hashable and compared by value (the tree structure and the leaf shapes), so
    it can be a static argument of ``jax.jit``: one compiled program per parameter
    layout. Traceable.

    Attributes:
        treedef: the tree structure of the parameters.
        shapes: the shape of every leaf, in ``jax.tree_util.tree_leaves`` order.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> params = {"a": jnp.ones(2), "b": jnp.zeros((1, 1))}
        >>> flat, unravel = hessian.flatten(params)
        >>> tree = unravel(jnp.arange(3.0))
        >>> tree["a"].tolist(), tree["b"].tolist(), unravel.size
        ([0.0, 1.0], [[2.0]], 3)
    """

    treedef: Any
    shapes: tuple[tuple[int, ...], ...]

    @property
    def size(self) -> int:
        """P, the number of parameters."""
        return sum(int(np.prod(s)) for s in self.shapes)

    def __call__(self, theta: jax.Array) -> Any:
        offsets = np.cumsum([0] + [int(np.prod(s)) for s in self.shapes])
        parts = [
            theta[offsets[i] : offsets[i + 1]].reshape(shape)
            for i, shape in enumerate(self.shapes)
        ]
        return jax.tree_util.tree_unflatten(self.treedef, parts)


def flatten(params: Any) -> tuple[Any, Unravel]:
    """Params as one vector in ``ravel_pytree`` order, and its inverse :class:`Unravel`.

    The one pytree flattening of lecturekit's Hessian engines. Concrete params are
    flattened on the host (a NumPy vector of the leaves' dtype: eager JAX ops would
    compile a program for every new shape); traced params (inside ``jit``, ``vmap``,
    ``grad``) with ``jnp.concatenate``.

    Args:
        params: a pytree of floating arrays with at least one leaf.

    Returns:
        (flat, unravel): the vector of the P parameters and the :class:`Unravel` that
        maps such a vector back to a pytree shaped like params.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> flat, unravel = hessian.flatten([jnp.ones((2, 2)), jnp.zeros(1)])
        >>> flat.tolist(), [leaf.shape for leaf in unravel(flat)]
        ([1.0, 1.0, 1.0, 1.0, 0.0], [(2, 2), (1,)])
    """
    check_params_pytree(params)
    leaves, treedef = jax.tree_util.tree_flatten(params)
    unravel = Unravel(treedef, tuple(tuple(np.shape(leaf)) for leaf in leaves))
    if any(is_traced(leaf) for leaf in leaves):
        return jnp.concatenate([jnp.ravel(leaf) for leaf in leaves]), unravel
    return host_ravel(leaves), unravel


def check_dense_size(params: Any, max_params: int) -> int:
    """P, the number of parameters; ValueError if a dense P x P matrix would exceed
    ``max_params`` (memory grows like P^2).

    The one size guard of the dense matrices of lecturekit (:func:`dense_hessian`,
    :func:`gauss_newton_split`, :func:`output_jacobian`, the Fisher and class
    decompositions of :mod:`lecturekit.loss_hessian`). Only the shapes are read, so
    traced params are fine.

    Args:
        params: a pytree of arrays.
        max_params: the largest P allowed (int >= 1).

    Returns:
        P, a Python int.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> hessian.check_dense_size({"w": jnp.ones((3, 2))}, max_params=10)
        6
    """
    check_params_pytree(params)
    max_params = check_positive_int(max_params, name="max_params")
    size = sum(int(np.size(leaf)) for leaf in jax.tree_util.tree_leaves(params))
    if size > max_params:
        raise ValueError(
            f"a dense P x P matrix with P = {size} exceeds max_params = {max_params}; "
            "use the matrix-free products (hessian.hvp, hessian.spectral_norm, "
            "hessian.gauss_newton_vector_product) for large models"
        )
    return size


def _check_fn_and_params(f: Any, params: Any) -> tuple[jax.Array, Callable]:
    if not callable(f):
        raise TypeError(
            f"f must be a scalar function f(params), got {type(f).__name__}"
        )
    leaves = jax.tree_util.tree_leaves(params)
    if not leaves:
        raise ValueError("params must contain at least one array")
    for leaf in leaves:
        dtype = np.asarray(leaf).dtype
        if not np.issubdtype(dtype, np.floating):
            raise TypeError(
                f"every leaf of params must be a floating array, got dtype {dtype}"
            )
    flat, unravel = flatten(params)
    if not np.all(np.isfinite(flat)):
        raise ValueError("params must be finite, but they contain NaN or infinity")
    try:
        out = jax.eval_shape(f, params)
    except Exception as err:  # wrong structure and the like: say so at the boundary
        raise ValueError(f"f(params) could not be evaluated: {err}") from None
    if getattr(out, "shape", None) != ():
        raise ValueError(
            "f(params) must return a scalar, got shape "
            f"{getattr(out, 'shape', type(out).__name__)}; "
            "for a network at one input use e.g. lambda p: net.apply(p, x[None])[0]"
        )
    return jax.device_put(flat), unravel


def hvp(f: ScalarFn, params: Any, v: Any) -> Any:
    """Hessian-vector product H(params) v of a scalar function, without forming H.

    Computed as the directional derivative of the gradient, ``jax.jvp(grad f, params,
    v)``.

    Args:
        f: scalar function of a pytree, ``f(params) -> ()``.
        params: the point, a pytree of floating arrays.
        v: the direction, a pytree with the structure and shapes of ``params``.

    Returns:
        H v as a pytree shaped like ``params``.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> f = lambda p: jnp.sum(p["a"] ** 3) / 6          # H = diag(a)
        >>> hv = hessian.hvp(f, {"a": jnp.array([1.0, 2.0])},
        ...                  {"a": jnp.array([1.0, 1.0])})
        >>> [round(float(t), 6) for t in hv["a"]]
        [1.0, 2.0]
    """
    flat, _ = _check_fn_and_params(f, params)
    check_params_pytree(v, name="v")
    check_same_structure(v, params, name="v", reference_name="params")
    v_flat, _ = flatten(v)
    if v_flat.shape != flat.shape:
        raise ValueError(
            f"v must have the structure and sizes of params ({flat.size} numbers), got "
            f"{v_flat.size}"
        )
    return _hvp(f, params, v)


@functools.partial(jax.jit, static_argnames="f")
def _hvp(f, params, v):
    theta, unravel = ravel_pytree(params)
    v_flat = ravel_pytree(v)[0].astype(theta.dtype)
    return unravel(_HessianProduct(f)(v_flat, params))


@dataclasses.dataclass(frozen=True)
class _HessianProduct:
    """(v, params) -> H(params) v on flat vectors (forward-over-reverse), with the
    gradient's norm if ``grad_norm`` (the primal output of the jvp: free). Hashable by
    f, so that a compiled Lanczos step taking it as a static matvec compiles once per f.
    """

    f: ScalarFn
    grad_norm: bool = False

    def __call__(self, v, params):
        theta, unravel = ravel_pytree(params)
        grad = jax.grad(lambda t: self.f(unravel(t)))
        g, hv = jax.jvp(grad, (theta,), (v,))
        return (hv, jnp.linalg.norm(g)) if self.grad_norm else hv


def _three_term(matvec, q, q_prev, beta_prev, args=()):
    """One step of the recurrence: (alpha_j, w) with w = A q_j - alpha_j q_j -
    beta_{j-1} q_{j-1}, plus the aux output of ``matvec`` when it returns a pair (else
    None)."""
    out = matvec(q, *args)
    v, aux = out if isinstance(out, tuple) else (out, None)
    alpha = jnp.vdot(q, v)
    return alpha, v - alpha * q - beta_prev * q_prev, aux


def _ritz(
    alpha: np.ndarray, beta: np.ndarray, beta_next: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ritz values, T_k eigenvectors and the min(r, r^2/gap) error bounds."""
    k = alpha.size
    if k == 1:
        vals, vecs = alpha.copy(), np.ones((1, 1))
    else:
        vals, vecs = scipy.linalg.eigh_tridiagonal(alpha, beta)
    resid = np.abs(beta_next * vecs[-1, :])
    if k == 1:
        gap = np.full(1, np.inf)
    else:
        diffs = np.diff(vals)
        gap = np.minimum(np.r_[np.inf, diffs], np.r_[diffs, np.inf])
    with np.errstate(divide="ignore", invalid="ignore"):
        errors = np.minimum(resid, np.where(gap > 0, resid**2 / gap, np.inf))
    return vals, vecs, errors


# ------------------------------------------------------------------------ Lanczos, host
def lanczos(
    matvec: Callable[[jax.Array], jax.Array],
    v0: ArrayLike,
    *,
    tol: float = 1e-6,
    max_iter: int = 300,
    keep_basis: bool = False,
    min_iter: int = 8,
    check_every: int = 4,
    args: tuple = (),
) -> LanczosResult:
    """Lanczos iteration with a stopping rule, for a symmetric linear map on vectors of
    size P.

    Builds the orthonormal Krylov basis by the three-term recurrence (module docstring),
    with full reorthogonalization (classical Gram-Schmidt, repeated when it cancels
    much: DGKS) while the basis fits in ``REORTH_BYTES``. Stops when both extreme Ritz
    values are within ``tol`` (relative to the largest ``|Ritz value|``) of an
    eigenvalue by the residual bound min(r, r^2/gap), when the Krylov space becomes
    invariant, or after ``max_iter`` steps. Runs on the host: one compiled step, a
    Python loop (for a fixed number of steps inside ``jit``/``vmap``
    use :func:`lanczos_tridiagonal`).

    Args:
        matvec: ``matvec(v, *args) -> A v`` for a symmetric A; traceable (it is compiled
            into the step; pass large operands through ``args`` rather than closing over
            them, so that one compilation serves many operators).
        v0: non-zero start vector, shape (P,).
        tol: relative accuracy of the extreme Ritz values at which to stop.
        max_iter: most Lanczos steps.
        keep_basis: keep the (k, P) basis (for Ritz vectors).
        min_iter: least number of steps before the rule is checked.
        check_every: check the rule every this many steps.
        args: extra operands of ``matvec`` (a tuple).

    Returns:
        :class:`LanczosResult`.

    Example:
        >>> import numpy as np
        >>> from lecturekit import hessian
        >>> d = np.arange(1.0, 11.0)                          # A = diag(1, ..., 10)
        >>> res = hessian.lanczos(lambda v, d: d * v, np.ones(10), tol=1e-10,
        ...                       args=(d,))
        >>> (res.converged, round(float(res.ritz_values[-1]), 4),
        ...  round(float(res.ritz_values[0]), 4))
        (True, 10.0, 1.0)
    """
    check_callable(matvec, name="matvec", what="a function v -> A v")
    v0 = as_float_array(v0, name="v0", ndim=1, nonempty=True)
    if not np.any(np.asarray(v0)):
        raise ValueError("v0 must be a non-zero start vector")
    tol, max_iter = _check_options(tol, max_iter)
    min_iter = check_positive_int(min_iter, name="min_iter")
    check_every = check_positive_int(check_every, name="check_every")
    if not isinstance(args, tuple):
        raise TypeError(
            "args must be a tuple of extra operands of matvec, got "
            f"{type(args).__name__}"
        )
    return _lanczos(
        matvec,
        v0,
        tol=tol,
        max_iter=max_iter,
        keep_basis=keep_basis,
        min_iter=min_iter,
        check_every=check_every,
        args=args,
    )[0]


def _lanczos(matvec, v0, *, tol, max_iter, keep_basis, min_iter, check_every, args):
    """:func:`lanczos`; a ``matvec`` that returns a pair (A v, aux) also gets the aux of
    the first product returned: (LanczosResult, aux or None).

    The reorthogonalization runs in NumPy on the host (the device is the CPU here): its
    products cost milliseconds, while compiled kernels for it would be compiled anew for
    every problem size.
    """
    w = jnp.asarray(v0)
    size = w.size
    reorth = keep_basis or (max_iter + 1) * size * w.dtype.itemsize <= REORTH_BYTES
    basis = np.zeros((0, size), dtype=w.dtype)
    alphas: list[float] = []
    betas: list[float] = []
    q_prev, beta, beta_prev = w, 0.0, 0.0
    converged = False
    scale = 0.0
    vals = vecs = errors = None
    first_aux = None
    for it in range(1, max_iter + 1):
        q, alpha, w, norm_w, aux = _lanczos_step(
            matvec, w, beta, q_prev, beta_prev, args
        )
        if it == 1:
            first_aux = aux
        if reorth:
            if it > basis.shape[0]:  # grow the host basis geometrically
                grown = np.zeros(
                    (min(max(2 * basis.shape[0], 32), max_iter), size),
                    dtype=basis.dtype,
                )
                grown[: basis.shape[0]] = basis
                basis = grown
            basis[it - 1] = np.asarray(q)
            used = basis[:it]
            w_np = np.array(w)
            before = float(norm_w)
            w_np -= (used @ w_np) @ used
            norm_np = float(np.linalg.norm(w_np))
            if norm_np < 0.7 * before:  # much cancelled: orthogonalize once more
                w_np -= (used @ w_np) @ used
                norm_np = float(np.linalg.norm(w_np))
            w, norm_w = jax.device_put(w_np), norm_np
        alpha, beta = float(alpha), float(norm_w)
        alphas.append(alpha)
        scale = max(scale, abs(alpha), beta)
        invariant = beta <= 1e-12 * max(scale, 1e-300) or it == size
        if invariant or it >= min_iter and (it % check_every == 0 or it == max_iter):
            vals, vecs, errors = _ritz(
                np.array(alphas), np.array(betas), 0.0 if invariant else beta
            )
            norm = max(abs(vals[0]), abs(vals[-1]))
            if invariant or max(errors[0], errors[-1]) <= tol * norm:
                converged = True
                break
        if it == max_iter:
            break
        betas.append(beta)
        q_prev, beta_prev = q, beta
    if vals is None or len(vals) != len(alphas):
        vals, vecs, errors = _ritz(
            np.array(alphas), np.array(betas[: len(alphas) - 1]), beta
        )
    kept = basis[: len(alphas)].copy() if keep_basis else None
    result = LanczosResult(
        alpha=np.array(alphas),
        beta=np.array(betas[: len(alphas) - 1]),
        ritz_values=vals,
        ritz_vectors_t=vecs,
        errors=errors,
        basis=kept,
        converged=converged,
        iterations=len(alphas),
    )
    return result, first_aux


@functools.partial(jax.jit, static_argnames="matvec")
def _lanczos_step(matvec, w_raw, beta, q_prev, beta_prev, args):
    """One step of :func:`_lanczos`, compiled once per matvec (and operand shapes)."""
    q = w_raw / jnp.where(beta > 0, beta, jnp.linalg.norm(w_raw))
    alpha, w, aux = _three_term(matvec, q, q_prev, beta_prev, args)
    return q, alpha, w, jnp.linalg.norm(w), aux


# ------------------------------------------------------------------- Lanczos, traceable
def lanczos_tridiagonal(
    matvec: Callable[[jax.Array], jax.Array],
    v0: ArrayLike,
    steps: int,
    *,
    reorthogonalize: bool = True,
) -> Tridiagonal:
    """A fixed number of Lanczos steps, traceable: the tridiagonal Lanczos matrix T.

    The three-term recurrence of the module docstring for exactly ``steps`` steps, as
    one ``lax.fori_loop``: use it inside ``jit``, ``vmap`` (over start vectors, for
    stochastic Lanczos quadrature) and ``lax.scan`` (the sharpness along a training
    run). With ``reorthogonalize`` every new vector is orthogonalized twice against all
    previous ones (the basis, steps x P numbers, is kept in memory); without it only the
    recurrence runs (memory O(P); Ritz values may then appear twice, which leaves the
    quadrature of
    :func:`lanczos_quadrature` valid but not the multiplicities). If the Krylov space
    becomes invariant (beta_j = 0, at most P steps) the remaining entries of alpha and
    beta are zero: a decoupled block whose Ritz values 0 get weight 0 in the quadrature.

    Args:
        matvec: ``matvec(v) -> A v`` for a symmetric A, traceable.
        v0: start vector, shape (P,), non-zero (not checked when traced).
        steps: number of Lanczos steps, a Python int with 1 <= steps <= P.
        reorthogonalize: full reorthogonalization (default) or the plain recurrence.

    Returns:
        :class:`Tridiagonal` with ``alpha`` of shape (steps,) and ``beta`` of shape
        (steps - 1,).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> d = jnp.arange(1.0, 7.0)                         # A = diag(1, ..., 6)
        >>> lanczos = jax.jit(
        ...     lambda v: hessian.lanczos_tridiagonal(lambda u: d * u, v, 6))
        >>> tri = lanczos(jnp.ones(6))
        >>> tri.alpha.shape, tri.beta.shape
        ((6,), (5,))
        >>> [round(float(x), 4) for x in hessian.lanczos_quadrature(tri).nodes]
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    """
    check_callable(matvec, name="matvec", what="a function v -> A v")
    v0 = as_float_array(v0, name="v0", ndim=1, nonempty=True)
    steps = check_positive_int(steps, name="steps")
    if steps > v0.shape[0]:
        raise ValueError(
            f"steps must be at most the dimension of v0 ({v0.shape[0]}), got {steps}"
        )
    host = concrete(v0)
    if host is not None and not np.any(host):
        raise ValueError("v0 must be a non-zero start vector")
    return _tridiagonal(matvec, v0, steps, bool(reorthogonalize))


@functools.partial(jax.jit, static_argnames=("matvec", "steps", "reorthogonalize"))
def _tridiagonal(matvec, v0, steps, reorthogonalize, args=()):
    """:func:`lanczos_tridiagonal` with ``matvec(v, *args)``; compiled once per
    matvec, steps and operand shapes (pass large operands through ``args``)."""
    size, dtype = v0.shape[0], v0.dtype
    tiny = 1e-12

    def body(j, carry):
        q, q_prev, beta_prev, scale, basis, alphas, betas = carry
        alpha, w, _ = _three_term(matvec, q, q_prev, beta_prev, args)
        if reorthogonalize:
            basis = basis.at[j].set(q)  # rows > j are still zero
            w = w - basis.T @ (basis @ w)
            w = w - basis.T @ (basis @ w)
        beta = jnp.linalg.norm(w)
        scale = jnp.maximum(scale, jnp.maximum(jnp.abs(alpha), beta))
        invariant = beta <= tiny * scale
        beta = jnp.where(invariant, 0.0, beta)
        q_next = jnp.where(invariant, 0.0, w / jnp.where(invariant, 1.0, beta))
        return (
            q_next,
            q,
            beta,
            scale,
            basis,
            alphas.at[j].set(alpha),
            betas.at[j].set(beta),
        )

    q0 = v0 / jnp.linalg.norm(v0)
    basis = jnp.zeros((steps if reorthogonalize else 1, size), dtype)
    zeros = jnp.zeros(steps, dtype)
    init = (
        q0,
        jnp.zeros_like(q0),
        jnp.zeros((), dtype),
        jnp.zeros((), dtype),
        basis,
        zeros,
        zeros,
    )
    *_, alphas, betas = jax.lax.fori_loop(0, steps, body, init)
    return Tridiagonal(alphas, betas[:-1])


def lanczos_quadrature(tri: Tridiagonal) -> Quadrature:
    """Gauss quadrature of the spectral measure seen from the start vector, from T.

    If A = sum_i lambda_i u_i u_i^T and q_1 = v0/||v0||, the measure
    mu = sum_i (u_i . q_1)^2 delta(lambda - lambda_i) has the k-point Gauss rule with
    nodes theta_j = eigenvalues of T_k and weights tau_j^2 = (first component of T_k's
    j-th unit eigenvector)^2: sum_j tau_j^2 g(theta_j) = q_1^T g(A) q_1 exactly for
    polynomials g of degree < 2k. The largest node is the top Ritz value (a lower bound
    on lambda_max that converges fast); averaged over random start vectors the weights
    estimate the spectral density (stochastic Lanczos quadrature). Traceable; dense
    ``eigh`` of the (k, k) matrix.

    Args:
        tri: a :class:`Tridiagonal` with alpha (k,) and beta (k - 1,).

    Returns:
        :class:`Quadrature` with ``nodes`` (k,) in increasing order and ``weights``
        (k,).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> tri = hessian.Tridiagonal(jnp.array([0.0, 0.0]), jnp.array([1.0]))
        >>> rule = hessian.lanczos_quadrature(tri)
        >>> ([round(float(x), 4) for x in rule.nodes],
        ...  [round(float(w), 4) for w in rule.weights])
        ([-1.0, 1.0], [0.5, 0.5])
    """
    if not isinstance(tri, Tridiagonal):
        raise TypeError(
            "tri must be a hessian.Tridiagonal (from lanczos_tridiagonal), got "
            f"{type(tri).__name__}"
        )
    alpha = as_float_array(tri.alpha, name="tri.alpha", ndim=1, nonempty=True)
    beta = as_float_array(tri.beta, name="tri.beta", ndim=1)
    if beta.shape[0] != alpha.shape[0] - 1:
        raise ValueError(
            f"tri.beta must have {alpha.shape[0] - 1} entries for {alpha.shape[0]} "
            f"alphas, got {beta.shape[0]}"
        )
    matrix = jnp.diag(alpha) + jnp.diag(beta, 1) + jnp.diag(beta, -1)
    nodes, vectors = jnp.linalg.eigh(matrix)
    return Quadrature(nodes, vectors[0] ** 2)


# --------------------------------------------------------------- start vectors, options
def _start_vector(key: jax.Array | None, flat: jax.Array) -> jax.Array:
    """Gaussian start vector of the host Lanczos (the numbers of
    sampling.standard_normal).
    """
    key = jax.random.key(0) if key is None else check_key(key)
    return _sampling.standard_normal(key, (flat.size,), flat.dtype)


def _check_options(tol: Any, max_iter: Any) -> tuple[float, int]:
    tol = check_real(tol, name="tol", positive=True)
    max_iter = check_positive_int(max_iter, name="max_iter")
    return tol, max_iter


def _warn_unconverged(res: LanczosResult, what: str, tol: float) -> None:
    if not res.converged:
        norm = max(abs(res.ritz_values[0]), abs(res.ritz_values[-1]))
        bound = max(res.errors[0], res.errors[-1]) / norm if norm > 0 else float("inf")
        warn_numerical(
            f"{what}: Lanczos reached max_iter = {res.iterations} before meeting tol = "
            f"{tol:g}; the returned "
            f"estimate is only known to a relative error {bound:.2g} (raise max_iter "
            "or tol)",
            stacklevel=4,
        )


# ----------------------------------------------------------------------- spectral norms
def _norms(f, params, key, tol, max_iter, what):
    tol, max_iter = _check_options(tol, max_iter)
    flat, _ = _check_fn_and_params(f, params)
    warn_if_below_precision(tol, flat.dtype)
    res, grad_norm = _lanczos(
        _HessianProduct(f, grad_norm=True),
        _start_vector(key, flat),
        tol=tol,
        max_iter=max_iter,
        keep_basis=False,
        min_iter=8,
        check_every=4,
        args=(jax.device_put(params),),
    )
    _warn_unconverged(res, what, tol)
    return SpectralAndGradientNorm(
        float(max(abs(res.ritz_values[0]), abs(res.ritz_values[-1]))), float(grad_norm)
    )


def spectral_norm(
    f: ScalarFn,
    params: Any,
    *,
    key: jax.Array | None = None,
    tol: float = 1e-6,
    max_iter: int = 300,
) -> float:
    """Spectral norm max ``|lambda|`` of the Hessian of the scalar f at params.

    :func:`lanczos` on Hessian-vector products (see the module docstring for the
    stopping rule), started from a Gaussian vector drawn with ``key``. At ``max_iter``
    the best estimate so far is returned (no exception) with
    a :class:`~lecturekit.NumericalWarning` giving its error bound; a ``tol`` within a
    few units of rounding of the working dtype (float32 unless float64 is enabled) also
    warns. For the gradient norm as well, at no extra cost,
    use :func:`spectral_and_gradient_norm`.

    Args:
        f: scalar function of a pytree of floating arrays.
        params: the point.
        key: PRNG key of the start vector (``jax.random.key(0)`` if None).
        tol: relative accuracy of the extreme eigenvalues.
        max_iter: most Lanczos steps.

    Returns:
        max ``|eigenvalue|`` of the Hessian, a Python float.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> d = jnp.array([3.0, -7.5, 2.0])
        >>> round(hessian.spectral_norm(lambda t: 0.5 * jnp.sum(d * t**2),
        ...                             jnp.ones(3)), 4)
        7.5
    """
    return _norms(f, params, key, tol, max_iter, "spectral_norm").spectral_norm


def spectral_and_gradient_norm(
    f: ScalarFn,
    params: Any,
    *,
    key: jax.Array | None = None,
    tol: float = 1e-6,
    max_iter: int = 300,
) -> SpectralAndGradientNorm:
    """(||H||_2, ||grad f||) at params: :func:`spectral_norm` and the gradient's norm.

    The forward-over-reverse Hessian-vector product computes the gradient anyway (the
    primal output of its jvp), so the gradient norm costs nothing extra; same arguments,
    stopping rule and warnings as :func:`spectral_norm`.

    Args:
        f: scalar function of a pytree of floating arrays.
        params: the point.
        key: PRNG key of the start vector (``jax.random.key(0)`` if None).
        tol: relative accuracy of the extreme eigenvalues.
        max_iter: most Lanczos steps.

    Returns:
        :class:`SpectralAndGradientNorm` (a named pair of Python floats).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> d = jnp.array([1.0, -4.0])  # grad = (1, -4) at t = 1
        >>> f = lambda t: 0.5 * jnp.sum(d * t**2)
        >>> out = hessian.spectral_and_gradient_norm(f, jnp.ones(2))
        >>> round(out.spectral_norm, 4), round(out.gradient_norm, 4)
        (4.0, 4.1231)
    """
    return _norms(f, params, key, tol, max_iter, "spectral_and_gradient_norm")


def top_eigenvalue(
    f: ScalarFn, params: Any, *, key: jax.Array, steps: int = 20
) -> jax.Array:
    """Largest (algebraic) Hessian eigenvalue from ``steps`` Lanczos steps; traceable.

    The top node of :func:`lanczos_quadrature` of :func:`lanczos_tridiagonal` on
    Hessian-vector products, started from a Gaussian vector drawn with ``key``; no
    stopping rule, so it runs inside ``jit``/``vmap``/``lax.scan`` (the sharpness
    lambda_max(nabla^2 L) along a training run, for a loss f = L). A Ritz value: a lower
    bound on lambda_max, exact once ``steps`` reaches the number of distinct eigenvalues
    (at most P; ``steps`` is capped at P). For a guaranteed accuracy use
    :func:`spectral_norm` or :func:`top_eigenpairs`.

    Args:
        f: scalar function of a pytree of floating arrays (traced params are fine).
        params: the point.
        key: PRNG key of the start vector.
        steps: number of Lanczos steps (Python int >= 1).

    Returns:
        the top Ritz value, a scalar JAX array.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> f = lambda t: 0.5 * jnp.sum(jnp.array([3.0, -7.5, 2.0]) * t**2)
        >>> top = hessian.top_eigenvalue(f, jnp.ones(3), key=jax.random.key(0),
        ...                              steps=3)
        >>> round(float(top), 4)
        3.0
    """
    check_callable(f, name="f", what="a scalar function f(params)")
    check_params_pytree(params)
    check_key(key)
    steps = check_positive_int(steps, name="steps")
    return _top_eigenvalue(f, params, key, steps)


@functools.partial(jax.jit, static_argnames=("f", "steps"))
def _top_eigenvalue(f, params, key, steps):
    flat = ravel_pytree(params)[0]
    v0 = _sampling.standard_normal(key, flat.shape, flat.dtype)
    tri = _tridiagonal(
        _HessianProduct(f), v0, min(steps, flat.shape[0]), True, (params,)
    )
    return lanczos_quadrature(tri).nodes[-1]


def top_eigenpairs(
    f: ScalarFn,
    params: Any,
    k: int = 1,
    *,
    key: jax.Array | None = None,
    tol: float = 1e-6,
    max_iter: int = 300,
) -> Eigenpairs:
    """The k Hessian eigenpairs of largest ``|eigenvalue|``, by :func:`lanczos` with the
    basis kept.

    Stops by the rule of :func:`spectral_norm`; the k pairs are the k Ritz pairs of
    largest ``|value|``, each with its error bound min(r, r^2/gap) (check ``errors`` for
    k > 1: interior Ritz values converge later than the extreme ones). Warns like
    :func:`spectral_norm` when max_iter is reached first or ``tol`` is below rounding.

    Args:
        f: scalar function of a pytree of floating arrays.
        params: the point.
        k: number of pairs, 1 <= k <= P.
        key: PRNG key of the start vector (``jax.random.key(0)`` if None).
        tol: relative accuracy of the extreme eigenvalues.
        max_iter: most Lanczos steps (at least k are taken).

    Returns:
        :class:`Eigenpairs`; the eigenvectors are pytrees shaped like params, of unit
        norm.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> f = lambda t: 0.5 * jnp.sum(jnp.array([3.0, -7.5, 2.0]) * t**2)
        >>> pairs = hessian.top_eigenpairs(f, jnp.ones(3), 2)
        >>> ([round(float(v), 4) for v in pairs.values],
        ...  [round(abs(float(u[1])), 4) for u in pairs.vectors])
        ([-7.5, 3.0], [1.0, 0.0])
    """
    k = check_positive_int(k, name="k")
    tol, max_iter = _check_options(tol, max_iter)
    flat, unravel = _check_fn_and_params(f, params)
    if k > flat.size:
        raise ValueError(
            f"k must be <= the number of parameters ({flat.size}), got {k}"
        )
    warn_if_below_precision(tol, flat.dtype)
    res, _ = _lanczos(
        _HessianProduct(f),
        _start_vector(key, flat),
        tol=tol,
        max_iter=max(max_iter, k),
        keep_basis=True,
        min_iter=max(8, k),
        check_every=4,
        args=(jax.device_put(params),),
    )
    _warn_unconverged(res, "top_eigenpairs", tol)
    order = np.argsort(-np.abs(res.ritz_values))[:k]
    vectors = [
        unravel(jnp.asarray(res.basis.T @ res.ritz_vectors_t[:, j])) for j in order
    ]
    return Eigenpairs(res.ritz_values[order], vectors, res.errors[order])


def _probe_key(key: jax.Array, i: jax.Array) -> jax.Array:
    return jax.random.fold_in(key, i)


def trace_estimate(
    f: ScalarFn, params: Any, *, key: jax.Array, num_probes: int = 100
) -> float:
    """Hutchinson's estimate of the trace of the Hessian, from Hessian-vector products.

    tr H = E[v^T H v] for v ~ N(0, I); the estimate is the mean of v_i^T H v_i over
    ``num_probes`` Gaussian probes, probe i drawn
    by :func:`lecturekit.sampling.standard_normal` from ``jax.random.fold_in(key, i)``
    (one probe in memory at a time). Its variance is 2 ||H||_F^2 / num_probes.

    Args:
        f: scalar function of a pytree of floating arrays.
        params: the point.
        key: PRNG key of the probes.
        num_probes: number of probes (>= 1).

    Returns:
        the estimate of tr H, a Python float.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> f = lambda t: 0.5 * jnp.sum(t**2)  # H = I, trace 400
        >>> est = hessian.trace_estimate(f, jnp.ones(400), key=jax.random.key(0),
        ...                              num_probes=50)
        >>> bool(abs(est - 400) < 4 * (2 * 400 / 50) ** 0.5)
        True
    """
    _check_fn_and_params(f, params)
    check_key(key)
    num_probes = check_positive_int(num_probes, name="num_probes")
    return float(_trace_estimate(f, params, key, num_probes))


@functools.partial(jax.jit, static_argnames=("f", "num_probes"))
def _trace_estimate(f, params, key, num_probes):
    theta = ravel_pytree(params)[0]

    def one(i):
        v = _sampling.standard_normal(_probe_key(key, i), theta.shape, theta.dtype)
        return jnp.vdot(v, _HessianProduct(f)(v, params))

    return jnp.mean(jax.lax.map(one, jnp.arange(num_probes)))


def spectral_density(
    f: ScalarFn,
    params: Any,
    *,
    key: jax.Array,
    num_probes: int = 10,
    num_steps: int = 80,
) -> SpectralDensity:
    """Spectral density of the Hessian by stochastic Lanczos quadrature.

    For each of ``num_probes`` Gaussian start vectors (probe i drawn by
    :func:`lecturekit.sampling.standard_normal` from ``jax.random.fold_in(key, i)``),
    ``num_steps`` steps of :func:`lanczos_tridiagonal` on Hessian-vector products and
    the Gauss quadrature :func:`lanczos_quadrature` of the tridiagonal matrix: nodes
    (Ritz values) and weights (squared first components). For a unit start vector q the
    rule integrates q^T g(H) q exactly for polynomials g of degree < 2 num_steps, and
    E[q^T g(H) q] = tr g(H) / P for a normalized Gaussian q, so the mean over probes of
    sum_j weights[i, j] delta(lambda - nodes[i, j]) estimates the spectral density
    (1/P) sum_k delta(lambda - lambda_k). One probe is in memory at a time (with its
    num_steps x P Lanczos basis, kept for full reorthogonalization).

    Args:
        f: scalar function of a pytree of floating arrays.
        params: the point.
        key: PRNG key of the start vectors.
        num_probes: number of start vectors (>= 1).
        num_steps: Lanczos steps per probe, 1 <= num_steps <= P.

    Returns:
        :class:`SpectralDensity` with ``nodes`` and ``weights`` of shape (num_probes,
        num_steps).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> d = jnp.array([1.0, 2.0, 3.0, 4.0])  # H = diag(1..4)
        >>> f = lambda t: 0.5 * jnp.sum(d * t**2)
        >>> dens = hessian.spectral_density(f, jnp.ones(4), key=jax.random.key(0),
        ...                                 num_probes=3, num_steps=4)
        >>> dens.nodes.shape, [round(float(x), 4) for x in dens.nodes[0]]
        ((3, 4), [1.0, 2.0, 3.0, 4.0])
        >>> [round(float(w), 4) for w in dens.weights.sum(axis=1)]
        [1.0, 1.0, 1.0]
    """
    flat, _ = _check_fn_and_params(f, params)
    check_key(key)
    num_probes = check_positive_int(num_probes, name="num_probes")
    num_steps = check_positive_int(num_steps, name="num_steps")
    if num_steps > flat.size:
        raise ValueError(
            f"num_steps must be at most the number of parameters ({flat.size}), got "
            f"{num_steps}"
        )
    return SpectralDensity(*_spectral_density(f, params, key, num_probes, num_steps))


@functools.partial(jax.jit, static_argnames=("f", "num_probes", "num_steps"))
def _spectral_density(f, params, key, num_probes, num_steps):
    theta = ravel_pytree(params)[0]

    def one(i):
        v0 = _sampling.standard_normal(_probe_key(key, i), theta.shape, theta.dtype)
        tri = _tridiagonal(_HessianProduct(f), v0, num_steps, True, (params,))
        return tuple(lanczos_quadrature(tri))

    return jax.lax.map(one, jnp.arange(num_probes))


def _check_density(density: Any) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(density, SpectralDensity):
        raise TypeError(
            f"density must be a hessian.SpectralDensity, got {type(density).__name__}"
        )
    nodes = np.asarray(density.nodes, dtype=np.float64)
    weights = np.asarray(density.weights, dtype=np.float64)
    if nodes.ndim != 2 or nodes.shape != weights.shape or nodes.size == 0:
        raise ValueError(
            "density.nodes and .weights must have one shape (num_probes, num_steps), "
            "got "
            f"{nodes.shape} and {weights.shape}"
        )
    if not (np.all(np.isfinite(nodes)) and np.all(np.isfinite(weights))):
        raise ValueError("density must be finite, but it contains NaN or infinity")
    return nodes, weights


def smoothed_density(
    density: SpectralDensity, grid: ArrayLike, *, width: float
) -> np.ndarray:
    """The SLQ density convolved with a Gaussian of standard deviation ``width``, on a
    grid.

    rho(lambda) = (1/num_probes) sum_ij weights[i, j] N(lambda; nodes[i, j], width^2), a
    probability density (it integrates to 1 over the real line). Host (NumPy, float64).

    Args:
        density: a :class:`SpectralDensity` from :func:`spectral_density`.
        grid: the points lambda, shape (g,).
        width: the standard deviation of the Gaussian, > 0.

    Returns:
        rho on the grid, shape (g,).

    Example:
        >>> import numpy as np
        >>> from lecturekit import hessian
        >>> dens = hessian.SpectralDensity(np.array([[0.0, 2.0]]),
        ...                                np.array([[0.5, 0.5]]))
        >>> grid = np.linspace(-5.0, 7.0, 2401)
        >>> rho = hessian.smoothed_density(dens, grid, width=0.5)
        >>> round(float(np.sum(rho) * (grid[1] - grid[0])), 6)
        1.0
    """
    nodes, weights = _check_density(density)
    grid = as_host_float_array(grid, name="grid", ndim=1, nonempty=True)
    width = check_real(width, name="width", positive=True)
    z = (grid[:, None] - nodes.ravel()[None, :]) / width
    return (np.exp(-0.5 * z**2) @ weights.ravel()) / (
        nodes.shape[0] * width * np.sqrt(2 * np.pi)
    )


def spectral_cdf(density: SpectralDensity, grid: ArrayLike) -> np.ndarray:
    """The distribution function of the SLQ estimate, F(lambda) = mass of nodes <=
    lambda.

    With the exact eigenvalues lambda_k of a P x P matrix the exact F is
    #{k: lambda_k <= lambda} / P; the Wasserstein-1 distance between two spectral
    measures on an interval is the integral of abs(F_1 - F_2) over it.

    Args:
        density: a :class:`SpectralDensity`.
        grid: the points lambda, shape (g,).

    Returns:
        F on the grid, shape (g,), non-decreasing from 0 to 1.

    Example:
        >>> import numpy as np
        >>> from lecturekit import hessian
        >>> dens = hessian.SpectralDensity(np.array([[0.0, 2.0]]),
        ...                                np.array([[0.25, 0.75]]))
        >>> hessian.spectral_cdf(dens, np.array([-1.0, 1.0, 3.0])).tolist()
        [0.0, 0.25, 1.0]
    """
    nodes, weights = _check_density(density)
    grid = as_host_float_array(grid, name="grid", ndim=1, nonempty=True)
    order = np.argsort(nodes.ravel())
    cum = np.cumsum(weights.ravel()[order]) / nodes.shape[0]
    idx = np.searchsorted(nodes.ravel()[order], grid, side="right")
    return np.where(idx > 0, cum[np.maximum(idx - 1, 0)], 0.0)


def dense_hessian(f: ScalarFn, params: Any, *, max_params: int = 4096) -> jax.Array:
    """The full P x P Hessian (ravel_pytree order) by ``jax.hessian``; tiny models only.

    Args:
        f: scalar function of a pytree of floating arrays.
        params: the point.
        max_params: refuse (ValueError) models with more parameters than this (memory
            grows like P^2: use :func:`hvp` or :func:`spectral_norm` instead).

    Returns:
        the Hessian, shape (P, P).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> f = lambda p: p["x"][0] * p["x"][1]
        >>> hessian.dense_hessian(f, {"x": jnp.array([1.0, 2.0])}).tolist()
        [[0.0, 1.0], [1.0, 0.0]]
    """
    flat, unravel = _check_fn_and_params(f, params)
    check_dense_size(params, max_params)
    return _dense_hessian(flat, f=f, unravel=unravel)


@functools.partial(jax.jit, static_argnames=("f", "unravel"))
def _dense_hessian(theta, *, f, unravel):
    return jax.hessian(lambda t: f(unravel(t)))(theta)


# ------------------------------------------------------------ losses of model outputs
# The Hessian of L(theta) = (1/n) sum_i l(f_i(theta), y_i) by the chain rule:
# nabla^2 L = G + R, G = (1/n) sum_i J_i^T A_i J_i (Gauss-Newton),
# A_i = d^2 l / d f_i^2,
# R = (1/n) sum_i sum_a (d l / d f_ia) nabla^2 f_ia (residual).
PerExampleLoss = Callable[[jax.Array, jax.Array], jax.Array]


def _outputs(apply, params, x):
    """The model's outputs as (n, k): a 1-D output (n,) is read as k = 1."""
    out = apply(params, x)
    return out[:, None] if out.ndim == 1 else out


def _check_model(apply, params, x):
    """The checked x and the (n, k) shape of the outputs (traced, not compiled)."""
    check_callable(apply, name="apply", what="a model apply(params, x)")
    check_params_pytree(params)
    x = as_float_array(x, name="x", ndim=2, nonempty=True)
    try:
        out = jax.eval_shape(apply, params, x)
    except Exception as err:  # wrong structure and the like: say so at the boundary
        raise ValueError(f"apply(params, x) could not be evaluated: {err}") from None
    return x, (out.shape[0], 1) if len(out.shape) == 1 else tuple(out.shape)


def output_shape(apply: Callable, params: Any, x: Any) -> tuple[int, int]:
    """(n, k), the shape of the model's outputs as the engines below read them.

    An output of shape (n,) is read as k = 1. Found by ``jax.eval_shape`` (nothing is
    computed or compiled), so it checks a model and its arguments before any work.

    Args:
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: its parameters (a pytree).
        x: inputs, shape (n, d).

    Returns:
        (n, k), a pair of Python ints.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> hessian.output_shape(lambda w, x: x @ w, jnp.ones(2), jnp.ones((5, 2)))
        (5, 1)
    """
    return _check_model(apply, params, x)[1]


def _check_output_loss(loss, apply, params, x, y):
    """The checked (x, y), y reshaped to the (n, k) of the outputs."""
    check_callable(
        loss, name="loss", what="a per-example loss loss(outputs, targets) -> (n,)"
    )
    x, shape = _check_model(apply, params, x)
    y = as_float_array(y, name="y", ndim=(1, 2))
    got = (y.shape[0], 1) if y.ndim == 1 else tuple(y.shape)
    if got != shape:
        raise ValueError(f"y must have the shape of the outputs {shape}, got {got}")
    # reshape on the host when possible: an eager JAX reshape would compile a program
    if is_traced(y):
        return x, y.reshape(shape)
    return x, jax.device_put(np.asarray(y).reshape(shape))


def _check_direction(v, params):
    check_params_pytree(v, name="v")
    check_same_structure(v, params, name="v", reference_name="params")


def output_loss(
    loss: PerExampleLoss, apply: Callable, params: Any, x: Any, y: Any
) -> jax.Array:
    """The training loss L(theta) = (1/n) sum_i l(f_i, y_i) of a model's outputs.

    f_i = apply(params, x)[i] in R^k (an output of shape (n,) is read as k = 1) and
    l(f_i, y_i) the i-th entry of ``loss(outputs, targets)``. Traceable; compiled once
    per (loss, apply, shapes).

    Args:
        loss: per-example loss ``loss(outputs, targets) -> (n,)`` on (n, k) arrays, e.g.
            ``functools.partial(losses.per_example, loss="square")``.
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: its parameters (a pytree).
        x: inputs, shape (n, d).
        y: targets, shape (n, k) (or (n,) for k = 1).

    Returns:
        a scalar JAX array.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> half_sq = lambda f, y: 0.5 * jnp.sum((f - y) ** 2, axis=1)
        >>> lin = lambda w, x: x @ w
        >>> float(hessian.output_loss(half_sq, lin, jnp.ones(2), jnp.eye(2),
        ...                           jnp.zeros(2)))                # (1 + 1) / (2*2)
        0.5
    """
    x, y = _check_output_loss(loss, apply, params, x, y)
    return _output_loss(params, x, y, loss=loss, apply=apply)


@functools.partial(jax.jit, static_argnames=("loss", "apply"))
def _output_loss(params, x, y, *, loss, apply):
    return jnp.mean(loss(_outputs(apply, params, x), y))


class GaussNewtonSplit(NamedTuple):
    """Output of :func:`~lecturekit.hessian.gauss_newton_split`: nabla^2 L and its two
    parts (dense, P x P).

    Attributes:
        hessian: nabla^2 L by ``jax.hessian`` of L itself.
        gauss_newton: G = (1/n) sum_i J_i^T A_i J_i, from the Jacobian.
        residual: R = (1/n) sum_i sum_a (d l/d f_ia) nabla^2 f_ia, from the output
            Hessians.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> half_sq = lambda f, y: 0.5 * jnp.sum((f - y) ** 2, axis=1)
        >>> parts = hessian.gauss_newton_split(half_sq, lambda w, x: (x @ w) ** 2,
        ...                                    jnp.ones(1), jnp.ones((1, 1)),
        ...                                    jnp.zeros(1))
        >>> [float(m[0, 0]) for m in parts]          # 6 w^2 = 4 w^2 + (w^2 - 0) 2
        [6.0, 4.0, 2.0]
    """

    hessian: jax.Array
    gauss_newton: jax.Array
    residual: jax.Array


def gauss_newton_split(
    loss: PerExampleLoss,
    apply: Callable,
    params: Any,
    x: Any,
    y: Any,
    *,
    max_params: int = 4096,
) -> GaussNewtonSplit:
    """The Hessian of a loss of model outputs and its Gauss-Newton and residual parts.

    For L(theta) = (1/n) sum_i l(f_i(theta), y_i) (:func:`output_loss`),

        nabla^2 L = G + R,  G = (1/n) sum_i J_i^T A_i J_i,
                            R = (1/n) sum_i sum_a (d l / d f_ia) nabla^2 f_ia,

    J_i = d f_i / d theta (k x P), A_i = d^2 l / d f_i^2 (k x k). The three matrices
    come from three separate computations (so ``hessian - gauss_newton - residual``
    tests the chain rule, it is not zero by construction): ``jax.hessian`` of L; the
    Jacobian with the A_i; and the Hessian of theta -> (1/n) sum_ia r_ia f_ia(theta)
    with the output gradients r_ia = d l / d f_ia held fixed at the point. Dense: tiny
    models only (:func:`check_dense_size`). Traceable; compiled once per (loss, apply,
    shapes).

    Args:
        loss: per-example loss ``loss(outputs, targets) -> (n,)`` on (n, k) arrays.
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: the point (pytree; matrices in ``ravel_pytree`` order).
        x: inputs, shape (n, d).
        y: targets, shape (n, k) (or (n,) for k = 1).
        max_params: refuse (ValueError) models with more parameters.

    Returns:
        :class:`GaussNewtonSplit`.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> half_sq = lambda f, y: 0.5 * jnp.sum((f - y) ** 2, axis=1)
        >>> f = lambda p, x: jnp.tanh(x @ p["w"]) * p["a"]
        >>> p = {"w": jnp.array([0.3, -0.2]), "a": jnp.array(1.5)}
        >>> H, G, R = hessian.gauss_newton_split(half_sq, f, p, jnp.eye(2),
        ...                                      jnp.ones(2))
        >>> bool(jnp.allclose(H, G + R, atol=1e-6)), G.shape
        (True, (3, 3))
    """
    x, y = _check_output_loss(loss, apply, params, x, y)
    check_dense_size(params, max_params)
    flat, unravel = flatten(params)
    return GaussNewtonSplit(
        *_gauss_newton_split(flat, x, y, loss=loss, apply=apply, unravel=unravel)
    )


@functools.partial(jax.jit, static_argnames=("loss", "apply", "unravel"))
def _gauss_newton_split(theta, x, y, *, loss, apply, unravel):
    out = lambda s: _outputs(apply, unravel(s), x)
    one = lambda fi, yi: loss(fi[None], yi[None])[0]  # l(f_i, y_i)
    n = x.shape[0]
    hess = jax.hessian(lambda s: jnp.mean(loss(out(s), y)))(theta)
    f = out(theta)
    jac = jax.jacrev(out)(theta)  # (n, k, P)
    a = jax.vmap(jax.hessian(one))(f, y)
    gn = jnp.einsum("iap,iab,ibq->pq", jac, a, jac) / n
    r = jax.vmap(jax.grad(one))(f, y)
    res = jax.hessian(lambda s: jnp.sum(r * out(s)) / n)(theta)
    return hess, gn, res


def gauss_newton_vector_product(
    loss: PerExampleLoss, apply: Callable, params: Any, x: Any, y: Any, v: Any
) -> Any:
    """G v = (1/n) sum_i J_i^T A_i (J_i v), matrix-free: a jvp, the loss Hessian, a vjp.

    G is the Gauss-Newton part of :func:`gauss_newton_split`; the cost is a few forward
    and backward passes, for models of any size. Traceable; compiled once per (loss,
    apply, shapes).

    Args:
        loss: per-example loss ``loss(outputs, targets) -> (n,)`` on (n, k) arrays.
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: the point (pytree).
        x: inputs, shape (n, d).
        y: targets, shape (n, k) (or (n,) for k = 1).
        v: the direction, a pytree shaped like params.

    Returns:
        G v, a pytree shaped like params.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> half_sq = lambda f, y: 0.5 * jnp.sum((f - y) ** 2, axis=1)
        >>> lin = lambda w, x: x @ w                      # G = X^T X / n
        >>> x = jnp.array([[1.0, 2.0], [0.0, 1.0]])
        >>> gv = hessian.gauss_newton_vector_product(half_sq, lin, jnp.zeros(2), x,
        ...                                          jnp.zeros(2), jnp.ones(2))
        >>> [float(t) for t in gv]
        [1.5, 3.5]
    """
    x, y = _check_output_loss(loss, apply, params, x, y)
    _check_direction(v, params)
    return _gauss_newton_vector_product(params, x, y, v, loss=loss, apply=apply)


@functools.partial(jax.jit, static_argnames=("loss", "apply"))
def _gauss_newton_vector_product(params, x, y, v, *, loss, apply):
    out = lambda p: _outputs(apply, p, x)
    f, jv = jax.jvp(out, (params,), (v,))
    mean_loss = lambda g: jnp.mean(loss(g, y))
    a_jv = jax.jvp(jax.grad(mean_loss), (f,), (jv,))[1]  # (1/n) A_i J_i v, row by row
    return jax.vjp(out, params)[1](a_jv)[0]


def residual_vector_product(
    loss: PerExampleLoss, apply: Callable, params: Any, x: Any, y: Any, v: Any
) -> Any:
    """R v = (1/n) sum_ia r_ia nabla^2 f_ia v, r_ia = d l / d f_ia fixed; matrix-free.

    R is the residual part of :func:`gauss_newton_split` (zero for a model linear in its
    parameters, or where every r_i = 0). Traceable; compiled once per (loss, apply,
    shapes).

    Args:
        loss: per-example loss ``loss(outputs, targets) -> (n,)`` on (n, k) arrays.
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: the point (pytree).
        x: inputs, shape (n, d).
        y: targets, shape (n, k) (or (n,) for k = 1).
        v: the direction, a pytree shaped like params.

    Returns:
        R v, a pytree shaped like params.

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> half_sq = lambda f, y: 0.5 * jnp.sum((f - y) ** 2, axis=1)
        >>> sq = lambda w, x: (x @ w) ** 2                # R = 2 r x x^T / n
        >>> rv = hessian.residual_vector_product(half_sq, sq, jnp.ones(1),
        ...                                      jnp.ones((1, 1)), jnp.zeros(1),
        ...                                      jnp.ones(1))
        >>> [float(t) for t in rv]
        [2.0]
    """
    x, y = _check_output_loss(loss, apply, params, x, y)
    _check_direction(v, params)
    return _residual_vector_product(params, x, y, v, loss=loss, apply=apply)


@functools.partial(jax.jit, static_argnames=("loss", "apply"))
def _residual_vector_product(params, x, y, v, *, loss, apply):
    out = lambda p: _outputs(apply, p, x)
    r = jax.grad(lambda g: jnp.mean(loss(g, y)))(out(params))  # r_ia / n
    fixed = jax.lax.stop_gradient(r)
    return jax.jvp(jax.grad(lambda p: jnp.sum(fixed * out(p))), (params,), (v,))[1]


def output_jacobian(
    transform: Callable[[jax.Array], jax.Array],
    apply: Callable,
    params: Any,
    x: Any,
    *,
    max_params: int = 4096,
) -> tuple[jax.Array, jax.Array]:
    """The Jacobian of theta -> g(f(theta)) for a map g of the model's outputs (dense).

    With f = apply(params, x) read as (n, k) and g = ``transform`` (e.g. the
    log-probabilities of a softmax: the Jacobian is then the scores
    nabla_theta log p_c(x_i) of a Fisher information), returns
    d g(f)_ia / d theta_p, shape (n, m, P) with P in ``ravel_pytree`` order, and the
    value g(f), shape (n, m). Dense: tiny models only (:func:`check_dense_size`).
    Traceable; compiled once per (transform, apply, shapes).

    Args:
        transform: g, a traceable map of (n, k) outputs to (n, m) values.
        apply: the model, ``apply(params, x) -> (n, k)`` or ``(n,)``.
        params: the point (pytree).
        x: inputs, shape (n, d).
        max_params: refuse (ValueError) models with more parameters.

    Returns:
        (jacobian, value), shapes (n, m, P) and (n, m).

    Example:
        >>> import jax.numpy as jnp
        >>> from lecturekit import hessian
        >>> lin = lambda w, x: x @ w
        >>> jac, val = hessian.output_jacobian(lambda f: 2 * f, lin, jnp.ones(2),
        ...                                    jnp.eye(2))
        >>> jac[:, 0, :].tolist(), val[:, 0].tolist()
        ([[2.0, 0.0], [0.0, 2.0]], [2.0, 2.0])
    """
    check_callable(transform, name="transform", what="a map of the outputs")
    x, _ = _check_model(apply, params, x)
    check_dense_size(params, max_params)
    flat, unravel = flatten(params)
    return _output_jacobian(flat, x, transform=transform, apply=apply, unravel=unravel)


@functools.partial(jax.jit, static_argnames=("transform", "apply", "unravel"))
def _output_jacobian(theta, x, *, transform, apply, unravel):
    value = lambda s: transform(_outputs(apply, unravel(s), x))
    return jax.jacrev(value)(theta), value(theta)
