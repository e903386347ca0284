"""lecturekit.losses: the normalizations, the per-example form and the margin losses."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import losses, training


def test_square_loss_is_half_the_mean_squared_error_per_example():
    f, y = jnp.array([[1.0, 2.0], [3.0, 0.0]]), jnp.zeros((2, 2))
    assert float(losses.square_loss(f, y)) == pytest.approx((5.0 + 9.0) / 4)
    per = losses.per_example(f, y, loss="square")
    assert float(jnp.mean(per)) == pytest.approx(float(losses.square_loss(f, y)))


def test_cross_entropy_matches_its_per_example_form_and_the_binary_logit():
    logits = jnp.array([[2.0, -1.0, 0.5], [0.0, 1.0, 3.0]])
    onehot = jnp.eye(3)[jnp.array([0, 2])]
    per = losses.per_example(logits, onehot, loss="cross_entropy")
    assert float(jnp.mean(per)) == pytest.approx(float(losses.cross_entropy(logits, onehot)))
    # a binary logit z is the two-class softmax of (0, z)
    z, t = jnp.array([[0.7], [-1.2]]), jnp.array([[1.0], [0.0]])
    two = jnp.concatenate([jnp.zeros_like(z), z], axis=1)
    onehot2 = jnp.concatenate([1 - t, t], axis=1)
    np.testing.assert_allclose(losses.per_example(z, t, loss="cross_entropy"),
                               losses.per_example(two, onehot2, loss="cross_entropy"), rtol=1e-6)


def test_margin_losses_have_the_exponential_tail_and_are_traceable():
    u = jnp.array([-2.0, 0.0, 3.0, 30.0])
    np.testing.assert_allclose(losses.margin_loss("exp")(u), jnp.exp(-u), rtol=1e-6)
    logistic = jax.jit(losses.margin_loss("logistic"))(u)
    np.testing.assert_allclose(logistic, jnp.log1p(jnp.exp(-u)), rtol=1e-6)
    assert float(logistic[-1] / jnp.exp(-u[-1])) == pytest.approx(1.0, rel=1e-6)


def test_training_reexports_the_losses():
    assert training.square_loss is losses.square_loss
    assert training.cross_entropy is losses.cross_entropy


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="loss"):
        losses.per_example(jnp.zeros((2, 1)), jnp.zeros((2, 1)), loss="hinge")
    with pytest.raises(ValueError, match="name"):
        losses.margin_loss("hinge")
    with pytest.raises(ValueError, match="outputs and targets"):
        losses.square_loss(jnp.zeros(2), jnp.zeros(3))
