r"""lecturekit: the small JAX library behind the executable course on wide neural networks.

Each module holds one idea, and every chapter calls the same engine for it: one sampler
(:mod:`lecturekit.sampling`), one network description (:mod:`lecturekit.nets`), one
gradient-descent loop (:mod:`lecturekit.training`), one Lanczos (:mod:`lecturekit.hessian`),
one quadrature rule for Gaussian expectations (:mod:`lecturekit.gaussian`). This reference
is generated from the docstrings of the package (``scripts/api_reference.py``): one page
per module, listing the names of its ``__all__``.

**Parameterization.** Networks follow the neural-tangents conventions, so that results can
be compared with that library. In the NTK parameterization a dense layer of fan-in
:math:`n` maps :math:`h` to :math:`z = \frac{\sigma_w}{\sqrt{n}} W h + \sigma_b b` with the
entries of :math:`W, b` drawn :math:`N(0, 1)` (``w_std`` is :math:`\sigma_w`, ``b_std`` is
:math:`\sigma_b`); in the standard parameterization the same scales sit in the
initialization instead. The input covariance is normalized by the input dimension
:math:`d`: :math:`K^{(0)}(x, x') = x \cdot x' / d`. Each function states the
parameterization, normalization and shapes it uses.

**Precision.** Importing lecturekit changes no global configuration. A chapter's first cell
calls :func:`lecturekit.notebook.setup`, which enables float64 in JAX (and the book's figure
style); the examples of this reference run in float64 too. Functions accept NumPy or JAX
arrays and return JAX arrays, Python numbers, or documented NamedTuples and dataclasses.

**Randomness.** Every random function takes an explicit ``key`` (``jax.random.key(seed)``);
the same key gives the same numbers.

**Vocabulary.** ``lr`` is a learning rate, ``steps`` a number of gradient-descent steps,
``every`` an observation period, ``tol`` and ``max_iter`` the stopping rule of an
iterative solver, ``w_std`` and ``b_std`` the weight and bias scales.

**Errors.** Bad arguments raise :class:`ValueError` or :class:`TypeError` with a message that
names the argument; a result that may be inaccurate (an iteration stopped at its limit, a
tolerance below the working precision) comes with a :class:`NumericalWarning`.

**Examples.** Every public name has an example. They are doctests, run by
``make test-unit`` with ``jax``, ``jnp``, ``np`` and every module of lecturekit by its short
name (``nets``, ``training``, ...) already imported (see the root ``conftest.py``).
"""

from ._validation import NumericalWarning

__all__ = ["NumericalWarning"]

__version__ = "0.1.0"
