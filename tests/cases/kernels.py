"""Validation cases of lecturekit.kernels (assembled by tests/validation_cases.py).

The quadrature rule and the dual activations live in lecturekit.gaussian (tests/cases/gaussian.py);
kernels keeps aliases of them, not listed here."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import gaussian

CASES = [
    case("kernels.relu_nngp_sphere", kernels.relu_nngp_sphere, lambda: dict(xi=np.linspace(-1, 1, 5)),
         xi=Arr(lo=-1.0, hi=1.0)),
    case("kernels.relu_ntk_sphere", kernels.relu_ntk_sphere, lambda: dict(xi=np.linspace(-1, 1, 5)),
         xi=Arr(lo=-1.0, hi=1.0)),
    case("kernels.mlp_kernels", kernels.mlp_kernels,
         lambda: dict(x1=x53(), x2=x53()[:2], depth=2, activation="erf", w_std=1.2, b_std=0.1, out_w_std=1.0,
                      out_b_std=0.0),
         x1=Arr(ndim=2, fixed=(1,)), x2=Arr(ndim=2, fixed=(1,), optional=True), depth=Int(1), activation=ACT,
         w_std=NONNEG, b_std=NONNEG, out_w_std=NONNEG, out_b_std=NONNEG),
    case("kernels.next_layer", kernels.next_layer,
         lambda: dict(duals=gaussian.dual_fn("relu")(np.ones(3), np.full(3, 0.5), np.ones(3)),
                      weight=2.0, bias=0.1, ntk=np.ones(3)),
         duals=Custom(((np.ones(3), TYPE_ERR), ((np.ones(3), np.ones(3)), TYPE_ERR), (None, TYPE_ERR))),
         weight=NONNEG, bias=NONNEG, ntk=Custom((("abc", TYPE_ERR), (np.ones(4), VALUE_ERR)))),
]
