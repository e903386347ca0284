"""Validation cases of lecturekit.regression (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("regression.kernel_regression", regression.kernel_regression,
         lambda: dict(k_train=spd(), y=np.arange(4.0), k_test_train=spd()[:2], ridge=0.1),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), k_test_train=Arr(ndim=2, fixed=(1,), optional=True),
         ridge=NONNEG),
    case("regression.kernel_coefficients", regression.kernel_coefficients,
         lambda: dict(k_train=spd(), y=np.arange(4.0), ridge=0.0),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), ridge=NONNEG),
    case("regression.rkhs_norm_squared", regression.rkhs_norm_squared,
         lambda: dict(k_train=spd(), coefficients=np.arange(4.0)),
         k_train=Arr(ndim=2, fixed=(0, 1)), coefficients=Arr(ndim=(1, 2), fixed=(0,))),
    case("regression.gradient_flow_predictor", regression.gradient_flow_predictor,
         lambda: dict(k_train=spd(), y=np.arange(4.0), t=np.array([0.0, 1.0, 10.0]), k_test_train=spd()[:2],
                      f0_train=np.ones(4), f0_test=np.ones(2)),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), t=Arr(lo=0.0), k_test_train=Arr(ndim=2, fixed=(1,), optional=True),
         f0_train=Arr(fixed=(0,), optional=True), f0_test=Arr(fixed=(0,), optional=True)),
    case("regression.gradient_flow_train_loss", regression.gradient_flow_train_loss,
         lambda: dict(k_train=spd(), y=np.arange(4.0), t=np.array([0.0, 1.0]), f0_train=np.ones(4)),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), t=Arr(lo=0.0), f0_train=Arr(fixed=(0,), optional=True)),
    case("regression.gradient_descent_predictor", regression.gradient_descent_predictor,
         lambda: dict(k_train=spd(), y=np.arange(4.0), lr=0.5, steps=3, k_test_train=spd()[:2], f0_train=np.ones(4),
                      f0_test=np.ones(2)),
         k_train=KERNEL, y=Arr(ndim=(1, 2), fixed=(0,)), lr=POS, steps=Int(0),
         k_test_train=Arr(ndim=2, fixed=(1,), optional=True), f0_train=Arr(fixed=(0,), optional=True),
         f0_test=Arr(fixed=(0,), optional=True)),
]
