"""Checks for the exercises of Chapter 6 (linear regions of ReLU networks).

Each check compares a learner's function against an independent reference (the exact
tracer and cell counter of :mod:`lecturekit.regions`, closed forms, direct evaluation)
and raises :class:`ExerciseCheckError` with an explanation when they disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sympy as sp

from .. import arrangements, nets, regions
from . import ExerciseCheckError, call, call_numeric, compare, passed, require_callable

__all__ = [
    "check_shallow_breakpoints",
    "check_region_recursion",
    "check_zigzag_net",
    "check_lines_in_disk",
    "check_pieces_needed",
]


def _shallow_reference(w, b, v, lo, hi):
    net = nets.mlp((1, len(w), 1), "relu", parameterization="standard")
    params = [
        {"W": np.asarray(w, float)[None, :], "b": np.asarray(b, float)},
        {"W": np.asarray(v, float)[:, None], "b": np.zeros(1)},
    ]
    return np.asarray(regions.breakpoints_1d(net, params, lo, hi))


def check_shallow_breakpoints(shallow_breakpoints: Callable) -> None:
    """shallow_breakpoints(w, b, v, lo, hi) -> sorted kinks in (lo, hi) of sum_j v_j
    relu(w_j x + b_j).

    Args:
        shallow_breakpoints: your function of a one-hidden-layer network -> its
            breakpoints.

    Example:
        >>> exercises.ch06.check_shallow_breakpoints(lambda *args: np.array([]))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: with 3 neurons on (-2.0, 2.0) ...
    """
    require_callable(shallow_breakpoints, what="shallow_breakpoints")
    rng = np.random.default_rng(606)
    cases = []
    for n in (1, 3, 8, 20):
        cases.append(
            (rng.normal(size=n), rng.normal(size=n), rng.normal(size=n), -2.0, 2.0)
        )
    w, b, v = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    v[1] = 0.0  # a neuron the readout ignores has no kink
    w[4] = 0.0  # a neuron with zero input weight is constant: no kink
    cases.append((w, b, v, -3.0, 3.0))
    w, b, v = rng.normal(size=5), rng.normal(size=5), rng.normal(size=5)
    b[2] = -w[2] * 5.0  # a kink at x = 5, outside (lo, hi)
    cases.append((w, b, v, -1.0, 1.0))
    for w, b, v, lo, hi in cases:
        what = f"shallow_breakpoints(w, b, v, {lo}, {hi}) with {len(w)} neurons"
        got = call_numeric(
            shallow_breakpoints, w.copy(), b.copy(), v.copy(), lo, hi, what=what
        ).ravel()
        expected = _shallow_reference(w, b, v, lo, hi)
        if got.shape != expected.shape:
            raise ExerciseCheckError(
                f"with {len(w)} neurons on ({lo}, {hi}) expected {expected.size} "
                "breakpoints, got "
                f"{got.size}. Hint: keep x* = -b_j / w_j only if w_j != 0, v_j != 0 "
                "and lo < x* < hi."
            )
        compare(
            got,
            expected,
            what=f"breakpoints of a {len(w)}-neuron network",
            rtol=1e-10,
            atol=1e-12,
            hint="return them sorted",
        )
    return passed(
        "breakpoints -b_j/w_j of the neurons with w_j != 0 and v_j != 0 inside the "
        "interval."
    )


def check_region_recursion(regions_count: Callable) -> None:
    """regions_count(n, d) -> cells of n hyperplanes in general position in R^d, via the
    recursion.

    Args:
        regions_count: your function (n, d) -> the number of regions r(n, d).

    Example:
        A wrong answer (2^n, the count when every hyperplane cuts every region) is
        rejected:

        >>> exercises.ch06.check_region_recursion(lambda n, d: 2**n)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(regions_count, what="regions_count")
    for n in range(0, 13):
        for d in range(1, 6):
            got = call(regions_count, n, d, what=f"regions_count({n}, {d})")
            if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
                raise ExerciseCheckError(
                    f"regions_count({n}, {d}) should be an integer, got {got!r}"
                )
            want = sum(math.comb(n, i) for i in range(d + 1))
            if got != want:
                raise ExerciseCheckError(
                    f"regions_count({n}, {d}) = {got}, expected {want}. Hint: r(n, d) "
                    "= r(n-1, d) + "
                    "r(n-1, d-1), with r(0, d) = 1 and r(n, 0) = 1 (a point has one "
                    "cell)."
                )
    rng = np.random.default_rng(6)
    for n, d in ((4, 2), (7, 2), (5, 3)):
        exact = arrangements.count_cells(rng.normal(size=(n, d)), rng.normal(size=n))
        if call(regions_count, n, d, what=f"regions_count({n}, {d})") != exact:
            raise ExerciseCheckError(
                f"{n} random hyperplanes in R^{d} have {exact} cells (exact count)"
            )
    return passed(
        "the deletion-restriction recursion reproduces the general-position count "
        "sum_{i<=d} C(n, i) (Buck) and exact cell counts."
    )


def _zigzag(x: np.ndarray) -> np.ndarray:
    """The three-piece map on [0, 1]: 3x, 2 - 3x, 3x - 2."""
    return np.where(x < 1 / 3, 3 * x, np.where(x < 2 / 3, 2 - 3 * x, 3 * x - 2))


def _check_zigzag_structure(net, params, depth: int) -> None:
    """Explain a wrong network or wrong parameter shapes before evaluating anything."""
    if not isinstance(net, nets.MLP):
        raise ExerciseCheckError(
            f"zigzag_net({depth}) should return (net, params) with net from nets.mlp, "
            f"got {type(net).__name__} as net"
        )
    if (
        net.activation.name != "relu"
        or net.output_activation is not None
        or net.widths[0] != 1
        or net.widths[-1] != 1
    ):
        raise ExerciseCheckError(
            f"zigzag_net({depth}): the network should be a ReLU mlp with one input, "
            "one "
            "output and no output activation, e.g. nets.mlp((1, 3, ..., 3, 1), 'relu', "
            "parameterization='standard')"
        )
    try:
        net.check_params(params)
    except ValueError as err:
        raise ExerciseCheckError(
            f"zigzag_net({depth}) returned params that do not fit the network "
            f"{net.widths}: {err}"
        ) from None


def check_zigzag_net(zigzag_net: Callable) -> None:
    """zigzag_net(L) -> (net, params): a ReLU mlp equal to g o ... o g (L times) on [0,
    1].

    Args:
        zigzag_net: your function k -> (net, params), a ReLU network of the zigzag.

    Example:
        >>> exercises.ch06.check_zigzag_net(lambda k: None)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: zigzag_net(1) should return a ...
    """
    require_callable(zigzag_net, what="zigzag_net")
    xs = np.linspace(0.0, 1.0, 2001)
    for depth in range(1, 6):
        out = call(zigzag_net, depth, what=f"zigzag_net({depth})")
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ExerciseCheckError(
                f"zigzag_net({depth}) should return a pair (net, params), got "
                f"{type(out).__name__}"
            )
        net, params = out
        _check_zigzag_structure(net, params, depth)
        ref = xs.copy()
        for _ in range(depth):
            ref = _zigzag(ref)
        got = np.asarray(net.apply(params, xs[:, None]), dtype=float)
        compare(
            got,
            ref,
            what=f"the network's values on [0, 1] for L = {depth}",
            atol=1e-9,
            rtol=0,
            hint="g(x) = 3 relu(x) - 6 relu(x - 1/3) + 6 relu(x - 2/3) on [0, 1]",
        )
        pieces = regions.count_pieces_1d(net, params, 0.0, 1.0)
        if pieces != 3**depth:
            raise ExerciseCheckError(
                f"L = {depth}: the network has {pieces} pieces on [0, 1], expected 3^L "
                f"= {3**depth}"
            )
    return passed(
        "g^L has exactly 3^L pieces on [0, 1] (counted from the weights) for L = 1..5."
    )


def _disk_reference(n: sp.Symbol, R: sp.Symbol, sigma_b: sp.Symbol) -> sp.Expr:
    """E[#first-layer lines meeting the disk |x| < R], derived here by sympy (not typed
    in).

    Neuron j switches on {x : w_j . x + sigma_b b_j = 0}, at distance sigma_b |b_j| /
    |w_j| from the origin; given |w_j| = r, P(sigma_b |b_j| < R r) = erf(R r / (sqrt(2)
    sigma_b)), and |w_j| has the Rayleigh density r exp(-r^2 / 2).
    """
    r = sp.Symbol("r_check", positive=True)
    r_pos, s_pos = (
        sp.Symbol("R_check", positive=True),
        sp.Symbol("s_check", positive=True),
    )
    p_meet = sp.integrate(
        sp.erf(r_pos * r / (sp.sqrt(2) * s_pos)) * r * sp.exp(-(r**2) / 2),
        (r, 0, sp.oo),
    )
    return n * p_meet.subs({r_pos: R, s_pos: sigma_b})


# classic wrong answers, recognised by their value at one point, with what they forgot
_DISK_MISTAKES = (
    (
        lambda n, R, s: n * 2 / sp.pi * sp.atan(sp.sqrt(2) * R / s),
        "this is the one-dimensional answer (a breakpoint in [-R, R]); in the plane "
        "the distance of "
        "the line to the origin is sigma_b |b| / |w| with |w| the norm of a 2-D "
        "Gaussian vector",
    ),
    (
        lambda n, R, s: n * sp.erf(R / s),
        "you replaced |w| by its root-mean-square sqrt(2); average P(sigma_b |b| < R "
        "|w|) over the "
        "Rayleigh law of |w| instead",
    ),
    (
        lambda n, R, s: R / sp.sqrt(R**2 + s**2),
        "this is the probability for one neuron; multiply by the number of neurons n",
    ),
)


def check_lines_in_disk(
    expr: sp.Expr, n: sp.Symbol, R: sp.Symbol, sigma_b: sp.Symbol
) -> None:
    """``expr``: E[#neurons whose switching line meets the disk of radius R], as a sympy
    expression.

    Setting: one hidden layer of n ReLU neurons on 2-D inputs in the NTK
    parameterization (sigma_w = sqrt(2), fan-in 2, so z_j = w_j . x + sigma_b b_j with
    w_j ~ N(0, I_2) and b_j ~ N(0, 1)). Compared symbolically (``sympy.simplify`` of the
    difference must be 0) with the reference derived by sympy here, and numerically at a
    spot point, where a wrong answer is evaluated to explain what it missed.

    Args:
        expr: your expected number of lines, a sympy expression in n, R and sigma_b.
        n: the sympy symbols your expression uses (positive).
        R: see n.
        sigma_b: see n.

    Example:
        >>> import sympy as sp
        >>> n_, r_, s_ = sp.symbols("n R sigma_b", positive=True)
        >>> exercises.ch06.check_lines_in_disk(n_ * r_, n_, r_, s_)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: your expression is not the ...
    """
    if not isinstance(expr, sp.Expr):
        hint = (
            " (a function: call it on the symbols n, R, sigma_b to get the expression)"
            if callable(expr)
            else ""
        )
        raise ExerciseCheckError(
            "expected a sympy expression in n, R, sigma_b, got "
            f"{type(expr).__name__}{hint}"
        )
    for name, symbol in (("n", n), ("R", R), ("sigma_b", sigma_b)):
        if not isinstance(symbol, sp.Symbol):
            raise ExerciseCheckError(
                f"{name} should be the sympy symbol your expression uses, got "
                f"{type(symbol).__name__}"
            )
    if expr.has(sp.Integral):
        raise ExerciseCheckError(
            "your expression still contains an unevaluated integral: sympy could not "
            "finish it. "
            "Declare the symbols positive, e.g. sp.symbols('n R sigma_b', "
            "positive=True), and the "
            "integration variable positive too."
        )
    stray = sorted(map(str, expr.free_symbols - {n, R, sigma_b}))
    if stray:
        twins = set(stray) & {str(n), str(R), str(sigma_b)}
        raise ExerciseCheckError(
            f"your expression contains the symbols {stray}, which are not the n, R, "
            "sigma_b passed to "
            "the check: integrate out every auxiliary variable and pass the symbols "
            "your expression "
            "uses."
            + (
                f" ({sorted(twins)} also names a passed symbol created with other "
                "assumptions, "
                "e.g. positive=True in one place and not in the other.)"
                if twins
                else ""
            )
        )
    reference = _disk_reference(n, R, sigma_b)
    point = {n: 10, R: sp.Rational(3, 4), sigma_b: sp.Rational(1, 2)}
    where = "at n = 10, R = 3/4, sigma_b = 1/2"
    try:
        got = complex(sp.N(expr.subs(point)))
    except (TypeError, ValueError):
        raise ExerciseCheckError(
            f"your expression does not evaluate to a number {where}: {expr}"
        ) from None
    want = float(sp.N(reference.subs(point)))
    if sp.simplify(expr - reference) == 0:
        if abs(got - want) > 1e-12 * abs(
            want
        ):  # pragma: no cover - sympy would be inconsistent
            raise ExerciseCheckError(
                f"sympy simplifies the difference to 0 but {where} it is {got - want}"
            )
        return passed(
            "n R / sqrt(R^2 + sigma_b^2): the line of neuron j lies at distance "
            "sigma_b |b_j| / |w_j| from the origin, and |w_j| is Rayleigh distributed."
        )
    for wrong, why in _DISK_MISTAKES:
        value = float(sp.N(wrong(*point.values())))
        if abs(got - value) <= 1e-9 * abs(value):
            raise ExerciseCheckError(
                f"{where} your expression gives {got.real:.6g}, the right one "
                f"{want:.6g}: {why}."
            )
    raise ExerciseCheckError(
        "your expression is not the expected number of lines meeting the disk: "
        f"{where} it gives "
        f"{got.real:.6g} instead of {want:.6g}. Hint: condition on |w_j| = r (Rayleigh "
        "density "
        "r exp(-r^2/2)); then P(sigma_b |b_j| < R r) = erf(R r / (sqrt(2) sigma_b))."
    )


def _pieces_reference(L: int, eps) -> int:
    """Smallest p >= 1 with (1 - (2p + 2)/2^L)/8 < eps, in exact rational arithmetic."""
    from fractions import Fraction

    e = Fraction(eps)
    p = 1
    while (1 - Fraction(2 * p + 2, 2**L)) / 8 >= e:
        p += 1
    return p


def check_pieces_needed(pieces_needed: Callable) -> None:
    """pieces_needed(L, eps) -> the fewest pieces the depth-separation bound allows for
    error < eps.

    The bound of Chapter 6, section 6.5: every continuous g with at most p affine pieces
    on [0, 1] has int abs(f_L - g) >= (1 - (2p + 2)/2^L)/8. The answer is the smallest
    integer p >= 1 for which that bound is below eps (so that an error below eps is not
    excluded).

    Args:
        pieces_needed: your function of (L, eps), L >= 2 an integer and eps > 0.

    Example:
        Forgetting that each sign change can save two triangles (2^L instead of
        2^(L-1)):

        >>> exercises.ch06.check_pieces_needed(
        ...     lambda L, eps: max(1, math.floor(2**L * (1 - 8 * eps) - 1) + 1))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...
    """
    require_callable(pieces_needed, what="pieces_needed")
    cases = [(L, eps) for L in range(2, 13) for eps in (0.001, 0.01, 0.03, 0.05, 0.1)]
    # exact boundaries (the bound equals eps at an integer p) and eps >= 1/8 (nothing
    # excluded)
    cases += [(5, 1 / 16), (6, 1 / 16), (8, 1 / 32), (4, 0.125), (7, 0.2)]
    for L, eps in cases:
        got = call(pieces_needed, L, eps, what=f"pieces_needed({L}, {eps})")
        if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
            raise ExerciseCheckError(
                f"pieces_needed({L}, {eps}) should be an integer, got {got!r}"
            )
        want = _pieces_reference(L, eps)
        if got == want:
            continue
        hint = "solve (1 - (2p + 2)/2^L)/8 < eps for p: p > 2^(L-1) (1 - 8 eps) - 1."
        if want > 1 and got == want - 1 and (1 - (2 * got + 2) / 2**L) / 8 == eps:
            hint = (
                "at this eps the bound equals eps exactly for p = "
                + str(got)
                + ": an error "
                "below eps needs the bound to be strictly below it, so one more piece."
            )
        elif got == max(1, math.floor(2**L * (1 - 8 * eps) - 1) + 1):
            hint = (
                "this is twice the answer's leading term: the bound has 2p + 2 (each "
                "sign "
                "change spoils at most one triangle and each run loses one), not p + 1."
            )
        elif got == max(1, math.floor(2 ** (L - 1) * (1 - 8 * eps)) + 1):
            hint = "you dropped the -1: the run of triangles at the end also costs one."
        elif eps >= 0.125:
            hint = "for eps >= 1/8 the bound excludes nothing: one piece is allowed."
        raise ExerciseCheckError(
            f"pieces_needed({L}, {eps}) = {got}, expected {want}. Hint: {hint}"
        )
    return passed(
        "p > 2^(L-1) (1 - 8 eps) - 1: the pieces a shallow network needs grow like 2^L "
        "at any fixed accuracy below 1/8."
    )
