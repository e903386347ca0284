"""Shared test configuration.

Hypothesis runs derandomized (the same examples on every run, so CI cannot flake on a
rare draw) with no deadline (JAX compiles on first call) and no example database.
"""

from hypothesis import settings

settings.register_profile("book", derandomize=True, deadline=None, database=None, print_blob=True)
settings.load_profile("book")
