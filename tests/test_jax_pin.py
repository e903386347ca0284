"""Guard against JAX releases that miscompile under jit on CPU.

jax/jaxlib 0.10.2 return silently wrong numbers for a jitted, vmapped matrix-vector
product followed by a reduction (jax-ml/jax#39103). The book pins 0.10.1; this test
reproduces the miscompile so that a broken JAX can never be installed unnoticed.
"""

import jax
import jax.numpy as jnp
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("dtype, n", [(jnp.float64, 16_385), (jnp.float32, 32_769)])
def test_jitted_vmapped_reduction_is_exact(dtype, n):
    idx = jnp.arange(n, dtype=dtype)
    rows = jnp.stack([idx, jnp.zeros_like(idx), jnp.zeros_like(idx)], axis=1)
    matrix = jnp.eye(3, dtype=dtype)

    def squared_norms(x):
        return jax.vmap(lambda row: jnp.sum((matrix @ row) ** 2))(x)

    expected = float(n - 1) ** 2  # last row is (n-1, 0, 0): exactly representable
    eager = float(squared_norms(rows)[-1])
    jitted = float(jax.jit(squared_norms)(rows)[-1])
    assert eager == expected, (eager, expected)
    assert jitted == expected, (
        f"jit gives {jitted} instead of {expected}: this JAX ({jax.__version__}) miscompiles "
        "on CPU (jax-ml/jax#39103); install the pinned jax==0.10.1"
    )


def test_pinned_version():
    assert jax.__version__ == "0.10.1", jax.__version__
