"""The benchmark scripts run end to end on tiny sizes (``make bench`` itself is not part of CI).

Each script's ``main`` is run with its size constants shrunk and its results folder in a
temporary directory: it must time, account, write a results file of the documented schema
and judge its goals; ``report.py`` must turn the files into RESULTS.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from lecturekit import nets

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import _common  # noqa: E402
import chapters as chapters_bench  # noqa: E402
import hessian as hessian_bench  # noqa: E402
import kernels as kernels_bench  # noqa: E402
import ntk as ntk_bench  # noqa: E402
import report  # noqa: E402
import slq as slq_bench  # noqa: E402

SCHEMA = {"benchmark", "date", "machine", "jax", "dtype", "setup", "goals", "rows"}


@pytest.fixture
def results(tmp_path, monkeypatch):
    folder = tmp_path / "results"
    monkeypatch.setattr(_common, "RESULTS", folder)
    monkeypatch.setattr(report, "RESULTS", folder)
    return folder


def _record(folder: Path, name: str) -> dict:
    record = json.loads((folder / f"{name}.json").read_text())
    assert set(record) == SCHEMA, set(record)
    for g in record["goals"]:
        assert set(g) == {"goal", "value", "target", "unit", "below", "met"}, g
        assert g["met"] == (g["value"] < g["target"] if g["below"] else g["value"] > g["target"])  # NaN: not met
    return record


def test_ntk_benchmark_times_accounts_and_skips(results, monkeypatch):
    monkeypatch.setattr(ntk_bench, "WIDTHS", (32, 64))
    monkeypatch.setattr(ntk_bench, "INPUTS", (8,))
    monkeypatch.setattr(ntk_bench, "GOAL_CONFIG", (64, 8))
    monkeypatch.setattr(ntk_bench, "GOAL_WIDE", (64, 8))
    monkeypatch.setattr(ntk_bench, "MEMORY_LIMIT_GB", 1e-9)  # nothing fits: every method is skipped,
    assert not ntk_bench.main()  # and goals without a measurement are not met
    record = _record(results, "ntk")
    assert all(r["median_s"] is None and r["note"].startswith("not run: needs") for r in record["rows"])
    assert not any(g["met"] for g in record["goals"])
    monkeypatch.setattr(ntk_bench, "MEMORY_LIMIT_GB", 8.0)
    ntk_bench.main()
    rows = _record(results, "ntk")["rows"]
    assert {(r["method"], r["width"]) for r in rows} == {(m, w) for m in ntk_bench.METHODS for w in (32, 64)}
    for r in rows:
        assert r["median_s"] > 0 and len(r["times_s"]) == 3 and r["memory_mb"] > 0 and r["gflops"] > 0, r
    by = {(r["method"], r["width"]): r for r in rows}
    # XLA's accounting: the Jacobian method holds the n x P Jacobian, the per-layer formula
    # does not (it needs about n x width numbers per layer)
    params = nets.mlp((ntk_bench.DIM, 64, 64, 1), "relu").init(jax.random.key(0))
    count = sum(leaf.size for leaf in jax.tree_util.tree_leaves(params))
    jacobian_mb = ntk_bench.INPUTS[0] * count * jnp.zeros(()).itemsize / 1e6
    assert by["jacobian", 64]["memory_mb"] >= jacobian_mb > by["per-layer", 64]["memory_mb"], (
        jacobian_mb, by)


def test_hessian_benchmark_matches_the_exact_norm(results, monkeypatch):
    monkeypatch.setattr(hessian_bench, "WIDTHS", (10, 100))
    assert hessian_bench.main()  # goals met: fast, and within 1e-5 of the closed form
    rows = _record(results, "hessian")["rows"]
    assert [r["width"] for r in rows] == [10, 100]
    assert all(r["rel_error"] < 1e-5 for r in rows), rows


def test_slq_benchmark_checks_its_density_against_references(results, monkeypatch):
    monkeypatch.setattr(slq_bench, "WIDTH", 20)
    monkeypatch.setattr(slq_bench, "INPUTS", 20)
    monkeypatch.setattr(slq_bench, "STEPS", 10)
    slq_bench.main()   # the 60 s goal is for 10^6 parameters; here the record is checked
    row = _record(results, "slq")["rows"][0]
    assert row["params"] == 10 * 20 + 20 + 20 * 20 + 20 + 20 * 10 + 10, row
    # the trace of the density agrees with Hutchinson's within its standard errors and
    # the largest node with Lanczos (a density with misplaced weights would miss both)
    assert row["trace_error_se"] < 4 and row["top_rel_error"] < 1e-2, row


def test_kernels_benchmark_runs_each_configuration_in_a_child(results, monkeypatch):
    monkeypatch.setattr(kernels_bench, "CONFIGS", [("tiled", 40, 1), ("one block", 40, 1)])
    assert kernels_bench.main()
    rows = _record(results, "kernels")["rows"]
    assert [(r["method"], r["inputs"]) for r in rows] == [("tiled", 40), ("one block", 40)]
    assert all(r["peak_mb"] >= 0 and r["median_s"] > 0 for r in rows), rows


TINY_CHAPTER = """\
---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A page that takes a moment

```{code-cell} ipython3
import time

time.sleep(0.5)
```
"""


def test_chapter_benchmark_fails_a_chapter_over_its_budget(results, monkeypatch, tmp_path):
    folder = tmp_path / "chapters"
    folder.mkdir()
    (folder / "quick.md").write_text(TINY_CHAPTER)
    (folder / "notes.md").write_text("# Not executed: no kernelspec\n")
    monkeypatch.setenv("CHAPTER_BUDGET_S", "0.25")  # the sleep alone is over it
    assert not chapters_bench.main(folder)
    record = _record(results, "chapters")
    assert [r["chapter"] for r in record["rows"]] == ["quick"]
    assert record["rows"][0]["wall_s"] > 0.5 and record["rows"][0]["cpu_s"] > 0, record
    assert [(g["goal"], g["met"]) for g in record["goals"]] == [("quick: wall time", False)]
    monkeypatch.setenv("CHAPTER_BUDGET_S", "300")
    assert chapters_bench.main(folder)
    monkeypatch.setenv("CHAPTER_BUDGET_S", "soon")
    with pytest.raises(SystemExit, match="CHAPTER_BUDGET_S must be a number"):
        chapters_bench.main(folder)


def test_report_writes_every_table(results):
    results.mkdir()
    goal = _common.goal("a goal", 1.0, 2.0, "s", below=True)
    (results / "hessian.json").write_text(json.dumps({
        "benchmark": "hessian", "date": "2026-01-01", "machine": "m", "jax": "0", "dtype": "float64",
        "setup": "a setup", "goals": [goal], "rows": [{"width": 10, "params": 31, "median_s": 0.1,
                                                       "spectral_norm": 1.0, "exact": 1.0, "rel_error": 0.0}]}))
    report.main()
    text = (results.parent / "RESULTS.md").read_text()
    assert "| a goal | 1 s | < 2 s | met |" in text
    assert "| 10 | 31 | 0.100 | 1.000000e+00 | 1.000000e+00 | 0.0e+00 |" in text
    assert "Not run yet: `ntk.json` is missing." in text
