"""Implicit bias of gradient methods: which solution training selects among many.

One module per model, each with an independent reference to compare the training
dynamics with; every public name is re-exported here, so ``implicit_bias.<name>`` works
for all of them.

* :mod:`lecturekit.implicit_bias.diagonal`: diagonal linear networks, whose gradient
  flow minimizes the potential Q (Woodworth et al. 2020): :func:`train_diagonal_net`,
  :func:`train_diagonal_net_info`, :func:`argmin_Q`, :func:`argmin_Q_primal`, :func:`q`,
  :func:`Q`, :func:`min_l1_interpolant`, :func:`min_weighted_l2_interpolant`,
  :func:`sparse_regression_problem`.
* :mod:`lecturekit.implicit_bias.margin`: separable data, gradient descent and the
  max-margin direction (Soudry et al. 2018): :func:`train_linear_classifier`,
  :func:`hard_margin_svm`, :func:`angle`, :func:`two_clouds`.
* :mod:`lecturekit.implicit_bias.sgd_noise`: the stationary laws of SGD-like Markov
  chains (fluctuation--dissipation relations, a sharp and a flat minimum, the two-speed
  walk).
* :mod:`lecturekit.implicit_bias.label_noise`: label-noise SGD on a diagonal network,
  the trace of its Hessian at the interpolants (:func:`diagonal_sharpness`) and the
  predicted drift along them (:func:`label_noise_drift`).
"""

from . import diagonal, label_noise, margin, sgd_noise
from .diagonal import (
    DiagonalNetInfo,
    L1Certificate,
    Q,
    SparseProblem,
    argmin_Q,
    argmin_Q_primal,
    l1_certificate,
    min_l1_interpolant,
    min_weighted_l2_interpolant,
    q,
    sparse_regression_problem,
    train_diagonal_net,
    train_diagonal_net_info,
)
from .label_noise import diagonal_sharpness, label_noise_drift
from .margin import (
    SVMSolution,
    angle,
    hard_margin_svm,
    train_linear_classifier,
    two_clouds,
)
from .sgd_noise import (
    FDRAverages,
    batch_second_moment_trace,
    circle_chain_stationary,
    circle_chain_stationary_profile,
    circle_fokker_planck,
    circle_model,
    circle_sgd_occupation,
    sgd_least_squares_fdr,
    two_speed_chain_stationary,
    two_speed_expected_occupation,
    two_speed_transition_matrix,
    two_speed_walk_occupation,
)

__all__ = [*diagonal.__all__, *margin.__all__, *sgd_noise.__all__, *label_noise.__all__]
