"""First-cell setup shared by every chapter.

``setup()`` switches JAX to float64 (the book's default precision: Monte Carlo checks
compare against closed forms to many digits) and applies the book's figure style. It is
called explicitly in each chapter's first cell; importing lecturekit changes nothing.
"""

from __future__ import annotations

import jax

from . import plotting


def setup(*, float64: bool = True) -> None:
    """Enable float64 in JAX (unless ``float64=False``) and the book's matplotlib style."""
    if not isinstance(float64, bool):
        raise TypeError(f"float64 must be True or False, got {float64!r}")
    jax.config.update("jax_enable_x64", bool(float64))
    plotting.use_book_style()
