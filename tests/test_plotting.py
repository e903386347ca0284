"""Tests of lecturekit.plotting.regions_2d (the other plot types: tests/test_figure_checks.py)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecturekit import nets, plotting, regions  # noqa: E402


def _regions(box=(-1.0, 2.0, -1.0, 1.0)):
    net = nets.mlp((2, 3, 1), "relu", parameterization="standard")
    params = [{"W": np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]), "b": np.array([0.0, 0.0, -1.0])},
              {"W": np.ones((3, 1)), "b": np.zeros(1)}]
    return regions.activation_regions_2d(net, params, box)


def test_regions_2d_draws_every_polygon_in_its_own_colour():
    reg = _regions()
    fig, ax = plt.subplots()
    try:
        assert plotting.regions_2d(reg, ax=ax, seed=3) is ax
        (collection,) = ax.collections
        assert len(collection.get_paths()) == reg.count
        colours = collection.get_facecolor()[:, :3]
        assert len(np.unique(np.round(colours, 6), axis=0)) == reg.count
        assert [float(v) for v in ax.get_xlim()] == [-1.0, 2.0]
        assert [float(v) for v in ax.get_ylim()] == [-1.0, 1.0]
        # the same seed gives the same colours
        again = plotting.regions_2d(reg, seed=3)
        np.testing.assert_array_equal(again.collections[0].get_facecolor(), collection.get_facecolor())
    finally:
        plt.close("all")


def test_regions_2d_bad_input():
    with pytest.raises(TypeError, match="regions"):
        plotting.regions_2d([np.zeros((3, 2))])
    with pytest.raises(ValueError, match="regions"):
        plotting.regions_2d(regions.Regions2D([], np.zeros((0, 3), bool), np.zeros((0, 2))))
    with pytest.raises(ValueError, match="linewidth"):
        plotting.regions_2d(_regions(), linewidth=-1.0)
    plt.close("all")

