"""Validation cases of lecturekit.hessian (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("hessian.hvp", hessian.hvp, lambda: dict(f=scalar_loss, params=tree3(), v=tree3()),
         f=Fn(), params=Params(structured=True), v=Params(structured=True)),
    case("hessian.lanczos", hessian.lanczos,
         lambda: dict(matvec=diag_matvec, v0=np.ones(6), tol=1e-8, max_iter=10, keep_basis=False, min_iter=2,
                      check_every=2, args=()),
         matvec=Fn(), v0=Arr(ndim=1, nonempty=True, extra=((np.zeros(6), VALUE_ERR),)), tol=POS, max_iter=Int(1),
         min_iter=Int(1), check_every=Int(1), args=Custom((([1], TYPE_ERR), ("a", TYPE_ERR)))),
    case("hessian.normal_stream", hessian.normal_stream, lambda: dict(key=KEY, size=5), key=Key(), size=Int(1)),
    case("hessian.spectral_norm", hessian.spectral_norm,
         lambda: dict(f=scalar_loss, params=tree3(), key=KEY, tol=1e-8, max_iter=20),
         f=Fn(), params=Params(), key=Key(optional=True), tol=POS, max_iter=Int(1)),
    case("hessian.top_eigenpairs", hessian.top_eigenpairs,
         lambda: dict(f=scalar_loss, params=tree3(), k=2, key=KEY, tol=1e-8, max_iter=20),
         f=Fn(), params=Params(), k=Int(1, extra=((10, VALUE_ERR),)), key=Key(optional=True), tol=POS,
         max_iter=Int(1)),
    case("hessian.dense_hessian", hessian.dense_hessian, lambda: dict(f=scalar_loss, params=tree3(), max_params=10),
         f=Fn(), params=Params(), max_params=Int(1, extra=((2, VALUE_ERR),))),
]
