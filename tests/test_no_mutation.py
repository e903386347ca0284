"""No public lecturekit function mutates its inputs.

Every function of ``validation_cases.CASES`` is called once with its valid arguments
(writable NumPy arrays, parameters as nested lists and dicts); afterwards every argument must
be exactly as before: array values, dtypes and shapes, and the structure of lists, dicts and
tuples. This also checks that each valid call succeeds. These calls compile small JAX programs,
which is why they live apart from the fast validation tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from validation_cases import CASES


def _snapshot(value: Any) -> Any:
    """A copy of the mutable parts (arrays, lists, dicts, tuples); other objects are immutable
    (numbers, strings, sympy expressions, frozen networks, JAX arrays) and kept as they are."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_snapshot(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_snapshot(v) for v in value)
    return value


def _same(before: Any, after: Any) -> bool:
    if isinstance(before, np.ndarray):
        return (isinstance(after, np.ndarray) and before.dtype == after.dtype and before.shape == after.shape
                and bool(np.array_equal(before, after, equal_nan=before.dtype.kind in "fc")))
    if isinstance(before, dict):
        return (isinstance(after, dict) and list(before) == list(after)
                and all(_same(before[k], after[k]) for k in before))
    if isinstance(before, (list, tuple)):
        return type(before) is type(after) and len(before) == len(after) and all(map(_same, before, after))
    return before is after


@pytest.mark.parametrize("spec_case", [c for c in CASES if c.smoke], ids=lambda c: c.name)
def test_valid_call_mutates_nothing(spec_case):
    """A valid call succeeds and leaves its arguments exactly as they were."""
    kwargs = spec_case.valid()
    arrays = [v for v in kwargs.values() if isinstance(v, np.ndarray)]
    assert all(a.flags.writeable for a in arrays)
    before = {name: _snapshot(value) for name, value in kwargs.items()}
    try:
        spec_case.fn(**kwargs)
    finally:
        if spec_case.cleanup:
            spec_case.cleanup()
    for name, value in before.items():
        assert _same(value, kwargs[name]), f"{spec_case.name} changed its argument {name}"
