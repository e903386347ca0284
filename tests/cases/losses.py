"""Validation cases of lecturekit.losses (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

from lecturekit import losses  # noqa: E402


def _outputs() -> np.ndarray:
    return np.arange(6.0).reshape(3, 2)


CASES = [
    case("losses.square_loss", losses.square_loss, lambda: dict(outputs=_outputs(), targets=_outputs()[::-1]),
         outputs=Arr(min_ndim=1, fixed=(0, 1), finite=False), targets=Arr(min_ndim=1, fixed=(0, 1), finite=False)),
    case("losses.cross_entropy", losses.cross_entropy,
         lambda: dict(logits=_outputs(), onehot=np.eye(2)[[0, 1, 0]]),
         logits=Arr(ndim=2, fixed=(0, 1), finite=False), onehot=Arr(ndim=2, fixed=(0, 1), finite=False)),
    case("losses.per_example", losses.per_example,
         lambda: dict(outputs=_outputs(), targets=np.eye(2)[[0, 1, 0]], loss="cross_entropy"),
         outputs=Arr(ndim=2, fixed=(0, 1), finite=False), targets=Arr(ndim=2, fixed=(0, 1), finite=False),
         loss=Choice()),
    case("losses.margin_loss", losses.margin_loss, lambda: dict(name="logistic"), name=Choice()),
]
