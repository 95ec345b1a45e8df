#!/usr/bin/env python3
"""The overhead benchmark (issue 8): what the spy costs per cuDNN call.

usage: run-bench.py BUILD_DIR [--real DIR | --fake] [--reps N] [--quick]

Runs BUILD_DIR/bench/bench in these configurations, one after another, and
prints ns per call, the overhead over the direct call and the ratio to it:

  direct     no spy
  preload    LD_PRELOAD=libcudnnspy.so, default settings (CUDNNSPY_STDERR=none)
  trace      preload, every call recorded as JSON Lines (record format 1): CUDNNSPY_TRACE='*'
             CUDNNSPY_OUTPUT=<tmpdir> CUDNNSPY_FORMAT=json
  trace-bin  the same in record format 2, the default: CUDNNSPY_FORMAT=binary
  drop-in    the drop-in libcudnn.so.9 first on LD_LIBRARY_PATH, default settings
  cudnn-log  no spy, cuDNN's own API log: CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=<tmpfile>
             (real cuDNN only; fewer iterations, the log costs microseconds a call)

then direct, preload, trace and trace-bin again with 2 threads calling at once; the
slow paths (a call that fails, in default settings and recorded, and a traced
call that records its stack: CUDNNSPY_BACKTRACE); and a memory check: 10 million cudnnGetVersion calls, every one recorded, and the
growth of VmRSS measured inside the program; and the reading side: `cudnnspy dump` and
`cudnnspy report` over 10 million records of format 2.

Against the real cuDNN when there is one (--real, else tests/find-real-cudnn.py),
otherwise against the fake one; the first lines say which. Single-thread runs
are pinned to one CPU with taskset when it exists. Each budget line says PASS
or OVER; the exit status is 0 whatever they say (a benchmark, not a test), and
1 only when the benchmark itself could not run.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

FUNCTIONS = [("set4d", "cudnnSetTensor4dDescriptor"), ("version", "cudnnGetVersion"),
             ("setattr", "cudnnBackendSetAttribute"), ("setnd", "cudnnSetTensorNdDescriptor")]

# Iterations per timed run, each run a fresh process: a few tenths of a second each.
ITERATIONS = {"direct": 2_000_000, "preload": 2_000_000, "drop-in": 2_000_000, "two-copies": 2_000_000,
              "trace": 200_000, "trace-bin": 200_000, "cudnn-log": 20_000}
SLOW_ITERATIONS = 20_000	# the slow paths: microseconds a call before issue 17
# (configuration, function) of the slow-path runs, each against (direct, function)
SLOW = [("preload", "fail"), ("record", "fail"), ("stack", "set4d")]
SLOW_TEXT = {("preload", "fail"): "a failed call, default settings",
             ("record", "fail"): "a failed call, recorded (CUDNNSPY_OUTPUT)",
             ("stack", "set4d"): "a traced call with its stack (CUDNNSPY_BACKTRACE)"}
BUDGET_SLOW_NS = 2000.0
MEMORY_CALLS = 10_000_000
RECORD_BYTES = 140	# about one JSON line for cudnnGetVersion: sizes the disk check

# Issue 17's budgets. Default settings: per function.
BUDGET_DEFAULT_NS = {"set4d": 12.0, "version": 5.0, "setattr": 20.0}
# Every call recorded (record format 2): per function, and cuDNN's log at least this many times the spy's cost.
BUDGET_TRACE_NS = {"set4d": 120.0, "version": 60.0}
BUDGET_VS_LOG = 100.0
BUDGET_BYTES = 64.0	# on disk per traced cudnnSetTensor4dDescriptor
BUDGET_THREADS = 1.2
BUDGET_MEMORY_MIB = 16.0
BUDGET_DUMP_MBS = 200.0	# JSON written by cudnnspy dump
BUDGET_REPORT_S = 10.0	# cudnnspy report over READ_RECORDS records
# Issue 26: default settings with a second copy mapped (the exported names then route by caller), over preload.
BUDGET_TWO_COPIES_NS = 10.0
# Issue 28 (the mapped writer): every call recorded in format 2, per function, in ns and in instructions over
# direct; a failure written to a record file; bytes on disk per traced cudnnSetTensor4dDescriptor.
BUDGET_28_TRACE_NS = {"set4d": 60.0, "setnd": 150.0}
BUDGET_28_TRACE_INSTR = {"set4d": 600, "setnd": 1500}
BUDGET_28_FAIL_NS = 1000.0
BUDGET_28_BYTES = 48.0

CONFIG_TEXT = {
    "direct": "direct, no spy",
    "preload": "preload, default settings",
    "trace": "preload, every call recorded",
    "trace-bin": "every call recorded, format 2",
    "drop-in": "drop-in, default settings",
    "cudnn-log": "cuDNN's own API log, no spy",
    "record": "preload, records on, no trace",
    "stack": "preload, traced with its stack",
    "two-copies": "preload, a second copy mapped",
}


class BenchError(Exception):
    pass


def find_real(explicit):
    if explicit:
        return os.path.realpath(explicit) if os.path.exists(os.path.join(explicit, "libcudnn.so.9")) else ""
    try:
        out = subprocess.run([sys.executable, os.path.join(HERE, "..", "tests", "find-real-cudnn.py")],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    # The drop-in forwards to a libcudnn.so.9: a cuDNN 8 directory is no use here.
    return out if out and os.path.exists(os.path.join(out, "libcudnn.so.9")) else ""


def clean_env():
    """The caller's environment less anything that would change which library answers or what it does."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDNNSPY_", "CUDNN_LOG")) and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    return env


class Bench:
    def __init__(self, build, libdir, real):
        self.build = build
        self.libdir = libdir
        self.real = real
        self.exe = os.path.join(build, "bench", "bench")
        self.spy = os.path.join(build, "shim", "libcudnnspy.so")
        self.dropin = os.path.join(build, "shim", "dropin9")
        self.cli = os.path.join(build, "cli", "cudnnspy")
        for path in (self.exe, self.spy, self.cli, os.path.join(self.dropin, "libcudnn.so.9"),
                     os.path.join(libdir, "libcudnn.so.9")):
            if not os.path.exists(path):
                raise BenchError("missing %s: build first (ninja -C %s)" % (path, build))
        self.tmp = tempfile.mkdtemp(prefix="cudnnspy-bench.")
        self.pin = self.pick_cpu()
        # Another cuDNN file for two-copies: a copy of the fake, never the one that answers.
        self.second = os.path.join(self.tmp, "second", "libcudnn.so.9")
        os.makedirs(os.path.dirname(self.second))
        shutil.copy(os.path.join(build, "tests", "fake", "fake9", "libcudnn.so.9"), self.second)

    @staticmethod
    def pick_cpu():
        """One CPU for single-thread runs: the last one we may use, away from CPU 0's interrupts."""
        if not shutil.which("taskset") or not hasattr(os, "sched_getaffinity"):
            return None
        cpus = sorted(os.sched_getaffinity(0))
        return cpus[-1] if cpus else None

    def env(self, config, workdir):
        env = clean_env()
        env["LD_LIBRARY_PATH"] = self.libdir
        if config in ("preload", "trace", "trace-bin", "record", "stack", "two-copies"):
            env["LD_PRELOAD"] = self.spy
        if config == "drop-in":
            # The drop-in first; it finds the real (or fake) copy by searching the same path.
            env["LD_LIBRARY_PATH"] = self.dropin + os.pathsep + self.libdir
        if config in ("preload", "trace", "trace-bin", "drop-in", "record", "stack", "two-copies"):
            env["CUDNNSPY_STDERR"] = "none"
        if config in ("trace", "trace-bin"):
            env["CUDNNSPY_TRACE"] = "*"
            env["CUDNNSPY_OUTPUT"] = workdir
        if config in ("trace", "trace-bin"):
            env["CUDNNSPY_FORMAT"] = "json" if config == "trace" else "binary"
        if config in ("record", "stack"):
            env["CUDNNSPY_OUTPUT"] = workdir
        if config == "stack":
            env["CUDNNSPY_TRACE"] = env["CUDNNSPY_BACKTRACE"] = "cudnnSetTensor4dDescriptor"
        if config == "cudnn-log":
            env["CUDNN_LOGLEVEL_DBG"] = "3"
            env["CUDNN_LOGDEST_DBG"] = os.path.join(workdir, "cudnn.log")
        return env

    def records(self, workdir):
        """Records in the files of workdir, through cudnnspy dump (either format): one per line."""
        lines = 0
        p = subprocess.Popen([self.cli, "dump", workdir], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        while True:
            chunk = p.stdout.read(1 << 22)
            if not chunk:
                break
            lines += chunk.count(b"\n")
        p.wait()
        return lines

    def run(self, config, fn, iterations, threads=1, rss=False, keep=None):
        """One process; returns (per-thread ns/call list, parsed key=value facts, bytes it wrote)."""
        workdir = keep or tempfile.mkdtemp(dir=self.tmp)
        argv = [self.exe, fn, str(iterations), str(threads)] + (["--rss"] if rss else [])
        if config == "two-copies":
            argv += ["--second-copy", self.second]
        env = self.env(config, workdir)
        if fn == "fail" and not self.real:
            env["FAKECUDNN_STATUS"] = "cudnnSetTensor4dDescriptor=2000"	# the fake checks no dimension
        if threads == 1 and self.pin is not None:
            argv = ["taskset", "-c", str(self.pin)] + argv
        try:
            p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                raise BenchError("%s %s: exit %d\n%s%s" % (config, " ".join(argv), p.returncode, p.stdout, p.stderr))
            ns, facts = [], {}
            for line in p.stdout.splitlines():
                if line.startswith("library="):
                    facts["library"] = line[len("library="):]
                    continue
                kv = dict(re.findall(r"(\w+)=(\S+)", line))
                if "ns_per_call" in kv:
                    ns.append(float(kv["ns_per_call"]))
                elif line.startswith("rss_kib"):
                    facts.update({"rss_" + k: int(v) for k, v in kv.items()})
                else:
                    facts.update(kv)
            if len(ns) != threads:
                raise BenchError("%s: expected %d result lines\n%s" % (config, threads, p.stdout))
            want = self.expected_library(config)
            got = os.path.realpath(facts.get("library", "?"))
            if got != want:
                raise BenchError("%s: the program's calls go to %s, not %s" % (config, got, want))
            written = sum(os.path.getsize(os.path.join(workdir, name)) for name in os.listdir(workdir))
            lines = self.records(workdir) if config in ("trace", "trace-bin", "stack", "record") else 0
            # The timing means nothing if the calls were not recorded (or logged) after all.
            if config in ("trace", "trace-bin", "stack", "record") and lines < threads * iterations:
                raise BenchError("%s: %d record lines for %d calls" % (config, lines, threads * iterations))
            if config == "cudnn-log" and written == 0:
                raise BenchError("cudnn-log: cuDNN wrote no log")
            return ns, facts, written
        finally:
            if not keep:
                shutil.rmtree(workdir, ignore_errors=True)

    def expected_library(self, config):
        """The file that the program's own cuDNN calls reach in this configuration."""
        if config in ("preload", "trace", "trace-bin", "record", "stack", "two-copies"):
            return os.path.realpath(self.spy)
        if config == "drop-in":
            return os.path.realpath(os.path.join(self.dropin, "libcudnn.so.9"))
        return os.path.realpath(os.path.join(self.libdir, "libcudnn.so.9"))

    def banner(self, config):
        """Which library the spy found, from its own banner: a run that proves the spy is in the path."""
        env = self.env(config, self.tmp)
        env["CUDNNSPY_STDERR"] = "banner"
        p = subprocess.run([self.exe, "version", "100"], env=env, capture_output=True, text=True, timeout=60)
        m = re.search(r"cudnnspy: ([\w-]+): (.*)", p.stderr)
        if not m:
            raise BenchError("%s: no cudnnspy banner on stderr; is the spy loaded?\n%s" % (config, p.stderr))
        return m.group(0)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def source_version():
    """The commit measured: the numbers move as the spy changes."""
    try:
        head = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no", "--", "shim"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    return "commit %s%s" % (head.stdout.strip(), ", shim/ has uncommitted changes" if dirty.stdout.strip() else "")


def verdict(ok):
    return "n/a " if ok is None else ("PASS" if ok else "OVER")


def main():
    ap = argparse.ArgumentParser(description="cudnnspy overhead benchmark")
    ap.add_argument("build", help="the meson build directory")
    ap.add_argument("--real", default=None, help="directory of the real libcudnn.so.9 (default: search)")
    ap.add_argument("--reps", type=int, default=5, help="runs per configuration; the median is reported")
    ap.add_argument("--fake", action="store_true", help="the fake cuDNN even when a real one is found")
    ap.add_argument("--quick", action="store_true", help="a tenth of the iterations (a smoke test)")
    ap.add_argument("--no-callgrind", action="store_true", help="leave out the instruction counts (valgrind)")
    args = ap.parse_args()

    if args.reps < 1:
        ap.error("--reps must be at least 1")
    build = os.path.abspath(args.build)
    real = "" if args.fake else find_real(args.real)
    libdir = real or os.path.join(build, "tests", "fake", "fake9")
    scale = 10 if args.quick else 1
    iterations = {k: max(v // scale, 1000) for k, v in ITERATIONS.items()}
    try:
        bench = Bench(build, libdir, real)
    except BenchError as e:
        print("run-bench: %s" % e, file=sys.stderr)
        return 1
    try:
        return report(bench, args.reps, iterations, MEMORY_CALLS // scale, not args.no_callgrind)
    except BenchError as e:
        print("run-bench: %s" % e, file=sys.stderr)
        return 1
    finally:
        bench.close()


def instructions(bench, config, fn):
    """Instructions per call under callgrind: the difference of two runs 100,000 calls apart (the same warm-up)."""
    counts = []
    for n in (100_000, 200_000):
        workdir = tempfile.mkdtemp(dir=bench.tmp)
        out = os.path.join(workdir, "callgrind.out")
        env = bench.env(config, workdir)
        if fn == "fail" and not bench.real:
            env["FAKECUDNN_STATUS"] = "cudnnSetTensor4dDescriptor=2000"
        extra = ["--second-copy", bench.second] if config == "two-copies" else []
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, bench.exe, fn, str(n)] + extra,
                           env=env, capture_output=True, text=True, timeout=600)
        m = re.search(r"Collected : (\d+)", p.stderr)
        shutil.rmtree(workdir, ignore_errors=True)
        if p.returncode != 0 or not m:
            return None
        counts.append(int(m.group(1)))
    return (counts[1] - counts[0]) / 100_000.0


def traced_line(overhead, name, budget):
    """A budget line of a function's overhead, every call recorded in format 2."""
    return ("%s, %s: overhead <= %.0f ns" % (CONFIG_TEXT["trace-bin"], name, budget), "%+.1f ns" % overhead,
            overhead <= budget)


def report(bench, reps, iterations, memory_calls, callgrind=True):
    started = time.monotonic()
    configs = ["direct", "preload", "trace", "trace-bin", "drop-in", "two-copies"] + (["cudnn-log"] if bench.real else [])
    threaded = ["direct", "preload", "trace", "trace-bin"]

    _, facts, _ = bench.run("direct", "version", 1000)
    v = int(facts.get("version", 0))
    print("cudnnspy overhead benchmark")
    print("library:   %s cuDNN %d.%d.%d (%d) in %s" % ("real" if bench.real else "FAKE (no real cuDNN used)",
          v // 10000, v % 10000 // 100, v % 100, v, bench.libdir))
    for config in ("preload", "drop-in"):
        print("spy:       %s" % bench.banner(config))
    print("source:    %s" % source_version())
    print("machine:   %d CPUs; %s" % (os.cpu_count(), "1-thread runs pinned to CPU %d with taskset" % bench.pin
                                       if bench.pin is not None else "not pinned (no taskset)"))
    print("method:    median of %d runs, each a fresh process, after an untimed warm-up; runs interleaved" % reps)
    print("           iterations per run: %s" % ", ".join("%s %d" % (c, iterations[c]) for c in configs))
    if bench.real:
        print("           (cuDNN's own log costs microseconds a call, hence its fewer iterations)")
    print()

    # Reps outermost: a slow spell of the machine hits every configuration alike.
    one = {}	# (config, fn) -> [ns]
    two = {}	# (config, fn) -> [[ns thread 0, ns thread 1]]
    size = {}	# (config, fn) -> bytes written per call
    for _ in range(reps):
        for fn, _name in FUNCTIONS:
            for config in configs:
                ns, _, written = bench.run(config, fn, iterations[config])
                one.setdefault((config, fn), []).append(ns[0])
                size[(config, fn)] = written / float(iterations[config])
            for config in threaded:
                ns, _, _ = bench.run(config, fn, iterations[config], threads=2)
                two.setdefault((config, fn), []).append(ns)

    med1 = {k: statistics.median(v) for k, v in one.items()}
    print("One thread (ns per call; overhead = this - direct; spread = min..max of the %d runs)" % reps)
    print("%-28s %-30s %9s %9s %10s %8s  %s" % ("function", "configuration", "iters", "ns/call", "overhead",
                                               "ratio", "spread"))
    for fn, name in FUNCTIONS:
        base = med1[("direct", fn)]
        for config in configs:
            m = med1[(config, fn)]
            runs = one[(config, fn)]
            print("%-28s %-30s %9d %9.1f %10s %7.2fx  %.1f..%.1f" % (
                name, CONFIG_TEXT[config], iterations[config], m,
                "-" if config == "direct" else "%+.1f" % (m - base), m / base, min(runs), max(runs)))
    print()
    print("Bytes on disk per recorded call")
    for fn, name in FUNCTIONS:
        print("%-28s format 1 (JSON) %6.1f   format 2 %6.1f" % (name, size[("trace", fn)], size[("trace-bin", fn)]))
    print()

    print("Two threads at once (ns per call in each thread; overhead over direct with 2 threads)")
    print("%-28s %-30s %9s %9s %9s %10s %10s %8s" % ("function", "configuration", "thread 0", "thread 1", "mean",
                                                    "overhead", "1-thread", "2t/1t"))
    med2 = {}
    for fn, name in FUNCTIONS:
        for config in threaded:
            med2[(config, fn)] = statistics.median(sum(r) / len(r) for r in two[(config, fn)])
        for config in threaded:
            runs = two[(config, fn)]
            t0 = statistics.median(r[0] for r in runs)
            t1 = statistics.median(r[1] for r in runs)
            if config == "direct":
                print("%-28s %-30s %9.1f %9.1f %9.1f %10s %10s %8s" % (name, CONFIG_TEXT[config], t0, t1,
                                                                      med2[(config, fn)], "-", "-", "-"))
                continue
            o2 = med2[(config, fn)] - med2[("direct", fn)]
            o1 = med1[(config, fn)] - med1[("direct", fn)]
            print("%-28s %-30s %9.1f %9.1f %9.1f %+10.1f %+10.1f %7.2fx" % (
                name, CONFIG_TEXT[config], t0, t1, med2[(config, fn)], o2, o1, o2 / o1 if o1 > 0 else float("nan")))
    print()

    # The slow paths (issue 17): a failure, and a traced call that records its stack.
    slow = {}	# (config, fn) -> [ns], with ("direct", fn) for each fn
    scale = max(ITERATIONS["direct"] // iterations["direct"], 1)	# 10 with --quick
    slow_iters = max(SLOW_ITERATIONS // scale, 1000)
    for _ in range(reps):
        for config, fn in [("direct", "fail"), ("direct", "set4d")] + SLOW:
            ns, _, _ = bench.run(config, fn, slow_iters)
            slow.setdefault((config, fn), []).append(ns[0])
    meds = {k: statistics.median(v) for k, v in slow.items()}
    print("Slow paths (ns per call, %d calls a run; fail: cudnnSetTensor4dDescriptor with a dimension of 0)" %
          slow_iters)
    print("%-52s %9s %10s  %s" % ("what", "ns/call", "overhead", "spread"))
    for config, fn in [("direct", "fail"), ("direct", "set4d")] + SLOW:
        runs = slow[(config, fn)]
        what = SLOW_TEXT.get((config, fn), "%s, no spy" % ("a failed call" if fn == "fail" else "a call"))
        print("%-52s %9.1f %10s  %.1f..%.1f" % (what, meds[(config, fn)], "-" if config == "direct" else
                                                "%+.1f" % (meds[(config, fn)] - meds[("direct", fn)]), min(runs),
                                                max(runs)))
    print()

    # Memory: every call recorded, one process, VmRSS read by the program itself.
    free = shutil.disk_usage(bench.tmp).free
    calls = memory_calls
    note = ""
    if calls * RECORD_BYTES * 1.5 > free:
        calls = max(int(free / (RECORD_BYTES * 1.5)) // 1_000_000 * 1_000_000, 100_000)
        note = " (fewer than %d: only %.1f GiB free in %s for the records)" % (memory_calls, free / 2**30, bench.tmp)
    t = time.monotonic()
    keep = tempfile.mkdtemp(dir=bench.tmp)
    ns, facts, written = bench.run("trace-bin", "version", calls, rss=True, keep=keep)
    mem_s = time.monotonic() - t
    growth = (facts["rss_end"] - facts["rss_warm"]) / 1024.0
    growth_start = (facts["rss_end"] - facts["rss_start"]) / 1024.0
    print("Memory: %d cudnnGetVersion calls, every one recorded (format 2)%s" % (calls, note))
    print("  VmRSS %.1f MiB at start, %.1f MiB after the warm-up, %.1f MiB after the loop" % (
        facts["rss_start"] / 1024.0, facts["rss_warm"] / 1024.0, facts["rss_end"] / 1024.0))
    print("  growth over the loop %+.1f MiB (%+.1f MiB from the start); %.1f ns/call; %.0f MB of records; %.1f s" % (
        growth, growth_start, ns[0], written / 1e6, mem_s))
    print()

    # Reading (issue 17): dump's JSON throughput and report's time, over the records the memory run left.
    t = time.monotonic()
    p = subprocess.Popen([bench.cli, "dump", keep], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out_bytes = records = 0
    while True:
        chunk = p.stdout.read(1 << 22)
        if not chunk:
            break
        out_bytes += len(chunk)
        records += chunk.count(b"\n")
    p.wait()
    dump_s = time.monotonic() - t
    t = time.monotonic()
    rep = subprocess.run([bench.cli, "report", keep], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report_s = time.monotonic() - t
    t = time.monotonic()
    rep_full = subprocess.run([bench.cli, "report", "--full", keep], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    full_s = time.monotonic() - t
    shutil.rmtree(keep, ignore_errors=True)
    dump_mbs = out_bytes / 1e6 / dump_s if dump_s > 0 else float("inf")
    print("Reading those %d records (%.0f MB of format 2)" % (records, written / 1e6))
    print("  cudnnspy dump: %.0f MB of JSON in %.2f s, %.0f MB/s (exit %d)" % (out_bytes / 1e6, dump_s, dump_mbs,
                                                                               p.returncode))
    print("  cudnnspy report: %.2f s (exit %d); report --full, every record parsed: %.2f s (exit %d)" % (
        report_s, rep.returncode, full_s, rep_full.returncode))
    print()

    # Instructions beside the times: they do not drift with the machine's load.
    instr = {}	# (config, fn) -> instructions per call
    if callgrind and shutil.which("valgrind"):
        print("Instructions per call (callgrind; the difference of two runs 100,000 calls apart)")
        print("%-28s %-30s %10s %10s" % ("function", "configuration", "instr", "overhead"))
        rows = [(fn, name, c) for fn, name in FUNCTIONS
                for c in ("direct", "preload", "trace", "trace-bin", "two-copies")]
        rows += [("fail", "a failed call", "direct"), ("fail", "a failed call", "record")]
        for fn, name, config in rows:
            instr[(config, fn)] = n = instructions(bench, config, fn)
            base = instr.get(("direct", fn))
            what = CONFIG_TEXT[config] if fn != "fail" else "recorded (CUDNNSPY_OUTPUT)" if config == "record" else "no spy"
            if n is None or base is None:
                print("%-28s %-30s %10s" % (name, what, "n/a"))
                continue
            print("%-28s %-30s %10.0f %10s" % (name, what, n, "-" if config == "direct" else "%+.0f" % (n - base)))
        print()
    elif callgrind:
        print("Instructions per call: no valgrind here (apt-get install valgrind), left out")
        print()

    print("Budgets (issue 17; medians; one core unless it says 2 threads)")
    lines = []
    for fn, name in FUNCTIONS:
        for config in ("preload", "drop-in"):
            if fn not in BUDGET_DEFAULT_NS:
                continue
            o = med1[(config, fn)] - med1[("direct", fn)]
            lines.append(("%s, %s: overhead <= %.0f ns" % (CONFIG_TEXT[config], name, BUDGET_DEFAULT_NS[fn]),
                          "%+.1f ns" % o, o <= BUDGET_DEFAULT_NS[fn]))
    for fn, name in FUNCTIONS:
        if fn not in BUDGET_DEFAULT_NS:
            continue
        o = med1[("two-copies", fn)] - med1[("preload", fn)]
        lines.append(("%s, %s: over one copy <= %.0f ns" % (CONFIG_TEXT["two-copies"], name, BUDGET_TWO_COPIES_NS),
                      "%+.1f ns" % o, o <= BUDGET_TWO_COPIES_NS))
    for fn, name in FUNCTIONS:
        if fn not in BUDGET_TRACE_NS:
            continue
        o = med1[("trace-bin", fn)] - med1[("direct", fn)]
        lines.append(traced_line(o, name, BUDGET_TRACE_NS[fn]))
        if bench.real:
            log = med1[("cudnn-log", fn)] - med1[("direct", fn)]
            x = log / o if o > 0 else float("inf")
            lines.append(("%s, %s: cuDNN's log >= %.0fx its overhead" % (CONFIG_TEXT["trace-bin"], name,
                                                                         BUDGET_VS_LOG),
                          "%.1fx (%.0f vs %.0f ns)" % (x, o, log), x >= BUDGET_VS_LOG))
        else:
            lines.append(("%s, %s: cuDNN's log >= %.0fx its overhead" % (CONFIG_TEXT["trace-bin"], name,
                                                                         BUDGET_VS_LOG), "no real cuDNN", None))
    b = size[("trace-bin", "set4d")]
    lines.append(("%s, cudnnSetTensor4dDescriptor: <= %.0f bytes on disk a call" % (CONFIG_TEXT["trace-bin"],
                                                                                   BUDGET_BYTES),
                  "%.1f bytes (format 1: %.1f)" % (b, size[("trace", "set4d")]), b <= BUDGET_BYTES))
    for fn, name in FUNCTIONS:
        for config in ("preload", "trace-bin"):
            if fn not in BUDGET_DEFAULT_NS:
                continue
            o1 = med1[(config, fn)] - med1[("direct", fn)]
            o2 = med2[(config, fn)] - med2[("direct", fn)]
            x = o2 / o1 if o1 > 0 else None
            lines.append(("2 threads, %s, %s: overhead <= %.1fx one thread's" % (CONFIG_TEXT[config], name,
                                                                                   BUDGET_THREADS),
                          "%.2fx (%+.1f vs %+.1f ns)" % (x, o2, o1) if x is not None else "%+.1f vs %+.1f ns" % (o2, o1),
                          x <= BUDGET_THREADS if x is not None else None))
    for key in (("preload", "fail"), ("stack", "set4d")):
        o = meds[key] - meds[("direct", key[1])]
        lines.append(("%s: overhead <= %.0f ns" % (SLOW_TEXT[key], BUDGET_SLOW_NS), "%+.1f ns" % o,
                      o <= BUDGET_SLOW_NS))
    lines.append(("memory, %d recorded calls: VmRSS growth < %.0f MiB" % (calls, BUDGET_MEMORY_MIB),
                  "%+.1f MiB" % growth, growth < BUDGET_MEMORY_MIB))
    lines.append(("cudnnspy dump: >= %.0f MB/s of JSON" % BUDGET_DUMP_MBS, "%.0f MB/s" % dump_mbs,
                  dump_mbs >= BUDGET_DUMP_MBS))
    lines.append(("cudnnspy report over %d records: < %.0f s" % (records, BUDGET_REPORT_S), "%.2f s" % report_s,
                  report_s < BUDGET_REPORT_S and rep.returncode == 0))
    width = max(len(t) for t, _, _ in lines)
    for text, measured, ok in lines:
        print("  %s  %-*s  %s" % (verdict(ok), width, text, measured))
    print()
    print("Budgets (issue 28: records that survive any ending; medians, one core; instructions by callgrind)")
    lines = []
    for fn, name in FUNCTIONS:
        if fn not in BUDGET_28_TRACE_NS:
            continue
        lines.append(traced_line(med1[("trace-bin", fn)] - med1[("direct", fn)], name, BUDGET_28_TRACE_NS[fn]))
        n, base = instr.get(("trace-bin", fn)), instr.get(("direct", fn))
        lines.append(("%s, %s: <= %d instructions over direct" % (CONFIG_TEXT["trace-bin"], name,
                                                                BUDGET_28_TRACE_INSTR[fn]),
                      "%+.0f" % (n - base) if n is not None and base is not None else "no callgrind",
                      n - base <= BUDGET_28_TRACE_INSTR[fn] if n is not None and base is not None else None))
    o = meds[("record", "fail")] - meds[("direct", "fail")]
    n, base = instr.get(("record", "fail")), instr.get(("direct", "fail"))
    lines.append(("%s: overhead <= %.0f ns" % (SLOW_TEXT[("record", "fail")], BUDGET_28_FAIL_NS),
                  "%+.1f ns (%s instructions)" % (o, "%+.0f" % (n - base) if n is not None and base is not None
                                                  else "no callgrind"), o <= BUDGET_28_FAIL_NS))
    b = size[("trace-bin", "set4d")]
    lines.append(("%s, cudnnSetTensor4dDescriptor: <= %.0f bytes on disk a call" % (CONFIG_TEXT["trace-bin"],
                                                                                   BUDGET_28_BYTES),
                  "%.1f bytes" % b, b <= BUDGET_28_BYTES))
    width = max(len(t) for t, _, _ in lines)
    for text, measured, ok in lines:
        print("  %s  %-*s  %s" % (verdict(ok), width, text, measured))
    print()
    print("whole run: %.0f s; the exit status does not depend on the budgets" % (time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
