"""Validation cases of lecturekit.datasets (assembled by tests/validation_cases.py)."""

from lecturekit import datasets
from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("datasets.synthetic_classes", datasets.synthetic_classes,
         lambda: dict(key=KEY, n=6, d=3, classes=2, noise=0.5),
         key=Key(), n=Int(1), d=Int(1), classes=Int(2), noise=NONNEG),
]
