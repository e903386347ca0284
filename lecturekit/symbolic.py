"""Sympy helpers shared by the chapters' derivation checks.

Gaussian expectations are exact integrals against the density of N(0, K)
(:func:`gaussian_expectation`); identities are checked by simplifying the difference to
zero, with an error that shows the residue (:func:`assert_identity`).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

__all__ = ["gaussian_density", "gaussian_expectation", "assert_identity"]


def _symbol(z: Any, name: str = "z") -> sp.Symbol:
    if not isinstance(z, sp.Symbol):
        raise TypeError(f"{name} must be a sympy Symbol, got {type(z).__name__}")
    return z


def _expr(value: Any, name: str) -> sp.Expr:
    # sympify would parse a string as code
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(
            f"{name} must be a sympy expression or a number, got {type(value).__name__}"
        )
    try:
        out = sp.sympify(value, strict=True)
    except sp.SympifyError:
        raise TypeError(
            f"{name} must be a sympy expression or a number, got {type(value).__name__}"
        ) from None
    if out.has(sp.nan, sp.zoo):
        raise ValueError(f"{name} must be finite, got {out}")
    return out


def _variance(variance: Any) -> sp.Expr:
    v = _expr(variance, "variance")
    if (
        v.is_positive is False
        or v.is_finite is False
        or v.is_number
        and not (v.is_real and bool(v > 0))
    ):
        raise ValueError(f"variance must be positive and finite, got {v}")
    return v


def gaussian_density(z: sp.Symbol, variance: sp.Expr) -> sp.Expr:
    """The density of N(0, variance) in the variable z.

    That is exp(-z^2 / (2 variance)) / sqrt(2 pi variance).

    Args:
        z: a sympy Symbol.
        variance: a positive sympy expression or number.

    Returns:
        A sympy expression in z.

    Raises:
        TypeError: if z is not a Symbol or variance not an expression.
        ValueError: if variance is not positive and finite.

    Example:
        >>> import sympy as sp
        >>> z = sp.Symbol("z", real=True)
        >>> symbolic.gaussian_density(z, 1)
        sqrt(2)*exp(-z**2/2)/(2*sqrt(pi))
    """
    z, variance = _symbol(z), _variance(variance)
    return sp.exp(-(z**2) / (2 * variance)) / sp.sqrt(2 * sp.pi * variance)


def gaussian_expectation(
    expr: sp.Expr,
    z: sp.Symbol,
    variance: sp.Expr = sp.S.One,
    lower=-sp.oo,
    upper=sp.oo,
) -> sp.Expr:
    """E[expr(z) 1(lower < z < upper)] for z ~ N(0, variance), integrated exactly by
    sympy.

    Args:
        expr: a sympy expression in z.
        z: the integration variable, a sympy Symbol (declare it real).
        variance: the variance of z, a positive sympy expression or number (declare
            symbols positive, or sympy may return a Piecewise).
        lower: the lower end of the integral (default minus infinity).
        upper: the upper end (default plus infinity); lower < upper.

    Returns:
        The simplified sympy expression.

    Example:
        >>> import sympy as sp
        >>> z, K = sp.Symbol("z", real=True), sp.Symbol("K", positive=True)
        >>> symbolic.gaussian_expectation(z**2, z, K)
        K
        >>> symbolic.gaussian_expectation(z**2, z, 1, 0, sp.oo)  # half of E[z^2]
        1/2
    """
    expr, z, variance = _expr(expr, "expr"), _symbol(z), _variance(variance)
    lower, upper = _expr(lower, "lower"), _expr(upper, "upper")
    if lower.is_number and upper.is_number and not bool(lower < upper):
        raise ValueError(f"need lower < upper, got lower = {lower} and upper = {upper}")
    return sp.simplify(
        sp.integrate(expr * gaussian_density(z, variance), (z, lower, upper))
    )


def assert_identity(lhs: sp.Expr, rhs: sp.Expr, what: str = "identity") -> None:
    """Raise AssertionError, showing the simplified residue, unless lhs - rhs simplifies
    to 0.

    Args:
        lhs: a sympy expression or number.
        rhs: a sympy expression or number.
        what: a name for the identity, used in the error message.

    Raises:
        AssertionError: "<what> fails: lhs - rhs simplifies to <residue>".

    Example:
        >>> import sympy as sp
        >>> z = sp.Symbol("z", real=True)
        >>> symbolic.assert_identity(sp.sin(z)**2 + sp.cos(z)**2, 1)
        >>> symbolic.assert_identity((z + 1)**2, z**2 + 1, "binomial")
        Traceback (most recent call last):
        AssertionError: binomial fails: lhs - rhs simplifies to 2*z
    """
    lhs, rhs = _expr(lhs, "lhs"), _expr(rhs, "rhs")
    residue = sp.simplify(sp.expand(lhs - rhs))
    if residue != 0:
        raise AssertionError(f"{what} fails: lhs - rhs simplifies to {residue}")
