"""Spectral norm of the Hessian of a wide network's output, by Lanczos on Hessian-vector products.

The model is the one-hidden-layer tanh network of chapter 3 at one scalar input x = 1,
f(theta) = m^(-1/2) sum_i v_i tanh(sqrt(2) W_i) (``nets.mlp((1, m, 1), "tanh")``, NTK
parameterization, biases with b_std = 0), for widths m = 10^3 ... 10^6 (2m + m + 1
parameters: W, v and the biases). Its Hessian is block diagonal with one 2 x 2 block per
unit in (W_i, v_i),

    [[v_i tanh''(u_i) a^2 / sqrt(m),  tanh'(u_i) a / sqrt(m)],
     [tanh'(u_i) a / sqrt(m),         0                     ]],   a = sqrt(2), u_i = a W_i,

with eigenvalues (alpha +- sqrt(alpha^2 + 4 beta^2)) / 2, so the exact norm is known and the
Lanczos error is reported. ``hessian.spectral_norm`` runs at tol = 1e-6 in float64; times are
medians of 3 runs after a compiling run.

Run: ``.venv/bin/python benchmarks/hessian.py`` (or ``make bench``).
"""

from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import goal, table, timed, write  # noqa: E402
from lecturekit import hessian, nets  # noqa: E402

WIDTHS = (10**3, 10**4, 10**5, 10**6)
TOL = 1e-6


def exact_norm(params, m: int) -> float:
    """max |eigenvalue| over the 2 x 2 blocks (see the module docstring)."""
    a = 2**0.5
    w = np.asarray(params[0]["W"])[0]
    v = np.asarray(params[1]["W"])[:, 0]
    t = np.tanh(a * w)
    alpha = v * (-2 * t * (1 - t**2)) * a**2 / np.sqrt(m)
    beta = (1 - t**2) * a / np.sqrt(m)
    root = np.sqrt(alpha**2 + 4 * beta**2)
    return float(np.max((np.abs(alpha) + root) / 2))


def main() -> bool:
    x = jnp.ones((1, 1))
    rows = []
    for m in WIDTHS:
        net = nets.mlp((1, m, 1), "tanh")
        params = net.init(jax.random.key(m))
        f = lambda p: net.apply(p, x)[0]  # noqa: E731
        norms = []
        timing = timed(lambda: norms.append(hessian.spectral_norm(f, params, tol=TOL)), runs=3)
        exact = exact_norm(params, m)
        rows.append({"width": m, "params": net.num_params(), "median_s": timing.median, "times_s": timing.times,
                     "compile_s": timing.compile_s, "spectral_norm": norms[-1], "exact": exact,
                     "rel_error": abs(norms[-1] - exact) / exact})
        print(f"width {m:8d}: {timing.median:.3f} s, |H| = {norms[-1]:.6e}, "
              f"relative error {rows[-1]['rel_error']:.1e}", flush=True)
    print()
    print(table(rows, [("width", "width", "d"), ("params", "parameters", "d"), ("median_s", "time (s)", ".3f"),
                       ("compile_s", "compile (s)", ".2f"), ("spectral_norm", "||H||", ".6e"),
                       ("rel_error", "rel. error", ".1e")]))
    goals = [
        goal(f"spectral norm at width {WIDTHS[-1]:,}", rows[-1]["median_s"], 10.0, "s", below=True),
        goal("largest relative error of ‖H‖₂ (tol = 1e-6)", max(r["rel_error"] for r in rows), 1e-5, "",
             below=True),
    ]
    return write("hessian", setup="‖H‖₂ of the output of a one-hidden-layer tanh network of width m at one input, "
           "Lanczos on Hessian-vector products, float64", dtype="float64", rows=rows, goals=goals)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
