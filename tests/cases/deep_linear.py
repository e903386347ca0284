"""Validation cases of lecturekit.deep_linear (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import deep_linear  # noqa: E402

WIDTHS = Custom((("abc", TYPE_ERR), (3, TYPE_ERR), (None, TYPE_ERR), ((), VALUE_ERR), ((4, 0), VALUE_ERR),
                 ((4, 3.5), TYPE_ERR), ((5, 3), VALUE_ERR)))
X_DATA = Arr(ndim=2, fixed=(0, 1), nonempty=True,
             extra=((np.ones((2, 4)), VALUE_ERR), (np.ones((4, 4)), VALUE_ERR)))
Y_DATA = Arr(ndim=1, fixed=(0,))
METHOD = Custom((("no-such-method", VALUE_ERR), (3, TYPE_ERR), (None, TYPE_ERR)))
POSTERIOR = Custom(((None, TYPE_ERR), ("posterior", TYPE_ERR), ((1.0, 2.0), TYPE_ERR)))


def data():
    x = np.array([[1.0, 0.5, 0.0, -0.3], [0.2, 1.0, 0.4, 0.0]])
    return dict(x_data=x, y=np.array([1.0, -0.5]))


CASES = [
    case("deep_linear.log_norm_density", deep_linear.log_norm_density,
         lambda: dict(widths=(3, 2), points_per_sd=8), widths=Custom(WIDTHS.bad[:-1]),
         points_per_sd=Int(4)),
    # more columns is still a valid X for interpolation alone (no widths to match)
    case("deep_linear.interpolation", deep_linear.interpolation, data,
         x_data=Arr(ndim=2, fixed=(0,), nonempty=True, extra=X_DATA.extra), y=Y_DATA),
    case("deep_linear.norm_posterior", deep_linear.norm_posterior,
         lambda: dict(**data(), widths=(4, 3), sigma2=1.0, method="mixture"),
         x_data=X_DATA, y=Y_DATA, widths=WIDTHS, sigma2=Real(lo=0.0, lo_open=True), method=METHOD),
    case("deep_linear.predictive", deep_linear.predictive,
         lambda: dict(posterior=deep_linear.norm_posterior(**data(), widths=(4,)), x=np.array([1.0, 0, 0, 1])),
         posterior=POSTERIOR, x=Arr(ndim=(1, 2), fixed=(0,), extra=((np.ones(3), VALUE_ERR),))),
    case("deep_linear.effective_depth", deep_linear.effective_depth, lambda: dict(P=3, hidden=(4, 2)),
         P=Int(1), hidden=Custom((("abc", TYPE_ERR), (3, TYPE_ERR), (None, TYPE_ERR), ((2, 0), VALUE_ERR)))),
    case("deep_linear.sample_posterior", deep_linear.sample_posterior,
         lambda: dict(key=KEY, **data(), widths=(4, 3), count=5, sigma2=1.0),
         key=Key(), x_data=X_DATA, y=Y_DATA, widths=WIDTHS, count=Int(1), sigma2=Real(lo=0.0, lo_open=True)),
    case("deep_linear.log_evidence", deep_linear.log_evidence,
         lambda: dict(**data(), widths=(4, 3), sigma2=1.0),
         x_data=X_DATA, y=Y_DATA, widths=WIDTHS, sigma2=Real(lo=0.0, lo_open=True)),
    case("deep_linear.optimal_prior_scale", deep_linear.optimal_prior_scale,
         lambda: dict(**data(), widths=(4,)), x_data=X_DATA, y=Y_DATA, widths=WIDTHS),
]
