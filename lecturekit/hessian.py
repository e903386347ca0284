"""Hessians of scalar functions of pytrees: products, extreme eigenvalues, dense matrices.

Convention: ``f(params)`` is a scalar function of a pytree of floating arrays (for a
network at one input, ``f = lambda p: net.apply(p, x[None])[0]``). Its Hessian H is the
P x P matrix of second derivatives with respect to every entry of every leaf, in the
order of ``jax.flatten_util.ravel_pytree(params)``.

* :func:`hvp` computes H v by forward-over-reverse differentiation,
  H v = d/dt grad f(params + t v) at t = 0, at the cost of a few gradient evaluations.
* :func:`lanczos` runs the Lanczos iteration on those products (never forming H) with
  full reorthogonalization while the Krylov basis fits in memory; :func:`spectral_norm`
  and :func:`top_eigenpairs` read the extreme eigenvalues off the tridiagonal Lanczos
  matrix with ``scipy.linalg.eigh_tridiagonal``.
* :func:`dense_hessian` forms H with ``jax.hessian`` for tiny models (tests, figures).

Stopping rule. After k steps the Lanczos matrix T_k has Ritz pairs (theta_j, s_j); the
Ritz vector's residual is r_j = |beta_k s_j[k-1]|, and some eigenvalue of H lies within
min(r_j, r_j^2 / gap_j) of theta_j (gap_j: distance from theta_j to the other Ritz
values; Kahan-Parlett-Jiang). The iteration stops when both extreme Ritz values (the
largest and the smallest) satisfy this bound at the relative level ``tol`` of the
current norm estimate, never on "the estimate stopped changing", which stops far too
early when the extreme eigenvalues of a wide network are clustered.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
from jax.typing import ArrayLike

from ._validation import (
    as_float_array, check_callable, check_key, check_params_pytree, check_positive_int, check_real,
    check_same_structure, warn_if_below_precision, warn_numerical,
)

ScalarFn = Callable[[Any], jax.Array]

#: Largest Krylov basis (in bytes) kept for full reorthogonalization; beyond it the
#: iteration continues with the three-term recurrence alone (extreme Ritz values stay
#: correct in exact-arithmetic theory of Paige; lost orthogonality only duplicates them).
REORTH_BYTES = 1 << 29


class LanczosResult(NamedTuple):
    """Output of :func:`lanczos`.

    alpha, beta: the diagonal (k,) and off-diagonal (k-1,) of the tridiagonal matrix T_k;
    ritz_values: eigenvalues of T_k in increasing order; errors: the bound
    min(r, r^2/gap) on the distance from each Ritz value to an eigenvalue of H;
    basis: the (k, P) Lanczos vectors if they were kept, else None; converged: whether
    the stopping rule was met (or the Krylov space became invariant) before max_iter.
    """

    alpha: np.ndarray
    beta: np.ndarray
    ritz_values: np.ndarray
    ritz_vectors_t: np.ndarray  # eigenvectors of T_k, (k, k), columns
    errors: np.ndarray
    basis: np.ndarray | None
    converged: bool
    iterations: int


# --------------------------------------------------------------------------- helpers
def _flatten(params: Any) -> tuple[np.ndarray, Callable[[jax.Array], Any]]:
    """Params as one float64 NumPy vector (ravel_pytree order) and a traceable inverse.

    Done on the host: eager JAX ops would compile a kernel for every new shape.
    """
    leaves, treedef = jax.tree_util.tree_flatten(params)
    shapes = [np.shape(leaf) for leaf in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    flat = np.concatenate([np.ravel(np.asarray(leaf)) for leaf in leaves])
    offsets = np.cumsum([0] + sizes)

    def unravel(theta):
        parts = [theta[offsets[i]:offsets[i + 1]].reshape(shapes[i]) for i in range(len(shapes))]
        return jax.tree_util.tree_unflatten(treedef, parts)

    return flat, unravel


def _check_fn_and_params(f: Any, params: Any) -> tuple[jax.Array, Callable]:
    if not callable(f):
        raise TypeError(f"f must be a scalar function f(params), got {type(f).__name__}")
    leaves = jax.tree_util.tree_leaves(params)
    if not leaves:
        raise ValueError("params must contain at least one array")
    for leaf in leaves:
        dtype = np.asarray(leaf).dtype
        if not np.issubdtype(dtype, np.floating):
            raise TypeError(f"every leaf of params must be a floating array, got dtype {dtype}")
    flat, unravel = _flatten(params)
    if not np.all(np.isfinite(flat)):
        raise ValueError("params must be finite, but they contain NaN or infinity")
    try:
        out = jax.eval_shape(f, params)
    except Exception as err:  # wrong structure and the like: say so at the boundary
        raise ValueError(f"f(params) could not be evaluated: {err}") from None
    if getattr(out, "shape", None) != ():
        raise ValueError(
            f"f(params) must return a scalar, got shape {getattr(out, 'shape', type(out).__name__)}; "
            "for a network at one input use e.g. lambda p: net.apply(p, x[None])[0]"
        )
    return jax.device_put(flat), unravel


def _flat_hvp(f: ScalarFn, unravel: Callable) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """(theta, v) -> H(theta) v on flat vectors (forward-over-reverse); not jitted itself."""
    grad = jax.grad(lambda theta: f(unravel(theta)))

    def product(theta, v):
        return jax.jvp(grad, (theta,), (v,))[1]

    return product


def hvp(f: ScalarFn, params: Any, v: Any) -> Any:
    """Hessian-vector product H(params) v for a scalar f; v is a pytree like params.

    Computed as the directional derivative of the gradient, jax.jvp(grad f, params, v),
    so H is never formed.
    """
    flat, unravel = _check_fn_and_params(f, params)
    check_params_pytree(v, name="v")
    check_same_structure(v, params, name="v", reference_name="params")
    v_flat, _ = _flatten(v)
    if v_flat.shape != flat.shape:
        raise ValueError(f"v must have the structure and sizes of params ({flat.size} numbers), got {v_flat.size}")
    return unravel(jax.jit(_flat_hvp(f, unravel))(flat, jnp.asarray(v_flat, flat.dtype)))


def _ritz(alpha: np.ndarray, beta: np.ndarray, beta_next: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    """Lanczos iteration for a symmetric linear map on flat vectors of size P.

    Builds the orthonormal Krylov basis q_1 = v0/|v0|, beta_j q_{j+1} = A q_j - alpha_j q_j -
    beta_{j-1} q_{j-1}, with full reorthogonalization (classical Gram-Schmidt, repeated
    when it cancels much: DGKS) while the basis fits in ``REORTH_BYTES``; stops when both
    extreme Ritz values are within ``tol`` (relative to the largest |Ritz value|) of an
    eigenvalue by the residual bound, when the Krylov space becomes invariant, or after
    ``max_iter`` steps. ``matvec(v, *args)`` must be traceable (it is compiled into the
    step; pass large operands through ``args`` rather than closing over them).
    """
    check_callable(matvec, name="matvec", what="a function v -> A v")
    v0 = as_float_array(v0, name="v0", ndim=1, nonempty=True)
    if not np.any(np.asarray(v0)):
        raise ValueError("v0 must be a non-zero start vector")
    tol, max_iter = _check_options(tol, max_iter)
    min_iter = check_positive_int(min_iter, name="min_iter")
    check_every = check_positive_int(check_every, name="check_every")
    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple of extra operands of matvec, got {type(args).__name__}")
    return _lanczos(matvec, v0, tol=tol, max_iter=max_iter, keep_basis=keep_basis, min_iter=min_iter,
                    check_every=check_every, args=args)[0]


def _lanczos(matvec, v0, *, tol, max_iter, keep_basis, min_iter, check_every, args, has_aux=False):
    """:func:`lanczos`; with ``has_aux`` matvec returns (A v, aux) and the aux of the first
    product is returned too: (LanczosResult, aux or None).

    The reorthogonalization runs in NumPy on the host (the device is the CPU here): its
    products cost milliseconds, while compiled kernels for it would be compiled anew for
    every problem size.
    """

    @jax.jit
    def step(w_raw, beta, q_prev, beta_prev, args):
        q = w_raw / jnp.where(beta > 0, beta, jnp.linalg.norm(w_raw))
        out = matvec(q, *args)
        v, aux = out if has_aux else (out, None)
        alpha = jnp.vdot(q, v)
        w = v - alpha * q - beta_prev * q_prev
        return q, alpha, w, jnp.linalg.norm(w), aux

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
        q, alpha, w, norm_w, aux = step(w, beta, q_prev, beta_prev, args)
        if it == 1:
            first_aux = aux
        if reorth:
            if it > basis.shape[0]:  # grow the host basis geometrically
                grown = np.zeros((min(max(2 * basis.shape[0], 32), max_iter), size), dtype=basis.dtype)
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
            vals, vecs, errors = _ritz(np.array(alphas), np.array(betas), 0.0 if invariant else beta)
            norm = max(abs(vals[0]), abs(vals[-1]))
            if invariant or max(errors[0], errors[-1]) <= tol * norm:
                converged = True
                break
        if it == max_iter:
            break
        betas.append(beta)
        q_prev, beta_prev = q, beta
    if vals is None or len(vals) != len(alphas):
        vals, vecs, errors = _ritz(np.array(alphas), np.array(betas[: len(alphas) - 1]), beta)
    kept = basis[: len(alphas)].copy() if keep_basis else None
    result = LanczosResult(
        alpha=np.array(alphas), beta=np.array(betas[: len(alphas) - 1]), ritz_values=vals,
        ritz_vectors_t=vecs, errors=errors, basis=kept, converged=converged, iterations=len(alphas),
    )
    return result, first_aux


_CHUNK = 1 << 15


@jax.jit
def _normal_chunk(key: jax.Array, i: int) -> jax.Array:
    return jax.random.normal(jax.random.fold_in(key, i), (_CHUNK,))


def normal_stream(key: jax.Array, size: int) -> np.ndarray:
    """``size`` i.i.d. N(0, 1) numbers (float64 NumPy) from fixed-size chunks of one key.

    ``jax.random.normal(key, shape)`` compiles its generator anew for every shape (about
    a second on a small CPU); width sweeps need many shapes, so they draw from here.
    """
    check_key(key)
    size = check_positive_int(size, name="size")
    chunks = [np.asarray(_normal_chunk(key, i)) for i in range(-(-size // _CHUNK))]
    return np.concatenate(chunks)[:size]


def _start_vector(key: jax.Array | None, flat: jax.Array) -> jax.Array:
    key = jax.random.key(0) if key is None else check_key(key)
    return jax.device_put(normal_stream(key, flat.size).astype(flat.dtype))


def _check_options(tol: Any, max_iter: Any) -> tuple[float, int]:
    tol = check_real(tol, name="tol", positive=True)
    max_iter = check_positive_int(max_iter, name="max_iter")
    return tol, max_iter


def _warn_unconverged(res: LanczosResult, what: str, tol: float) -> None:
    if not res.converged:
        norm = max(abs(res.ritz_values[0]), abs(res.ritz_values[-1]))
        bound = max(res.errors[0], res.errors[-1]) / norm if norm > 0 else float("inf")
        warn_numerical(
            f"{what}: Lanczos reached max_iter = {res.iterations} before meeting tol = {tol:g}; the returned "
            f"estimate is only known to a relative error {bound:.2g} (raise max_iter or tol)",
            stacklevel=4,
        )


# --------------------------------------------------------------------------- public API
def spectral_norm(
    f: ScalarFn, params: Any, *, key: jax.Array | None = None, tol: float = 1e-6, max_iter: int = 300,
    return_gradient_norm: bool = False,
) -> float | tuple[float, float]:
    """Spectral norm max |lambda| of the Hessian of the scalar f at params.

    Lanczos on Hessian-vector products (see the module docstring for the stopping rule),
    started from a Gaussian vector drawn with ``key`` (``jax.random.key(0)`` if None).
    At ``max_iter`` the best estimate so far is returned (no exception) with a
    :class:`~lecturekit.NumericalWarning` giving its error bound; a ``tol`` within a few
    units of rounding of the working dtype (float32 unless float64 is enabled) also warns.
    With ``return_gradient_norm=True`` returns (||H||_2, ||grad f||): the forward-over-reverse
    product computes the gradient anyway (the primal output of the jvp), so this costs no
    extra compilation.
    """
    tol, max_iter = _check_options(tol, max_iter)
    flat, unravel = _check_fn_and_params(f, params)
    grad = jax.grad(lambda theta: f(unravel(theta)))

    def product(v, theta):
        g, hv = jax.jvp(grad, (theta,), (v,))
        return hv, jnp.linalg.norm(g)

    warn_if_below_precision(tol, flat.dtype)
    res, grad_norm = _lanczos(product, _start_vector(key, flat), tol=tol, max_iter=max_iter, keep_basis=False,
                              min_iter=8, check_every=4, args=(flat,), has_aux=True)
    _warn_unconverged(res, "spectral_norm", tol)
    norm = float(max(abs(res.ritz_values[0]), abs(res.ritz_values[-1])))
    return (norm, float(grad_norm)) if return_gradient_norm else norm


class Eigenpairs(NamedTuple):
    """Eigenvalues (largest |lambda| first), eigenvectors as pytrees like params, error bounds."""

    values: np.ndarray
    vectors: list[Any]
    errors: np.ndarray


def top_eigenpairs(
    f: ScalarFn,
    params: Any,
    k: int = 1,
    *,
    key: jax.Array | None = None,
    tol: float = 1e-6,
    max_iter: int = 300,
) -> Eigenpairs:
    """The k Hessian eigenpairs of largest |eigenvalue|, by Lanczos with the basis kept.

    Eigenvectors are returned as pytrees shaped like params (unit Euclidean norm).
    Stops by the rule of :func:`spectral_norm`; the k pairs are the k Ritz pairs of
    largest |value|, each with its error bound min(r, r^2/gap) (check ``errors`` for k > 1:
    interior Ritz values converge later than the extreme ones). Warns like
    :func:`spectral_norm` when max_iter is reached first or ``tol`` is below rounding.
    """
    k = check_positive_int(k, name="k")
    tol, max_iter = _check_options(tol, max_iter)
    flat, unravel = _check_fn_and_params(f, params)
    if k > flat.size:
        raise ValueError(f"k must be <= the number of parameters ({flat.size}), got {k}")
    warn_if_below_precision(tol, flat.dtype)
    product = _flat_hvp(f, unravel)
    res = lanczos(lambda v, theta: product(theta, v), _start_vector(key, flat), tol=tol,
                  max_iter=max(max_iter, k), keep_basis=True, min_iter=max(8, k), args=(flat,))
    _warn_unconverged(res, "top_eigenpairs", tol)
    order = np.argsort(-np.abs(res.ritz_values))[:k]
    vectors = [unravel(jnp.asarray(res.basis.T @ res.ritz_vectors_t[:, j])) for j in order]
    return Eigenpairs(res.ritz_values[order], vectors, res.errors[order])


def dense_hessian(f: ScalarFn, params: Any, *, max_params: int = 4096) -> jax.Array:
    """The full P x P Hessian (ravel_pytree order) by ``jax.hessian``; tiny models only.

    Raises ValueError if P > max_params (memory grows like P^2: use :func:`hvp` instead).
    """
    flat, unravel = _check_fn_and_params(f, params)
    max_params = check_positive_int(max_params, name="max_params")
    if flat.size > max_params:
        raise ValueError(
            f"dense_hessian forms a {flat.size} x {flat.size} matrix; that is more than max_params = "
            f"{max_params} parameters: use hessian.hvp / spectral_norm for large models"
        )
    return jax.jit(jax.hessian(lambda theta: f(unravel(theta))))(flat)
