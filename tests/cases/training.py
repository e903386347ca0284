"""Validation cases of lecturekit.training (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)


def _outputs() -> np.ndarray:
    return np.arange(6.0).reshape(3, 2)


CASES = [
    case("training.mse_loss", training.mse_loss, lambda: dict(f=linear_model, x=x53(), y=np.arange(5.0)),
         f=Fn(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=(1, 2), fixed=(0,))),
    case("training.descend", training.descend,
         lambda: dict(loss_fn=scalar_loss, params=tree3(), lr=0.01, steps=3, every=2, observe=lambda p: p["w"],
                      stop_above=1e6, update=training.GradientStep()),
         loss_fn=Fn(), params=Params(), lr=POS, steps=Int(0), every=Int(1, optional=True), observe=Fn(optional=True),
         stop_above=Real(optional=True), update=Custom(((3, TYPE_ERR), ("plain", TYPE_ERR)))),
    case("training.gradient_descent", training.gradient_descent,
         lambda: dict(f=linear_model, params=tree3(), lr=0.05, steps=4, x=x53(), y=np.arange(5.0), every=2,
                      observe=lambda p: p["w"], stop_above=1e6),
         f=Fn(), params=Params(), lr=POS, steps=Int(0),
         x=Arr(ndim=2, fixed=(0, 1), optional=True, extra=((None, VALUE_ERR),)),
         y=Arr(ndim=(1, 2), fixed=(0,), optional=True, extra=((None, VALUE_ERR),)),
         every=Int(1, optional=True), observe=Fn(optional=True), stop_above=Real(optional=True)),
    case("training.lazy_loss", training.lazy_loss,
         lambda: dict(f=linear_model, params0=tree3(), x=x53(), y=np.arange(5.0), alpha=2.0),
         f=Fn(), params0=Params(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=(1, 2), fixed=(0,)), alpha=POS),
    case("training.noisy_descend", training.noisy_descend,
         lambda: dict(loss_fn=scalar_loss, params=tree3(), lr=0.01, steps=3, noise=0.1, key=KEY, decay=5.0),
         loss_fn=Fn(), params=Params(), lr=POS, steps=Int(0), noise=NONNEG, key=Key(), decay=Real(lo=0.0, lo_open=True, optional=True)),
    case("training.stochastic_descend", training.stochastic_descend,
         lambda: dict(f=linear_model, params=tree3(), x=x53(), y=np.arange(5.0), lr=0.01, steps=4, key=KEY,
                      batch=2, label_noise=0.5, every=2, observe=lambda p: p["w"]),
         f=Fn(), params=Params(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=1, fixed=(0,)), lr=POS, steps=Int(1),
         key=Key(), batch=Int(1, optional=True, extra=((6, VALUE_ERR),)), label_noise=NONNEG,
         every=Int(1, optional=True, extra=((3, VALUE_ERR),)), observe=Fn(optional=True)),
    case("training.ntk_observer", training.ntk_observer, lambda: dict(f=linear_model, x=x53()),
         f=Fn(), x=Arr(ndim=2)),
    case("training.OutputObserver", training.OutputObserver, lambda: dict(f=linear_model, x=x53()),
         f=Fn(), x=Arr(ndim=2)),
    case("training.KernelObserver", training.KernelObserver, lambda: dict(f=linear_model, x=x53(), diagonal=True),
         f=Fn(), x=Arr(ndim=2), diagonal=Custom(((1, TYPE_ERR), ("yes", TYPE_ERR), (None, TYPE_ERR)))),
    case("training.SharpnessObserver", training.SharpnessObserver,
         lambda: dict(f=linear_model, x=x53(), y=np.arange(5.0), key=KEY, steps=3),
         f=Fn(), x=Arr(ndim=2, fixed=(0,)), y=Arr(ndim=(1, 2), fixed=(0,)), key=Key(), steps=Int(2)),
    case("training.relative_kernel_change", training.relative_kernel_change,
         lambda: dict(k_t=np.stack([spd(), 2 * spd()]), k_0=spd()),
         k_t=Arr(min_ndim=2, fixed=(-1, -2)), k_0=Arr(ndim=2, fixed=(0, 1), extra=((np.zeros((4, 4)), VALUE_ERR),))),
    case("training.ntk_errors", training.ntk_errors,
         lambda: dict(make_net=ntk_net, widths=(2, 4), seeds=2, key=KEY, x=x53()[:3], theory=spd(3), nested=False),
         make_net=Fn(), widths=Custom((((), VALUE_ERR), ((2, 0), VALUE_ERR), ((2.5,), TYPE_ERR), (None, TYPE_ERR),
                                       ("ab", TYPE_ERR), (3, TYPE_ERR))),
         seeds=Int(1), key=Key(), x=Arr(ndim=2, fixed=(0, 1)), theory=Arr(ndim=2, fixed=(0, 1))),
]
