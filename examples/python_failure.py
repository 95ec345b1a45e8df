#!/usr/bin/env python3
"""A Python program whose cuDNN call fails deep in its "model", to see the Python line cudnnspy names.

No GPU needed: it calls cuDNN through ctypes (as a framework's loader opens it, RTLD_LOCAL), and the failing call,
a tensor descriptor with a batch of 0, is checked on the host. Run it under the spy:

    cudnnspy run -- python3 examples/python_failure.py /usr/local/cuda/lib64/libcudnn.so.9

and the failure's line on stderr, and its record, end with the Python frames it came from (`| python ...`). See
docs/usage.md, "Which Python line".
"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libcudnn.so.9")


class Conv2d:
    def __init__(self, channels):
        self.desc = ctypes.c_void_p()
        lib.cudnnCreateTensorDescriptor(ctypes.byref(self.desc))
        self.channels = channels

    def forward(self, batch, size):
        # CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT
        return lib.cudnnSetTensor4dDescriptor(self.desc, 0, 0, batch, self.channels, size, size)


def train(model, batches):
    for batch in batches:
        status = model.forward(batch, 32)
        print("batch %d: status %d" % (batch, status))


train(Conv2d(16), [8, 0])
