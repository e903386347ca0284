"""Argument checks shared by the modules of :mod:`lecturekit.implicit_bias`."""

from __future__ import annotations

import jax
from jax.typing import ArrayLike

from .._validation import as_float_array, check_positive_int


def check_regression(X: ArrayLike, y: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """A design X of shape (N, d) and targets y of shape (N,), as float arrays."""
    Xa = as_float_array(X, name="X", ndim=2)
    ya = as_float_array(y, name="y", ndim=1)
    if ya.shape[0] != Xa.shape[0]:
        raise ValueError(
            f"y must have one entry per row of X ({Xa.shape[0]}), got {ya.shape[0]}"
        )
    return Xa, ya


def check_run_length(steps: int, burn_in: int) -> tuple[int, int]:
    """``steps`` >= 1 and 0 <= ``burn_in`` < ``steps`` (a time average needs a step
    after burn-in).
    """
    n_steps = check_positive_int(steps, name="steps")
    n_burn = check_positive_int(burn_in, name="burn_in", minimum=0)
    if n_burn >= n_steps:
        raise ValueError(
            f"burn_in must be < steps, got burn_in={burn_in}, steps={steps}"
        )
    return n_steps, n_burn
