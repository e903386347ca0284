"""Per-layer empirical NTK side by side with neural-tangents' structured derivatives.

Not part of ``make bench``: neural-tangents 0.6.5 needs an old JAX, so it runs from its own
throwaway virtual environment (not a dependency of lecturekit)::

    python3 -m venv /tmp/ntvenv
    /tmp/ntvenv/bin/pip install jax==0.4.25 jaxlib==0.4.25 numpy==1.26.4 tensorflow==2.15.1 \\
        tf2jax==0.3.5 neural-tangents==0.6.5
    .venv/bin/python benchmarks/ntk_neural_tangents.py [--nt-python /tmp/ntvenv/bin/python]

It writes ``benchmarks/results/ntk_neural_tangents.json`` (shown in the appendix "Computing
kernels and Hessians fast"); with ``--config W N`` it only prints.

The network: ReLU, 2 hidden layers of width W, input dimension 16, scalar output, NTK
parameterization, float32; the kernel of N inputs with themselves (x2 = None). Both sides
get the SAME parameters and inputs (written to a temporary .npz) and their kernels are
compared. Each side runs in its own worker process (compiled once); the driver alternates
one timed call of ours with one of neural-tangents, so a busy machine slows both alike, and
reports the medians and the load average.

neural-tangents is called as ``nt.empirical_ntk_fn(apply_fn, vmap_axes=0, trace_axes=(),
implementation=nt.NtkImplementation.STRUCTURED_DERIVATIVES)`` under ``jax.jit``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CONFIGS = ((1024, 200), (8192, 500))
DIM = 16
HERE = Path(__file__).resolve().parent


def _worker(side: str, path: str) -> None:
    """Load params and x, compile, then time one call per line 'run' read from stdin."""
    import jax
    import jax.numpy as jnp

    data = np.load(path)
    x = jnp.asarray(data["x"])
    layers = [(jnp.asarray(data[f"W{i}"]), jnp.asarray(data[f"b{i}"])) for i in range(3)]
    width = layers[0][0].shape[1]
    if side == "ours":
        sys.path.insert(0, str(HERE.parent))
        from lecturekit import nets, tangent

        net = nets.mlp((DIM, width, width, 1), "relu")
        params = [{"W": w, "b": b} for w, b in layers]

        def kernel():
            return tangent.empirical_ntk(net.apply, params, x)
    else:
        import neural_tangents as nt
        from neural_tangents import stax

        _, apply_fn, _ = stax.serial(
            stax.Dense(width, W_std=2**0.5, b_std=0.0), stax.Relu(),
            stax.Dense(width, W_std=2**0.5, b_std=0.0), stax.Relu(),
            stax.Dense(1, W_std=1.0, b_std=0.0),
        )
        params = [layers[0], (), layers[1], (), layers[2]]
        fn = jax.jit(nt.empirical_ntk_fn(apply_fn, vmap_axes=0, trace_axes=(),
                                         implementation=nt.NtkImplementation.STRUCTURED_DERIVATIVES))

        def kernel():
            return fn(x, None, params).reshape(x.shape[0], x.shape[0])

    start = time.perf_counter()
    result = jax.block_until_ready(kernel())
    np.save(path.replace(".npz", f"_{side}.npy"), np.asarray(result))
    print(json.dumps({"ready": True, "compile_s": time.perf_counter() - start, "jax": jax.__version__}), flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        start = time.perf_counter()
        jax.block_until_ready(kernel())
        print(json.dumps({"seconds": time.perf_counter() - start}), flush=True)


def compare(width: int, inputs: int, runs: int, nt_python: str, tmp: str) -> dict:
    rng = np.random.default_rng(0)
    path = os.path.join(tmp, f"ntk_{width}_{inputs}.npz")
    shapes = [(DIM, width), (width, width), (width, 1)]
    arrays = {"x": rng.standard_normal((inputs, DIM), dtype=np.float32)}
    for i, shape in enumerate(shapes):
        arrays[f"W{i}"] = rng.standard_normal(shape, dtype=np.float32)
        arrays[f"b{i}"] = rng.standard_normal(shape[1], dtype=np.float32)
    np.savez(path, **arrays)
    del arrays
    procs = {side: subprocess.Popen([python, __file__, "--worker", side, path], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
             for side, python in (("ours", sys.executable), ("neural-tangents", nt_python))}
    ready = {side: json.loads(p.stdout.readline()) for side, p in procs.items()}  # both compile first
    times: dict[str, list[float]] = {side: [] for side in procs}
    loads = []
    for _ in range(runs):
        for side, p in procs.items():  # alternate: one call of each in turn
            p.stdin.write("run\n")
            p.stdin.flush()
            times[side].append(json.loads(p.stdout.readline())["seconds"])
        loads.append(os.getloadavg()[0])
    for p in procs.values():
        p.stdin.close()
        p.wait()
    ours, theirs = (np.load(path.replace(".npz", f"_{s}.npy")) for s in ("ours", "neural-tangents"))
    return {
        "width": width, "inputs": inputs,
        "ours_median_s": float(np.median(times["ours"])), "nt_median_s": float(np.median(times["neural-tangents"])),
        "ours_s": times["ours"], "nt_s": times["neural-tangents"],
        "ours_compile_s": ready["ours"]["compile_s"], "nt_compile_s": ready["neural-tangents"]["compile_s"],
        "jax": {"ours": ready["ours"]["jax"], "neural-tangents": ready["neural-tangents"]["jax"]},
        "max_relative_difference": float(np.abs(ours - theirs).max() / np.abs(theirs).max()),
        "load_average_1min": loads,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("SIDE", "NPZ"), help=argparse.SUPPRESS)
    parser.add_argument("--nt-python", default="/tmp/ntvenv/bin/python")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--config", type=int, nargs=2, action="append", metavar=("WIDTH", "INPUTS"))
    args = parser.parse_args()
    if args.worker:
        _worker(*args.worker)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for width, inputs in args.config or CONFIGS:
            row = compare(width, inputs, args.runs, args.nt_python, tmp)
            rows.append(row)
            print(f"W={width} N={inputs}: ours {row['ours_median_s']:.4f} s, neural-tangents {row['nt_median_s']:.4f} s "
                  f"(medians of {args.runs} alternating runs; load {min(row['load_average_1min']):.1f}-"
                  f"{max(row['load_average_1min']):.1f}; kernels agree to {row['max_relative_difference']:.1e})",
                  flush=True)
    if args.config is None:  # the full comparison is recorded (the appendix shows it)
        from _common import RESULTS, machine

        record = {"benchmark": "ntk_neural_tangents", "date": time.strftime("%Y-%m-%d"), "machine": machine(),
                  "setup": f"Per-layer empirical NTK of a ReLU network with 2 hidden layers of width W, input "
                           f"dimension {DIM}, N inputs with themselves, float32, NTK parameterization; medians of "
                           f"{args.runs} alternating calls", "rows": rows}
        path = RESULTS / "ntk_neural_tangents.json"
        path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
