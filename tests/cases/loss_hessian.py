"""Validation cases of lecturekit.loss_hessian (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import loss_hessian  # noqa: E402


def tiny_model(p, x):
    return jnp.tanh(x @ p["w"]) * p["b"][0]


def softmax_model(p, x):
    return x @ p["w"]


def softmax_params():
    return {"w": np.random.default_rng(4).standard_normal((3, 2))}


LABELS = Custom((("abc", TYPE_ERR), (None, TYPE_ERR), (np.zeros(5), VALUE_ERR), (np.array([0, 1, 0]), VALUE_ERR), (np.zeros(5, dtype=int), VALUE_ERR),
                 (np.array([0, 1, 2, 0, 1]), VALUE_ERR)))
BASIS = Custom((([], VALUE_ERR), (np.ones((1, 5)), VALUE_ERR), ("abc", TYPE_ERR), (None, TYPE_ERR),
                (np.array([[np.nan, 0.0, 0.0, 0.0]]), VALUE_ERR)))
Y = Arr(ndim=(1, 2), fixed=(0,))


def model_args(**extra):
    return lambda: dict(apply=tiny_model, params=tree3(), x=x53(), y=np.linspace(-1.0, 1.0, 5), **extra)


CASES = [
    case("loss_hessian.loss_value", loss_hessian.loss_value, model_args(loss="square"),
         apply=Fn(), params=Params(), x=Arr(ndim=2, nonempty=True), y=Y, loss=Choice()),
    case("loss_hessian.decompose", loss_hessian.decompose, model_args(loss="square", max_params=10),
         apply=Fn(), params=Params(), x=Arr(ndim=2, nonempty=True), y=Y, loss=Choice(),
         max_params=Int(1, extra=((3, VALUE_ERR),))),
    case("loss_hessian.gauss_newton_product", loss_hessian.gauss_newton_product, model_args(v=tree3(), loss="square"),
         apply=Fn(), params=Params(), x=Arr(ndim=2, nonempty=True), y=Y, v=Params(structured=True),
         loss=Choice()),
    case("loss_hessian.residual_product", loss_hessian.residual_product, model_args(v=tree3(), loss="square"),
         apply=Fn(), params=Params(), x=Arr(ndim=2, nonempty=True), y=Y, v=Params(structured=True),
         loss=Choice()),
    case("loss_hessian.fisher_information", loss_hessian.fisher_information,
         lambda: dict(apply=tiny_model, params=tree3(), x=x53(), max_params=10),
         apply=Fn(), params=Params(), x=Arr(ndim=2, nonempty=True), max_params=Int(1, extra=((3, VALUE_ERR),))),
    case("loss_hessian.class_decomposition", loss_hessian.class_decomposition,
         lambda: dict(apply=softmax_model, params=softmax_params(), x=x53(), labels=np.array([0, 1, 0, 1, 1]),
                      max_params=10),
         apply=Fn(), params=Params(), x=Arr(ndim=2, nonempty=True), labels=LABELS,
         max_params=Int(1, extra=((3, VALUE_ERR),))),
    case("loss_hessian.subspace_overlap", loss_hessian.subspace_overlap,
         lambda: dict(vector=tree3(), basis=np.eye(4)[:2]), vector=Params(), basis=BASIS),
]
