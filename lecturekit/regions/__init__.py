r"""Linear regions of ReLU networks, computed exactly from the weights.

A ReLU network :math:`x \mapsto f(x)` is continuous and piecewise affine. Its
*activation pattern* at x is the vector of signs of all hidden pre-activations; on the
set of inputs sharing one pattern every neuron is the identity or zero, so f is affine
there. This package finds these pieces from the network's weights, never from a grid of
samples; it has one module per input dimension, and every public name is re-exported
here, so ``regions.<name>`` works for all of them.

* :mod:`lecturekit.regions.line`, scalar input: :func:`trace_1d` follows the network
  layer by layer. On every interval between the knots found so far each pre-activation
  of the next layer is affine in x,
  :math:`z = \alpha + \beta x`, so its zero is :math:`x^* = -\alpha/\beta` in closed
  form.
  :func:`breakpoints_1d` and :func:`count_pieces_1d` read the slope changes off the
  trace; :func:`line_counts` counts pieces and activation regions on the line and on a
  segment. These are exact up to the float64 rounding of the quotients :math:`x^*`;
  :func:`trace_1d_exact` and :func:`breakpoints_1d_exact` repeat the computation in
  rational arithmetic (:class:`fractions.Fraction`), for the network whose weights and
  multipliers are the given float64 numbers, evaluated without rounding.
* :func:`sawtooth`: Telgarsky's composition of tent maps (:func:`tent`) as a network.
* :mod:`lecturekit.regions.depth`, depth separation: a scalar-input network as a
  piecewise-linear function (:func:`network_pwl`) and back (:func:`pwl_network`), the
  exact
  :math:`L^1` distance of two such functions (:func:`pwl_l1_distance`), least-squares
  fits with given knots (:func:`pwl_least_squares`), and the lower bound on the distance
  from the sawtooth of a function with few pieces (:func:`sawtooth_l1_bound`).
* :mod:`lecturekit.regions.plane`, two inputs: :func:`activation_regions_2d` cuts a box
  into the convex polygons of constant activation pattern, layer by
  layer; :func:`activation_patterns` and
  :func:`pattern_map_2d` give the patterns at given points. For one hidden layer the
  linear regions are the cells of the neurons' lines (:func:`hidden_lines`), counted
  exactly by :func:`count_regions_2d_shallow` with :mod:`lecturekit.arrangements`, and
  inside a box by Euler's formula (:func:`lines_in_box`).

Linear regions and activation regions differ: an activation region (inputs sharing one
strict sign pattern) lies inside one linear region (constant gradient), but two adjacent
activation regions may share their gradient, e.g. when a whole layer is off on both
sides of a first-layer neuron's switch. So the number of pieces is at most the number of
activation regions, with equality for one hidden layer and generic weights.

Convention: ``net`` is a :func:`lecturekit.nets.mlp` network with "relu" activation, no
output activation and a scalar output. A dense layer computes
:math:`z = m_W\, h W + m_b\, b` with the forward multipliers :math:`(m_W, m_b)` of
``net.multipliers()`` (NTK: :math:`m_W = \sigma_w/\sqrt{\text{fan-in}}`,
:math:`m_b = \sigma_b`; standard: 1, 1), W of shape (fan_in, fan_out), inputs as rows.
"""

from . import depth, line, plane
from .depth import (
    network_pwl,
    pwl_l1_distance,
    pwl_least_squares,
    pwl_network,
    sawtooth_l1_bound,
)
from .line import (
    LineCounts,
    Trace1D,
    breakpoints_1d,
    breakpoints_1d_exact,
    count_pieces_1d,
    line_counts,
    sawtooth,
    tent,
    trace_1d,
    trace_1d_exact,
)
from .plane import (
    LinesInBox,
    Regions2D,
    activation_patterns,
    activation_regions_2d,
    count_regions_2d_shallow,
    hidden_lines,
    lines_in_box,
    pattern_map_2d,
)

__all__ = [*line.__all__, *plane.__all__, *depth.__all__]
