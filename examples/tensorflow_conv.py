#!/usr/bin/env python3
"""A small Keras convolutional network trained for a few steps on random data, under the cuDNN spy.

Needs a CUDA GPU and TensorFlow with GPU support. TensorFlow opens cuDNN with dlopen and finds its
functions with dlsym, which the preloaded spy answers:

    mkdir -p runs/tf
    cudnnspy run --output runs/tf --trace 'cudnnConvolution* cudnnBackend*' -- \\
        python3 examples/tensorflow_conv.py --steps 5

Each step is marked in the records when the spy is there. See docs/usage.md.
"""
import argparse
import ctypes
import os
import sys

import tensorflow as tf


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


class MarkSteps(tf.keras.callbacks.Callback):
    """One mark per training step, so that the records show where each step begins."""

    def __init__(self, mark):
        super().__init__()
        self.mark = mark

    def on_train_batch_begin(self, batch, logs=None):
        self.mark("step %d" % batch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=64, help="image height and width")
    args = ap.parse_args()
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        print("no GPU visible to TensorFlow: it would not call cuDNN", file=sys.stderr)
        return 1
    build = tf.sysconfig.get_build_info()
    print("tensorflow %s, built for CUDA %s and cuDNN %s, on %s" % (
        tf.__version__, build.get("cuda_version"), build.get("cudnn_version"), gpus[0].name))
    mark = spy_marker()
    model = tf.keras.Sequential([
        tf.keras.Input((args.size, args.size, 3)),
        tf.keras.layers.Conv2D(32, 3, padding="same"),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.ReLU(),
        tf.keras.layers.Conv2D(64, 3, strides=2, padding="same"),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.ReLU(),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = tf.random.normal((args.batch * args.steps, args.size, args.size, 3))
    y = tf.random.uniform((args.batch * args.steps,), maxval=10, dtype=tf.int32)
    model.fit(x, y, batch_size=args.batch, epochs=1, callbacks=[MarkSteps(mark)], verbose=2)
    mark("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
