"""lecturekit: the small JAX library behind the executable course on wide neural networks.

Modules (one idea each): ``activations``, ``nets``, ``kernels``, ``tangent``,
``criticality``, ``stats``, ``symbolic``, ``plotting``, ``exercises`` and ``notebook``
(the first-cell setup of every chapter). Importing lecturekit changes no global
configuration: chapters call ``lecturekit.notebook.setup()`` to enable float64.
"""

__version__ = "0.1.0"
