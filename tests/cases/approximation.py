"""Validation cases of lecturekit.approximation (assembled by tests/validation_cases.py)."""

from fractions import Fraction

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import approximation  # noqa: E402

SIGNS = np.array([1, -1, -1, 1])
LEARNERS = Custom((("abc", TYPE_ERR), ({}, TYPE_ERR), ({"zero": 3}, TYPE_ERR), (None, TYPE_ERR),
                   ([lambda xt, yt, xs: 0 * xs], TYPE_ERR)))
FLAG = Custom((("yes", TYPE_ERR), (1, TYPE_ERR), (None, TYPE_ERR)))
# p: a real >= 1 or +inf (the max norm); NaN, -inf, p < 1 and non-numbers are refused.
NORM_P = Custom(((0.5, VALUE_ERR), (-np.inf, VALUE_ERR), (np.nan, VALUE_ERR), ("2", TYPE_ERR),
                 (None, TYPE_ERR), (True, TYPE_ERR)))


def sine_target(key, x):
    return np.sin(3 * x)


def zero_learner(x_train, y_train, x_test):
    return 0 * x_test


def points():
    return np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])


CASES = [
    case("approximation.unseen_cell_errors", approximation.unseen_cell_errors,
         lambda: dict(key=KEY, target=sine_target, num_cells=4, learners={"zero": zero_learner}, num_samples=2,
                      reps=4),
         key=Key(), target=Fn(), num_cells=Int(2), learners=LEARNERS, num_samples=Int(1, optional=True),
         reps=Int(2)),
    case("approximation.zigzag", approximation.zigzag,
         lambda: dict(signs=SIGNS.copy(), x=np.array([0.0, 0.3, 1.0])),
         signs=Arr(min_ndim=1, lo=-1.0, hi=1.0, extra=((np.zeros(4), VALUE_ERR), (np.ones((2, 0)), VALUE_ERR))),
         x=Arr(ndim=1, lo=0.0, hi=1.0)),
    case("approximation.zigzag_encode", approximation.zigzag_encode,
         lambda: dict(values=np.array([0.0, 0.2, 0.1, -0.1])),
         values=Arr(min_ndim=1, extra=((np.array([0.0]), VALUE_ERR), (np.array([0.5, 0.2]), VALUE_ERR)))),
    case("approximation.ellipsoid_entropy_bounds", approximation.ellipsoid_entropy_bounds,
         lambda: dict(axes=np.array([1.0, 0.5]), bits=np.array([0.0, 3.0]), tail=0.1, grid=20),
         axes=Arr(ndim=1, nonempty=True, lo=0.0, lo_open=True, extra=((np.array([0.5, 1.0]), VALUE_ERR),)),
         bits=Arr(ndim=1, nonempty=True, lo=0.0), tail=Real(lo=0.0, hi=0.5), grid=Int(2)),
    case("approximation.pack_bits", approximation.pack_bits,
         lambda: dict(bits=[1, 0, 1], exact=True),
         bits=Custom((("101", TYPE_ERR), (None, TYPE_ERR), ({"a": 1}, TYPE_ERR), ([1, "a"], TYPE_ERR),
                      ([1j, 0], TYPE_ERR), ([], VALUE_ERR), ([1, 2], VALUE_ERR), ([0.5, 1], VALUE_ERR),
                      ([[1, 0]], VALUE_ERR), ([np.nan], VALUE_ERR))),
         exact=FLAG),
    case("approximation.unpack_bits", approximation.unpack_bits, lambda: dict(t=Fraction(5, 8), n=3),
         t=Custom((("0.5", TYPE_ERR), (None, TYPE_ERR), (True, TYPE_ERR), (1j, TYPE_ERR), (1.0, VALUE_ERR),
                   (-0.25, VALUE_ERR), (Fraction(3, 2), VALUE_ERR), (np.nan, VALUE_ERR), (np.inf, VALUE_ERR))),
         n=Int(1)),
    case("approximation.interpolation_network", approximation.interpolation_network,
         lambda: dict(values=np.array([0.0, 1.0, 0.0])),
         values=Arr(ndim=1, extra=((np.array([1.0]), VALUE_ERR),))),
    case("approximation.bit_extraction_network", approximation.bit_extraction_network,
         lambda: dict(signs=SIGNS.copy(), num_cells=2, offset=2.0),
         signs=Arr(ndim=1, lo=-1.0, hi=1.0, extra=((np.zeros(4), VALUE_ERR),)),
         num_cells=Int(1, extra=((3, VALUE_ERR),)), offset=POS),
    case("approximation.nonzero_parameters", approximation.nonzero_parameters,
         lambda: dict(params=mlp_params(NET)), params=Params()),
    case("approximation.perturb_nonzero", approximation.perturb_nonzero,
         lambda: dict(params=mlp_params(NET), key=KEY, size=0.1),
         params=Params(), key=Key(), size=NONNEG),
    case("approximation.input_gradient_norms", approximation.input_gradient_norms,
         lambda: dict(net=NET_STD, params=mlp_params(NET_STD), x=x53()),
         net=Net(extra=((NET_K, VALUE_ERR),)), params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("approximation.parameter_gradient_norms", approximation.parameter_gradient_norms,
         lambda: dict(net=NET_STD, params=mlp_params(NET_STD), x=x53()),
         net=Net(extra=((NET_K, VALUE_ERR),)), params=Params(structured=True), x=Arr(ndim=2, fixed=(1,))),
    case("approximation.jl_ratios", approximation.jl_ratios,
         lambda: dict(key=KEY, num_points=4, dim=5, count=3),
         key=Key(), num_points=Int(3), dim=Int(1), count=Int(1)),
    case("approximation.jl_dimension_bound", approximation.jl_dimension_bound,
         lambda: dict(num_points=16, ratio=2.0), num_points=Int(2), ratio=Real(lo=1.0, lo_open=True)),
    case("approximation.mcshane_extension", approximation.mcshane_extension,
         lambda: dict(x_known=points(), y_known=np.array([0.0, 1.0, 0.5]), lipschitz=1.0,
                      x_new=np.array([[0.5, 0.5], [2.0, 0.0]]), p=2.0, lower=False),
         x_known=Arr(ndim=2, fixed=(0, 1)), y_known=Arr(ndim=1, fixed=(0,)), lipschitz=NONNEG,
         x_new=Arr(ndim=2, fixed=(1,)), p=NORM_P, lower=FLAG),
    case("approximation.kirszbraun_point", approximation.kirszbraun_point,
         lambda: dict(x_known=points(), y_known=np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
                      x_new=np.array([0.5, 0.5]), lipschitz=1.5, p=2.0),
         x_known=Arr(ndim=2, fixed=(0, 1), nonempty=True), y_known=Arr(ndim=(1, 2), fixed=(0,)),
         x_new=Arr(ndim=1, fixed=(0,)), lipschitz=Real(lo=0.0, lo_open=True, optional=True), p=NORM_P),
    case("approximation.lipschitz_constant", approximation.lipschitz_constant,
         lambda: dict(x=points(), y=np.array([0.0, 1.0, 0.5]), p=2.0),
         x=Arr(ndim=2, fixed=(0,), extra=((np.zeros((3, 2)), VALUE_ERR),)),
         y=Arr(ndim=(1, 2), fixed=(0,), extra=((np.ones(1), VALUE_ERR),)), p=NORM_P),
]
