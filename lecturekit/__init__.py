r"""lecturekit: the small JAX library behind the executable course on wide neural
networks.

Each module holds one idea, and every chapter calls the same engine for it. This
reference is generated from the docstrings of the package
(``scripts/api_reference.py``): one page per module, listing the names of its
``__all__``.

**Layers.** A module imports only from its own layer or below (a test reads the
imports):

1. checks and shared helpers: :mod:`lecturekit.sampling` (every random draw),
   :mod:`lecturekit.gaussian` (the one Gauss-Hermite rule and the dual activations),
   :mod:`lecturekit.losses` (the losses, with the book's normalizations),
   :mod:`lecturekit.activations`, :mod:`lecturekit.stats`, :mod:`lecturekit.symbolic`;
2. networks and their infinite-width kernels: :mod:`lecturekit.nets` (one network
   description: parameterizations, init, forward and backward passes, and the
   network's own per-layer tangent-kernel terms) and :mod:`lecturekit.kernels` (the
   one NNGP/NTK recursion, :func:`lecturekit.kernels.next_layer`);
3. the engines: :mod:`lecturekit.tangent` (empirical tangent kernels, per layer for a
   network and Jacobian-free for any model; the linearized model),
   :mod:`lecturekit.hessian` (Hessian-vector products, every Lanczos, spectral
   densities, dense Hessians of small models), :mod:`lecturekit.training` (the one
   gradient-descent loop) and :mod:`lecturekit.regression` (kernel regression and the
   NTK gradient flow);
4. the chapter modules (:mod:`lecturekit.criticality`, :mod:`lecturekit.catapult`,
   ...): the models and measurements of one chapter, built on layers 1-3;
5. :mod:`lecturekit.plotting`, :mod:`lecturekit.explore`, :mod:`lecturekit.notebook`
   and the exercise checks.

**The training engine.** :func:`lecturekit.training.descend` is the one loop: ``steps``
steps of an update rule on a scalar loss, the loss recorded at every step and an
observer evaluated every ``every`` steps; it is pure and traceable (``jit`` it, ``vmap``
it over initializations or learning rates). The update rule follows the Optax
convention, an object with ``init(params)`` and ``update(grads, state, params, lr,
step)``: the plain step :class:`lecturekit.training.GradientStep` (the default),
Gaussian gradient noise (:class:`lecturekit.training.NoisyGradient`), mini-batches
with label noise (:class:`lecturekit.training.StochasticGradient`) and Bernoulli
batches (:class:`lecturekit.training.BernoulliBatchGradient`). Rules are frozen
dataclasses registered as pytrees, so equal rules share one compiled program. Observers
say what a run records: the parameters (:class:`lecturekit.training.ParamsObserver`),
the outputs on a batch (:class:`lecturekit.training.OutputObserver`), the tangent
kernel or its diagonal (:class:`lecturekit.training.KernelObserver`), the sharpness
(:class:`lecturekit.training.SharpnessObserver`), or a tuple or dict of them; they
carry their data as traced arrays, so new data of the same shape compiles nothing.
:func:`lecturekit.training.gradient_descent` is the checked host entry: one compiled
program per model, step count and observer, with the data, the parameters and the
learning rate traced, so that repeated calls compile once (a test counts compilations).

**The other engines.** Tangent kernels: :func:`lecturekit.tangent.empirical_ntk` takes
a network (or its ``apply``) and sums the network's per-layer terms
(:meth:`lecturekit.nets.MLP.ntk_terms`); any other model gets Jacobian-free vector
products. Hessians: :func:`lecturekit.hessian.hvp` and Lanczos on it
(:func:`lecturekit.hessian.spectral_norm`, :func:`lecturekit.hessian.top_eigenvalue`,
:func:`lecturekit.hessian.spectral_density`). Randomness:
:func:`lecturekit.sampling.standard_normal`, one compiled sampler per shape. A loop
that takes derivatives, or a random draw, outside these engines is listed with its
reason in the test suite's allowlist (``tests/one_engine_allowlist.py``); anything new
fails.

**Parameterization.** Networks follow the neural-tangents conventions, so that results
can be compared with that library. In the NTK parameterization a dense layer of fan-in
:math:`n` maps :math:`h` to :math:`z = \frac{\sigma_w}{\sqrt{n}} W h + \sigma_b b` with
the entries of :math:`W, b` drawn :math:`N(0, 1)` (``w_std`` is :math:`\sigma_w`,
``b_std`` is :math:`\sigma_b`); in the standard parameterization the same scales sit in
the initialization instead. The input covariance is normalized by the input dimension
:math:`d`: :math:`K^{(0)}(x, x') = x \cdot x' / d`. Each function states the
parameterization, normalization and shapes it uses.

**Precision.** Importing lecturekit changes no global configuration. A chapter's first
cell calls :func:`lecturekit.notebook.setup`, which enables float64 in JAX (and the
book's figure style); the examples of this reference run in float64 too. Functions
accept NumPy or JAX arrays and return JAX arrays, Python numbers, or documented
NamedTuples and dataclasses.

**Randomness.** Every random function takes an explicit ``key``
(``jax.random.key(seed)``); the same key gives the same numbers.

**Vocabulary.** ``lr`` is a learning rate, ``steps`` a number of gradient-descent steps,
``every`` an observation period, ``tol`` and ``max_iter`` the stopping rule of an
iterative solver, ``w_std`` and ``b_std`` the weight and bias scales.

**Errors.** Bad arguments raise :class:`ValueError` or :class:`TypeError` with a message
that names the argument; a result that may be inaccurate (an iteration stopped at its
limit, a tolerance below the working precision) comes with a :class:`NumericalWarning`.

**Examples.** Every public name has an example. They are doctests, run by
``make test-unit`` with ``jax``, ``jnp``, ``np`` and every module of lecturekit by its
short name (``nets``, ``training``, ...) already imported (see the root
``conftest.py``).
"""

from ._validation import NumericalWarning

__all__ = ["NumericalWarning"]

__version__ = "0.1.0"
