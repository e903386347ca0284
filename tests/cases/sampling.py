"""Validation cases of lecturekit.sampling (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import sampling

SHAPE = Custom((((-1,), VALUE_ERR), ((2, -3), VALUE_ERR), ("abc", TYPE_ERR), ((2.5,), TYPE_ERR),
                ((True,), TYPE_ERR), (None, TYPE_ERR), (-2, VALUE_ERR)))

CASES = [
    case("sampling.standard_normal", sampling.standard_normal, lambda: dict(key=KEY, shape=(3, 2), dtype=jnp.float32),
         key=Key(),
         shape=Custom((((-1,), VALUE_ERR), ((2, -3), VALUE_ERR), ("abc", TYPE_ERR), ((2.5,), TYPE_ERR),
                       ((True,), TYPE_ERR), (None, TYPE_ERR), (-2, VALUE_ERR))),
         dtype=Custom(((jnp.int32, TYPE_ERR), ("nonsense", TYPE_ERR), (bool, TYPE_ERR), (complex, TYPE_ERR)))),
    case("sampling.standard_normal_host", sampling.standard_normal_host,
         lambda: dict(key=KEY, shape=(3, 2), dtype=jnp.float32),
         key=Key(),
         shape=Custom((((-1,), VALUE_ERR), ((2, -3), VALUE_ERR), ("abc", TYPE_ERR), ((2.5,), TYPE_ERR),
                       ((True,), TYPE_ERR), (None, TYPE_ERR), (-2, VALUE_ERR))),
         dtype=Custom(((jnp.int32, TYPE_ERR), ("nonsense", TYPE_ERR), (bool, TYPE_ERR), (complex, TYPE_ERR)))),
    case("sampling.uniform", sampling.uniform,
         lambda: dict(key=KEY, shape=(3, 2), dtype=jnp.float32, minval=-1.0, maxval=1.0),
         key=Key(), shape=SHAPE,
         dtype=Custom(((jnp.int32, TYPE_ERR), ("nonsense", TYPE_ERR), (bool, TYPE_ERR))),
         minval=Real(extra=((1.0, VALUE_ERR), (2.0, VALUE_ERR))),
         maxval=Real(extra=((-1.0, VALUE_ERR), (-3.0, VALUE_ERR)))),
    case("sampling.bernoulli", sampling.bernoulli, lambda: dict(key=KEY, p=0.3, shape=(3, 2)),
         key=Key(), p=Real(lo=0.0, hi=1.0), shape=SHAPE),
    case("sampling.randint", sampling.randint, lambda: dict(key=KEY, shape=(4,), minval=-2, maxval=3),
         key=Key(), shape=SHAPE,
         minval=Custom(((3, VALUE_ERR), (5, VALUE_ERR), (0.5, TYPE_ERR), ("0", TYPE_ERR), (True, TYPE_ERR),
                        (None, TYPE_ERR))),
         maxval=Custom(((-2, VALUE_ERR), (-5, VALUE_ERR), (2.5, TYPE_ERR), ("3", TYPE_ERR), (None, TYPE_ERR)))),
    case("sampling.choice_without_replacement", sampling.choice_without_replacement,
         lambda: dict(key=KEY, n=5, size=3),
         key=Key(), n=Int(extra=((2, VALUE_ERR),)), size=Int(minimum=0, extra=((6, VALUE_ERR),))),
]
