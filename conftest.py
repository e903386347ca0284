"""Pytest plugin for the chapter notebooks run by nbval (`make test`).

Every notebook item (one per code cell, collected by `pytest --nbval-lax`) gets the
`notebooks` marker. The wall time of each notebook, kernel start-up and shutdown included,
is recorded; a per-chapter table is printed at the end of the session, and a chapter that
takes longer than CHAPTER_TIME_LIMIT_S seconds (default 90) fails at the teardown of its
last cell.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

_times: dict[Path, float] = defaultdict(float)
_cells: dict[Path, int] = defaultdict(int)
_last_item: dict[Path, str] = {}


def _time_limit_s() -> float:
    raw = os.environ.get("CHAPTER_TIME_LIMIT_S", "90")
    try:
        limit = float(raw)
    except ValueError:
        raise pytest.UsageError(f"CHAPTER_TIME_LIMIT_S must be a number of seconds, got {raw!r}")
    if limit <= 0:
        raise pytest.UsageError(f"CHAPTER_TIME_LIMIT_S must be positive, got {raw!r}")
    return limit


def _notebook(item: pytest.Item) -> Path | None:
    path = Path(str(item.path))
    return path if path.suffix == ".ipynb" else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # tryfirst: the marker must be there before `-m` deselects items.
    for item in items:
        if _notebook(item) is not None:
            item.add_marker(pytest.mark.notebooks)


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        notebook = _notebook(item)
        if notebook is not None:
            _last_item[notebook] = item.nodeid


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    notebook = _notebook(item)
    if notebook is None:
        return report
    _times[notebook] += call.duration
    if call.when == "call":
        _cells[notebook] += 1
    if call.when == "teardown" and _last_item.get(notebook) == item.nodeid:
        limit = _time_limit_s()
        if _times[notebook] > limit and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"{notebook.name} took {_times[notebook]:.1f} s, over the limit of "
                f"{limit:g} s per chapter (CHAPTER_TIME_LIMIT_S). Make its experiments "
                f"smaller or vectorize them."
            )
    return report


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _times:
        return
    limit = _time_limit_s()
    write = terminalreporter.write_line
    terminalreporter.section("chapter execution times")
    width = max(len(path.name) for path in _times)
    write(f"{'chapter':<{width}}  {'cells':>5}  {'seconds':>8}  status")
    for path in sorted(_times):
        seconds = _times[path]
        status = "ok" if seconds <= limit else f"OVER {limit:g} s"
        write(f"{path.name:<{width}}  {_cells[path]:>5}  {seconds:>8.1f}  {status}")
    write(f"{'total':<{width}}  {sum(_cells.values()):>5}  {sum(_times.values()):>8.1f}")
