"""Scaled dot-product attention through cuDNN's backend (PyTorch's cuDNN SDPA kernel), forward and backward.

usage: torch_sdpa.py STEPS
Prints a checksum of the output and gradients, and the mean step time. The spy's graph records then hold
the attention graphs PyTorch built through cudnn-frontend.
"""
import sys
import time

import torch

steps = int(sys.argv[1])
torch.manual_seed(0)
dev = torch.device("cuda")
q, k, v = (torch.randn(4, 8, 256, 64, device=dev, dtype=torch.float16, requires_grad=True) for _ in range(3))
times = []
ctx = torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.CUDNN_ATTENTION]) \
    if hasattr(torch.nn, "attention") else None
for i in range(steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if ctx is not None:
        with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.float().sum().backward()
    torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
print("checksum %.6g %.6g" % (out.float().sum().item(), q.grad.float().abs().sum().item()))
warm = times[3:] or times
print("step_ms %.4f" % (1000 * sum(warm) / len(warm)))
