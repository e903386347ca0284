"""Three identical calls of a public training or measurement function compile once.

Compilations are counted with ``jax.monitoring`` (the backend-compile event); each test
measures the growth of the count over three calls with the same arguments (the worker
may have compiled other programs before). Shapes are tiny: the cost is the compilation.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

from lecturekit import catapult, datasets, nets, path_counting, shallow, training
from lecturekit import feature_learning as fl
from lecturekit import kernel_change as kc
from lecturekit.implicit_bias import margin

_COMPILES = [0]


def _listen(event: str, duration: float, **kwargs) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _COMPILES[0] += 1


monitoring.register_event_duration_secs_listener(_listen)

X = jnp.eye(3)[:, :2] + 0.1
Y = jnp.array([1.0, -1.0, 0.5])
NET = nets.mlp((2, 8, 1), "tanh")
P = NET.init(jax.random.key(0))
LOSS = training.mse_loss(NET.apply, X, Y)
KEY = jax.random.key(1)
LRS = jnp.array([0.1, 0.2])
CLOUDS = (
    jnp.array([[1.0, 2.0], [-1.0, -1.5], [2.0, 0.5], [-0.5, -2.0]]),
    jnp.array([1.0, -1.0, 1.0, -1.0]),
)
RELU = path_counting.relu_network(2, (8, 8))
PACK = shallow.shallow([8, 8], readout=[True, False])
XS = jnp.linspace(-1.0, 1.0, 6)[:, None]
CLASSES = datasets.synthetic_classes(jax.random.key(0), 6, 4, 2)
NET2 = nets.mlp((4, 8, 2), "tanh", w_std=1.0)
CONFIGS = [dict(train_head="linear", loss="cross_entropy", kernel_heads=("softmax",))]

def OBSERVERS():
    """Every observer, built anew (fresh arrays): their data is traced, not static."""
    return {
        "kernel": training.KernelObserver(NET.apply, X + 0.0),
        "diagonal": training.KernelObserver(NET.apply, X[:1] + 0.0, diagonal=True),
        "sharpness": training.SharpnessObserver(NET.apply, X, Y + 0.0, KEY, 3),
        "outputs": training.OutputObserver(NET.apply, X + 0.0),
        "params": training.ParamsObserver(),
        "ntk": training.ntk_observer(NET.apply, X + 0.0),
    }


CALLS = {
    "training.gradient_descent": lambda: training.gradient_descent(
        NET.apply, P, 0.1, 5, x=X, y=Y
    ),
    "training.gradient_descent(loss)": lambda: training.gradient_descent(
        LOSS, P, 0.1, 5
    ),
    "training.gradient_descent(observers)": lambda: training.gradient_descent(
        NET.apply, P, 0.1, 4, x=X, y=Y, every=2, observe=OBSERVERS()
    ),
    "training.noisy_descend": lambda: training.noisy_descend(
        LOSS, P, lr=0.1, steps=5, noise=0.1, key=KEY
    ),
    "feature_learning.feature_movement": lambda: fl.feature_movement(
        NET, P, X, Y, lr=0.1, steps=5
    ),
    "feature_learning.lr_sweep": lambda: fl.lr_sweep(
        NET, X, Y, LRS, key=KEY, seeds=2, steps=5
    ),
    "catapult.gd_one_point": lambda: catapult.gd_one_point(NET.apply, P, X, Y, 0.1, 5),
    "catapult.gd_sweep": lambda: catapult.gd_sweep(NET.apply, P, X, Y, LRS, 5),
    "catapult.gd_with_sharpness": lambda: catapult.gd_with_sharpness(
        NET.apply, P, X, Y, 0.1, 4, every=2, key=KEY, lanczos_steps=3
    ),
    "catapult.catapult_recursion": lambda: catapult.catapult_recursion(
        1.0, 2.0, 1.0, 0.5, 0.3, 5
    ),
    "margin.train_linear_classifier": lambda: margin.train_linear_classifier(
        *CLOUDS, np.array([1, 10])
    ),
    "path_counting.trained_kernel_change": lambda: path_counting.trained_kernel_change(
        RELU, RELU.init_many(KEY, 2), np.eye(2), np.array([1.0, -1.0]), lr=0.2, steps=5
    ),
    "shallow.shallow_kernel_change": lambda: shallow.shallow_kernel_change(
        PACK, PACK.init(KEY), XS, jnp.sin(3 * XS[:, 0]), 0.2, 5
    ),
    "kernel_change.relu_kernel_split": lambda: kc.relu_kernel_split(
        16, KEY, np.eye(2), np.array([0.5, -0.5]), steps=5
    ),
    "kernel_change.first_units_width_sweep": lambda: kc.first_units_width_sweep(
        np.linspace(-1, 1, 4), np.sin(np.linspace(-1, 1, 4)), np.zeros(1), (8, 16),
        KEY, max_width=16, steps=5,
    ),
    "kernel_change.kernel_change_runs": lambda: kc.kernel_change_runs(
        NET2, jax.random.split(KEY, 2), *CLASSES, CONFIGS, lr=1.0, steps=4, every=2
    ),
}


def _compiles(call) -> list[int]:
    counts = []
    for _ in range(3):
        before = _COMPILES[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jax.block_until_ready(jax.tree_util.tree_leaves(call()))
        counts.append(_COMPILES[0] - before)
    return counts


@pytest.mark.parametrize("name", sorted(CALLS))
def test_three_identical_calls_compile_once(name):
    counts = _compiles(CALLS[name])
    assert counts[1:] == [0, 0], f"{name} compiled {counts} times in three calls"


def test_observers_are_traced_data():
    """New data of the same shapes in the observers, and a new lr, compile nothing."""
    run = lambda i: training.gradient_descent(  # noqa: E731
        NET.apply, P, 0.1 * (i + 1), 4, x=X, y=Y, every=2,
        observe=(training.KernelObserver(NET.apply, X + i),
                 training.SharpnessObserver(NET.apply, X, Y, jax.random.key(i), 3)),
    )
    counts = []
    for i in range(3):
        before = _COMPILES[0]
        jax.block_until_ready(jax.tree_util.tree_leaves(run(i)))
        counts.append(_COMPILES[0] - before)
    assert counts[1:] == [0, 0], counts
    kernels, sharpness = run(1).observed
    assert kernels.shape == (3, 3, 3) and sharpness.shape == (3,)
    assert np.allclose(kernels[0], training.ntk_observer(NET.apply, X + 1)(P))
