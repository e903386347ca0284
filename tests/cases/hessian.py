"""Validation cases of lecturekit.hessian (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

DENSITY = Custom(((None, TYPE_ERR), ((np.ones((1, 2)), np.ones((1, 2))), TYPE_ERR),
                  (hessian.SpectralDensity(np.ones((1, 2)), np.ones((1, 3))), VALUE_ERR),
                  (hessian.SpectralDensity(np.array([[np.nan, 1.0]]), np.ones((1, 2))), VALUE_ERR)))



def tiny_model(p, x):
    return jnp.tanh(x @ p["w"]) * p["b"][0]


def half_square(f, y):
    return 0.5 * jnp.sum((f - y) ** 2, axis=1)


def model_args(**extra):
    return lambda: dict(loss=half_square, apply=tiny_model, params=tree3(), x=x53(), y=np.linspace(-1.0, 1.0, 5),
                        **extra)


Y = Arr(ndim=(1, 2), fixed=(0,))
MODEL = dict(apply=Fn(), params=Params(), x=Arr(ndim=2, nonempty=True))

CASES = [
    case("hessian.hvp", hessian.hvp, lambda: dict(f=scalar_loss, params=tree3(), v=tree3()),
         f=Fn(), params=Params(structured=True), v=Params(structured=True)),
    case("hessian.lanczos", hessian.lanczos,
         lambda: dict(matvec=diag_matvec, v0=np.ones(6), tol=1e-8, max_iter=10, keep_basis=False, min_iter=2,
                      check_every=2, args=()),
         matvec=Fn(), v0=Arr(ndim=1, nonempty=True, extra=((np.zeros(6), VALUE_ERR),)), tol=POS, max_iter=Int(1),
         min_iter=Int(1), check_every=Int(1), args=Custom((([1], TYPE_ERR), ("a", TYPE_ERR)))),
    case("hessian.lanczos_tridiagonal", hessian.lanczos_tridiagonal,
         lambda: dict(matvec=diag_matvec, v0=np.ones(6), steps=3, reorthogonalize=True),
         matvec=Fn(), v0=Arr(ndim=1, nonempty=True, extra=((np.zeros(6), VALUE_ERR),)),
         steps=Int(1, extra=((7, VALUE_ERR),))),
    case("hessian.lanczos_quadrature", hessian.lanczos_quadrature,
         lambda: dict(tri=hessian.Tridiagonal(np.array([1.0, 2.0]), np.array([0.5]))),
         tri=Custom((((np.ones(2), np.ones(1)), TYPE_ERR), (None, TYPE_ERR),
                     (hessian.Tridiagonal(np.ones(2), np.ones(2)), VALUE_ERR),
                     (hessian.Tridiagonal(np.array([1.0, np.nan]), np.ones(1)), VALUE_ERR)))),
    case("hessian.spectral_norm", hessian.spectral_norm,
         lambda: dict(f=scalar_loss, params=tree3(), key=KEY, tol=1e-8, max_iter=20),
         f=Fn(), params=Params(), key=Key(optional=True), tol=POS, max_iter=Int(1)),
    case("hessian.spectral_and_gradient_norm", hessian.spectral_and_gradient_norm,
         lambda: dict(f=scalar_loss, params=tree3(), key=KEY, tol=1e-8, max_iter=20),
         f=Fn(), params=Params(), key=Key(optional=True), tol=POS, max_iter=Int(1)),
    case("hessian.top_eigenvalue", hessian.top_eigenvalue,
         lambda: dict(f=scalar_loss, params=tree3(), key=KEY, steps=3),
         f=Fn(), params=Params(), key=Key(), steps=Int(1)),
    case("hessian.top_eigenpairs", hessian.top_eigenpairs,
         lambda: dict(f=scalar_loss, params=tree3(), k=2, key=KEY, tol=1e-8, max_iter=20),
         f=Fn(), params=Params(), k=Int(1, extra=((10, VALUE_ERR),)), key=Key(optional=True), tol=POS,
         max_iter=Int(1)),
    case("hessian.trace_estimate", hessian.trace_estimate,
         lambda: dict(f=scalar_loss, params=tree3(), key=KEY, num_probes=3),
         f=Fn(), params=Params(), key=Key(), num_probes=Int(1)),
    case("hessian.spectral_density", hessian.spectral_density,
         lambda: dict(f=scalar_loss, params=tree3(), key=KEY, num_probes=2, num_steps=3),
         f=Fn(), params=Params(), key=Key(), num_probes=Int(1), num_steps=Int(1, extra=((10, VALUE_ERR),))),
    case("hessian.dense_hessian", hessian.dense_hessian, lambda: dict(f=scalar_loss, params=tree3(), max_params=10),
         f=Fn(), params=Params(), max_params=Int(1, extra=((2, VALUE_ERR),))),
    case("hessian.smoothed_density", hessian.smoothed_density,
         lambda: dict(density=hessian.SpectralDensity(np.array([[0.0, 1.0]]), np.array([[0.5, 0.5]])),
                      grid=np.linspace(-1.0, 2.0, 7), width=0.1),
         density=DENSITY, grid=Arr(ndim=1, nonempty=True), width=POS),
    case("hessian.spectral_cdf", hessian.spectral_cdf,
         lambda: dict(density=hessian.SpectralDensity(np.array([[0.0, 1.0]]), np.array([[0.5, 0.5]])),
                      grid=np.linspace(-1.0, 2.0, 7)),
         density=DENSITY, grid=Arr(ndim=1, nonempty=True)),
    case("hessian.flatten", hessian.flatten, lambda: dict(params=tree3()), params=Params()),
    case("hessian.check_dense_size", hessian.check_dense_size, lambda: dict(params=tree3(), max_params=10),
         params=Params(), max_params=Int(1, extra=((3, VALUE_ERR),))),
    case("hessian.output_shape", hessian.output_shape, lambda: dict(apply=tiny_model, params=tree3(), x=x53()),
         **MODEL),
    case("hessian.output_loss", hessian.output_loss, model_args(), loss=Fn(), **MODEL, y=Y),
    case("hessian.gauss_newton_split", hessian.gauss_newton_split, model_args(max_params=10),
         loss=Fn(), **MODEL, y=Y, max_params=Int(1, extra=((3, VALUE_ERR),))),
    case("hessian.gauss_newton_vector_product", hessian.gauss_newton_vector_product, model_args(v=tree3()),
         loss=Fn(), **MODEL, y=Y, v=Params(structured=True)),
    case("hessian.residual_vector_product", hessian.residual_vector_product, model_args(v=tree3()),
         loss=Fn(), **MODEL, y=Y, v=Params(structured=True)),
    case("hessian.output_jacobian", hessian.output_jacobian,
         lambda: dict(transform=jnp.tanh, apply=tiny_model, params=tree3(), x=x53(), max_params=10),
         transform=Fn(), **MODEL, max_params=Int(1, extra=((3, VALUE_ERR),))),
]
