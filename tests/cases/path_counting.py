"""Validation cases of lecturekit.path_counting (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import path_counting  # noqa: E402

HIDDEN = Custom((("abc", TYPE_ERR), (3, TYPE_ERR), (None, TYPE_ERR), ((), VALUE_ERR), ((0, 2), VALUE_ERR),
                 ((2.5,), TYPE_ERR)))
WIDTHS = Custom((("abc", TYPE_ERR), (3, TYPE_ERR), (None, TYPE_ERR), ((2, 3), VALUE_ERR), ((2, 0, 1), VALUE_ERR),
                 ((2, 3.5, 1), TYPE_ERR), ((100, 100, 101), VALUE_ERR)))
PC_NET = path_counting.relu_network(3, (4, 2))
NOT_SCALAR = Net(extra=((nets.mlp((3, 4, 2)), VALUE_ERR),))
NOT_BIAS_FREE = Net(extra=((nets.mlp((3, 4, 1), b_std=0.1), VALUE_ERR), (NET_TANH, VALUE_ERR)))
DTYPE = Custom((("abc", TYPE_ERR), (np.int32, TYPE_ERR)))


def census_signs():
    rng = np.random.default_rng(4)
    return [rng.choice([-1, 1], size=shape) for shape in ((2, 3, 4), (2, 4, 2), (2, 2, 1))]


def _chain(*shapes, fill=1.0, dtype=float):
    return [np.full(shape, fill, dtype=dtype) for shape in shapes]


CENSUS_SIGNS = Custom((
    ("abc", TYPE_ERR), (None, TYPE_ERR), (3, TYPE_ERR), ({"a": 1}, TYPE_ERR), ([np.ones((2, 3, 1))], VALUE_ERR),
    (["abc", np.ones((2, 4, 1))], TYPE_ERR), (_chain((2, 3, 4), (2, 4, 1), dtype=complex), TYPE_ERR),
    (_chain((2, 3, 4), (2, 4, 1), dtype=bool), TYPE_ERR), (_chain((2, 3, 4), (2, 4, 1), fill=0.5), VALUE_ERR),
    (_chain((2, 3, 4), (2, 4, 1), fill=np.nan), VALUE_ERR), (_chain((3, 4), (2, 4, 1)), VALUE_ERR),
    (_chain((2, 3, 4), (2, 3, 1)), VALUE_ERR), (_chain((2, 3, 4), (1, 4, 1)), VALUE_ERR),
    (_chain((2, 3, 4), (2, 4, 2)), VALUE_ERR),
))


def batched(count=2):
    return [{"W": np.stack([layer["W"]] * count), "b": np.stack([layer["b"]] * count)}
            for layer in mlp_params(PC_NET)]


def ensemble_case(name, fn):
    return case(f"path_counting.{name}", fn,
                lambda: dict(net=PC_NET, key=KEY, count=3, x=x53()[:2], law="gaussian", chunk=2,
                             dtype=None),
                net=NOT_SCALAR, key=Key(), count=Int(1), x=Arr(ndim=2, fixed=(1,)), law=Choice(),
                chunk=Int(1), dtype=DTYPE)


CASES = [
    case("path_counting.relu_network", path_counting.relu_network, lambda: dict(n0=3, hidden=(4, 2)),
         n0=Int(1), hidden=HIDDEN),
    case("path_counting.beta", path_counting.beta, lambda: dict(hidden=(4, 2)), hidden=HIDDEN),
    case("path_counting.derivative_moments", path_counting.derivative_moments,
         lambda: dict(n0=3, hidden=(4, 2)), n0=Int(1), hidden=HIDDEN),
    case("path_counting.ntk_diagonal_mean", path_counting.ntk_diagonal_mean, lambda: dict(x=x53(), depth=2),
         x=Arr(ndim=2), depth=Int(1)),
    case("path_counting.enumerate_paths", path_counting.enumerate_paths, lambda: dict(widths=(2, 3, 1)),
         widths=WIDTHS),
    case("path_counting.path_expansion", path_counting.path_expansion,
         lambda: dict(net=PC_NET, params=mlp_params(PC_NET), x=x53()),
         net=NOT_BIAS_FREE, params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("path_counting.input_gradients", path_counting.input_gradients,
         lambda: dict(net=PC_NET, params=mlp_params(PC_NET), x=x53()),
         net=NOT_SCALAR, params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("path_counting.ntk_layer_terms", path_counting.ntk_layer_terms,
         lambda: dict(net=PC_NET, params=mlp_params(PC_NET), x=x53()),
         net=NOT_SCALAR, params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("path_counting.transform_weights", path_counting.transform_weights,
         lambda: dict(params=mlp_params(PC_NET), law="uniform"), params=Params(), law=Choice()),
    ensemble_case("input_gradient_ensemble", path_counting.input_gradient_ensemble),
    ensemble_case("ntk_diagonal_ensemble", path_counting.ntk_diagonal_ensemble),
    case("path_counting.relative_second_moment", path_counting.relative_second_moment,
         lambda: dict(samples=np.array([1.0, 2.0, 4.0])),
         samples=Arr(min_ndim=1, extra=((np.ones(1), VALUE_ERR),))),
    case("path_counting.trained_kernel_change", path_counting.trained_kernel_change,
         lambda: dict(net=PC_NET, params=batched(), x=x53()[:2], y=np.array([1.0, -1.0]), lr=0.1, steps=2),
         net=NOT_SCALAR, params=Params(structured=True), x=Arr(ndim=2, fixed=(0, 1)), y=Arr(ndim=1, fixed=(0,)),
         lr=POS, steps=Int(1)),
    case("path_counting.sign_census", path_counting.sign_census,
         lambda: dict(signs=census_signs(), x=np.array([0.3, -1.2, 0.7])),
         signs=CENSUS_SIGNS, x=Arr(ndim=1, fixed=(0,))),
    case("path_counting.derivative_law_sample", path_counting.derivative_law_sample,
         lambda: dict(key=KEY, n0=3, hidden=(4, 2), count=5), key=Key(), n0=Int(1), hidden=HIDDEN, count=Int(1)),
    case("path_counting.ratio_estimate", path_counting.ratio_estimate,
         lambda: dict(samples=np.array([1.0, 2.0, 0.5, 1.5, 3.0, 1.0, 0.8, 2.2]), batches=2),
         samples=Arr(ndim=1, extra=((np.ones(3), VALUE_ERR),)), batches=Int(2)),
    case("path_counting.layer_factor_ratio", path_counting.layer_factor_ratio, lambda: dict(hidden=(4, 2)),
         hidden=HIDDEN),
    case("path_counting.layer_product_moment", path_counting.layer_product_moment,
         lambda: dict(hidden=(4, 2), order=2), hidden=HIDDEN, order=Int(1)),
    case("path_counting.part_ratio_stderr", path_counting.part_ratio_stderr,
         lambda: dict(hidden=(4, 2), count=100), hidden=HIDDEN, count=Int(1)),
]
