"""Tests of lecturekit.datasets."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import datasets

jax.config.update("jax_enable_x64", True)


def test_synthetic_classes_shapes_norms_and_balance():
    x, y = datasets.synthetic_classes(jax.random.key(0), 9, 4, 3)
    assert x.shape == (9, 4) and y.shape == (9, 3)
    np.testing.assert_allclose(jnp.sum(x**2, axis=1), 4.0)
    np.testing.assert_array_equal(np.asarray(y).sum(axis=0), [3, 3, 3])
    again, _ = datasets.synthetic_classes(jax.random.key(0), 9, 4, 3)
    np.testing.assert_array_equal(x, again)
    with pytest.raises(ValueError, match="classes"):
        datasets.synthetic_classes(jax.random.key(0), 9, 4, 1)
