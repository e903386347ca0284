"""Validation cases of lecturekit.stats (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("stats.fit_loglog", stats.fit_loglog, lambda: dict(x=np.array([1.0, 2.0, 4.0]), y=np.array([3.0, 2.0, 1.1])),
         x=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, extra=((np.array([1.0]), VALUE_ERR),)),
         y=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True)),
    case("stats.fit_loglog_slope", stats.fit_loglog_slope,
         lambda: dict(x=np.array([1.0, 2.0, 4.0]), y=np.array([3.0, 2.0, 1.1])),
         x=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True), y=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True)),
    case("stats.fit_mean_loglog", stats.fit_mean_loglog,
         lambda: dict(x=np.array([1.0, 2.0, 4.0]), samples=np.array([[3.0, 3.2], [2.0, 2.1], [1.1, 1.0]])),
         x=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, extra=((np.ones(3), VALUE_ERR),)),
         samples=Arr(ndim=2, fixed=(0,), lo=0.0, lo_open=True, extra=((np.ones((3, 1)), VALUE_ERR),))),
    case("stats.mean_and_stderr", stats.mean_and_stderr, lambda: dict(samples=x53(), axis=0),
         samples=Arr(extra=((np.ones((1, 3)), VALUE_ERR),)), axis=Int(-2, extra=((2, VALUE_ERR),))),
    case("stats.bootstrap", stats.bootstrap,
         lambda: dict(key=KEY, samples=np.array([1.0, 2.0, 4.0, 3.0]), statistic=np.mean, resamples=5),
         key=Key(), samples=Arr(min_ndim=1, extra=((np.ones(1), VALUE_ERR),)), statistic=Fn(), resamples=Int(2)),
]
