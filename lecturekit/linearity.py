"""Chapter 3's helpers, by their old module name.

The transition to linearity used to live here; each idea now has a module of its own:

* :mod:`lecturekit.heads`: output heads g o f of multi-output networks and their tangent
  kernel;
* :mod:`lecturekit.hessian_structure`: the model Hessian's blocks, norms and bounds
  (the (2,2,1)-norm, closed forms for one hidden layer, a width-1 bottleneck, expected
  maxima);
* :mod:`lecturekit.kernel_change`: how much the tangent kernel moves during training;
* :mod:`lecturekit.datasets`: the synthetic classification data;
* gradient descent, the losses and Delta K: :mod:`lecturekit.training`.

The names below are re-exported so that existing code keeps importing them from here;
new code imports them from their modules.
"""

from __future__ import annotations

from .datasets import synthetic_classes
from .heads import head_fn, head_ntk, model
from .hessian_structure import (
    bottleneck_mixed_block_norm,
    gaussian_max_abs_moments,
    layer_output_gradients,
    max_block_norm_moments,
    mlp_hessian_norm,
    norm_221,
    one_hidden_layer_hessian_eigenvalues,
    one_hidden_layer_hessian_norm,
)
from .kernel_change import (
    KernelRun,
    ReluSplit,
    first_units_width_sweep,
    kernel_change_run,
    kernel_change_runs,
    relu_kernel_split,
)

__all__: list[str] = []
