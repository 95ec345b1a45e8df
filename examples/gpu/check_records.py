"""Reads one run's record directory and prints what a GPU check needs to see; exit 1 if something is missing.

usage: check_records.py DIR [--expect-gpu-time] [--expect-calls] [--expect-finding ID] [--expect-no-finding ID]
                         [--expect-graphs] [--expect-signature PREFIX]...
  --expect-signature PREFIX: some graph or plan record's signature starts with PREFIX ("attention-fwd")
"""
import glob
import json
import os
import subprocess
import sys

d = sys.argv[1]
want_gpu = "--expect-gpu-time" in sys.argv
want_calls = "--expect-calls" in sys.argv
want_graphs = "--expect-graphs" in sys.argv
want_findings = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--expect-finding"]
no_findings = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--expect-no-finding"]
want_sigs = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--expect-signature"]
graphs = []
files = glob.glob(os.path.join(d, "*.jsonl*")) + glob.glob(os.path.join(d, "*.cudnnspy.rec"))
# Records of either format are read through cudnnspy dump, next to this script's build.
CLI = os.environ.get("CUDNNSPY_CLI", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                   "cli", "cudnnspy"))


def lines(path):
    """Either record format, through cudnnspy dump."""
    return subprocess.run([CLI, "dump", path], stdout=subprocess.PIPE).stdout.splitlines()


problems = []
libs, findings, gpu, calls, failures, summaries = [], [], [], 0, [], []
for f in files:
    for line in lines(f):
        try:
            r = json.loads(line)
        except ValueError:
            problems.append("%s: a line is not JSON" % f)
            continue
        ev = r.get("event")
        if ev == "library":
            libs.append(r)
        elif ev == "finding":
            findings.append(r)
        elif ev == "gpu":
            gpu.append(r)
        elif ev == "failure":
            failures.append(r)
        elif ev in ("graph", "plan"):
            graphs.append(r)
        elif ev == "summary":
            summaries.append(r)
            calls += r["calls"]
answering = [l for l in libs if l.get("answers")]
print("  files: %d, cuDNN calls: %d, failures: %d, GPU times: %d" % (len(files), calls, len(failures), len(gpu)))
for l in libs:
    print("  library: %-12s %-60s version %s%s" % (l["kind"], l["real_path"], l["version"],
                                                   "  <- answers" if l.get("answers") else ""))
for f in findings:
    print("  finding: %s %s: %s" % (f["severity"], f["id"], f["message"]))
for f in failures[:5]:
    print("  failure: %s %s %s" % (f["fn"], f["status_name"], f.get("message")))
if summaries:
    top = sorted((fn for s in summaries for fn in s["functions"]), key=lambda fn: -fn.get("gpu_total_ns", 0))[:8]
    for fn in top:
        print("  %-45s calls %7d  cpu p50 %8d ns  gpu total %10.3f ms" % (fn["fn"], fn["calls"], fn["p50_ns"],
                                                                        fn.get("gpu_total_ns", 0) / 1e6))
if not files:
    problems.append("no record file")
if not answering:
    problems.append("no library record marks the answering cuDNN")
if want_calls and calls == 0:
    problems.append("no cuDNN call was counted")
if want_gpu and not gpu:
    problems.append("no GPU time was recorded")
for g in graphs[:4]:
    print("  %s: engine %s %s" % (g["event"], g.get("engine"), (g.get("signature") or "")[:120]))
sigs = sorted({g.get("signature") or "" for g in graphs})
for sig in sigs[:8]:
    print("  signature: %s" % sig[:200])
for prefix in want_sigs:
    if not any(sig.startswith(prefix) for sig in sigs):
        problems.append("no graph signature starts with %r" % prefix)
ids = {f["id"] for f in findings}
for fid in want_findings:
    if fid not in ids:
        problems.append("no %s finding" % fid)
for fid in no_findings:
    if fid in ids:
        problems.append("a %s finding, where none was expected" % fid)
if want_graphs and not graphs:
    problems.append("no graph or plan record")
for p in problems:
    print("  PROBLEM: " + p)
sys.exit(1 if problems else 0)
