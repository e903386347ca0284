"""Checks for the exercises of Chapter 3 (Hessian sparsity and the transition to linearity).

Each check compares a learner's function with an independent reference computed here
(dense Hessians by ``jax.hessian``, sign enumeration for the (2,2,1)-norm, Lanczos for
spectral norms) and raises :class:`ExerciseCheckError` with an explanation if it differs.
"""

from __future__ import annotations

import functools
import itertools
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from . import ExerciseCheckError, as_scalar, call_numeric, compare, passed, require_callable

_X = 0.7


def _tanh_net(m: int, seed: int):
    from ..hessian import normal_stream  # fixed-shape generator: no compilation per width

    key_w, key_v = jax.random.split(jax.random.key(seed))
    return normal_stream(key_w, m), normal_stream(key_v, m)


@functools.partial(jax.jit, static_argnums=1)
def _dense_tanh_hessian(theta: jax.Array, m: int) -> jax.Array:
    """jax.hessian of m^{-1/2} sum_i v_i tanh(w_i x) in theta = (w, v) (compiled once per m)."""
    return jax.hessian(lambda t: jnp.sum(t[m:] * jnp.tanh(t[:m] * _X)) / jnp.sqrt(m))(theta)


def check_block_eigenvalues(candidate: Callable) -> None:
    """candidate(v, w, x) -> the 2m Hessian eigenvalues (any order) of
    f(w, v) = m^{-1/2} sum_i v_i tanh(w_i x) with respect to (w, v)."""
    require_callable(candidate, what="block_eigenvalues")
    for m, seed in [(5, 0), (40, 1)]:
        w, v = _tanh_net(m, seed)
        what = f"block_eigenvalues(v, w, x) with m = {m}"
        got = np.sort(np.ravel(call_numeric(candidate, v.copy(), w.copy(), _X, what=what)))
        expected = np.sort(np.linalg.eigvalsh(np.asarray(_dense_tanh_hessian(np.concatenate([w, v]), m))))
        compare(got, expected, what=f"the 2m = {2 * m} eigenvalues (sorted)", rtol=1e-8, atol=1e-10,
                hint="each neuron gives a 2x2 block m^{-1/2} [[v phi''(w x) x^2, phi'(w x) x], "
                     "[phi'(w x) x, 0]]; do not forget the overall 1/sqrt(m)")
    return passed("all 2m eigenvalues match the dense jax.hessian spectrum to 1e-8.")


def _norm_221_reference(t: np.ndarray) -> float:
    best = 0.0
    for signs in itertools.product([1.0, -1.0], repeat=t.shape[2] - 1):
        s = np.array(signs + (1.0,))
        best = max(best, np.linalg.norm(np.tensordot(t, s, axes=([2], [0])), 2))
    return best


def check_norm_221(candidate: Callable) -> None:
    """candidate(T) -> the (2,2,1)-norm sup_{|u|=|v|=1} sum_k |u^T T_k v| of a (p, q, m) tensor."""
    require_callable(candidate, what="norm_221")
    rng = np.random.default_rng(2024)
    cases = [rng.normal(size=(3, 4, 5)), rng.normal(size=(6, 2, 7)),
             np.einsum("ij,jk->ijk", np.eye(4), np.diag([0.5, -2.0, 1.5, 0.1]))]
    for t in cases:
        got = call_numeric(candidate, t, what=f"norm_221(T) for T of shape {t.shape}")
        compare(got, _norm_221_reference(t), what=f"(2,2,1)-norm of a {t.shape} tensor", rtol=1e-8,
                hint="sum_k |c_k| = max over signs s of sum_k s_k c_k; swap the two suprema")
    return passed("your (2,2,1)-norm agrees with sign enumeration (including a diagonal tensor, "
                  "whose norm is max_k |c_k|).")


@functools.lru_cache(maxsize=None)
def _relu_hessian_norm_reference(m: int, x: float, seed: int) -> float:
    """||H||_2 by Lanczos on Hessian-vector products (computed once per case)."""
    from .. import hessian

    w, v = _tanh_net(m, seed)

    def f(p):
        return jnp.sum(p["v"] * jnp.maximum(p["w"] * x, 0.0)) / jnp.sqrt(m)

    return float(hessian.spectral_norm(f, {"w": jnp.asarray(w), "v": jnp.asarray(v)}, tol=1e-10))


def check_relu_hessian_norm(candidate: Callable) -> None:
    """candidate(w, x) -> exact ||H||_2 of f(w, v) = m^{-1/2} sum_i v_i relu(w_i x) w.r.t. (w, v)."""
    require_callable(candidate, what="relu_hessian_norm")
    for m, x, seed in [(50, 0.9, 3), (2000, -1.3, 4)]:
        w, _ = _tanh_net(m, seed)
        got = call_numeric(candidate, w, x, what=f"relu_hessian_norm(w, {x}) with m = {m}")
        compare(got, _relu_hessian_norm_reference(m, x, seed), what=f"||H|| for m = {m}, x = {x}", rtol=1e-6,
                hint="relu'' = 0, so each block is [[0, c], [c, 0]] / sqrt(m) with c = relu'(w_i x) x")
    return passed("the ReLU Hessian norm is |x| / sqrt(m) as soon as one neuron is active: no log factor.")


def check_chizat_bach_slope(slope: float) -> None:
    """slope: fitted log-log slope of Delta K against the output scale alpha (fixed width)."""
    if hasattr(slope, "slope") and not np.isscalar(slope):
        raise ExerciseCheckError("slope should be a number: you passed the whole fit; take its .slope")
    value = as_scalar(slope, what="slope")
    if not -1.25 <= value <= -0.75:
        raise ExerciseCheckError(
            f"a slope of {value:.3f} is not close to -1: with the rescaled model alpha (g - g0) the "
            "parameters move by O(1/alpha), so the kernel (a smooth function of them) changes by O(1/alpha)."
        )
    return passed(f"Delta K ~ alpha^{value:.2f}: rescaling linearizes any smooth model, whatever its width.")
