"""Every exercise check accepts a right answer and explains why a wrong or malformed one is wrong.

For each ``check_*`` in lecturekit.exercises.ch01..ch06 the right answer is computed here the
way a learner could (by hand, with lecturekit or NumPy/SciPy), by a route different from the
check's own reference where one exists. Wrong answers are the classic mistakes (a missing
factor, a wrong sign, an off-by-one); malformed ones are not functions, stubs left raising
NotImplementedError, functions that return None, and results of the wrong shape or type.
"""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree
import numpy as np
import pytest
import scipy.integrate
import scipy.optimize
import scipy.stats
import sympy as sp

from lecturekit import criticality, implicit_bias, linearity, nets, quadratic, stats
from lecturekit.exercises import ExerciseCheckError, ch01, ch02, ch03, ch04, ch05, ch06, fast

jax.config.update("jax_enable_x64", True)


def rejects(check, answer, match, *args):
    """Assert that check(answer, *args) raises ExerciseCheckError matching `match`; return its message."""
    with pytest.raises(ExerciseCheckError, match=match) as failure:
        check(answer, *args)
    return str(failure.value)


# ======================================================================================
# Chapter 1


K_s, Cw_s, Cb_s = sp.symbols("K C_w C_b", positive=True)


a_s = sp.Symbol("a", real=True)
n_s, L_s = sp.symbols("n L", positive=True, integer=True)


def leaky_map_by_integration(K, C_w, C_b, a):
    """C_b + C_w E_K[max(z, a z)^2], both half-lines integrated by sympy."""
    z = sp.Symbol("z", real=True)
    density = sp.exp(-(z**2) / (2 * K)) / sp.sqrt(2 * sp.pi * K)
    return C_b + C_w * (sp.integrate(z**2 * density, (z, 0, sp.oo))
                        + a**2 * sp.integrate(z**2 * density, (z, -sp.oo, 0)))


def test_leaky_relu_variance_map_accepts_right_answers(capsys):
    ch01.check_leaky_relu_variance_map(leaky_map_by_integration(K_s, Cw_s, Cb_s, a_s), K_s, Cw_s, Cb_s, a_s)
    ch01.check_leaky_relu_variance_map(Cb_s + 0.5 * Cw_s * K_s * (1 + a_s**2), K_s, Cw_s, Cb_s, a_s)
    assert "2 / (1 + a^2)" in capsys.readouterr().out


def test_leaky_relu_variance_map_rejects_classic_mistakes():
    check = ch01.check_leaky_relu_variance_map
    message = rejects(check, Cb_s + Cw_s * K_s / 2, "this is the ReLU map", K_s, Cw_s, Cb_s, a_s)
    assert "instead of" in message, message  # the values at a point where the two differ
    rejects(check, Cb_s + Cw_s * (1 + a_s) * K_s / 2, "slope enters squared", K_s, Cw_s, Cb_s, a_s)
    rejects(check, Cb_s + Cw_s * (1 + a_s**2) * K_s, "split the integral at 0", K_s, Cw_s, Cb_s, a_s)
    z = sp.Symbol("z", real=True)
    rejects(check, Cb_s + Cw_s * z**2 / 2, r"symbols \['z'\]", K_s, Cw_s, Cb_s, a_s)
    K_free = sp.Symbol("K")  # no positivity: sympy leaves a Piecewise / an unevaluated integral
    rejects(check, leaky_map_by_integration(K_free, Cw_s, Cb_s, a_s), "positive", K_free, Cw_s, Cb_s, a_s)
    rejects(check, Cb_s + Cw_s * K_free / 2, "other assumptions", K_s, Cw_s, Cb_s, a_s)


@pytest.mark.parametrize("answer", [None, 0.5, NotImplemented, "C_b + C_w*K/2"])
def test_symbolic_checks_reject_non_expressions(answer):
    rejects(ch01.check_leaky_relu_variance_map, answer, "expected a sympy expression", K_s, Cw_s, Cb_s, a_s)
    rejects(ch01.check_linear_kurtosis, answer, "expected a sympy expression", n_s, L_s)


def test_symbolic_checks_reject_non_symbols():
    rejects(ch01.check_leaky_relu_variance_map, Cb_s + Cw_s * K_s / 2, "K should be the sympy symbol",
            "K", Cw_s, Cb_s, a_s)
    rejects(ch01.check_linear_kurtosis, 6 * L_s / n_s, "n should be the sympy symbol", 3, L_s)


def test_linear_kurtosis(capsys):
    # by the moments of chi^2_n / n: E[X^2] = (n^2 + 2n) / n^2, one independent factor per hidden layer
    second = sp.simplify((n_s**2 + 2 * n_s) / n_s**2)
    ch01.check_linear_kurtosis(3 * (second**L_s - 1), n_s, L_s)
    ch01.check_linear_kurtosis(3 * ((n_s + 2) / n_s) ** L_s - 3, n_s, L_s)
    assert "Correct" in capsys.readouterr().out
    check = ch01.check_linear_kurtosis
    for wrong, match in [(6 * L_s / n_s, "first order"), (3 * (1 + 2 / n_s) ** L_s, "subtracts"),
                         ((1 + 2 / n_s) ** L_s - 1, "factor 3"), (3 * ((1 + 5 / n_s) ** L_s - 1), "ReLU"),
                         (3 * ((1 + 2 / n_s) ** (L_s + 1) - 1), "deterministic"),
                         (3 * ((1 + 1 / n_s) ** L_s - 1), "chi\\^2_n")]:
        message = rejects(check, wrong, match, n_s, L_s)
        assert "at n = 4, L = 3" in message, message


def sign_dual_by_step(k11, k12, k22):
    """sign = 2 step - 1 and the arc-cosine kernel of degree 0: E[sign u sign v] = 1 - 2 theta / pi."""
    return 1 - 2 * np.arccos(k12 / np.sqrt(k11 * k22)) / np.pi


def test_sign_dual():
    ch01.check_sign_dual(sign_dual_by_step)
    rejects(ch01.check_sign_dual, lambda a, c, b: 2 / np.pi * np.arcsin(np.clip(c, -1, 1)), "correlation rho")
    rejects(ch01.check_sign_dual, lambda a, c, b: (np.pi - np.arccos(c / np.sqrt(a * b))) / (2 * np.pi),
            "dual of the step")
    rejects(ch01.check_sign_dual, lambda a, c, b: np.array([1.0, 2.0]), r"sign_dual\(.*expected a single number")


@functools.lru_cache(maxsize=None)  # the check and the doubled wrong answer ask for the same points
def depth_scale_by_slope(c_w, c_b):
    """xi = -1/ln c'(rho_inf): the correlation map iterated to its stable fixed point, then its slope there."""
    stds = {"w_std": np.sqrt(c_w), "b_std": np.sqrt(c_b)}  # the exercise gives the variances
    k_star = float(criticality.fixed_point("tanh", **stds, iterations=3000))
    # 3000 layers of the covariance map from correlation 1/2 at the fixed variance, one scan
    k11, k12, k22 = criticality.kernel_trajectory(k_star, 0.5 * k_star, k_star, 3000, "tanh", **stds)
    rho = float(k12[-1] / np.sqrt(k11[-1] * k22[-1]))
    return -1 / np.log(float(criticality.correlation_slope(rho, k_star, "tanh", **stds)))


def test_depth_scale():
    ch01.check_depth_scale(depth_scale_by_slope)

    def chi_perp_everywhere(c_w, c_b):  # the ordered-phase formula used on both sides
        k_star = criticality.fixed_point("tanh", w_std=np.sqrt(c_w), b_std=np.sqrt(c_b), iterations=3000)
        return -1 / np.log(float(criticality.chi_perp(k_star, "tanh", w_std=np.sqrt(c_w))))

    rejects(ch01.check_depth_scale, chi_perp_everywhere, "chaotic phase chi_perp > 1")
    rejects(ch01.check_depth_scale, lambda c_w, c_b: 2 * depth_scale_by_slope(c_w, c_b), "got .* where")
    rejects(ch01.check_depth_scale, lambda c_w, c_b: [1.0, 2.0], "expected a single number")


@functools.lru_cache(maxsize=None)
def tanh_trajectory(k0, depth):
    """K^(0), ..., K^(depth) for tanh at (C_b, C_w) = (0, 1), by lecturekit's Gauss-Hermite scan."""
    return np.asarray(criticality.variance_trajectory(k0, depth, "tanh", w_std=1.0, b_std=0.0))


def test_tanh_variances():
    ch01.check_tanh_variances(lambda k0, depth: tanh_trajectory(k0, depth)[1:])
    rejects(ch01.check_tanh_variances, lambda k0, depth: tanh_trajectory(k0, depth)[:-1], r"starts with K\^\(0\)")
    rejects(ch01.check_tanh_variances, lambda k0, depth: tanh_trajectory(k0, depth)[2:],
            r"expected 2000 variances.*\(1999,\)")
    rejects(ch01.check_tanh_variances, lambda k0, depth: tanh_trajectory(k0, depth)[1:] * (1 + 1e-5),
            "got .* where .* was expected.*rtol=1e-07")


def erf_critical_point_2d(c_b=0.05):
    """Solve K = C_b + C_w E_K[erf^2] and C_w E_K[erf'^2] = 1 together for (K, C_w)."""
    def equations(unknowns):
        k, c_w = unknowns
        return [c_b + c_w * 2 / np.pi * np.arcsin(2 * k / (1 + 2 * k)) - k,
                c_w * 4 / (np.pi * np.sqrt(1 + 4 * k)) - 1]

    (k_star, c_w), info, ok, message = scipy.optimize.fsolve(equations, [0.5, 1.0], xtol=1e-13, full_output=True)
    assert ok == 1 and k_star > 0, message
    return c_w


def test_erf_critical_point():
    ch01.check_erf_critical_point(erf_critical_point_2d())
    ch01.check_erf_critical_point(np.array([erf_critical_point_2d()]))  # a size-1 array is a number
    rejects(ch01.check_erf_critical_point, np.pi / 4, r"pi/4 is the answer at sigma_b\^2 = 0")
    rejects(ch01.check_erf_critical_point, erf_critical_point_2d(c_b=0.1), "got .* where .* was expected")


@pytest.mark.parametrize("answer, match", [(None, "got None"), ("1.2", "expected real numbers, got str"),
                                           (erf_critical_point_2d, "expected real numbers, got function"),
                                           ([1.0, 2.0], "expected a single number")])
def test_erf_critical_point_rejects_non_numbers(answer, match):
    rejects(ch01.check_erf_critical_point, answer, "sigma_w2: " + match)


# ======================================================================================
# Chapter 2 (the cases of the former test_exercises_ch02.py)


def test_sine_ntk():
    ch02.check_sine_ntk(lambda xi: np.exp(-1) * (np.sinh(xi) + xi * np.cosh(xi)))
    rejects(ch02.check_sine_ntk, lambda xi: np.exp(-1) * np.sinh(xi), "sine NTK.*dual")  # the NNGP only
    rejects(ch02.check_sine_ntk, lambda xi: np.exp(-1) * (np.sinh(xi) + xi * np.cosh(xi)).sum(),
            r"expected shape \(41,\), got \(\)")


def flow_by_expm(K, k_test, y, f0_train, f0_test, t, *, scale=None):
    """f_t = f0 + k K^-1 (I - exp(-t K / n)) (y - f0), with scipy's matrix exponential."""
    import scipy.linalg

    n = K.shape[0]
    decay = scipy.linalg.expm(-t * K / (n if scale is None else scale))
    return f0_test + k_test @ np.linalg.solve(K, (np.eye(n) - decay) @ (y - f0_train))


def test_gradient_flow():
    ch02.check_gradient_flow(flow_by_expm)
    rejects(ch02.check_gradient_flow, lambda *args: flow_by_expm(*args, scale=1.0), r"exp\(-t K\)")
    rejects(ch02.check_gradient_flow, lambda K, kt, y, a, b, t: flow_by_expm(K, kt, y, a, 0 * b, t), "f_t on the test")


def test_flip_probability():
    # right answers: the Gaussian integral, and 2 Phi(Delta) - 1 written with erfc
    u = sp.Symbol("u", real=True)
    ch02.check_flip_probability(lambda D: sp.integrate(sp.exp(-(u**2) / 2) / sp.sqrt(2 * sp.pi), (u, -D, D)))
    ch02.check_flip_probability(lambda D: 1 - sp.erfc(D / sp.sqrt(2)))
    # classic wrong answers, each explained
    rejects(ch02.check_flip_probability, lambda D: sp.erf(D / sp.sqrt(2)) / 2, "one side only")
    rejects(ch02.check_flip_probability, lambda D: D * sp.sqrt(2 / sp.pi), "upper bound")
    rejects(ch02.check_flip_probability, lambda D: sp.erf(D), "variance")
    rejects(ch02.check_flip_probability, lambda D: sp.erfc(D / sp.sqrt(2)), "can NOT change")
    # malformed answers: not sympy, a stray symbol, an unfinished integral
    rejects(ch02.check_flip_probability, lambda D: "erf(Delta/sqrt(2))", "sympy expression.*got str")
    rejects(ch02.check_flip_probability, lambda D: np.array([0.1, 0.2]), "sympy expression.*got ndarray")
    rejects(ch02.check_flip_probability, lambda D: sp.erf(sp.Symbol("Delta") / sp.sqrt(2)), "new symbol")
    v = sp.Symbol("v")
    rejects(ch02.check_flip_probability, lambda D: sp.Integral(sp.exp(-(v**2) / 2), (v, -D, D)), "unevaluated")


def test_kernel_ridge():
    ch02.check_kernel_ridge(lambda K, kt, y, r: kt @ np.linalg.solve(K + r * np.eye(len(y)), y))
    rejects(ch02.check_kernel_ridge, lambda K, kt, y, r: kt @ np.linalg.solve(K + 2 * r * np.eye(len(y)), y), "ridge")


def readout_covariance(k, kt, ktt, t, *, twice=2.0, scale=None):
    """K(*,*) - K(*,S) K^-1 (I - exp(-twice t K / n)) K(S,*), by eigendecomposition."""
    n = k.shape[0]
    mu, u = np.linalg.eigh(k)
    decay = (u * np.exp(-twice * t * mu / (n if scale is None else scale))) @ u.T
    return ktt - kt @ np.linalg.solve(k, (np.eye(n) - decay) @ kt.T)


def test_readout_ensemble():
    ch02.check_readout_ensemble(readout_covariance)
    rejects(ch02.check_readout_ensemble, lambda *a: readout_covariance(*a, twice=1.0), "two factors")
    rejects(ch02.check_readout_ensemble, lambda k, kt, ktt, t: ktt - kt @ np.linalg.solve(k, kt.T),
            "NNGP posterior")
    rejects(ch02.check_readout_ensemble, lambda k, kt, ktt, t: ktt, "prior")
    rejects(ch02.check_readout_ensemble, lambda *a: readout_covariance(*a, scale=1.0), "1/n")
    rejects(ch02.check_readout_ensemble, lambda k, kt, ktt, t: ktt[0], r"expected shape \(4, 4\)")


# ======================================================================================
# Chapter 3


def hessian_spectrum_by_blocks(v, W, x):
    """Per neuron the (d+1)x(d+1) block m^-1/2 [[v tanh''(z) x x^T, tanh'(z) x], [tanh'(z) x^T, 0]], diagonalized."""
    v, W, x = np.asarray(v), np.asarray(W), np.asarray(x)
    m, d = W.shape
    t = np.tanh(W @ x)
    blocks = np.zeros((m, d + 1, d + 1))
    blocks[:, :d, :d] = (v * (-2 * t * (1 - t**2)))[:, None, None] * np.outer(x, x)
    blocks[:, :d, d] = blocks[:, d, :d] = (1 - t**2)[:, None] * x
    return np.linalg.eigvalsh(blocks / np.sqrt(m)).ravel()


def test_hessian_spectrum():
    ch03.check_hessian_spectrum(hessian_spectrum_by_blocks)
    rejects(ch03.check_hessian_spectrum, lambda v, W, x: hessian_spectrum_by_blocks(v, W, x) * np.sqrt(len(v)),
            "sqrt\\(m\\) times too large")
    # the scalar-input formula with x^2 -> |x|^2 but without the d - 1 zero eigenvalues per neuron
    def nonzero_only(v, W, x):
        ev = hessian_spectrum_by_blocks(v, W, x)
        return ev if W.shape[1] == 1 else ev[np.abs(ev) > 1e-14]
    rejects(ch03.check_hessian_spectrum, nonzero_only, "d - 1 eigenvalues are zeros")
    # the classic slip: |x| where |x|^2 belongs (a = v tanh''(z) |x| instead of v tanh''(z) |x|^2)
    def wrong_power(v, W, x):
        z, s, m = W @ x, np.linalg.norm(x), len(v)
        a, c = v * (-2 * np.tanh(z) * (1 - np.tanh(z) ** 2)) * s, (1 - np.tanh(z) ** 2) * s
        root = np.sqrt(a**2 + 4 * c**2)
        zeros = np.zeros(m * (W.shape[1] - 1))
        return np.concatenate([(a + root) / (2 * np.sqrt(m)), (a - root) / (2 * np.sqrt(m)), zeros])
    rejects(ch03.check_hessian_spectrum, wrong_power, "got .* where .* was expected.*plane spanned")
    rejects(ch03.check_hessian_spectrum, lambda v, W, x: hessian_spectrum_by_blocks(v, W, x)[:-1],
            r"expected shape \(8,\), got \(7,\)")


def test_norm_221():
    ch03.check_norm_221(linearity.norm_221)
    sum_of_norms = lambda T: sum(np.linalg.norm(T[:, :, k], 2) for k in range(T.shape[2]))  # noqa: E731  an upper bound
    rejects(ch03.check_norm_221, sum_of_norms, "norm of a .* tensor.*signs")
    largest_slice = lambda T: max(np.linalg.norm(T[:, :, k], 2) for k in range(T.shape[2]))  # noqa: E731  a lower bound
    rejects(ch03.check_norm_221, largest_slice, "got .* where .* was expected")


def relu_hessian_norm_by_blocks(w, x):
    """The blocks are [[0, c], [c, 0]] / sqrt(m), c = relu'(w x) x: eigenvalues +-|c| / sqrt(m)."""
    c = np.where(np.asarray(w) * x > 0, x, 0.0)
    return np.max(np.abs(c)) / np.sqrt(len(c))


def test_relu_hessian_norm():
    ch03.check_relu_hessian_norm(relu_hessian_norm_by_blocks)
    rejects(ch03.check_relu_hessian_norm, lambda w, x: relu_hessian_norm_by_blocks(w, x) * np.sqrt(len(w)),
            r"\|\|H\|\| for m = 50")
    with_log = lambda w, x: relu_hessian_norm_by_blocks(w, x) * np.sqrt(2 * np.log(len(w)))  # noqa: E731  tanh's law
    rejects(ch03.check_relu_hessian_norm, with_log, "relu'' = 0")


def chizat_bach_experiment(alphas=(8.0, 16.0, 32.0, 64.0), width=16, n=6, steps=300):
    """Relative kernel change of the rescaled model alpha (f - f0) after gradient descent, per alpha.

    f(x) = m^-1/2 sum_i v_i tanh(w_i . x); the step is lr / alpha^2 so that the function-space
    dynamics do not depend on alpha, and the parameters move by O(1 / alpha).
    """
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 2))
    y = rng.normal(size=n)
    W0, v0 = rng.normal(size=(width, 2)), rng.normal(size=width)

    def value_and_jacobian(W, v):
        t = np.tanh(X @ W.T)  # (n, width)
        jac_w = (v * (1 - t**2))[:, :, None] * X[:, None, :]
        return t @ v / np.sqrt(width), np.concatenate([jac_w.reshape(n, -1), t], axis=1) / np.sqrt(width)

    f0, J0 = value_and_jacobian(W0, v0)
    K0 = J0 @ J0.T
    lr = n / np.linalg.eigvalsh(K0).max()
    changes = []
    for alpha in alphas:
        W, v = W0.copy(), v0.copy()
        for _ in range(steps):
            f, J = value_and_jacobian(W, v)
            grad = alpha * J.T @ (alpha * (f - f0) - y) / n
            step = lr / alpha**2 * grad
            W, v = W - step[: 2 * width].reshape(width, 2), v - step[2 * width:]
        J = value_and_jacobian(W, v)[1]
        changes.append(np.linalg.norm(J @ J.T - K0) / np.linalg.norm(K0))
    return np.array(alphas), np.array(changes)


def test_chizat_bach_slope():
    alphas, changes = chizat_bach_experiment()
    ch03.check_chizat_bach_slope(stats.fit_loglog(alphas, changes).slope)
    rejects(ch03.check_chizat_bach_slope, np.polyfit(alphas, changes, 1)[0], "not close to -1")  # linear axes
    rejects(ch03.check_chizat_bach_slope, -0.5, "not close to -1.*O\\(1/alpha\\)")  # the 1/sqrt(width) law
    rejects(ch03.check_chizat_bach_slope, stats.fit_loglog(alphas, changes), r"take its \.slope")
    rejects(ch03.check_chizat_bach_slope, None, "slope: got None")


R_s = sp.Symbol("r", positive=True)
BOTTLENECK_TRUTH = sp.sqrt(6 / sp.pi) * 3 * R_s**4 / 4   # E|N(0, 3)| * E[(w.x)^4 / 4]


def test_bottleneck_bound_accepts_equivalent_forms(capsys):
    ch03.check_bottleneck_bound(BOTTLENECK_TRUTH, R_s)
    ch03.check_bottleneck_bound(3 * sp.sqrt(6) * R_s**4 / (4 * sp.sqrt(sp.pi)), R_s)
    assert "Correct" in capsys.readouterr().out


def test_bottleneck_bound_explains_classic_mistakes():
    rejects(ch03.check_bottleneck_bound, BOTTLENECK_TRUTH / 3, "fourth moment is 3", R_s)        # E[(w.x)^4] = r^4
    rejects(ch03.check_bottleneck_bound, BOTTLENECK_TRUTH / sp.sqrt(3), "variance E\\[v\\^2\\] E\\[u\\^4\\] = 3", R_s)
    rejects(ch03.check_bottleneck_bound, BOTTLENECK_TRUTH * sp.sqrt(sp.pi / 2), "s sqrt\\(2/pi\\), not s", R_s)
    rejects(ch03.check_bottleneck_bound, BOTTLENECK_TRUTH / R_s**2, "power of r is off", R_s)
    rejects(ch03.check_bottleneck_bound, 2 * BOTTLENECK_TRUTH, "2 \\(= 2.0000\\) times .*three factors", R_s)


@pytest.mark.parametrize("answer", [None, 1.0, "3*sqrt(6)*r**4/(4*sqrt(pi))", np.ones(2)])
def test_bottleneck_bound_rejects_non_expressions(answer):
    rejects(ch03.check_bottleneck_bound, answer, "expected a sympy expression in r", R_s)


def test_bottleneck_bound_rejects_stray_symbols_and_integrals():
    m, g = sp.symbols("m g", positive=True)
    rejects(ch03.check_bottleneck_bound, BOTTLENECK_TRUTH * m / m + g, r"symbols \['g'\]", R_s)
    rejects(ch03.check_bottleneck_bound, BOTTLENECK_TRUTH, "should be the sympy symbol", "r")
    unfinished = sp.Integral(sp.exp(-g**2) * R_s, (g, 0, sp.oo))
    rejects(ch03.check_bottleneck_bound, unfinished, "unevaluated integral", R_s)


# ======================================================================================
# Chapter 4


def linear_kernel_shift(eta, lam0, c, r0, y):
    """First order in c: the geometric sums of the kernel's steps (q = 1 - eta lam0)."""
    q = 1 - eta * lam0
    return eta * c * ((eta * lam0 - 4) * r0**2 / (1 - q**2) - 4 * y * r0 / (1 - q))


def test_linear_kernel_shift():
    ch04.check_linear_kernel_shift(linear_kernel_shift)
    # the same sum written out differently, with a float coefficient
    ch04.check_linear_kernel_shift(
        lambda eta, lam0, c, r0, y: (c / lam0) * (-(4 - eta * lam0) * r0**2 / (2 - eta * lam0) - 4.0 * y * r0))
    q = lambda eta, lam0: 1 - eta * lam0  # noqa: E731
    rejects(ch04.check_linear_kernel_shift,  # the label forgotten (z = r)
            lambda eta, lam0, c, r0, y: eta * c * (eta * lam0 - 4) * r0**2 / (1 - q(eta, lam0) ** 2),
            "label is missing")
    rejects(ch04.check_linear_kernel_shift,  # both sums taken as series in q
            lambda eta, lam0, c, r0, y: eta * c * ((eta * lam0 - 4) * r0**2 - 4 * y * r0) / (1 - q(eta, lam0)),
            r"series in q\^2")
    rejects(ch04.check_linear_kernel_shift, lambda *a: -linear_kernel_shift(*a), "sign is flipped")
    rejects(ch04.check_linear_kernel_shift, lambda eta, lam0, c, r0, y: c * r0 / lam0, "at eta=1.5")
    rejects(ch04.check_linear_kernel_shift, lambda *a: np.ones(2), "sympy expression.*ndarray")
    t = sp.Symbol("t")
    rejects(ch04.check_linear_kernel_shift, lambda eta, lam0, c, r0, y: c * t, r"symbols \['t'\]")


def flow_final_kernel(lam0, c, r0, y):
    return sp.sqrt(lam0**2 - 4 * c * ((r0 + y) ** 2 - y**2))


def test_flow_kernel():
    ch04.check_flow_kernel(flow_final_kernel)
    ch04.check_flow_kernel(lambda lam0, c, r0, y: (lam0**2 - 4 * c * r0**2 - 8 * c * r0 * y) ** 0.5)
    rejects(ch04.check_flow_kernel, lambda lam0, c, r0, y: sp.sqrt(lam0**2 - 4 * c * (r0 + y) ** 2),
            "converges to z = y")
    rejects(ch04.check_flow_kernel, lambda lam0, c, r0, y: lam0 - 2 * c * ((r0 + y) ** 2 - y**2) / lam0,
            "first order in c only")
    rejects(ch04.check_flow_kernel, lambda lam0, c, r0, y: lam0, "does move")
    rejects(ch04.check_flow_kernel, lambda lam0, c, r0, y: np.sqrt(2.0) * "x", "raised TypeError")
    rejects(ch04.check_flow_kernel, lambda lam0, c, r0, y: (lam0, c), "sympy expression.*tuple")


def make_quadratic_by_hand(f, params0, *, second_order=0.5):
    def f_quad(params, x):
        delta = jax.tree_util.tree_map(jnp.subtract, params, params0)
        g = lambda s: f(jax.tree_util.tree_map(lambda a, d: a + s * d, params0, delta), x)  # noqa: E731
        g1 = lambda s: jax.jvp(g, (s,), (1.0,))[1]  # noqa: E731
        value, first = jax.jvp(g, (0.0,), (1.0,))
        return value + first + second_order * jax.jvp(g1, (0.0,), (1.0,))[1]

    return f_quad


def test_quadratic_model():
    ch04.check_quadratic_model(make_quadratic_by_hand)
    rejects(ch04.check_quadratic_model, lambda f, p0: make_quadratic_by_hand(f, p0, second_order=1.0), "g''\\(0\\)/2")


def theta_i_least_squares(phi, psi, y, *, residual_term=True):
    gram = phi @ phi.T
    theta_f = np.linalg.solve(gram, phi @ y)
    q = np.einsum("i,aij,j->a", theta_f, psi, theta_f)
    rhs = phi @ (q / 2)
    if residual_term:
        rhs = rhs + np.einsum("a,aij,j->i", phi.T @ theta_f - y, psi, theta_f)
    return -np.linalg.solve(gram, rhs)


def test_least_squares_correction():
    ch04.check_least_squares_correction(theta_i_least_squares)
    rejects(ch04.check_least_squares_correction,
            lambda phi, psi, y: theta_i_least_squares(phi, psi, y, residual_term=False),
            "model that interpolates")
    rejects(ch04.check_least_squares_correction, lambda *a: -theta_i_least_squares(*a), "theta\\^I .*expected")
    rejects(ch04.check_least_squares_correction, lambda *a: theta_i_least_squares(*a)[:2], r"expected shape \(3,\)")


# ======================================================================================
# Chapter 5


def min_l1_epigraph(X, y):
    """min sum(t) over (beta, t) with -t <= beta <= t and X beta = y."""
    X, y = np.asarray(X), np.asarray(y)
    n, d = X.shape
    eye = np.eye(d)
    res = scipy.optimize.linprog(np.r_[np.zeros(d), np.ones(d)],
                                 A_ub=np.block([[eye, -eye], [-eye, -eye]]), b_ub=np.zeros(2 * d),
                                 A_eq=np.hstack([X, np.zeros((n, d))]), b_eq=y,
                                 bounds=[(None, None)] * d + [(0, None)] * d, method="highs")
    assert res.status == 0, res.message
    return res.x[:d]


def test_min_l1():
    ch05.check_min_l1(min_l1_epigraph)
    rejects(ch05.check_min_l1, lambda X, y: np.linalg.pinv(X) @ y, r"\|\|beta\|\|_1 on a")  # the minimum-l2 one
    rejects(ch05.check_min_l1, lambda X, y: min_l1_epigraph(X, 2 * y), "does not interpolate")
    rejects(ch05.check_min_l1, lambda X, y: min_l1_epigraph(X, y)[:, None], "vector of length d = 12")


def support_vectors_by_active_sets(X, y):
    """Hard-margin SVM through the origin in 2-D, exactly: the optimum has one or two active
    constraints z_i . w = 1 (z_i = y_i x_i), so try every single and every pair, keep the
    shortest feasible w, and return the points on its margin."""
    Z = np.asarray(y)[:, None] * np.asarray(X)
    candidates = [z / (z @ z) for z in Z]
    for i, j in itertools.combinations(range(len(Z)), 2):
        candidates.append(np.linalg.solve(Z[[i, j]], np.ones(2)))
    feasible = [w for w in candidates if np.all(Z @ w >= 1 - 1e-12)]
    best = min(feasible, key=np.linalg.norm)
    return np.abs(Z @ best - 1) < 1e-9


def test_support_vectors():
    ch05.check_support_vectors(support_vectors_by_active_sets)
    rejects(ch05.check_support_vectors, lambda X, y: ~support_vectors_by_active_sets(X, y), "a_i = 0")
    rejects(ch05.check_support_vectors, lambda X, y: np.flatnonzero(support_vectors_by_active_sets(X, y)),
            "boolean mask of shape")


def test_continuum_mass():
    def lower_mass(s1, s2):  # Ito: p proportional to 1 / sigma^2 on each half of length pi
        lower, upper = np.pi / s1**2, np.pi / s2**2
        return lower / (lower + upper)

    ch05.check_continuum_mass(lower_mass)
    rejects(ch05.check_continuum_mass, lambda s1, s2: s2 / (s1 + s2), "Fokker-Planck")  # p ~ 1/sigma


def test_gd_bias_order():
    def relative_deviation(X, y, c, *, relative=True):
        beta = np.asarray(implicit_bias.train_diagonal_net(X, y, alpha=0.1, step_scale=c))
        target = np.asarray(implicit_bias.argmin_Q(X, y, alpha=0.1))
        return np.linalg.norm(beta - target) / (np.linalg.norm(target) if relative else 1.0)

    ch05.check_gd_bias_order(relative_deviation)
    rejects(ch05.check_gd_bias_order, lambda X, y, c: relative_deviation(X, y, c, relative=False), "deviation")


b_s, a_s = sp.Symbol("beta", real=True), sp.Symbol("alpha", positive=True)


def q_sym(z):
    return 2 - sp.sqrt(4 + z**2) + z * sp.asinh(z / 2)


def test_uv_potential(capsys):
    # the diagonal network's Q at scale alpha/2, in three equivalent forms
    ch05.check_uv_potential(a_s**2 / 4 * q_sym(4 * b_s / a_s**2), b_s, a_s)
    ch05.check_uv_potential(b_s * sp.asinh(2 * b_s / a_s**2) - sp.sqrt(b_s**2 + a_s**4 / 4), b_s, a_s)
    ch05.check_uv_potential(3 * a_s**2 * q_sym(4 * b_s / a_s**2) + 7, b_s, a_s)  # scale, constant
    assert "alpha/2" in capsys.readouterr().out
    # classic wrong answers: the chapter's Q at scale alpha (copied), the l2 and l1 limits
    message = rejects(ch05.check_uv_potential, a_s**2 * q_sym(b_s / a_s**2), "at beta = 0.7", b_s, a_s)
    assert "0.372" in message and "0.1547" in message and "conserved" in message, message
    rejects(ch05.check_uv_potential, b_s**2 / a_s**2, "your phi'", b_s, a_s)
    rejects(ch05.check_uv_potential, sp.Abs(b_s), "strictly convex", b_s, a_s)
    # malformed answers
    for answer in (None, 0.5, "beta**2", np.zeros(3)):
        rejects(ch05.check_uv_potential, answer, "expected a sympy expression", b_s, a_s)
    rejects(ch05.check_uv_potential, b_s**2 + sp.Symbol("x"), r"symbols \['x'\]", b_s, a_s)
    rejects(ch05.check_uv_potential, b_s**2, "alpha should be the sympy symbol", b_s, "alpha")


# ======================================================================================
# Chapter 6


def breakpoints_by_loop(w, b, v, lo, hi):
    points = [-bj / wj for wj, bj, vj in zip(w, b, v) if wj != 0 and vj != 0 and lo < -bj / wj < hi]
    return sorted(points)


def test_shallow_breakpoints():
    ch06.check_shallow_breakpoints(breakpoints_by_loop)
    every_neuron = lambda w, b, v, lo, hi: breakpoints_by_loop(w, b, np.ones_like(v), lo, hi)  # noqa: E731
    rejects(ch06.check_shallow_breakpoints, every_neuron, "expected 3 breakpoints, got 4.*v_j != 0")
    rejects(ch06.check_shallow_breakpoints, lambda *args: breakpoints_by_loop(*args)[::-1], "return them sorted")


def test_region_recursion():
    table = {}

    def regions_count(n, d):
        if (n, d) not in table:
            table[n, d] = 1 if n == 0 or d == 0 else regions_count(n - 1, d) + regions_count(n - 1, d - 1)
        return table[n, d]

    ch06.check_region_recursion(regions_count)

    def no_cell_in_a_point(n, d):  # the base case r(n, 0) = 0
        if n == 0:
            return 1
        return 0 if d == 0 else no_cell_in_a_point(n - 1, d) + no_cell_in_a_point(n - 1, d - 1)

    rejects(ch06.check_region_recursion, no_cell_in_a_point, r"regions_count\(2, 1\) = 2, expected 3")
    rejects(ch06.check_region_recursion, lambda n, d: float(regions_count(n, d)), "should be an integer, got 1.0")


def zigzag_by_hand(L, *, layers=None):
    """Hidden layers compute relu(u - k/3), k = 0, 1, 2, of u = g applied to the previous layer."""
    layers = L if layers is None else layers
    readout = np.array([3.0, -6.0, 6.0])
    offsets = -np.arange(3) / 3
    params = [{"W": np.ones((1, 3)), "b": offsets}]
    params += [{"W": np.outer(readout, np.ones(3)), "b": offsets} for _ in range(layers - 1)]
    params.append({"W": readout[:, None], "b": np.zeros(1)})
    return nets.mlp((1,) + (3,) * layers + (1,), "relu", parameterization="standard"), params


def test_zigzag_net():
    ch06.check_zigzag_net(zigzag_by_hand)
    rejects(ch06.check_zigzag_net, lambda L: zigzag_by_hand(L, layers=1), "values on \\[0, 1\\] for L = 2")
    rejects(ch06.check_zigzag_net, lambda L: zigzag_by_hand(L)[1], "should return a pair .*got list")

    def transposed(L):
        net, params = zigzag_by_hand(L)
        return net, [{"W": layer["W"].T, "b": layer["b"]} for layer in params]

    rejects(ch06.check_zigzag_net, transposed, r"do not fit the network.*W of shape \(1, 3\)")
    rejects(ch06.check_zigzag_net, lambda L: (nets.mlp((1,) + (3,) * L + (1,), "tanh"), zigzag_by_hand(L)[1]),
            "ReLU mlp")
    rejects(ch06.check_zigzag_net, lambda L: ("net", zigzag_by_hand(L)[1]), "net from nets.mlp, got str")


n_d, R_d, sb_d = sp.symbols("n R sigma_b", positive=True)


def test_lines_in_disk(capsys):
    # the line of neuron j is at distance sigma_b |b| / |w| from 0; |b| / (|w| / sqrt 2) is Student t_2,
    # P(|t_2| < s) = s / sqrt(s^2 + 2) with s = sqrt(2) R / sigma_b: written in two equivalent forms
    ch06.check_lines_in_disk(n_d * R_d / sp.sqrt(R_d**2 + sb_d**2), n_d, R_d, sb_d)
    s = sp.sqrt(2) * R_d / sb_d
    ch06.check_lines_in_disk(n_d * s / sp.sqrt(s**2 + 2), n_d, R_d, sb_d)
    assert capsys.readouterr().out.count("Correct") == 2


def test_lines_in_disk_explains_classic_mistakes():
    one_d = n_d * 2 / sp.pi * sp.atan(sp.sqrt(2) * R_d / sb_d)
    rejects(ch06.check_lines_in_disk, one_d, "one-dimensional answer", n_d, R_d, sb_d)
    rejects(ch06.check_lines_in_disk, n_d * sp.erf(R_d / sb_d), "root-mean-square", n_d, R_d, sb_d)
    rejects(ch06.check_lines_in_disk, R_d / sp.sqrt(R_d**2 + sb_d**2), "multiply by the number", n_d, R_d, sb_d)
    rejects(ch06.check_lines_in_disk, n_d * R_d / sp.sqrt(R_d**2 + 2 * sb_d**2), "instead of 8.32", n_d, R_d, sb_d)


def test_lines_in_disk_rejects_malformed_answers():
    for answer in (None, 0.5, "n*R/sqrt(R**2 + sigma_b**2)", sp.Eq(n_d, R_d)):
        rejects(ch06.check_lines_in_disk, answer, "expected a sympy expression", n_d, R_d, sb_d)
    rejects(ch06.check_lines_in_disk, lambda n, R, s: n, "call it on the symbols", n_d, R_d, sb_d)
    rejects(ch06.check_lines_in_disk, n_d * R_d, "R should be the sympy symbol", n_d, "R", sb_d)
    r = sp.Symbol("r", positive=True)
    rejects(ch06.check_lines_in_disk, n_d * r, r"symbols \['r'\]", n_d, R_d, sb_d)
    R_free = sp.Symbol("R")  # same name, other assumptions
    rejects(ch06.check_lines_in_disk, n_d * R_free, "other assumptions", n_d, R_d, sb_d)
    rejects(ch06.check_lines_in_disk, sp.Integral(r * sp.exp(-r), (r, 0, R_d)), "unevaluated integral",
            n_d, R_d, sb_d)


# ======================================================================================
# Appendix: computing kernels and Hessians fast


def ntk_diagonal_by_gradients(net, params, x):
    """|grad_theta f(x_i)|^2, one per-example gradient at a time (not the per-layer formula)."""
    flat, unravel = ravel_pytree(params)
    grad = jax.jit(jax.grad(lambda v, xi: net.apply(unravel(v), xi[None])[0]))
    return np.array([float(jnp.sum(grad(flat, xi) ** 2)) for xi in x])


def test_ntk_diagonal_check():
    fast.check_ntk_diagonal(ntk_diagonal_by_gradients)

    def without_biases(net, params, x):  # drops the (mu^b_l)^2 |delta^(l)|^2 terms
        zs, hs, _ = net.forward(params, x)
        delta, total = jnp.ones_like(zs[-1]), 0.0  # delta^(L+1) = 1
        for l in range(net.depth + 1, 0, -1):  # layers l = L+1, ..., 1 (Python index l - 1)
            mw, _ = net.multipliers()[l - 1]
            total = total + mw**2 * jnp.sum(hs[l - 1] ** 2, axis=1) * jnp.sum(delta**2, axis=1)
            if l > 1:
                delta = net.activation.grad(zs[l - 2]) * (mw * delta @ params[l - 1]["W"].T)
        return total

    rejects(fast.check_ntk_diagonal, without_biases, "bias term")
    rejects(fast.check_ntk_diagonal, lambda net, p, x: ntk_diagonal_by_gradients(net, p, x)[:-1], "expected shape")


def test_lanczos_estimates_check():
    def by_dense_eigenvalues(alpha, beta):
        estimates = []
        for k in range(1, len(alpha) + 1):
            t = np.diag(alpha[:k]) + np.diag(beta[: k - 1], 1) + np.diag(beta[: k - 1], -1)
            estimates.append(np.max(np.abs(np.linalg.eigvalsh(t))))
        return estimates

    fast.check_lanczos_estimates(by_dense_eigenvalues)
    largest_only = lambda a, b: [np.max(np.linalg.eigvalsh(np.diag(a[:k]) + np.diag(b[: k - 1], 1)  # noqa: E731
                                                            + np.diag(b[: k - 1], -1))) for k in range(1, len(a) + 1)]
    rejects(fast.check_lanczos_estimates, largest_only, "most negative")
    rejects(fast.check_lanczos_estimates, lambda a, b: by_dense_eigenvalues(a, b)[1:], "one estimate per step")


a_p, b_p, r_p = sp.symbols("a b r", real=True)
C_POWER = b_p**2 * (1 - r_p**2) / (2 * a_p**2 * r_p**2)


def test_power_error_constant_accepts_the_constant(capsys):
    # derived the way a learner would: first order in t = (b/a)^2 r^(2k-2), then t -> C r^(2k)
    t = sp.Symbol("t", positive=True)
    leading = sp.series(1 - sp.sqrt((1 + t * r_p**2) / (1 + t)), t, 0, 2).removeO()
    fast.check_power_error_constant(leading.subs(t, (b_p / a_p) ** 2 / r_p**2), a_p, b_p, r_p)
    fast.check_power_error_constant(sp.expand(C_POWER), a_p, b_p, r_p)  # any equivalent form
    assert capsys.readouterr().out.count("Correct") == 2


def test_power_error_constant_explains_classic_mistakes():
    rejects(fast.check_power_error_constant, 2 * C_POWER, "square root halves", a_p, b_p, r_p)
    rejects(fast.check_power_error_constant, C_POWER * r_p**2, "factor r\\^2", a_p, b_p, r_p)
    rejects(fast.check_power_error_constant, C_POWER / (1 - r_p**2), "factor 1 - r\\^2", a_p, b_p, r_p)
    message = rejects(fast.check_power_error_constant, C_POWER + 1, "differs", a_p, b_p, r_p)
    assert "0.0574691" in message, message  # the value of e_k / r^(2k) it should have matched
    k = sp.Symbol("k", positive=True)
    rejects(fast.check_power_error_constant, C_POWER * r_p ** (2 * k), "must not depend on k", a_p, b_p, r_p)


def test_power_error_constant_rejects_malformed_answers():
    for answer in (None, 0.0574, "b**2*(1 - r**2)/(2*a**2*r**2)"):
        rejects(fast.check_power_error_constant, answer, "expected a sympy expression", a_p, b_p, r_p)
    rejects(fast.check_power_error_constant, C_POWER, "r should be the sympy symbol", a_p, b_p, "r")
    t = sp.Symbol("t", positive=True)
    rejects(fast.check_power_error_constant, C_POWER + sp.O(t), "removeO", a_p, b_p, r_p)
    rejects(fast.check_power_error_constant, C_POWER.subs(b_p, sp.Symbol("b", positive=True)),
            "other assumptions", a_p, b_p, r_p)


# ======================================================================================
# Malformed answers to every check that takes a function


FUNCTION_CHECKS = {
    ch01.check_sign_dual: "sign_dual",
    ch01.check_tanh_variances: "tanh_variances",
    ch01.check_depth_scale: "depth_scale",
    ch02.check_sine_ntk: "sine_ntk",
    ch02.check_gradient_flow: "flow_predictor",
    ch02.check_flip_probability: "flip_probability",
    ch02.check_kernel_ridge: "krr_predict",
    ch02.check_readout_ensemble: "readout_ensemble_covariance",
    ch03.check_hessian_spectrum: "hessian_spectrum",
    ch03.check_norm_221: "norm_221",
    ch03.check_relu_hessian_norm: "relu_hessian_norm",
    ch04.check_linear_kernel_shift: "kernel_shift",
    ch04.check_flow_kernel: "final_kernel",
    ch04.check_quadratic_model: "make_quadratic",
    ch04.check_least_squares_correction: "theta_i_least_squares",
    ch05.check_min_l1: "min_l1",
    ch05.check_support_vectors: "support_vectors",
    ch05.check_continuum_mass: "lower_mass",
    ch05.check_gd_bias_order: "deviation",
    ch05.check_flattest_interpolant: "flattest_interpolant",
    ch06.check_shallow_breakpoints: "shallow_breakpoints",
    ch06.check_region_recursion: "regions_count",
    ch06.check_zigzag_net: "zigzag_net",
    ch06.check_pieces_needed: "pieces_needed",
    fast.check_ntk_diagonal: "ntk_diagonal",
    fast.check_lanczos_estimates: "lanczos_estimates",
}
VALUE_CHECKS = {ch01.check_erf_critical_point, ch03.check_chizat_bach_slope,
                ch05.check_uv_potential}

VALUE_CHECKS |= {ch01.check_leaky_relu_variance_map, ch01.check_linear_kurtosis}  # Chapter 1's derivations
VALUE_CHECKS |= {fast.check_power_error_constant}  # the appendix's derivation exercise
VALUE_CHECKS |= {ch06.check_lines_in_disk}  # Chapter 6's derivation exercise
VALUE_CHECKS |= {ch03.check_bottleneck_bound}  # Chapter 3's derivation exercise


def test_every_check_is_covered():
    modules = (ch01, ch02, ch03, ch04, ch05, ch06, fast)
    checks = {getattr(m, name) for m in modules for name in dir(m) if name.startswith("check_")}
    covered = set(FUNCTION_CHECKS) | VALUE_CHECKS
    assert len(checks) == 34 and checks == covered, checks ^ covered


def stub(*args):
    raise NotImplementedError("Exercise: write your solution in this cell")


def returns_none(*args):
    return None


def student_bug(*args):
    return np.zeros(3) @ np.zeros(4)  # a shape error inside the learner's own code


_checks = pytest.mark.parametrize("check", list(FUNCTION_CHECKS), ids=lambda c: f"{c.__module__[-4:]}.{c.__name__}")


@_checks
def test_not_a_function(check):
    rejects(check, None, f"{FUNCTION_CHECKS[check]} should be a function, got None")
    rejects(check, 3.0, f"{FUNCTION_CHECKS[check]} should be a function, got float 3.0")


@_checks
def test_stub_left_in_place(check):
    message = rejects(check, stub, "is not implemented yet")
    assert FUNCTION_CHECKS[check] in message and "raise NotImplementedError" in message, message


@_checks
def test_function_returning_none(check):
    message = rejects(check, returns_none, "None")
    assert FUNCTION_CHECKS[check] in message, message


@_checks
def test_error_in_the_learners_code(check):
    with pytest.raises(ExerciseCheckError, match="raised ValueError: matmul") as failure:
        check(student_bug)
    assert FUNCTION_CHECKS[check] in str(failure.value)
    assert isinstance(failure.value.__cause__, ValueError)  # the learner's traceback is kept


def test_a_constant_answer_never_passes():
    for check in FUNCTION_CHECKS:
        with pytest.raises(ExerciseCheckError):
            check(lambda *args: 1.0)



def test_pieces_needed():
    import math as _math

    def right(L, eps):
        return max(1, _math.floor(2 ** (L - 1) * (1 - 8 * eps) - 1) + 1)

    ch06.check_pieces_needed(right)
    rejects(ch06.check_pieces_needed, lambda L, eps: max(1, _math.floor(2**L * (1 - 8 * eps) - 1) + 1),
            "twice the answer's leading term")
    rejects(ch06.check_pieces_needed, lambda L, eps: max(1, _math.ceil(2 ** (L - 1) * (1 - 8 * eps) - 1)),
            "strictly below it")
    rejects(ch06.check_pieces_needed, lambda L, eps: max(1, _math.floor(2 ** (L - 1) * (1 - 8 * eps)) + 1),
            "dropped the -1")
    rejects(ch06.check_pieces_needed, lambda L, eps: float(right(L, eps)), "should be an integer")


def test_flattest_interpolant():
    from lecturekit import implicit_bias

    def weighted(X, y):
        return np.asarray(implicit_bias.min_l1_interpolant(X, y, weights=np.sum(X**2, 0)))

    ch05.check_flattest_interpolant(weighted)
    rejects(ch05.check_flattest_interpolant,
            lambda X, y: np.asarray(implicit_bias.min_l1_interpolant(X, y)), "unweighted")
    rejects(ch05.check_flattest_interpolant,
            lambda X, y: np.asarray(implicit_bias.min_l1_interpolant(X, y,
                                                                      weights=np.sum(X**2, 0) ** 2)),
            "sum_j c_j")
    rejects(ch05.check_flattest_interpolant, lambda X, y: np.zeros(X.shape[1]), "interpolate")
