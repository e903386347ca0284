"""Validation cases of lecturekit.explore (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import explore


def _plot(width=64, rate=0.5):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, rate])
    ax.set_title(f"width {width}")
    return fig


CASES = [
    case("explore.explorer", explore.explorer,
         lambda: dict(plot=_plot, width=explore.Choice([16, 64, 256]), rate=explore.Linear(0.0, 1.0, 0.1)),
         cleanup=close_figures,
         plot=Custom(((None, TYPE_ERR), ("plot", TYPE_ERR), (lambda *a: None, TYPE_ERR))),
         width=Custom(((64, TYPE_ERR), (explore.Choice([]), VALUE_ERR), (explore.Choice([1, 2]), VALUE_ERR))),
         rate=Custom((("r", TYPE_ERR), (explore.Linear(1.0, 0.0, 0.1), VALUE_ERR),
                      (explore.Linear(0.0, 1.0, 0.0), VALUE_ERR), (explore.Log(0.6, 2.0), VALUE_ERR)))),
]
