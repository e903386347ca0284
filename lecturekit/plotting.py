"""One figure style for the whole book and the plot types that recur across chapters.

:func:`use_book_style` sets the book's matplotlib style (``notebook.setup`` calls it).
Each plot function draws into the axes ``ax`` it is given (a new figure when ``ax`` is
None), returns those axes, and checks its data first: a value that cannot be shown
(e.g. a non-positive number on a log axis) raises ``ValueError`` naming the argument.

* :func:`loglog_sweep`: a measurement against width (or any positive size) on log-log
  axes, with a fitted power law;
* :func:`kernel_heatmap`: a kernel matrix as an image;
* :func:`phase_diagram`: a quantity, or a regime label, over a grid of two settings;
* :func:`regions_2d`: the linear regions of a network with 2-D input as coloured
  polygons.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from jax.typing import ArrayLike

from ._validation import (
    as_host_float_array,
    check_positive_int,
    check_range,
    check_real,
)
from .regions import Regions2D
from .stats import fit_loglog

__all__ = [
    "use_book_style",
    "loglog_sweep",
    "kernel_heatmap",
    "CATEGORY_COLOURS",
    "phase_diagram",
    "regions_2d",
]

_BOOK_STYLE = {
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
        color=[
            "#1f77b4",
            "#d62728",
            "#2ca02c",
            "#ff7f0e",
            "#9467bd",
            "#8c564b",
            "#17becf",
        ]
    ),
}


def use_book_style() -> None:
    """Apply the book's matplotlib rc settings (``matplotlib.rcParams``).

    Figure size 6.4 x 4 inches, light grid, no top and right spines, frameless legends,
    viridis images and the book's colour cycle. Changes global state: call it once, as
    :func:`lecturekit.notebook.setup` does.

    Example:
        >>> import matplotlib as mpl
        >>> from lecturekit import plotting
        >>> plotting.use_book_style()
        >>> mpl.rcParams["axes.spines.top"], mpl.rcParams["legend.frameon"]
        (False, False)
    """
    mpl.rcParams.update(_BOOK_STYLE)


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
    """Points y(x) on log-log axes, with an optional least-squares power-law fit drawn
    and labelled.

    The fit is :func:`lecturekit.stats.fit_loglog`, a straight line through
    (log x, log y); its slope is the exponent p of :math:`y \\approx C x^p` and is
    written in the legend.

    Args:
        x: (n,) positive abscissae (e.g. widths).
        y: (n,) positive values.
        yerr: optional error bars, >= 0: (n,) symmetric or (2, n) (lower, upper).
        fit: draw the fitted power law (dashed).
        label: legend label of the points.
        xlabel: x-axis label.
        ylabel: y-axis label.
        ax: axes to draw into (None: a new figure).
        color: colour of the points and the fit.

    Returns:
        matplotlib.axes.Axes: the axes drawn into.

    Example:
        >>> import matplotlib.pyplot as plt
        >>> from lecturekit import plotting
        >>> ax = plotting.loglog_sweep([64, 256, 1024], [1.0, 0.5, 0.25])
        >>> ax.get_xscale(), ax.get_legend().get_texts()[0].get_text()
        ('log', 'fit: slope -0.50')
        >>> plt.close(ax.figure)
    """
    x = as_host_float_array(x, name="x", ndim=1, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1)
    if y.shape != x.shape:
        raise ValueError(
            f"x and y must have the same length, got {x.size} and {y.size}"
        )
    check_range(x, name="x", lo=0.0, lo_open=True, what="plotted on a log axis")
    check_range(y, name="y", lo=0.0, lo_open=True, what="plotted on a log axis")
    if yerr is not None:
        yerr = as_host_float_array(yerr, name="yerr", ndim=(1, 2))
        if yerr.shape not in (x.shape, (2,) + x.shape):
            raise ValueError(
                f"yerr must have shape {x.shape} or {(2,) + x.shape}, got {yerr.shape}"
            )
        check_range(yerr, name="yerr", lo=0.0, what="an error bar")
    ax = _axes(ax)
    line = ax.errorbar(
        x, y, yerr=yerr, fmt="o", ms=4, capsize=2, color=color, label=label
    )
    if fit:
        f = fit_loglog(x, y)
        grid = np.geomspace(x.min(), x.max(), 50)
        ax.plot(
            grid,
            f(grid),
            "--",
            color=line[0].get_color(),
            lw=1.2,
            label=f"fit: slope {f.slope:+.2f}" + (f" ({label})" if label else ""),
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax


def kernel_heatmap(
    matrix: ArrayLike,
    *,
    title: str | None = None,
    ax: plt.Axes | None = None,
    symmetric: bool = False,
    xlabel: str = "input index $j$",
    ylabel: str = "input index $i$",
) -> plt.Axes:
    """A kernel matrix K[i, j] as an image with a colour bar.

    Row i is drawn at height i (first row on top), column j at abscissa j.

    Args:
        matrix: (n, m) finite values.
        title: optional axes title.
        ax: axes to draw into (None: a new figure).
        symmetric: a diverging colour map centred on 0 (for matrices with both signs).
        xlabel: x-axis label.
        ylabel: y-axis label.

    Returns:
        matplotlib.axes.Axes: the axes drawn into.

    Example:
        >>> import matplotlib.pyplot as plt
        >>> import numpy as np
        >>> from lecturekit import plotting
        >>> ax = plotting.kernel_heatmap(np.eye(3), title="identity")
        >>> ax.get_images()[0].get_array().shape
        (3, 3)
        >>> plt.close(ax.figure)
    """
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


#: Colours of categories (regimes, classes), in order: the Okabe-Ito palette,
#: distinguishable with the common colour-vision deficiencies; the first three (blue,
#: orange, reddish purple) stay apart in lightness as well as hue. :func:`phase_diagram`
#: uses them for categories.
CATEGORY_COLOURS = (
    "#0072B2",
    "#E69F00",
    "#CC79A7",
    "#009E73",
    "#D55E00",
    "#56B4E9",
    "#F0E442",
    "#000000",
)


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
    """A quantity over a grid of two settings: values[i, j] at (x[j], y[i]) as a colour
    map.

    Continuous values (``categories=None``): a diverging colour map centred on 0 of
    ``log10(values)`` (``log_values``, the default; the values must then be positive) or
    of the values themselves, with contour lines at ``levels`` (default: 1).

    Categorical values: ``categories`` names the codes 0, 1, ..., K-1 that ``values``
    holds (K <= 8). Each code gets its own colour (:data:`CATEGORY_COLOURS`) and the
    colour bar shows the names; contour lines are drawn between codes (at the
    half-integers, unless ``levels``).

    Args:
        x: (nx,) abscissae of the grid.
        y: (ny,) ordinates of the grid.
        values: (ny, nx) values; NaN entries are left blank, infinities are an error.
        categories: names of the integer codes, or None for continuous values.
        levels: contour levels.
        xlabel: x-axis label.
        ylabel: y-axis label.
        colorbar_label: label of the colour bar (and of the contour lines).
        log_values: colour by log10 of the values (continuous values only).
        ax: axes to draw into (None: a new figure).

    Returns:
        matplotlib.axes.Axes: the axes drawn into.

    Example:
        >>> import matplotlib.pyplot as plt
        >>> import numpy as np
        >>> from lecturekit import plotting
        >>> codes = np.array([[0, 0, 1], [0, 1, 1]])
        >>> names = ("stable", "diverges")
        >>> ax = plotting.phase_diagram([1, 2, 3], [1, 2], codes,
        ...                             categories=names)
        >>> ax.figure.axes[-1].get_yticklabels()[1].get_text()
        'diverges'
        >>> plt.close(ax.figure)
    """
    x = as_host_float_array(x, name="x", ndim=1, nonempty=True)
    y = as_host_float_array(y, name="y", ndim=1, nonempty=True)
    v = as_host_float_array(values, name="values", ndim=2, finite=False)
    if v.shape != (y.size, x.size):
        raise ValueError(
            f"values must have shape (len(y), len(x)) = {(y.size, x.size)}, got "
            f"{v.shape}"
        )
    if np.any(np.isinf(v)):
        raise ValueError(
            "values must not contain infinity (NaN entries are left blank)"
        )
    if categories is not None:
        return _category_map(
            x, y, v, categories, levels, xlabel, ylabel, colorbar_label, log_values, ax
        )
    log_values = True if log_values is None else log_values
    if log_values:
        check_range(
            v[np.isfinite(v)],
            name="values",
            lo=0.0,
            lo_open=True,
            what="shown on a log scale",
        )
    levels = as_host_float_array(
        (1.0,) if levels is None else levels, name="levels", ndim=1, nonempty=True
    )
    ax = _axes(ax)
    shown = np.log10(v) if log_values else v
    finite = shown[np.isfinite(shown)]
    lim = float(np.abs(finite).max()) if finite.size else 1.0
    lim = lim if lim > 0 else 1.0
    mesh = ax.pcolormesh(
        x, y, shown, shading="auto", cmap="RdBu_r", vmin=-lim, vmax=lim
    )
    ax.figure.colorbar(
        mesh, ax=ax, label=("log10 " if log_values else "") + colorbar_label
    )
    contours = ax.contour(x, y, v, levels=list(levels), colors="k", linewidths=1.5)
    ax.clabel(
        contours,
        fmt=lambda level: f"{colorbar_label or 'value'} = {level:g}",
        fontsize=8,
    )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    return ax


def _category_map(
    x, y, v, categories, levels, xlabel, ylabel, colorbar_label, log_values, ax
):
    if isinstance(categories, str) or not all(isinstance(c, str) for c in categories):
        raise TypeError(
            f"categories must be a sequence of names (str), got {categories!r}"
        )
    count = len(categories)
    if not 2 <= count <= len(CATEGORY_COLOURS):
        raise ValueError(
            f"categories must name 2 to {len(CATEGORY_COLOURS)} codes, got {count}"
        )
    if log_values:
        raise ValueError(
            "log_values must be False or None with categories (codes are not positive "
            "values)"
        )
    codes = v[np.isfinite(v)]
    if codes.size and (
        np.any(codes != np.round(codes)) or codes.min() < 0 or codes.max() >= count
    ):
        raise ValueError(
            f"values must be the integer codes 0..{count - 1} of categories (or NaN), "
            f"got values in [{codes.min():g}, {codes.max():g}]"
        )
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


def regions_2d(
    regions: Regions2D,
    ax: plt.Axes | None = None,
    *,
    seed: int = 0,
    edgecolor: str = "k",
    linewidth: float = 0.3,
) -> plt.Axes:
    """The polygons of :func:`lecturekit.regions.activation_regions_2d`, each in its own
    colour.

    Colours are random pastel shades (reproducible from ``seed``), so that neighbouring
    regions are told apart; the axes are fitted to the polygons, with equal scales and
    no grid.

    Args:
        regions: the :class:`lecturekit.regions.Regions2D` to draw (at least one
            polygon).
        ax: axes to draw into (None: a new figure).
        seed: seed of the colours, an integer >= 0.
        edgecolor: colour of the polygon edges.
        linewidth: width of the polygon edges, >= 0.

    Returns:
        matplotlib.axes.Axes: the axes drawn into.

    Example:
        >>> import matplotlib.pyplot as plt
        >>> import numpy as np
        >>> from lecturekit import nets, plotting, regions
        >>> net = nets.mlp((2, 2, 1), "relu", parameterization="standard")
        >>> params = [{"W": np.eye(2), "b": np.zeros(2)},
        ...           {"W": np.ones((2, 1)), "b": np.zeros(1)}]
        >>> found = regions.activation_regions_2d(net, params)
        >>> ax = plotting.regions_2d(found)
        >>> len(ax.collections[0].get_paths()), ax.get_aspect()
        (4, 1.0)
        >>> plt.close(ax.figure)
    """
    if not isinstance(regions, Regions2D):
        raise TypeError(
            "regions must be the Regions2D of activation_regions_2d, got "
            f"{type(regions).__name__}"
        )
    if regions.count == 0:
        raise ValueError("regions has no polygons to draw")
    seed = check_positive_int(seed, name="seed", minimum=0)
    linewidth = check_real(linewidth, name="linewidth", nonnegative=True)
    from matplotlib.collections import PolyCollection

    ax = _axes(ax)
    rng = np.random.default_rng(seed)
    colours = 0.45 + 0.55 * rng.random((regions.count, 3))
    ax.add_collection(
        PolyCollection(
            regions.polygons,
            facecolors=colours,
            edgecolors=edgecolor,
            linewidths=linewidth,
        )
    )
    allpts = np.concatenate(regions.polygons)
    ax.set_xlim(allpts[:, 0].min(), allpts[:, 0].max())
    ax.set_ylim(allpts[:, 1].min(), allpts[:, 1].max())
    ax.set_aspect("equal")
    ax.grid(False)
    return ax
