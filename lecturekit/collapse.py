"""Neural collapse (Papyan, Han and Donoho): the four NC measurements of last-layer
features.

Convention: features h_i in R^m (the input of the readout layer) of n training examples
with labels y_i in {0..C-1}, a linear classifier f(h) = h W + b with W of shape (m, C)
and b of shape (C,) (``nets.mlp``'s readout layer, ``params[-1]["W"]`` and ``["b"]``,
times its forward multipliers). With class means mu_c, the global mean mu_G = mean of
the mu_c (classes weighted equally) and the centred means M_c = mu_c - mu_G:

* NC1 = tr(Sigma_W Sigma_B^+) / C, Sigma_W = within-class covariance (over all
  examples), Sigma_B = (1/C) sum_c M_c M_c^T; Sigma_B has rank <= C - 1 (sum_c M_c = 0),
  and its pseudo-inverse is taken on its top C - 1 eigenpairs, in float64 (a pinv with a
  default cutoff in float32 inverts rounding noise);
* NC2: the cosines cos(M_c, M_c') for c != c' (a simplex equiangular tight frame has all
  of them equal to -1/(C - 1)) and the coefficient of variation std/mean of the norms
  ||M_c||;
* NC3 = || W^T/||W||_F - M/||M||_F ||_F (M: the C x m matrix of centred means);
* NC4 = the fraction of examples whose classifier decision argmax_c f(h_i)_c differs
  from the nearest class mean argmin_c ||h_i - mu_c||.

All are computed on the host in float64.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._validation import as_class_labels, as_host_float_array, check_positive_int

__all__ = ["CollapseMetrics", "collapse_metrics", "class_means", "simplex_etf"]


class CollapseMetrics(NamedTuple):
    """Output of :func:`collapse_metrics` (Python floats).

    Attributes:
        nc1: tr(Sigma_W Sigma_B^+) / C.
        cos_mean: mean of the C (C - 1) / 2 pairwise cosines of the centred means.
        cos_std: their standard deviation.
        norm_cv: std / mean of the norms of the centred means.
        nc3: distance between the normalized classifier and normalized centred means.
        nc4: fraction of examples where the classifier and the nearest mean disagree.

    Example:
        >>> from lecturekit import collapse
        >>> m = collapse.CollapseMetrics(0.1, -0.33, 0.01, 0.02, 0.2, 0.0)
        >>> m.cos_mean, m.nc4
        (-0.33, 0.0)
    """

    nc1: float
    cos_mean: float
    cos_std: float
    norm_cv: float
    nc3: float
    nc4: float


def _check(features, labels):
    h = as_host_float_array(features, name="features", ndim=2, nonempty=True)
    y, c = as_class_labels(labels, n=h.shape[0])
    return h, y, c


def class_means(features: Any, labels: Any) -> np.ndarray:
    """The class means mu_c of the features, shape (C, m), C = max label + 1.

    Args:
        features: shape (n, m).
        labels: integers 0..C-1, shape (n,), every class present.

    Returns:
        float64 array (C, m).

    Example:
        >>> import numpy as np
        >>> from lecturekit import collapse
        >>> collapse.class_means(np.array([[0.0], [2.0], [5.0]]),
        ...                      np.array([0, 0, 1])).tolist()
        [[1.0], [5.0]]
    """
    h, y, c = _check(features, labels)
    return np.stack([h[y == k].mean(axis=0) for k in range(c)])


def simplex_etf(num_classes: int) -> np.ndarray:
    """The Gram matrix of a simplex ETF with unit vectors: (C I - 1 1^T) / (C - 1).

    Args:
        num_classes: C >= 2.

    Returns:
        float64 array (C, C): ones on the diagonal, -1/(C - 1) elsewhere.

    Example:
        >>> from lecturekit import collapse
        >>> collapse.simplex_etf(3).round(3).tolist()[0]
        [1.0, -0.5, -0.5]
    """
    c = check_positive_int(num_classes, name="num_classes", minimum=2)
    return (c * np.eye(c) - np.ones((c, c))) / (c - 1)


def collapse_metrics(
    features: Any, labels: Any, weight: Any, bias: Any
) -> CollapseMetrics:
    """NC1-NC4 of last-layer features and a linear classifier (module docstring).

    Args:
        features: h, shape (n, m).
        labels: integers 0..C-1, shape (n,), every class present.
        weight: W, shape (m, C): the classifier is h W + b.
        bias: b, shape (C,).

    Returns:
        :class:`CollapseMetrics`.

    Example:
        >>> import numpy as np
        >>> from lecturekit import collapse
        >>> etf = np.array([[1.0, 0.0], [-0.5, 0.866], [-0.5, -0.866]])
        >>> h = np.repeat(etf, 2, axis=0) + 0.01 * np.array([[1, 0], [-1, 0]] * 3)
        >>> m = collapse.collapse_metrics(h, np.repeat([0, 1, 2], 2), etf.T,
        ...                               np.zeros(3))
        >>> round(m.cos_mean, 3), m.nc4, bool(m.nc1 < 1e-3), bool(m.nc3 < 1e-3)
        (-0.5, 0.0, True, True)
    """
    h, y, c = _check(features, labels)
    w = as_host_float_array(weight, name="weight", ndim=2)
    b = as_host_float_array(bias, name="bias", ndim=1)
    if w.shape != (h.shape[1], c) or b.shape != (c,):
        raise ValueError(
            f"weight must have shape {(h.shape[1], c)} and bias {(c,)}, got {w.shape} "
            f"and {b.shape}"
        )
    mu = np.stack([h[y == k].mean(axis=0) for k in range(c)])
    m = mu - mu.mean(axis=0)
    sigma_w = (h - mu[y]).T @ (h - mu[y]) / h.shape[0]
    sigma_b = m.T @ m / c
    vals, vecs = np.linalg.eigh(sigma_b)
    top_vals, top_vecs = vals[-(c - 1) :], vecs[:, -(c - 1) :]
    if top_vals[0] <= 1e-12 * max(top_vals[-1], 1e-300):
        raise ValueError(
            "the class means span fewer than C - 1 directions: NC1 is undefined"
        )
    pinv = (top_vecs / top_vals) @ top_vecs.T
    nc1 = float(np.trace(sigma_w @ pinv) / c)
    norms = np.linalg.norm(m, axis=1)
    cos = (m @ m.T) / np.outer(norms, norms)
    off = cos[~np.eye(c, dtype=bool)]
    nc3 = float(np.linalg.norm(w.T / np.linalg.norm(w) - m / np.linalg.norm(m)))
    decision = np.argmax(h @ w + b, axis=1)
    nearest = np.argmin(((h[:, None, :] - mu[None]) ** 2).sum(-1), axis=1)
    return CollapseMetrics(
        nc1,
        float(off.mean()),
        float(off.std()),
        float(norms.std() / norms.mean()),
        nc3,
        float(np.mean(decision != nearest)),
    )
