"""Validation cases of lecturekit.gp (assembled by tests/validation_cases.py)."""

from validation_kinds import *  # noqa: F403 (argument kinds, shared inputs, case)

CASES = [
    case("gp.cholesky", gp.cholesky, lambda: dict(matrix=spd(), jitter=0.0, max_tries=2),
         matrix=Arr(ndim=2, fixed=(0,), nonempty=True, extra=((spd() + np.triu(np.ones((4, 4)), 1), VALUE_ERR),)),
         jitter=NONNEG, max_tries=Int(0)),
    case("gp.posterior", gp.posterior,
         lambda: dict(k_train=spd(), k_cross=spd(5)[:2, :4], k_test=spd(2), y=np.arange(4.0), noise=0.1, jitter=0.0),
         k_train=KERNEL, k_cross=Arr(ndim=2, fixed=(0, 1)), k_test=Arr(ndim=2, fixed=(0, 1)),
         y=Arr(ndim=1, fixed=(0,)), noise=NONNEG, jitter=NONNEG),
    case("gp.log_marginal_likelihood", gp.log_marginal_likelihood,
         lambda: dict(k_train=spd(), y=np.arange(4.0), noise=0.1, jitter=0.0),
         k_train=KERNEL, y=Arr(ndim=1, fixed=(0,)), noise=NONNEG, jitter=NONNEG),
    case("gp.sample_prior", gp.sample_prior, lambda: dict(key=KEY, kernel=spd(), num_samples=2, jitter=1e-10),
         key=Key(), kernel=Arr(ndim=2, fixed=(0,), nonempty=True), num_samples=Int(1), jitter=NONNEG),
    case("gp.posterior_z_scores", gp.posterior_z_scores,
         lambda: dict(key=KEY, kernel=spd(5), n_train=3, noise=0.1, num_draws=2, jitter=1e-10),
         key=Key(), kernel=Arr(ndim=2, fixed=(0, 1), nonempty=True, extra=((spd(5) + np.triu(np.ones((5, 5)), 1), VALUE_ERR),)),
         n_train=Int(1, extra=((5, VALUE_ERR),)), noise=NONNEG, num_draws=Int(1), jitter=NONNEG),
]
