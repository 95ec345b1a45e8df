"""The repro of a PyTorch convolution (docs/repro.md): written from the records, built with the command
cudnnspy prints, run on this GPU. It must return the recorded status and, for a graph API execution, read
back the same engine (global index) and knobs as the original program did. Exit 1 when it does not.

usage: check_repro.py CUDNNSPY RECORDS_DIR
"""
import re
import shlex
import subprocess
import sys

cli, records = sys.argv[1], sys.argv[2]
listed = subprocess.run([cli, "repro", "--list", records], stdout=subprocess.PIPE, universal_newlines=True).stdout
pick = None
for line in listed.splitlines():
    # A graph execution first (PyTorch's convolutions go through cudnn-frontend), else a legacy convolution.
    if "-> CUDNN_STATUS_SUCCESS" in line and ("cudnnBackendExecute" in line or "cudnnConvolutionForward" in line):
        if pick is None or ("cudnnBackendExecute" in line and "cudnnBackendExecute" not in pick):
            pick = line
if not pick:
    print("  PROBLEM: no convolution call to replay in the records (cudnnspy repro --list):\n" + listed[:2000])
    sys.exit(1)
n = pick.split()[0]
print("  replaying call", n + ":", pick.split(None, 2)[2][:150])
src = "/tmp/gpu-repro.c"
p = subprocess.run([cli, "repro", "--call", n, "-o", src, records], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   universal_newlines=True)
if p.returncode != 0:
    print("  PROBLEM: cudnnspy repro failed:", p.stderr.strip())
    sys.exit(1)
cmd = p.stdout.strip()
print("  build:", cmd)
b = subprocess.run(shlex.split(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
if b.returncode != 0:
    print("  PROBLEM: the repro does not build:\n" + b.stdout[:3000])
    sys.exit(1)
r = subprocess.run([src[:-2], "--time"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                   timeout=300)
print("\n".join("  | " + line for line in r.stdout.splitlines()[:40]))
ok = r.returncode == 0 and "the same status as recorded" in r.stdout
# Each read-back the program made (engine global index, knob values) prints "X (recorded: Y)".
for name, got, want in re.findall(r"^(\S+) of backend#\d+: (-?\d+) (?:elements )?\(recorded: (-?\d+)\)", r.stdout, re.M):
    if got != want:
        print("  PROBLEM: %s is %s, the original program read %s" % (name, got, want))
        ok = False
engine = re.search(r"the program's plan ran engine (\d+), knobs (.*) \*/", open(src).read())
if engine:
    print("  the original plan: engine %s, knobs %s" % engine.groups())
print("  repro: " + ("the recorded status and engine" if ok else "PROBLEM (exit %d)" % r.returncode))
sys.exit(0 if ok else 1)
