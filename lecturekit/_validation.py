"""Input checks shared by lecturekit's public functions, and the library's warning
category.

Every public function validates its arguments once, at the boundary, with these
helpers; the messages name the argument and say what was expected. Inner functions
trust their inputs.

Checks on the *values* of arrays (finiteness, ranges) run in NumPy on concrete arrays
and are skipped for traced ones (inside ``jit``, ``vmap`` or ``grad``), so that
validation compiles nothing (an eager JAX reduction is compiled anew for every input
shape) and the functions stay traceable. Dtype and shape checks work on both.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


class NumericalWarning(UserWarning):
    """A result may be inaccurate: an iteration stopped before its tolerance was met, or
    a tolerance was asked for that the working precision (float32 unless float64 is
    enabled) cannot resolve.

    A subclass of :class:`UserWarning`, so that the standard :mod:`warnings` filters
    select
    it: turn it into an error while testing, or silence it where the limit is intended.

    Example:
        >>> import warnings
        >>> from lecturekit import NumericalWarning
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("error", NumericalWarning)
        ...     try:
        ...         warnings.warn("stopped at max_iter", NumericalWarning)
        ...     except NumericalWarning as err:
        ...         print(type(err).__name__, err)
        NumericalWarning stopped at max_iter
    """


def warn_numerical(message: str, *, stacklevel: int = 3) -> None:
    """Emit a :class:`NumericalWarning` attributed to the caller of the public
    function.
    """
    warnings.warn(message, NumericalWarning, stacklevel=stacklevel)


def is_traced(value: Any) -> bool:
    """Whether ``value`` is an abstract value being traced (jit, vmap, grad): no
    concrete numbers.
    """
    return isinstance(value, jax.core.Tracer)


def concrete(value: Any) -> np.ndarray | None:
    """``value`` as a NumPy array (a view where possible), or None while it is
    traced.
    """
    if is_traced(value):
        return None
    return np.asarray(value)


def float_dtype() -> np.dtype:
    """The default floating dtype: float64 when ``jax_enable_x64`` is on, else
    float32.
    """
    return np.dtype(jnp.result_type(float))


def _real_dtype(dtype: Any) -> bool:
    return not jnp.issubdtype(dtype, np.object_) and (
        jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer)
    )


def _real_array(
    value: Any,
    *,
    name: str,
    ndim: int | tuple[int, ...] | None,
    min_ndim: int,
    nonempty: bool,
) -> np.ndarray | jax.Array:
    """``value`` as an array (JAX arrays, traced or not, are kept as they are) after the
    type, dtype and shape checks shared by :func:`as_float_array`
    and :func:`as_host_float_array`."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(
            f"{name} must be a real array of numbers, got {type(value).__name__}"
        )
    # concrete or traced: never copied to the host here
    if isinstance(value, jax.Array):
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except Exception as err:  # ragged lists and the like
            raise TypeError(f"{name} must be a real array of numbers: {err}") from None
    if not _real_dtype(arr.dtype):
        raise TypeError(
            f"{name} must have a real floating or integer dtype, got {arr.dtype}"
        )
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{name} must be {want}, got shape {tuple(arr.shape)}")
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must be at least {min_ndim}-D, got shape {tuple(arr.shape)}"
        )
    if nonempty and arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(arr.shape)}")
    return arr


def as_float_array(
    value: Any,
    *,
    name: str,
    ndim: int | tuple[int, ...] | None = None,
    finite: bool = True,
    nonempty: bool = False,
    min_ndim: int = 0,
) -> jax.Array:
    """Convert ``value`` to a floating JAX array, checking its dtype, dimension and
    finiteness.

    Integer inputs are promoted to the default float dtype; boolean, complex, string and
    object inputs (and None) are rejected with a ``TypeError`` naming ``name``. ``ndim``
    is the allowed number of dimensions (an int or a tuple of ints), ``min_ndim`` the
    least one; ``nonempty`` requires at least one entry. Traced inputs are returned as
    they are (promoted to float), after the dtype and shape checks.
    """
    arr = _real_array(value, name=name, ndim=ndim, min_ndim=min_ndim, nonempty=nonempty)
    if is_traced(arr):
        return (
            arr
            if jnp.issubdtype(arr.dtype, jnp.floating)
            else arr.astype(float_dtype())
        )
    host = np.asarray(arr)
    if not jnp.issubdtype(host.dtype, jnp.floating):
        host = host.astype(float_dtype())
        arr = host
    if finite and not np.all(np.isfinite(host)):
        raise ValueError(f"{name} must be finite, but it contains NaN or infinity")
    # device_put, not jnp.asarray: the latter compiles a small program for every new
    # shape
    return arr if isinstance(arr, jax.Array) else jax.device_put(arr)


def as_host_float_array(
    value: Any,
    *,
    name: str,
    ndim: int | tuple[int, ...] | None = None,
    finite: bool = True,
    nonempty: bool = False,
) -> np.ndarray:
    """The checks of :func:`as_float_array`, returning a float64 NumPy array (for
    functions
    that compute on the host: no JAX dtype canonicalization, nothing compiled)."""
    if is_traced(value):
        raise TypeError(
            f"{name} must be a concrete array (this function runs in NumPy, not under "
            "jit/vmap/grad)"
        )
    arr = np.array(
        _real_array(value, name=name, ndim=ndim, min_ndim=0, nonempty=nonempty),
        dtype=np.float64,
    )
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, but it contains NaN or infinity")
    return arr


def as_class_labels(
    labels: Any, *, n: int, num_classes: int | None = None, name: str = "labels"
) -> tuple[np.ndarray, int]:
    """Integer class labels of shape (n,) taking every value 0..C-1, C >= 2, as a NumPy
    array.

    C is ``num_classes`` when given (e.g. the number of logits), else the largest
    label + 1. Returns (labels, C).
    """
    if labels is None or isinstance(labels, (str, bytes, dict)):
        raise TypeError(
            f"{name} must be an integer array of shape (n,), got "
            f"{type(labels).__name__}"
        )
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != n or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(
            f"{name} must be integers of shape ({n},), got {y.dtype} {y.shape}"
        )
    c = int(y.max()) + 1 if num_classes is None else int(num_classes)
    if c < 2 or y.min() < 0 or y.max() >= c or np.unique(y).size != c:
        raise ValueError(
            f"{name} must take every value 0..C-1 with C = {c} >= 2 (every class "
            f"present), got values {np.unique(y)}"
        )
    return y, c


def host_ravel(tree: Any) -> np.ndarray:
    """The leaves of a pytree as one NumPy vector, in ``ravel_pytree`` order, on the
    host (eager JAX ops would compile a program for every new shape)."""
    return np.concatenate(
        [np.ravel(np.asarray(leaf)) for leaf in jax.tree_util.tree_leaves(tree)]
    )


def check_broadcastable(**arrays: Any) -> tuple[int, ...]:
    """The common broadcast shape of the named arrays; ``ValueError`` naming them if
    there is none.
    """
    shapes = {name: tuple(np.shape(a)) for name, a in arrays.items()}
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(
            f"{', '.join(shapes)} must broadcast against each other, got shapes "
            f"{listed}"
        ) from None


def check_same_structure(
    value: Any, reference: Any, *, name: str, reference_name: str
) -> None:
    """Require the pytree ``value`` to have the structure and leaf shapes of
    ``reference``.
    """
    if jax.tree_util.tree_structure(value) != jax.tree_util.tree_structure(reference):
        raise ValueError(f"{name} must have the pytree structure of {reference_name}")
    for leaf, ref in zip(
        jax.tree_util.tree_leaves(value), jax.tree_util.tree_leaves(reference)
    ):
        if np.shape(leaf) != np.shape(ref):
            raise ValueError(
                f"{name} must have the leaf shapes of {reference_name}, got "
                f"{np.shape(leaf)} where "
                f"{reference_name} has {np.shape(ref)}"
            )


def check_range(
    value: Any,
    *,
    name: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    what: str = "",
) -> None:
    """Raise ``ValueError`` unless every entry of a concrete array lies in the given
    interval.

    Traced arrays are not checked (their values are unknown). ``what`` names what the
    argument is (e.g. "a variance") in the message.
    """
    host = concrete(value)
    if host is None or host.size == 0:
        return
    bad = np.zeros(host.shape, dtype=bool)
    if lo is not None:
        bad |= host <= lo if lo_open else host < lo
    if hi is not None:
        bad |= host >= hi if hi_open else host > hi
    if np.any(bad):
        if hi is None:
            want = f"{'>' if lo_open else '>='} {lo:g}"
        elif lo is None:
            want = f"{'<' if hi_open else '<='} {hi:g}"
        else:
            left, right = "(" if lo_open else "[", ")" if hi_open else "]"
            want = f"lie in {left}{lo:g}, {hi:g}{right}"
        first = host[bad].ravel()[0]
        raise ValueError(
            f"{name} must be {want}{f' ({what})' if what else ''}, got {first:g}"
        )


def check_positive_int(value: Any, *, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an ``int``, requiring an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_real(
    value: Any,
    *,
    name: str,
    positive: bool = False,
    nonnegative: bool = False,
    at_most: float | None = None,
) -> float:
    """Return ``value`` as a finite Python float, optionally > 0 or >= 0, and <=
    ``at_most``.
    """
    if isinstance(value, bool) or not isinstance(
        value, (numbers.Real, np.floating, np.integer)
    ):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if not np.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value}")
    if positive and out <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    if nonnegative and out < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    if at_most is not None and out > at_most:
        raise ValueError(f"{name} must be <= {at_most:g}, got {value}")
    return out


def check_choice(value: Any, choices: Sequence[str], *, name: str) -> str:
    """Return ``value`` if it is one of the strings ``choices``."""
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a string, one of {', '.join(map(repr, choices))}; got "
            f"{value!r}"
        )
    if value not in choices:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}"
        )
    return value


def check_key(key: Any, *, name: str = "key") -> jax.Array:
    """Require a JAX PRNG key: ``jax.random.key(seed)`` or a legacy uint32 key of shape
    (2,).
    """
    if isinstance(key, jax.Array) and (
        jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
        and key.ndim == 0
        or key.dtype == jnp.uint32
        and key.shape == (2,)
    ):
        return key
    got = (
        f"shape {tuple(key.shape)} dtype {key.dtype}"
        if isinstance(key, jax.Array)
        else type(key).__name__
    )
    raise TypeError(
        f"{name} must be a single JAX PRNG key, e.g. jax.random.key(0), got {got}"
    )


def check_callable(f: Any, *, name: str, what: str) -> None:
    """Require a callable; ``what`` describes its expected signature in the message."""
    if not callable(f):
        raise TypeError(f"{name} must be {what}, got {type(f).__name__}")


def check_inputs_pair(
    x1: Any, x2: Any, *, dim: int | None = None
) -> tuple[jax.Array, jax.Array]:
    """Validate two batches of inputs of shapes (n1, d) and (n2, d); ``x2=None`` means
    ``x1``.
    """
    a = as_float_array(x1, name="x1", ndim=2)
    b = a if x2 is None else as_float_array(x2, name="x2", ndim=2)
    if a.shape[1] == 0:
        raise ValueError(
            "x1 must have at least one column (input dimension >= 1), got shape "
            f"{tuple(a.shape)}"
        )
    if b.shape[1] != a.shape[1]:
        raise ValueError(
            f"x1 and x2 must have the same input dimension, got {a.shape[1]} and "
            f"{b.shape[1]}"
        )
    if dim is not None and a.shape[1] != dim:
        raise ValueError(
            f"x1: inputs must have {dim} columns (the network's input dimension), got "
            f"shape {tuple(a.shape)}"
        )
    return a, b


def check_model(f: Any, *, name: str = "f") -> None:
    """Require a callable model f(params, x)."""
    check_callable(f, name=name, what="a function f(params, x)")


def check_params_pytree(params: Any, *, name: str = "params") -> None:
    """Require a pytree with at least one leaf, every leaf a floating array, finite if
    concrete.
    """
    leaves = jax.tree_util.tree_leaves(params)
    if not leaves:
        raise ValueError(f"{name} must contain at least one array, got {params!r}")
    for leaf in leaves:
        if isinstance(leaf, (str, bytes)):
            raise TypeError(
                f"every leaf of {name} must be a floating array, got "
                f"{type(leaf).__name__}"
            )
        dtype = leaf.dtype if hasattr(leaf, "dtype") else np.asarray(leaf).dtype
        if jnp.issubdtype(dtype, np.object_) or not jnp.issubdtype(dtype, jnp.floating):
            raise TypeError(
                f"every leaf of {name} must be a floating array, got dtype {dtype}"
            )
        host = concrete(leaf)
        if host is not None and not np.all(np.isfinite(host)):
            raise ValueError(
                f"{name} must be finite, but a leaf contains NaN or infinity"
            )


def warn_if_below_precision(
    tol: float,
    dtype: Any,
    *,
    name: str = "tol",
    scale: float = 1.0,
    factor: float = 4.0,
) -> None:
    """Warn (:class:`NumericalWarning`) when a tolerance is within ``factor`` units of
    rounding of ``dtype`` at the magnitude ``scale`` (1 for a relative tolerance): such
    a tolerance cannot be met, or the result cannot be trusted to it."""
    dtype = np.dtype(dtype)
    floor = factor * float(np.finfo(dtype).eps) * scale
    if tol < floor:
        hint = (
            "; enable float64 with lecturekit.notebook.setup()"
            if dtype.itemsize < 8
            else ""
        )
        warn_numerical(
            f"{name} = {tol:g} is below what {dtype.name} arithmetic resolves here "
            f"({floor:.2g}): "
            f"the result cannot be that accurate{hint}",
            stacklevel=4,
        )


def check_widths(widths: Any, *, name: str = "widths") -> tuple[int, ...]:
    """Return ``widths`` as a tuple of positive ints; TypeError/ValueError naming
    ``name``.
    """
    if isinstance(widths, (str, bytes)) or not isinstance(
        widths, (Sequence, np.ndarray)
    ):
        raise TypeError(
            f"{name} must be a sequence of positive integers, got {widths!r}"
        )
    out = tuple(
        check_positive_int(n, name=f"{name}[{i}]") for i, n in enumerate(widths)
    )
    if not out:
        raise ValueError(f"{name} must contain at least one width")
    return out


def check_sequence(value: Any, *, name: str, what: str) -> None:
    """Require a sequence (any iterable but a string); ``what`` describes it in the
    message."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be {what}, got {value!r}")
