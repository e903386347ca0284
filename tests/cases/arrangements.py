"""Validation cases of lecturekit.arrangements (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import arrangements


def _lines():
    return dict(normals=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), offsets=np.array([0.0, 0.5, -1.0]))


NORMALS = Arr(ndim=2, fixed=(0,), extra=((np.array([["a", 1]], dtype=object), TYPE_ERR),))
OFFSETS = Arr(ndim=1, fixed=(0,))

CASES = [
    case("arrangements.general_position_cells", arrangements.general_position_cells, lambda: dict(n=3, d=2),
         n=Int(0), d=Int(1)),
    case("arrangements.count_cells", arrangements.count_cells, _lines, normals=NORMALS, offsets=OFFSETS),
    case("arrangements.characteristic_polynomial", arrangements.characteristic_polynomial,
         lambda: dict(_lines(), max_subsets=100),
         normals=NORMALS, offsets=OFFSETS, max_subsets=Int(1, extra=((2, VALUE_ERR),))),
    case("arrangements.zaslavsky_cells", arrangements.zaslavsky_cells, _lines, normals=NORMALS, offsets=OFFSETS),
]
