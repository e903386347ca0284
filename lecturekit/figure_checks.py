"""Checks that a matplotlib figure can be read: the rules every figure of the book
follows.

:func:`problems` returns a list of human-readable problems (empty when the figure
passes):

- **axis labels**: every visible axes (colour bars aside) has an x and a y label, or
  shares that axis with a labelled neighbour, or the figure has a
  ``supxlabel``/``supylabel``;
- **math, not raw text**: labels, titles and legend entries have no ``_`` or ``^``
  outside math mode (a label ``"lambda_t"`` prints its underscore literally; the
  subscript needs the label written in math mode, between dollar signs, as a raw
  string);
- **colour limits**: every colour-mapped artist (image, mesh, scatter with ``c=``) has
  finite limits with vmin < vmax;
- **categories**: colour data made of a few integer codes (2 to 12 distinct integers) is
  drawn with discrete colours (a ``ListedColormap`` with at most 12 colours, or a
  ``BoundaryNorm``), not a continuous colour map on which neighbouring codes are hard to
  tell apart or, with the wrong limits, identical;
- **legends**: in an axes with a legend (or a figure with one), every line and scatter
  series has a label that appears in it (reference lines included); an axes that draws
  two or more differently styled lines has a legend, a colour bar, or text annotations
  naming them.

:func:`install` runs these checks on every figure that IPython displays (the inline
backend's PNG formatter) and prints each problem to stderr as ``Figure check
failed: ...``. The test run of the chapters (``make test``, with
``LECTUREKIT_AUDIT_FIGURES=1``) fails a cell that prints one;
see :func:`lecturekit.notebook.setup`.
"""

from __future__ import annotations

import re
import sys

import matplotlib.colors as mcolors
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.contour import ContourSet
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

__all__ = ["problems", "report", "install", "MARKER"]

MARKER = "Figure check failed"
"""The prefix of every line :func:`report` prints: the test run looks for it in a
cell's output."""
MAX_CATEGORIES = 12
_MATH = re.compile(r"\$[^$]*\$")


def _is_colorbar(ax: Axes) -> bool:
    return ax.get_label() == "<colorbar>" or getattr(ax, "_colorbar", None) is not None


def _name(fig: Figure, ax: Axes) -> str:
    title = ax.get_title() or ax.get_ylabel() or ax.get_xlabel()
    index = fig.axes.index(ax)
    return f"axes {index}" + (f" ({title!r})" if title else "")


def _raw_markup(text: str) -> bool:
    """True if `text` has _ or ^ outside $...$ (matplotlib then prints them
    literally).
    """
    return bool(re.search(r"[_^]", _MATH.sub("", text)))


def _label_problems(fig: Figure, ax: Axes) -> list[str]:
    out = []
    for axis, get, siblings, sup in (
        ("x", Axes.get_xlabel, ax.get_shared_x_axes().get_siblings(ax), fig._supxlabel),
        ("y", Axes.get_ylabel, ax.get_shared_y_axes().get_siblings(ax), fig._supylabel),
    ):
        if get(ax) or sup is not None and sup.get_text():
            continue
        if not any(get(other) for other in siblings if other is not ax):
            out.append(f"{_name(fig, ax)} has no {axis} label")
    for what, text in (
        ("x label", ax.get_xlabel()),
        ("y label", ax.get_ylabel()),
        ("title", ax.get_title()),
    ):
        if _raw_markup(text):
            out.append(
                f"{_name(fig, ax)}: {what} {text!r} has _ or ^ outside $...$ (use math)"
            )
    return out


def _mappables(ax: Axes) -> list:
    candidates = list(ax.images) + list(ax.collections)
    return [
        m
        for m in candidates
        if getattr(m, "get_array", None) and m.get_array() is not None
    ]


def _colour_problems(fig: Figure, ax: Axes) -> list[str]:
    out = []
    for m in _mappables(ax):
        array = np.ma.asarray(m.get_array(), dtype=float)
        if array.ndim == 3:  # an RGB(A) image: its colours are given, not mapped
            continue
        data = np.ma.masked_invalid(array).compressed()
        if data.size == 0:
            continue
        norm = m.norm
        vmin, vmax = norm.vmin, norm.vmax
        kind = type(m).__name__
        if (
            vmin is None
            or vmax is None
            or not (np.isfinite(vmin) and np.isfinite(vmax))
        ):
            out.append(
                f"{_name(fig, ax)}: {kind} has non-finite colour limits ({vmin}, "
                f"{vmax})"
            )
            continue
        if not vmin < vmax and np.ptp(data) > 0:
            out.append(
                f"{_name(fig, ax)}: {kind} has colour limits vmin = {vmin} >= vmax = "
                f"{vmax}"
            )
        if isinstance(m, ContourSet):  # contour levels are values, not categories
            continue
        codes = np.unique(data)
        categorical = 2 <= codes.size <= MAX_CATEGORIES and np.all(
            codes == np.round(codes)
        )
        discrete = isinstance(norm, mcolors.BoundaryNorm) or (
            isinstance(m.cmap, mcolors.ListedColormap) and m.cmap.N <= MAX_CATEGORIES
        )
        if categorical and not discrete:
            out.append(
                f"{_name(fig, ax)}: {kind} colours {codes.size} integer codes "
                f"{codes.tolist()} with the continuous map {m.cmap.name!r}; draw "
                "categories with "
                "discrete colours (plotting.phase_diagram(..., categories=...), or a "
                "ListedColormap with a BoundaryNorm)"
            )
    return out


def _series(ax: Axes) -> list:
    """Lines and scatter series of `ax` that are not parts of a container (errorbars,
    bars).
    """
    in_containers = set()
    for container in ax.containers:
        stack = list(container)
        while stack:
            item = stack.pop()
            if isinstance(item, (tuple, list)):
                stack.extend(item)
            elif item is not None:
                in_containers.add(id(item))
    lines = [a for a in ax.get_lines() if a.get_visible() and len(a.get_xdata()) > 0]
    scatters = [
        c for c in ax.collections if isinstance(c, PathCollection) and c.get_visible()
    ]
    return [a for a in lines + scatters if id(a) not in in_containers]


def _style(artist) -> tuple:
    if isinstance(artist, Line2D):
        return (
            mcolors.to_hex(artist.get_color()),
            artist.get_linestyle(),
            artist.get_marker(),
        )
    return ("scatter", id(artist))


def _legend_problems(fig: Figure, ax: Axes, has_colorbar: bool) -> list[str]:
    legends = [leg for leg in [ax.get_legend(), *fig.legends] if leg is not None]
    entries = {t.get_text() for leg in legends for t in leg.get_texts()}
    out = [
        f"{_name(fig, ax)}: legend entry {e!r} has _ or ^ outside $...$ (use math)"
        for e in sorted(entries)
        if _raw_markup(e)
    ]
    series = _series(ax)
    if ax.get_legend() is not None or (fig.legends and ax in fig.axes):
        if not legends:
            return out
        named = {_style(a) for a in series if a.get_label() in entries}
        for artist in series:
            label = artist.get_label()
            if label.startswith("_") and _style(artist) in named:
                continue  # another member of the same ensemble (same style) is named
            if label.startswith("_") or label not in entries:
                kind = "line" if isinstance(artist, Line2D) else "scatter series"
                what = (
                    "has no label"
                    if label.startswith("_")
                    else f"{label!r} is not in the legend"
                )
                out.append(
                    f"{_name(fig, ax)}: a {kind} ({_style(artist)[0]}) {what}; "
                    "every series in an axes with a legend must be named in it"
                )
        return out
    styles = {
        _style(a) for a in series if not isinstance(a, Line2D) or len(a.get_xdata()) > 1
    }
    if len(styles) >= 2 and not has_colorbar and not ax.texts:
        out.append(
            f"{_name(fig, ax)}: {len(styles)} differently styled series and no legend, "
            "colour bar or text naming them"
        )
    return out


def problems(fig: Figure) -> list[str]:
    """Everything that makes ``fig`` hard to read by the book's rules (see the module
    docstring).

    Args:
        fig: a matplotlib Figure.

    Returns:
        A list of problems, one sentence each naming the axes; empty if the figure
        passes.

    Raises:
        TypeError: if ``fig`` is not a Figure.

    Example:
        >>> fig, ax = plt.subplots()
        >>> _ = ax.plot([1, 2], [3, 4])
        >>> figure_checks.problems(fig)
        ['axes 0 has no x label', 'axes 0 has no y label']
        >>> _ = ax.set_xlabel("width"), ax.set_ylabel("top eigenvalue")
        >>> figure_checks.problems(fig)
        []
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    has_colorbar = any(_is_colorbar(ax) for ax in fig.axes)
    out = []
    for ax in fig.axes:
        if _is_colorbar(ax) or not ax.get_visible():
            continue
        out += _colour_problems(fig, ax)
        if not ax.axison:
            continue
        out += _label_problems(fig, ax)
        out += _legend_problems(fig, ax, has_colorbar)
    return out


def report(fig: Figure, stream=None) -> list[str]:
    """Print each problem of ``fig`` to ``stream`` (default stderr)
    after :data:`MARKER`.

    Args:
        fig: a matplotlib Figure.
        stream: a text stream (default ``sys.stderr``).

    Returns:
        The problems, as :func:`problems` returns them.

    Example:
        >>> import sys
        >>> fig, ax = plt.subplots()
        >>> _ = ax.set_xlabel("width"), ax.set_ylabel("lambda_max")
        >>> _ = figure_checks.report(fig, stream=sys.stdout)
        Figure check failed: axes 0 ('lambda_max'): y label 'lambda_max' has _ or ...
    """
    found = problems(fig)
    for problem in found:
        print(f"{MARKER}: {problem}", file=stream or sys.stderr)
    return found


def install() -> bool:
    """Check every figure IPython displays (wraps the PNG formatter); False outside
    IPython.

    Each problem of a displayed figure is printed by :func:`report`. Returns True once
    the formatter is wrapped (calling it again changes nothing), False when there is no
    IPython shell or no PNG formatter for figures.

    The inline backend registers its formatter when pyplot first resolves its backend,
    and
    again if the backend is reconfigured: so the backend is resolved here first, and the
    wrapper is re-applied before each cell's figures are flushed (a ``post_execute``
    callback that runs before the backend's own).

    Example:
        >>> figure_checks.install()  # in a plain Python process: no IPython shell
        False
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book
        return False
    shell = get_ipython()
    if shell is None:
        return False
    import matplotlib.pyplot as plt

    # resolves the backend: the inline one registers its formatter
    plt.close(plt.figure())
    callbacks = shell.events.callbacks["post_execute"]
    if _rewrap not in callbacks:
        callbacks.insert(0, _rewrap)
    return _wrap_formatter(shell)


def _rewrap() -> None:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        _wrap_formatter(shell)


def _wrap_formatter(shell) -> bool:
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        render = formatter.lookup_by_type(Figure)
    except KeyError:
        return False
    if getattr(render, "_lecturekit_checked", False):
        return True

    def checked_render(fig, *args, **kwargs):
        report(fig)
        return render(fig, *args, **kwargs)

    checked_render._lecturekit_checked = True
    formatter.for_type(Figure, checked_render)
    return True
