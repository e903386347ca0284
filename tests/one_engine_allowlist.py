"""The allowlists of ``tests/test_one_engine.py``: every exception to "one engine per
idea", keyed by (path, top-level function or ``Class.method``) in the library and by
(chapter stem, top-level function or the first name its cell assigns) in the chapters.

A reason says in one sentence why the site is not a second engine. A reason that starts
with "To move:" marks a site that is one (or holds a draw that belongs in ``sampling``),
listed only until its code moves into the engine.
"""

_CHECKER = (
    "an exercise checker's test problems, from a local seeded NumPy generator "
    "(host-side fixtures, independent of the JAX streams)."
)

# Loops that take a derivative (for/while, comprehensions, lax.scan/fori_loop/map, ...).
DERIVATIVE_LOOPS: dict[tuple[str, str], str] = {
    # ---- the engines themselves
    (
        "lecturekit/training.py",
        "_descend",
    ): "training.py: the training engine itself (full-batch gradient descent in lax.scan).",
    (
        "lecturekit/hessian.py",
        "_norms",
    ): "hessian.py: the Lanczos engine itself, on Hessian-vector products (spectral and "
    "gradient norms).",
    (
        "lecturekit/hessian.py",
        "_top_eigenvalue",
    ): "hessian.py: the Lanczos engine itself (top eigenvalue from a fixed number of steps).",
    (
        "lecturekit/hessian.py",
        "top_eigenpairs",
    ): "hessian.py: the Lanczos engine itself (the top eigenpairs, Hessian-vector "
    "products handed to _lanczos).",
    (
        "lecturekit/hessian.py",
        "_spectral_density",
    ): "hessian.py: stochastic Lanczos quadrature, lax.map of the tridiagonal Lanczos "
    "over probes.",
    (
        "lecturekit/tangent.py",
        "_vector_product_ntk",
    ): "tangent.py: the tangent engine itself, lax.map over chunks of JVP/VJP columns of "
    "the NTK.",
    # ---- one derivative per case of a sweep or a check, no descent
    (
        "lecturekit/exercises/ch07.py",
        "check_ntk_alpha",
    ): "A checker's loop over three widths, comparing one gradient of two losses at each.",
    (
        "appendix_fast",
        "per_layer_checks",
    ): "A generator over the two input batches, one Jacobian each, to check the per-layer "
    "NTK blocks against net.backward.",
    (
        "appendix_fast",
        "power_iteration",
    ): "The appendix's plain power iteration on Hessian-vector products, written out to be "
    "compared with hessian.lanczos.",
    (
        "appendix_fast",
        "convergence",
    ): "A loop over two inputs running the power iteration above and hessian.lanczos once "
    "each.",
    (
        "ch02_ntk",
        "widths_mo",
    ): "A sweep over widths and seeds, one Jacobian of the output blocks (output_blocks) "
    "at each.",
    (
        "ch06_linear_regions",
        "derivative_sq",
    ): "A loop over depths, one vmapped jvp (the input derivative of 50,000 networks) at "
    "each.",
    (
        "ch08_loss_hessian",
        "overlap_small",
    ): "Two runs' final gradients projected on their top Hessian eigenspace, one jax.grad "
    "each.",
}

# Random-number draws outside lecturekit/sampling.py.
RANDOM_SITES: dict[tuple[str, str], str] = {
    # ---- the library
    (
        "lecturekit/plotting.py",
        "regions_2d",
    ): "Cosmetic: random face colours of the plotted regions from a seeded NumPy generator.",
    ("lecturekit/exercises/ch02.py", "_flow_problem"): "The gradient-flow exercise: "
    + _CHECKER,
    ("lecturekit/exercises/ch02.py", "check_kernel_ridge"): "Kernel ridge: " + _CHECKER,
    ("lecturekit/exercises/ch02.py", "check_readout_ensemble"): "Readout ensemble: "
    + _CHECKER,
    ("lecturekit/exercises/ch03.py", "check_norm_221"): "The (2,2,1) norm: " + _CHECKER,
    (
        "lecturekit/exercises/ch03.py",
        "_bottleneck_simulation",
    ): "A Monte Carlo reference for the bottleneck exercise from a local seeded NumPy "
    "generator.",
    ("lecturekit/exercises/ch04.py", "check_quadratic_model"): "The quadratic model: "
    + _CHECKER,
    ("lecturekit/exercises/ch04.py", "_ls_problem"): "Least squares: " + _CHECKER,
    ("lecturekit/exercises/ch05.py", "_sparse_problem"): "Sparse recovery: " + _CHECKER,
    ("lecturekit/exercises/ch05.py", "check_support_vectors"): "Support vectors: "
    + _CHECKER,
    (
        "lecturekit/exercises/ch05.py",
        "check_flattest_interpolant",
    ): "Flattest interpolant: " + _CHECKER,
    (
        "lecturekit/exercises/ch06.py",
        "check_shallow_breakpoints",
    ): "Shallow breakpoints: " + _CHECKER,
    ("lecturekit/exercises/ch06.py", "check_region_recursion"): "Region recursion: "
    + _CHECKER,
    ("lecturekit/exercises/ch07.py", "_spectra"): "NTK spectra: " + _CHECKER,
    ("lecturekit/exercises/ch07.py", "check_ntk_alpha"): "The alpha of a width: "
    + _CHECKER,
    ("lecturekit/exercises/ch08.py", "check_gauss_newton_rank"): "Gauss-Newton rank: "
    + _CHECKER,
    (
        "lecturekit/exercises/ch08.py",
        "check_hutchinson_variance",
    ): "Hutchinson variance: " + _CHECKER,
    ("lecturekit/exercises/ch10.py", "check_sphere_variance"): "Sphere variance: "
    + _CHECKER,
    ("lecturekit/exercises/ch11.py", "check_zigzag_encoder"): "Zigzag encoder: "
    + _CHECKER,
    ("lecturekit/exercises/ch11.py", "check_mcshane"): "McShane extension: " + _CHECKER,
    (
        "lecturekit/exercises/fast.py",
        "_lanczos_run",
    ): "The test matrix of the Lanczos exercise: " + _CHECKER,
    # ---- the chapters
    (
        "appendix_fast",
        "sweep_widths",
    ): "The appendix counts jax.random.normal's compilations per shape against sampling's "
    "one per dtype: the direct draw is the point.",
    (
        "ch03_transition_to_linearity",
        "rng",
    ): "Random test tensors for a numerical check of a norm inequality, from a local "
    "seeded NumPy generator.",
    (
        "ch06_linear_regions",
        "exact_bp",
    ): "Uniform points inside each linear piece, to test that the network is affine there.",
    (
        "ch06_linear_regions",
        "rng",
    ): "Random hyperplane arrangements whose cells are counted, from a local seeded NumPy "
    "generator.",
    (
        "ch06_linear_regions",
        "grid_sep",
    ): "Random knots of 200 piecewise-linear fits, from a local seeded NumPy generator.",
    (
        "ch09_finite_width",
        "N_y",
    ): "Binomial and chi-square Monte Carlo of the ReLU output law in NumPy (sampling has "
    "neither).",
}
