"""Input checks shared by lecturekit's public functions.

Every public function validates its arguments once, at the boundary, with these
helpers; the messages name the argument and say what was expected. Inner functions
trust their inputs.
"""

from __future__ import annotations

import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def as_float_array(
    value: Any,
    *,
    name: str,
    ndim: int | tuple[int, ...] | None = None,
    finite: bool = True,
) -> jax.Array:
    """Convert ``value`` to a floating JAX array, checking dimension and finiteness.

    Integer and boolean inputs are promoted to the default float dtype; complex,
    string and object inputs are rejected with a ``TypeError`` naming ``name``.
    """
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real array of numbers, got {type(value).__name__}")
    try:
        arr = np.asarray(value) if not isinstance(value, jax.Array) else value
    except Exception as err:  # ragged lists and the like
        raise TypeError(f"{name} must be a real array of numbers: {err}") from None
    dtype = arr.dtype
    if dtype == object or not (
        jnp.issubdtype(dtype, jnp.floating)
        or jnp.issubdtype(dtype, jnp.integer)
        or jnp.issubdtype(dtype, jnp.bool_)
    ):
        raise TypeError(f"{name} must have a real floating or integer dtype, got {dtype}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{name} must be {want}, got shape {tuple(arr.shape)}")
    out = jnp.asarray(arr)
    if not jnp.issubdtype(out.dtype, jnp.floating):
        out = out.astype(jnp.result_type(float))
    if finite:
        try:
            all_finite = bool(jnp.all(jnp.isfinite(out)))
        except jax.errors.ConcretizationTypeError:  # traced under jit: cannot inspect values
            all_finite = True
        if not all_finite:
            raise ValueError(f"{name} must be finite, but it contains NaN or infinity")
    return out


def check_positive_int(value: Any, *, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an ``int``, requiring an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_real(value: Any, *, name: str, positive: bool = False, nonnegative: bool = False) -> float:
    """Return ``value`` as a finite Python float, optionally > 0 or >= 0."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if not np.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value}")
    if positive and out <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    if nonnegative and out < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return out


def check_inputs_pair(x1: Any, x2: Any, *, dim: int | None = None) -> tuple[jax.Array, jax.Array]:
    """Validate two batches of inputs of shapes (n1, d) and (n2, d); ``x2=None`` means ``x1``."""
    a = as_float_array(x1, name="x1", ndim=2)
    b = a if x2 is None else as_float_array(x2, name="x2", ndim=2)
    if b.shape[1] != a.shape[1]:
        raise ValueError(f"x1 and x2 must have the same input dimension, got {a.shape[1]} and {b.shape[1]}")
    if dim is not None and a.shape[1] != dim:
        raise ValueError(f"inputs must have {dim} columns (the network's input dimension), got shape {tuple(a.shape)}")
    return a, b


def check_model(f: Any, *, name: str = "f") -> None:
    """Require a callable model f(params, x)."""
    if not callable(f):
        raise TypeError(f"{name} must be a function f(params, x), got {type(f).__name__}")


def check_params_pytree(params: Any, *, name: str = "params") -> None:
    """Require a pytree with at least one leaf, every leaf a floating array."""
    leaves = jax.tree_util.tree_leaves(params)
    if not leaves:
        raise ValueError(f"{name} must contain at least one array")
    for leaf in leaves:
        dtype = jnp.asarray(leaf).dtype
        if not jnp.issubdtype(dtype, jnp.floating):
            raise TypeError(f"every leaf of {name} must be a floating array, got dtype {dtype}")
