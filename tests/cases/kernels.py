"""Validation cases of lecturekit.kernels (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("kernels.gauss_hermite_rule", kernels.gauss_hermite_rule, lambda: dict(nodes=8), nodes=Int(1)),
    case("kernels.relu_nngp_sphere", kernels.relu_nngp_sphere, lambda: dict(xi=np.linspace(-1, 1, 5)),
         xi=Arr(lo=-1.0, hi=1.0)),
    case("kernels.relu_ntk_sphere", kernels.relu_ntk_sphere, lambda: dict(xi=np.linspace(-1, 1, 5)),
         xi=Arr(lo=-1.0, hi=1.0)),
    case("kernels.dual_expectations", kernels.dual_expectations,
         lambda: dict(activation="tanh", k11=np.array([1.0, 2.0, 0.5]), k12=np.array([0.5, -1.0, 0.1]),
                      k22=np.array([1.0, 1.0, 0.5]), quadrature=False, nodes=8),
         activation=ACT, k11=Arr(lo=0.0, fixed=(0,)), k22=Arr(lo=0.0, fixed=(0,)),
         k12=Arr(fixed=(0,), extra=((np.array([5.0, 0.0, 0.0]), VALUE_ERR),)), nodes=Int(2)),
    case("kernels.dual_fn", kernels.dual_fn, lambda: dict(activation="relu", quadrature=True, nodes=8),
         activation=ACT, nodes=Int(2)),
    case("kernels.mlp_kernels", kernels.mlp_kernels,
         lambda: dict(x1=x53(), x2=x53()[:2], depth=2, activation="erf", w_std=1.2, b_std=0.1, out_w_std=1.0,
                      out_b_std=0.0),
         x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True), depth=Int(1), activation=ACT,
         w_std=NONNEG, b_std=NONNEG, out_w_std=NONNEG, out_b_std=NONNEG),
]
