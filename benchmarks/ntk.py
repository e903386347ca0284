"""Empirical NTK of a two-hidden-layer ReLU network: three methods, widths 256...8192.

* "jacobian": jax.jacrev Jacobians contracted leaf by leaf (``tangent.jacobian_ntk``, jitted);
* "vector products": one VJP per column pushed through the batch by a JVP, 16 columns at a
  time (``tangent.vector_product_ntk``, jitted);
* "per-layer": the structured formula ``tangent.empirical_ntk(net.apply, params, x)`` uses
  for ``nets.mlp`` networks (one forward and one backward pass, ``nets.MLP.backward``, since
  x2 = x1).

Float32 (JAX's default), inputs of dimension 16, Gaussian weights (NTK parameterization).
Times are medians of 3 runs after a compiling run. Memory and flops are XLA's accounting of
each compiled program (temporary + output buffers; cost analysis), available without running
it: a method is timed only where its memory fits in MEMORY_LIMIT_GB and its flops, at the
slowest rate it reached at smaller widths, predict less than TIME_LIMIT_S.

Run: ``.venv/bin/python benchmarks/ntk.py`` (or ``make bench``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from _common import goal, table, timed, write
from lecturekit import nets, sampling, tangent

WIDTHS = (256, 512, 1024, 2048, 4096, 8192)
INPUTS = (100, 500)
GOAL_CONFIG = (1024, 200)  # width, inputs: per-layer >= 50x faster than the Jacobian method
GOAL_WIDE = (8192, 500)  # width, inputs: per-layer in under WIDE_TARGET_S
# neural-tangents 0.6.5's structured derivatives took 1.21-1.24 s for this kernel on the
# recording machine (issue #15; side by side: benchmarks/ntk_neural_tangents.py)
WIDE_TARGET_S = 1.2
DIM = 16
MEMORY_LIMIT_GB = 8.0
TIME_LIMIT_S = 10.0

CHUNK = 16  # columns per step of the vector-product method

METHODS = {
    "jacobian": lambda net: jax.jit(lambda p, x: tangent.jacobian_ntk(net.apply, p, x)),
    "vector products": lambda net: jax.jit(lambda p, x: tangent.vector_product_ntk(net.apply, p, x, chunk=CHUNK)),
    # what a reader calls; jitted inside. The jit wrapper is only for XLA's accounting.
    "per-layer": lambda net: (lambda p, x: tangent.empirical_ntk(net.apply, p, x)),
}


def accounting(name: str, fn, params, x) -> tuple[float, float]:
    """(MB of temporary and output buffers, GFLOP) of the compiled program, from shapes alone.

    XLA's cost analysis counts the body of a loop once: the vector-product method loops over
    the chunks of its columns (``lax.map``), so its count is multiplied by the number of chunks.
    """
    shapes = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), (params, x))
    compiled = jax.jit(fn).lower(*shapes).compile()
    memory = compiled.memory_analysis()
    trips = -(-x.shape[0] // CHUNK) if name == "vector products" else 1
    return (memory.temp_size_in_bytes + memory.output_size_in_bytes) / 1e6, trips * compiled.cost_analysis()["flops"] / 1e9


def main() -> bool:
    key_params, key_x = jax.random.split(jax.random.key(0))
    configs = sorted({(w, n) for w in WIDTHS for n in INPUTS} | {GOAL_CONFIG, GOAL_WIDE})
    seconds_per_gflop = {name: 0.0 for name in METHODS}  # slowest rate seen so far, per method
    rows = []
    for width, inputs in configs:
        net = nets.mlp((DIM, width, width, 1), "relu")
        params = net.init(key_params)
        x = sampling.standard_normal(key_x, (inputs, DIM))
        for name, make in METHODS.items():
            fn = make(net)
            memory_mb, gflops = accounting(name, fn, params, x)
            row = {"method": name, "width": width, "inputs": inputs, "median_s": None, "times_s": [],
                   "compile_s": None, "memory_mb": memory_mb, "gflops": gflops, "note": ""}
            predicted = gflops * seconds_per_gflop[name]
            if memory_mb > MEMORY_LIMIT_GB * 1e3:
                row["note"] = f"not run: needs {memory_mb / 1e3:.1f} GB"
            elif predicted > TIME_LIMIT_S:
                row["note"] = f"not run: ~{predicted:.0f} s predicted"
            else:
                timing = timed(lambda: fn(params, x), runs=3)
                row.update(median_s=timing.median, times_s=timing.times, compile_s=timing.compile_s)
                seconds_per_gflop[name] = max(seconds_per_gflop[name], timing.median / max(gflops, 1e-9))
            rows.append(row)
            print(f"{name:>16} width {width:5d}, {inputs:3d} inputs: "
                  + (f"{row['median_s']:.4f} s" if row["median_s"] is not None else row["note"]), flush=True)
        del params
    print()
    print(table(rows, [("method", "method", ""), ("width", "width", "d"), ("inputs", "inputs", "d"),
                       ("median_s", "time (s)", ".4f"), ("compile_s", "compile (s)", ".2f"),
                       ("memory_mb", "memory (MB)", ".1f"), ("gflops", "GFLOP", ".2f"), ("note", "", "")]))

    def median(method, width, inputs):  # NaN (a goal not met) where the method was not run
        time = next(r["median_s"] for r in rows if (r["method"], r["width"], r["inputs"]) == (method, width, inputs))
        return float("nan") if time is None else time

    (w, n), (w_wide, n_wide) = GOAL_CONFIG, GOAL_WIDE
    goals = [
        goal(f"Jacobian time / per-layer time at width {w}, {n} inputs",
             median("jacobian", w, n) / median("per-layer", w, n), 50.0, "x", below=False),
        goal(f"per-layer NTK at width {w_wide}, {n_wide} inputs", median("per-layer", w_wide, n_wide), WIDE_TARGET_S,
             "s", below=True),
    ]
    return write("ntk", setup=f"Empirical NTK of a ReLU network with 2 hidden layers of width m, input dimension {DIM}, "
           "n inputs, float32, NTK parameterization", dtype=str(jnp.zeros(()).dtype), rows=rows, goals=goals)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
