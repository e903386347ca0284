"""Automatic checks for the chapters' exercises, one submodule per chapter.

A check either prints a short confirmation or raises :class:`ExerciseCheckError` (an
``AssertionError``) whose message says what is wrong and gives a hint, never a bare
"False". Checks compare a learner's function or number against an independent
reference computed here, with tolerances stated in the message.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


class ExerciseCheckError(AssertionError):
    """Raised by a ``check_*`` function when a learner's answer is wrong."""


def passed(message: str) -> None:
    """Report success: print the message (a check that fails raises ExerciseCheckError instead).

    Returns None, so that a notebook cell ending with a check shows the message and no value.
    """
    print(f"Correct: {message}")


def require_callable(candidate: Any, *, what: str) -> None:
    """Raise ExerciseCheckError unless ``candidate`` is a function (or another callable)."""
    if not callable(candidate):
        raise ExerciseCheckError(f"{what} should be a function, got {_describe(candidate)}")


def call(fn: Callable, *args: Any, what: str) -> Any:
    """Return ``fn(*args)``, turning an exception raised by the learner's code into a clear error.

    A ``NotImplementedError`` (the student edition's stub, or a body left as ``raise
    NotImplementedError``) says the exercise is not done yet. Any other exception is reported
    with its type and message, chained so that the learner's own traceback stays visible.
    """
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseCheckError(
            f"{what} is not implemented yet: replace the `raise NotImplementedError` in the exercise "
            "cell by your solution, run that cell, then run this check again."
        ) from None
    except Exception as err:  # noqa: BLE001  (any failure of the learner's code is reported)
        raise ExerciseCheckError(f"{what} raised {type(err).__name__}: {err}") from err


def call_numeric(fn: Callable, *args: Any, what: str) -> np.ndarray:
    """``call`` followed by ``as_numbers``: a non-numeric result is reported under ``what`` too."""
    return as_numbers(call(fn, *args, what=what), what=what)


def as_numbers(value: Any, *, what: str) -> np.ndarray:
    """``value`` as a float64 NumPy array, or an ExerciseCheckError that names ``what``."""
    if value is None:
        raise ExerciseCheckError(f"{what}: got None. Does your function end with a `return` statement?")
    if value is NotImplemented or isinstance(value, (str, bytes)):
        raise ExerciseCheckError(f"{what}: expected real numbers, got {_describe(value)}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseCheckError(f"{what}: expected real numbers, got {_describe(value)}") from None


def as_scalar(value: Any, *, what: str) -> float:
    """``value`` as one float (a size-1 array is accepted), or an ExerciseCheckError."""
    arr = as_numbers(value, what=what)
    if arr.size != 1:
        raise ExerciseCheckError(f"{what}: expected a single number, got an array of shape {arr.shape}")
    return float(arr.reshape(()))


def compare(
    got: Any,
    expected: Any,
    *,
    what: str,
    rtol: float = 1e-6,
    atol: float = 0.0,
    hint: str = "",
) -> None:
    """Raise ExerciseCheckError explaining the mismatch unless got ~= expected."""
    g = as_numbers(got, what=what)
    e = np.asarray(expected, dtype=float)
    suffix = f" Hint: {hint}" if hint else ""
    if g.shape != e.shape:
        raise ExerciseCheckError(f"{what}: expected shape {e.shape}, got {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ExerciseCheckError(f"{what}: your result contains NaN or infinity." + suffix)
    if not np.allclose(g, e, rtol=rtol, atol=atol):
        worst = int(np.argmax(np.abs(g - e) - rtol * np.abs(e)))
        raise ExerciseCheckError(
            f"{what}: got {g.ravel()[worst]:.6g} where {e.ravel()[worst]:.6g} was expected "
            f"(tolerance rtol={rtol:g}, atol={atol:g})." + suffix
        )


def _describe(value: Any) -> str:
    """A short description of a wrong value for error messages: its type, and the value if short."""
    if value is None or value is NotImplemented:
        return repr(value)
    text, kind = repr(value), type(value).__name__
    return f"{kind} {text}" if len(text) <= 40 and not text.startswith("<") else kind
