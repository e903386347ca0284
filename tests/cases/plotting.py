"""Validation cases of lecturekit.plotting (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("plotting.use_book_style", plotting.use_book_style, lambda: {}),
    case("plotting.loglog_sweep", plotting.loglog_sweep,
         lambda: dict(x=np.array([1.0, 2.0, 4.0]), y=np.array([1.0, 0.7, 0.5]), yerr=np.array([0.1, 0.1, 0.05])),
         cleanup=close_figures,
         x=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, nonempty=True), y=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True),
         yerr=Arr(ndim=(1, 2), fixed=(0,), lo=0.0, optional=True)),
    case("plotting.kernel_heatmap", plotting.kernel_heatmap, lambda: dict(matrix=spd()), cleanup=close_figures,
         matrix=Arr(ndim=2, nonempty=True)),
    case("plotting.phase_diagram", plotting.phase_diagram,
         lambda: dict(x=np.array([1.0, 2.0, 3.0]), y=np.array([0.5, 1.0]),
                      values=np.array([[0.5, 1.5, 2.0], [0.8, 1.2, np.nan]]), levels=(1.0,)),
         cleanup=close_figures,
         x=Arr(ndim=1, fixed=(0,), nonempty=True), y=Arr(ndim=1, fixed=(0,), nonempty=True),
         values=Arr(ndim=2, fixed=(0, 1), finite=False, lo=0.0, lo_open=True,
                    extra=((np.array([[0.5, np.inf, 2.0], [0.8, 1.2, 1.0]]), VALUE_ERR),)),
         levels=Custom((("a", TYPE_ERR), ([], VALUE_ERR), ([np.nan], VALUE_ERR)))),
    case("plotting.regions_2d", plotting.regions_2d, lambda: dict(regions=regions_2d(), seed=0, linewidth=0.3),
         cleanup=close_figures,
         regions=Custom((("r", TYPE_ERR), (None, TYPE_ERR),
                         (regions.Regions2D([], np.zeros((0, 3), bool), np.zeros((0, 2))), VALUE_ERR))),
         seed=Int(0), linewidth=NONNEG),
]
