"""The one sampler: prefix stability, equivalence with the chunk definition, compilation, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lecturekit import sampling

jax.config.update("jax_enable_x64", True)

KEY = jax.random.key(5)


def _count_compiles(fn) -> int:
    events = []

    def listener(name, *args, **kwargs):
        if name == "/jax/core/compile/backend_compile_duration":
            events.append(name)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    return len(events)


def test_the_stream_is_its_documented_chunks_and_prefix_stable():
    size = 34 * sampling.CHUNK + 5  # crosses the block program (32 chunks) and single chunks
    flat = np.asarray(sampling.standard_normal(KEY, (size,)))
    for i in (0, 1, 31, 32, 34):
        chunk = np.asarray(jax.random.normal(jax.random.fold_in(KEY, i), (sampling.CHUNK,)))
        n = min(sampling.CHUNK, size - i * sampling.CHUNK)
        np.testing.assert_array_equal(flat[i * sampling.CHUNK:i * sampling.CHUNK + n], chunk[:n])
    for shape in [(7,), (3, 11), (2, 3, 5), (sampling.CHUNK + 3,)]:
        part = np.asarray(sampling.standard_normal(KEY, shape))
        assert part.shape == shape
        np.testing.assert_array_equal(part.ravel(), flat[:part.size])


def test_traced_keys_give_the_same_numbers():
    size = 2 * sampling.CHUNK + 9
    host = sampling.standard_normal(KEY, (size,))
    np.testing.assert_array_equal(jax.jit(lambda k: sampling.standard_normal(k, (size,)))(KEY), host)
    keys = jax.random.split(KEY, 3)
    batched = jax.vmap(lambda k: sampling.standard_normal(k, (4, 5)))(keys)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], sampling.standard_normal(keys[i], (4, 5)))


def test_compiled_once_per_dtype_not_per_shape():
    # programs other tests compiled before this one (other key types, dtypes) stay counted
    before = sampling._chunk._cache_size() + sampling._block._cache_size()
    sampling.standard_normal(KEY, (3,))
    sampling.standard_normal(KEY, (3,), jnp.float32)
    shapes = [(6, 4), (24,), (2, 3, 4), (1000, 7), (123,), (sampling.CHUNK * 33,)]
    sampling.standard_normal(KEY, shapes[-1])  # the block program, once
    assert _count_compiles(lambda: [sampling.standard_normal(jax.random.key(i), s) for i, s in enumerate(shapes)]) == 0
    assert _count_compiles(lambda: [sampling.standard_normal(KEY, s, jnp.float32) for s in shapes[:4]]) == 0
    # at most one chunk and one block program per dtype (two dtypes): not one per shape (six)
    assert sampling._chunk._cache_size() + sampling._block._cache_size() - before <= 4


def test_dtype_and_statistics():
    assert sampling.standard_normal(KEY, (3,)).dtype == jnp.float64
    a32 = sampling.standard_normal(KEY, (200_000,), jnp.float32)
    assert a32.dtype == jnp.float32
    # 200000 N(0,1) draws: standard errors 0.0022 (mean) and 0.0032 (variance); 5 sigma bounds
    assert abs(float(jnp.mean(a32))) < 0.012 and abs(float(jnp.var(a32)) - 1) < 0.016
    assert sampling.standard_normal(KEY, (0, 3)).shape == (0, 3)
    assert sampling.standard_normal(KEY, 4).shape == (4,)
    assert isinstance(sampling.standard_normal(KEY, (2,)), jax.Array)
    legacy = jax.random.PRNGKey(1)
    assert sampling.standard_normal(legacy, (5,)).shape == (5,)


@pytest.mark.parametrize("args, exc, match", [
    ((0, (3,)), TypeError, "key must be a single JAX PRNG key"),
    ((jax.random.split(KEY, 2), (3,)), TypeError, "key must be a single"),
    ((KEY, "abc"), TypeError, "shape must be a sequence"),
    ((KEY, (2, -1)), ValueError, r"shape\[1\]"),
    ((KEY, (2.5,)), TypeError, r"shape\[0\]"),
    ((KEY, (3,), jnp.int32), TypeError, "dtype must be a floating"),
    ((KEY, (3,), "nonsense"), TypeError, "dtype must be a floating"),
])
def test_bad_arguments(args, exc, match):
    with pytest.raises(exc, match=match):
        sampling.standard_normal(*args)


def test_standard_normal_host_is_the_same_draw_on_the_host():
    key = jax.random.key(7)
    host = sampling.standard_normal_host(key, (3, 5))
    assert isinstance(host, np.ndarray) and host.shape == (3, 5)
    np.testing.assert_array_equal(host, np.asarray(sampling.standard_normal(key, (3, 5))))
    traced = jax.jit(lambda k: sampling.standard_normal_host(k, (3, 5)))(key)
    np.testing.assert_array_equal(np.asarray(traced), host)


def test_the_other_laws_are_jax_random_with_the_same_key_and_arguments():
    cases = [
        (sampling.uniform(KEY, (3, 4)), jax.random.uniform(KEY, (3, 4))),
        (sampling.uniform(KEY, 5, jnp.float32, minval=-jnp.pi, maxval=jnp.pi),
         jax.random.uniform(KEY, (5,), jnp.float32, minval=-jnp.pi, maxval=jnp.pi)),
        (sampling.bernoulli(KEY, 0.3, (2, 7)), jax.random.bernoulli(KEY, 0.3, (2, 7))),
        (sampling.randint(KEY, 6, -2, 9), jax.random.randint(KEY, (6,), -2, 9)),
        (sampling.choice_without_replacement(KEY, 10, 4), jax.random.choice(KEY, 10, (4,), replace=False)),
    ]
    for ours, theirs in cases:
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)


def test_the_other_laws_on_traced_keys_and_their_ranges():
    keys = jax.random.split(KEY, 3)
    u = jax.vmap(lambda k: sampling.uniform(k, 4, minval=2.0, maxval=3.0))(keys)
    assert u.shape == (3, 4) and bool(jnp.all((2 <= u) & (u < 3)))
    np.testing.assert_array_equal(u[1], sampling.uniform(keys[1], 4, minval=2.0, maxval=3.0))
    # a traced probability (a batch fraction inside jit) is passed through unchecked
    coins = jax.jit(lambda k, p: sampling.bernoulli(k, p, 1000))(KEY, 0.25)
    assert 150 < int(coins.sum()) < 350
    idx = jax.jit(lambda k: sampling.choice_without_replacement(k, 20, 20))(KEY)
    assert sorted(idx.tolist()) == list(range(20))
    r = sampling.randint(KEY, 500, 0, 3)
    assert set(r.tolist()) == {0, 1, 2}


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: sampling.uniform(KEY, 3, minval=1.0, maxval=1.0), ValueError, "minval must be < maxval"),
        (lambda: sampling.uniform(KEY, 3, jnp.int32), TypeError, "dtype"),
        (lambda: sampling.bernoulli(KEY, 1.5, 3), ValueError, "p must be <= 1"),
        (lambda: sampling.bernoulli(KEY, -0.1, 3), ValueError, "p must be >= 0"),
        (lambda: sampling.randint(KEY, 3, 2, 2), ValueError, "minval must be < maxval"),
        (lambda: sampling.randint(KEY, 3, 0.0, 2), TypeError, "minval must be an integer"),
        (lambda: sampling.choice_without_replacement(KEY, 3, 4), ValueError, "size must be <= n = 3"),
        (lambda: sampling.choice_without_replacement(jnp.zeros(2), 3, 2), TypeError, "key"),
    ],
)
def test_the_other_laws_name_the_bad_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
