"""First-cell setup shared by every chapter, and the chapters' progress bars.

:func:`setup` switches JAX to float64 (the book's default precision: Monte Carlo checks
compare against closed forms to many digits) and applies the book's figure style. It is
called explicitly in each chapter's first cell; importing lecturekit changes nothing.

:func:`tqdm` is ``tqdm.auto.tqdm`` (a widget in JupyterLab, text in a terminal) that
honours the environment variable ``TQDM_DISABLE``, which the headless runs of ``make
test`` and ``make book`` set: tqdm's own notebook bar ignores it, and its output would
otherwise land in the chapter's outputs and the HTML.
"""

from __future__ import annotations

import os

import jax

from . import figure_checks, plotting

__all__ = ["setup", "tqdm"]

AUDIT_VARIABLE = "LECTUREKIT_AUDIT_FIGURES"


def setup(*, float64: bool = True) -> None:
    """Enable float64 in JAX (unless ``float64=False``) and the book's matplotlib style.

    Every chapter calls it in its first cell; importing lecturekit changes no global
    configuration. With the environment variable ``LECTUREKIT_AUDIT_FIGURES`` set
    (``make test`` and ``make book`` set it), every figure the notebook displays is
    checked by
    :mod:`lecturekit.figure_checks` and each problem is printed to stderr; the test run
    fails the cell that printed it.

    Args:
        float64: True (the default) enables ``jax_enable_x64``; False switches it off.

    Raises:
        TypeError: if ``float64`` is not a bool.

    Example:
        >>> notebook.setup()
        >>> jnp.zeros(2).dtype
        dtype('float64')
    """
    if not isinstance(float64, bool):
        raise TypeError(f"float64 must be True or False, got {float64!r}")
    jax.config.update("jax_enable_x64", bool(float64))
    plotting.use_book_style()
    if _flag(AUDIT_VARIABLE):
        figure_checks.install()


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def _bars_disabled() -> bool:
    return _flag("TQDM_DISABLE")


def tqdm(*args, **kwargs):
    """A progress bar: ``tqdm.auto.tqdm(*args, **kwargs)``, silent when ``TQDM_DISABLE``
    is set.

    The environment variable is read at each call (tqdm itself reads it once, at import,
    and its notebook bar ignores it); an explicit ``disable=`` wins.

    Args:
        *args: passed to ``tqdm.auto.tqdm`` (usually the iterable).
        **kwargs: passed to ``tqdm.auto.tqdm``.

    Returns:
        The tqdm progress bar, an iterable over ``args[0]``.

    Example:
        >>> sum(notebook.tqdm(range(4), disable=True))
        6
    """
    from tqdm.auto import tqdm as auto_tqdm

    # read now: tqdm reads TQDM_* once, at import
    kwargs.setdefault("disable", _bars_disabled())
    return auto_tqdm(*args, **kwargs)
