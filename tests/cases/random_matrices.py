"""Validation cases of lecturekit.random_matrices (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import random_matrices  # noqa: E402

ALPHA = Custom(((0.0, VALUE_ERR), (1.0, VALUE_ERR), (-0.5, VALUE_ERR), (np.nan, VALUE_ERR), ("a", TYPE_ERR),
                (None, TYPE_ERR)))
WIDTHS = Custom((("abc", TYPE_ERR), (3, TYPE_ERR), (None, TYPE_ERR), ((), VALUE_ERR), ((2, 0), VALUE_ERR),
                 ((2, 3.5), TYPE_ERR)))

CASES = [
    case("random_matrices.marchenko_pastur_edges", random_matrices.marchenko_pastur_edges,
         lambda: dict(alpha=0.5), alpha=ALPHA),
    case("random_matrices.marchenko_pastur_density", random_matrices.marchenko_pastur_density,
         lambda: dict(x=np.array([0.5, 1.0, 2.0]), alpha=0.5), x=Arr(), alpha=ALPHA),
    case("random_matrices.covariance_spectrum", random_matrices.covariance_spectrum,
         lambda: dict(key=KEY, P=3, n0=5), key=Key(), P=Int(1), n0=Int(1)),
    case("random_matrices.product_vectors", random_matrices.product_vectors,
         lambda: dict(key=KEY, widths=(3, 2), count=4), key=Key(), widths=WIDTHS, count=Int(1)),
    case("random_matrices.chi2_product", random_matrices.chi2_product,
         lambda: dict(key=KEY, widths=(3, 2), count=4), key=Key(), widths=WIDTHS, count=Int(1)),
    case("random_matrices.log_norm_moments", random_matrices.log_norm_moments,
         lambda: dict(widths=(3, 2)), widths=WIDTHS),
    case("random_matrices.log_norm_path", random_matrices.log_norm_path,
         lambda: dict(key=KEY, n=3, depth=4, count=5), key=Key(), n=Int(1), depth=Int(1), count=Int(1)),
    case("random_matrices.lyapunov_exponent", random_matrices.lyapunov_exponent, lambda: dict(n=3), n=Int(1)),
]
