"""Execution time of every chapter and appendix notebook, as a reader would run it.

Each chapter (a MyST notebook in chapters/ with a kernelspec) is executed in a fresh Jupyter
kernel (nbclient), TWO AT A TIME (the machine has 2 cores and a full sequential run would take
longer than the budget of ``make bench``); progress bars are off (TQDM_DISABLE=1) and JAX
starts with an empty compilation cache, as in ``make test``. Reported per chapter: wall time,
and CPU time of its kernel process (user + system, all threads), read by a last cell that the
benchmark appends. ``make test`` enforces the 90 s limit on a sequential run; these numbers
are for tracking where the time goes.

Run: ``.venv/bin/python benchmarks/chapters.py`` (or ``make bench``).
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

from _common import goal, table, write

ROOT = Path(__file__).resolve().parent.parent
CPU_CELL = ("import json as _json, resource as _resource\n"
            "_usage = _resource.getrusage(_resource.RUSAGE_SELF)\n"
            "print(_json.dumps({'cpu_s': _usage.ru_utime + _usage.ru_stime}))")
LIMIT_S = 90.0


def run(path: Path) -> dict:
    notebook = jupytext.read(path)
    notebook.cells.append(nbformat.v4.new_code_cell(CPU_CELL))
    start = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
                   ).execute()
    wall = time.perf_counter() - start
    cpu = json.loads(notebook.cells[-1].outputs[-1]["text"])["cpu_s"]
    print(f"{path.stem}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return {"chapter": path.stem, "wall_s": wall, "cpu_s": cpu}


def main() -> bool:
    os.environ["TQDM_DISABLE"] = "1"
    os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)
    chapters = [p for p in sorted((ROOT / "chapters").glob("*.md")) if "kernelspec" in jupytext.read(p).metadata]
    with ThreadPoolExecutor(2) as pool:
        rows = list(pool.map(run, chapters))
    print()
    print(table(rows, [("chapter", "chapter", ""), ("wall_s", "wall (s, 2 at a time)", ".1f"),
                       ("cpu_s", "CPU (s)", ".1f")]))
    slowest = max(rows, key=lambda r: r["cpu_s"])
    goals = [goal(f"largest CPU time of a chapter ({slowest['chapter']})", slowest["cpu_s"], LIMIT_S, "s",
                  below=True)]
    return write("chapters", setup="Each chapter executed in a fresh kernel, two at a time, progress bars off",
           dtype="float64", rows=rows, goals=goals)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
