"""Validation cases of lecturekit.gaussian (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import gaussian

CASES = [
    case("gaussian.gauss_hermite_rule", gaussian.gauss_hermite_rule, lambda: dict(nodes=8), nodes=Int(1)),
    case("gaussian.expectation", gaussian.expectation,
         lambda: dict(fn=jnp.tanh, variance=np.array([0.5, 1.0]), nodes=8), fn=Fn(), variance=Arr(lo=0.0),
         nodes=Int(1)),
    case("gaussian.dual_expectations", gaussian.dual_expectations,
         lambda: dict(activation="tanh", k11=np.array([1.0, 2.0, 0.5]), k12=np.array([0.5, -1.0, 0.1]),
                      k22=np.array([1.0, 1.0, 0.5]), quadrature=False, nodes=8),
         activation=ACT, k11=Arr(lo=0.0, fixed=(0,)), k22=Arr(lo=0.0, fixed=(0,)),
         k12=Arr(fixed=(0,), extra=((np.array([5.0, 0.0, 0.0]), VALUE_ERR),)), nodes=Int(2)),
    case("gaussian.dual_fn", gaussian.dual_fn, lambda: dict(activation="relu", quadrature=True, nodes=8),
         activation=ACT, nodes=Int(2)),
]
