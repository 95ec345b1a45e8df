#!/usr/bin/env python3
"""A small convolutional network trained for a few steps on random data, under the cuDNN spy.

Needs a CUDA GPU and PyTorch. PyTorch links libcudnn.so.9, so the preloaded spy sees every call:

    mkdir -p runs/torch
    cudnnspy run --output runs/torch --trace 'cudnnConvolution* cudnnBackend*' -- \\
        python3 examples/pytorch_conv.py --steps 5

Each step is marked in the records ("mark" events) when the spy is there; without it the script
runs the same. See docs/usage.md.
"""
import argparse
import ctypes
import os
import sys

import torch
from torch import nn


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=64, help="image height and width")
    ap.add_argument("--benchmark", action="store_true", help="torch.backends.cudnn.benchmark = True")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU: PyTorch would not call cuDNN", file=sys.stderr)
        return 1
    torch.backends.cudnn.benchmark = args.benchmark
    print("torch %s, CUDA %s, cuDNN %s, %s" % (torch.__version__, torch.version.cuda,
                                               torch.backends.cudnn.version(), torch.cuda.get_device_name()))
    mark = spy_marker()
    dev = torch.device("cuda")
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10),
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 3, args.size, args.size, device=dev)
    y = torch.randint(0, 10, (args.batch,), device=dev)
    for step in range(args.steps):
        mark("step %d" % step)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        print("step %d loss %.4f" % (step, loss.item()))
    mark("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
