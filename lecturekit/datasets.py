"""Small synthetic data sets for the experiments of the book.

Conventions. Inputs are rows of an array x of shape (n, d) normalized like the input
kernel of :func:`lecturekit.nets.mlp`, x.x / d = 1 (points on the sphere of radius
sqrt(d)); class labels are one-hot rows of shape (n, classes).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import sampling as _sampling
from ._validation import check_key, check_positive_int, check_real

__all__ = ["synthetic_classes"]


def synthetic_classes(
    key: jax.Array, n: int, d: int, classes: int, *, noise: float = 0.5
) -> tuple[jax.Array, jax.Array]:
    """n points in R^d from ``classes`` Gaussian clusters, on the sphere of radius
    sqrt(d).

    Labels are balanced (i mod classes); x = normalize(mu_y + noise * xi) * sqrt(d) with
    class means mu_c uniform on the unit sphere and xi ~ N(0, I/d), so x.x/d = 1. The
    normal draws come from :func:`lecturekit.sampling.standard_normal`.

    Args:
        key: a JAX PRNG key.
        n: number of points.
        d: input dimension.
        classes: number of classes (>= 2).
        noise: spread of each cluster around its mean (>= 0).

    Returns:
        (x, onehot): x of shape (n, d), one-hot labels of shape (n, classes).

    Example:
        >>> from lecturekit import datasets
        >>> x, y = datasets.synthetic_classes(jax.random.key(0), 6, 4, 3)
        >>> x.shape, y.shape, bool(jnp.allclose(jnp.sum(x**2, axis=1), 4.0))
        ((6, 4), (6, 3), True)
    """
    check_key(key)
    n = check_positive_int(n, name="n")
    d = check_positive_int(d, name="d")
    classes = check_positive_int(classes, name="classes", minimum=2)
    noise = check_real(noise, name="noise", nonnegative=True)
    k_mu, k_xi = jax.random.split(key)
    mu = _sampling.standard_normal(k_mu, (classes, d))
    mu = mu / jnp.linalg.norm(mu, axis=1, keepdims=True)
    labels = jnp.arange(n) % classes
    x = mu[labels] + noise * _sampling.standard_normal(k_xi, (n, d)) / jnp.sqrt(d)
    x = x / jnp.linalg.norm(x, axis=1, keepdims=True) * jnp.sqrt(d)
    return x, jax.nn.one_hot(labels, classes)
