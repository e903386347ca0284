"""Automatic checks for the chapters' exercises, one submodule per chapter.

A check either prints a short confirmation or raises :class:`ExerciseCheckError` (an
``AssertionError``) whose message says what is wrong and gives a hint, never a bare
"False". Checks compare a learner's function or number against an independent
reference computed here, with tolerances stated in the message.

The chapters call ``exercises.ch01.check_...`` and so on. The helpers below are for
writing a new check: call the learner's code through :func:`call` (or
:func:`call_numeric`), compare with :func:`compare`, and end with :func:`passed`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "ExerciseCheckError",
    "passed",
    "require_callable",
    "call",
    "call_numeric",
    "as_numbers",
    "as_scalar",
    "compare",
]


class ExerciseCheckError(AssertionError):
    """Raised by a ``check_*`` function when a learner's answer is wrong.

    A subclass of ``AssertionError``; its message says what is wrong and how to fix it.

    Example:
        >>> try:
        ...     exercises.compare(0.25, 0.5, what="the slope")
        ... except exercises.ExerciseCheckError as err:
        ...     print(err)
        the slope: got 0.25 where 0.5 was expected (tolerance rtol=1e-06, atol=0).
    """


def passed(message: str) -> None:
    """Report success: print the message (a check that fails raises ExerciseCheckError
    instead).

    Returns None, so that a notebook cell ending with a check shows the message and no
    value.

    Args:
        message: what the learner got right, printed after "Correct: ".

    Example:
        >>> exercises.passed("the slope is -1/2.")
        Correct: the slope is -1/2.
    """
    print(f"Correct: {message}")


def require_callable(candidate: Any, *, what: str) -> None:
    """Raise :class:`ExerciseCheckError` unless ``candidate`` is a function (or another
    callable).

    Args:
        candidate: the learner's answer.
        what: its name in the message.

    Example:
        >>> exercises.require_callable(3, what="sine_ntk")
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: sine_ntk should be a function...
    """
    if not callable(candidate):
        raise ExerciseCheckError(
            f"{what} should be a function, got {_describe(candidate)}"
        )


def call(fn: Callable, *args: Any, what: str) -> Any:
    """Return ``fn(*args)``, turning an exception raised by the learner's code into a
    clear error.

    A ``NotImplementedError`` (the student edition's stub, or a body left as ``raise
    NotImplementedError``) says the exercise is not done yet. Any other exception is
    reported with its type and message, chained so that the learner's own traceback
    stays visible.

    Args:
        fn: the learner's function.
        *args: its arguments.
        what: its name in the messages.

    Returns:
        What ``fn(*args)`` returns.

    Example:
        >>> exercises.call(lambda x: 2 * x, 3, what="double")
        6
        >>> exercises.call(lambda x: 1 / 0, 3, what="your kernel")
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: your kernel raised ...
    """
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseCheckError(
            f"{what} is not implemented yet: replace the `raise NotImplementedError` "
            "in the exercise "
            "cell by your solution, run that cell, then run this check again."
        ) from None
    except Exception as err:  # noqa: BLE001  (any failure of the learner's code is reported)
        raise ExerciseCheckError(f"{what} raised {type(err).__name__}: {err}") from err


def call_numeric(fn: Callable, *args: Any, what: str) -> np.ndarray:
    """:func:`call` followed by :func:`as_numbers`: a non-numeric result is reported
    under ``what`` too.

    Args:
        fn: the learner's function.
        *args: its arguments.
        what: its name in the messages.

    Returns:
        The result as a float64 NumPy array.

    Example:
        >>> exercises.call_numeric(lambda x: [x, 2 * x], 1.5, what="f")
        array([1.5, 3. ])
    """
    return as_numbers(call(fn, *args, what=what), what=what)


def as_numbers(value: Any, *, what: str) -> np.ndarray:
    """``value`` as a float64 NumPy array, or an :class:`ExerciseCheckError` that names
    ``what``.

    Args:
        value: the learner's result.
        what: its name in the message.

    Returns:
        A float64 NumPy array.

    Example:
        >>> exercises.as_numbers([1, 2], what="K")
        array([1., 2.])
        >>> exercises.as_numbers(None, what="K")
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: K: got None. Does your function ...
    """
    if value is None:
        raise ExerciseCheckError(
            f"{what}: got None. Does your function end with a `return` statement?"
        )
    if value is NotImplemented or isinstance(value, (str, bytes)):
        raise ExerciseCheckError(
            f"{what}: expected real numbers, got {_describe(value)}"
        )
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseCheckError(
            f"{what}: expected real numbers, got {_describe(value)}"
        ) from None


def as_scalar(value: Any, *, what: str) -> float:
    """``value`` as one float (a size-1 array is accepted), or
    an :class:`ExerciseCheckError`.

    Args:
        value: the learner's result.
        what: its name in the message.

    Returns:
        A Python float.

    Example:
        >>> exercises.as_scalar(np.array([2.0]), what="slope")
        2.0
        >>> exercises.as_scalar([1.0, 2.0], what="slope")
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: slope: expected a single number...
    """
    arr = as_numbers(value, what=what)
    if arr.size != 1:
        raise ExerciseCheckError(
            f"{what}: expected a single number, got an array of shape {arr.shape}"
        )
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
    """Raise :class:`ExerciseCheckError` explaining the mismatch unless got ~= expected.

    The test is ``np.allclose(got, expected, rtol=rtol, atol=atol)`` after checking the
    shape and finiteness; the message shows the worst entry and the tolerance.

    Args:
        got: the learner's numbers.
        expected: the reference numbers (same shape).
        what: the name of the quantity in the message.
        rtol: relative tolerance.
        atol: absolute tolerance.
        hint: a sentence appended to the message.

    Example:
        >>> exercises.compare([1.0, 2.0], [1.0, 2.0 + 1e-9], what="K")
        >>> exercises.compare(0.49, 0.5, what="slope", rtol=1e-3,
        ...                   hint="fit on log-log axes.")
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: slope: got 0.49 where 0.5 was ...
    """
    g = as_numbers(got, what=what)
    e = np.asarray(expected, dtype=float)
    suffix = f" Hint: {hint}" if hint else ""
    if g.shape != e.shape:
        raise ExerciseCheckError(f"{what}: expected shape {e.shape}, got {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ExerciseCheckError(
            f"{what}: your result contains NaN or infinity." + suffix
        )
    if not np.allclose(g, e, rtol=rtol, atol=atol):
        worst = int(np.argmax(np.abs(g - e) - rtol * np.abs(e)))
        raise ExerciseCheckError(
            f"{what}: got {g.ravel()[worst]:.6g} where {e.ravel()[worst]:.6g} was "
            "expected "
            f"(tolerance rtol={rtol:g}, atol={atol:g})." + suffix
        )


def _describe(value: Any) -> str:
    """A short description of a wrong value for error messages: its type, and the value
    if short.
    """
    if value is None or value is NotImplemented:
        return repr(value)
    text, kind = repr(value), type(value).__name__
    return f"{kind} {text}" if len(text) <= 40 and not text.startswith("<") else kind
