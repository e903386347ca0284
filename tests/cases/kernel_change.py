"""Validation cases of lecturekit.kernel_change (assembled by tests/validation_cases.py)."""

from lecturekit import kernel_change
from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("kernel_change.kernel_change_run", kernel_change.kernel_change_run,
         lambda: dict(net=NET_K, keys=jax.random.split(KEY, 2), x=x53()[:3], targets=np.eye(2)[[0, 1, 0]],
                      train_head="linear", loss="square", kernel_heads=("linear",), lr=0.1, steps=2,
                      every=1, scales=np.array([1.0, 2.0])),
         net=Net(), keys=Keys(), x=Arr(ndim=2, fixed=(0, 1)), targets=Arr(ndim=2, fixed=(0, 1)), train_head=HEAD,
         loss=Choice(), kernel_heads=Custom((("linear", TYPE_ERR), (("no-such-head",), VALUE_ERR))), lr=POS,
         steps=Int(1), every=Int(1, extra=((3, VALUE_ERR),)),
         scales=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True)),
    case("kernel_change.kernel_change_runs", kernel_change.kernel_change_runs,
         lambda: dict(net=NET_K, keys=jax.random.split(KEY, 2), x=x53()[:3], targets=np.eye(2)[[0, 1, 0]],
                      configs=[dict(train_head="linear", loss="cross_entropy", kernel_heads=("softmax",))], lr=0.1,
                      steps=2, every=1, scales=np.array([1.0, 0.5])),
         net=Net(), keys=Keys(), x=Arr(ndim=2, fixed=(0, 1)), targets=Arr(ndim=2, fixed=(0, 1)),
         configs=Custom((([], VALUE_ERR), ("abc", VALUE_ERR), ([{"train_head": "linear"}], VALUE_ERR))), lr=POS,
         steps=Int(1), every=Int(1), scales=Arr(ndim=1, fixed=(0,), lo=0.0, lo_open=True, optional=True)),
    case("kernel_change.relu_kernel_split", kernel_change.relu_kernel_split,
         lambda: dict(m=3, key=KEY, x=x53(), y=np.arange(5.0), lr=0.1, steps=3),
         m=Int(1), key=Key(), x=Arr(ndim=2, fixed=(0,), nonempty=True), y=Arr(ndim=1, fixed=(0,)), lr=POS,
         steps=Int(1)),
    case("kernel_change.first_units_width_sweep", kernel_change.first_units_width_sweep,
         lambda: dict(x=np.array([-1.0, 0.0, 1.0]), y=np.array([0.5, -0.2, 0.3]), x_eval=np.linspace(-1.0, 1.0, 4),
                      widths=(2, 4), key=KEY, max_width=4, lr=0.1, steps=3, w_scale=2.0),
         x=Arr(ndim=1, fixed=(0,), nonempty=True), y=Arr(ndim=1, fixed=(0,)), x_eval=Arr(ndim=1, nonempty=True),
         widths=Custom((((), VALUE_ERR), ((2, 8), VALUE_ERR), ((2, 0), VALUE_ERR), ((2.5,), TYPE_ERR), (None, TYPE_ERR),
                        ("ab", TYPE_ERR), (3, TYPE_ERR))),
         key=Key(), max_width=Int(1, extra=((3, VALUE_ERR),)), lr=POS, steps=Int(1), w_scale=POS),
]
