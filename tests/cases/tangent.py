"""Validation cases of lecturekit.tangent (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("tangent.empirical_ntk[mlp]", tangent.empirical_ntk,
         lambda: dict(f=NET.apply, params=mlp_params(NET), x1=x53(), x2=x53()[:2], implementation="structured",
                      net=NET),
         f=Fn(), params=Params(structured=True), x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True),
         implementation=Choice(), net=Custom((("net", TYPE_ERR), (3, TYPE_ERR), (NET_TANH, VALUE_ERR)))),
    case("tangent.empirical_ntk[generic]", tangent.empirical_ntk,
         lambda: dict(f=linear_model, params=tree3(), x1=x53(), x2=None, implementation="auto"),
         f=Fn(), params=Params(), x1=Arr(ndim=2, fixed=(1,)),
         implementation=Custom((("structured", VALUE_ERR), ("no-such-method", VALUE_ERR), (3, TYPE_ERR)))),
    case("tangent.jacobian_ntk", tangent.jacobian_ntk,
         lambda: dict(f=linear_model, params=tree3(), x1=x53(), x2=x53()[:2]),
         f=Fn(), params=Params(), x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True)),
    case("tangent.vector_product_ntk", tangent.vector_product_ntk,
         lambda: dict(f=linear_model, params=tree3(), x1=x53(), x2=x53()[:2], chunk=2),
         f=Fn(), params=Params(), x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True),
         chunk=Int(1)),
    case("tangent.linearize", tangent.linearize, lambda: dict(f=linear_model, params0=tree3()),
         f=Fn(), params0=Params()),
    case("tangent.second_order_terms", tangent.second_order_terms, lambda: dict(f=linear_model, params0=tree3()),
         f=Fn(), params0=Params()),
]
