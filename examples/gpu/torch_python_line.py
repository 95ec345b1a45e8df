"""A PyTorch convolution that fails in cuDNN, for the GPU check of issue 29: does the failure name this file's line?

usage: torch_python_line.py RECORD_DIR [--check CUDNNSPY]

Run under the spy with CUDNNSPY_INJECT=cudnnBackendExecute=EXECUTION_FAILED (run-gpu-check.sh sets it), a
convolution of a small network fails in cuDNN as a bad kernel would (torch checks shapes itself before cuDNN sees
them, so a bad shape rarely reaches it) and torch raises. It prints `expect FILE LINE FUNCTION` for the line that called the convolution, then with --check reads the records
(through `cudnnspy dump`) and says whether some failure's Python frames name that line. Exit 1 when none does.
"""
import json
import os
import subprocess
import sys

import torch

LINE = None


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 16, 3, padding=1)

    def forward(self, x):
        global LINE
        LINE = sys._getframe().f_lineno + 1
        return self.conv(x)


def main():
    net = Net().cuda().half()
    x = torch.randn(4, 8, 32, 32, device="cuda", dtype=torch.half)
    try:
        net(x)
        torch.cuda.synchronize()
        print("raised: no")
    except RuntimeError as e:
        print("raised:", str(e).splitlines()[0][:120])
    print("expect", __file__, LINE, "Net.forward")
    if "--check" not in sys.argv:
        return 0
    cli = sys.argv[sys.argv.index("--check") + 1]
    d = sys.argv[1]
    found = []
    for name in os.listdir(d):
        out = subprocess.run([cli, "dump", os.path.join(d, name)], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
        for line in out.splitlines():
            r = json.loads(line)
            if r.get("event") == "failure" and r.get("python"):
                found.append((r["fn"], r["python"][0]))
                if any(f["file"] == __file__ and f["line"] == LINE for f in r["python"]):
                    print("the failure of %s names %s:%d (%s)" % (r["fn"], os.path.basename(__file__), LINE,
                                                                  " < ".join("%s:%d" % (f["function"], f["line"])
                                                                             for f in r["python"][:4])))
                    return 0
    print("PROBLEM: no failure names %s:%d; failures with Python frames: %s" % (__file__, LINE, found[:5]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
