"""Validation cases of lecturekit.heads (assembled by tests/validation_cases.py)."""

from lecturekit import heads
from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("heads.head_fn", heads.head_fn, lambda: dict(head="softmax"), head=HEAD),
    case("heads.model", heads.model, lambda: dict(net=NET_K, head="swish"),
         net=Net(extra=((nets.mlp((3, 4, 1), output_activation="tanh"), VALUE_ERR),)), head=HEAD),
    case("heads.head_ntk", heads.head_ntk,
         lambda: dict(net=NET_K, params=mlp_params(NET_K), x=x53()[:3], head="softmax"),
         net=Net(), params=Params(structured=True), x=Arr(ndim=2, fixed=(1,)), head=HEAD),
]
