#!/usr/bin/env python3
"""Records for `cudnnspy report` to read, and the report-speed benchmark.

usage: report-gen.py OUTDIR [--mb N] [--ranks N] [--no-summary]
       report-gen.py --bench CUDNNSPY [--mb N] [--ranks N] [--reps N] [--keep DIR]

The first form writes about N MB (default 200) of JSON Lines into OUTDIR, one
file per rank, as a traced training job would: every convolution, descriptor
and backend call recorded (CUDNNSPY_TRACE='*'), one failure in about 500
calls with its stack and recent calls, and the summary at exit. The lines
have the library's field order and sizes (docs/output-format.md).

The second form writes them into a temporary directory and times
`CUDNNSPY report` over them: the default report, --json, --full (every line
parsed) and --chrome to /dev/null. It prints MB/s and the peak RSS of each
run (getrusage of the child), pinned to one CPU with taskset when it exists,
the best of --reps runs (default 3) after one untimed run that warms the page
cache. The budget (200 MB/s for the default report) is printed as PASS or
OVER; the exit status is 0 whatever it says, 1 only when the benchmark cannot
run (a benchmark, not a test).
"""
import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

BUDGET_MBS = 200.0

X = '{"id":"tensor#%d","desc":"half NHWC %dx%dx%dx%d"}'
FNS = [
    # (name, weight, typical ns, args template filled by args_for)
    ("cudnnConvolutionForward", 30, 180_000),
    ("cudnnConvolutionBackwardData", 15, 260_000),
    ("cudnnConvolutionBackwardFilter", 15, 310_000),
    ("cudnnSetTensor4dDescriptor", 20, 400),
    ("cudnnGetConvolutionForwardWorkspaceSize", 8, 2_000),
    ("cudnnBackendExecute", 10, 90_000),
    ("cudnnGetVersion", 2, 60),
]


def args_for(fn, rng, i):
    t = i % 97 + 1
    shape = (rng.choice((32, 64, 128)), rng.choice((64, 128, 256)), rng.choice((7, 14, 28, 56)))
    xd = X % (t, shape[0], shape[1], shape[2], shape[2])
    if fn.startswith("cudnnConvolution"):
        return ('{"handle":"handle#1","alpha":{"ptr":"0x7ffd3c2a1e60","value":1},"xDesc":%s,'
                '"x":"0x7f1c2a000000","wDesc":{"id":"filter#%d","desc":"half NHWC %dx%dx3x3"},'
                '"w":"0x7f1c2b000000","convDesc":{"id":"convolution#%d","desc":"pad 1x1 stride 1x1 '
                'dilation 1x1 cross-correlation float","mathType":"CUDNN_TENSOR_OP_MATH"},'
                '"algo":"CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM","workSpace":"0x7f1c2c000000",'
                '"workSpaceSizeInBytes":%d,"beta":{"ptr":"0x7ffd3c2a1e68","value":0},"yDesc":%s,'
                '"y":"0x7f1c2d000000"}' % (xd, t, shape[1], shape[1], t, rng.randrange(1 << 20, 1 << 26), xd))
    if fn == "cudnnSetTensor4dDescriptor":
        return ('{"tensorDesc":%s,"format":"CUDNN_TENSOR_NHWC","dataType":"CUDNN_DATA_HALF","n":%d,"c":%d,'
                '"h":%d,"w":%d}' % (xd, shape[0], shape[1], shape[2], shape[2]))
    if fn == "cudnnGetConvolutionForwardWorkspaceSize":
        return ('{"handle":"handle#1","xDesc":%s,"wDesc":{"id":"filter#%d"},"convDesc":{"id":"convolution#%d"},'
                '"yDesc":%s,"algo":"CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM",'
                '"sizeInBytes":{"ptr":"0x7ffd3c2a1e70","value":%d}}' % (xd, t, t, xd, rng.randrange(1 << 26)))
    if fn == "cudnnBackendExecute":
        return '{"handle":"handle#1","executionPlan":"0x55d0c1a3e%03x","variantPack":"0x55d0c1a4f000"}' % t
    return "{}"


STACK = ('[{"module":"/opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so","offset":"0x%x",'
         '"symbol":"at::native::cudnn_convolution_forward"},{"module":"/opt/conda/lib/python3.11/site-packages/'
         'torch/lib/libtorch_cuda.so","offset":"0x2a4f10","symbol":null},{"module":"/opt/conda/lib/python3.11/'
         'site-packages/torch/lib/libtorch_python.so","offset":"0x91c2e0","symbol":null},{"module":"/opt/conda/'
         'bin/python3.11","offset":"0x1f3a10","symbol":"_PyEval_EvalFrameDefault"},{"module":"/lib/x86_64-'
         'linux-gnu/libc.so.6","offset":"0x27305","symbol":"__libc_start_main"}]')


def write_rank(path, rank, target_bytes, summary=True, seed=1):
    rng = random.Random(seed * 1000 + rank)
    pid = 40000 + rank
    tids = [pid, pid + 11, pid + 12, pid + 13]
    mono = 5_000_000_000_000
    names = [f[0] for f in FNS]
    weights = [f[1] for f in FNS]
    typical = {f[0]: f[2] for f in FNS}
    stats = {n: [0, 0, 0] for n in names}	# calls, failures, total_ns
    written = 0
    t = mono + 1000
    i = 0
    recent = []
    with open(path, "w") as f:
        head = ('{"event":"header","schema":1,"spy":"0.1.0","mode":"preload","program":"python3.11",'
                '"argv":["python3.11","train.py","--epochs","90"],"pid":%d,"ppid":%d,"host":"gpu-node-%02d",'
                '"rank":%d,"start_unix_ns":%d,"start_mono_ns":%d,"library":{"path":"/opt/conda/lib/python3.11/'
                'site-packages/nvidia/cudnn/lib/libcudnn.so.9","version":91900,"cudart":12080,'
                '"how":"loaded by the program"}}\n' % (pid, pid - 1, rank // 8, rank, 1_700_000_000_000_000_000,
                                                       mono))
        f.write(head)
        written += len(head)
        buf = []
        while written < target_bytes:
            fn = rng.choices(names, weights)[0]
            dur = int(typical[fn] * (0.5 + rng.random()))
            tid = tids[i % 4]
            args = args_for(fn, rng, i)
            if i % 499 == 498:
                rec = ('{"event":"failure","fn":"%s","status":3000,"status_name":"CUDNN_STATUS_NOT_SUPPORTED",'
                       '"tid":%d,"t_ns":%d,"dur_ns":%d,"args":%s,"message":"no engine supports this '
                       'configuration (layout %d)","recent":[%s],"stack":%s}\n'
                       % (fn, tid, t, dur, args, i % 3, ",".join('{"fn":"%s","status":0}' % r for r in recent),
                          STACK % (0x1000 + i % 5)))
                stats[fn][1] += 1
            else:
                status_name = "null" if fn == "cudnnGetVersion" else '"CUDNN_STATUS_SUCCESS"'
                rec = ('{"event":"call","fn":"%s","status":0,"status_name":%s,"tid":%d,"t_ns":%d,"dur_ns":%d,'
                       '"args":%s}\n' % (fn, status_name, tid, t, dur, args))
            stats[fn][0] += 1
            stats[fn][2] += dur
            recent = (recent + [fn])[-16:]
            t += dur + 500
            i += 1
            buf.append(rec)
            written += len(rec)
            if len(buf) >= 4096:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))
        if summary:
            fns = ",".join('{"fn":"%s","calls":%d,"failures":%d,"internal":0,"timed":%d,"total_ns":%d,'
                           '"min_ns":%d,"max_ns":%d,"p50_ns":%d,"p99_ns":%d}'
                           % (n, s[0], s[1], s[0], s[2], typical[n] // 2, typical[n] * 3 // 2, typical[n],
                              typical[n] * 3 // 2) for n, s in sorted(stats.items(), key=lambda x: -x[1][0]))
            tail = ('{"event":"summary","calls":%d,"failures":%d,"internal":0,"dropped":0,"functions":[%s]}\n'
                    % (sum(s[0] for s in stats.values()), sum(s[1] for s in stats.values()), fns))
            f.write(tail)
    return i


def generate(outdir, mb=200.0, ranks=8, summary=True):
    """Writes the files; returns (bytes written, calls)."""
    os.makedirs(outdir, exist_ok=True)
    per = int(mb * 1e6 / ranks)
    calls = 0
    for r in range(ranks):
        calls += write_rank(os.path.join(outdir, "python3.11.gpu-node-%02d.%d.r%d.cudnnspy.jsonl"
                                         % (r // 8, 40000 + r, r)), r, per, summary=summary)
    size = sum(os.path.getsize(os.path.join(outdir, n)) for n in os.listdir(outdir))
    return size, calls


GNU_TIME = "/usr/bin/time"


def timed_run(argv):
    """Runs ARGV; returns (seconds, peak RSS in KiB, exit status).

    The peak RSS comes from GNU time when it is there: a child forked from
    this Python would count the Python's own pages too, since ru_maxrss
    survives exec. Without it, getrusage of the child is an upper bound.
    """
    rss_file = None
    if os.access(GNU_TIME, os.X_OK):
        fd, rss_file = tempfile.mkstemp(prefix="cudnnspy-report-rss.")
        os.close(fd)
        argv = [GNU_TIME, "-f", "%M", "-o", rss_file] + argv
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    elapsed = time.monotonic() - t0
    rss = ru.ru_maxrss
    if rss_file:
        try:
            with open(rss_file) as f:
                rss = int(f.read().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
        os.unlink(rss_file)
    return elapsed, rss, os.waitstatus_to_exitcode(status)


def bench(args):
    exe = os.path.abspath(args.bench)
    if not os.access(exe, os.X_OK):
        print("report-speed: %s is not there; build first" % exe)
        return 1
    tmp = args.keep or tempfile.mkdtemp(prefix="cudnnspy-report-bench.")
    try:
        t0 = time.monotonic()
        size, calls = generate(tmp, args.mb, args.ranks)
        print("report-speed: %.1f MB in %d files, %d call and failure records (generated in %.1f s)"
              % (size / 1e6, args.ranks, calls, time.monotonic() - t0))
        pin = ["taskset", "-c", "1"] if shutil.which("taskset") and os.cpu_count() and os.cpu_count() > 1 else []
        print("report-speed: %s; peak RSS from %s" % ("pinned to CPU 1" if pin else "not pinned",
              "GNU time" if os.access(GNU_TIME, os.X_OK) else "getrusage (an upper bound)"))
        runs = [("report", []), ("report --json", ["--json"]), ("report --full", ["--full"]),
                ("report --chrome /dev/null", ["--chrome", "/dev/null"])]
        if args.quick:
            runs = runs[:1]
        rc = 0
        for label, extra in runs:
            argv = pin + [exe, "report"] + extra + [tmp]
            timed_run(argv)	# the page cache, warm
            best = None
            for _ in range(args.reps):
                secs, rss, code = timed_run(argv)
                if code != 0:
                    print("report-speed: %s exited %d" % (" ".join(argv), code))
                    rc = 1
                if best is None or secs < best[0]:
                    best = (secs, rss)
            mbs = size / 1e6 / best[0]
            verdict = ""
            if label == "report":
                verdict = "  %s (budget >= %.0f MB/s)" % ("PASS" if mbs >= BUDGET_MBS else "OVER", BUDGET_MBS)
            print("report-speed: %-28s %7.2f s  %7.1f MB/s  peak RSS %6.1f MiB%s"
                  % (label, best[0], mbs, best[1] / 1024.0, verdict))
        return rc
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--bench", metavar="CUDNNSPY")
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and leave it there")
    ap.add_argument("--quick", action="store_true", help="the default report only")
    ap.add_argument("--no-summary", action="store_true", help="files without the summary line")
    args = ap.parse_args()
    if args.bench:
        return bench(args)
    if not args.outdir:
        ap.error("OUTDIR or --bench CUDNNSPY")
    size, calls = generate(args.outdir, args.mb, args.ranks, summary=not args.no_summary)
    print("%d bytes, %d records in %s" % (size, calls, args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
