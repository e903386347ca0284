"""Validation cases of lecturekit.sampling (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import sampling

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
]
