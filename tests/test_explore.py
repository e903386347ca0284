"""Tests of lecturekit.explore: explorers built from a plot function and control specs."""

import base64

import ipywidgets
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from lecturekit import explore  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _recording_plot(calls):
    def plot(width=64, rate=0.5, scale=1.0, head="linear"):
        calls.append(dict(width=width, rate=rate, scale=scale, head=head))
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, rate * scale])
        return fig

    return plot


def _png(widget):
    (output,) = widget.output.outputs
    assert output["output_type"] == "display_data"
    return base64.b64decode(output["data"]["image/png"])


def _controls():
    return dict(width=explore.Choice([16, 64, 256]), rate=explore.Linear(0.0, 2.0, 0.1),
                scale=explore.Log(1e-2, 1e2), head=explore.Choice(("linear", "swish")))


def test_explorer_draws_the_defaults_then_redraws_on_each_change():
    calls = []
    widget = explore.explorer(_recording_plot(calls), **_controls())
    assert calls == [dict(width=64, rate=0.5, scale=1.0, head="linear")]   # the static figure's setting, once
    first = _png(widget)
    assert first.startswith(PNG_SIGNATURE)
    assert plt.get_fignums() == []                                         # rendered figures are closed

    widget.controls["rate"].value = 1.5
    assert calls[-1] == dict(width=64, rate=1.5, scale=1.0, head="linear")
    assert _png(widget).startswith(PNG_SIGNATURE) and _png(widget) != first
    widget.controls["width"].value = 256
    widget.controls["head"].value = "swish"
    assert calls[-1] == dict(width=256, rate=1.5, scale=1.0, head="swish")
    assert len(calls) == 4                                                 # one draw per change
    assert widget.settings() == calls[-1]
    assert plt.get_fignums() == []


def test_control_widgets_and_text_repr():
    widget = explore.explorer(_recording_plot([]), **_controls())
    c = widget.controls
    assert isinstance(c["width"], ipywidgets.SelectionSlider) and c["width"].options == (16, 64, 256)
    assert isinstance(c["rate"], ipywidgets.FloatSlider)
    assert isinstance(c["scale"], ipywidgets.FloatLogSlider)
    assert (c["scale"].min, c["scale"].max, c["scale"].step) == (-2.0, 2.0, 0.1)
    assert isinstance(c["head"], ipywidgets.ToggleButtons)
    for name in ("width", "rate", "scale"):
        assert c[name].continuous_update is False, name   # a redraw on release, not on every drag event
    assert list(widget.children) == [*c.values(), widget.output]
    # deterministic text (no widget id, no image data) for the notebook's text/plain output
    assert repr(widget) == "Explorer(width=64, rate=0.5, scale=1.0, head='linear'): move the controls in JupyterLab"
    assert widget._repr_mimebundle_()["text/plain"] == repr(widget)


def test_integer_linear_slider_and_a_laid_out_figure():
    def plot(n=3):
        fig, ax = plt.subplots(figsize=(4, 3), dpi=50, layout="constrained")
        ax.plot(range(n))
        return fig

    widget = explore.explorer(plot, n=explore.Linear(1, 9, 2))
    assert isinstance(widget.controls["n"], ipywidgets.IntSlider)
    assert (widget.controls["n"].min, widget.controls["n"].max, widget.controls["n"].value) == (1, 9, 3)
    png = _png(widget)
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (200, 150)     # saved as laid out (4 x 3 in at 50 dpi), not cropped


def test_error_in_plot_is_shown_not_raised_after_construction():
    def plot(rate=1.0):
        fig = plt.figure()
        if rate > 1.5:
            raise RuntimeError("this setting cannot be drawn")
        return fig

    widget = explore.explorer(plot, rate=explore.Linear(0.0, 2.0, 0.5))
    widget.controls["rate"].value = 2.0
    (output,) = widget.output.outputs
    assert output["output_type"] == "stream" and "this setting cannot be drawn" in output["text"]
    assert plt.get_fignums() == []                      # the half-drawn figure is closed too
    widget.controls["rate"].value = 0.5
    assert _png(widget).startswith(PNG_SIGNATURE)       # and the next setting draws again


@pytest.mark.parametrize("controls, message", [
    (dict(rate=explore.Linear(0.0, 0.4, 0.1)), r"default of rate \(0.5\) is outside its range"),
    (dict(scale=explore.Log(2.0, 100.0)), r"default of scale \(1.0\) is outside its range"),
    (dict(width=explore.Choice([16, 256])), r"default of width \(64\) is not one of its options"),
    (dict(rate=explore.Linear(1.0, 0.0, 0.1)), "rate: Linear needs low < high"),
    (dict(rate=explore.Linear(0.0, 1.0, 0.0)), "rate: Linear needs 0 < step"),
    (dict(scale=explore.Log(0.0, 10.0)), "scale: Log needs 0 < low < high"),
    (dict(scale=explore.Log(0.1, 10.0, 0)), "scale: Log per_decade must be an integer"),
    (dict(width=explore.Choice([])), "width: Choice needs a non-empty sequence"),
    (dict(head=explore.Choice("linear")), "head: Choice needs a non-empty sequence"),
    ({}, "at least one control"),
])
def test_bad_controls_raise_value_error(controls, message):
    with pytest.raises(ValueError, match=message):
        explore.explorer(_recording_plot([]), **controls)


def test_bad_arguments_raise_type_error():
    plot = _recording_plot([])
    with pytest.raises(TypeError, match="plot must be a function"):
        explore.explorer("not a function", rate=explore.Linear(0, 1, 0.1))
    with pytest.raises(TypeError, match=r"controls \['depth'\] are not parameters of plot"):
        explore.explorer(plot, depth=explore.Linear(1, 3, 1))
    with pytest.raises(TypeError, match="control rate must be explore.Linear"):
        explore.explorer(plot, rate=(0.0, 1.0))
    with pytest.raises(TypeError, match="rate: Linear low must be a finite real number"):
        explore.explorer(plot, rate=explore.Linear("0", 1.0, 0.1))
    with pytest.raises(TypeError, match="every parameter of plot needs a default.*width has none"):
        explore.explorer(lambda width, rate=0.5: plt.figure(), rate=explore.Linear(0, 1, 0.1))
    with pytest.raises(TypeError, match=r"not \*args or \*\*args"):
        explore.explorer(lambda rate=0.5, *args: plt.figure(), rate=explore.Linear(0, 1, 0.1))
    with pytest.raises(TypeError, match="plot must return the matplotlib Figure it drew, got NoneType"):
        explore.explorer(lambda rate=0.5: None, rate=explore.Linear(0, 1, 0.1))
