"""Validation cases of lecturekit.symbolic (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("symbolic.gaussian_density", symbolic.gaussian_density, lambda: dict(z=sp.Symbol("z"), variance=2),
         z=SYMBOL, variance=Custom(((-1, VALUE_ERR), (0, VALUE_ERR), ("v", TYPE_ERR), (None, TYPE_ERR),
                                    (float("nan"), VALUE_ERR), (sp.oo, VALUE_ERR), (sp.I, VALUE_ERR)))),
    case("symbolic.gaussian_expectation", symbolic.gaussian_expectation,
         lambda: dict(expr=sp.Symbol("z") ** 2, z=sp.Symbol("z"), variance=3, lower=-sp.oo, upper=sp.oo),
         expr=Custom((("z**2", TYPE_ERR), (None, TYPE_ERR), (float("nan"), VALUE_ERR))), z=SYMBOL,
         variance=Custom(((-2, VALUE_ERR), (None, TYPE_ERR))),
         lower=Custom(((sp.oo, VALUE_ERR), ("a", TYPE_ERR))), upper=Custom(((-sp.oo, VALUE_ERR), (None, TYPE_ERR)))),
    case("symbolic.assert_identity", symbolic.assert_identity,
         lambda: dict(lhs=sp.sin(sp.Symbol("t")) ** 2, rhs=1 - sp.cos(sp.Symbol("t")) ** 2),
         lhs=Custom((("x", TYPE_ERR), (None, TYPE_ERR))), rhs=Custom((("x", TYPE_ERR), (None, TYPE_ERR)))),
]
