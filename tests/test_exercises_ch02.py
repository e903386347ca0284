"""The chapter-2 exercise checks accept right answers and reject typical wrong ones."""

import numpy as np
import pytest

from lecturekit.exercises import ExerciseCheckError, ch02


def test_sine_ntk_check():
    assert ch02.check_sine_ntk(lambda xi: np.exp(-1) * (np.sinh(xi) + xi * np.cosh(xi)))
    with pytest.raises(ExerciseCheckError, match="sine NTK"):
        ch02.check_sine_ntk(lambda xi: np.exp(-1) * np.sinh(xi))          # NNGP only
    with pytest.raises(ExerciseCheckError, match="not implemented"):
        ch02.check_sine_ntk(lambda xi: (_ for _ in ()).throw(NotImplementedError()))


def _flow(K, k_test, y, f0s, f0t, t, scale):
    mu, U = np.linalg.eigh(K)
    return f0t + k_test @ (U @ (-np.expm1(-t * mu / scale) / mu * (U.T @ (y - f0s))))


def test_gradient_flow_check():
    assert ch02.check_gradient_flow(lambda K, kt, y, a, b, t: _flow(K, kt, y, a, b, t, K.shape[0]))
    with pytest.raises(ExerciseCheckError, match="exp\\(-t K\\)"):
        ch02.check_gradient_flow(lambda K, kt, y, a, b, t: _flow(K, kt, y, a, b, t, 1.0))


def test_width_check():
    assert ch02.check_width_requirement(lambda n, L0, l0: 512 * n**4 * L0 / l0**4)
    with pytest.raises(ExerciseCheckError, match="notes"):
        ch02.check_width_requirement(lambda n, L0, l0: 16 * n**2 * L0 / l0**2)


def test_kernel_ridge_check():
    assert ch02.check_kernel_ridge(lambda K, kt, y, r: kt @ np.linalg.solve(K + r * np.eye(len(y)), y))
    with pytest.raises(ExerciseCheckError, match="ridge"):
        ch02.check_kernel_ridge(lambda K, kt, y, r: kt @ np.linalg.solve(K + 2 * r * np.eye(len(y)), y))
    with pytest.raises(ExerciseCheckError):
        ch02.check_kernel_ridge("not a function")
