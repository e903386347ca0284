"""Execution time of every chapter and appendix notebook, as a reader would run it.

This is where the book's time budget is enforced: every chapter must execute in under
``CHAPTER_BUDGET_S`` seconds (default 90) of wall time on a quiet machine with 2 cores.
``make test`` only guards against hangs (at five times the budget), so that a busy machine
cannot turn it red; run ``make bench`` on a quiet machine to measure the budget.

Each chapter (a MyST notebook in chapters/ with a kernelspec) is executed alone, one after
the other, in a fresh Jupyter kernel (nbclient), as a reader running it would; progress bars
are off (TQDM_DISABLE=1) and JAX starts with an empty compilation cache. Reported per
chapter: wall time, and CPU time of its kernel process (user + system, all threads, read
by a last cell that the benchmark appends). One goal per chapter: wall time under the
budget. The script exits with status 1 when a chapter is over it.

Run: ``.venv/bin/python benchmarks/chapters.py`` (or ``make bench``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

from _common import goal, table, write

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
CPU_CELL = ("import json as _json, resource as _resource\n"
            "_usage = _resource.getrusage(_resource.RUSAGE_SELF)\n"
            "print(_json.dumps({'cpu_s': _usage.ru_utime + _usage.ru_stime}))")


def budget_s() -> float:
    """The per-chapter budget in seconds: CHAPTER_BUDGET_S, default 90."""
    raw = os.environ.get("CHAPTER_BUDGET_S", "90")
    try:
        budget = float(raw)
    except ValueError:
        raise SystemExit(f"CHAPTER_BUDGET_S must be a number of seconds, got {raw!r}") from None
    if not budget > 0:
        raise SystemExit(f"CHAPTER_BUDGET_S must be positive, got {raw!r}")
    return budget


def run(path: Path) -> dict:
    """Execute one chapter in a fresh kernel; its wall and CPU seconds."""
    notebook = jupytext.read(path)
    notebook.cells.append(nbformat.v4.new_code_cell(CPU_CELL))
    start = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    wall = time.perf_counter() - start
    cpu = json.loads(notebook.cells[-1].outputs[-1]["text"])["cpu_s"]
    print(f"{path.stem}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return {"chapter": path.stem, "wall_s": wall, "cpu_s": cpu}


def main(folder: Path = CHAPTERS) -> bool:
    os.environ["TQDM_DISABLE"] = "1"
    os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)
    budget = budget_s()
    chapters = [p for p in sorted(folder.glob("*.md")) if "kernelspec" in jupytext.read(p).metadata]
    rows = [run(path) for path in chapters]
    print()
    print(table(rows, [("chapter", "chapter", ""), ("wall_s", "wall (s)", ".1f"),
                       ("cpu_s", "CPU (s)", ".1f")]))
    goals = [goal(f"{row['chapter']}: wall time", row["wall_s"], budget, "s", below=True)
             for row in rows]
    return write("chapters", setup="Each chapter executed alone in a fresh kernel, one after the "
                 "other, progress bars off, empty JAX compilation cache",
                 dtype="float64", rows=rows, goals=goals)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
