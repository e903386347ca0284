"""Validation cases of lecturekit.shallow (assembled by tests/validation_cases.py)."""

from lecturekit import shallow
from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

PACK = shallow.shallow((2, 3))


def _pack_params() -> dict[str, np.ndarray]:
    return dict(zip("wbv", np.random.default_rng(6).standard_normal((3, PACK.units))))


CASES = [
    case("shallow.shallow", shallow.shallow,
         lambda: dict(widths=(2, 3), activation=("relu", "tanh"), scale=2.0, readout=(True, False)),
         widths=Custom((((), VALUE_ERR), ((2, 0), VALUE_ERR), ((2.5,), TYPE_ERR), (None, TYPE_ERR), ("ab", TYPE_ERR),
                        (3, TYPE_ERR))),
         activation=Custom((("no-such-activation", VALUE_ERR), (("relu",), VALUE_ERR), (("relu", 3), TYPE_ERR),
                            (3, TYPE_ERR), (None, TYPE_ERR))),
         scale=POS, readout=Custom((((True,), VALUE_ERR), ("yes", TYPE_ERR), (None, TYPE_ERR), (1.5, TYPE_ERR)))),
    case("shallow.shallow_kernel_change", shallow.shallow_kernel_change,
         lambda: dict(sh=PACK, params=_pack_params(), x=np.array([[-1.0], [0.0], [0.5]]),
                      y=np.array([0.5, -0.2, 0.3]), lr=0.1, steps=3),
         sh=Custom((("sh", TYPE_ERR), (None, TYPE_ERR), (NET, TYPE_ERR))), params=Params(structured=True),
         x=Arr(ndim=2, fixed=(0, 1)), y=Arr(ndim=1, fixed=(0,)), lr=POS, steps=Int(1)),
]
