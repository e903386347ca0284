"""Validation cases of lecturekit.figure_checks (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    # smoke=False: install() changes IPython's display formatter (a no-op outside IPython)
    case("figure_checks.install", figure_checks.install, lambda: dict(), smoke=False),
    case("figure_checks.problems", figure_checks.problems, lambda: dict(fig=plt.figure()),
         cleanup=close_figures, fig=Custom((("figure", TYPE_ERR), (None, TYPE_ERR), (np.zeros(3), TYPE_ERR)))),
    case("figure_checks.report", figure_checks.report, lambda: dict(fig=plt.figure()),
         cleanup=close_figures, fig=Custom((("figure", TYPE_ERR), (None, TYPE_ERR)))),
]
