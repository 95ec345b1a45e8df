"""A JAX convolution forward and backward, jitted; prints a checksum and the mean step time."""
import sys
import time

import jax
import jax.numpy as jnp

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (16, 3, 64, 64), dtype=jnp.float32)
w = jax.random.normal(jax.random.PRNGKey(1), (32, 3, 3, 3), dtype=jnp.float32)


def loss(w, x):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return jnp.mean(jax.nn.relu(y) ** 2)


step = jax.jit(jax.value_and_grad(loss))
val, grad = step(w, x)
val.block_until_ready()
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    val, grad = step(w, x)
    val.block_until_ready()
    times.append(time.perf_counter() - t0)
print("checksum %.6g %.6g" % (float(val), float(jnp.sum(grad))))
print("step_ms %.4f" % (1000 * sum(times) / len(times)))
print("devices", jax.devices())
