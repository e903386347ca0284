"""Checks and weight extraction shared by :mod:`lecturekit.regions.line` and
:mod:`lecturekit.regions.plane` (private: its names are
for the modules of this package only)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .. import nets as _nets
from .._validation import check_real


def check_relu_net(net: Any, *, input_dim: int | None) -> None:
    if not isinstance(net, _nets.MLP):
        raise TypeError(
            f"net must be a lecturekit.nets.mlp network, got {type(net).__name__}"
        )
    if net.activation.name != "relu":
        raise ValueError(
            f"net must use the 'relu' activation, got {net.activation.name!r}"
        )
    if net.output_activation is not None:
        raise ValueError(
            "net must have no output activation (its readout must be linear)"
        )
    if net.output_dim != 1:
        raise ValueError(
            f"net must have a scalar output, got output width {net.output_dim}"
        )
    if input_dim is not None and net.input_dim != input_dim:
        raise ValueError(
            f"net must have input dimension {input_dim}, got {net.input_dim}"
        )


def network_layers(
    net: _nets.MLP, params: Any, *, exact: bool
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Effective (mW * W, mb * b) of every dense layer, float64 or Fraction object
    arrays.
    """
    net.check_params(params)
    out = []
    for layer, (mw, mb) in zip(params, net.multipliers()):
        w = np.asarray(layer["W"], dtype=np.float64)
        b = np.asarray(layer["b"], dtype=np.float64)
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
            raise ValueError("params must be finite, but they contain NaN or infinity")
        if exact:
            fw, fb = Fraction(float(mw)), Fraction(float(mb))
            w = np.vectorize(lambda v: fw * Fraction(float(v)), otypes=[object])(w)  # noqa: B023
            b = np.vectorize(lambda v: fb * Fraction(float(v)), otypes=[object])(b)  # noqa: B023
        else:
            w, b = mw * w, mb * b
        out.append((w, b))
    return out


def check_box(box: Any) -> list[float]:
    if isinstance(box, (str, bytes)) or not hasattr(box, "__len__") or len(box) != 4:
        raise TypeError(
            f"box must be a sequence (x0, x1, y0, y1) of 4 numbers, got {box!r}"
        )
    values = [check_real(v, name="box entries") for v in box]
    if not (values[0] < values[1] and values[2] < values[3]):
        raise ValueError(
            f"box must be (x0, x1, y0, y1) with x0 < x1 and y0 < y1, got {box}"
        )
    return values


REAL = (int, float, Fraction, np.integer, np.floating)


def check_end(value: Any, name: str) -> float:
    """A real number that may be infinite (an end of a line), not NaN or a bool."""
    if isinstance(value, bool) or not isinstance(value, REAL):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if math.isnan(out):
        raise ValueError(f"{name} must not be NaN")
    return out
