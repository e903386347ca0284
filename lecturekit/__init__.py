"""lecturekit: the small JAX library behind the executable course on wide neural networks.

Modules (one idea each): ``activations``, ``nets``, ``kernels``, ``tangent``,
``criticality``, ``stats``, ``symbolic``, ``plotting``, ``exercises`` and ``notebook``
(the first-cell setup of every chapter). Importing lecturekit changes no global
configuration: chapters call ``lecturekit.notebook.setup()`` to enable float64.

Bad arguments raise ``ValueError``/``TypeError`` naming the argument; a result that may be
inaccurate (an iteration stopped at its limit, a tolerance below the working precision)
comes with a :class:`NumericalWarning`.
"""

from ._validation import NumericalWarning

__all__ = ["NumericalWarning"]

__version__ = "0.1.0"
