"""Validation cases of lecturekit.quadratic (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("quadratic.quadratic_model", quadratic.quadratic_model, lambda: dict(f=linear_model, params0=tree3()),
         f=Fn(), params0=Params()),
    case("quadratic.taylor_terms", quadratic.taylor_terms,
         lambda: dict(f=linear_model, params0=tree3(), params={"w": np.ones(3), "b": np.zeros(1)}, x=x53()),
         f=Fn(), params0=Params(), params=Params(structured=True), x=Arr()),
    case("quadratic.perturbative_minimizer", quadratic.perturbative_minimizer,
         lambda: dict(phi=np.random.default_rng(5).standard_normal((4, 2)),
                      psi=np.stack([np.eye(4), np.diag([1.0, 2.0, 0.0, -1.0])]), y=np.array([1.0, -1.0])),
         phi=Arr(ndim=2, fixed=(0, 1), extra=((np.ones((1, 2)), VALUE_ERR),)), psi=Arr(ndim=3, fixed=(0, 1, 2)),
         y=Arr(ndim=1, fixed=(0,))),
]
