"""Sympy helpers shared by the chapters' derivation checks.

Gaussian expectations are exact integrals against the density of N(0, K); identities
are checked by simplifying the difference to zero, with an error that shows the residue.
"""

from __future__ import annotations

from typing import Any

import sympy as sp


def _symbol(z: Any, name: str = "z") -> sp.Symbol:
    if not isinstance(z, sp.Symbol):
        raise TypeError(f"{name} must be a sympy Symbol, got {type(z).__name__}")
    return z


def _expr(value: Any, name: str) -> sp.Expr:
    if isinstance(value, (str, bytes)) or value is None:  # sympify would parse a string as code
        raise TypeError(f"{name} must be a sympy expression or a number, got {type(value).__name__}")
    try:
        out = sp.sympify(value, strict=True)
    except sp.SympifyError:
        raise TypeError(f"{name} must be a sympy expression or a number, got {type(value).__name__}") from None
    if out.has(sp.nan, sp.zoo):
        raise ValueError(f"{name} must be finite, got {out}")
    return out


def _variance(variance: Any) -> sp.Expr:
    v = _expr(variance, "variance")
    if v.is_positive is False or v.is_finite is False or v.is_number and not (v.is_real and bool(v > 0)):
        raise ValueError(f"variance must be positive and finite, got {v}")
    return v


def gaussian_density(z: sp.Symbol, variance: sp.Expr) -> sp.Expr:
    """Density of N(0, variance) in the variable z."""
    z, variance = _symbol(z), _variance(variance)
    return sp.exp(-(z**2) / (2 * variance)) / sp.sqrt(2 * sp.pi * variance)


def gaussian_expectation(
    expr: sp.Expr, z: sp.Symbol, variance: sp.Expr = sp.Integer(1), lower=-sp.oo, upper=sp.oo
) -> sp.Expr:
    """E[expr(z) 1{lower < z < upper}] for z ~ N(0, variance), computed by sympy."""
    expr, z, variance = _expr(expr, "expr"), _symbol(z), _variance(variance)
    lower, upper = _expr(lower, "lower"), _expr(upper, "upper")
    if lower.is_number and upper.is_number and not bool(lower < upper):
        raise ValueError(f"need lower < upper, got lower = {lower} and upper = {upper}")
    return sp.simplify(sp.integrate(expr * gaussian_density(z, variance), (z, lower, upper)))


def assert_identity(lhs: sp.Expr, rhs: sp.Expr, what: str = "identity") -> None:
    """Raise AssertionError (showing the simplified residue) unless lhs - rhs simplifies to 0."""
    lhs, rhs = _expr(lhs, "lhs"), _expr(rhs, "rhs")
    residue = sp.simplify(sp.expand(lhs - rhs))
    if residue != 0:
        raise AssertionError(f"{what} fails: lhs - rhs simplifies to {residue}")
