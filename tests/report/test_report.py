#!/usr/bin/env python3
"""cudnnspy report, run as a user would, over hand-made and real record sets.

usage: test_report.py NAME          (meson passes the paths in the environment)
       test_report.py --update      rewrite the golden files from the current output

Exit 0 pass, 1 fail, 77 skip. The hand-made record sets are in fixtures/
(make-fixtures.py writes them); their reports are compared with golden/,
byte for byte. Reports of real runs (the fake cuDNN under the spy) have
pids, times and build paths that change, so those tests check what the
report must say rather than compare it whole.
"""
import atexit
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
E = os.environ
EXE = E.get("REPORT_EXE", "")
REPLAY = E.get("REPLAY_EXE", "")
FUZZ = E.get("FUZZ_EXE", "")
PRELOAD = E.get("SPY_PRELOAD", "")
FAKE9 = E.get("FAKE9_DIR", "")
HOST_CALLS = E.get("HOST_CALLS", "")
THREADS = E.get("THREADS_EXE", "")
CONV_LEGACY = E.get("CONV_LEGACY_EXE", "")
LOAD_COPIES = E.get("LOAD_COPIES_EXE", "")
GRAPH_FRONTEND = E.get("GRAPH_FRONTEND_EXE", "")
ATTENTION = E.get("ATTENTION_EXE", "")
REAL_GRAPH = E.get("REAL_GRAPH_EXE", "")
REAL_CUDNN = E.get("REAL_CUDNN_DIR", "")
GEN = E.get("REPORT_GEN", os.path.join(HERE, "..", "..", "bench", "report-gen.py"))

SCENARIOS = {}
UPDATE = False


def scenario(fn):
    SCENARIOS[fn.__name__.replace("_", "-")] = fn
    return fn


class Failed(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def tmpdir():
    d = tempfile.mkdtemp(prefix="cudnnspy-report-test.")
    atexit.register(shutil.rmtree, d, True)
    return d


def clean_env(extra=None):
    env = {k: v for k, v in E.items() if not k.startswith("CUDNNSPY_") and not k.startswith("FAKECUDNN_")
           and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH", "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK",
                         "PMI_RANK")}
    env.update(extra or {})
    return env


def report(args, cwd=HERE, binary=False):
    """Runs `cudnnspy report ARGS` in tests/report (so that paths read fixtures/...)."""
    p = subprocess.run([EXE, "report"] + args, cwd=cwd, env=clean_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    print("$ cudnnspy report %s -> %d" % (" ".join(args), p.returncode))
    if not binary:
        p.stdout = p.stdout.decode("utf-8")
        p.stderr = p.stderr.decode("utf-8")
    return p


def golden(name, text):
    """Compares TEXT with golden/NAME (or writes it with --update)."""
    path = os.path.join(HERE, "golden", name)
    if UPDATE:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        print("updated %s" % path)
        return
    with open(path) as f:
        want = f.read()
    if text != want:
        import difflib
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True), "golden/" + name,
                                            "output"))
        raise Failed("the report differs from golden/%s (test_report.py --update rewrites it):\n%s"
                     % (name, diff))


def ok(p, quiet=True):
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stderr)
    if quiet:
        check(p.stderr == "", "nothing on stderr", p.stderr)


def section(text, title):
    """The lines of one section of the text report (up to the next blank line)."""
    lines = text.splitlines()
    check(title in lines, "a section %r" % title, text)
    out = []
    for ln in lines[lines.index(title) + 1:]:
        if not ln:
            break
        out.append(ln)
    return out


def fixture(name):
    return os.path.join("fixtures", name)


# ---- golden reports of the hand-made sets ----

@scenario
def single():
    """One process: header facts, failures grouped with the first occurrence, top functions."""
    p = report([fixture("single")])
    ok(p)
    golden("single.txt", p.stdout)
    t = p.stdout
    check("pid 4242: train, pid 4242 on node01, no rank" in t, "the process", t)
    check("cuDNN 9.19.0 (91900) /usr/lib/x86_64-linux-gnu/libcudnn.so.9" in t, "the answering cuDNN", t)
    check("8 calls, 3 failures, 0 internal, 0 dropped" in t, "the summary's counts", t)
    fails = section(t, "Failures: 3 in 2 groups")
    check(fails[0].startswith('  2x cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM (2000) "algo is not'),
          "the bigger group first", t)
    check(any("xDesc=tensor#1[float NCHW 32x64x56x56]" in ln and "algo=99" in ln for ln in fails),
          "decoded arguments, descriptors by id and desc", t)
    check(any("stack: run_layer (train+0x11b8) < libtorch_cuda.so+0x2a4f10" in ln for ln in fails),
          "the stack: module basename+offset, symbol when known", t)
    check(any(ln.strip().startswith("recent: cudnnCreate=1001, cudnnCreate,") for ln in fails), "recent calls", t)
    top = section(t, "Top functions by total time")
    check([ln.split()[0] for ln in top[1:]] == ["cudnnCreate", "cudnnConvolutionForward",
                                                "cudnnSetTensor4dDescriptor"], "ordered by total time", t)


@scenario
def ranks_lib():
    """Four ranks on two hosts, rank 2 with another cuDNN: the report says which."""
    p = report([fixture("ranks-lib")])
    ok(p)
    golden("ranks-lib.txt", p.stdout)
    lines = section(p.stdout, "cuDNN")
    check(lines[0] == "  DIFFERENT cuDNN builds across processes (library path or version):", "says they differ",
          p.stdout)
    check(lines[1] == "    3 processes: cuDNN 9.19.0 (91900) /usr/lib/x86_64-linux-gnu/libcudnn.so.9: ranks 0, 1, 3",
          "the majority with its ranks", p.stdout)
    check(lines[2] == "    1 process: cuDNN 9.1.0 (90100) /opt/cudnn-9.1/lib/libcudnn.so.9: rank 2",
          "the odd one out, by rank", p.stdout)
    check(p.stdout.startswith("cudnnspy report: 4 processes on 2 hosts\n"), "the title", p.stdout)
    # The JSON form says the same.
    j = report(["--json", fixture("ranks-lib")])
    ok(j)
    golden("ranks-lib.json", j.stdout)
    m = json.loads(j.stdout)
    check(m["cudnn"]["differ"] is True, "differ in JSON", j.stdout)
    v = m["cudnn"]["variants"]
    check([x["who"] for x in v] == [["rank 0", "rank 1", "rank 3"], ["rank 2"]], "who, in JSON", j.stdout)
    check(v[1]["library"]["version"] == 90100 and v[1]["library"]["path"] == "/opt/cudnn-9.1/lib/libcudnn.so.9",
          "path and version in JSON", j.stdout)
    check([x["rank"] for x in m["processes"]] == [0, 1, 2, 3], "processes by rank", j.stdout)


@scenario
def ranks_fail():
    """Failures on one rank only are named; failures on every rank say so."""
    p = report([fixture("ranks-fail")])
    ok(p)
    golden("ranks-fail.txt", p.stdout)
    t = p.stdout
    fails = section(t, "Failures: 7 in 2 groups")
    check(fails[0].startswith("  4x cudnnGetConvolutionForwardWorkspaceSize: CUDNN_STATUS_NOT_SUPPORTED (3000)"),
          "most frequent first", t)
    check(fails[1] == "     on all 4 processes", "a failure every rank has", t)
    i = [n for n, ln in enumerate(fails) if ln.startswith("  3x cudnnConvolutionForward")]
    check(i and fails[i[0] + 1] == "     on 1 of 4 processes: rank 1", "the rank-1-only failure", t)
    check(fails[i[0] + 2].startswith("     first: rank 1, tid 208 (fixtures/ranks-fail/train.node01.201.r1"),
          "its first occurrence", t)
    only = section(t, "Failures on some processes only")
    check(only == ["  cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM (2000): rank 1 only"], "the short list", t)
    check("all processes: cuDNN 9.19.0 (91900)" in t, "one cuDNN for all", t)
    m = json.loads(report(["--json", fixture("ranks-fail")]).stdout)
    g = m["failures"]["groups"]
    check([(x["count"], x["only_some"], x["who"]) for x in g] ==
          [(4, False, ["rank 0", "rank 1", "rank 2", "rank 3"]), (3, True, ["rank 1"])], "groups in JSON", g)


@scenario
def compare():
    """Two runs on cuDNN 8.9.7 and 9.19.0: per function calls, time and B/A; the version of each."""
    p = report(["--compare", fixture("run-8907"), fixture("run-91900")])
    ok(p)
    golden("compare.txt", p.stdout)
    t = p.stdout
    check("  A: fixtures/run-8907 (2 processes, 14 calls): cuDNN 8.9.7 (8907) "
          "/usr/lib/x86_64-linux-gnu/libcudnn.so.8" in t, "run A's cuDNN", t)
    check("  B: fixtures/run-91900 (2 processes, 22 calls): cuDNN 9.19.0 (91900)" in t, "run B's cuDNN", t)
    rows = {ln.split()[0]: ln.split() for ln in section(t, "Functions by total time")[1:]}
    check(rows["cudnnConvolutionForward"][-1] == "0.63", "B/A of the convolutions (2.01 ms / 3.21 ms)", t)
    check(rows["cudnnBackendExecute"][1:3] == ["0", "8"] and rows["cudnnBackendExecute"][-1] == "-",
          "a function only B called", t)
    check("Convolution and graph signatures" not in t, "no signature section without algo records", t)
    j = report(["--compare", "--json", fixture("run-8907"), fixture("run-91900")])
    ok(j)
    golden("compare.json", j.stdout)
    c = json.loads(j.stdout)
    check(c["a"]["cudnn"][0]["library"]["version"] == 8907 and c["b"]["cudnn"][0]["library"]["version"] == 91900,
          "versions in JSON", j.stdout)
    conv = [f for f in c["functions"] if f["fn"] == "cudnnConvolutionForward"][0]
    check(conv["a"] == {"calls": 8, "total_ns": 3212000} and conv["b"] == {"calls": 8, "total_ns": 2012000},
          "calls and time per run", conv)
    check(abs(conv["ratio"] - 2012000 / 3212000) < 1e-4, "the ratio", conv)
    check(c["signatures"] is None, "no signature table without algo records", j.stdout)
    # The hook shows up with algo records.
    a = report(["--compare", fixture("run-91900"), fixture("algo")])
    ok(a)
    check("\nConvolution and graph signatures: 1, 1 with another choice in B\n  CHANGED legacy fwd x=float:32x64x56x56:NCHW "
          in a.stdout and "\n    A: not run\n    B: CUDNN_CONVOLUTION_FWD_ALGO_FFT (4 calls, 1.01 ms)\n" in a.stdout,
          "per signature, what each run chose", a.stdout)


@scenario
def gpu_times():
    """gpu_ns from the summary and from call records adds a gpu column."""
    p = report([fixture("gpu")])
    ok(p)
    golden("gpu.txt", p.stdout)
    m = json.loads(report(["--json", fixture("gpu")]).stdout)
    got = {f["fn"]: f["gpu_ns"] for f in m["functions"]}
    check(got == {"cudnnConvolutionForward": 1500000, "cudnnBackendExecute": 2100000}, "gpu_ns sums", got)
    check(m["gpu_times"] is True, "gpu_times flag", m)


@scenario
def no_summary():
    """A killed process (no summary): counts and percentiles from the records, the same with --full."""
    p = report([fixture("no-summary")])
    ok(p)
    golden("no-summary.txt", p.stdout)
    check("6 calls, 1 failure (no summary" in p.stdout, "counts from the records", p.stdout)
    lazy = json.loads(report(["--json", fixture("no-summary")]).stdout)
    full = json.loads(report(["--json", "--full", fixture("no-summary")]).stdout)
    check(lazy == full, "the second pass reads what --full reads", lazy, full)
    f = lazy["functions"][0]
    # 1, 2, 3, 4, 8 and 100 us: p50 in the bucket of 3 us, p99 in that of 100 us.
    check(f["calls"] == 6 and f["failures"] == 1 and f["total_ns"] == 118000, "sums", f)
    check(2816 <= f["p50_ns"] <= 3000 and 90000 <= f["p99_ns"] <= 100000, "percentiles", f)
    check(lazy["processes"][0]["records"]["call"] == 5, "call records counted once", lazy["processes"][0])


@scenario
def robust():
    """Garbage, wrong types, a cut last line, schema 2: one warning per file with counts, exit 0, a report."""
    p = report([fixture("broken")])
    ok(p, quiet=False)
    golden("broken.txt", p.stdout)
    err = p.stderr.splitlines()
    check(err == [
        "cudnnspy: fixtures/broken/train.node01.800.r0.cudnnspy.jsonl: skipped 8 of 15 lines, 2 not JSON, "
        "5 with fields of the wrong type, 1 cut short",
        "cudnnspy: fixtures/broken/train.node01.801.r1.cudnnspy.jsonl: schema 2 is newer than this reader's (1); "
        "reading the fields it knows",
    ], "one warning per file, with counts", p.stderr)
    check("rank 1: train, pid 801 on node01 (schema 2)" in p.stdout, "the newer file is read", p.stdout)
    check("15 lines, 8 skipped" in p.stdout, "the report says what was skipped", p.stdout)
    m = json.loads(report(["--json", fixture("broken")]).stdout)
    sk = m["processes"][0]["skipped"]
    check(sk == {"total": 8, "not_json": 2, "too_long": 0, "wrong_type": 5, "cut": 1}, "skipped in JSON", sk)


@scenario
def hostile():
    """Over-long lines, invalid UTF-8, NULs, deep nesting, huge numbers, no newline at the end."""
    d = tmpdir()
    lines = []
    with open(os.path.join(HERE, "fixtures", "single", "train.node01.4242.cudnnspy.jsonl"), "rb") as f:
        good = f.read().splitlines(True)
    path = os.path.join(d, "hostile.jsonl")
    with open(path, "wb") as f:
        f.write(good[0])
        f.write(b'{"event":"call","fn":"x","status":0,"args":{"s":"' + b"a" * (3 << 20) + b'"}}\n')	# 3 MiB
        f.write(b"\xff\xfe\xfd garbage \x00\x00\n")
        f.write(b'{"event":"failure","fn":"cudnn\xff","status":1,"message":"\xed\xa0\x80"}\n')
        f.write(b'{"event":"call","fn":"d","status":0,"args":' + b"[" * 100000 + b"]" * 100000 + b"}\n")
        f.write(b'{"event":"call","fn":"n","status":0,"t_ns":' + b"9" * 100 + b"}\n")
        f.write(b"".join(good[1:]))
        f.write(b'{"event":"call","fn":"' + b"z" * (2 << 20))	# over 1 MiB and cut
    # By default, lines with the library's own call prefix are counted, not parsed, when the file has
    # a summary (docs/report.md): the deep and the huge one are among them. --full parses them.
    for mode, bad in (([], 2), (["--full"], 4)):
        p = report(mode + [path], cwd=d)
        check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stderr)
        err = p.stderr.splitlines()
        check(err == ["cudnnspy: %s: skipped %d of 16 lines, %d not JSON, 2 over 1048576 bytes" % (path, bad + 2, bad)],
              "%s: counts" % mode, p.stderr)
        check("8 calls, 3 failures, 0 internal, 0 dropped" in p.stdout, "the good records still count", p.stdout)
        check("Failures: 3 in 2 groups" in p.stdout, "the good failures still group", p.stdout)
    # The same bytes from a pipe (read once, every line parsed).
    with open(path, "rb") as f:
        q = subprocess.run([EXE, "report", "/dev/stdin"], stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=clean_env(), timeout=120)
    check(q.returncode == 0 and b"8 calls, 3 failures" in q.stdout, "a pipe", q.stderr)
    # Control characters in strings do not reach the terminal raw.
    esc = os.path.join(d, "esc.jsonl")
    with open(esc, "w") as f:
        f.write('{"event":"failure","fn":"cudnnX","status":1,"message":"\\u001b[31mred\\u001b[0m"}\n')
    p = report([esc], cwd=d)
    check(p.returncode == 0 and "\x1b" not in p.stdout and '"?[31mred?[0m"' in p.stdout, "escapes cleaned", p.stdout)
    # Messages that differ only in control characters read the same: one group, one process.
    same = os.path.join(HERE, "corpus", [f for f in os.listdir(os.path.join(HERE, "corpus"))
                                         if f.endswith("same-after-cleaning.jsonl")][0])
    m = json.loads(report(["--json", same]).stdout)
    g = [(x["fn"], x["message"], x["count"], x["processes"]) for x in m["failures"]["groups"]]
    check(g == [("cudnn?", None, 2, 1), ("cudnnF", "a?", 2, 1)], "groups after cleaning", g)


@scenario
def inputs():
    """Directories: *.jsonl* files, one level of subdirectories, each file once; bad operands."""
    d = tmpdir()
    src = os.path.join(HERE, "fixtures", "ranks-lib")
    names = sorted(os.listdir(src))
    os.makedirs(os.path.join(d, "job", "node02", "deeper"))
    shutil.copy(os.path.join(src, names[0]), os.path.join(d, "job"))
    shutil.copy(os.path.join(src, names[1]), os.path.join(d, "job", names[1] + ".1"))	# a name clash's .1
    shutil.copy(os.path.join(src, names[2]), os.path.join(d, "job", "node02"))
    shutil.copy(os.path.join(src, names[3]), os.path.join(d, "job", "node02", "deeper"))	# two levels: not read
    with open(os.path.join(d, "job", "notes.txt"), "w") as f:
        f.write("not records\n")
    p = report(["job", os.path.join("job", names[0])], cwd=d)	# the first file named twice
    ok(p)
    check(p.stdout.startswith("cudnnspy report: 3 processes"), "three files", p.stdout)
    check("rank 3" not in p.stdout, "not two levels down", p.stdout)
    # Operands that cannot be read.
    p = report(["missing.jsonl"], cwd=d)
    check(p.returncode == 2 and "cudnnspy: cannot read missing.jsonl: No such file or directory" in p.stderr,
          "a missing file: exit 2", p.stderr)
    check(p.stdout == "", "no report", p.stdout)
    p = report(["job", "missing.jsonl"], cwd=d)
    check(p.returncode == 1 and "cannot read missing.jsonl" in p.stderr and "3 processes" in p.stdout,
          "one missing among others: a report and exit 1", p.stderr)
    os.makedirs(os.path.join(d, "empty"))
    p = report(["empty"], cwd=d)
    check(p.returncode == 2 and "empty: no record files (*.jsonl*, *.cudnnspy.rec)" in p.stderr, "an empty directory",
          p.stderr)


@scenario
def usage():
    """Bad command lines: exit 2 and a message; --help on stdout."""
    for args, msg in [
        ([], "report: no files or directories given"),
        (["--bogus", "x"], "report: unknown option '--bogus'"),
        (["--chrome"], "--chrome needs a file name"),
        (["--top", "x", "f"], "--top takes a number"),
        (["--compare", "a"], "--compare takes two runs"),
        (["--compare", "--chrome", "c.json", "a", "b"], "--chrome and --compare do not go together"),
    ]:
        p = report(args)
        check(p.returncode == 2, "%r: exit 2, not %d" % (args, p.returncode), p.stderr)
        check(msg in p.stderr, "%r: says %r" % (args, msg), p.stderr)
        check(all(ln.startswith("cudnnspy: ") for ln in p.stderr.splitlines()), "%r: prefixed" % args, p.stderr)
        check(p.stdout == "", "%r: nothing on stdout" % args, p.stdout)
    p = report(["--help"])
    ok(p)
    check("usage: cudnnspy report" in p.stdout and "--compare" in p.stdout and "--chrome" in p.stdout,
          "the usage", p.stdout)
    h = subprocess.run([EXE, "--help"], stdout=subprocess.PIPE, universal_newlines=True)
    check("cudnnspy report" in h.stdout, "cudnnspy --help mentions report", h.stdout)
    p = report(["--top", "1", fixture("single")])
    ok(p)
    check(len(section(p.stdout, "Top functions by total time (1 of 3)")) == 2, "--top 1", p.stdout)


def chrome_of(args, cwd=HERE):
    d = tmpdir()
    out = os.path.join(d, "trace.json")
    p = report(["--chrome", out] + args, cwd=cwd)
    ok(p)
    with open(out) as f:
        trace = json.load(f)
    check(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), "{traceEvents: [...]}", trace)
    return p, trace["traceEvents"]


def check_events(ev):
    for e in ev:
        check(e["ph"] in ("M", "X", "i"), "known phases", e)
        check(isinstance(e["pid"], int), "int pid", e)
        if e["ph"] != "M":
            check(isinstance(e["ts"], (int, float)) and e["ts"] >= 0, "ts >= 0 (Perfetto drops < 0)", e)
            check(isinstance(e["tid"], int), "int tid", e)
        if e["ph"] == "X":
            check(e["dur"] > 0, "a duration", e)
            check("status_name" in e["args"], "status_name in args", e)


@scenario
def chrome():
    """--chrome: process and thread tracks, one slice per call and failure, failures as instants."""
    p, ev = chrome_of([fixture("ranks-fail")])
    check("Failures: 7 in 2 groups" in p.stdout, "the report is printed too", p.stdout)
    check_events(ev)
    names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    check(names == {200: "train pid 200 rank 0", 201: "train pid 201 rank 1", 202: "train pid 202 rank 2",
                    203: "train pid 203 rank 3"}, "process names: program, pid, rank", names)
    threads = sorted((e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name")
    check(threads == [(200, 200), (200, 207), (201, 201), (201, 208), (202, 202), (202, 209), (203, 203),
                      (203, 210)], "a thread track per tid", threads)
    xs = [e for e in ev if e["ph"] == "X"]
    check(len(xs) == 16 + 4 + 3, "a slice per call and failure record", len(xs))
    check(len([e for e in ev if e["ph"] == "i"]) == 7, "an instant per failure", ev)
    check(sum(1 for e in xs if e["cat"] == "failure") == 7, "failures as slices too", xs)
    x = [e for e in xs if e["pid"] == 201 and e["cat"] == "failure" and e["name"] == "cudnnConvolutionForward"][0]
    check(x["name"] == "cudnnConvolutionForward" and x["args"]["status_name"] == "CUDNN_STATUS_BAD_PARAM" and
          x["args"]["algo"] == "99" and x["args"]["xDesc"] == "tensor#1[float NCHW 32x64x56x56]",
          "name, status and key arguments", x)
    check(abs(x["dur"] - 5.0) < 1e-9, "dur in us", x)
    first = min(e["ts"] for e in xs)
    conv = sorted(e["ts"] for e in xs if e["pid"] == 200 and e["name"] == "cudnnConvolutionForward")
    check([round(t - conv[0], 3) for t in conv] == [0, 400, 800, 1200], "ts in us on the file's clock", conv)
    check(first >= 0, "no negative times", first)
    # A file without the duration: 1 us.
    d = tmpdir()
    with open(os.path.join(d, "x.jsonl"), "w") as f:
        f.write('{"event":"header","schema":1,"pid":5,"program":"p","host":"h","rank":null,'
                '"start_unix_ns":1000000000000,"start_mono_ns":500}\n')
        f.write('{"event":"call","fn":"cudnnGetVersion","status":0,"status_name":null,"tid":5,"t_ns":1500,'
                '"dur_ns":null,"args":{}}\n')
    _, ev = chrome_of(["x.jsonl"], cwd=d)
    x = [e for e in ev if e["ph"] == "X"][0]
    check(x["dur"] == 1 and x["args"]["status_name"] is None, "dur 1 us when null", x)
    check([e["args"]["name"] for e in ev if e["name"] == "process_name"] == ["p pid 5 norank"], "norank", ev)


@scenario
def chrome_unwritable():
    """--chrome onto a full disk (/dev/full): a message naming the file, and a failing exit status."""
    if not os.path.exists("/dev/full"):
        raise Skip("no /dev/full")
    for args in ([fixture("ranks-fail")], ["--json", fixture("ranks-fail")]):
        p = report(["--chrome", "/dev/full"] + args)
        check(p.returncode != 0, "a failing exit status", p.returncode, p.stderr)
        check("cannot write /dev/full" in p.stderr, "says so", p.stderr)


def record_format():
    """SPY_TEST_FORMAT=json: the programs write record format 1 (JSON Lines); the default is format 2."""
    f = E.get("SPY_TEST_FORMAT", "")
    return {"CUDNNSPY_FORMAT": f} if f else {}


def spy_run(argv, outdir, env=None, lib_dir=None):
    e = clean_env({"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": lib_dir or FAKE9, "CUDNNSPY_OUTPUT": outdir,
                   "CUDNNSPY_STDERR": "none"})
    e.update(record_format())
    e.update(env or {})
    p = subprocess.run(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0, "%s exited %d" % (argv, p.returncode), p.stderr)


def xs_first(xs):
    return min(e["ts"] for e in xs)


def dump_lines(path):
    """A record file's JSON lines, read through `cudnnspy dump` (either format)."""
    p = subprocess.run([EXE, "dump", path], env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    check(p.returncode == 0 and not p.stderr, "cudnnspy dump reads %s" % path, p.stderr)
    return p.stdout.splitlines()


def need_spy():
    for f in (PRELOAD, FAKE9, HOST_CALLS, THREADS):
        if not f or not os.path.exists(f):
            raise Skip("the spy, the fake cuDNN or the programs are not built")


@scenario
def real_ranks():
    """Four ranks of a real program under the spy: one loads another copy of cuDNN, one fails."""
    need_spy()
    d = tmpdir()
    out = os.path.join(d, "job")
    os.makedirs(out)
    other = os.path.join(d, "other-cudnn")
    os.makedirs(other)
    shutil.copy(os.path.join(FAKE9, "libcudnn.so.9"), other)
    for rank in range(4):
        env = {"RANK": str(rank), "CUDNNSPY_TRACE": "cudnnSet*"}
        lib = None
        if rank == 2:
            env["FAKECUDNN_VERSION"] = "90100"
            lib = other
        if rank == 1:
            env["FAKECUDNN_STATUS"] = "cudnnSetTensor4dDescriptor=2000"
            env["FAKECUDNN_MESSAGE"] = "n <= 0"
        spy_run([HOST_CALLS, "3"], out, env, lib)
    p = report([out])
    ok(p)
    t = p.stdout
    check(t.startswith("cudnnspy report: 4 processes\n"), "four processes", t)
    lines = section(t, "cuDNN")
    check(lines[0].startswith("  DIFFERENT cuDNN builds"), "different builds", t)
    check(re.fullmatch(r"    3 processes: cuDNN 9\.19\.0 \(91900\) \S+/libcudnn\.so\.9: ranks 0, 1, 3", lines[1]),
          "the common cuDNN", t)
    check(lines[2] == "    1 process: cuDNN 9.1.0 (90100) %s/libcudnn.so.9: rank 2" % os.path.realpath(other),
          "rank 2's copy, by path and version", t)
    fails = section(t, "Failures: 4 in 1 group")
    check(fails[0] == '  4x cudnnSetTensor4dDescriptor: CUDNN_STATUS_BAD_PARAM (2000) "n <= 0"', "the group", t)
    check(fails[1] == "     on 1 of 4 processes: rank 1", "on rank 1 only", t)
    check(re.match(r"       args: tensorDesc=tensor#1(\[[^]]*\])?, format=CUDNN_TENSOR_NCHW, "
                   r"dataType=CUDNN_DATA_FLOAT, n=32, c=3, h=224, w=224", fails[3]), "decoded arguments", t)
    check(fails[4].startswith("       stack: ") and "host-calls+0x" in fails[4], "the stack", t)
    check(fails[5].startswith("       recent: cudnnGetVersion, cudnnGetErrorString, cudnnCreateTensorDescriptor"),
          "the recent calls", t)
    top = {ln.split()[0]: ln.split() for ln in section(t, "Top functions by steady time")[1:-1]}
    check(top["cudnnSetTensor4dDescriptor"][1:3] == ["16", "4"], "calls and failures summed over ranks", top)
    # Normalized (pids, times, paths), the report of a real run is stable.
    norm = re.sub(r"pid \d+", "pid N", t)
    norm = re.sub(r"tid \d+", "tid N", norm)
    norm = re.sub(r"\d+(\.\d+)? (ns|us|ms|s)\b", "T", norm)
    norm = norm.replace(out, "OUT").replace(os.path.realpath(other), "OTHER").replace(os.path.realpath(FAKE9), "FAKE9")
    norm = re.sub(r"host-calls\.[^.]+\.N?\d*\.", "host-calls.HOST.PID.", norm)
    norm = re.sub(r"host-calls\.[^ :]*\.r(\d)\.cudnnspy\.(rec|jsonl)", r"host-calls.HOST.PID.r\1.cudnnspy.rec", norm)
    norm = re.sub(r"pid N on \S+", "pid N on HOST", norm)
    norm = re.sub(r"\+0x[0-9a-f]+", "+0xN", norm)
    norm = re.sub(r"cudart \d+", "cudart N", norm)
    norm = re.sub(r"\d+ lines", "N lines", norm)	# the library may add records of other kinds
    norm = re.sub(r"\.rec:\d+\)", ".rec:N)", norm)
    norm = re.sub(r" +", " ", norm)
    # Rows ordered by measured time: by name instead, with the counts only.
    head, _, rest = norm.partition("Top functions by steady time\n")
    rows = rest.splitlines()
    norm = head + "Top functions (by name)\n" + "".join(sorted(" ".join(ln.split()[:3]) + "\n" for ln in rows[1:-1]))
    golden("real-ranks.txt", norm)


@scenario
def real_findings():
    """The job-level answer carries what the processes found: each finding once with the ranks it came from and
    its fix, the per-signature convolution table summed over ranks, and one cuDNN file reached by three names
    (cuda/lib, cuda-13.0/lib, cuda/lib64) counted as one build, not three."""
    need_spy()
    d = tmpdir()
    out = os.path.join(d, "job")
    os.makedirs(out)
    real = os.path.join(d, "cuda-13.0", "lib")
    os.makedirs(real)
    shutil.copy(os.path.join(FAKE9, "libcudnn.so.9"), real)
    os.symlink("cuda-13.0", os.path.join(d, "cuda"))
    os.symlink("lib", os.path.join(real, "..", "lib64"))
    second = os.path.join(d, "conda")
    os.makedirs(second)
    shutil.copy(os.path.join(FAKE9, "libcudnn.so.9"), second)
    names = [os.path.join(d, "cuda", "lib"), real, os.path.join(d, "cuda", "lib64")]
    for rank, lib in enumerate(names):
        spy_run([CONV_LEGACY], out, {"RANK": str(rank)}, lib)
    # Rank 3 maps a second copy beside its own: a finding of that process only.
    spy_run([LOAD_COPIES, os.path.join(second, "libcudnn.so.9")], out, {"RANK": "3"}, names[0])
    p = report([out])
    ok(p)
    t = p.stdout
    cudnn = section(t, "cuDNN")
    check(len(cudnn) == 1 and cudnn[0].startswith("  all processes: cuDNN 9.19.0 (91900) "),
          "one build under three names", t)
    f = section(t, [ln for ln in t.splitlines() if ln.startswith("Findings: ")][0])
    multi = [i for i, ln in enumerate(f) if ln.startswith("  error runtime-multiple-copies: 2 cuDNN copies")]
    check(multi and f[multi[0] + 1] == "    in rank 3" and f[multi[0] + 2].startswith("    fix: make every part"),
          "the finding, where it came from, its fix", t)
    conv = [ln for ln in t.splitlines() if ln.startswith("Convolutions and graphs: ")]
    check(conv, "the per-signature table", t)
    rows = section(t, conv[0])
    check(any("in ranks 0, 1, 2" in ln or "all processes" in ln for ln in rows), "summed over the ranks", t)
    top = section(t, [ln for ln in t.splitlines() if ln.startswith("Top functions by steady time")][0])
    check(top[0].split()[:6] == ["function", "calls", "failures", "steady", "first", "p50"],
          "the first calls (cuDNN's lazy loading) in a column of their own", t)
    m = json.loads(report(["--json", out]).stdout)
    fns = m["functions"]
    check([f["steady_ns"] for f in fns if f["steady_ns"] is not None] ==
          sorted([f["steady_ns"] for f in fns if f["steady_ns"] is not None], reverse=True) and
          all(f["first_ns"] is not None for f in fns if f["calls"]), "ordered by the steady state", repr(fns[:4]))
    sigs = m["signatures"]
    check(sigs and all(s["calls"] % 3 == 0 and s["processes"] == 3 for s in sigs if s["op"] == "fwd"),
          "each signature's calls from the three conv ranks", repr(sigs))
    check(any(x["id"] == "runtime-multiple-copies" and x["fix"] for x in m["findings"]), "findings in JSON",
          repr(m["findings"]))


@scenario
def not_records():
    """A file that is not records at all (a C source given by mistake) is an error: exit 2, one line saying why."""
    d = tmpdir()
    src = os.path.join(d, "train.c")
    with open(src, "w") as f:
        f.write("#include <cudnn.h>\nint main(void) { return 0; }\n")
    p = report([src], cwd=d)
    check(p.returncode == 2 and p.stdout == "", "exit 2 and no report, not %d" % p.returncode, p.stdout)
    # The record reader refuses it at its first byte (issue 27: a file is records from its first frame on).
    check(p.stderr.splitlines() == ["cudnnspy: %s: not a record file: byte 0 begins neither a JSON line nor record "
                                    "format 2's file frame" % src, "cudnnspy: nothing could be read"],
          "one line saying why", p.stderr)
    good = os.path.join(HERE, "fixtures", "single")
    q = report([good, src], cwd=d)
    check(q.returncode == 1 and "not a record file" in q.stderr and "1 process" in q.stdout,
          "beside good records: the report, and exit 1", q.stderr)


@scenario
def engine_changed():
    """Ranks of one job running one layer on different engines: the report's findings say so, with which rank ran
    which; ranks that agree say nothing."""
    need_spy()
    d = tmpdir()
    out = os.path.join(d, "job")
    os.makedirs(out)
    for rank, unsupported in enumerate(["", "", "12"]):
        env = {"RANK": str(rank)}
        if unsupported:
            # The odd rank is also the slow one, so its signature sorts first by time: the message still leads
            # with the choice most ranks made (it once followed the times, and CI saw both orders).
            env["FAKECUDNN_UNSUPPORTED_ENGINES"] = unsupported
            env["FAKECUDNN_SLEEP_US"] = "3000"
        spy_run([GRAPH_FRONTEND, "8"], out, env)
    m = json.loads(report(["--json", out]).stdout)
    changed = [f for f in m["findings"] if f["id"] == "engine-changed"]
    check(len(changed) == 1 and "engine 12 " in changed[0]["message"] and "in rank 0, rank 1" in changed[0]["message"]
          and "; engine 0 CUDNN_KNOB_TYPE_SWIZZLE=2 in rank 2" in changed[0]["message"] and changed[0]["fix"],
          "which rank ran which engine",
          repr(m["findings"]))
    t = report([out]).stdout
    check("warning engine-changed: graph fwd x=float:8x16x32x32" in t, "in the text", t)
    same = os.path.join(d, "same")
    os.makedirs(same)
    for rank in range(2):
        spy_run([GRAPH_FRONTEND, "8"], same, {"RANK": str(rank)})
    m = json.loads(report(["--json", same]).stdout)
    check(not [f for f in m["findings"] if f["id"] == "engine-changed"], "agreeing ranks: nothing", repr(m["findings"]))


@scenario
def graph_table():
    """The per-signature table of a graph-API job: the attention layer under its own name, the convolution whose
    engine cuDNN notes as non-deterministic marked so, and the findings with their fixes."""
    need_spy()
    d = tmpdir()
    spy_run([GRAPH_FRONTEND, "8"], d, {"FAKECUDNN_NONDET_ENGINES": "12", "RANK": "0"})
    spy_run([ATTENTION, "causal"], d, {"RANK": "1"})
    t = report([d]).stdout
    rows = section(t, [ln for ln in t.splitlines() if ln.startswith("Convolutions and graphs: ")][0])
    conv = [i for i, ln in enumerate(rows) if ln.startswith("  graph fwd x=float:8x16x32x32")]
    attn = [i for i, ln in enumerate(rows) if ln.startswith("  graph attention-fwd b=2 h=8 s_q=128 s_kv=128 d=64 ")]
    check(conv and ", non-deterministic" in rows[conv[0] + 1] and rows[conv[0] + 1].startswith("    engine 12"),
          "the convolution's engine, marked non-deterministic", t)
    check(attn and rows[attn[0]].endswith(" causal") and "non-deterministic" not in rows[attn[0] + 1] and
          "2 calls" in rows[attn[0] + 1], "the attention layer, by its own name", t)
    check("info nondeterministic-engine: fwd x=float" in t and "deselect_numeric_notes" in t,
          "the finding and its fix", t)
    m = json.loads(report(["--json", d]).stdout)
    marks = {s["signature"].split(" ")[0]: s["nondeterministic"] for s in m["signatures"]}
    check(marks == {"fwd": True, "attention-fwd": False}, "in JSON too", repr(marks))


def graph_section(t):
    """The lines of the text report's "Graphs built: ..." section, its heading first."""
    head = [ln for ln in t.splitlines() if ln.startswith("Graphs built: ")]
    check(head, "a section 'Graphs built: ...'", t)
    return [head[0]] + section(t, head[0])


def graph_rows(rows, sig_start):
    """The lines of one signature in the graph section: its own, and those under it."""
    at = [i for i, ln in enumerate(rows) if ln.startswith("  " + sig_start)]
    check(len(at) == 1, "one entry for %r" % sig_start, "\n".join(rows))
    out = [rows[at[0]]]
    for ln in rows[at[0] + 1:]:
        if not ln.startswith("    "):
            break
        out.append(ln)
    return out


CONV_SIG = ("fwd x=float:8x16x32x32:NCHW w=float:32x16x3x3:NCHW y=float:8x32x32x32:NCHW pad=1x1 stride=1x1 "
            "dilation=1x1 mode=cross_correlation compute=float groups=1 +pointwise(relu_fwd)")
ENGINE12 = "engine 12 CUDNN_KNOB_TYPE_SPLIT_K=1,CUDNN_KNOB_TYPE_TILE_SIZE=3"


@scenario
def probing_apart():
    """A framework's expected NOT_SUPPORTED probing (records marked "probing": finalizing plans until one works,
    reading a config's shared memory) is not counted as failures: the Failures heading counts the others, the
    probing has a section of its own after it, one line per group, and "Failures on some processes only" leaves
    it out; in JSON each group says whether it is probing and the failures how many were."""
    need_spy()
    d = tmpdir()
    # Rank 0 asks one config's shared memory (NOT_SUPPORTED); rank 1 also finds engine 12 unsupported, and its
    # cudnnDestroy fails for real.
    spy_run([GRAPH_FRONTEND, "40"], d, {"RANK": "0"})
    spy_run([GRAPH_FRONTEND, "40"], d, {"RANK": "1", "FAKECUDNN_UNSUPPORTED_ENGINES": "12",
                                        "FAKECUDNN_STATUS": "cudnnDestroy=2000"})
    p = report([d])
    ok(p)
    t = p.stdout
    fails = section(t, "Failures: 1 in 1 group")
    check(fails[0] == '  1x cudnnDestroy: CUDNN_STATUS_BAD_PARAM (2000) "fake: cudnnDestroy failed with status 2000"'
          and fails[1] == "     on 1 of 2 processes: rank 1", "the real failure alone under Failures", t)
    check(not [ln for ln in fails if "NOT_SUPPORTED" in ln], "no probing group under Failures", t)
    only = section(t, "Failures on some processes only")
    check(only == ["  cudnnDestroy: CUDNN_STATUS_BAD_PARAM (2000): rank 1 only"],
          "the probing on rank 1 only is not a failure on some processes only", t)
    head = [ln for ln in t.splitlines() if ln.startswith("Probing: ")]
    check(head == ["Probing: 4 expected NOT_SUPPORTED answers in 2 groups (a framework trying engine configs until "
                   "one works; not failures)"], "a probing section with its count", t)
    probing = section(t, head[0])
    check(probing == ["  3x cudnnBackendGetAttribute: CUDNN_STATUS_NOT_SUPPORTED (3000)",
                      "  1x cudnnBackendFinalize: CUDNN_STATUS_NOT_SUPPORTED (3000)"], "one line per group", t)
    check(t.index("Failures: 1 in 1 group") < t.index("Failures on some processes only") < t.index(head[0]),
          "after the failures", t)
    m = json.loads(report(["--json", d]).stdout)
    f = m["failures"]
    check(f["total"] == 5 and f["probing"] == 4, "total (all) and probing counts in JSON", repr(f)[:600])
    groups = {(g["fn"], g["probing"]): g["count"] for g in f["groups"]}
    check(groups == {("cudnnBackendGetAttribute", True): 3, ("cudnnBackendFinalize", True): 1,
                     ("cudnnDestroy", False): 1}, "each group marked", repr(groups))
    # Each process's line says how many of its failures were probing, from its summary (JSON: "probing").
    procs = sorted((pr["rank"], pr["failures"], pr["probing"]) for pr in m["processes"])
    check(procs == [(0, 1, 1), (1, 4, 3)], "each process's failures and probing", repr(procs))
    lines = [ln for ln in t.splitlines() if re.match(r"    \d+ calls, ", ln)]
    check(len(lines) == 2 and all("of them probing)" in ln for ln in lines) and
          any(ln.startswith("    ") and "4 failures (3 of them probing)" in ln for ln in lines),
          "the process lines say the probing apart", t)
    # The functions table: its failures column counts the failures alone, the probing a column of its own; in
    # JSON each function says how many of its failures were probing.
    fns = {f["fn"]: (f["failures"], f["probing"]) for f in m["functions"]}
    check(fns.get("cudnnBackendGetAttribute") == (3, 3) and fns.get("cudnnBackendFinalize") == (1, 1) and
          fns.get("cudnnDestroy") == (1, 0), "each function's failures and probing in JSON", repr(fns))
    table = section(t, [ln for ln in t.splitlines() if ln.startswith("Top functions by")][0])
    check(table[0].split()[:4] == ["function", "calls", "failures", "probing"], "a probing column", t)
    rows = {r.split()[0]: r.split()[1:4] for r in table[1:]}
    check(rows.get("cudnnBackendGetAttribute", [])[1:] == ["0", "3"] and
          rows.get("cudnnDestroy", [])[1:] == ["1", "0"], "probing counted apart from failures in the table", t)
    # Without probing records, nothing changes: no probing section, and "probing": 0.
    q = report([fixture("ranks-fail")])
    check("probing" not in [ln for ln in q.stdout.splitlines() if ln.strip().startswith("function ")][0],
          "no probing column without probing", q.stdout)
    check("Probing" not in q.stdout and "Failures: 7 in 2 groups" in q.stdout, "no probing, no section", q.stdout)


@scenario
def probing_brief():
    """cudnnspy run's few lines after a job count the failures without the probing, and give the probing a line
    of its own and one per group."""
    need_spy()
    d = tmpdir()
    out = os.path.join(d, "recs")
    script = ('"$1" 40 >/dev/null; FAKECUDNN_UNSUPPORTED_ENGINES=12 FAKECUDNN_STATUS=cudnnDestroy=2000 "$1" 40 '
              '>/dev/null')
    p = subprocess.run([EXE, "run", "--output", out, "--", "sh", "-c", script, "sh", GRAPH_FRONTEND],
                       env=clean_env(dict(record_format(), LD_LIBRARY_PATH=FAKE9)), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    check(p.returncode == 0, "cudnnspy run exited %d" % p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    at = [i for i, ln in enumerate(lines) if ln.startswith("cudnnspy: after the program, from the records of 2")]
    check(at, "the job said after the program", p.stderr)
    got = lines[at[0]:]
    text = "\n".join(got)
    i = got.index("cudnnspy:   failures: 1 in 1 group") if "cudnnspy:   failures: 1 in 1 group" in got else -1
    check(i > 0 and got[i + 1].startswith("cudnnspy:     1x cudnnDestroy: CUDNN_STATUS_BAD_PARAM (2000)"),
          "the failures without the probing", text)
    j = [k for k, ln in enumerate(got) if ln.startswith("cudnnspy:   probing: ")]
    check(j and got[j[0]] == "cudnnspy:   probing: 4 expected NOT_SUPPORTED answers in 2 groups (a framework "
                             "trying engine configs until one works; not failures)" and j[0] > i,
          "the probing apart, after the failures", text)
    check(got[j[0] + 1:j[0] + 3] == ["cudnnspy:     3x cudnnBackendGetAttribute: CUDNN_STATUS_NOT_SUPPORTED (3000)",
                                     "cudnnspy:     1x cudnnBackendFinalize: CUDNN_STATUS_NOT_SUPPORTED (3000)"],
          "one line per probing group", text)


@scenario
def graphs_tuning():
    """Graphs, heuristics and plans from their own records, per signature: cudnn-frontend building a plan for each
    of 40 configs and executing one is tuning, with the candidates and the winner; building plans until one works
    is not; two ranks that build the same configs have as many candidates as one."""
    need_spy()
    d = tmpdir()
    tune = os.path.join(d, "tune")
    os.makedirs(tune)
    spy_run([GRAPH_FRONTEND, "40", "all"], tune, {"FAKECUDNN_HEUR_COUNT": "40"})
    p = report([tune])
    ok(p)
    rows = graph_section(p.stdout)
    check(rows[0] == "Graphs built: 1 signature", "the heading", p.stdout)
    conv = graph_rows(rows[1:], CONV_SIG)
    check(conv[0] == "  " + CONV_SIG, "the signature whole", p.stdout)
    check(conv[1] == "    1 graph, 1 heuristics query (40 configs), 40 plans of 40 configs; ran %s (3 calls)" % ENGINE12,
          "what was built and what ran", p.stdout)
    check(conv[2] == "    tuning: 40 candidates built, %s kept" % ENGINE12, "tuning, with the winner", p.stdout)
    m = json.loads(report(["--json", tune]).stdout)
    g = m["graphs"]
    check(len(g) == 1, "one signature in JSON", repr(g)[:800])
    g = g[0]
    check((g["signature"], g["op"], g["graphs"], g["heuristics"], g["configs_returned"], g["plans"], g["candidates"],
           g["tuning"], g["processes"], g["who"]) ==
          (CONV_SIG, "fwd", 1, 1, 40, 40, 40, True, 1, [m["processes"][0]["label"]]), "the counts in JSON", repr(g))
    check(g["executed"] == [{"choice": ENGINE12, "calls": 3, "processes": 1}], "what ran, in JSON", repr(g))
    # Plans built in rank order until one works: one candidate, no tuning.
    plain = os.path.join(d, "plain")
    os.makedirs(plain)
    spy_run([GRAPH_FRONTEND, "40"], plain)
    t = report([plain]).stdout
    conv = graph_rows(graph_section(t)[1:], CONV_SIG)
    check(conv[1:] == ["    1 graph, 1 heuristics query (3 configs), 1 plan of 1 config; ran %s (3 calls)" % ENGINE12],
          "built until one worked: no tuning", t)
    g = json.loads(report(["--json", plain]).stdout)["graphs"][0]
    check(g["candidates"] == 1 and g["tuning"] is False, "no tuning in JSON", repr(g))
    # Two ranks tuning alike: the same 40 candidates, twice the plans.
    ranks = os.path.join(d, "ranks")
    os.makedirs(ranks)
    for rank in range(2):
        spy_run([GRAPH_FRONTEND, "40", "all"], ranks, {"FAKECUDNN_HEUR_COUNT": "40", "RANK": str(rank)})
    t = report([ranks]).stdout
    conv = graph_rows(graph_section(t)[1:], CONV_SIG)
    check(conv[1] == "    2 graphs, 2 heuristics queries (80 configs), 80 plans of 40 configs; ran %s (6 calls); "
                     "in both processes" % ENGINE12 and conv[2] == "    tuning: 40 candidates built, %s kept" % ENGINE12,
          "summed over the ranks, candidates counted once", t)


def need_real_graph():
    if not REAL_CUDNN or not os.path.exists(os.path.join(REAL_CUDNN, "libcudnn.so.9")):
        raise Skip("no real cuDNN 9 (CUDNN_ROOT, CUDA_HOME, /usr/local/cuda)")
    if not REAL_GRAPH or not os.path.exists(REAL_GRAPH) or not PRELOAD or not os.path.exists(PRELOAD):
        raise Skip("the spy or tests/programs/real-graph is not built")


@scenario
def graphs_host_only():
    """cudnn-frontend's host-only builds with the real cuDNN (a device-properties descriptor, no handle, nothing
    executes): each graph's signature is in the graph section with what was built and "not executed", the
    heading says none ran, and "signatures" is [] (an empty list, not null)."""
    need_real_graph()
    d = tmpdir()
    names = ("layernorm", "conv", "matmul", "sdpa")
    for name in names:
        spy_run([REAL_GRAPH, "-", name], d, lib_dir=REAL_CUDNN)
    p = report([d])
    ok(p)
    t = p.stdout
    rows = graph_section(t)
    check(rows[0] == "Graphs built: 4 signatures, none executed (a host-only build: planned, nothing ran)",
          "the heading: four signatures, none executed", t)
    check("Convolutions and graphs:" not in t, "no table of what ran", t)
    for start in ("graph norm_forward(layer_norm,training) xdesc=float:4096x128x1x1:NCHW ",
                  "fwd x=half:8x64x56x56:NHWC w=half:64x64x3x3:NHWC ", "graph matmul adesc=half:4x256x512:NCW ",
                  "attention-fwd b=2 h=4 s_q=128 s_kv=128 d=64 "):
        e = graph_rows(rows[1:], start)
        check(len(e) == 2 and re.fullmatch(r"    1 graph, 2 heuristics queries \(\d+ configs?\), (0 plans|\d+ plans? of \d+ "
                                           r"configs?); not executed; in pid \d+", e[1]), "%s: built, not executed" % start,
              t)
    j = report(["--json", d])
    ok(j)
    m = json.loads(j.stdout)
    check(m["signatures"] == [] and '"signatures": []' in j.stdout, "signatures: [], not null", j.stdout[-3000:])
    g = m["graphs"]
    check(len(g) == 4 and all(x["graphs"] == 1 and x["heuristics"] == 2 and x["executed"] == [] and
                              x["tuning"] is False and x["processes"] == 1 for x in g),
          "each graph built once, queried twice, never executed", repr(g)[:2000])
    check(sorted(x["op"] for x in g) == ["fwd", "graph", "graph", "graph"], "the ops", repr(g)[:2000])
    # With the CUDA toolkit's stub driver the heuristics rank configs (plans then fail to load their kernels).
    stub = os.path.join(REAL_CUDNN, "stubs", "libcuda.so")
    if os.path.exists(stub):
        sd = tmpdir()
        os.symlink(stub, os.path.join(sd, "libcuda.so.1"))
        out = os.path.join(sd, "out")
        os.makedirs(out)
        spy_run([REAL_GRAPH, "-", "matmul"], out, lib_dir=sd + ":" + REAL_CUDNN)
        g = json.loads(report(["--json", out]).stdout)["graphs"]
        check(len(g) == 1 and g[0]["configs_returned"] > 0 and g[0]["executed"] == [], "configs returned, none ran",
              repr(g))
        t = report([out]).stdout
        check(re.search(r"^    1 graph, 2 heuristics queries \(%d configs\), " % g[0]["configs_returned"], t, re.M),
              "the configs returned in the text", t)


@scenario
def graphs_robust():
    """graph, heuristics and plan records of the wrong shape are passed over without a crash; counts are bounded
    and sums do not overflow; a signature's candidates and a file's signatures are capped, and said so."""
    d = tmpdir()
    path = os.path.join(d, "g.jsonl")
    hdr = ('{"event":"header","schema":1,"pid":9,"program":"p","host":"h","rank":null,'
           '"start_unix_ns":1000000000000,"start_mono_ns":500}\n')
    big = 9223372036854775807
    lines = [hdr,
             '{"event":"graph","id":"backend#1","op":"fwd","signature":"fwd x=1"}\n',
             '{"event":"graph","id":"backend#2","op":7,"signature":"fwd x=1"}\n',           # op of the wrong type
             '{"event":"graph","id":"backend#3","op":"fwd","signature":42}\n',              # no signature: passed over
             '{"event":"graph","signature":["x"]}\n',
             '{"event":"heuristics","op":"fwd","signature":"fwd x=1","returned":%d,"configs":"no"}\n' % big,
             '{"event":"heuristics","op":"fwd","signature":"fwd x=1","returned":%d}\n' % big,
             '{"event":"heuristics","op":"fwd","signature":"fwd x=1","returned":-5,"configs":["a","b"]}\n',
             '{"event":"plan","signature":"fwd x=1","engine":"twelve","knobs":{"a":1},"config":"backend#9"}\n',
             '{"event":"plan","signature":"fwd x=1","engine":3,"knobs":[1,{"type":5},{"type":"K","value":"v"}]}\n',
             '{"event":"plan","signature":null,"engine":3}\n',
             '{"event":"plan","signature":"fwd x=\\u001b[31m","engine":3}\n']
    # 5000 configs of one signature, and 5000 signatures of one plan each.
    lines += ['{"event":"plan","signature":"graph many","engine":%d,"knobs":[]}\n' % i for i in range(5000)]
    lines += ['{"event":"graph","op":"graph","signature":"graph sig %d"}\n' % i for i in range(5000)]
    with open(path, "w") as f:
        f.write("".join(lines))
    for args in ([], ["--json"], ["--full"]):
        p = report(args + [path], cwd=d)
        check(p.returncode == 0, "%s: exit 0, not %d" % (args, p.returncode), p.stderr)
        check("graph records past 4096 signatures not kept" in p.stderr, "%s: the cap said" % args, p.stderr)
    m = json.loads(report(["--json", path], cwd=d).stdout)
    g = {x["signature"]: x for x in m["graphs"]}
    one = g["fwd x=1"]
    check((one["graphs"], one["heuristics"], one["configs_returned"], one["plans"], one["candidates"]) ==
          (2, 3, big, 2, 2), "wrong types read as absent, sums stopped at the top", repr(one))
    check(one["op"] == "fwd", "the op from the record that has one", repr(one))
    check("fwd x=?[31m" in g, "a signature cleaned", repr(sorted(g))[:300])
    many = g["graph many"]
    check(many["plans"] == 5000 and many["candidates"] == 4096 and many["candidates_capped"] is True,
          "candidates capped and said so", repr(many))
    check(len(g) <= 4096 and all(x["candidates_capped"] is False for k, x in g.items() if k != "graph many"),
          "signatures capped", len(g))
    # 70,000 configs over 20 signatures: past what a file keeps of them all, the rest are said capped, and a
    # signature that comes after has none kept.
    many = os.path.join(d, "many.jsonl")
    with open(many, "w") as f:
        f.write(hdr)
        for i in range(20):
            f.write("".join('{"event":"plan","signature":"graph s%d","engine":%d}\n' % (i, k) for k in range(3500)))
        f.write('{"event":"plan","signature":"graph last","engine":1}\n')
    p = report(["--json", many], cwd=d)
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stderr[-2000:])
    g = {x["signature"]: x for x in json.loads(p.stdout)["graphs"]}
    kept = sum(x["candidates"] for x in g.values())
    check(len(g) == 21 and kept == 65536 and g["graph last"]["candidates"] == 0 and
          g["graph last"]["candidates_capped"] is True and g["graph s0"]["candidates_capped"] is False and
          g["graph s19"]["candidates_capped"] is True, "65536 configs kept in a file", kept, repr(g["graph last"]))
    # Five such files of other signatures each: the run keeps 262144 of them all.
    run = os.path.join(d, "run")
    os.makedirs(run)
    for n in range(5):
        with open(os.path.join(run, "p%d.jsonl" % n), "w") as f:
            f.write(hdr.replace('"pid":9', '"pid":%d' % (10 + n)))
            for i in range(16):
                f.write("".join('{"event":"plan","signature":"graph f%d s%d","engine":%d}\n' % (n, i, k)
                                for k in range(4096)))
    p = report(["--json", run], cwd=d)
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stderr[-2000:])
    g = json.loads(p.stdout)["graphs"]
    kept = sum(x["candidates"] for x in g)
    check(len(g) == 80 and kept == 262144 and sum(x["candidates_capped"] for x in g) == 16,
          "262144 configs kept in the run", kept)


@scenario
def real_threads_chrome():
    """A traced 8-thread run: the Chrome trace has a track per thread and a slice per call record."""
    need_spy()
    d = tmpdir()
    spy_run([THREADS, "5"], d, {"CUDNNSPY_TRACE": "*"})
    files = [f for f in os.listdir(d) if f.endswith((".cudnnspy.rec", ".cudnnspy.jsonl"))]
    check(len(files) == 1, "one record file", files)
    recs = [json.loads(ln) for ln in dump_lines(os.path.join(d, files[0]))]
    calls = [r for r in recs if r["event"] in ("call", "failure")]
    tids = {r["tid"] for r in calls}
    check(len(tids) == 8, "eight threads called cuDNN", tids)
    p, ev = chrome_of([d])
    check_events(ev)
    xs = [e for e in ev if e["ph"] == "X"]
    check(len(xs) == len(calls), "a slice per record: %d, not %d" % (len(calls), len(xs)))
    check({e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"} == tids, "thread tracks", ev)
    pid = recs[0]["pid"]
    check([e["args"]["name"] for e in ev if e["name"] == "process_name"] == ["threads pid %d norank" % pid],
          "the process track", ev)
    by_fn = {}
    for e in xs:
        by_fn[e["name"]] = by_fn.get(e["name"], 0) + 1
    check(by_fn == {"cudnnCreateTensorDescriptor": 8, "cudnnSetTensor4dDescriptor": 40,
                    "cudnnDestroyTensorDescriptor": 8}, "slices per function", by_fn)
    # Times from the earliest header (less 10 s), not from the epoch: a double of µs since 1970 keeps a quarter of a
    # µs, and calls of two threads that close together would sort either way (format 2 files gave no base once).
    check(all(e["ts"] < 1e9 for e in xs), "ts from the run's start", [e["ts"] for e in xs[:3]])
    starts = sorted(r["t_ns"] for r in calls)
    for r, e in zip(sorted(calls, key=lambda r: (r["t_ns"], r["tid"])), sorted(xs, key=lambda e: (e["ts"], e["tid"]))):
        check(abs((e["dur"] * 1000) - r["dur_ns"]) < 1, "dur from dur_ns", r, e)
        check(abs((e["ts"] - xs_first(xs)) * 1000 - (r["t_ns"] - starts[0])) < 2, "ts from t_ns, to the ns", r, e)
    # From a pipe, the same slices: the base is looked for in files only (reading a pipe for it would take its records).
    with open(os.path.join(d, files[0]), "rb") as f:
        data = f.read()
    out = os.path.join(d, "piped.json")
    p = subprocess.run([EXE, "report", "--chrome", out, "/dev/stdin"], input=data, env=clean_env(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    with open(out) as f:
        piped = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    check(p.returncode == 0 and len(piped) == len(xs), "from a pipe: %d slices, not %d" % (len(piped), len(xs)),
          p.stderr)
    # Nothing read ahead there: the first header read is the base, and the times are the file's own.
    check(sorted(e["ts"] - xs_first(piped) for e in piped) == sorted(e["ts"] - xs_first(xs) for e in xs),
          "from a pipe, the same times", [e["ts"] for e in piped[:3]])
    # And the text report of the same run.
    t = report([d]).stdout
    check("56 calls, 0 failures" in t, "the counts", t)


@scenario
def bounded_memory():
    """Memory does not grow with the number of calls: 4 MB and 40 MB of records, lazy and --full."""
    if not os.path.exists(GEN):
        raise Skip("bench/report-gen.py is missing")
    sys.path.insert(0, os.path.dirname(GEN))
    import importlib.util
    spec = importlib.util.spec_from_file_location("report_gen", GEN)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    d = tmpdir()
    rss = {}
    for mb in (4, 40):
        sub = os.path.join(d, "mb%d" % mb)
        gen.generate(sub, mb, ranks=2)
        for mode in ([], ["--full"], ["--chrome", "/dev/null"]):
            _, peak, code = gen.timed_run([EXE, "report"] + mode + [sub])
            check(code == 0, "exit 0 for %s" % mode)
            rss[(mb, tuple(mode))] = peak
    print("peak RSS (KiB):", rss)
    for mode in ((), ("--full",), ("--chrome", "/dev/null")):
        grow = rss[(40, mode)] - rss[(4, mode)]
        check(grow < 4096, "%s: ten times the records, less than 4 MiB more memory (%d KiB)" % (mode, grow), rss)
        check(rss[(40, mode)] < 64 * 1024, "%s: under 64 MiB" % (mode,), rss)


@scenario
def many_unfinished():
    """Files without a summary (killed runs) are read twice; memory does not grow with their number."""
    sys.path.insert(0, os.path.dirname(GEN))
    import importlib.util
    spec = importlib.util.spec_from_file_location("report_gen", GEN)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    d = tmpdir()
    rss = {}
    for n in (10, 100):
        sub = os.path.join(d, "n%d" % n)
        os.mkdir(sub)
        for i in range(n):
            shutil.copy(os.path.join(HERE, fixture("no-summary"), "train.node01.600.r3.cudnnspy.jsonl"),
                        os.path.join(sub, "r%d.jsonl" % i))
        _, peak, code = gen.timed_run([EXE, "report", sub])
        check(code == 0, "exit 0 for %d files" % n)
        rss[n] = peak
    print("peak RSS (KiB):", rss)
    check(rss[100] - rss[10] < 8192, "90 more files, less than 8 MiB more memory", rss)


@scenario
def replay():
    """The fuzz target's entry point over every seed of the corpus (built with the sanitizers when they link)."""
    if not REPLAY or not os.path.exists(REPLAY):
        raise Skip("fuzz-report-replay is not built")
    corpus = os.path.join(HERE, "corpus")
    seeds = sorted(os.listdir(corpus))
    check(20 <= len(seeds) <= 40, "20 to 40 seeds, not %d" % len(seeds))
    p = subprocess.run([REPLAY, corpus], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=300)
    check(p.returncode == 0, "the replay exited %d" % p.returncode, p.stderr[-4000:])
    check("replayed %d inputs" % len(seeds) in p.stdout, "every seed", p.stdout)
    check("ERROR" not in p.stderr and "runtime error" not in p.stderr, "no sanitizer report", p.stderr[-4000:])


@scenario
def fuzz_short():
    """libFuzzer for 20 seconds over a copy of the corpus (skipped without clang)."""
    if not FUZZ or not os.path.exists(FUZZ):
        raise Skip("no clang with -fsanitize=fuzzer: fuzz-report is not built (see docs/report.md)")
    d = tmpdir()
    work = os.path.join(d, "corpus")
    shutil.copytree(os.path.join(HERE, "corpus"), work)
    p = subprocess.run([FUZZ, "-max_total_time=20", "-max_len=4096", "-rss_limit_mb=2048", "-timeout=10",
                        "-artifact_prefix=" + d + "/", work], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=120)
    tail = p.stdout[-6000:]
    print(tail)
    check(p.returncode == 0, "the fuzzer found something (exit %d); the input is in the log" % p.returncode, tail)
    check(re.search(r"Done \d+ runs", p.stdout), "it ran", tail)


def main():
    global UPDATE
    args = sys.argv[1:]
    if args == ["--update"]:
        UPDATE = True
        args = ["single", "ranks-lib", "ranks-fail", "compare", "gpu-times", "no-summary", "robust"]
        if PRELOAD:
            args.append("real-ranks")
    if not args or any(a not in SCENARIOS for a in args):
        print("usage: test_report.py {%s} | --update" % ",".join(sorted(SCENARIOS)))
        return 2
    if not EXE or not os.access(EXE, os.X_OK):
        print("REPORT_EXE is not set or not executable")
        return 1
    for name in args:
        print("== %s: %s" % (name, SCENARIOS[name].__doc__))
        try:
            SCENARIOS[name]()
        except Skip as e:
            print("SKIP: %s" % e)
            return 77
        except Failed as e:
            print("FAIL: %s" % e)
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
