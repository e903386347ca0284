"""Random draws: the one normal sampler of lecturekit.

Every random normal number in lecturekit (initializations of networks, probe vectors of
Lanczos and Hutchinson, synthetic data) comes from :func:`standard_normal`. It reads a
*stream* of i.i.d. N(0, 1) numbers attached to a key: the flat draw is cut into chunks of
``CHUNK`` numbers, chunk ``i`` being ``jax.random.normal(jax.random.fold_in(key, i),
(CHUNK,), dtype)``. Two consequences:

* **prefix stability**: the first k numbers of a draw do not depend on the size of the
  draw. A narrow network drawn from a key is a sub-network of a wide one drawn from the
  same key; a width sweep can share its draws; ``standard_normal(key, (m,))`` is the start
  of ``standard_normal(key, (n,))`` for m < n.
* **one compilation per dtype**: ``jax.random.normal(key, shape)`` compiles the generator
  anew for every shape (about a second on a small CPU, and a width sweep meets many
  shapes). Here only the chunk generator is compiled (once per dtype; a second program
  draws 32 chunks at once for large draws), and the cutting and reshaping happen outside
  JAX, so a new shape costs no compilation.

Under a JAX transformation (a traced key inside ``jit`` or ``vmap``) the same numbers are
produced by one vectorized program of the enclosing computation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._validation import check_key, check_positive_int

__all__ = ["standard_normal", "standard_normal_host"]

CHUNK = 1 << 15
"""Numbers per chunk of the stream (fixed: changing it changes every draw)."""

_BLOCK = 32  # chunks drawn by one call of the block program (large draws)


@partial(jax.jit, static_argnums=2)
def _chunk(key: jax.Array, i: jax.Array, dtype: Any) -> jax.Array:
    return jax.random.normal(jax.random.fold_in(key, i), (CHUNK,), dtype)


@partial(jax.jit, static_argnums=2)
def _block(key: jax.Array, start: jax.Array, dtype: Any) -> jax.Array:
    return _chunks(key, start + jnp.arange(_BLOCK), dtype)


def _chunks(key: jax.Array, indices: jax.Array, dtype: Any) -> jax.Array:
    """Chunks ``indices`` of the stream of ``key``, shape (len(indices), CHUNK)."""
    keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, indices)
    return jax.vmap(lambda k: jax.random.normal(k, (CHUNK,), dtype))(keys)


def _check_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, (str, bytes)) or not isinstance(
        shape, Sequence | tuple | np.ndarray
    ):
        raise TypeError(f"shape must be a sequence of integers >= 0, got {shape!r}")
    return tuple(
        check_positive_int(s, name=f"shape[{i}]", minimum=0)
        for i, s in enumerate(shape)
    )


def _check_dtype(dtype: Any) -> np.dtype:
    if dtype is None:
        return jax.dtypes.canonicalize_dtype(float)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"dtype must be a floating dtype such as jnp.float32, got {dtype!r}"
        ) from None
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(
            f"dtype must be a floating dtype such as jnp.float32, got {dtype}"
        )
    return jax.dtypes.canonicalize_dtype(dtype)


def _flat_host(key: jax.Array, size: int, dtype: np.dtype) -> np.ndarray:
    """The first ``size`` numbers of the stream as a NumPy array (concrete key)."""
    count = -(-size // CHUNK)
    parts, i = [], 0
    while i < count:
        if count - i >= _BLOCK:
            parts.append(np.asarray(_block(key, i, dtype)).reshape(-1))
            i += _BLOCK
        else:
            parts.append(np.asarray(_chunk(key, i, dtype)))
            i += 1
    flat = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return flat[:size]


def _flat(key: jax.Array, size: int, dtype: np.dtype) -> np.ndarray | jax.Array:
    """The first ``size`` numbers of the stream: NumPy for a concrete key, else traced."""
    if size == 0:
        return np.zeros(0, dtype)
    if isinstance(key, jax.core.Tracer):
        return _chunks(key, jnp.arange(-(-size // CHUNK)), dtype).reshape(-1)[:size]
    return _flat_host(key, size, dtype)


def standard_normal(
    key: jax.Array, shape: int | Sequence[int], dtype: Any = None
) -> jax.Array:
    """An array of i.i.d. N(0, 1) numbers read off the prefix-stable stream of ``key``.

    The entries, in row-major order, are the first ``prod(shape)`` numbers of the stream of
    ``key`` (see the module docstring): chunk ``i`` of ``CHUNK`` numbers is
    ``jax.random.normal(jax.random.fold_in(key, i), (CHUNK,), dtype)``. So the result
    depends on the shape only through its size, a smaller draw is a prefix of a larger one,
    and a new shape compiles nothing (the generator is compiled once per dtype). The
    numbers differ from ``jax.random.normal(key, shape)`` (same law) and from one dtype to
    another. Works on a traced key too (inside ``jit``/``vmap``), with the same numbers.

    Args:
        key: a single JAX PRNG key, e.g. ``jax.random.key(0)``.
        shape: the shape of the result, a sequence of integers >= 0 (or one integer).
        dtype: a floating dtype; ``None`` means JAX's default float (float64 when
            ``jax_enable_x64`` is on, else float32).

    Returns:
        A JAX array of that shape and dtype.

    Raises:
        TypeError: ``key`` is not a single PRNG key, ``shape`` not a sequence of integers
            or ``dtype`` not floating.
        ValueError: a negative entry of ``shape``.

    Example:
        >>> from lecturekit import sampling
        >>> key = jax.random.key(0)
        >>> a = sampling.standard_normal(key, (3, 4))
        >>> b = sampling.standard_normal(key, (20,))
        >>> a.shape, bool(jnp.array_equal(a.reshape(-1), b[:12]))
        ((3, 4), True)
    """
    draw = standard_normal_host(key, shape, dtype)
    return jax.device_put(draw) if isinstance(draw, np.ndarray) else draw


def standard_normal_host(
    key: jax.Array, shape: int | Sequence[int], dtype: Any = None
) -> np.ndarray | jax.Array:
    """The draw of :func:`standard_normal` left on the host (NumPy for a concrete key).

    Same arguments, checks and numbers as :func:`standard_normal`, which is this draw
    moved to the device. For a concrete key the result is a NumPy array, so cutting it
    into pieces (e.g. the layers of a network, :meth:`lecturekit.nets.MLP.init`) costs
    no device operation and compiles nothing; for a traced key (inside ``jit`` or
    ``vmap``) it is the traced JAX array of the enclosing computation.

    Args:
        key: a single JAX PRNG key.
        shape: the shape of the result, a sequence of integers >= 0 (or one integer).
        dtype: a floating dtype; ``None`` means JAX's default float.

    Returns:
        A NumPy array (concrete key) or a traced JAX array (traced key).

    Example:
        >>> from lecturekit import sampling
        >>> key = jax.random.key(0)
        >>> host = sampling.standard_normal_host(key, (2, 3))
        >>> same = sampling.standard_normal(key, 6).reshape(2, 3)
        >>> type(host).__name__, bool(np.array_equal(host, same))
        ('ndarray', True)
    """
    check_key(key)
    shape = _check_shape(shape)
    dtype = _check_dtype(dtype)
    return _flat(key, math.prod(shape), dtype).reshape(shape)
