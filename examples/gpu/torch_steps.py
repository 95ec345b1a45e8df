"""A few training steps of a small convolutional network; prints losses and the mean step time.

usage: torch_steps.py STEPS BENCHMARK(0|1)
Deterministic seeds; with BENCHMARK=0 cuDNN is also asked for deterministic algorithms, so that the
losses must match to the bit with and without the spy.
"""
import sys
import time

import torch

steps, benchmark = int(sys.argv[1]), sys.argv[2] == "1"
torch.backends.cudnn.benchmark = benchmark
torch.backends.cudnn.deterministic = not benchmark
torch.manual_seed(0)
dev = torch.device("cuda")
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
    torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
x = torch.randn(64, 3, 64, 64, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
losses, times = [], []
for i in range(steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
    losses.append(loss.item())
warm = times[3:] or times
print("losses", " ".join("%.9g" % l for l in losses))
print("step_ms %.4f" % (1000 * sum(warm) / len(warm)))
print("cudnn", torch.backends.cudnn.version())
