"""Validation cases of lecturekit.feature_learning (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)
from lecturekit import feature_learning

U3 = np.array([1.0, 2.0, -1.0])
NONZERO = ((np.zeros(3), VALUE_ERR),)

CASES = [
    case("feature_learning.single_index_data", feature_learning.single_index_data,
         lambda: dict(key=KEY, n=4, u=U3), key=Key(), n=Int(1), u=Arr(ndim=1, nonempty=True, extra=NONZERO)),
    case("feature_learning.relative_change", feature_learning.relative_change,
         lambda: dict(a0=spd(), a1=2 * spd()), a0=Arr(fixed=(0, 1), extra=((np.zeros((4, 4)), VALUE_ERR),)),
         a1=Arr(fixed=(0, 1))),
    case("feature_learning.feature_kernel", feature_learning.feature_kernel,
         lambda: dict(net=NET, params=mlp_params(NET), x=x53()),
         net=Net(), params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("feature_learning.top_direction_overlap", feature_learning.top_direction_overlap,
         lambda: dict(w0=np.zeros((3, 4)), w1=RNG.standard_normal((3, 4)), u=U3),
         w0=Arr(ndim=2, fixed=(0, 1)), w1=Arr(ndim=2, fixed=(0, 1)),
         u=Arr(ndim=1, fixed=(0,), extra=NONZERO)),
    case("feature_learning.direction_energy", feature_learning.direction_energy,
         lambda: dict(w=RNG.standard_normal((3, 4)), u=U3),
         w=Arr(ndim=2, fixed=(0,), extra=((np.zeros((3, 4)), VALUE_ERR),)), u=Arr(ndim=1, fixed=(0,), extra=NONZERO)),
    case("feature_learning.largest_stable_lr", feature_learning.largest_stable_lr,
         lambda: dict(net=NET, params=mlp_params(NET), x=x53()),
         net=Net(extra=((NET_K, VALUE_ERR),)), params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("feature_learning.feature_movement", feature_learning.feature_movement,
         lambda: dict(net=NET, params=mlp_params(NET), x=x53(), y=np.arange(5.0) / 5, lr=0.1, steps=3, alpha=2.0),
         net=Net(), params=Params(structured=True), x=Arr(ndim=2, fixed=(0, 1)), y=Arr(ndim=1, fixed=(0,)),
         lr=POS, steps=Int(0), alpha=Real(lo=0.0, lo_open=True, optional=True)),
    case("feature_learning.effective_scalings", feature_learning.effective_scalings,
         lambda: dict(net=NET), net=Net()),
    case("feature_learning.lr_sweep", feature_learning.lr_sweep,
         lambda: dict(net=NET, x=x53(), y=np.arange(5.0) / 5, lrs=np.array([0.1, 1.0]), key=KEY,
                      seeds=2, steps=3, stop_above=1e6, batch_size=None),
         net=Net(extra=((NET_K, VALUE_ERR),)), x=Arr(ndim=2, fixed=(0, 1)), y=Arr(ndim=1, fixed=(0,)),
         lrs=Arr(ndim=1, lo=0.0, lo_open=True, nonempty=True), key=Key(), seeds=Int(1), steps=Int(1),
         stop_above=POS, batch_size=Int(1, optional=True)),
    case("feature_learning.best_lr", feature_learning.best_lr,
         lambda: dict(lrs=2.0 ** np.arange(-2, 3), losses=RNG.uniform(1, 2, (2, 5))),
         lrs=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, nonempty=True),
         losses=Arr(min_ndim=1, fixed=(1,), lo=0.0, lo_open=True, finite=False)),
]
