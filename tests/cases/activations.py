"""Validation cases of lecturekit.activations (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("activations.get", activations.get, lambda: dict(activation="relu"), activation=ACT),
]
