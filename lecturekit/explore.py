"""Interactive explorers: a figure redrawn when the reader moves a control.

``explorer(plot, **controls)`` takes a function that draws a matplotlib figure from
keyword settings, e.g. ``def plot(eta=3.0, width=256): ...; return fig``, and one
control spec per setting:

* ``Linear(low, high, step)``: a slider on low, low + step, ..., high (integer slider
  when all three are integers);
* ``Log(low, high, per_decade=10)``: a logarithmic slider, ``per_decade`` positions per
  factor of 10;
* ``Choice(options)``: a selection among the given values (buttons for strings).

The **default setting is the plot function's own keyword defaults**, so ``plot()`` draws
exactly the static figure an explorer opens with; a default outside its control's range
is an error. Sliders act on release (``continuous_update=False``): each redraw calls the
plot function once. The figure is rendered to PNG into an ``ipywidgets.Output`` (and the
matplotlib figure closed), so the explorer works the same in JupyterLab and in a
headless kernel, and shows an exception raised by the plot function in place of the
figure.
"""

from __future__ import annotations

import base64
import inspect
import io
import math
import numbers
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import ipywidgets
import matplotlib.figure
import matplotlib.pyplot as plt

__all__ = ["Linear", "Log", "Choice", "Explorer", "explorer"]


class Linear(NamedTuple):
    """A slider from ``low`` to ``high`` in steps of ``step``: a control spec
    for :func:`explorer`.

    An integer slider when ``low``, ``high``, ``step`` and the plot function's default
    are all integers, a float slider otherwise. Requires low < high and
    0 < step <= high - low.

    Attributes:
        low: the smallest value.
        high: the largest value.
        step: the spacing of the slider's positions.

    Example:
        >>> from lecturekit import explore
        >>> explore.Linear(0.0, 2.0, 0.1)
        Linear(low=0.0, high=2.0, step=0.1)
    """

    low: float
    high: float
    step: float


class Log(NamedTuple):
    """A logarithmic slider: a control spec for :func:`explorer`.

    Attributes:
        low: the smallest value, > 0.
        high: the largest value, > low.
        per_decade: positions per factor of 10, an integer >= 1.

    Example:
        >>> from lecturekit import explore
        >>> explore.Log(1e-3, 10.0)
        Log(low=0.001, high=10.0, per_decade=10)
    """

    low: float
    high: float
    per_decade: int = 10


class Choice(NamedTuple):
    """A choice among ``options``: a control spec for :func:`explorer`.

    Buttons when every option is a string, a selection slider otherwise.

    Attributes:
        options: a non-empty sequence of values; the plot function's default must be
            one.

    Example:
        >>> from lecturekit import explore
        >>> explore.Choice([64, 256, 1024]).options
        [64, 256, 1024]
    """

    options: Sequence[Any]


def _label(name: str) -> dict:
    """The control's label: the parameter name, shown in full (not cut to the default
    label width).
    """
    return {"description": name, "style": {"description_width": "initial"}}


def _real(value: Any, what: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
    ):
        raise TypeError(f"{what} must be a finite real number, got {value!r}")
    return float(value)


def _in_range(name: str, default: Any, low: float, high: float) -> float:
    value = _real(default, f"the default of {name}")
    if not low <= value <= high:
        raise ValueError(
            f"the default of {name} ({default}) is outside its range [{low}, {high}]"
        )
    return value


def _widget(name: str, spec: Any, default: Any) -> ipywidgets.ValueWidget:
    """The ipywidgets control for one spec, at the plot function's default
    ``default``.
    """
    if isinstance(spec, Linear):
        low, high, step = (
            _real(v, f"{name}: Linear {f}") for v, f in zip(spec, spec._fields)
        )
        if not low < high:
            raise ValueError(
                f"{name}: Linear needs low < high, got low={low}, high={high}"
            )
        if not 0 < step <= high - low:
            raise ValueError(
                f"{name}: Linear needs 0 < step <= high - low, got step={step}"
            )
        _in_range(name, default, low, high)
        integer = all(isinstance(v, numbers.Integral) for v in (*spec, default))
        kind = ipywidgets.IntSlider if integer else ipywidgets.FloatSlider
        return kind(
            value=default,
            min=spec.low,
            max=spec.high,
            step=spec.step,
            continuous_update=False,
            **_label(name),
        )
    if isinstance(spec, Log):
        low, high = (
            _real(spec.low, f"{name}: Log low"),
            _real(spec.high, f"{name}: Log high"),
        )
        if not 0 < low < high:
            raise ValueError(
                f"{name}: Log needs 0 < low < high, got low={low}, high={high}"
            )
        if (
            isinstance(spec.per_decade, bool)
            or not isinstance(spec.per_decade, numbers.Integral)
            or spec.per_decade < 1
        ):
            raise ValueError(
                f"{name}: Log per_decade must be an integer >= 1, got "
                f"{spec.per_decade!r}"
            )
        return ipywidgets.FloatLogSlider(
            value=_in_range(name, default, low, high),
            base=10,
            min=math.log10(low),
            max=math.log10(high),
            step=1 / spec.per_decade,
            readout_format=".3g",
            continuous_update=False,
            **_label(name),
        )
    if isinstance(spec, Choice):
        try:
            options = (
                () if isinstance(spec.options, (str, bytes)) else tuple(spec.options)
            )
        except TypeError:
            options = ()
        if not options:
            raise ValueError(
                f"{name}: Choice needs a non-empty sequence of options, got "
                f"{spec.options!r}"
            )
        if default not in options:
            raise ValueError(
                f"the default of {name} ({default!r}) is not one of its options "
                f"{options}"
            )
        if all(isinstance(o, str) for o in options):
            return ipywidgets.ToggleButtons(
                options=options, value=default, **_label(name)
            )
        return ipywidgets.SelectionSlider(
            options=options, value=default, continuous_update=False, **_label(name)
        )
    raise TypeError(
        f"control {name} must be explore.Linear, explore.Log or explore.Choice, got "
        f"{spec!r}"
    )


def _png_output(fig: Any) -> dict:
    """The figure as one nbformat display_data output (PNG), the figure closed
    afterwards.
    """
    if not isinstance(fig, matplotlib.figure.Figure):
        raise TypeError(
            f"plot must return the matplotlib Figure it drew, got {type(fig).__name__}"
        )
    buffer = io.BytesIO()
    try:
        # a figure with a layout engine (e.g. plt.subplots(..., layout="constrained"))
        # is saved as laid out; any other is cropped to its contents, as the inline
        # backend does (at twice the drawing cost)
        fig.savefig(
            buffer,
            format="png",
            dpi=fig.dpi,
            bbox_inches=None if fig.get_layout_engine() else "tight",
        )
    finally:
        plt.close(fig)
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {
            "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
            "text/plain": repr(fig),
        },
    }


class Explorer(ipywidgets.VBox):
    """The controls above the figure (an ipywidgets VBox), built by :func:`explorer`.

    Attributes:
        controls: the ipywidgets controls, by parameter name.
        output: the ``ipywidgets.Output`` holding the current figure as a PNG.

    Example:
        >>> import matplotlib.pyplot as plt
        >>> from lecturekit import explore
        >>> def plot(slope=1.0):
        ...     fig, ax = plt.subplots()
        ...     ax.plot([0, 1], [0, slope])
        ...     return fig
        >>> slider = explore.Linear(0.0, 2.0, 0.5)
        >>> widget = explore.explorer(plot, slope=slider)
        >>> widget.controls["slope"].value = 2.0  # a reader moves the slider
        >>> widget.settings()
        {'slope': 2.0}
    """

    def __init__(
        self, plot: Callable[..., Any], controls: dict[str, ipywidgets.ValueWidget]
    ):
        self._plot, self.controls, self.output = plot, controls, ipywidgets.Output()
        super().__init__(children=[*controls.values(), self.output])
        # the default setting; errors raise
        self.output.outputs = (_png_output(plot(**self.settings())),)
        for control in controls.values():
            control.observe(self._redraw, names="value")

    def settings(self) -> dict[str, Any]:
        """The current value of every control, by name (the keywords of the next
        redraw).
        """
        return {name: control.value for name, control in self.controls.items()}

    def _redraw(self, _change: Any = None) -> None:
        before = set(plt.get_fignums())
        try:
            output = _png_output(self._plot(**self.settings()))
        # a reader's setting broke the plot: show why instead of the figure
        except Exception:
            for number in set(plt.get_fignums()) - before:
                plt.close(number)
            output = {
                "output_type": "stream",
                "name": "stderr",
                "text": traceback.format_exc(),
            }
        self.output.outputs = (output,)

    # deterministic text for the notebook (no widget ids, no image data)
    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={value!r}" for name, value in self.settings().items()
        )
        return f"Explorer({shown}): move the controls in JupyterLab"


def explorer(plot: Callable[..., Any], **controls: Linear | Log | Choice) -> Explorer:
    """An interactive figure: ``plot(**settings)`` redrawn whenever a control moves.

    ``plot`` draws one matplotlib figure and returns it; each keyword of ``controls``
    names one of its keyword parameters and gives a :class:`Linear`, :class:`Log` or
    :class:`Choice` spec. Every parameter of ``plot`` must have a default, and the
    defaults are the setting drawn first (the static figure ``plot()``), so HTML readers
    and CI see the default figure. Displaying the widget needs a Jupyter front end.

    Args:
        plot: a function of keyword parameters with defaults, returning a
            ``matplotlib.figure.Figure``.
        controls: one control spec per parameter to expose.

    Returns:
        Explorer: the widget, controls above the figure.

    Example:
        >>> import matplotlib.pyplot as plt
        >>> from lecturekit import explore
        >>> def plot(width=64, head="linear"):
        ...     fig, ax = plt.subplots()
        ...     ax.set_title(f"width {width}, {head} head")
        ...     return fig
        >>> explore.explorer(plot, width=explore.Choice([16, 64, 256]),
        ...                  head=explore.Choice(["linear", "relu"]))
        Explorer(width=64, head='linear'): move the controls in JupyterLab
    """
    if not callable(plot):
        raise TypeError(
            f"plot must be a function drawing a figure, got {type(plot).__name__}"
        )
    if not controls:
        raise ValueError(
            "explorer needs at least one control, e.g. width=explore.Choice([64, 256, "
            "1024])"
        )
    parameters = inspect.signature(plot).parameters
    for name, parameter in parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(
                f"plot must take named keyword parameters only, not *{name} or **{name}"
            )
        if parameter.default is parameter.empty:
            raise TypeError(
                f"every parameter of plot needs a default (the static figure), {name} "
                "has none"
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"plot's parameter {name} is positional-only; the explorer passes "
                "keywords"
            )
    unknown = [name for name in controls if name not in parameters]
    if unknown:
        raise TypeError(
            f"controls {unknown} are not parameters of plot (it takes "
            f"{list(parameters)})"
        )
    widgets = {
        name: _widget(name, spec, parameters[name].default)
        for name, spec in controls.items()
    }
    return Explorer(plot, widgets)
