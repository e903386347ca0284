"""Random draws: every random number of lecturekit comes from this module.

Every random normal number in lecturekit (initializations of networks, probe vectors of
Lanczos and Hutchinson, synthetic data) comes from :func:`standard_normal`. It reads a
*stream* of i.i.d. N(0, 1) numbers attached to a key: the flat draw is cut into chunks
of ``CHUNK`` numbers, chunk ``i`` being ``jax.random.normal(jax.random.fold_in(key, i),
(CHUNK,), dtype)``. Two consequences:

* **prefix stability**: the first k numbers of a draw do not depend on the size of the
  draw. A narrow network drawn from a key is a sub-network of a wide one drawn from the
  same key; a width sweep can share its draws; ``standard_normal(key, (m,))`` is the
  start of ``standard_normal(key, (n,))`` for m < n.
* **one compilation per dtype**: ``jax.random.normal(key, shape)`` compiles the
  generator anew for every shape (about a second on a small CPU, and a width sweep meets
  many shapes). Here only the chunk generator is compiled (once per dtype; a second
  program draws 32 chunks at once for large draws), and the cutting and reshaping happen
  outside JAX, so a new shape costs no compilation.

Under a JAX transformation (a traced key inside ``jit`` or ``vmap``) the same numbers
are produced by one vectorized program of the enclosing computation.

The other laws the library draws are thin, checked front ends of ``jax.random`` with the
same key and arguments (so the same numbers as the direct call): :func:`uniform`,
:func:`bernoulli`, :func:`randint` and :func:`choice_without_replacement`. Unlike
:func:`standard_normal` they are not prefix stable; they work on concrete and traced
keys alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._validation import check_key, check_positive_int, check_real, is_traced

__all__ = [
    "standard_normal",
    "standard_normal_host",
    "uniform",
    "bernoulli",
    "randint",
    "choice_without_replacement",
]

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
    """The first ``size`` numbers of the stream: NumPy for a concrete key, else
    traced.
    """
    if size == 0:
        return np.zeros(0, dtype)
    if isinstance(key, jax.core.Tracer):
        return _chunks(key, jnp.arange(-(-size // CHUNK)), dtype).reshape(-1)[:size]
    return _flat_host(key, size, dtype)


def standard_normal(
    key: jax.Array, shape: int | Sequence[int], dtype: Any = None
) -> jax.Array:
    """An array of i.i.d. N(0, 1) numbers read off the prefix-stable stream of ``key``.

    The entries, in row-major order, are the first ``prod(shape)`` numbers of the stream
    of ``key`` (see the module docstring): chunk ``i`` of ``CHUNK`` numbers is
    ``jax.random.normal(jax.random.fold_in(key, i), (CHUNK,), dtype)``. So the result
    depends on the shape only through its size, a smaller draw is a prefix of a larger
    one, and a new shape compiles nothing (the generator is compiled once per dtype).
    The numbers differ from ``jax.random.normal(key, shape)`` (same law) and from one
    dtype to another. Works on a traced key too (inside ``jit``/``vmap``), with the same
    numbers.

    Args:
        key: a single JAX PRNG key, e.g. ``jax.random.key(0)``.
        shape: the shape of the result, a sequence of integers >= 0 (or one integer).
        dtype: a floating dtype; ``None`` means JAX's default float (float64 when
            ``jax_enable_x64`` is on, else float32).

    Returns:
        A JAX array of that shape and dtype.

    Raises:
        TypeError: ``key`` is not a single PRNG key, ``shape`` not a sequence of
            integers or ``dtype`` not floating.
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


def _check_bounds(minval: Any, maxval: Any, check: Callable) -> tuple[Any, Any]:
    """Concrete bounds checked by ``check`` and ordered (minval < maxval); traced
    kept.
    """
    if not is_traced(minval):
        minval = check(minval, name="minval")
    if not is_traced(maxval):
        maxval = check(maxval, name="maxval")
    if not (is_traced(minval) or is_traced(maxval)) and minval >= maxval:
        raise ValueError(
            f"minval must be < maxval, got minval = {minval} and maxval = {maxval}"
        )
    return minval, maxval


def _check_int(value: Any, *, name: str) -> int:
    """An integer (of any sign)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    return int(value)


def uniform(
    key: jax.Array,
    shape: int | Sequence[int],
    dtype: Any = None,
    *,
    minval: float | jax.Array = 0.0,
    maxval: float | jax.Array = 1.0,
) -> jax.Array:
    """I.i.d. uniform numbers on [minval, maxval): ``jax.random.uniform`` checked.

    Exactly ``jax.random.uniform(key, shape, dtype, minval, maxval)`` (same numbers);
    the draw depends on the shape, not only on its size (no prefix stability).

    Args:
        key: a single JAX PRNG key.
        shape: the shape of the result, a sequence of integers >= 0 (or one integer).
        dtype: a floating dtype; ``None`` means JAX's default float.
        minval: the lower end, a real number (or a traced scalar).
        maxval: the upper end, > minval (or a traced scalar).

    Returns:
        A JAX array of that shape and dtype.

    Raises:
        TypeError: ``key`` not a single PRNG key, ``shape`` not a sequence of integers,
            ``dtype`` not floating or a bound not a real number.
        ValueError: a negative entry of ``shape``, a bound not finite or
            minval >= maxval.

    Example:
        >>> from lecturekit import sampling
        >>> key = jax.random.key(0)
        >>> u = sampling.uniform(key, (2, 3), minval=-1.0, maxval=1.0)
        >>> u.shape, bool(jnp.all((-1 <= u) & (u < 1)))
        ((2, 3), True)
        >>> bool(jnp.array_equal(u, jax.random.uniform(key, (2, 3), minval=-1.0,
        ...                                            maxval=1.0)))
        True
    """
    check_key(key)
    shape = _check_shape(shape)
    dtype = _check_dtype(dtype)
    minval, maxval = _check_bounds(minval, maxval, check_real)
    return jax.random.uniform(key, shape, dtype, minval, maxval)


def bernoulli(
    key: jax.Array, p: float | jax.Array, shape: int | Sequence[int]
) -> jax.Array:
    """I.i.d. Bernoulli(p) booleans (True with probability p): ``jax.random.bernoulli``.

    Exactly ``jax.random.bernoulli(key, p, shape)`` (same numbers). A traced ``p``
    (inside ``jit`` or ``vmap``) is not checked.

    Args:
        key: a single JAX PRNG key.
        p: the probability of True, in [0, 1] (or a traced scalar).
        shape: the shape of the result, a sequence of integers >= 0 (or one integer).

    Returns:
        A boolean JAX array of that shape.

    Raises:
        TypeError: ``key`` not a single PRNG key, ``p`` not a real number or ``shape``
            not a sequence of integers.
        ValueError: ``p`` outside [0, 1] or a negative entry of ``shape``.

    Example:
        >>> from lecturekit import sampling
        >>> coins = sampling.bernoulli(jax.random.key(0), 0.5, (4,))
        >>> coins.dtype, coins.shape
        (dtype('bool'), (4,))
        >>> sampling.bernoulli(jax.random.key(0), 1.0, 3).tolist()
        [True, True, True]
    """
    check_key(key)
    if not is_traced(p):
        p = check_real(p, name="p", nonnegative=True, at_most=1.0)
    return jax.random.bernoulli(key, p, _check_shape(shape))


def randint(
    key: jax.Array, shape: int | Sequence[int], minval: int, maxval: int
) -> jax.Array:
    """I.i.d. integers uniform on {minval, ..., maxval - 1}: ``jax.random.randint``.

    Exactly ``jax.random.randint(key, shape, minval, maxval)`` (same numbers, JAX's
    default integer dtype).

    Args:
        key: a single JAX PRNG key.
        shape: the shape of the result, a sequence of integers >= 0 (or one integer).
        minval: the smallest value, an integer.
        maxval: one past the largest value, an integer > minval.

    Returns:
        An integer JAX array of that shape.

    Raises:
        TypeError: ``key`` not a single PRNG key, ``shape`` not a sequence of integers
            or a bound not an integer.
        ValueError: a negative entry of ``shape`` or minval >= maxval.

    Example:
        >>> from lecturekit import sampling
        >>> k = sampling.randint(jax.random.key(0), (5,), 0, 3)
        >>> k.shape, bool(jnp.all((0 <= k) & (k < 3)))
        ((5,), True)
    """
    check_key(key)
    shape = _check_shape(shape)
    minval, maxval = _check_bounds(minval, maxval, _check_int)
    return jax.random.randint(key, shape, minval, maxval)


def choice_without_replacement(key: jax.Array, n: int, size: int) -> jax.Array:
    """``size`` distinct indices drawn uniformly from {0, ..., n - 1}, in random order.

    Exactly ``jax.random.choice(key, n, (size,), replace=False)`` (same numbers): a
    uniformly random subset of ``size`` of the n indices, e.g. a mini-batch or the
    support of a sparse vector.

    Args:
        key: a single JAX PRNG key.
        n: the number of indices to choose from, an int >= 1.
        size: how many to choose, an int with 0 <= size <= n.

    Returns:
        An integer JAX array of shape (size,), entries distinct.

    Raises:
        TypeError: ``key`` not a single PRNG key, ``n`` or ``size`` not an integer.
        ValueError: n < 1, size < 0 or size > n.

    Example:
        >>> from lecturekit import sampling
        >>> idx = sampling.choice_without_replacement(jax.random.key(0), 10, 4)
        >>> idx.shape, len(set(idx.tolist())), bool(jnp.all((0 <= idx) & (idx < 10)))
        ((4,), 4, True)
    """
    check_key(key)
    n = check_positive_int(n, name="n")
    size = check_positive_int(size, name="size", minimum=0)
    if size > n:
        raise ValueError(f"size must be <= n = {n}, got {size}")
    return jax.random.choice(key, n, (size,), replace=False)
