"""Automatic checks for the chapters' exercises, one submodule per chapter.

A check either prints a short confirmation or raises :class:`ExerciseCheckError` (an
``AssertionError``) whose message says what is wrong and gives a hint, never a bare
"False". Checks compare a learner's function or number against an independent
reference computed here, with tolerances stated in the message.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class ExerciseCheckError(AssertionError):
    """Raised by a ``check_*`` function when a learner's answer is wrong."""


def passed(message: str) -> bool:
    """Report success (printed so it shows in the notebook) and return True."""
    print(f"Correct: {message}")
    return True


def require_callable(candidate: Any, *, what: str) -> None:
    if not callable(candidate):
        raise ExerciseCheckError(f"{what} should be a function, got {type(candidate).__name__}")


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
    try:
        g = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseCheckError(f"{what}: expected numbers, got {type(got).__name__}") from None
    e = np.asarray(expected, dtype=float)
    if g.shape != e.shape:
        raise ExerciseCheckError(f"{what}: expected shape {e.shape}, got {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ExerciseCheckError(f"{what}: your result contains NaN or infinity")
    if not np.allclose(g, e, rtol=rtol, atol=atol):
        worst = int(np.argmax(np.abs(g - e) - rtol * np.abs(e)))
        raise ExerciseCheckError(
            f"{what}: got {g.ravel()[worst]:.6g} where {e.ravel()[worst]:.6g} was expected "
            f"(tolerance rtol={rtol:g}, atol={atol:g})." + (f" Hint: {hint}" if hint else "")
        )
