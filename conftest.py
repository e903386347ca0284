"""Pytest plugin for the chapter notebooks run by nbval (`make test`).

Every notebook item (one per code cell, collected by `pytest --nbval-lax`) gets the
`notebooks` marker. The wall time of each notebook, kernel start-up and shutdown included,
is recorded; a per-chapter table is printed at the end of the session, and a chapter that
takes longer than CHAPTER_TIME_LIMIT_S seconds (default 450) fails at the teardown of its
last cell. That limit is a hang guard, five times the book's budget of 90 s per chapter:
a busy machine must not turn `make test` red. The budget itself is measured and enforced
by `make bench` (benchmarks/chapters.py).

`make test-notebooks` runs the chapters two at a time (pytest-xdist with ``--dist
loadfile``: every cell of a notebook goes to the same worker, in order, and shares one
kernel). The limit, the figure checks and the book's cache are handled where the cells run
(the worker); the table is printed by the process that reports (the controller).

A notebook whose cells all pass is also stored, with the outputs nbval recorded, in the
book's execution cache (``_build/.jupyter_cache``, the jupyter-cache project that
``jupyter-book build`` reads with ``execute_notebooks: cache``). Both run the same code
cells in the same environment, so the book build that follows in ``make test`` reuses
these results instead of executing every chapter a second time; a chapter whose code
changed afterwards no longer matches the cache and is executed by the build.

A cell that prints a figure-check problem (``lecturekit.figure_checks``: every displayed
figure is checked when LECTUREKIT_AUDIT_FIGURES is set, as `make test` does) fails.

The examples in lecturekit's docstrings are doctests (``pytest --doctest-modules
lecturekit``, part of `make test-unit`). Each runs with float64 enabled, matplotlib's Agg
backend, and a namespace holding ``jax``, ``jnp``, ``np``, ``plt`` and every public module
of lecturekit by its short name (``nets``, ``sampling``, ``training``, ``exercises``, ...),
as a chapter has them after its first cell. A module that fails to import is left out of
the namespace (its own doctests then fail at collection, with the import error).
"""

from __future__ import annotations

import fcntl
import os
from collections import defaultdict
from pathlib import Path

import pytest

_times: dict[Path, float] = defaultdict(float)  # where the cells run: for the limit
_reported: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])  # where reported: cells, s
_last_item: dict[Path, str] = {}
_outputs: dict[Path, dict[int, list]] = defaultdict(dict)
_failed: set[Path] = set()
BOOK_CACHE = Path(__file__).resolve().parent / "_build" / ".jupyter_cache"


def _time_limit_s() -> float:
    raw = os.environ.get("CHAPTER_TIME_LIMIT_S", "450")
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
    # Longest chapters first (by `make bench`'s last record; a chapter it lacks counts as
    # long): run two at a time, the last one to start then ends soon after the others.
    notebooks = sorted({_notebook(item) for item in items} - {None})
    if notebooks:
        expected = _recorded_chapter_seconds()
        notebooks.sort(key=lambda path: -expected.get(path.stem, float("inf")))
        rank = {path: index for index, path in enumerate(notebooks)}
        items.sort(key=lambda item: rank.get(_notebook(item), len(rank)))  # stable: cell order


def _recorded_chapter_seconds() -> dict[str, float]:
    """CPU seconds of each chapter in benchmarks/results/chapters.json (empty if absent)."""
    import json

    record = Path(__file__).resolve().parent / "benchmarks" / "results" / "chapters.json"
    try:
        return {row["chapter"]: row["cpu_s"] for row in json.loads(record.read_text())["rows"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


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
        outputs = getattr(item, "test_outputs", None)
        if outputs is not None:
            _outputs[notebook][item.cell_num] = list(outputs)
            _fail_on_figure_problems(report, outputs)
    if report.failed:
        _failed.add(notebook)
    if call.when == "teardown" and _last_item.get(notebook) == item.nodeid:
        limit = _time_limit_s()
        if _times[notebook] > limit and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"{notebook.name} took {_times[notebook]:.1f} s, over the limit of "
                f"{limit:g} s per chapter (CHAPTER_TIME_LIMIT_S, a guard against hangs; the "
                f"budget is 90 s, measured by `make bench`). Make its experiments smaller or "
                f"vectorize them."
            )
        if report.passed and notebook not in _failed:
            _store_in_book_cache(notebook, _outputs.pop(notebook, {}))
    return report


def _fail_on_figure_problems(report: pytest.TestReport, outputs: list) -> None:
    from lecturekit.figure_checks import MARKER

    found = [line for out in outputs if out.get("output_type") == "stream"
             for line in str(out.get("text", "")).splitlines() if line.startswith(MARKER)]
    if found and report.passed:
        report.outcome = "failed"
        report.longrepr = "The cell's figure breaks the book's figure rules:\n" + "\n".join(found)


def _store_in_book_cache(notebook: Path, outputs: dict[int, list]) -> None:
    """Put the executed notebook into the jupyter-cache project that the book build reads."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    nb = nbformat.read(notebook, as_version=4)
    count = 0  # nbval numbers the code cells only, from 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = [nbformat.from_dict(dict(out)) for out in outputs.get(count, [])]
        if cell.source.rstrip().endswith(";"):
            # nbval executes without storing history, and IPython then misses the trailing
            # semicolon that hides a cell's value (it looks for it in the history): drop the
            # value, as a normal execution (JupyterLab, the book build) does.
            cell.outputs = [out for out in cell.outputs if out.output_type != "execute_result"]
        count += 1
        cell.execution_count = count
        for out in cell.outputs:
            if out.output_type == "execute_result":
                out.execution_count = count
    bundle = CacheBundleIn(nb, uri=str(notebook.with_suffix(".md")),
                           data={"execution_seconds": _times[notebook]})
    BOOK_CACHE.parent.mkdir(parents=True, exist_ok=True)
    with open(BOOK_CACHE.with_suffix(".lock"), "w") as lock:  # two workers share the cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        get_cache(BOOK_CACHE).cache_notebook_bundle(bundle, check_validity=False, overwrite=True)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add a cell's time to its chapter's row of the table (in the reporting process)."""
    path = report.nodeid.split("::", 1)[0]
    if not path.endswith(".ipynb"):
        return
    row = _reported[Path(path).name]
    row[0] += report.when == "call"
    row[1] += report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _reported:
        return
    limit = _time_limit_s()
    write = terminalreporter.write_line
    terminalreporter.section("chapter execution times")
    width = max(len(name) for name in _reported)
    write(f"{'chapter':<{width}}  {'cells':>5}  {'seconds':>8}  status")
    for name in sorted(_reported):
        cells, seconds = _reported[name]
        status = "ok" if seconds <= limit else f"OVER {limit:g} s"
        write(f"{name:<{width}}  {cells:>5}  {seconds:>8.1f}  {status}")
    total_cells = sum(row[0] for row in _reported.values())
    write(f"{'total':<{width}}  {total_cells:>5}  {sum(row[1] for row in _reported.values()):>8.1f}")


def _lecturekit_namespace() -> dict:
    """Every public module of lecturekit by its last name (``lecturekit.exercises.ch01`` is
    reached as ``exercises.ch01``), imported now; a module that fails to import is skipped."""
    import importlib
    import pkgutil

    import lecturekit

    namespace = {"lecturekit": lecturekit}
    for info in pkgutil.iter_modules(lecturekit.__path__, "lecturekit."):
        short = info.name.rsplit(".", 1)[-1]
        if short.startswith("_"):
            continue
        try:
            module = importlib.import_module(info.name)
            for sub in pkgutil.iter_modules(getattr(module, "__path__", []), info.name + "."):
                if not sub.name.rsplit(".", 1)[-1].startswith("_"):
                    importlib.import_module(sub.name)
        except Exception:  # noqa: BLE001 (reported by the module's own doctest collection)
            continue
        namespace[short] = module
    return namespace


@pytest.fixture(autouse=True)
def _doctest_setup(request):
    """For lecturekit's doctests: the namespace above, float64, Agg, no figure left open."""
    if not isinstance(request.node, pytest.DoctestItem):
        yield
        return
    import jax
    import matplotlib

    matplotlib.use("Agg")
    import jax.numpy as jnp
    import matplotlib.pyplot as plt
    import numpy as np

    namespace = request.getfixturevalue("doctest_namespace")
    if "jnp" not in namespace:
        namespace.update(jax=jax, jnp=jnp, np=np, plt=plt, **_lecturekit_namespace())
    x64 = jax.config.jax_enable_x64  # an example may call notebook.setup(): restored after
    with jax.enable_x64(True), matplotlib.rc_context():
        yield
    jax.config.update("jax_enable_x64", x64)
    plt.close("all")
