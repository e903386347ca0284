"""Checks for the exercises of Chapter 6 (linear regions of ReLU networks).

Each check compares a learner's function against an independent reference (the exact
tracer and cell counter of :mod:`lecturekit.regions`, closed forms, direct evaluation)
and raises :class:`ExerciseCheckError` with an explanation when they disagree.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .. import nets, regions
from . import ExerciseCheckError, call, call_numeric, compare, passed, require_callable


def _shallow_reference(w, b, v, lo, hi):
    net = nets.mlp((1, len(w), 1), "relu", parameterization="standard")
    params = [{"W": np.asarray(w, float)[None, :], "b": np.asarray(b, float)},
              {"W": np.asarray(v, float)[:, None], "b": np.zeros(1)}]
    return np.asarray(regions.breakpoints_1d(net, params, lo, hi))


def check_shallow_breakpoints(shallow_breakpoints: Callable) -> None:
    """shallow_breakpoints(w, b, v, lo, hi) -> sorted kinks in (lo, hi) of sum_j v_j relu(w_j x + b_j)."""
    require_callable(shallow_breakpoints, what="shallow_breakpoints")
    rng = np.random.default_rng(606)
    cases = []
    for n in (1, 3, 8, 20):
        cases.append((rng.normal(size=n), rng.normal(size=n), rng.normal(size=n), -2.0, 2.0))
    w, b, v = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    v[1] = 0.0          # a neuron the readout ignores has no kink
    w[4] = 0.0          # a neuron with zero input weight is constant: no kink
    cases.append((w, b, v, -3.0, 3.0))
    w, b, v = rng.normal(size=5), rng.normal(size=5), rng.normal(size=5)
    b[2] = -w[2] * 5.0  # a kink at x = 5, outside (lo, hi)
    cases.append((w, b, v, -1.0, 1.0))
    for w, b, v, lo, hi in cases:
        what = f"shallow_breakpoints(w, b, v, {lo}, {hi}) with {len(w)} neurons"
        got = call_numeric(shallow_breakpoints, w.copy(), b.copy(), v.copy(), lo, hi, what=what).ravel()
        expected = _shallow_reference(w, b, v, lo, hi)
        if got.shape != expected.shape:
            raise ExerciseCheckError(
                f"with {len(w)} neurons on ({lo}, {hi}) expected {expected.size} breakpoints, got "
                f"{got.size}. Hint: keep x* = -b_j / w_j only if w_j != 0, v_j != 0 and lo < x* < hi."
            )
        compare(got, expected, what=f"breakpoints of a {len(w)}-neuron network", rtol=1e-10, atol=1e-12,
                hint="return them sorted")
    return passed("breakpoints -b_j/w_j of the neurons with w_j != 0 and v_j != 0 inside the interval.")


def check_region_recursion(regions_count: Callable) -> None:
    """regions_count(n, d) -> cells of n hyperplanes in general position in R^d, via the recursion."""
    require_callable(regions_count, what="regions_count")
    for n in range(0, 13):
        for d in range(1, 6):
            got = call(regions_count, n, d, what=f"regions_count({n}, {d})")
            if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
                raise ExerciseCheckError(f"regions_count({n}, {d}) should be an integer, got {got!r}")
            want = sum(math.comb(n, i) for i in range(d + 1))
            if got != want:
                raise ExerciseCheckError(
                    f"regions_count({n}, {d}) = {got}, expected {want}. Hint: r(n, d) = r(n-1, d) + "
                    "r(n-1, d-1), with r(0, d) = 1 and r(n, 0) = 1 (a point has one cell)."
                )
    rng = np.random.default_rng(6)
    for n, d in ((4, 2), (7, 2), (5, 3)):
        exact = regions.count_cells(rng.normal(size=(n, d)), rng.normal(size=n))
        if call(regions_count, n, d, what=f"regions_count({n}, {d})") != exact:
            raise ExerciseCheckError(f"{n} random hyperplanes in R^{d} have {exact} cells (exact count)")
    return passed("the deletion-restriction recursion reproduces Zaslavsky's count and exact cell counts.")


def _zigzag(x: np.ndarray) -> np.ndarray:
    """The three-piece map on [0, 1]: 3x, 2 - 3x, 3x - 2."""
    return np.where(x < 1 / 3, 3 * x, np.where(x < 2 / 3, 2 - 3 * x, 3 * x - 2))


def _check_zigzag_structure(net, params, depth: int) -> None:
    """Explain a wrong network or wrong parameter shapes before evaluating anything."""
    if not isinstance(net, nets.MLP):
        raise ExerciseCheckError(f"zigzag_net({depth}) should return (net, params) with net from nets.mlp, "
                                 f"got {type(net).__name__} as net")
    if net.activation.name != "relu" or net.output_activation is not None or net.widths[0] != 1 \
            or net.widths[-1] != 1:
        raise ExerciseCheckError(f"zigzag_net({depth}): the network should be a ReLU mlp with one input, one "
                                 "output and no output activation, e.g. nets.mlp((1, 3, ..., 3, 1), 'relu', "
                                 "parameterization='standard')")
    try:
        net.check_params(params)
    except ValueError as err:
        raise ExerciseCheckError(f"zigzag_net({depth}) returned params that do not fit the network "
                                 f"{net.widths}: {err}") from None


def check_zigzag_net(zigzag_net: Callable) -> None:
    """zigzag_net(L) -> (net, params): a ReLU mlp equal to g o ... o g (L times) on [0, 1]."""
    require_callable(zigzag_net, what="zigzag_net")
    xs = np.linspace(0.0, 1.0, 2001)
    for depth in range(1, 6):
        out = call(zigzag_net, depth, what=f"zigzag_net({depth})")
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ExerciseCheckError(
                f"zigzag_net({depth}) should return a pair (net, params), got {type(out).__name__}")
        net, params = out
        _check_zigzag_structure(net, params, depth)
        ref = xs.copy()
        for _ in range(depth):
            ref = _zigzag(ref)
        got = np.asarray(net.apply(params, xs[:, None]), dtype=float)
        compare(got, ref, what=f"the network's values on [0, 1] for L = {depth}", atol=1e-9, rtol=0,
                hint="g(x) = 3 relu(x) - 6 relu(x - 1/3) + 6 relu(x - 2/3) on [0, 1]")
        pieces = regions.count_pieces_1d(net, params, 0.0, 1.0)
        if pieces != 3**depth:
            raise ExerciseCheckError(
                f"L = {depth}: the network has {pieces} pieces on [0, 1], expected 3^L = {3**depth}")
    return passed("g^L has exactly 3^L pieces on [0, 1] (counted from the weights) for L = 1..5.")


def check_expected_pieces(expected_pieces: Callable) -> None:
    """expected_pieces(width, R, b_std) -> E[#pieces on [-R, R]] of a 1-hidden-layer NTK ReLU net, n0 = 1."""
    require_callable(expected_pieces, what="expected_pieces")
    for width, radius, b_std in ((1, 1.0, 1.0), (10, 0.5, 1.0), (64, 2.0, 0.3), (7, 3.0, 5.0)):
        want = 1 + width * (2 / math.pi) * math.atan(math.sqrt(2) * radius / b_std)
        got = call_numeric(expected_pieces, width, radius, b_std, what=f"expected_pieces({width}, {radius}, {b_std})")
        compare(got, want,
                what=f"E[pieces] for width {width}, R = {radius}, b_std = {b_std}", rtol=1e-10,
                hint="the breakpoint -b_std b / (sqrt(2) w) is Cauchy with scale b_std / sqrt(2)")
    return passed("1 + n (2/pi) arctan(sqrt(2) R / b_std): each neuron's breakpoint is Cauchy distributed.")
