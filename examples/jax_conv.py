#!/usr/bin/env python3
"""A small convolutional network trained for a few steps on random data with JAX, under the cuDNN spy.

Needs a CUDA GPU and jax[cuda12]. XLA opens cuDNN with dlopen and finds its functions with dlsym;
the preloaded spy answers those lookups, so preload is the way in (a drop-in works too when it is
the libcudnn.so.9 that XLA's dlopen finds first):

    mkdir -p runs/jax
    cudnnspy run --output runs/jax --trace 'cudnnBackend*' -- python3 examples/jax_conv.py --steps 5

Each step is marked in the records when the spy is there. See docs/usage.md.
"""
import argparse
import ctypes
import os
import sys

import jax
import jax.numpy as jnp
from jax import lax


def spy_marker():
    """cudnnspy_mark when the spy is in the process, else a no-op. Preloaded, the spy is in the global
    scope; a drop-in libcudnn.so.9 that the framework loaded privately (RTLD_LOCAL) is found by name."""
    for name in (None, "libcudnn.so.9", "libcudnn.so.8"):
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD) if name else ctypes.CDLL(None)
        except OSError:
            continue
        mark = getattr(lib, "cudnnspy_mark", None)
        if mark is not None:
            mark.argtypes = [ctypes.c_char_p]
            mark.restype = None
            return lambda label: mark(label.encode())
    return lambda label: None


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "w1": jax.random.normal(k1, (3, 3, 3, 32)) * 0.1,     # HWIO
        "w2": jax.random.normal(k2, (3, 3, 32, 64)) * 0.05,
        "dense": jax.random.normal(k3, (64, 10)) * 0.1,
    }


def forward(params, x):
    dn = ("NHWC", "HWIO", "NHWC")
    x = jax.nn.relu(lax.conv_general_dilated(x, params["w1"], (1, 1), "SAME", dimension_numbers=dn))
    x = jax.nn.relu(lax.conv_general_dilated(x, params["w2"], (2, 2), "SAME", dimension_numbers=dn))
    return x.mean(axis=(1, 2)) @ params["dense"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 10), axis=-1))


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=64, help="image height and width")
    args = ap.parse_args()
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("no GPU backend in JAX: XLA would not call cuDNN", file=sys.stderr)
        return 1
    print("jax %s on %s" % (jax.__version__, jax.devices()[0]))
    mark = spy_marker()
    key = jax.random.PRNGKey(0)
    params = init(key)
    x = jax.random.normal(key, (args.batch, args.size, args.size, 3))
    y = jax.random.randint(key, (args.batch,), 0, 10)
    for step in range(args.steps):
        mark("step %d" % step)
        params, loss = train_step(params, x, y)
        print("step %d loss %.4f" % (step, float(loss)))
    mark("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
