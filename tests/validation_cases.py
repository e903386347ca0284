"""The table behind tests/test_validation_properties.py and tests/test_no_mutation.py.

``CASES`` lists every public lecturekit function (and the MLP methods) with a factory of
valid keyword arguments (small NumPy arrays, parameters as lists of dicts) and a description
of each argument: what kind of object it must be, its number of dimensions, which of its
axes must match other arguments, its allowed range (the kinds are in validation_kinds.py).
``bad_values`` turns such a description and a valid value into corrupted values, each with
the exception it must raise: ``TypeError`` for the wrong kind of object, ``ValueError`` for a
value of the right kind that is wrong.

The cases of each module live in ``tests/cases/<module>.py`` (one table per module, next to
the module's own tests); this file gathers them. ``MODULES`` is every public module of the
package, found by walking it, so a new module must come with its cases.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import lecturekit
from validation_kinds import bad_values  # noqa: F401 (re-exported for the tests)

# Not validated here: the exercise checkers (their arguments are a reader's functions, and
# tests/test_exercises.py feeds them right and wrong answers).
SKIPPED_PACKAGES = ("lecturekit.exercises",)


def _public_modules():
    found = [lecturekit]
    for info in pkgutil.walk_packages(lecturekit.__path__, prefix="lecturekit."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts) or info.name.startswith(SKIPPED_PACKAGES):
            continue
        found.append(importlib.import_module(info.name))
    return tuple(found)


MODULES = _public_modules()

CASES = [c for path in sorted((Path(__file__).parent / "cases").glob("*.py"))
         if path.stem != "__init__"
         for c in importlib.import_module(f"cases.{path.stem}").CASES]
