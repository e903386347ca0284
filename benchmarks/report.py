"""Write benchmarks/RESULTS.md from the results files of the last ``make bench``.

Run: ``.venv/bin/python benchmarks/report.py`` (``make bench`` runs it last).
"""

from __future__ import annotations

import json
from pathlib import Path

from _common import RESULTS, with_unit

ORDER = ("ntk", "ntk_neural_tangents", "hessian", "slq", "kernels", "chapters")
TITLES = {
    "ntk": "Empirical NTK: Jacobian contraction, vector products, per-layer formula (`benchmarks/ntk.py`)",
    "ntk_neural_tangents": ("Per-layer NTK side by side with neural-tangents 0.6.5 "
                            "(`benchmarks/ntk_neural_tangents.py`, run by hand: it needs its own venv)"),
    "hessian": "Hessian spectral norm by Lanczos (`benchmarks/hessian.py`)",
    "slq": "Spectral density of a 10⁶-parameter loss Hessian by stochastic Lanczos quadrature (`benchmarks/slq.py`)",
    "kernels": "Analytic NNGP and NTK at depth 5 (`benchmarks/kernels.py`)",
    "chapters": "Chapter execution (`benchmarks/chapters.py`)",
}
COLUMNS = {
    "ntk": [("method", "method", ""), ("width", "width", "d"), ("inputs", "inputs", "d"),
            ("median_s", "time (s)", ".4f"), ("compile_s", "compile (s)", ".2f"), ("memory_mb", "memory (MB)", ".1f"),
            ("gflops", "GFLOP", ".2f"), ("note", "note", "")],
    "ntk_neural_tangents": [("width", "width", "d"), ("inputs", "inputs", "d"),
                            ("ours_median_s", "lecturekit (s)", ".4f"), ("nt_median_s", "neural-tangents (s)", ".4f"),
                            ("speedup", "neural-tangents / lecturekit", ".2f"),
                            ("max_relative_difference", "largest relative difference", ".1e")],
    "hessian": [("width", "width", "d"), ("params", "parameters", "d"), ("median_s", "time (s)", ".3f"),
                ("spectral_norm", "‖H‖₂", ".6e"), ("exact", "exact", ".6e"), ("rel_error", "relative error", ".1e")],
    "slq": [("params", "parameters", "d"), ("probes", "probes", "d"), ("steps", "Lanczos steps", "d"),
            ("median_s", "time (s)", ".2f"), ("trace_slq", "tr H (SLQ)", ".4g"),
            ("trace_hutchinson", "tr H (Hutchinson)", ".4g"), ("trace_error_se", "difference (s.e.)", ".2f"),
            ("top_slq", "largest node", ".5g"), ("top_lanczos", "λ_max (Lanczos)", ".5g"),
            ("top_rel_error", "relative error", ".1e")],
    "kernels": [("method", "method", ""), ("inputs", "inputs", "d"), ("cold_s", "first call (s)", ".2f"),
                ("median_s", "time (s)", ".2f"), ("peak_mb", "peak memory (MB)", ".0f")],
    "chapters": [("chapter", "chapter", ""), ("wall_s", "wall (s)", ".1f"), ("cpu_s", "CPU (s)", ".1f")],
}


def markdown_table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    lines = ["| " + " | ".join(h for _, h, _ in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join("–" if row.get(k) in (None, "") else format(row[k], f)
                                       for k, _, f in columns) + " |")
    return "\n".join(lines)


def side_by_side(record: dict) -> list[str]:
    """The comparison with neural-tangents: no goals, one row per configuration, both JAX versions."""
    rows = [dict(row, speedup=row["nt_median_s"] / row["ours_median_s"]) for row in record["rows"]]
    versions = record["rows"][0]["jax"]
    loads = [x for row in record["rows"] for x in row["load_average_1min"]]
    return [f"## {TITLES['ntk_neural_tangents']}", "",
            f"{record['setup']}. Recorded {record['date']} on {record['machine']}; JAX {versions['ours']} "
            f"(lecturekit) and {versions['neural-tangents']} (neural-tangents); 1-minute load average "
            f"{min(loads):.1f}–{max(loads):.1f}.", "", markdown_table(rows, COLUMNS["ntk_neural_tangents"]), ""]


def main() -> None:
    parts = ["# Benchmark results", "",
             "Written by `make bench` (`benchmarks/report.py`) from `benchmarks/results/*.json`; do not edit by "
             "hand. Times are medians of several runs after a compiling run unless a column says otherwise. "
             "The appendix \"Computing kernels and Hessians fast\" shows these numbers with figures.", ""]
    for name in ORDER:
        path = RESULTS / f"{name}.json"
        if not path.exists():
            parts += [f"## {TITLES[name]}", "", f"Not run yet: `{path.name}` is missing.", ""]
            continue
        record = json.loads(path.read_text())
        if name == "ntk_neural_tangents":
            parts += side_by_side(record)
            continue
        parts += [f"## {TITLES[name]}", "",
                  f"{record['setup']}. Recorded {record['date']} on {record['machine']}; JAX {record['jax']}.", ""]
        parts += ["| goal | measured | target | |", "|---|---|---|---|"]
        for g in record["goals"]:
            parts.append(f"| {g['goal']} | {with_unit(g['value'], g['unit'], '.3g')} | {'<' if g['below'] else '>'} "
                         f"{with_unit(g['target'], g['unit'], 'g')} | {'met' if g['met'] else '**not met**'} |")
        parts += ["", markdown_table(record["rows"], COLUMNS[name]), ""]
    out = RESULTS.parent / "RESULTS.md"
    out.write_text("\n".join(parts))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
