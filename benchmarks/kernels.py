"""Analytic NNGP and NTK of a depth-5 ReLU network for 2000 and 10000 inputs.

``kernels.mlp_kernels`` evaluates the layer recursion elementwise on n x n matrices. Beyond
``kernels.TILE`` rows it computes TILE x TILE tiles, one compiled call each, only on and above
the diagonal of a symmetric kernel ("tiled"); "one block" is the same compiled recursion on
the whole matrix at once (TILE raised above n), the way it is done for small n.

Each configuration runs in a fresh process, so that its peak resident memory (VmHWM, minus the
memory in use before the first call) is its own. Reported: the first call (compilation
included) and the median of further calls (3, or 1 for the slow "one block"). Float64, inputs of dimension 20.

Run: ``.venv/bin/python benchmarks/kernels.py`` (or ``make bench``).
"""

from __future__ import annotations

import json
import subprocess
import sys

from _common import goal, table, write

# (method, inputs, timed runs after the first call): at 2000 inputs (< TILE) both methods are the
# same single block; "one block" at 10000 needs ~17 GB and is timed once.
CONFIGS = [("tiled", 2000, 3), ("tiled", 10000, 3), ("one block", 10000, 1)]
DEPTH = 5
DIM = 20


def measure(method: str, inputs: int, runs: int) -> dict:
    """One configuration, in this process (called in a child by main)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    from _common import peak_rss_mb, rss_mb, timed
    from lecturekit import kernels

    if method == "one block":
        kernels.TILE = inputs
    x = jax.random.normal(jax.random.key(0), (inputs, DIM))
    jax.block_until_ready(x)
    before = rss_mb()
    timing = timed(lambda: kernels.mlp_kernels(x, depth=DEPTH), runs=runs)
    return {"method": method, "inputs": inputs, "depth": DEPTH, "activation": "relu", "cold_s": timing.first,
            "median_s": timing.median, "times_s": timing.times, "peak_mb": peak_rss_mb() - before}


def main() -> bool:
    rows = []
    for method, inputs, runs in CONFIGS:
        child = subprocess.run([sys.executable, __file__, method, str(inputs), str(runs)], capture_output=True,
                               text=True, check=True)
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        print(f"{method:>9}, {inputs:5d} inputs: first call {r['cold_s']:.2f} s, median {r['median_s']:.2f} s, "
              f"peak {r['peak_mb']:.0f} MB", flush=True)
    print()
    print(table(rows, [("method", "method", ""), ("inputs", "inputs", "d"), ("cold_s", "first call (s)", ".2f"),
                       ("median_s", "time (s)", ".2f"), ("peak_mb", "peak memory (MB)", ".0f")]))
    tiled = max((r for r in rows if r["method"] == "tiled"), key=lambda r: r["inputs"])
    goals = [goal(f"analytic NNGP and NTK, depth {DEPTH}, {tiled['inputs']} inputs (tiled)", tiled["median_s"], 10.0,
                  "s", below=True),
             goal("its peak memory", tiled["peak_mb"], 8000.0, "MB", below=True)]
    return write("kernels", setup=f"Analytic NNGP and NTK of a ReLU network with {DEPTH} hidden layers (NTK "
           f"parameterization), n inputs of dimension {DIM}, float64", dtype="float64", rows=rows, goals=goals)


if __name__ == "__main__":
    if len(sys.argv) == 4:
        print(json.dumps(measure(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
    else:
        raise SystemExit(0 if main() else 1)
