"""Validation cases of lecturekit.notebook (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    # smoke=False: setup changes JAX's global configuration (its argument is a bool: nothing to mutate)
    case("notebook.setup", notebook.setup, lambda: dict(float64=True), smoke=False,
         float64=Custom((("yes", TYPE_ERR), (1, TYPE_ERR), (None, TYPE_ERR)))),
]
