"""lecturekit.figure_checks: the rules every figure of the book follows, and the hook that
applies them to every figure a chapter displays (make test fails the cell)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from lecturekit import figure_checks, plotting


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def labelled(ax, x="x", y="y"):
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    return ax


def regime_codes():
    """The regime map of Chapter 4, section 6: codes 0 (linear), 1 (catapult), 2 (divergent)."""
    eta = np.linspace(0.5, 6.0, 12)
    widths = np.geomspace(64, 4096, 5)
    return eta, widths, np.digitize(np.tile(eta, (widths.size, 1)), [2.0, 4.0]).astype(float)


def test_a_labelled_single_line_passes():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [1, 0, 1])
    labelled(ax)
    assert figure_checks.problems(fig) == []


def test_the_chapter_4_phase_diagram_as_it_was_fails():
    """Regime codes on a continuous diverging map (what Chapter 4 drew): rejected."""
    eta, widths, codes = regime_codes()
    ax = plotting.phase_diagram(eta, widths, codes, levels=(0.5, 1.5), log_values=False,
                                xlabel=r"$\eta\lambda_0$", ylabel="width $m$")
    found = figure_checks.problems(ax.figure)
    assert any("integer codes" in p and "RdBu_r" in p for p in found), found


def test_the_categorical_phase_diagram_passes_and_names_the_codes():
    eta, widths, codes = regime_codes()
    names = ("linear", "catapult", "divergent")
    ax = plotting.phase_diagram(eta, widths, codes, categories=names,
                                xlabel=r"$\eta\lambda_0$", ylabel="width $m$")
    assert figure_checks.problems(ax.figure) == []
    bar = [a for a in ax.figure.axes if a is not ax][0]
    assert [t.get_text() for t in bar.get_yticklabels()] == list(names)
    mesh = ax.collections[0]
    colours = {tuple(c) for c in mesh.cmap(mesh.norm(np.arange(3.0)))}
    assert len(colours) == 3, colours  # three codes, three distinct colours


@pytest.mark.parametrize("bad, message", [
    (np.array([[0.0, 1.0], [3.0, 1.0]]), "integer codes 0..2"),
    (np.array([[0.0, 0.5], [1.0, 1.0]]), "integer codes 0..2"),
])
def test_categorical_phase_diagram_rejects_values_that_are_not_codes(bad, message):
    with pytest.raises(ValueError, match=message):
        plotting.phase_diagram([0, 1], [0, 1], bad, categories=("a", "b", "c"))


def test_continuous_phase_diagram_with_undecided_cells_has_finite_limits():
    """NaN cells used to make the colour limits NaN (abs(shown).max())."""
    values = np.array([[0.5, np.nan], [2.0, 4.0]])
    ax = plotting.phase_diagram([1, 2], [1, 2], values, xlabel="a", ylabel="b")
    mesh = ax.collections[0]
    assert np.isfinite(mesh.norm.vmin) and np.isfinite(mesh.norm.vmax)
    assert figure_checks.problems(ax.figure) == []


def test_missing_labels_and_raw_markup_are_reported():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([0, 1], [0, 1])
    left.set_xlabel("lambda_t")
    right.plot([0, 1], [1, 0])
    labelled(right, r"$\lambda_t$", "loss")
    found = figure_checks.problems(fig)
    assert any("axes 0" in p and "no y label" in p for p in found), found
    assert any("'lambda_t'" in p and "outside $...$" in p for p in found), found
    assert not any("axes 1" in p for p in found), found


def test_a_shared_axis_label_counts_for_its_neighbours():
    fig, axes = plt.subplots(1, 3, sharey=True)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("step")
    axes[0].set_ylabel("loss")
    assert figure_checks.problems(fig) == []


def test_non_finite_colour_limits_are_reported():
    fig, ax = plt.subplots()
    image = ax.imshow(np.random.default_rng(0).normal(size=(4, 4)))
    image.set_clim(np.nan, 1.0)
    labelled(ax)
    assert any("non-finite colour limits" in p for p in figure_checks.problems(fig))


def test_every_series_of_an_axes_with_a_legend_must_be_in_it():
    """The Chapter 2 defect: dotted NTK-flow lines and a reference line missing from the legend."""
    fig, ax = plt.subplots()
    t = np.linspace(0, 1, 20)
    ax.plot(t, t, label="network")
    ax.plot(t, t**2, ":", color="k")                      # the NTK flow, unlabelled
    ax.axhline(0.3, color="grey")                         # a reference level, unlabelled
    ax.legend()
    labelled(ax)
    found = figure_checks.problems(fig)
    assert sum("has no label" in p for p in found) == 2, found


def test_an_ensemble_needs_one_legend_entry():
    fig, ax = plt.subplots()
    t = np.linspace(0, 1, 20)
    for i in range(5):
        ax.plot(t, t * i, color="grey", label="random networks" if i == 0 else None)
    ax.plot(t, t, color="k", lw=2, label="mean")
    ax.legend()
    labelled(ax)
    assert figure_checks.problems(fig) == []


def test_two_styles_without_legend_are_reported_unless_named_otherwise():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], color="C0")
    ax.plot([0, 1], [1, 0], color="C1")
    labelled(ax)
    assert any("no legend" in p for p in figure_checks.problems(fig))
    ax.text(0.5, 0.5, "increasing: C0")
    assert figure_checks.problems(fig) == []


def test_errorbar_sweeps_with_a_fit_pass():
    ax = plotting.loglog_sweep([64, 256, 1024], [1.0, 0.5, 0.25], yerr=[0.1, 0.05, 0.02],
                               label="error", ylabel="relative error")
    assert figure_checks.problems(ax.figure) == []


def test_kernel_heatmaps_are_labelled():
    i = np.arange(5.0)
    ax = plotting.kernel_heatmap(np.exp(-np.abs(i[:, None] - i[None, :])))
    assert figure_checks.problems(ax.figure) == []


def test_problems_rejects_a_non_figure():
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        figure_checks.problems("figure")


def test_the_hook_reports_every_displayed_figure(capsys):
    """install() wraps IPython's PNG formatter: a displayed figure with a problem prints it."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png")
        assert figure_checks.install()
        assert figure_checks.install()  # idempotent: one wrapper, one report per figure
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        shell.display_formatter.format(fig)
        err = capsys.readouterr().err
        assert err.count(figure_checks.MARKER) == 2, err  # no x label, no y label
        labelled(ax)
        shell.display_formatter.format(fig)
        assert figure_checks.MARKER not in capsys.readouterr().err
    finally:
        InteractiveShell.clear_instance()
