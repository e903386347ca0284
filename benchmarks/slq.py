"""Spectral density of a loss Hessian with 10^6 parameters by stochastic Lanczos quadrature.

The model is a ReLU network ``nets.mlp((10, 1000, 1000, 10), "relu")`` (1,021,010 parameters;
NTK parameterization), its loss the cross-entropy on n = 100 points of a ten-class Gaussian
mixture (``datasets.synthetic_classes``, noise 1), at initialization, in float32.
``hessian.spectral_density`` runs ``PROBES`` probes of ``STEPS`` Lanczos steps (full
reorthogonalization) on Hessian-vector products; the time is the median of 3 runs after a
compiling run, and includes the tridiagonal eigenproblems.

Its error is measured against two reference estimates that do not use SLQ: the trace
P sum_j tau_j theta_j (averaged over probes) against Hutchinson's estimate with
``REF_PROBES`` Gaussian probes (``hessian.trace_estimate``), in units of the combined
standard error sqrt(2 ||H||_F^2 (1/PROBES + 1/REF_PROBES)) (||H||_F^2 = tr H^2 from the SLQ
second moment); and the largest node against the top eigenvalue from ``hessian.spectral_norm``
(Lanczos to a relative 1e-4).

Run: ``.venv/bin/python benchmarks/slq.py`` (or ``make bench``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from _common import goal, table, timed, write
from lecturekit import datasets, hessian, nets, training

WIDTH = 1000
CLASSES = 10
INPUTS = 100
PROBES = 8
STEPS = 50
REF_PROBES = 16


def main() -> bool:
    x, onehot = datasets.synthetic_classes(jax.random.key(0), INPUTS, 10, CLASSES, noise=1.0)
    x, onehot = x.astype(jnp.float32), onehot.astype(jnp.float32)
    net = nets.mlp((10, WIDTH, WIDTH, CLASSES), "relu")
    params = net.init(jax.random.key(1), jnp.float32)
    loss = lambda p: training.cross_entropy(net.apply(p, x), onehot)  # noqa: E731
    size = net.num_params()
    out = []

    def run():
        out.append(hessian.spectral_density(loss, params, key=jax.random.key(2), num_probes=PROBES,
                                            num_steps=STEPS))
        return out[-1].nodes

    timing = timed(run, runs=3)
    dens = out[-1]
    nodes, weights = np.asarray(dens.nodes, np.float64), np.asarray(dens.weights, np.float64)
    trace_slq = size * float(np.mean(np.sum(weights * nodes, axis=1)))
    frob2 = size * float(np.mean(np.sum(weights * nodes**2, axis=1)))
    trace_ref = hessian.trace_estimate(loss, params, key=jax.random.key(3), num_probes=REF_PROBES)
    se = float(np.sqrt(2 * frob2 * (1 / PROBES + 1 / REF_PROBES)))
    top_ref = hessian.spectral_norm(loss, params, tol=1e-4)
    top_slq = float(nodes.max())
    row = {"params": size, "probes": PROBES, "steps": STEPS, "median_s": timing.median, "times_s": timing.times,
           "compile_s": timing.compile_s, "trace_slq": trace_slq, "trace_hutchinson": trace_ref,
           "trace_error_se": abs(trace_slq - trace_ref) / se, "trace_rel_error": abs(trace_slq - trace_ref) / abs(trace_ref),
           "top_slq": top_slq, "top_lanczos": top_ref, "top_rel_error": abs(top_slq - top_ref) / top_ref}
    print(table([row], [("params", "parameters", "d"), ("median_s", "time (s)", ".2f"),
                        ("compile_s", "compile (s)", ".2f"), ("trace_slq", "tr H (SLQ)", ".4g"),
                        ("trace_hutchinson", "tr H (Hutchinson)", ".4g"), ("trace_error_se", "diff. (s.e.)", ".2f"),
                        ("top_rel_error", "top rel. error", ".1e")]))
    goals = [
        goal(f"SLQ density, {size:,} parameters, {PROBES} probes x {STEPS} steps", row["median_s"], 60.0, "s",
             below=True),
        goal("trace: SLQ against Hutchinson, in standard errors", row["trace_error_se"], 4.0, "", below=True),
        goal("largest SLQ node against Lanczos to 1e-4 (relative)", row["top_rel_error"], 1e-3, "", below=True),
    ]
    return write("slq", setup=f"Spectral density of the cross-entropy Hessian of a ReLU MLP "
                 f"10-{WIDTH}-{WIDTH}-{CLASSES} on {INPUTS} points, stochastic Lanczos quadrature, float32",
                 dtype="float32", rows=[row], goals=goals)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
