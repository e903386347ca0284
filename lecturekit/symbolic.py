"""Sympy helpers shared by the chapters' derivation checks.

Gaussian expectations are exact integrals against the density of N(0, K); identities
are checked by simplifying the difference to zero, with an error that shows the residue.
"""

from __future__ import annotations

import sympy as sp


def gaussian_density(z: sp.Symbol, variance: sp.Expr) -> sp.Expr:
    """Density of N(0, variance) in the variable z."""
    return sp.exp(-(z**2) / (2 * variance)) / sp.sqrt(2 * sp.pi * variance)


def gaussian_expectation(
    expr: sp.Expr, z: sp.Symbol, variance: sp.Expr = sp.Integer(1), lower=-sp.oo, upper=sp.oo
) -> sp.Expr:
    """E[expr(z) 1{lower < z < upper}] for z ~ N(0, variance), computed by sympy."""
    return sp.simplify(sp.integrate(expr * gaussian_density(z, variance), (z, lower, upper)))


def assert_identity(lhs: sp.Expr, rhs: sp.Expr, what: str = "identity") -> None:
    """Raise AssertionError (showing the simplified residue) unless lhs - rhs simplifies to 0."""
    residue = sp.simplify(sp.expand(lhs - rhs))
    if residue != 0:
        raise AssertionError(f"{what} fails: lhs - rhs simplifies to {residue}")
