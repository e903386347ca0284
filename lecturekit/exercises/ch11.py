"""Checks for the exercises of Chapter 11 (entropy numbers, stable widths, depth)."""

from __future__ import annotations

__all__: list[str] = []
