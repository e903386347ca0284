"""One figure style for the whole book and the plot types that recur across chapters."""

from __future__ import annotations

from typing import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from jax.typing import ArrayLike

from ._validation import as_host_float_array, check_range
from .stats import fit_loglog

BOOK_STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "image.cmap": "viridis",
    "axes.prop_cycle": mpl.cycler(
        color=["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"]
    ),
}


def use_book_style() -> None:
    """Apply the book's matplotlib rc settings."""
    mpl.rcParams.update(BOOK_STYLE)


def _axes(ax: plt.Axes | None) -> plt.Axes:
    return plt.subplots()[1] if ax is None else ax


def loglog_sweep(
    x: ArrayLike,
    y: ArrayLike,
    *,
    yerr: ArrayLike | None = None,
    fit: bool = True,
    label: str | None = None,
    xlabel: str = "width (log scale)",
    ylabel: str = "",
    ax: plt.Axes | None = None,
    color: str | None = None,
) -> plt.Axes:
    """Points y(x) on log-log axes with an optional least-squares power-law fit drawn and labelled.

    x and y: 1-D, same length, positive (log axes); yerr: (n,) or (2, n) (lower, upper), >= 0.
    """
    x = as_host_float_array(x, name="x", ndim=1, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1)
    if y.shape != x.shape:
        raise ValueError(f"x and y must have the same length, got {x.size} and {y.size}")
    check_range(x, name="x", lo=0.0, lo_open=True, what="plotted on a log axis")
    check_range(y, name="y", lo=0.0, lo_open=True, what="plotted on a log axis")
    if yerr is not None:
        yerr = as_host_float_array(yerr, name="yerr", ndim=(1, 2))
        if yerr.shape not in (x.shape, (2,) + x.shape):
            raise ValueError(f"yerr must have shape {x.shape} or {(2,) + x.shape}, got {yerr.shape}")
        check_range(yerr, name="yerr", lo=0.0, what="an error bar")
    ax = _axes(ax)
    line = ax.errorbar(x, y, yerr=yerr, fmt="o",
                       ms=4, capsize=2, color=color, label=label)
    if fit:
        f = fit_loglog(x, y)
        grid = np.geomspace(x.min(), x.max(), 50)
        ax.plot(grid, f(grid), "--", color=line[0].get_color(), lw=1.2,
                label=f"fit: slope {f.slope:+.2f}" + (f" ({label})" if label else ""))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax


def kernel_heatmap(
    matrix: ArrayLike, *, title: str | None = None, ax: plt.Axes | None = None, symmetric: bool = False,
    xlabel: str = "input index $j$", ylabel: str = "input index $i$",
) -> plt.Axes:
    """A kernel matrix K[i, j] as an image with a colour bar (diverging map if ``symmetric``)."""
    m = as_host_float_array(matrix, name="matrix", ndim=2, nonempty=True)
    ax = _axes(ax)
    opts = {}
    if symmetric:
        lim = np.abs(m).max()
        opts = {"cmap": "RdBu_r", "vmin": -lim, "vmax": lim}
    im = ax.imshow(m, **opts)
    ax.figure.colorbar(im, ax=ax, fraction=0.046)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    if title:
        ax.set_title(title)
    return ax


# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
# The first three (blue, orange, reddish purple) stay apart in lightness as well as hue.
CATEGORY_COLOURS = ("#0072B2", "#E69F00", "#CC79A7", "#009E73", "#D55E00", "#56B4E9",
                    "#F0E442", "#000000")


def phase_diagram(
    x: ArrayLike,
    y: ArrayLike,
    values: ArrayLike,
    *,
    categories: Sequence[str] | None = None,
    levels: Sequence[float] | None = None,
    xlabel: str = "",
    ylabel: str = "",
    colorbar_label: str = "",
    log_values: bool | None = None,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """values[i, j] at (x[j], y[i]) as a colour map, with contour lines at ``levels``.

    x: (nx,), y: (ny,), values: (ny, nx); NaN entries are left blank.

    Continuous values (``categories=None``): a diverging colour map centred on 0 of
    ``log10(values)`` (``log_values``, the default; the other entries must then be positive)
    or of the values themselves, with contour lines at ``levels`` (default: 1).

    Categorical values: ``categories`` names the codes 0, 1, ..., K-1 that ``values`` holds
    (K <= 8). Each code gets its own colour (Okabe-Ito palette) and the colour bar shows the
    names; contour lines are drawn between codes (at the half-integers, unless ``levels``).
    """
    x = as_host_float_array(x, name="x", ndim=1, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1, nonempty=True)
    v = as_host_float_array(values, name="values", ndim=2, finite=False)
    if v.shape != (y.size, x.size):
        raise ValueError(f"values must have shape (len(y), len(x)) = {(y.size, x.size)}, got {v.shape}")
    if np.any(np.isinf(v)):
        raise ValueError("values must not contain infinity (NaN entries are left blank)")
    if categories is not None:
        return _category_map(x, y, v, categories, levels, xlabel, ylabel, colorbar_label,
                             log_values, ax)
    log_values = True if log_values is None else log_values
    if log_values:
        check_range(v[np.isfinite(v)], name="values", lo=0.0, lo_open=True, what="shown on a log scale")
    levels = as_host_float_array((1.0,) if levels is None else levels, name="levels", ndim=1,
                                 nonempty=True)
    ax = _axes(ax)
    shown = np.log10(v) if log_values else v
    finite = shown[np.isfinite(shown)]
    lim = float(np.abs(finite).max()) if finite.size else 1.0
    lim = lim if lim > 0 else 1.0
    mesh = ax.pcolormesh(x, y, shown, shading="auto", cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax.figure.colorbar(mesh, ax=ax, label=("log10 " if log_values else "") + colorbar_label)
    contours = ax.contour(x, y, v, levels=list(levels), colors="k", linewidths=1.5)
    ax.clabel(contours, fmt=lambda level: f"{colorbar_label or 'value'} = {level:g}", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    return ax


def _category_map(x, y, v, categories, levels, xlabel, ylabel, colorbar_label, log_values, ax):
    if isinstance(categories, str) or not all(isinstance(c, str) for c in categories):
        raise TypeError(f"categories must be a sequence of names (str), got {categories!r}")
    count = len(categories)
    if not 2 <= count <= len(CATEGORY_COLOURS):
        raise ValueError(f"categories must name 2 to {len(CATEGORY_COLOURS)} codes, got {count}")
    if log_values:
        raise ValueError("log_values must be False or None with categories (codes are not positive values)")
    codes = v[np.isfinite(v)]
    if codes.size and (np.any(codes != np.round(codes)) or codes.min() < 0 or codes.max() >= count):
        raise ValueError(f"values must be the integer codes 0..{count - 1} of categories (or NaN), "
                         f"got values in [{codes.min():g}, {codes.max():g}]")
    cmap = mpl.colors.ListedColormap(CATEGORY_COLOURS[:count], name="categories")
    norm = mpl.colors.BoundaryNorm(np.arange(count + 1) - 0.5, count)
    ax = _axes(ax)
    mesh = ax.pcolormesh(x, y, v, shading="auto", cmap=cmap, norm=norm)
    bar = ax.figure.colorbar(mesh, ax=ax, ticks=np.arange(count), label=colorbar_label)
    bar.ax.set_yticklabels(list(categories))
    bar.ax.minorticks_off()
    boundaries = np.arange(count - 1) + 0.5 if levels is None else levels
    boundaries = as_host_float_array(boundaries, name="levels", ndim=1, nonempty=True)
    if x.size > 1 and y.size > 1 and np.unique(codes).size > 1:
        ax.contour(x, y, v, levels=list(boundaries), colors="k", linewidths=1.0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    return ax
