"""Checks for the exercises of Chapter 7 (learning rates, parameterizations, feature
learning).

Each check calls the learner's function on problems drawn here and compares it with an
independent reference: eigenvalues of the iteration matrix, a brute-force search over
step sizes, the stationary covariance of the noisy iteration (a Lyapunov equation), a
direct evaluation of two networks, and the per-layer table of the library's muP network.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg

from . import ExerciseCheckError, call_numeric, compare, passed, require_callable

__all__ = [
    "check_contraction_factor",
    "check_best_step",
    "check_noise_floor",
    "check_ntk_alpha",
    "check_mup_scalings",
]


def _spectra() -> list[np.ndarray]:
    rng = np.random.default_rng(70)
    return [
        np.array([1.0, 10.0]),
        np.sort(rng.uniform(0.2, 5.0, 6)),
        np.array([0.5, 0.5, 3.0]),
    ]


def check_contraction_factor(contraction: Callable) -> None:
    """contraction(lams, lr) must return ||I - lr A|| for A with eigenvalues ``lams``.

    The factor by which one gradient-descent step on (1/2) theta^T A theta shrinks the
    worst-case error, the spectral norm of the iteration matrix I - lr A.

    Args:
        contraction: your function (lams, lr) -> a float.

    Example:
        >>> exercises.ch07.check_contraction_factor(
        ...     lambda lams, lr: 1 - lr * min(lams))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ||I - lr A|| for eigenvalues...
    """
    require_callable(contraction, what="contraction")
    for lams in _spectra():
        for lr in (0.05, 0.19, 0.35, 0.5):
            got = call_numeric(
                contraction, lams.copy(), lr, what=f"contraction({lams}, {lr})"
            )
            ref = np.linalg.norm(np.eye(len(lams)) - lr * np.diag(lams), 2)
            compare(
                got,
                ref,
                what=f"||I - lr A|| for eigenvalues {np.round(lams, 3)} at lr = {lr}",
                rtol=1e-9,
                hint="the norm of a symmetric matrix is its largest |eigenvalue|; the "
                "eigenvalues of I - lr A are 1 - lr lambda_i, and both ends of the "
                "spectrum matter.",
            )
    return passed(
        "your contraction factor is the largest |1 - lr lambda_i| on 12 (spectrum, "
        "step) pairs."
    )


def check_best_step(best_step: Callable) -> None:
    """best_step(lam_min, lam_max) must return the constant step minimizing ||I - lr
    A||.

    Args:
        best_step: your function (lam_min, lam_max) -> (step, factor), the optimal step
            and the contraction factor it achieves.

    Example:
        >>> exercises.ch07.check_best_step(lambda a, b: (1 / b, 1 - a / b))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: the optimal step for lambda in [1,...
    """
    require_callable(best_step, what="best_step")
    for lo, hi in ((1.0, 10.0), (0.3, 0.7), (2.0, 200.0)):
        got = call_numeric(best_step, lo, hi, what=f"best_step({lo}, {hi})")
        if got.shape != (2,):
            raise ExerciseCheckError(
                "best_step should return two numbers (step, factor), got shape "
                f"{got.shape}"
            )
        grid = np.linspace(0.0, 2.0 / hi, 200001)[1:]
        factors = np.maximum(np.abs(1 - grid * lo), np.abs(1 - grid * hi))
        compare(
            got[0],
            grid[np.argmin(factors)],
            what=f"the optimal step for lambda in [{lo:g}, {hi:g}]",
            rtol=1e-4,
            hint="the optimum balances the two ends: 1 - lr lambda_min = lr lambda_max "
            "- 1.",
        )
        compare(
            got[1],
            factors.min(),
            what=f"the optimal factor for lambda in [{lo:g}, {hi:g}]",
            rtol=1e-4,
            hint="write it through the condition number kappa = lambda_max / "
            "lambda_min.",
        )
    return passed(
        "your step and factor match a brute-force search over steps on three spectra."
    )


def check_noise_floor(floor: Callable) -> None:
    """floor(lams, lr, sigma) must return the stationary mean loss of noisy gradient
    descent.

    Setting: L(theta) = (1/2) sum_i lams_i theta_i^2 and
    theta <- theta - lr (grad L(theta) + sigma xi), xi ~ N(0, I) i.i.d.; the answer is
    lim_t E L(theta_t) for lr < 2 / max(lams).

    Args:
        floor: your function (lams, lr, sigma) -> a float.

    Example:
        >>> exercises.ch07.check_noise_floor(
        ...     lambda lams, lr, s: lr * s**2 * len(lams) / 4)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: the stationary mean loss for ...
    """
    require_callable(floor, what="floor")
    for lams, lr, sigma in (
        (np.array([1.0, 10.0]), 0.15, 1.0),
        (np.array([0.5, 2.0, 4.0]), 0.4, 0.3),
        (np.array([3.0]), 0.5, 2.0),
    ):
        got = call_numeric(
            floor, lams.copy(), lr, sigma, what=f"floor({lams}, {lr}, {sigma})"
        )
        # stationary covariance C of theta' = M theta + lr sigma xi: C = M C M + lr^2
        # sigma^2 I
        m = np.diag(1 - lr * lams)
        cov = scipy.linalg.solve_discrete_lyapunov(
            m, (lr * sigma) ** 2 * np.eye(len(lams))
        )
        ref = 0.5 * np.sum(lams * np.diag(cov))
        compare(
            got,
            ref,
            what=f"the stationary mean loss for lams = {lams}, lr = {lr}, sigma = "
            f"{sigma}",
            rtol=1e-8,
            hint="find the stationary variance v_i of each coordinate from "
            "v_i = (1 - lr lam_i)^2 v_i + lr^2 sigma^2 (keep the lr^2 term).",
        )
    return passed(
        "your noise floor matches the stationary covariance on three problems."
    )


def check_ntk_alpha(alpha_for_width: Callable) -> None:
    """alpha_for_width(m) must return the alpha at which the lazy mean-field net is the
    NTK one.

    Setting: a one-hidden-layer mean-field network f_MF of width m
    (``nets.mlp(..., parameterization="mean_field")``) and the NTK-parameterized network
    f_NTK with the same parameters, both without a readout bias (``out_b_std = 0``).
    Find alpha(m) such that alpha (f_MF - f_MF(theta_0)) = f_NTK - f_NTK(theta_0) for
    all parameters. The check evaluates both library networks at perturbed parameters,
    and compares one gradient step of size lr on the lazy loss L_alpha of f_MF with one
    step of size lr / m on the centred NTK loss (:func:`lecturekit.training.lazy_loss`).

    Args:
        alpha_for_width: your function m -> alpha.

    Example:
        >>> exercises.ch07.check_ntk_alpha(lambda m: m)
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: alpha for width 4...
    """
    import functools

    import jax

    from .. import nets, training

    def evaluate(net_mf, net_ntk, m, alpha, p0, p1, x, y):
        """Centred outputs of both networks and one step lr on L_alpha and lr / m on
        L_NTK.
        """
        f_mf = net_mf.apply(p1, x) - net_mf.apply(p0, x)
        f_ntk = net_ntk.apply(p1, x) - net_ntk.apply(p0, x)
        g_lazy = jax.grad(training.lazy_loss(net_mf.apply, p0, x, y, alpha=alpha))(p1)
        g_ntk = jax.grad(training.lazy_loss(net_ntk.apply, p0, x, y, alpha=1.0))(p1)
        steps = [
            [0.1 * a for a in jax.tree_util.tree_leaves(g_lazy)],
            [0.1 / m * a for a in jax.tree_util.tree_leaves(g_ntk)],
        ]
        return (f_mf, f_ntk) + tuple(
            jax.numpy.concatenate([a.ravel() for a in st]) for st in steps
        )

    require_callable(alpha_for_width, what="alpha_for_width")
    rng = np.random.default_rng(71)
    for m in (4, 25, 300):
        got = call_numeric(alpha_for_width, m, what=f"alpha_for_width({m})")
        if got.shape != ():
            raise ExerciseCheckError(
                f"alpha_for_width should return one number, got shape {got.shape}"
            )
        if not np.isfinite(got) or got <= 0:
            raise ExerciseCheckError(
                f"alpha_for_width({m}) should be a positive number, got {float(got)}"
            )
        net_mf, net_ntk = (
            nets.mlp(
                (3, m, 1),
                "relu",
                w_std=1.0,
                b_std=1.0,
                out_b_std=0.0,
                parameterization=par,
            )
            for par in ("mean_field", "ntk")
        )
        shapes = [{"W": (3, m), "b": (m,)}, {"W": (m, 1), "b": (1,)}]
        p0 = [
            {k: rng.standard_normal(sh) for k, sh in layer.items()} for layer in shapes
        ]
        p1 = [
            {k: a + 0.3 * rng.standard_normal(a.shape) for k, a in layer.items()}
            for layer in p0
        ]
        x, y = rng.standard_normal((5, 3)), rng.standard_normal(5)
        run = jax.jit(functools.partial(evaluate, net_mf, net_ntk, m, float(got)))
        f_mf, f_ntk, step_lazy, step_ntk = (np.asarray(a) for a in run(p0, p1, x, y))
        compare(
            float(got) * f_mf,
            f_ntk,
            what=f"alpha for width {m}: alpha (f_MF - f_MF(theta_0)) against "
            "f_NTK - f_NTK(theta_0) of the library networks",
            rtol=1e-5,
            atol=1e-9,
            hint="compare the readout multipliers of the two parameterizations (nets "
            "module docstring).",
        )
        # one step lr on L_alpha of f_MF equals one step lr / m on the centred NTK loss
        compare(
            step_lazy,
            step_ntk,
            what=f"alpha for width {m}: a step lr on L_alpha against a step lr / m "
            "on the centred NTK loss",
            rtol=1e-5,
            atol=1e-9,
            hint="L_alpha = (1/alpha^2) L(alpha (f - f_0)); with the right alpha it is "
            "(1/m) times "
            "the centred NTK loss.",
        )
    return passed(
        "alpha(m) (f_MF - f_MF(theta_0)) equals f_NTK - f_NTK(theta_0) for the library "
        "networks, and "
        "a step lr on L_alpha is a step lr / m on the centred NTK loss, at widths 4, "
        "25 and 300."
    )


# the classic wrong tables: (input, hidden, readout) exponents of (variance, step) in
# the width
_WRONG_TABLES = {
    "the standard parameterization (SP)": ((0, 0), (-1, 0), (-1, 0)),
    "the NTK parameterization": ((0, 0), (-1, -1), (-1, -1)),
    "muP for Adam (its steps are 1, 1/fan_in, 1/fan_in)": ((0, 0), (-1, -1), (-2, -1)),
}


def check_mup_scalings(mup_scalings: Callable) -> None:
    """mup_scalings(fan_in, fan_out, layer) must give muP's (variance, step) for SGD.

    For a weight matrix of an MLP whose hidden widths all grow together, ``layer`` one
    of "input", "hidden" and "readout", return (the initial variance of the effective
    weights, the step of plain SGD on them in units of the global learning rate), up to
    constants that do not depend on the fans. The check compares how each entry changes
    when the width (or the input dimension) doubles with the library's muP network
    (``nets.mlp(..., parameterization="mup")``, read through
    :func:`lecturekit.feature_learning.effective_scalings`), and names the
    parameterization that a wrong table belongs to.

    Args:
        mup_scalings: your function (fan_in, fan_out, layer) -> (variance, step).

    Example:
        >>> exercises.ch07.check_mup_scalings(
        ...     lambda fan_in, fan_out, layer: (1 / fan_in, 1.0))
        Traceback (most recent call last):
        lecturekit.exercises.ExerciseCheckError: ...the standard parameterization...
    """
    from .. import feature_learning, nets

    require_callable(mup_scalings, what="mup_scalings")
    d, widths = 10, (256, 512)
    fans = {
        "input": lambda m, dim: (dim, m),
        "hidden": lambda m, dim: (m, m),
        "readout": lambda m, dim: (m, 1),
    }

    def entry(layer, m, dim):
        fan_in, fan_out = fans[layer](m, dim)
        got = call_numeric(
            mup_scalings,
            fan_in,
            fan_out,
            layer,
            what=f"mup_scalings({fan_in}, {fan_out}, {layer!r})",
        )
        if got.shape != (2,) or not np.all(np.isfinite(got)) or np.any(got <= 0):
            raise ExerciseCheckError(
                f"mup_scalings({fan_in}, {fan_out}, {layer!r}) should return two "
                "positive "
                f"numbers (variance, step), got {got}"
            )
        return got

    def exponents(m_small, m_large, dim_small, dim_large, layer):
        return np.log2(
            entry(layer, m_large, dim_large) / entry(layer, m_small, dim_small)
        )

    def plain(values):
        return tuple(float(v) + 0.0 for v in np.round(values, 9))

    got = tuple(plain(exponents(*widths, d, d, layer)) for layer in fans)
    tables = [
        feature_learning.effective_scalings(
            nets.mlp((d, m, m, 1), parameterization="mup")
        )
        for m in widths
    ]
    want = tuple(
        plain(
            np.log2(
                [
                    getattr(tables[1], name)[i] / getattr(tables[0], name)[i]
                    for name in ("weight_variance", "weight_lr")
                ]
            )
        )
        for i in range(3)
    )
    if got != want:
        for name, table in _WRONG_TABLES.items():
            if got == table:
                raise ExerciseCheckError(
                    "your width exponents (input, hidden, readout) x (variance, step) "
                    f"are {got}: that is "
                    f"{name}, not muP for SGD {want}. Hint: in muP the readout is "
                    "multiplied by 1/width and "
                    "every layer with one width dimension (input weights, biases, "
                    "readout) gets its SGD step "
                    f"multiplied by the width."
                )
        raise ExerciseCheckError(
            "your width exponents (input, hidden, readout) x (variance, step) are "
            f"{got}, muP for SGD has "
            f"{want}. Hint: variance 1/fan_in except the readout (1/fan_in^2); step "
            "fan_out for the input "
            f"weights, 1 for the hidden ones, 1/fan_in for the readout."
        )
    # the input layer's variance is 1/fan_in in the input dimension too (doubling d
    # halves it)
    input_d = exponents(widths[0], widths[0], d, 2 * d, "input")
    compare(
        input_d[0],
        -1.0,
        what="the change of the input layer's variance (log2) when the input dimension "
        "doubles",
        atol=1e-9,
        hint="the input weights start with variance 1/fan_in, fan_in = d.",
    )
    return passed(
        f"your table has muP's width exponents {want} for (input, hidden, readout) x "
        "(variance, "
        "step), as the library's muP network, and the input variance 1/d."
    )
