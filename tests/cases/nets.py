"""Validation cases of lecturekit.nets (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("nets.mlp", nets.mlp, lambda: dict(widths=(3, 4, 1), activation="erf", w_std=1.0, b_std=0.1, out_w_std=1.0,
                                             out_b_std=0.0, parameterization="ntk", output_activation=None),
         widths=Custom((((3, 0, 1), VALUE_ERR), ((3, -2, 1), VALUE_ERR), ((3, 1), VALUE_ERR), ("abc", TYPE_ERR),
                        ((3, 2.5, 1), TYPE_ERR), (None, TYPE_ERR), (5, TYPE_ERR))),
         activation=ACT, w_std=NONNEG, b_std=NONNEG, out_w_std=NONNEG, out_b_std=NONNEG,
         parameterization=Choice(), output_activation=Choice(optional=True)),
    case("MLP.init", NET.init, lambda: dict(key=KEY, dtype=None), key=Key(),
         dtype=Custom(((jnp.int32, TYPE_ERR), ("nonsense", TYPE_ERR), (bool, TYPE_ERR)))),
    case("MLP.init_many", NET.init_many, lambda: dict(key=KEY, count=3, dtype=jnp.float32), key=Key(), count=Int(1),
         dtype=Custom(((jnp.int32, TYPE_ERR), ("nonsense", TYPE_ERR)))),
    case("MLP.backward", NET_K.backward, lambda: dict(params=mlp_params(NET_K), x=x53()),
         params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("nets.unstack", nets.unstack, lambda: dict(params=NET.init_many(KEY, 2)), params=Params(structured=True)),
    case("nets.sub_network", nets.sub_network, lambda: dict(params=mlp_params(NET), width=2, block=1),
         params=Params(structured=True), width=Int(1), block=Int(0)),
    case("MLP.apply", NET.apply, lambda: dict(params=mlp_params(NET), x=x53()),
         params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("MLP.forward", NET.forward, lambda: dict(params=mlp_params(NET), x=x53()),
         params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("MLP.check_params", NET.check_params, lambda: dict(params=mlp_params(NET)), params=Params(structured=True)),
    case("MLP.nngp", NET_STD.nngp, lambda: dict(x1=x53(), x2=x53()[:2]),
         x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True)),
    case("MLP.kernels", NET.kernels, lambda: dict(x1=x53(), x2=x53()[:2]),
         x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True)),
]
