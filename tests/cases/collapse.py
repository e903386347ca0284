"""Validation cases of lecturekit.collapse (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import collapse  # noqa: E402


def features():
    return np.random.default_rng(6).standard_normal((6, 4))


LABELS = Custom((("abc", TYPE_ERR), (None, TYPE_ERR), (np.zeros(6), VALUE_ERR), (np.array([0, 1, 2]), VALUE_ERR), (np.zeros(6, dtype=int), VALUE_ERR),
                 (np.array([0, 1, 3, 0, 1, 3]), VALUE_ERR), (np.array([[0, 1, 2, 0, 1, 2]]), VALUE_ERR)))

CASES = [
    case("collapse.class_means", collapse.class_means,
         lambda: dict(features=features(), labels=np.array([0, 1, 2, 0, 1, 2])),
         features=Arr(ndim=2, nonempty=True), labels=LABELS),
    case("collapse.simplex_etf", collapse.simplex_etf, lambda: dict(num_classes=3), num_classes=Int(2)),
    case("collapse.collapse_metrics", collapse.collapse_metrics,
         lambda: dict(features=features(), labels=np.array([0, 1, 2, 0, 1, 2]),
                      weight=np.random.default_rng(7).standard_normal((4, 3)), bias=np.zeros(3)),
         features=Arr(ndim=2, nonempty=True), labels=LABELS, weight=Arr(ndim=2, fixed=(0, 1)),
         bias=Arr(ndim=1, fixed=(0,))),
]
