"""Shared by the benchmark scripts: timing, the machine's description, tables, results files.

Each script measures one thing, prints a table and its goals, and writes
``benchmarks/results/<name>.json`` (schema below), which ``report.py`` turns into
``benchmarks/RESULTS.md`` and the appendix "Computing kernels and Hessians fast" reads.

Schema: {"benchmark", "date", "machine", "jax", "dtype", "setup", "goals": [{"goal", "value",
"target", "unit", "met"}], "rows": [...]} with rows specific to each benchmark.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

import jax

RESULTS = Path(__file__).resolve().parent / "results"


class Timing(NamedTuple):
    """Seconds of a first (compiling) call and of the timed calls after it."""

    first: float
    times: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def compile_s(self) -> float:
        """The first call's excess over the median: compilation and first-touch costs."""
        return max(self.first - self.median, 0.0)


def timed(fn: Callable[[], Any], *, runs: int = 3) -> Timing:
    """Time ``fn`` (blocking on its result): one first call, which compiles, then ``runs`` calls."""
    times = []
    for _ in range(1 + runs):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return Timing(times[0], times[1:])


def machine() -> str:
    """CPU model, cores, memory and OS of this machine, in one line."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) / 2**20:.0f} GiB memory"
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores{memory}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def goal(description: str, value: float, target: float, unit: str, *, below: bool) -> dict:
    """A goal: ``value`` must be below ``target`` (``below=True``) or above it."""
    return {"goal": description, "value": value, "target": target, "unit": unit, "below": below,
            "met": bool(value < target if below else value > target)}


def with_unit(value: float, unit: str, spec: str) -> str:
    """``value`` formatted by ``spec``, followed by its unit if it has one."""
    return f"{value:{spec}} {unit}".rstrip()


def write(name: str, *, setup: str, dtype: str, rows: list[dict], goals: list[dict]) -> bool:
    """Write results/<name>.json and print the goals; whether every goal is met."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {
        "benchmark": name, "date": datetime.date.today().isoformat(), "machine": machine(),
        "jax": jax.__version__, "dtype": dtype, "setup": setup, "goals": goals, "rows": rows,
    }
    path.write_text(json.dumps(record, indent=1) + "\n")
    for g in goals:
        print(f"goal: {g['goal']}: {with_unit(g['value'], g['unit'], '.3g')} (target {'<' if g['below'] else '>'} "
              f"{with_unit(g['target'], g['unit'], 'g')}): {'met' if g['met'] else 'NOT MET'}")
    print(f"wrote {path}")
    return all(g["met"] for g in goals)


def table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """A fixed-width text table: columns are (key, header, format); None prints as '-'."""
    cells = [[h for _, h, _ in columns]]
    for row in rows:
        cells.append([("-" if row.get(k) is None else format(row[k], f)) for k, _, f in columns])
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (VmHWM), in MB; NaN where /proc is missing."""
    return _proc_status("VmHWM")


def rss_mb() -> float:
    """Current resident memory of this process (VmRSS), in MB."""
    return _proc_status("VmRSS")


def _proc_status(field: str) -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")
