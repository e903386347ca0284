"""No public lecturekit function mutates its inputs, and none compiles twice.

Every function of ``validation_cases.CASES`` is called once with its valid arguments
(writable NumPy arrays, parameters as nested lists and dicts); afterwards every argument must
be exactly as before: array values, dtypes and shapes, and the structure of lists, dicts and
tuples. This also checks that each valid call succeeds. These calls compile small JAX programs,
which is why they live apart from the fast validation tests.

Then the same call is made twice more: it must compile nothing new (compilations counted
with ``jax.monitoring``'s backend-compile event). A function that builds and jits a new
closure on every call, or bakes its data into the program as constants of a fresh closure,
compiles again each time and fails here; tests/test_compile_once.py covers the training
entries with their options.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from jax import monitoring
from validation_cases import CASES

_COMPILES = [0]


def _count(event: str, duration: float, **kwargs) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _COMPILES[0] += 1


monitoring.register_event_duration_secs_listener(_count)


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


@pytest.mark.parametrize("spec_case", [c for c in CASES if c.smoke], ids=lambda c: c.name)
def test_a_repeated_call_compiles_nothing(spec_case):
    """The second and third identical calls reuse what the first one compiled."""
    kwargs = spec_case.valid()
    counts = []
    try:
        for _ in range(3):
            start = _COMPILES[0]
            spec_case.fn(**kwargs)
            counts.append(_COMPILES[0] - start)
    finally:
        if spec_case.cleanup:
            spec_case.cleanup()
    assert counts[1:] == [0, 0], (
        f"{spec_case.name} compiled {counts} programs in three identical calls: "
        "jit a module-level function (options static, data traced), not a new closure"
    )
