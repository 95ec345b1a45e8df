#!/usr/bin/env python3
"""End-to-end scenarios: real programs run with and without the spy.

usage: scenarios.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import contextlib
import difflib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

import oracle
import sanitizer
import schema

E = os.environ
PRELOAD = E.get("SPY_PRELOAD", "")
DROPIN9 = E.get("SPY_DROPIN9_DIR", "")
DROPIN8 = E.get("SPY_DROPIN8_DIR", "")
FAKE9 = E.get("FAKE9_DIR", "")
FAKE8 = E.get("FAKE8_DIR", "")
BUNDLED9 = E.get("BUNDLED9_DIR", "")
FAKE_CUDART = E.get("FAKE_CUDART_DIR", "")
FAKE_CUDA = E.get("FAKE_CUDA_DIR", "")
REAL = E.get("REAL_CUDNN_DIR", "")
PROGS = E.get("PROGRAMS_DIR", "")
EXAMPLES = E.get("EXAMPLES_DIR", "")
HERE = os.path.dirname(os.path.abspath(__file__))
# SPY_TEST_FORMAT=json: every run writes record format 1 unless its test chose (the default is format 2);
# either way each test reads the records through cudnnspy dump.
TEST_FORMAT = E.get("SPY_TEST_FORMAT", "")
# The end of the name of a record file in a CUDNNSPY_OUTPUT directory.
RECORD_EXT = ".cudnnspy.jsonl" if TEST_FORMAT == "json" else ".cudnnspy.rec"

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__.replace("_", "-")] = fn
    return fn


class Failed(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def need_real():
    if not REAL or not os.path.exists(os.path.join(REAL, "libcudnn.so.9")):
        print("no real cuDNN found (CUDNN_ROOT, CUDA_HOME, /usr/local/cuda): skipped")
        sys.exit(77)


def run(argv, env=None, check_rc=True, complete=True, preexec=None, signal_ok=False):
    """Runs a program; unless the test chose CUDNNSPY_OUTPUT, its records go to a temporary
    directory and every line of every file is checked against the schema (p.records)."""
    base = {k: v for k, v in E.items() if not k.startswith("CUDNNSPY_") and k not in ("LD_PRELOAD",)}
    base.pop("LD_LIBRARY_PATH", None)
    base.update(env or {})
    if TEST_FORMAT and "CUDNNSPY_FORMAT" not in base:
        base["CUDNNSPY_FORMAT"] = TEST_FORMAT
    sanitizer.child_env(base)   # sanitizer builds only: the runtime first in LD_PRELOAD, its options
    tmp = None
    if "CUDNNSPY_OUTPUT" not in base:
        tmp = tempfile.mkdtemp(prefix="cudnnspy-records-")
        base["CUDNNSPY_OUTPUT"] = tmp
    try:
        p = subprocess.run(argv, env=base, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120, preexec_fn=preexec)
        # Sanitizer builds: any report fails the test, whatever the test checks (known bugs: sanitizer.py).
        check(not sanitizer.unknown_reports(p.stderr), "%s: a sanitizer report" % argv[0], p.stderr)
        p.records = records_in(tmp, complete) if tmp else {}
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    # A program killed by a signal is a crash, unless the test provokes one.
    check(signal_ok or p.returncode >= 0, "%s was killed by signal %d" % (argv[0], -p.returncode), p.stdout,
          p.stderr)
    if check_rc:
        check(p.returncode == 0, "%s exited %d" % (argv[0], p.returncode), p.stdout, p.stderr)
    return p


def records_in(directory, complete=True):
    """{file name: [records]} for every file in the directory, each checked against the schema."""
    out = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        # Files a test planted (links, other files) are not the spy's.
        if os.path.islink(path) or (".jsonl" not in name and ".cudnnspy.rec" not in name):
            continue
        recs, errors = schema.read_file(os.path.join(directory, name), complete)
        check(not errors, "records break the documented schema", *errors[:10])
        out[name] = recs
    return out


def events(records, event, fn=None):
    return [r for recs in records.values() for r in recs if r["event"] == event and (fn is None or r["fn"] == fn)]


def prog(name):
    if name in ("host-calls", "failures"):
        return os.path.join(EXAMPLES, name)
    return os.path.join(PROGS, name)


def summary_row(stderr, fn):
    """(calls, failed, internal) of one function in the exit summary, or None."""
    m = re.search(r"^cudnnspy:\s+%s\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+$" % re.escape(fn), stderr, re.M)
    return tuple(int(x) for x in m.groups()) if m else None


def summary_total(stderr):
    m = re.search(r"summary \(pid \d+\): (\d+) calls, (\d+) failed(?: \(\d+ of them probing\))?, (\d+) internal", stderr)
    return tuple(int(x) for x in m.groups()) if m else None


def same_file(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def banner_path(stderr, flavor):
    m = re.search(r"^cudnnspy: %s: cuDNN [0-9.]+ \(\d+\) from (\S+) \[" % flavor, stderr, re.M)
    return m.group(1) if m else None


@scenario
def preload_linked():
    """A program linked to the real cuDNN, preloaded: same output, counted calls."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    plain = run([prog("host-calls")], env)
    spied = run([prog("host-calls")], dict(env, LD_PRELOAD=PRELOAD))
    check(plain.stdout == spied.stdout, "stdout changed under the spy", plain.stdout, spied.stdout)
    check("create handle: 1001" in spied.stdout, "cudnnCreate without a GPU should give 1001", spied.stdout)
    path = banner_path(spied.stderr, "preload")
    check(path and same_file(path, os.path.join(REAL, "libcudnn.so.9")), "banner names the real library",
          spied.stderr)
    check(summary_row(spied.stderr, "cudnnSetTensor4dDescriptor") == (2, 1, 0), "tensor calls counted",
          spied.stderr)
    check(summary_row(spied.stderr, "cudnnCreate") == (1, 1, 0), "cudnnCreate failure counted", spied.stderr)
    check(plain.stderr == "", "the plain run writes nothing to stderr", plain.stderr)


@scenario
def dropin_linked():
    """The same program with the drop-in directory first on the library path: it forwards to the copy the
    program would have loaded without it (the real one, next on LD_LIBRARY_PATH; the program's own RUNPATH
    names the fake, which comes after)."""
    need_real()
    plain = run([prog("host-calls")], {"LD_LIBRARY_PATH": REAL})
    spied = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN9 + ":" + REAL})
    check(plain.stdout == spied.stdout, "stdout changed under the drop-in", plain.stdout, spied.stdout)
    path = banner_path(spied.stderr, "drop-in")
    check(path is not None and os.path.basename(path) == "libcudnn.so.9" and
          not same_file(path, os.path.join(DROPIN9, "libcudnn.so.9")),
          "the drop-in forwards to a real libcudnn.so.9, not to itself", spied.stderr)
    check(summary_row(spied.stderr, "cudnnCreate") == (1, 1, 0), "calls counted", spied.stderr)
    # Pointed at the real one explicitly: that one answers.
    named = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN9,
                                       "CUDNNSPY_LIBRARY": os.path.join(REAL, "libcudnn.so.9")})
    check(plain.stdout == named.stdout, "stdout with CUDNNSPY_LIBRARY", named.stdout)
    check("[CUDNNSPY_LIBRARY]" in named.stderr, "banner says CUDNNSPY_LIBRARY chose it", named.stderr)


@scenario
def ctypes_preload():
    """Python ctypes.CDLL(path), RTLD_LOCAL: calls reach the spy through dlsym."""
    need_real()
    argv = [sys.executable, os.path.join(HERE, "ctypes_client.py"), os.path.join(REAL, "libcudnn.so.9")]
    plain = run(argv)
    spied = run(argv, {"LD_PRELOAD": PRELOAD})
    check(plain.stdout == spied.stdout, "stdout changed", plain.stdout, spied.stdout)
    check(summary_row(spied.stderr, "cudnnCreate") == (1, 1, 0), "ctypes calls counted", spied.stderr)
    check(summary_row(spied.stderr, "cudnnGetVersion") == (1, 0, 0), "ctypes calls counted", spied.stderr)
    # ctypes opening the drop-in by name: the spy is itself dlopen'ed, late.
    dropin = run([sys.executable, os.path.join(HERE, "ctypes_client.py"), "libcudnn.so.9"],
                 {"LD_LIBRARY_PATH": DROPIN9})
    check(plain.stdout == dropin.stdout, "stdout through the drop-in", plain.stdout, dropin.stdout)
    check(summary_row(dropin.stderr, "cudnnCreate") == (1, 1, 0), "drop-in calls counted", dropin.stderr)


@scenario
def dlopen_preload():
    """A C program that dlopens cuDNN and calls through dlsym(handle)."""
    need_real()
    argv = [prog("dlopen-client"), os.path.join(REAL, "libcudnn.so.9")]
    plain = run(argv)
    spied = run(argv, {"LD_PRELOAD": PRELOAD})
    check(plain.stdout == spied.stdout, "stdout changed", plain.stdout, spied.stdout)
    check("missing null, dlerror set" in spied.stdout, "a missing name stays missing", spied.stdout)
    check(summary_row(spied.stderr, "cudnnCreate") == (1, 1, 0), "calls through dlsym counted", spied.stderr)
    check(summary_row(spied.stderr, "cudnnGetErrorString") == (1, 0, 0), "counted", spied.stderr)


@scenario
def dlopen_fake():
    """dlopen + dlsym(handle) against the fake library, by name through LD_LIBRARY_PATH."""
    argv = [prog("dlopen-client"), "libcudnn.so.9"]
    env = {"LD_LIBRARY_PATH": FAKE9}
    plain = run(argv, env)
    spied = run(argv, dict(env, LD_PRELOAD=PRELOAD))
    check(plain.stdout == spied.stdout, "stdout changed", plain.stdout, spied.stdout)
    check(summary_row(spied.stderr, "cudnnCreate") == (1, 0, 0), "counted", spied.stderr)


@scenario
def rtld_next():
    """dlsym(RTLD_NEXT) from another library keeps its meaning under the spy."""
    plain = run([prog("rtld-next")])
    spied = run([prog("rtld-next")], {"LD_PRELOAD": PRELOAD})
    check(plain.stdout == spied.stdout == "next 2 -1\n", "RTLD_NEXT from probe 1 finds probe 2",
          plain.stdout, spied.stdout)


@scenario
def exceptions_preload():
    """C++ throws and catches under the spy: the unwinder is the program's."""
    spied = run([prog("exceptions")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9})
    check("caught 500" in spied.stdout, "exceptions caught", spied.stdout, spied.stderr)


@scenario
def internal_calls_real():
    """cuDNN's sub-libraries calling each other are internal calls, not the program's."""
    need_real()
    spied = run([prog("folded-conv")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": REAL})
    check("folded: 0" in spied.stdout, "the call succeeds", spied.stdout)
    total = summary_total(spied.stderr)
    check(total is not None and total[0] == 17, "exactly the program's 17 calls are counted", spied.stderr)
    check(total[2] > 0, "cuDNN's own calls are seen as internal", spied.stderr)
    row = summary_row(spied.stderr, "cudnnSetTensorTransformDescriptor")
    check(row is not None and row[0] == 0 and row[2] > 0, "transform set only internally", spied.stderr)


@scenario
def internal_calls_fake():
    """The fake's cudnnSetTensor4dDescriptor calls cudnnSetTensor4dDescriptorEx by name."""
    spied = run([prog("host-calls")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9})
    check(summary_row(spied.stderr, "cudnnSetTensor4dDescriptorEx") == (0, 0, 2), "internal", spied.stderr)
    check(summary_row(spied.stderr, "cudnnSetTensor4dDescriptor") == (2, 0, 0), "program's", spied.stderr)


@scenario
def fake_statuses():
    """Statuses the fake is told to return reach the program unchanged, and are counted."""
    env = {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001,cudnnDestroyTensorDescriptor=4000"}
    plain = run([prog("host-calls")], env)
    spied = run([prog("host-calls")], dict(env, LD_PRELOAD=PRELOAD))
    check(plain.stdout == spied.stdout, "stdout changed", plain.stdout, spied.stdout)
    check("destroy tensor: 4000" in spied.stdout and "create handle: 1001" in spied.stdout, "statuses",
          spied.stdout)
    check(summary_row(spied.stderr, "cudnnDestroyTensorDescriptor") == (1, 1, 0), "counted", spied.stderr)
    dropin = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN9, "FAKECUDNN_STATUS": env["FAKECUDNN_STATUS"],
                                        "CUDNNSPY_LIBRARY": FAKE9})
    check(plain.stdout == dropin.stdout, "drop-in stdout", plain.stdout, dropin.stdout)
    check(banner_path(dropin.stderr, "drop-in") is not None, "banner", dropin.stderr)


@scenario
def dropin8_fake():
    """The libcudnn.so.8 drop-in in front of an 8.x library."""
    p = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN8, "CUDNNSPY_LIBRARY": FAKE8})
    check(p.returncode == 0, "runs")
    # host-calls is linked against libcudnn.so.9; the 8 drop-in is checked by its exports and this banner.
    env = {"LD_LIBRARY_PATH": FAKE8}
    q = run([prog("dlopen-client"), os.path.join(DROPIN8, "libcudnn.so.8")], dict(env, CUDNNSPY_LIBRARY=FAKE8))
    check("version 8907" in q.stdout, "the 8.x fake answers through the 8 drop-in", q.stdout, q.stderr)
    check(re.search(r"drop-in: cuDNN 8\.9\.7 \(8907\)", q.stderr), "banner with 8.x version", q.stderr)


@scenario
def missing_function():
    """A 9.x-only function against an 8.x library: NOT_INITIALIZED (1), one warning, strings still work."""
    p = run([prog("missing-function")], {"LD_LIBRARY_PATH": DROPIN9,
                                         "CUDNNSPY_LIBRARY": os.path.join(FAKE8, "libcudnn.so.8")})
    check("version 8907" in p.stdout, "the 8.x fake answers", p.stdout, p.stderr)
    check("graph version check 1\nagain 1" in p.stdout, "NOT_INITIALIZED in 8.x numbering", p.stdout)
    check(re.search(r"last error \[cudnnspy: .+\]", p.stdout), "last error string filled", p.stdout)
    check("error string FAKE_STATUS_1" in p.stdout, "the real cudnnGetErrorString still answers", p.stdout)
    check(p.stderr.count("cudnnGraphVersionCheck is not in") == 1, "one warning per missing function",
          p.stderr)


def unusable(value, expect):
    env = {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": value}
    p = run([prog("host-calls")], env)
    check("version 0" in p.stdout, "cudnnGetVersion gives 0 without a library", p.stdout)
    check("create tensor: 1001" in p.stdout and "create handle: 1001" in p.stdout,
          "calls return NOT_INITIALIZED", p.stdout)
    check("error string 2000: CUDNN_STATUS_BAD_PARAM" in p.stdout, "cudnnGetErrorString still answers", p.stdout)
    check(expect in p.stderr and "not trying any other copy" in p.stderr, "one clear message", p.stderr)
    check(p.stderr.count("\n") < 20, "no flood of messages", p.stderr)


@scenario
def library_unusable():
    """CUDNNSPY_LIBRARY set but unusable: a clear line, no other copy, failures returned, no crash."""
    unusable("/nonexistent/libcudnn.so.9", "CUDNNSPY_LIBRARY=/nonexistent/libcudnn.so.9")
    with tempfile.TemporaryDirectory() as d:
        unusable(d, "no libcudnn.so.9, libcudnn.so.8 or libcudnn.so in that directory")
        junk = os.path.join(d, "libcudnn.so.9")
        with open(junk, "w") as f:
            f.write("not a library\n")
        unusable(junk, "cannot use it")
    unusable("relative/libcudnn.so.9", "is not an absolute path")
    # Looked at before dlopen, which blocks forever on a FIFO and dies of SIGBUS on a truncated file.
    with tempfile.TemporaryDirectory() as d:
        real = os.path.join(FAKE9, "libcudnn.so.9")
        data = open(real, "rb").read()
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        unusable(fifo, "is a FIFO, not a library")
        inner = os.path.join(d, "fifo-dir")
        os.mkdir(inner)
        os.mkfifo(os.path.join(inner, "libcudnn.so.9"))
        unusable(inner, "libcudnn.so.9 is a FIFO, not a library")
        os.mkdir(os.path.join(d, "dir-dir"))
        os.mkdir(os.path.join(d, "dir-dir", "libcudnn.so.9"))
        unusable(os.path.join(d, "dir-dir"), "libcudnn.so.9 is a directory, not a library")
        cut = os.path.join(d, "cut.so")
        with open(cut, "wb") as f:
            f.write(data[:len(data) // 2])
        unusable(cut, "is truncated")
        arch = os.path.join(d, "arch.so")
        with open(arch, "wb") as f:
            # e_machine (bytes 18-19): aarch64 (183) on x86-64, x86-64 (62) elsewhere.
            other = 62 if data[18:20] == bytes([183, 0]) else 183
            f.write(data[:18] + bytes([other, 0]) + data[20:])
        unusable(arch, "is built for another machine")
        # Preloaded, the same check.
        p = run([prog("host-calls")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_LIBRARY": fifo})
        check("is a FIFO, not a library" in p.stderr and "version 0" in p.stdout, "preload: refused", p.stderr)
    unusable(os.path.join(DROPIN9, "libcudnn.so.9"), "the spy itself")


@scenario
def stderr_none():
    """CUDNNSPY_STDERR=none keeps stderr silent."""
    p = run([prog("host-calls")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_STDERR": "none"})
    check(p.stderr == "", "nothing on stderr", p.stderr)
    q = run([prog("host-calls")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_STDERR": "bogus"})
    check("CUDNNSPY_STDERR=bogus" in q.stderr and "summary" in q.stderr, "bad value: warning, default", q.stderr)


def threads(libdir):
    p = run([prog("threads"), "20000"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": libdir})
    check("threads 8 calls 20000 fails 0" in p.stdout, "threads ran", p.stdout, p.stderr)
    check(summary_row(p.stderr, "cudnnSetTensor4dDescriptor")[:2] == (160000, 0), "every call counted", p.stderr)
    check(summary_row(p.stderr, "cudnnCreateTensorDescriptor") == (8, 0, 0), "creates counted", p.stderr)


@scenario
def threads_counts():
    """8 threads calling at once through the fake: exact counts."""
    threads(FAKE9)


@scenario
def threads_real():
    """8 threads calling the real cuDNN at once: exact counts, no internal calls mistaken."""
    need_real()
    threads(REAL)


@scenario
def jump_stubs():
    """The undeclared exports pass through the jump stubs with every argument intact."""
    plain = run([prog("stub-call")], {"LD_LIBRARY_PATH": FAKE9})
    check(plain.stdout.count("\n") == 8 and "1000096.50" in plain.stdout, "the fake answers", plain.stdout)
    spied = run([prog("stub-call")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
    check(plain.stdout == spied.stdout, "preload stubs change nothing", plain.stdout, spied.stdout)
    dropin = run([prog("stub-call")], {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": FAKE9})
    check(plain.stdout == dropin.stdout, "drop-in stubs change nothing", plain.stdout, dropin.stdout)


@scenario
def fork_counts():
    """A forked child counts only its own calls; the parent keeps its own."""
    p = run([sys.executable, os.path.join(HERE, "fork_client.py"), os.path.join(FAKE9, "libcudnn.so.9")],
            {"LD_PRELOAD": PRELOAD})
    summaries = re.findall(r"summary \(pid (\d+)\): (\d+) calls", p.stderr)
    check(len(summaries) == 2, "two summaries, one per process", p.stderr)
    counts = sorted(int(c) for _, c in summaries)
    check(counts == [2, 3], "child 3 calls, parent 2 (one before the fork, one after)", p.stderr)
    check(p.stderr.count("cudnnspy: preload:") == 1, "one banner: the child inherits the resolution", p.stderr)


@scenario
def early_constructor():
    """Another library's constructor calls cuDNN before the spy's constructor: lazy init copes."""
    libdirs = PROGS + ":"
    plain = run([prog("early-call")], {"LD_LIBRARY_PATH": libdirs + FAKE9})
    for env in ({"LD_LIBRARY_PATH": libdirs + FAKE9, "LD_PRELOAD": PRELOAD},
                {"LD_LIBRARY_PATH": libdirs + DROPIN9, "CUDNNSPY_LIBRARY": FAKE9}):
        p = run([prog("early-call")], env)
        check(p.stdout == plain.stdout == "early 91900 main 91900\n", "both calls answered", plain.stdout,
              p.stdout, p.stderr)
        check(summary_row(p.stderr, "cudnnGetVersion") == (2, 0, 0), "both calls counted", p.stderr)

# ---- Recording (issue 3) ----

def only_file(p):
    check(len(p.records) == 1, "one record file per process", repr(list(p.records)), p.stderr)
    return list(p.records.values())[0]


@scenario
def record_failures_real():
    """A failing call with the real cuDNN: decoded arguments, cuDNN's message, stack, recent calls,
    in the file and on stderr; the program's own results and last-error string unchanged."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    plain = run([prog("host-calls")], env)
    spied = run([prog("host-calls")], dict(env, LD_PRELOAD=PRELOAD))
    check(plain.stdout == spied.stdout, "stdout, including cuDNN's message read by the program", plain.stdout,
          spied.stdout)
    recs = only_file(spied)
    header = recs[0]
    check(same_file(header["library"]["path"], os.path.join(REAL, "libcudnn.so.9")) and
          header["library"]["version"] >= 90000, "header names the real library", repr(header))
    bad = events(spied.records, "failure", "cudnnSetTensor4dDescriptor")
    check(len(bad) == 1, "one failure record for the bad tensor", repr(bad))
    f = bad[0]
    check(f["status"] == 2000 and f["status_name"] == "CUDNN_STATUS_BAD_PARAM", "status decoded", repr(f))
    check(f["args"]["n"] == -1 and f["args"]["format"] == "CUDNN_TENSOR_NCHW" and
          f["args"]["dataType"] == "CUDNN_DATA_FLOAT", "arguments decoded", repr(f["args"]))
    check(f["args"]["tensorDesc"]["id"] == "tensor#1" and
          f["args"]["tensorDesc"]["desc"] == "float NCHW 32x3x224x224", "descriptor state from the last good Set",
          repr(f["args"]))
    check(f["message"] and f["message"] in plain.stdout, "cuDNN's message, the same the program reads", repr(f))
    check(any("host-calls" in (fr["module"] or "") for fr in f["stack"]), "stack reaches the program", repr(f))
    check([r["fn"] for r in f["recent"]][-2:] == ["cudnnCreateTensorDescriptor", "cudnnSetTensor4dDescriptor"],
          "recent calls end with the ones before", repr(f["recent"]))
    create = events(spied.records, "failure", "cudnnCreate")
    check(len(create) == 1 and create[0]["status"] == 1001 and "cudaGetDeviceCount" in (create[0]["message"] or ""),
          "cudnnCreate without a GPU: 1001 and its message", repr(create))
    summ = recs[-1]
    check(summ["calls"] == 9 and summ["failures"] == 2, "summary counts", repr(summ))
    line = [l for l in spied.stderr.splitlines() if "cudnnSetTensor4dDescriptor(" in l]
    check(len(line) == 1 and "n=-1" in line[0] and "CUDNN_STATUS_BAD_PARAM (2000)" in line[0] and
          f["message"] in line[0] and " | at " in line[0] and " | after " in line[0] and "record in" in line[0],
          "one stderr line with arguments, status, message, stack, recent calls and the file", spied.stderr)


@scenario
def failures_example_real():
    """examples/failures.c: each common failure recorded with the message the program also reads."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    plain = run([prog("failures")], env)
    spied = run([prog("failures")], dict(env, LD_PRELOAD=PRELOAD))
    check(plain.stdout == spied.stdout, "stdout unchanged", plain.stdout, spied.stdout)
    fails = events(spied.records, "failure")
    check([f["fn"] for f in fails] == ["cudnnCreate", "cudnnGetStream", "cudnnSetTensor4dDescriptor",
                                       "cudnnSetFilter4dDescriptor", "cudnnSetConvolution2dDescriptor"],
          "one record per failure", repr([f["fn"] for f in fails]))
    for f in fails:
        check(f["message"] and "[%s]" % f["message"] in spied.stdout, "message recorded and still handed over",
              repr(f), spied.stdout)
    check(fails[1]["args"]["handle"] is None and fails[1]["status"] == 2000, "NULL handle: BAD_PARAM", repr(fails[1]))
    check(fails[3]["args"]["k"] == -4, "bad filter value shown", repr(fails[3]))


EXPECTED_SETS = {
    "tensor#1": ("half NHWC 8x16x32x64", {"format": "CUDNN_TENSOR_NHWC", "dataType": "CUDNN_DATA_HALF", "n": 8}),
    "tensor#2": ("double 2x4x6x8 strides 192x48x8x1", {"dataType": "CUDNN_DATA_DOUBLE", "dimA": [2, 4, 6, 8],
                                                     "strideA": [192, 48, 8, 1]}),
    "filter#1": ("bfloat16 NCHW 32x16x5x5", {"dataType": "CUDNN_DATA_BFLOAT16", "k": 32}),
    "filter#2": ("int8 NHWC 16x4x3x3", {"format": "CUDNN_TENSOR_NHWC", "filterDimA": [16, 4, 3, 3]}),
    "convolution#1": ("pad 1x2 stride 3x4 dilation 1x1 convolution float", {"mode": "CUDNN_CONVOLUTION"}),
    "convolution#2": ("pad 1x2 stride 3x4 dilation 1x1 cross_correlation half", {"padA": [1, 2], "filterStrideA": [3, 4],
                                                                    "dilationA": [1, 1]}),
    "activation#1": ("clipped_relu coef 6 propagate_nan", {"reluNanOpt": "CUDNN_PROPAGATE_NAN", "coef": 6}),
    "pooling#1": ("max window 3x3 pad 1x1 stride 2x2 not_propagate_nan", {"maxpoolingNanOpt": "CUDNN_NOT_PROPAGATE_NAN"}),
    "pooling#2": (None, {"mode": "CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING", "windowDimA": [2, 2]}),
    "lrn#1": (None, {"lrnN": 5, "lrnAlpha": 0.0001, "lrnBeta": 0.75, "lrnK": 2}),
    "optensor#1": (None, {"opTensorOp": "CUDNN_OP_TENSOR_MUL", "opTensorNanOpt": "CUDNN_NOT_PROPAGATE_NAN"}),
    "reducetensor#1": (None, {"reduceTensorOp": "CUDNN_REDUCE_TENSOR_NORM2",
                              "reduceTensorIndices": "CUDNN_REDUCE_TENSOR_FLATTENED_INDICES",
                              "reduceTensorIndicesType": "CUDNN_32BIT_INDICES"}),
    "spatialtransformer#1": (None, {"samplerType": "CUDNN_SAMPLER_BILINEAR", "dimA": [1, 3, 5, 5]}),
}


@scenario
def decode_real():
    """Every descriptor kind the real 9.19 accepts without a GPU, decoded as it was set."""
    need_real()
    p = run([prog("decode-all")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD,
                                   "CUDNNSPY_TRACE": "cudnnSet*", "CUDNNSPY_STDERR": "none"})
    check(p.stdout == "done\n", "every Set call succeeded", p.stdout)
    seen = {}
    for f in events(p.records, "failure"):
        for v in f["args"].values():
            if isinstance(v, dict) and "id" in v:
                seen[v["id"]] = v
    for ident, (desc, fields) in EXPECTED_SETS.items():
        check(ident in seen, "%s appears in a record" % ident, repr(sorted(seen)))
        got = seen[ident]
        if desc:
            check(got.get("desc") == desc, "%s summary" % ident, repr(got))
        for k, v in fields.items():
            check(got["set"]["args"].get(k) == v, "%s: %s set to %r" % (ident, k, v), repr(got))
    conv = seen["convolution#1"]
    check(conv.get("mathType") == "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION" and conv.get("groupCount") == 4,
          "single-value Set calls kept beside the shape", repr(conv))
    sets = events(p.records, "call")
    check(len(sets) == 16 and all(c["fn"].startswith("cudnnSet") for c in sets), "traced Set calls recorded",
          repr([c["fn"] for c in sets]))
    nd = [c for c in sets if c["fn"] == "cudnnSetTensorNdDescriptor"][0]
    check(nd["args"]["dimA"]["values"] == [2, 4, 6, 8], "input arrays read after success", repr(nd["args"]))
    fwd = events(p.records, "failure", "cudnnConvolutionForward")[0]
    check(fwd["args"]["algo"] == "CUDNN_CONVOLUTION_FWD_ALGO_GEMM", "algorithm enum by name", repr(fwd["args"]))


@scenario
def trace_all_real():
    """CUDNNSPY_TRACE='*': every call of the program recorded, none of cuDNN's internal ones; out-values."""
    need_real()
    p = run([prog("folded-conv")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_TRACE": "*"})
    calls = events(p.records, "call")
    check(len(calls) == 17, "the program's 17 calls", repr([c["fn"] for c in calls]))
    create = [c for c in calls if c["fn"] == "cudnnCreateTensorDescriptor"]
    check(create[0]["args"]["tensorDesc"]["value"] == "tensor#1", "the created id as the out-value",
          repr(create[0]))
    check(all(isinstance(c["dur_ns"], int) for c in calls), "traced calls are timed", repr(calls[:2]))
    folded = [c for c in calls if c["fn"] == "cudnnGetFoldedConvBackwardDataDescriptors"][0]
    check(folded["args"]["filterDesc"]["desc"] == "float NCHW 16x3x3x3", "descriptor summary", repr(folded))
    summ = list(p.records.values())[0][-1]
    check(summ["internal"] > 0 and summ["calls"] == 17, "internal calls counted apart", repr(summ))


@scenario
def status_numbering_8():
    """An 8.x library's failure: the 8.x status numbering decoded, no 9.x message asked for."""
    p = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": FAKE8,
                                   "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=3"})
    fails = events(p.records, "failure", "cudnnSetTensor4dDescriptor")
    check(len(fails) == 2 and fails[0]["status"] == 3 and fails[0]["status_name"] == "CUDNN_STATUS_BAD_PARAM",
          "8.x BAD_PARAM", repr(fails))
    check(fails[0]["message"] is None, "8.x has no cudnnGetLastErrorString", repr(fails[0]))
    check(list(p.records.values())[0][0]["library"]["version"] == 8907, "header version", repr(p.records))


@scenario
def last_error_off():
    """CUDNNSPY_LAST_ERROR=off: the spy leaves cuDNN's message alone; the program reads it itself."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    plain = run([prog("failures")], env)
    spied = run([prog("failures")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_LAST_ERROR="off"))
    check(plain.stdout == spied.stdout, "stdout unchanged", plain.stdout, spied.stdout)
    check(all(f["message"] is None for f in events(spied.records, "failure")), "no message read",
          repr(events(spied.records, "failure")))


def spied_env(extra=None):
    env = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"}
    env.update(extra or {})
    return env


@scenario
def output_unwritable():
    """An output that cannot be created: one warning, the summary on stderr, the program unchanged."""
    plain = run([prog("host-calls")], {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"})
    for target in ("/proc/cudnnspy-no-such-dir/out.jsonl", "/proc/", "/dev/full", "/dev/null"):
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": target}))
        check(p.stdout == plain.stdout, "stdout unchanged", p.stdout)
        check(p.stderr.count("cannot create a record file") == 1, "one warning", p.stderr)
        check(summary_total(p.stderr) is not None, "the summary still on stderr", p.stderr)
    check(not os.path.exists("/dev/full.1") and not os.path.exists("/dev/null.1"), "nothing created beside a device")


@scenario
def output_disk_full():
    """Writes failing (a file-size limit stands in for a full disk): one warning, drops counted."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "300"], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*"}), preexec=limit)
        check("threads 8 calls 300 fails 0" in p.stdout, "the program ran to the end", p.stdout, p.stderr)
        check(p.stderr.count("cannot write") == 1, "one warning", p.stderr)
        m = re.search(r"^cudnnspy: (\d+) records could not be written", p.stderr, re.M)
        check(m and int(m.group(1)) > 1000, "dropped records counted", p.stderr)
        check(summary_row(p.stderr, "cudnnSetTensor4dDescriptor")[0] == 2400, "counting unaffected", p.stderr)


@scenario
def output_symlink_and_clash():
    """A planted symlink or an existing file is never written through; a clash gets a suffix;
    a world-writable directory without the sticky bit is refused."""
    with tempfile.TemporaryDirectory() as d:
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        pattern = os.path.join(d, "out.jsonl")
        os.symlink(victim, pattern)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": pattern}))
        check(open(victim).read() == "precious\n", "the link's target untouched")
        check(os.path.exists(pattern + ".1"), "written under a new name", repr(os.listdir(d)), p.stderr)
        recs = records_in(d)
        check(len(recs["out.jsonl.1"]) >= 2, "a complete file", repr(recs))
        check(oct(os.stat(pattern + ".1").st_mode & 0o777) == "0o600", "mode 0600")
        # Two processes at once with the same pattern: two files.
        env = dict(spied_env({"CUDNNSPY_OUTPUT": os.path.join(d, "same.jsonl")}))
        base = {k: v for k, v in E.items() if not k.startswith("CUDNNSPY_") and k != "LD_LIBRARY_PATH"}
        base.update(env)
        sanitizer.child_env(base)
        procs = [subprocess.Popen([prog("host-calls")], env=base, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for _ in range(2)]
        for q in procs:
            q.wait()
        names = sorted(n for n in os.listdir(d) if n.startswith("same.jsonl"))
        check(names == ["same.jsonl", "same.jsonl.1"], "two files", repr(names))
        recs = records_in(d)
        check(recs["same.jsonl"][0]["pid"] != recs["same.jsonl.1"][0]["pid"], "one per process")
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d}))
        check("writable by everyone and not sticky" in p.stderr and not os.listdir(d), "refused", p.stderr)
        os.chmod(d, 0o1777)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d}))
        check(len(os.listdir(d)) == 1, "a sticky directory is fine", p.stderr)


@scenario
def output_pattern():
    """%p, %h, %r and %e in CUDNNSPY_OUTPUT; the rank from the launcher's variables."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": os.path.join(d, "%e-%r-%p-%h-%%.jsonl"),
                                                 "SLURM_PROCID": "3"}))
        names = os.listdir(d)
        check(len(names) == 1 and re.match(r"^host-calls-3-\d+-.+-%\.jsonl$", names[0]), "expanded", repr(names))
        check(records_in(d)[names[0]][0]["rank"] == 3, "rank in the header")
    with tempfile.TemporaryDirectory() as d:
        run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d, "RANK": "7"}))
        names = os.listdir(d)
        check(len(names) == 1 and re.match(r"^host-calls\..+\.\d+\.r7" + re.escape(RECORD_EXT) + "$", names[0]),
              "directory naming with the rank", repr(names))


@scenario
def fork_records():
    """fork: parent and child each write their own complete file."""
    with tempfile.TemporaryDirectory() as d:
        run([sys.executable, os.path.join(HERE, "fork_client.py"), os.path.join(FAKE9, "libcudnn.so.9")],
            {"LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*"})
        recs = records_in(d)
        check(len(recs) == 2, "two files", repr(list(recs)))
        heads = {r[0]["pid"]: r for r in recs.values()}
        parent = [r for r in recs.values() if r[0]["ppid"] not in heads][0]
        child = [r for r in recs.values() if r[0]["ppid"] in heads][0]
        check([c["fn"] for c in child if c["event"] == "call"] == ["cudnnGetCudartVersion"] * 3,
              "the child's own calls only", repr(child))
        check([c["fn"] for c in parent if c["event"] == "call"] == ["cudnnGetVersion", "cudnnGetMaxDeviceVersion"],
              "the parent's calls, none twice", repr(parent))


@scenario
def exec_child():
    """A shell that execs the program: LD_PRELOAD and the configuration carry over; the shell, which never
    calls cuDNN, leaves no file."""
    with tempfile.TemporaryDirectory() as d:
        run(["/bin/sh", "-c", "%s >/dev/null; exit 0" % prog("host-calls")],
            spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "cudnnGetVersion"}))
        recs = records_in(d)
        check(len(recs) == 1 and list(recs.values())[0][0]["program"] == "host-calls", "the child's file only",
              repr(list(recs)))
        check(len(events(recs, "call", "cudnnGetVersion")) == 2, "the configuration reached the child")


@scenario
def threads_records():
    """8 threads traced at once: every call recorded once, no torn lines."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "2000"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                            "CUDNNSPY_TRACE": "cudnnSetTensor4dDescriptor"})
        recs = records_in(d)
        calls = events(recs, "call", "cudnnSetTensor4dDescriptor")
        check(len(calls) == 16000, "16000 records", str(len(calls)))
        per_tid = {}
        for c in calls:
            per_tid[c["tid"]] = per_tid.get(c["tid"], 0) + 1
        check(sorted(per_tid.values()) == [2000] * 8, "2000 per thread", repr(per_tid))


@scenario
def rate_limit():
    """Many identical failures: N stderr lines, one 'suppressing' line, every failure in the records."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "50"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                          "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000",
                                          "CUDNNSPY_RATE_LIMIT": "4"}, check_rc=False)
        check(p.returncode == 1, "the program ran to its end (it exits 1 when calls failed)", str(p.returncode))
        lines = [l for l in p.stderr.splitlines() if l.startswith("cudnnspy: cudnnSetTensor4dDescriptor(")]
        check(len(lines) == 4, "4 lines", p.stderr)
        check(p.stderr.count("suppressing") == 1, "one suppressing line", p.stderr)
        check(len(events(records_in(d), "failure", "cudnnSetTensor4dDescriptor")) == 400, "all 400 recorded")


# ---- Which cuDNN answers (issue 4, at run time) ----

def findings(p):
    return {f["id"]: f for f in events(p.records, "finding")}


def libraries(p):
    return events(p.records, "library")


@scenario
def audit_clean_real():
    """One real copy: library records (the answering one marked, versions asked), no finding at all."""
    need_real()
    p = run([prog("host-calls")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD})
    libs = libraries(p)
    disp = [l for l in libs if l["kind"] == "cudnn"]
    check(len(disp) == 1 and disp[0]["answers"] and disp[0]["version"] == 91900 and disp[0]["soname"] ==
          "libcudnn.so.9" and len(disp[0]["build_id"] or "") == 40, "the dispatcher", repr(disp))
    subs = [l for l in libs if l["kind"] == "cudnn-sublib"]
    check(any(l["soname"] == "libcudnn_graph.so.9" and l["version"] == 91900 for l in subs),
          "sub-libraries with their versions", repr(subs))
    check(all(l["version_check"] in (None, 0) for l in subs), "version checks pass", repr(subs))
    check(not findings(p) and "conflicts.md" not in p.stderr, "no false alarm", repr(findings(p)), p.stderr)


@scenario
def audit_two_copies_real():
    """The real cuDNN and a second copy of it (a "conda" copy) in one process: both named, the answering one
    said; with CUDNNSPY_LIBRARY on the copy, its sub-libraries come from elsewhere and that is said too."""
    need_real()
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "libcudnn.so.9")
        shutil.copy(os.path.join(REAL, "libcudnn.so.9"), copy)
        p = run([prog("load-copies"), copy], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD})
        f = findings(p)
        check("runtime-multiple-copies" in f, "two copies found", p.stderr)
        paths = f["runtime-multiple-copies"]["paths"]
        check(copy in paths and os.path.realpath(os.path.join(REAL, "libcudnn.so.9")) in paths,
              "both paths named", repr(paths))
        check("%s (91900) answers the program's calls by name (copy 0)" % os.path.realpath(
              os.path.join(REAL, "libcudnn.so.9")) in f["runtime-multiple-copies"]["message"] and
              "%s (91900) answers no calls" % copy in f["runtime-multiple-copies"]["message"],
              "the answering copy named, and the one that answers none", repr(f))
        check(len([l for l in p.stderr.splitlines() if "runtime-multiple-copies" in l]) == 1, "said once on stderr",
              p.stderr)
        q = run([prog("load-copies")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_LIBRARY": copy})
        g = findings(q)
        check({"library-not-requested", "sublib-version-mismatch", "runtime-multiple-copies"} <= set(g),
              "the requested copy answers with another copy's sub-libraries", repr(sorted(g)), q.stderr)
        check(d in g["sublib-version-mismatch"]["message"], "names the directories", repr(g))


@scenario
def audit_mixed_majors():
    """libcudnn.so.8 and libcudnn.so.9 in one process."""
    p = run([prog("load-copies"), os.path.join(FAKE8, "libcudnn.so.8")], {"LD_LIBRARY_PATH": FAKE9,
                                                                          "LD_PRELOAD": PRELOAD})
    f = findings(p)
    check("runtime-mixed-majors" in f and "runtime-multiple-copies" in f, "mixed majors", repr(sorted(f)), p.stderr)
    check(any(x.endswith("libcudnn.so.8") for x in f["runtime-mixed-majors"]["paths"]), "paths", repr(f))


@scenario
def audit_cuda_versions():
    """A CUDA runtime of another major than cuDNN was built for, and a driver older than the runtime."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "FAKECUDART_VERSION": "11080",
           "FAKECUDA_DRIVER": "11020"}
    p = run([prog("load-copies"), os.path.join(FAKE_CUDART, "libcudart.so.12"),
             os.path.join(FAKE_CUDA, "libcuda.so.1")], env)
    f = findings(p)
    check({"cuda-major-mismatch", "driver-older-than-runtime"} <= set(f), "both CUDA rules", repr(sorted(f)),
          p.stderr)
    check("CUDA 12.8" in f["cuda-major-mismatch"]["message"] and "11.8" in f["cuda-major-mismatch"]["message"],
          "versions in words", repr(f))
    ok = run([prog("load-copies"), os.path.join(FAKE_CUDART, "libcudart.so.12"),
              os.path.join(FAKE_CUDA, "libcuda.so.1")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
    check(not findings(ok), "matching versions: silent", repr(findings(ok)), ok.stderr)
    versions = {l["kind"]: l["version"] for l in libraries(ok)}
    check(versions.get("cudart") == 12080 and versions.get("cuda") == 12080, "versions asked", repr(versions))


@scenario
def audit_sublib_checks():
    """A sub-library from another directory whose own version check fails; a failure naming a library that
    did not load."""
    with tempfile.TemporaryDirectory() as d:
        sub = os.path.join(d, "libcudnn_ops.so.9")
        shutil.copy(os.path.join(FAKE9, "libcudnn.so.9"), sub)
        p = run([prog("load-copies"), sub], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD,
                                             "FAKECUDNN_STATUS": "cudnnOpsVersionCheck=1002"})
        f = findings(p)
        check({"version-check-failed", "sublib-version-mismatch"} <= set(f), "both sub-library rules",
              repr(sorted(f)), p.stderr)
        check("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH" in f["version-check-failed"]["message"], "status named",
              repr(f))
    msg = "libcudnn_cnn.so.9: cannot open shared object file: No such file or directory"
    q = run([prog("load-copies")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD,
                                    "FAKECUDNN_STATUS": "cudnnCreate=1001", "FAKECUDNN_MESSAGE": msg})
    g = findings(q)
    check("sublib-load-failed" in g and msg in g["sublib-load-failed"]["message"], "a load failure is a finding",
          repr(g), q.stderr)


# ---- GPU time, synchronizing mode, fault injection (issue 6) ----

def gpu_env(extra=None):
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
    env.update(extra or {})
    return env


def cudart():
    return os.path.join(FAKE_CUDART, "libcudart.so.12")


def summary_of(p):
    return [r for recs in p.records.values() for r in recs if r["event"] == "summary"][0]


@scenario
def gpu_time():
    """GPU time from CUDA events, resolved later and attached to the right calls; host-only calls untimed."""
    plain = run([prog("gpu-calls"), "5", cudart()], {"LD_LIBRARY_PATH": FAKE9})
    p = run([prog("gpu-calls"), "5", cudart()], gpu_env({"CUDNNSPY_GPU_TIME": "1", "CUDNNSPY_TRACE": "cudnnAddTensor",
                                                         "FAKECUDA_NOT_READY": "2"}))
    check(plain.stdout == p.stdout and "last error 0" in p.stdout, "the program's results and error state",
          plain.stdout, p.stdout)
    gpus = events(p.records, "gpu")
    calls = events(p.records, "call", "cudnnAddTensor")
    check(len(gpus) == 5 and all(g["fn"] == "cudnnAddTensor" and g["gpu_ns"] == 250000 for g in gpus),
          "five GPU times of 250 us", repr(gpus))
    check(sorted((g["tid"], g["t_ns"]) for g in gpus) == sorted((c["tid"], c["t_ns"]) for c in calls),
          "each GPU time joins its call record by thread and start", repr(gpus), repr(calls))
    fns = {f["fn"]: f for f in summary_of(p)["functions"]}
    check(fns["cudnnAddTensor"]["gpu_timed"] == 5 and fns["cudnnAddTensor"]["gpu_total_ns"] == 1250000 and
          fns["cudnnSetTensor4dDescriptor"]["gpu_timed"] == 0, "summary per function", repr(fns))
    check(summary_of(p)["gpu"]["timed"] == 5, "summary totals", repr(summary_of(p)))


@scenario
def gpu_time_limits():
    """The event pool running dry, stream capture, and the error state: skipped, counted, untouched."""
    p = run([prog("gpu-calls"), "300", cudart()], gpu_env({"CUDNNSPY_GPU_TIME": "1",
                                                           "FAKECUDA_NOT_READY": "1000000000"}))
    g = summary_of(p)["gpu"]
    check(g["timed"] == 256 and g["skipped_pool"] == 44, "256 in flight at most, the rest counted", repr(g))
    p = run([prog("gpu-calls"), "5", cudart()], gpu_env({"CUDNNSPY_GPU_TIME": "1", "CUDNNSPY_SYNC": "1",
                                                         "FAKECUDA_CAPTURING": "1"}))
    g = summary_of(p)["gpu"]
    check(g["skipped_capture"] == 5 and g["timed"] == 0 and not events(p.records, "gpu"), "never during capture",
          repr(g))
    for extra, args in (({"FAKECUDA_EVENT_FAIL": "1"}, []), ({}, ["set-error"])):
        plain = run([prog("gpu-calls"), "5", cudart()] + args, dict({"LD_LIBRARY_PATH": FAKE9}, **extra))
        p = run([prog("gpu-calls"), "5", cudart()] + args, gpu_env(dict({"CUDNNSPY_GPU_TIME": "1"}, **extra)))
        check(plain.stdout == p.stdout, "the program's CUDA error state is untouched", plain.stdout, p.stdout)
        check(summary_of(p)["gpu"]["skipped_error"] > 0 and summary_of(p)["gpu"]["timed"] == 0, "skipped",
              repr(summary_of(p)))


@scenario
def gpu_no_runtime():
    """No CUDA runtime loaded: GPU timing says so once and stays off; everything else works."""
    p = run([prog("gpu-calls"), "5"], gpu_env({"CUDNNSPY_GPU_TIME": "1", "CUDNNSPY_SYNC": "on"}))
    check("calls 5 failed 0" in p.stdout, "the program ran", p.stdout)
    check(p.stderr.count("GPU timing and synchronizing are off") == 1, "said once", p.stderr)
    check(summary_of(p)["gpu"]["runtime"] is False and summary_row(p.stderr, "cudnnAddTensor")[0] == 5,
          "counted as usual", p.stderr)


@scenario
def sync_blames_call():
    """CUDNNSPY_SYNC: an asynchronous fault is recorded as a failure of the call that caused it."""
    env = {"FAKECUDA_ASYNC_ERROR_AT": "3"}
    plain = run([prog("gpu-calls"), "5", cudart()], dict({"LD_LIBRARY_PATH": FAKE9}, **env))
    for sync in ("1", "cudnnAddTensor"):
        p = run([prog("gpu-calls"), "5", cudart()], gpu_env(dict(env, CUDNNSPY_SYNC=sync)))
        check(p.stdout == plain.stdout and "final sync 700" in p.stdout, "the program still sees the fault",
              plain.stdout, p.stdout)
        fails = events(p.records, "failure")
        check(len(fails) == 1 and fails[0]["fn"] == "cudnnAddTensor" and fails[0]["cuda_error"] == 700 and
              fails[0]["cuda_error_name"] == "cudaErrorIllegalAddress", "one failure, blamed on the call",
              repr(fails))
        recent = [r["fn"] for r in fails[0]["recent"]]
        check(recent.count("cudnnAddTensor") == 2, "the third cudnnAddTensor (two before it)", repr(recent))
        check(fails[0]["args"]["aDesc"]["desc"] == "float NCHW 1x2x3x4", "with its arguments", repr(fails[0]))
        check(re.search(r"cudnnAddTensor\(.*\) then cudaErrorIllegalAddress \(700\)", p.stderr), "on stderr",
              p.stderr)
    q = run([prog("gpu-calls"), "5", cudart()], gpu_env(dict(env, CUDNNSPY_SYNC="cudnnConvolution*")))
    check(not events(q.records, "failure"), "not synchronized: not blamed", repr(events(q.records, "failure")))


@scenario
def inject_faults():
    """CUDNNSPY_INJECT: the Nth call, a fraction, several rules; the real function is not called."""
    p = run([prog("host-calls"), "2"], gpu_env({"CUDNNSPY_INJECT": "cudnnSetTensor4dDescriptor=BAD_PARAM@2"}))
    check("set tensor x2: 1 failed" in p.stdout, "the second call failed", p.stdout)
    check(summary_row(p.stderr, "cudnnSetTensor4dDescriptorEx")[2] == 2, "the real function ran twice of three "
          "(its inner call counts them)", p.stderr)
    inj = events(p.records, "failure")
    check(len(inj) == 1 and inj[0].get("injected") is True and inj[0]["status"] == 2000 and
          "injected into cudnnSetTensor4dDescriptor" in inj[0]["message"], "recorded as injected", repr(inj))
    check("[injected]" in p.stderr, "said on stderr", p.stderr)
    q = run([prog("host-calls"), "100"], gpu_env({"CUDNNSPY_INJECT": "cudnnSetTensor4dDescriptor=EXECUTION_FAILED%10"}))
    check("set tensor x100: 10 failed" in q.stdout, "ten percent", q.stdout)
    r = run([prog("host-calls")], gpu_env({"CUDNNSPY_INJECT":
                                           "cudnnCreate=NOT_INITIALIZED,cudnnDestroyTensor*=5000@1,"
                                           "cudnnSetTensor4dDescriptor=CUDNN_STATUS_BAD_PARAM@2"}))
    check("create handle: 1001" in r.stdout and "destroy tensor: 5000" in r.stdout and
          "set tensor n=-1: 2000" in r.stdout, "several rules", r.stdout)
    check(re.search(r"last error: cudnnspy: CUDNN_STATUS_BAD_PARAM injected into cudnnSetTensor4dDescriptor", r.stdout),
          "cudnnGetLastErrorString tells the program", r.stdout)
    s = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": FAKE8,
                                   "CUDNNSPY_INJECT": "cudnnCreate=EXECUTION_FAILED"})
    check("create handle: 8" in s.stdout, "a name in the loaded library's numbering (8.x)", s.stdout)


@scenario
def inject_bad_rules():
    """Bad injection rules: one clear warning each, ignored, the program unchanged."""
    plain = run([prog("host-calls")], {"LD_LIBRARY_PATH": FAKE9})
    bad = ["cudnnNoSuchThing=BAD_PARAM", "cudnnCreate", "cudnnCreate=NOPE", "cudnnCreate=BAD_PARAM@0",
           "cudnnCreate=BAD_PARAM%200", "cudnnCreate=SUCCESS", "cudnnGetVersion=BAD_PARAM", "=BAD_PARAM", "x" * 300,
           # Past 32 bits: once cut to 2000 (BAD_PARAM) without a word.
           "cudnnCreate=4294969296", "cudnnCreate=99999999999999999999", "cudnnCreate=BAD_PARAM@99999999999999999999"]
    p = run([prog("host-calls")], gpu_env({"CUDNNSPY_INJECT": ",".join(bad)}))
    check(p.stdout == plain.stdout, "nothing injected", plain.stdout, p.stdout)
    check(p.stderr.count("CUDNNSPY_INJECT") == len(bad), "one warning per bad rule", p.stderr)


# ---- Ends of life, fork, spawn (issue 9) ----

def ending(mode, extra=None, args=(), complete=True, check_rc=True):
    env = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9}
    env.update(extra or {})
    plain = run([prog("endings"), mode] + list(args), {"LD_LIBRARY_PATH": FAKE9, **(extra or {})},
                check_rc=check_rc, complete=complete, signal_ok=not check_rc)
    spied = run([prog("endings"), mode] + list(args), env, check_rc=check_rc, complete=complete,
                signal_ok=not check_rc)
    check(plain.returncode == spied.returncode and plain.stdout == spied.stdout,
          "%s: the program ends the same way (%d, %d)" % (mode, plain.returncode, spied.returncode),
          plain.stdout, spied.stdout, spied.stderr)
    return spied


@scenario
def crash_handler():
    """CUDNNSPY_CRASH: a fatal signal writes the recent calls and the counts, then the program dies as before;
    a handler the program installed first still runs."""
    crash_env = {"CUDNNSPY_CRASH": "1", sanitizer.DELIBERATE_SIGNALS: "1"}
    for mode, sig in (("segv", "SIGSEGV"), ("abort", "SIGABRT")):
        p = ending(mode, crash_env, complete=False, check_rc=False)
        check(p.returncode < 0, "killed by the signal", str(p.returncode))
        check(re.search(r"fatal signal \d+ \(%s\) in thread \d+; its last cuDNN calls: cudnnGetVersion, "
                        r"cudnnCreateTensorDescriptor, cudnnSetTensor4dDescriptor" % sig, p.stderr), "on stderr",
              p.stderr)
        recs = list(p.records.values())[0]
        crash = [r for r in recs if r["event"] == "crash"]
        check(len(crash) == 1 and crash[0]["signal_name"] == sig and len(crash[0]["recent"]) == 3, "crash record",
              repr(recs))
        check(recs[-1]["event"] == "summary" and recs[-1]["crashed"] > 0 and recs[-1]["calls"] == 3,
              "a summary from the signal handler", repr(recs[-1]))
    # A handler of the program's own decides (it may recover: crash-handler-chaining); the spy says nothing.
    p = ending("segv-own-handler", crash_env, check_rc=False, complete=False)
    check(p.returncode == 3 and "own handler" in p.stdout and "fatal signal" not in p.stderr,
          "the program's handler ran, and the spy reported no crash", p.stdout, p.stderr)
    q = ending("segv", check_rc=False, complete=False)
    check("fatal signal" not in q.stderr, "off by default", q.stderr)


@scenario
def endings():
    """exit() from a thread, _exit() after a failure, cuDNN called after the spy's exit handler."""
    p = ending("exit-thread", {"CUDNNSPY_TRACE": "*"})
    check(len(events(p.records, "call")) == 3, "records of the exiting thread", repr(p.records))
    p = ending("_exit", {"FAKECUDNN_STATUS": "cudnnCreate=1001"}, complete=False)
    check(len(events(p.records, "failure", "cudnnCreate")) == 1, "the failure survives _exit", repr(p.records))
    p = ending("late-call", {"FAKECUDNN_STATUS": "cudnnCreate=1001"}, complete=False)
    check(len(events(p.records, "failure", "cudnnCreate")) == 1 and "cudnnCreate(" in p.stderr,
          "a call after the summary is still forwarded and recorded", p.stderr)


@scenario
def dlclose_real():
    """The program closes cuDNN, opens it again and closes it for good: the spy gives its own reference back with
    the program's last, so the copy goes as it would without the spy (issue 26: a file replaced on disk is then
    loaded afresh, copy-replaced); a wrapper taken before is never a call into an unmapped library, it gets the
    spy's NOT_INITIALIZED answer (0 for cudnnGetVersion), where the program alone would crash."""
    need_real()
    lib = os.path.join(REAL, "libcudnn.so.9")
    p = ending("dlclose", args=[lib])
    check(p.stdout == "before 91900\nafter 91900\n", "closed and opened again", p.stdout, p.stderr)
    q = run([prog("endings"), "dlclose", lib], {"LD_PRELOAD": PRELOAD, "ENDINGS_STALE": "1"})
    check(q.stdout.endswith("stale 0\n"), "a wrapper taken before the last dlclose answers, with no library behind",
          q.stdout, q.stderr)


@scenario
def fork_inside():
    """fork while other threads are inside cuDNN: the child says so before its first cuDNN call."""
    env = {"FAKECUDNN_SLEEP_US": "400000", "CUDNNSPY_TRACE": "*"}
    p = ending("fork-inside", env)
    check("child version 91900" in p.stdout and "parent done, child 0" in p.stdout, "no deadlock in the spy",
          p.stdout)
    lines = [l for l in p.stderr.splitlines() if "fork-inside-cudnn" in l]
    check(len(lines) == 1 and "3 other threads" in lines[0], "said once, with the count", p.stderr)
    child = [recs for recs in p.records.values() if any(r["event"] == "finding" for r in recs)]
    check(len(child) == 1 and [r["fn"] for r in child[0] if r["event"] == "call"] == ["cudnnGetVersion"],
          "the child's own file: the finding, then its call, nothing of the parent's", repr(p.records))


@scenario
def spawn_children():
    """posix_spawn and vfork+exec: both children run under the spy with their own files."""
    p = ending("spawn", {"CUDNNSPY_TRACE": "cudnnGetVersion"}, args=[prog("host-calls")])
    check("children 0 0" in p.stdout, "both children ran", p.stdout)
    progs = sorted(recs[0]["program"] for recs in p.records.values())
    check(progs == ["endings", "host-calls", "host-calls"], "three files", repr(progs))


@scenario
def threads_stress():
    """8 threads x 200,000 calls, every call traced: exact counts, every record present and whole."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "200000"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                              "CUDNNSPY_TRACE": "cudnnSetTensor4dDescriptor"})
        check("threads 8 calls 200000 fails 0" in p.stdout, "ran", p.stdout)
        per_tid, total = {}, 0
        for name in os.listdir(d):
            for line in schema.record_lines(os.path.join(d, name)):
                if b'"event":"call"' not in line:
                    continue
                r = json.loads(line)
                per_tid[r["tid"]] = per_tid.get(r["tid"], 0) + 1
                total += 1
        check(total == 1600000 and sorted(per_tid.values()) == [200000] * 8, "every call, once",
              "%d %r" % (total, per_tid))
        check(summary_row(p.stderr, "cudnnSetTensor4dDescriptor")[:2] == (1600000, 0), "counts", p.stderr)


@scenario
def load_records():
    """Every dlopen of a cuDNN library: by name (searched from the caller), by path, and a failure with its
    dlerror text, which the program still gets."""
    other = os.path.join(FAKE8, "libcudnn.so.8")
    plain = run([prog("load-attempts"), other], {"LD_LIBRARY_PATH": FAKE9})
    p = run([prog("load-attempts"), other], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
    check(plain.stdout == p.stdout and "missing failed: /nonexistent/dir/libcudnn.so.8: cannot open" in p.stdout,
          "the program's dlopen results and dlerror text unchanged", plain.stdout, p.stdout)
    loads = {l["name"]: l for l in events(p.records, "load")}
    check(loads["libcudnn.so.9"]["result"] == "loaded" and
          loads["libcudnn.so.9"]["path"] == os.path.realpath(os.path.join(FAKE9, "libcudnn.so.9")) and
          loads["libcudnn.so.9"]["caller"].endswith("load-attempts"), "by name: loaded, where, by whom",
          repr(loads))
    bad = loads["/nonexistent/dir/libcudnn.so.8"]
    check(bad["result"] == "failed" and "cannot open shared object file" in bad["error"], "the failure and why",
          repr(bad))
    check(loads[other]["result"] == "loaded", "by path", repr(loads))
    f = findings(p)
    check("sublib-load-failed" in f and "/nonexistent/dir/libcudnn.so.8" in f["sublib-load-failed"]["message"],
          "a failed load is a finding", repr(f))


@scenario
def load_records_real():
    """The real dispatcher loading its sub-libraries: each load recorded, by libcudnn.so.9, loaded."""
    need_real()
    p = run([prog("folded-conv")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD})
    loads = events(p.records, "load")
    subs = [l for l in loads if l["name"].startswith("libcudnn_")]
    check(subs and all("libcudnn" in os.path.basename(l["caller"]) for l in subs), "loads by cuDNN itself",
          repr(loads))
    check(len(set((l["name"], l["caller"], l["result"]) for l in subs)) == len(subs) and
          any(l["count"] > 1 for l in subs), "repeated attempts counted, not repeated", repr(subs))
    # It asks for libcudnn_cnn.so.9.19.0, then .9.19, then .9: the full names are not there, and the loader says so.
    check(any(l["name"] == "libcudnn_cnn.so.9" and l["result"] == "loaded" for l in subs) and
          any(l["name"] == "libcudnn_cnn.so.9.19.0" and l["result"] == "failed" and
              l["error"] == "libcudnn_cnn.so.9.19.0: cannot open shared object file: No such file or directory"
              for l in subs), "the cnn sub-library, and the names tried before it, with the loader's text",
          repr(subs))
    check(not findings(p), "no finding", repr(findings(p)))


@scenario
def gpu_too_new():
    """A GPU newer than the newest architecture the answering cuDNN supports."""
    p = run([prog("gpu-calls"), "1", cudart()], gpu_env({"FAKECUDA_CC": "13.0"}))
    f = findings(p)
    check("gpu-too-new" in f and "compute capability 13.0" in f["gpu-too-new"]["message"], "found", repr(f),
          p.stderr)
    ok = run([prog("gpu-calls"), "1", cudart()], gpu_env({"FAKECUDA_CC": "9.0"}))
    check("gpu-too-new" not in findings(ok), "a supported GPU: silent", repr(findings(ok)))



@scenario
def no_cudnn_calls():
    """A program that never calls cuDNN gets nothing from the spy."""
    p = run(["/bin/true"], {"LD_PRELOAD": PRELOAD})
    check(p.stderr == "" and p.stdout == "", "silent", p.stderr)


# ---- Convolution algorithms and engines (issue 5) ----

SIG_2D = ("x=float:8x16x32x32:NCHW w=float:32x16x3x3:NCHW y=float:8x32x32x32:NCHW pad=1x1 stride=1x1 dilation=1x1 "
          "mode=cross_correlation compute=float groups=1")
SIG_LEGACY = SIG_2D + " math=tensor_op_math"
SIG_3D = ("fwd x=float:2x4x8x8x8:NCDHW w=float:8x4x3x3x3:NCDHW y=float:2x8x4x4x4:NCDHW pad=1x1x1 stride=2x2x2 "
          "dilation=1x1x1 mode=cross_correlation compute=float groups=1 math=default_math")
FWD = "CUDNN_CONVOLUTION_FWD_ALGO_"


def algos(p):
    """{(api, signature, algo or (engine, knobs)): algo record}."""
    out = {}
    for a in events(p.records, "algo"):
        key = a["algo"] if a["api"] == "legacy" else (a["engine"], tuple((k["type"], k["value"]) for k in
                                                                         a["knobs"] or []))
        check((a["api"], a["signature"], key) not in out, "one algo record per (signature, choice)", repr(a))
        out[(a["api"], a["signature"], key)] = a
    return out


def only(records, what):
    check(len(records) == 1, "exactly one %s" % what, repr(records))
    return records[0]


@scenario
def conv_legacy_fake():
    """Legacy convolutions: ranked perf arrays decoded, searches remembered per signature, each (signature,
    algorithm) counted with its workspace, and the three findings, once each."""
    env = {"LD_LIBRARY_PATH": FAKE9}
    plain = run([prog("conv-legacy")], env)
    p = run([prog("conv-legacy")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_TRACE="cudnnFind* cudnnGet*_v7"))
    check(plain.stdout == p.stdout and "find fwd 0 returned 3" in p.stdout, "the program's results unchanged",
          plain.stdout, p.stdout)
    find = only(events(p.records, "call", "cudnnFindConvolutionForwardAlgorithm"), "traced Find")
    check(find["args"]["returnedAlgoCount"]["value"] == 3 and find["args"]["perfResults"]["values"] == [
        {"algo": FWD + "IMPLICIT_PRECOMP_GEMM", "status": "CUDNN_STATUS_SUCCESS", "time": 0.5, "memory": 0,
         "determinism": "CUDNN_DETERMINISTIC", "mathType": "CUDNN_DEFAULT_MATH"},
        {"algo": FWD + "IMPLICIT_GEMM", "status": "CUDNN_STATUS_SUCCESS", "time": 0.9, "memory": 1024,
         "determinism": "CUDNN_DETERMINISTIC", "mathType": "CUDNN_DEFAULT_MATH"},
        {"algo": FWD + "WINOGRAD", "status": "CUDNN_STATUS_SUCCESS", "time": 2.5, "memory": 2048,
         "determinism": "CUDNN_DETERMINISTIC", "mathType": "CUDNN_DEFAULT_MATH"}],
          "the ranked results decoded field by field", repr(find["args"]))
    bwd = only(events(p.records, "call", "cudnnFindConvolutionBackwardFilterAlgorithm"), "traced bwd-filter Find")
    check([r["algo"] for r in bwd["args"]["perfResults"]["values"]] == [
        "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3", "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1",
        "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0"] and bwd["args"]["perfResults"]["values"][1]["determinism"] ==
          "CUDNN_NON_DETERMINISTIC", "each perf struct by its own enum", repr(bwd["args"]))
    searches = events(p.records, "search")
    check([(s["fn"], s["op"], s["returned"]) for s in searches] == [
        ("cudnnFindConvolutionForwardAlgorithm", "fwd", 3), ("cudnnGetConvolutionForwardAlgorithm_v7", "fwd", 3),
        ("cudnnFindConvolutionBackwardDataAlgorithm", "bwd-data", 3),
        ("cudnnFindConvolutionBackwardFilterAlgorithm", "bwd-filter", 3)], "one search record each", repr(searches))
    check(searches[0]["signature"] == "fwd " + SIG_LEGACY and searches[0]["results"] ==
          find["args"]["perfResults"]["values"], "the search's signature and results", repr(searches[0]))
    a = algos(p)
    fast = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM")]
    check(fast["calls"] == 4 and fast["failures"] == 0 and fast["timed"] == 4 and fast["host_ns"] > 0 and
          fast["workspace"] == {"min": 0, "max": 0} and fast["workspace_needed"] == 0 and
          fast["search"]["rank"] == 0 and fast["search"]["fn"] == "cudnnGetConvolutionForwardAlgorithm_v7",
          "the fastest algorithm: counted, timed, ranked first by the last search", repr(fast))
    slow = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_GEMM")]
    check(slow["calls"] == 2 and slow["workspace"] == {"min": 512, "max": 512} and slow["workspace_needed"] == 1024
          and slow["search"]["rank"] == 1 and slow["search"]["first"] == FWD + "IMPLICIT_PRECOMP_GEMM",
          "the slower one, with what it needs", repr(slow))
    check(a[("legacy", "bwd-data " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_DATA_ALGO_1")]["calls"] == 2 and
          a[("legacy", "bwd-filter " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3")]["workspace_needed"] == 2048,
          "backward data and filter", repr(sorted(a)))
    bias = a[("legacy", "bias-act " + SIG_LEGACY + " act=relu", FWD + "IMPLICIT_PRECOMP_GEMM")]
    check(bias["calls"] == 1 and bias["search"]["rank"] == 0, "bias-activation, judged by the forward search",
          repr(bias))
    nd = a[("legacy", SIG_3D, FWD + "IMPLICIT_GEMM")]
    check(nd["calls"] == 1 and nd["search"] is None and nd["workspace_needed"] is None,
          "a 3-D convolution from Nd descriptors, never searched", repr(nd))
    check(len(a) == 6, "six (signature, choice) pairs", repr(sorted(a)))
    f = events(p.records, "finding")
    check(sorted((x["id"], x["severity"]) for x in f) == [("algo-changed", "info"), ("algo-not-fastest", "info"),
                                                         ("workspace-too-small", "warning")],
          "three findings, once each although the slow algorithm ran twice", repr(f))
    check(all(x["message"].startswith("fwd " + SIG_LEGACY + ": ") for x in f), "each names the signature", repr(f))
    byid = {x["id"]: x["message"] for x in f}
    check("needs 1024 bytes" in byid["workspace-too-small"] and "passes 512" in byid["workspace-too-small"] and
          "runs %sIMPLICIT_GEMM (0.900 ms" % FWD in byid["algo-not-fastest"] and
          "from %sIMPLICIT_PRECOMP_GEMM to %sIMPLICIT_GEMM" % (FWD, FWD) in byid["algo-changed"],
          "what each finding says", repr(byid))
    check(p.stderr.count("warning workspace-too-small:") == 1 and p.stderr.count("info algo-changed:") == 1,
          "once on stderr", p.stderr)
    check(re.search(r"^cudnnspy: convolutions and graphs: what ran for each signature", p.stderr, re.M) and
          re.search(r"^cudnnspy:   fwd %s$" % re.escape(SIG_LEGACY), p.stderr, re.M) and
          re.search(r"^cudnnspy:     %sIMPLICIT_PRECOMP_GEMM +4 calls, 0 failed, host .*, workspace 0 \(needs 0\)$"
                    % FWD, p.stderr, re.M) and
          re.search(r"^cudnnspy:     %sIMPLICIT_GEMM +2 calls, .*workspace 512 \(needs 1024\)$" % FWD, p.stderr,
                    re.M), "the summary section per signature", p.stderr)


@scenario
def conv_legacy_gpu_time():
    """CUDNNSPY_GPU_TIME: each convolution's GPU time lands in its (signature, algorithm) entry."""
    p = run([prog("conv-legacy"), cudart()], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD,
                                              "CUDNNSPY_GPU_TIME": "1"})
    a = algos(p)
    fast = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM")]
    slow = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_GEMM")]
    check(fast["gpu_timed"] == 4 and fast["gpu_ns"] == 4 * 250000 and slow["gpu_timed"] == 2 and
          slow["gpu_ns"] == 2 * 250000, "250 us per call, to the right entry", repr(fast), repr(slow))
    check(sum(x["gpu_timed"] for x in a.values()) == 12, "every convolution call", repr(a))
    check(re.search(r"IMPLICIT_PRECOMP_GEMM +4 calls, 0 failed, host .*, gpu 1000.0 us \(4 timed\)", p.stderr),
          "GPU time in the summary section", p.stderr)


@scenario
def conv_legacy_real():
    """The real cuDNN without a GPU: legacy descriptors and output dimensions; the convolutions fail (no handle)
    but are counted under the signature their descriptors make."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    plain = run([prog("conv-legacy")], env)
    p = run([prog("conv-legacy")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_STDERR="summary"))
    check(plain.stdout == p.stdout and "y 8x32x32x32" in p.stdout and "y5 2x8x4x4x4" in p.stdout,
          "output dimensions from cuDNN", plain.stdout, p.stdout)
    a = algos(p)
    want = {("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM"): 4,
            ("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_GEMM"): 2,
            ("legacy", "bwd-data " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_DATA_ALGO_1"): 2,
            ("legacy", "bwd-filter " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3"): 2,
            ("legacy", "bias-act " + SIG_LEGACY + " act=relu", FWD + "IMPLICIT_PRECOMP_GEMM"): 1,
            ("legacy", SIG_3D, FWD + "IMPLICIT_GEMM"): 1}
    check(sorted(a) == sorted(want), "the expected signatures", repr(sorted(a)), repr(sorted(want)))
    for k, n in want.items():
        check(a[k]["calls"] == n and a[k]["failures"] == n, "%s: %d calls, all failed" % (k, n), repr(a[k]))
    check(len(events(p.records, "failure", "cudnnConvolutionForward")) == 7, "each failure recorded too")


def graph_run(lib, extra=None, args=()):
    env = {"LD_LIBRARY_PATH": lib, "LD_PRELOAD": PRELOAD}
    env.update(extra or {})
    return run([prog("conv-graph")] + list(args), env)


@scenario
def conv_graph_fake():
    """The graph API: the operation graph decoded into the same signature as the legacy call's; heuristics with
    their engines in rank order; plans with engine, knobs, workspace and JSON; executions counted per engine."""
    plain = run([prog("conv-graph")], {"LD_LIBRARY_PATH": FAKE9})
    p = graph_run(FAKE9, {"CUDNNSPY_TRACE": "cudnnBackendFinalize cudnnBackendExecute"})
    check(plain.stdout == p.stdout and "failed calls 0" in p.stdout and "config 0 engine 12" in p.stdout,
          "the program's results unchanged", plain.stdout, p.stdout)
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == "fwd " + SIG_2D and g["op"] == "fwd", "the graph's signature", repr(g))
    op = only(g["ops"], "operation")
    check(op["type"] == "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR" and op["finalized"],
          "the operation", repr(op))
    x = op["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X"]
    check(x["type"] == "CUDNN_BACKEND_TENSOR_DESCRIPTOR" and x["attrs"] == {
        "CUDNN_ATTR_TENSOR_DATA_TYPE": "CUDNN_DATA_FLOAT", "CUDNN_ATTR_TENSOR_DIMENSIONS": [8, 16, 32, 32],
        "CUDNN_ATTR_TENSOR_STRIDES": [16384, 1024, 32, 1], "CUDNN_ATTR_TENSOR_UNIQUE_ID": 1,
        "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT": 4}, "a tensor by its attributes", repr(x))
    conv = op["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC"]["attrs"]
    check(conv["CUDNN_ATTR_CONVOLUTION_CONV_MODE"] == "CUDNN_CROSS_CORRELATION" and
          conv["CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS"] == [1, 1] and conv["CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS"] == 2
          and op["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA"] == 1, "the convolution", repr(op))
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(h["returned"] == 3 and h["requested"] == 4 and h["engines"] == [12, 0, None] and len(h["configs"]) == 3
          and h["mode"] == "CUDNN_HEUR_MODE_A" and h["graph"] == g["id"] and h["signature"] == g["signature"],
          "three configs, the engines of the two the program read, in rank order", repr(h))
    plans = events(p.records, "plan")
    check(len(plans) == 2, "two plans", repr(plans))
    first, own = plans
    check(first["engine"] == 12 and first["knobs"] == [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 1},
                                                       {"type": "CUDNN_KNOB_TYPE_TILE_SIZE", "value": 3}] and
          first["config"] == h["configs"][0] and first["heuristics"] == {"id": h["id"], "rank": 0} and
          first["signature"] == g["signature"], "the plan from the first config", repr(first))
    check(json.loads(first["json"]) == {"fake": True, "engineId": 12, "note": 'plan "json"'} and
          first["json_size"] == len(first["json"]) + 1, "its JSON, asked of cuDNN after Finalize", repr(first))
    check(own["engine"] == 5 and own["knobs"] == [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 2}] and
          own["heuristics"] is None and own["graph"] == g["id"], "the plan the program built itself", repr(own))
    a = algos(p)
    ran = a[("graph", "fwd " + SIG_2D, (12, (("CUDNN_KNOB_TYPE_SPLIT_K", 1), ("CUDNN_KNOB_TYPE_TILE_SIZE", 3))))]
    check(ran["calls"] == 3 and ran["workspace_needed"] == 4096 and ran["plan"] == first["id"] and
          ran["heuristics"] == {"id": h["id"], "rank": 0} and ran["algo"] is None, "engine 12 ran 3 times", repr(ran))
    check(a[("graph", "fwd " + SIG_2D, (5, (("CUDNN_KNOB_TYPE_SPLIT_K", 2),)))]["calls"] == 2, "engine 5 twice",
          repr(a))
    ex = events(p.records, "call", "cudnnBackendExecute")
    check(len(ex) == 5 and ex[0]["args"]["executionPlan"]["engine"] == 12 and
          ex[0]["args"]["executionPlan"]["graph"] == g["id"] and ex[4]["args"]["executionPlan"]["knobs"] ==
          own["knobs"], "a traced Execute says which plan, engine and knobs ran for which graph", repr(ex[0]))
    check(re.search(r"^cudnnspy:     graph engine 12 knobs split_k=1,tile_size=3 +3 calls, 0 failed, host .*, "
                    r"workspace 4096$", p.stderr, re.M), "the summary section", p.stderr)
    q = graph_run(FAKE9)
    check(all(x["json"] is None for x in events(q.records, "plan")), "no JSON asked for unless Finalize is traced",
          repr(events(q.records, "plan")))
    r = graph_run(FAKE9, {"CUDNNSPY_GPU_TIME": "1"}, [cudart()])
    b = algos(r)
    check(b[("graph", "fwd " + SIG_2D, (12, (("CUDNN_KNOB_TYPE_SPLIT_K", 1), ("CUDNN_KNOB_TYPE_TILE_SIZE", 3))))][
        "gpu_ns"] == 3 * 250000, "GPU time per engine", repr(b))


@scenario
def conv_graph_real():
    """The real cuDNN without a GPU: tensors, convolution, operation and graph built and finalized, decoded into
    the signature; heuristics finalize and return nothing; the failing plan shows what it was built from."""
    need_real()
    plain = run([prog("conv-graph")], {"LD_LIBRARY_PATH": REAL})
    p = graph_run(REAL, {"CUDNNSPY_STDERR": "none"})
    check(plain.stdout == p.stdout and "graph finalize 0" in p.stdout and "heur finalize 0" in p.stdout and
          "heuristics returned 0" in p.stdout, "built and finalized", plain.stdout, p.stdout)
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == "fwd " + SIG_2D, "the same signature as the legacy API's", repr(g))
    w = g["ops"][0]["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W"]["attrs"]
    check(w["CUDNN_ATTR_TENSOR_DIMENSIONS"] == [32, 16, 3, 3] and w["CUDNN_ATTR_TENSOR_UNIQUE_ID"] == 2,
          "the filter tensor", repr(w))
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(h["returned"] == 0 and h["configs"] == [] and h["signature"] == g["signature"], "no configs without a GPU",
          repr(h))
    fin = [f for f in events(p.records, "failure", "cudnnBackendFinalize")]
    cfg = [f for f in fin if f["args"]["descriptor"]["type"] == "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR"]
    check(len(cfg) == 1 and list(cfg[0]["args"]["descriptor"]["attrs"]) == [
        "CUDNN_ATTR_ENGINECFG_ENGINE", "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES"], "the failing config, decoded",
          repr(fin))
    plan = [f for f in fin if f["args"]["descriptor"]["type"] == "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR"]
    check(len(plan) == 1 and plan[0]["args"]["descriptor"]["engine"] == 5 and
          plan[0]["args"]["descriptor"]["signature"] == g["signature"], "the failing plan: engine and graph",
          repr(plan))
    a = only(events(p.records, "algo"), "algo record")
    check(a["api"] == "graph" and a["engine"] == 5 and a["calls"] == 2 and a["failures"] == 2, "executions counted",
          repr(a))


def cudnn_header():
    for d in (os.path.join(os.path.dirname(REAL.rstrip("/")), "include"), "/usr/local/cuda/include",
              "/usr/include"):
        if os.path.exists(os.path.join(d, "cudnn.h")):
            return d
    return None


def api_enums(names):
    """{enum: {value name: number}} for cuDNN 9 from the API description."""
    out, cur = {}, None
    with open(os.path.join(HERE, "..", "..", "shim", "api", "cudnn.api")) as f:
        for line in f:
            if line.startswith("enum "):
                cur = line.split()[1] if line.split()[1] in names else None
                if cur:
                    out[cur] = {}
            elif cur and line.startswith("\t"):
                m = re.match(r"\s+(\w+)\s*=\s*(-?\w+)((?:\s+@\d)*)", line)
                if m and ("@9" in m.group(3) or not m.group(3).strip()):
                    out[cur][m.group(1)] = int(m.group(2), 0)
            elif not line.startswith("\t"):
                cur = None
    return out


@scenario
def backend_names_real():
    """Attribute, type, descriptor and knob names as the installed cuDNN headers define them: the API description
    agrees value by value, and the spy decodes a program compiled against those headers with the same names."""
    need_real()
    inc, cc = cudnn_header(), shutil.which("cc") or shutil.which("gcc")
    if not inc or not cc:
        print("no cudnn.h or no C compiler: skipped")
        sys.exit(77)
    enums = ("cudnnBackendAttributeName_t", "cudnnBackendAttributeType_t", "cudnnBackendDescriptorType_t",
             "cudnnBackendKnobType_t", "cudnnBackendHeurMode_t", "cudnnDataType_t")
    text = ""
    for h in ("cudnn_graph.h", "cudnn_graph_v9.h"):
        if os.path.exists(os.path.join(inc, h)):
            with open(os.path.join(inc, h)) as f:
                text = f.read()
            break
    names = {}
    for body, name in re.findall(r"typedef enum\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        if name in enums:
            names[name] = re.findall(r"^\s*(CUDNN_\w+)", body, re.M)
    check(sorted(names) == sorted(enums) and len(names["cudnnBackendAttributeName_t"]) > 250,
          "the enums found in the header", repr({k: len(v) for k, v in names.items()}))
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "names.c")
        with open(src, "w") as f:
            f.write("#include <stdio.h>\n#include <stdint.h>\n#include <cudnn.h>\n"
                    "int main(int argc, char **argv) {\n")
            for e, vals in sorted(names.items()):
                for v in vals:
                    f.write('\tprintf("%s %s %%lld\\n", (long long)%s);\n' % (e, v, v))
            # The decoding check: a tensor described with the header's own constants, set through the spy.
            f.write("""
	if (argc > 1) {
		cudnnBackendDescriptor_t t = NULL;
		cudnnDataType_t dt = CUDNN_DATA_HALF;
		int64_t dims[4] = {2, 3, 4, 5}, strides[4] = {60, 20, 5, 1}, uid = 7, align = 16;
		_Bool virt = 1;
		cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
		printf("finalize %d\\n", (int)cudnnBackendFinalize(t));
	}
	return 0;
}
""")
        exe = os.path.join(d, "names")
        c = subprocess.run([cc, "-I", inc, src, "-o", exe, "-L", REAL, "-l:libcudnn.so.9"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        check(c.returncode == 0, "compiled against %s/cudnn.h" % inc, c.stdout)
        out = run([exe], {"LD_LIBRARY_PATH": REAL}).stdout
        header = {}
        for line in out.splitlines():
            e, n, v = line.split()
            header.setdefault(e, {})[n] = int(v)
        api = api_enums(enums)
        wrong = ["%s %s: header %d, description %r" % (e, n, v, api.get(e, {}).get(n))
                 for e in sorted(header) for n, v in sorted(header[e].items()) if api.get(e, {}).get(n) != v]
        check(not wrong, "every header value is in the API description, the same", *wrong[:20])
        p = run([exe, "decode"], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD,
                                  "CUDNNSPY_TRACE": "cudnnBackend*"})
        check("finalize 0" in p.stdout, "the tensor finalizes", p.stdout)
        sets = events(p.records, "call", "cudnnBackendSetAttribute")
        check([(s["args"]["attributeName"], s["args"]["attributeType"]) for s in sets] == [
            ("CUDNN_ATTR_TENSOR_DATA_TYPE", "CUDNN_TYPE_DATA_TYPE"), ("CUDNN_ATTR_TENSOR_DIMENSIONS", "CUDNN_TYPE_INT64"),
            ("CUDNN_ATTR_TENSOR_STRIDES", "CUDNN_TYPE_INT64"), ("CUDNN_ATTR_TENSOR_UNIQUE_ID", "CUDNN_TYPE_INT64"),
            ("CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT", "CUDNN_TYPE_INT64"),
            ("CUDNN_ATTR_TENSOR_IS_VIRTUAL", "CUDNN_TYPE_BOOLEAN")], "names decoded as the header spells them",
              repr([s["args"] for s in sets]))
        check([s["args"]["arrayOfElements"]["values"] for s in sets] == [
            ["CUDNN_DATA_HALF"], [2, 3, 4, 5], [60, 20, 5, 1], [7], [16], [True]], "values decoded by type",
              repr([s["args"]["arrayOfElements"] for s in sets]))
        create = only(events(p.records, "call", "cudnnBackendCreateDescriptor"), "create")
        check(create["args"]["descriptorType"] == "CUDNN_BACKEND_TENSOR_DESCRIPTOR", "descriptor type", repr(create))
        fin = only(events(p.records, "call", "cudnnBackendFinalize"), "finalize")
        check(fin["args"]["descriptor"]["type"] == "CUDNN_BACKEND_TENSOR_DESCRIPTOR" and
              fin["args"]["descriptor"]["finalized"] is True, "the descriptor's type remembered", repr(fin))


# Several copies in one process (issue 13): each call answered by the copy the program reached.

def fake_copy(directory, major=9, version=None):
    """A copy of the fake cuDNN in its own directory; `version` goes into the file it reads beside itself."""
    os.makedirs(directory, exist_ok=True)
    name = "libcudnn.so.%d" % major
    path = os.path.join(directory, name)
    shutil.copy(os.path.join(FAKE8 if major == 8 else FAKE9, name), path)
    if version:
        with open(os.path.join(directory, "fakecudnn-version"), "w") as f:
            f.write("%d\n" % version)
    return path


def copy_calls(p):
    """{copy id: {fn: (calls, failures, internal)}} from the summary record of the one records file."""
    summary = [r for r in only_file(p) if r["event"] == "summary"][-1]
    return {c["copy"]: {f["fn"]: (f["calls"], f["failures"], f["internal"]) for f in c["functions"]}
            for c in summary["copies"]}


def normalized(text, paths):
    for name, path in paths.items():
        text = text.replace(os.path.realpath(path), name).replace(path, name)
    return re.sub(r"pid \d+", "pid N", text)


def same_output(plain, spied, what):
    check(plain.stdout == spied.stdout, "stdout changed %s" % what, plain.stdout, spied.stdout)
    check(plain.returncode == spied.returncode, "exit status changed %s" % what)


def all_calls_attributed(p, expect_copies):
    calls = [r for r in only_file(p) if r["event"] in ("call", "failure")]
    check(calls and all("copy" in r for r in calls), "every call record names its copy", repr(calls[:3]))
    check({r["copy"] for r in calls} == set(expect_copies), "the copies that answered",
          repr(sorted({r["copy"] for r in calls})))
    return calls


@scenario
def copies_real_and_fake():
    """Linked to the real 9.19, a second (fake) copy opened by path: its calls answered by it, under preload and
    drop-in; the records, the summary and the finding say which copy answered what."""
    need_real()
    with tempfile.TemporaryDirectory() as d:
        other = fake_copy(os.path.join(d, "other"), 9, 90100)
        # No descriptors through the fake: the real cuDNN would be handed the fake's (see copies-client.c).
        argv = [prog("copies-client"), "--no-tensors", other]
        plain = run(argv, {"LD_LIBRARY_PATH": REAL})
        check("copy 1: version 90100, FAKE_STATUS_0, own Ex calls 0\n" in plain.stdout, "the second copy answers for itself",
              plain.stdout)
        spied = run(argv, {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_TRACE": "*"})
        same_output(plain, spied, "under preload")
        calls = all_calls_attributed(spied, [0, 1])
        by_copy = copy_calls(spied)
        check(by_copy[0].get("cudnnGetVersion") == (2, 0, 0) and by_copy[1].get("cudnnGetVersion") == (1, 0, 0),
              "GetVersion counted per copy", repr(by_copy))
        check(set(by_copy[1]) == {"cudnnGetVersion", "cudnnGetErrorString"} and
              by_copy[0].get("cudnnGetErrorString") == (1, 0, 0), "nothing of copy 1 counted as copy 0's",
              repr(by_copy))
        check(not [r for r in calls if r["event"] == "failure"], "no failure invented", repr(calls))
        libs = [l for l in libraries(spied) if l["kind"] == "cudnn" and l.get("copy") == 1]
        check(libs and libs[-1]["real_path"] == os.path.realpath(other) and libs[-1]["loaded_by"] == "copies-client"
              and libs[-1]["version"] == 90100, "a library record declares copy 1", repr(libraries(spied)))
        names = {"REAL": os.path.join(REAL, "libcudnn.so.9"), "OTHER": other}
        err = re.sub(r"\(/\S+/share/doc/cudnnspy/", "(DOCDIR/", normalized(spied.stderr, names))
        check("cudnnspy: preload: copy 1: cuDNN 9.1.0 (90100) from OTHER [reached through dlsym(handle) by "
              "copies-client]" in err, "the banner lists the second copy", err)
        lines = [l for l in err.splitlines() if "runtime-multiple-copies" in l]
        check(lines and lines[-1] == "cudnnspy: error runtime-multiple-copies: 2 cuDNN copies are mapped: REAL "
              "(91900) answers the program's calls by name (copy 0); OTHER (90100) answers calls through "
              "dlsym(handle) by copies-client (copy 1); fix: make every part of the program find the same copy (one "
              "LD_LIBRARY_PATH, or remove one copy); cudnnspy run --library DIR tries one copy for the whole program "
              "(DOCDIR/conflicts.md#runtime-multiple-copies)",
              "the finding says who went to which copy", err)
        check("copy 1: OTHER (90100), through dlsym(handle) by copies-client: 2 calls, 0 failed, 0 internal" in err, "per-copy summary on stderr", err)
        # The drop-in: the linked name reaches the drop-in, the copy opened by path is the program's own business.
        dropin = run(argv, {"LD_LIBRARY_PATH": DROPIN9 + ":" + REAL})
        same_output(plain, dropin, "under the drop-in")


@scenario
def copies_nine_and_eight():
    """A 9.x copy linked and an 8.x copy by path: each answers in its own numbering, decoded in it."""
    with tempfile.TemporaryDirectory() as d:
        eight = fake_copy(os.path.join(d, "eight"), 8)
        argv = [prog("copies-client"), eight]
        env = {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptorEx=3"}
        plain = run(argv, env)
        check("copy 1: version 8907" in plain.stdout and "linked: version 91900" in plain.stdout, "two majors",
              plain.stdout)
        spied = run(argv, dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_TRACE="*"))
        same_output(plain, spied, "under preload")
        calls = all_calls_attributed(spied, [0, 1])
        fails = [r for r in calls if r["event"] == "failure" and r["fn"] == "cudnnSetTensor4dDescriptor"]
        check(fails and all(r["copy"] == 1 and r["status_name"] == "CUDNN_STATUS_BAD_PARAM" and r["message"] is None
                            for r in fails), "the 8.x copy's failures in 8.x numbering, no 9.x message asked",
              repr(fails))
        check(copy_calls(spied)[1].get("cudnnGetVersion") == (1, 0, 0), "counted", repr(copy_calls(spied)))
        f = findings(spied)
        check("runtime-mixed-majors" in f and "runtime-multiple-copies" in f, "mixed majors said", repr(sorted(f)))
        dropin = run(argv, dict(env, LD_LIBRARY_PATH=DROPIN9 + ":" + FAKE9))
        same_output(plain, dropin, "under the drop-in")
        check("dropin-bypassed" in findings(dropin), "the 8.x copy by path bypasses the drop-in: said",
              repr(sorted(findings(dropin))))


@scenario
def copies_three():
    """The real 9.19 linked, a fake 9.x and a fake 8.x by path: three copies, each answering its own calls."""
    need_real()
    with tempfile.TemporaryDirectory() as d:
        argv = [prog("copies-client"), "--no-tensors", fake_copy(os.path.join(d, "nine"), 9, 90100),
                fake_copy(os.path.join(d, "eight"), 8)]
        plain = run(argv, {"LD_LIBRARY_PATH": REAL})
        spied = run(argv, {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_TRACE": "*"})
        same_output(plain, spied, "under preload")
        all_calls_attributed(spied, [0, 1, 2])
        by_copy = copy_calls(spied)
        check(all(by_copy[k].get("cudnnGetVersion") == (2 if k == 0 else 1, 0, 0) for k in (0, 1, 2)),
              "GetVersion per copy", repr(by_copy))
        dropin = run(argv, {"LD_LIBRARY_PATH": DROPIN9 + ":" + REAL})
        same_output(plain, dropin, "under the drop-in")


@scenario
def copies_ctypes():
    """Python ctypes opening two copies by path: each handle's calls answered by its own copy."""
    with tempfile.TemporaryDirectory() as d:
        argv = [sys.executable, os.path.join(HERE, "ctypes_client.py"), fake_copy(os.path.join(d, "a"), 9, 90100),
                fake_copy(os.path.join(d, "b"), 9, 90200)]
        plain = run(argv)
        check("version 90100" in plain.stdout and "version 90200" in plain.stdout, "two versions", plain.stdout)
        spied = run(argv, {"LD_PRELOAD": PRELOAD})
        same_output(plain, spied, "under preload")
        by_copy = copy_calls(spied)
        check(sorted(by_copy) == [0, 1] and all(by_copy[k].get("cudnnCreate") == (1, 0, 0) for k in (0, 1)),
              "one copy each", repr(by_copy))
        paths = {l["copy"]: l["real_path"] for l in libraries(spied) if l.get("copy") is not None}
        check(paths == {0: os.path.realpath(argv[2]), 1: os.path.realpath(argv[3])}, "each copy declared",
              repr(paths))
        dropin = run(argv, {"LD_LIBRARY_PATH": DROPIN9})
        same_output(plain, dropin, "with the drop-in on the path (the copies, opened by path, bypass it)")


@scenario
def copies_nine():
    """Nine copies (linked + eight by path): eight watched, the ninth passed through unwatched and said once."""
    with tempfile.TemporaryDirectory() as d:
        paths = [fake_copy(os.path.join(d, "c%d" % i), 9, 90000 + i) for i in range(1, 9)]
        argv = [prog("copies-client")] + paths
        env = {"LD_LIBRARY_PATH": FAKE9}
        plain = run(argv, env)
        spied = run(argv, dict(env, LD_PRELOAD=PRELOAD))
        same_output(plain, spied, "under preload")
        by_copy = copy_calls(spied)
        check(sorted(by_copy) == list(range(8)), "copies 0..7 watched", repr(sorted(by_copy)))
        check(all(by_copy[k].get("cudnnGetVersion") == (1, 0, 0) for k in range(1, 8)), "each counted once",
              repr(by_copy))
        # Each copy's cudnnSetTensor4dDescriptor calls cudnnSetTensor4dDescriptorEx by name: the loader binds it to
        # the linked copy's definition (the plain run's "own Ex calls 0"), and it counts as the caller's internal call.
        check("own Ex calls 0" in plain.stdout and all(by_copy[k].get("cudnnSetTensor4dDescriptorEx") == (0, 0, 2)
                                                       for k in range(1, 8)), "internal calls of their own copy",
              repr(by_copy))
        lines = [l for l in spied.stderr.splitlines() if "more than 8 cuDNN copies" in l]
        check(len(lines) == 1 and paths[7] in lines[0], "the ninth copy said once", spied.stderr)
        dropin = run(argv, dict(env, LD_LIBRARY_PATH=DROPIN9 + ":" + FAKE9))
        same_output(plain, dropin, "under the drop-in")


@scenario
def fork_race():
    """Children forked while parent threads are inside cuDNN, two threads of each spinning on their own CPUs and
    calling at once: every call answered (issue 15, item 10: the unfixed spy got 44 wrong children of 1,130 in
    these 3 seconds on two cores)."""
    env = {"LD_LIBRARY_PATH": FAKE9}
    plain = run([prog("fork-race"), "200"], dict(env, FAKECUDNN_SLEEP_US="1000000"))
    # The children end with _exit: their files have no summary.
    spied = run([prog("fork-race"), "100000"], dict(env, FAKECUDNN_SLEEP_US="3000000", LD_PRELOAD=PRELOAD,
                                                    CUDNNSPY_STDERR="none"), complete=False)
    check(plain.stdout == "0 wrong\n", "without the spy", plain.stdout)
    m = re.search(r"fork-race: (\d+) children forked", spied.stderr)
    check(m and int(m.group(1)) >= 100, "at least 100 children forked while threads were inside", spied.stderr)
    print(spied.stderr.strip())
    same_output(plain, spied, "under preload")


@scenario
def probe_no_cudnn():
    """A program without cuDNN probes for it with dlsym(RTLD_DEFAULT) and dlsym(dlopen(NULL)): none, as without
    the spy; with cuDNN linked in the process, found as before."""
    plain = run([prog("probe-cudnn")], check_rc=False)
    spied = run([prog("probe-cudnn")], {"LD_PRELOAD": PRELOAD}, check_rc=False)
    check(plain.returncode == 3 and "RTLD_DEFAULT: none" in plain.stdout, "no cuDNN without the spy", plain.stdout)
    same_output(plain, spied, "under preload")
    env = {"LD_PRELOAD": os.path.join(FAKE9, "libcudnn.so.9")}
    with_cudnn = run([prog("probe-cudnn")], env)
    both = run([prog("probe-cudnn")], {"LD_PRELOAD": PRELOAD + ":" + os.path.join(FAKE9, "libcudnn.so.9")})
    same_output(with_cudnn, both, "with cuDNN in the process")


@scenario
def copies_shared_sublibs_real():
    """A second copy of the real dispatcher opened by path: the loader hands it the first copy's sub-libraries
    (matched by SONAME), spy or not. Its calls are its own, and sublib-version-mismatch names both places."""
    need_real()
    with tempfile.TemporaryDirectory() as d:
        other = os.path.join(d, "libcudnn.so.9")
        shutil.copy(os.path.join(REAL, "libcudnn.so.9"), other)
        argv = [prog("copies-client"), other]
        plain = run(argv, {"LD_LIBRARY_PATH": REAL})
        spied = run(argv, {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD})
        same_output(plain, spied, "under preload")
        by_copy = copy_calls(spied)
        check(by_copy[1].get("cudnnSetTensor4dDescriptor") == (2, 1, 0) and
              by_copy[0].get("cudnnGetVersion") == (2, 0, 0), "each copy's calls", repr(by_copy))
        msgs = [f["message"] for f in events(spied.records, "finding") if f["id"] == "sublib-version-mismatch"]
        check(len(msgs) == 1 and ("libcudnn.so.9 (cuDNN 9.19.0) in %s runs sub-libraries from %s, of the same "
                                  "version: " % (os.path.realpath(d), os.path.realpath(REAL))) in msgs[0],
              "the second copy runs the first's sub-libraries, said once with both directories", repr(msgs))


@scenario
def library_is_the_dropin():
    """CUDNNSPY_LIBRARY naming a drop-in's directory under the preload (issue 15, item 25): one clear line, no
    banner of a cuDNN 0.0.0, no false findings."""
    for value in (DROPIN9, os.path.join(DROPIN8, "libcudnn.so.8")):
        p = run([prog("host-calls")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "CUDNNSPY_LIBRARY": value})
        check("is a cudnnspy library (a drop-in or the preload), not a real cuDNN" in p.stderr and
              "not trying any other copy" in p.stderr, "said clearly", p.stderr)
        check("cuDNN 0.0.0" not in p.stderr and not findings(p), "no banner of nothing, no findings",
              p.stderr, repr(findings(p)))
def bundled_app(d, kind):
    """bundled-KIND and its library in d, with the bundled9 fake (version 90300) in d/bundled."""
    for f in ("bundled-" + kind, "libbundled-%s.so" % kind):
        shutil.copy(os.path.join(PROGS, f), d)
    os.mkdir(os.path.join(d, "bundled"))
    shutil.copy(os.path.join(BUNDLED9, "libcudnn.so.9"), os.path.join(d, "bundled"))
    return os.path.join(d, "bundled-" + kind)


def loader_choice(argv, env, name="libcudnn.so.9"):
    """The file the loader itself maps for name in a run without the spy (LD_DEBUG=libs): the ground truth."""
    p = run(argv, dict(env, LD_DEBUG="libs"))
    found = re.findall(r"calling init: (\S*/%s)$" % re.escape(name), p.stderr, re.M)
    check(len(found) == 1, "LD_DEBUG=libs names one %s" % name, p.stderr)
    return found[0]


def check_dropin_follows(argv, env, expect_file, expect_stdout, how=None):
    """Without the drop-in the loader maps expect_file; with the drop-in first on LD_LIBRARY_PATH the program
    prints the same, and the drop-in says it forwards to that file."""
    plain = run(argv, env)
    check(plain.stdout == expect_stdout, "without the spy", plain.stdout, plain.stderr)
    check(same_file(loader_choice(argv, env), expect_file), "the loader's own choice", expect_file)
    lib = env.get("LD_LIBRARY_PATH")
    spied = run(argv, dict(env, LD_LIBRARY_PATH=DROPIN9 + (":" + lib if lib else "")))
    check(plain.stdout == spied.stdout, "stdout changed under the drop-in", plain.stdout, spied.stdout, spied.stderr)
    path = banner_path(spied.stderr, "drop-in")
    check(path and same_file(path, expect_file), "the drop-in forwards to %s" % expect_file, spied.stderr)
    if how:
        check(re.search(r"^cudnnspy: drop-in: .* \[%s\]$" % re.escape(how), spied.stderr, re.M),
              "the banner says why: %s" % how, spied.stderr)
    check(summary_row(spied.stderr, "cudnnGetVersion") == (1, 0, 0), "the call counted", spied.stderr)
    check("dropin-bypassed" not in spied.stderr, "nothing bypassed", spied.stderr)
    return spied


@scenario
def dropin_requester_runpath():
    """A library with a DT_RUNPATH to its own bundled copy: the drop-in forwards to that copy, the one the
    loader maps without the drop-in; with LD_LIBRARY_PATH naming another copy, to that one (it comes first)."""
    with tempfile.TemporaryDirectory() as d:
        argv = [bundled_app(d, "runpath")]
        check_dropin_follows(argv, {}, os.path.join(d, "bundled", "libcudnn.so.9"),
                             "version 90300, FAKE_STATUS_0\n", "what libbundled-runpath.so's RUNPATH finds")
        check_dropin_follows(argv, {"LD_LIBRARY_PATH": FAKE9}, os.path.join(FAKE9, "libcudnn.so.9"),
                             "version 91900, FAKE_STATUS_0\n",
                             "what LD_LIBRARY_PATH without the drop-in finds for libbundled-runpath.so")
        # The drop-in's directory named twice, through a link: still left out, by device and inode.
        link = os.path.join(d, "dropin-link")
        os.symlink(DROPIN9, link)
        p = run(argv, {"LD_LIBRARY_PATH": "%s:%s" % (DROPIN9, link)})
        check(p.stdout == "version 90300, FAKE_STATUS_0\n", "the drop-in's directory left out", p.stdout,
              p.stderr)
    # ${ORIGIN}, after a directory that does not exist.
    with tempfile.TemporaryDirectory() as d:
        check_dropin_follows([bundled_app(d, "braces")], {}, os.path.join(d, "bundled", "libcudnn.so.9"),
                             "version 90300, FAKE_STATUS_0\n", "what libbundled-braces.so's RUNPATH finds")


@scenario
def dropin_requester_rpath():
    """A library with a DT_RPATH to its bundled copy: the loader takes that copy before LD_LIBRARY_PATH, so
    the drop-in is not even loaded and the output is unchanged. With nothing bundled, the drop-in is loaded
    and forwards to what LD_LIBRARY_PATH without it finds."""
    with tempfile.TemporaryDirectory() as d:
        argv = [bundled_app(d, "rpath")]
        env = {"LD_LIBRARY_PATH": FAKE9}
        plain = run(argv, env)
        check(plain.stdout == "version 90300, FAKE_STATUS_0\n", "the RPATH copy answers", plain.stdout)
        check(same_file(loader_choice(argv, env), os.path.join(d, "bundled", "libcudnn.so.9")), "RPATH first")
        spied = run(argv, {"LD_LIBRARY_PATH": DROPIN9 + ":" + FAKE9})
        check(plain.stdout == spied.stdout, "stdout unchanged", plain.stdout, spied.stdout)
        check("cudnnspy" not in spied.stderr, "the drop-in is not loaded", spied.stderr)
        os.unlink(os.path.join(d, "bundled", "libcudnn.so.9"))
        check_dropin_follows(argv, env, os.path.join(FAKE9, "libcudnn.so.9"), "version 91900, FAKE_STATUS_0\n",
                             "what LD_LIBRARY_PATH without the drop-in finds for libbundled-rpath.so")


@scenario
def dropin_requester_opener():
    """A library that opens cuDNN by name with dlopen and has a DT_RUNPATH to its bundled copy: the loader
    searches as the caller, and so does the drop-in. Opened by path, the drop-in has no search to repeat."""
    with tempfile.TemporaryDirectory() as d:
        argv = [bundled_app(d, "opener")]
        check_dropin_follows(argv, {}, os.path.join(d, "bundled", "libcudnn.so.9"), "version 90300, FAKE_STATUS_0\n",
                             "what libbundled-opener.so's RUNPATH finds")
        check_dropin_follows(argv, {"LD_LIBRARY_PATH": FAKE9}, os.path.join(FAKE9, "libcudnn.so.9"),
                             "version 91900, FAKE_STATUS_0\n",
                             "what LD_LIBRARY_PATH without the drop-in finds for libbundled-opener.so")
        # The drop-in opened by its path: not found by a search, so the drop-in's own search applies.
        p = run([prog("dlopen-client"), os.path.join(DROPIN9, "libcudnn.so.9")], {"LD_LIBRARY_PATH": FAKE9})
        check(re.search(r"^cudnnspy: drop-in: .* from %s \[" % re.escape(os.path.join(FAKE9, "libcudnn.so.9")),
                        p.stderr, re.M) and "RUNPATH" not in p.stderr and "without the drop-in" not in p.stderr,
              "opened by path: the usual search", p.stderr)


@scenario
def dropin_bypassed():
    """Under the drop-in, a program that opens other cuDNN dispatchers by path: their calls bypass the spy,
    and the spy says so once per copy; the program's output is unchanged."""
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "libcudnn.so.9")
        shutil.copy(os.path.join(BUNDLED9, "libcudnn.so.9"), copy)
        argv = [prog("load-copies"), os.path.join(FAKE8, "libcudnn.so.8"), copy]
        plain = run(argv, {"LD_LIBRARY_PATH": FAKE9})
        spied = run(argv, {"LD_LIBRARY_PATH": DROPIN9 + ":" + FAKE9})
        check(plain.stdout == spied.stdout, "stdout changed", plain.stdout, spied.stdout)
        lines = [l for l in spied.stderr.splitlines() if "dropin-bypassed" in l]
        check(len(lines) == 2, "said once for each bypassed copy", spied.stderr)
        real9 = os.path.realpath(os.path.join(FAKE9, "libcudnn.so.9"))
        for other in (os.path.realpath(os.path.join(FAKE8, "libcudnn.so.8")), copy):
            check(any(l.startswith("cudnnspy: warning dropin-bypassed: %s is mapped beside the drop-in, which "
                                   "forwards to %s: calls made through %s bypass the spy" % (other, real9, other))
                      for l in lines), "names %s and the copy it forwards to" % other, spied.stderr)
        f = [r for r in events(spied.records, "finding") if r["id"] == "dropin-bypassed"]
        check(len(f) == 2 and all(r["severity"] == "warning" and r["paths"][1] == real9 for r in f),
              "in the records too", repr(f))
        # The same program under the preload: the drop-in's finding is the drop-in's only.
        pre = run(argv, {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
        check("dropin-bypassed" not in pre.stderr, "not under the preload", pre.stderr)


@scenario
def library_not_requested():
    """Preload with CUDNNSPY_LIBRARY naming another copy than the program's: the spy says once, with the fix,
    that the program's own copy stays loaded beside it. Under the drop-in, or naming the program's own copy,
    nothing is said."""
    own = os.path.realpath(os.path.join(FAKE9, "libcudnn.so.9"))
    other = os.path.realpath(os.path.join(BUNDLED9, "libcudnn.so.9"))
    p = run([prog("load-copies")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "CUDNNSPY_LIBRARY": other})
    lines = [l for l in p.stderr.splitlines() if "library-not-requested" in l]
    check(len(lines) == 1 and re.fullmatch(
        r"cudnnspy: warning library-not-requested: the program's own copy %s stays loaded beside %s, which "
        r"CUDNNSPY_LIBRARY names; fix: to give the program only the copy CUDNNSPY_LIBRARY names, run it through "
        r"the drop-in: cudnnspy run --library PATH \(/\S+/share/doc/cudnnspy/conflicts\.md#library-not-requested\)"
        % (re.escape(own), re.escape(other)), lines[0]), "said once, with the fix", p.stderr)
    f = findings(p)["library-not-requested"]
    check(f["severity"] == "warning" and f["paths"] == [own, other], "in the records", repr(f))
    same = run([prog("load-copies")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "CUDNNSPY_LIBRARY": own})
    check("library-not-requested" not in same.stderr, "the program's own copy named: nothing to say", same.stderr)
    drop = run([prog("load-copies")], {"LD_LIBRARY_PATH": DROPIN9 + ":" + FAKE9, "CUDNNSPY_LIBRARY": other})
    check("version 90300" in drop.stdout, "the drop-in gives the program the copy named", drop.stdout, drop.stderr)
    check("library-not-requested" not in drop.stderr and "dropin-bypassed" not in drop.stderr and
          "runtime-multiple-copies" not in drop.stderr, "the drop-in: one copy, nothing to say", drop.stderr)


def why_of(p):
    fails = [r for r in events(p.records, "failure", "cudnnCreate")]
    check(len(fails) == 1, "one cudnnCreate failure", repr(fails), p.stderr)
    line = [l for l in p.stderr.splitlines() if l.startswith("cudnnspy: cudnnCreate(")]
    check(len(line) == 1 and ("| why: " + fails[0]["why"] + " | ") in line[0], "the line says why, as the record",
          p.stderr, repr(fails))
    return fails[0]["why"]


@scenario
def not_initialized_why():
    """NOT_INITIALIZED from cudnnCreate explained from what the spy sees: no driver library, no device nodes,
    CUDA_VISIBLE_DEVICES hiding every GPU, a runtime newer than the driver, a cuDNN built for a newer CUDA."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "FAKECUDNN_STATUS": "cudnnCreate=1001"}
    why = why_of(run([prog("load-copies")], env))
    check("no libcuda.so.1 is loaded: the NVIDIA driver is not installed" in why, "no driver library", why)
    if not any(os.path.exists(n) for n in ("/dev/nvidiactl", "/dev/nvidia0")):
        check("no /dev/nvidia* device nodes" in why, "no device nodes", why)
    why = why_of(run([prog("load-copies")], dict(env, CUDA_VISIBLE_DEVICES="-1")))
    check("CUDA_VISIBLE_DEVICES='-1' hides every GPU" in why, "hidden GPUs", why)
    why = why_of(run([prog("load-copies")], dict(env, CUDA_VISIBLE_DEVICES="0")))
    check("CUDA_VISIBLE_DEVICES" not in why, "a visible GPU is no reason", why)
    libs = [os.path.join(FAKE_CUDART, "libcudart.so.12"), os.path.join(FAKE_CUDA, "libcuda.so.1")]
    why = why_of(run([prog("load-copies")] + libs, dict(env, FAKECUDART_VERSION="11080", FAKECUDA_DRIVER="11020")))
    check("no libcuda.so.1" not in why and "supports CUDA 11.2" in why, "the driver named, with its CUDA", why)
    check("the CUDA runtime %s is 11.8, newer than the driver's 11.2: update the driver" %
          os.path.realpath(libs[0]) in why, "runtime newer than the driver", why)
    check("this cuDNN was built for CUDA 12.8, a newer major than the driver's 11.2" in why, "cuDNN's CUDA", why)
    ok = run([prog("load-copies")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
    check(not events(ok.records, "failure", "cudnnCreate"), "no failure, nothing to explain", ok.stderr)


@scenario
def not_initialized_why_real():
    """The real 9.19 on a machine without a GPU: cuDNN says cudaGetDeviceCount failed; the spy says why."""
    need_real()
    p = run([prog("host-calls")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD})
    why = why_of(p)
    have_driver = any(os.path.exists(os.path.join(d, "libcuda.so.1")) for d in
                      ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu"))
    check(have_driver or "no libcuda.so.1 is loaded" in why, "no driver library here", why)


@scenario
def stack_names():
    """A failure inside a static function of the program: the stderr line and the record name it, from the
    program's own symbol table (dladdr knows only exported names)."""
    env = {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000"}
    plain = run([prog("stack-names")], env)
    p = run([prog("stack-names")], dict(env, LD_PRELOAD=PRELOAD))
    same_output(plain, p, "under preload")
    line = [l for l in p.stderr.splitlines() if l.startswith("cudnnspy: cudnnSetTensor4dDescriptor(")]
    check(line and re.search(r"\| at layer_forward \(stack-names\+0x[0-9a-f]+\) < main \(stack-names\+0x", line[0]),
          "the static function and main named on the line", p.stderr)
    fail = only(events(p.records, "failure", "cudnnSetTensor4dDescriptor"), "the failure")
    check([f["symbol"] for f in fail["stack"][:2]] == ["layer_forward", "main"], "and in the record", repr(fail["stack"]))
    # A library opened after the first failure: the spy's map of loaded objects learns of it.
    lib = os.path.join(os.path.dirname(prog("stack-names")), "libstacklate.so")
    late = run([prog("stack-names"), lib], dict(env, LD_PRELOAD=PRELOAD))
    check("library status 2000" in late.stdout, "the library's call failed", late.stdout)
    second = events(late.records, "failure", "cudnnSetTensor4dDescriptor")[1]["stack"]
    check([f["symbol"] for f in second[:3]] == ["lib_layer", "stack_lib_call", "main"] and
          second[0]["module"] == lib and second[2]["module"].endswith("stack-names"),
          "the late library's frames named, with its file", repr(second[:3]))
@scenario
def all_functions():
    """Every function of the API description called once, after a legacy and a graph convolution: the summary
    record lists each one, the algo and heuristics records before it are whole, nothing is dropped, and each
    failure line on stderr is whole, with the most recent calls and the record file at its end."""
    p = run([prog("all-functions")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "CUDNNSPY_FLIGHT": "256"})
    called = re.findall(r"^called (\S+)$", p.stdout, re.M)
    stubs = re.findall(r"^stub (\S+)$", p.stdout, re.M)
    check(re.search(r"^%d functions called, 0 missing$" % (len(called) + len(stubs)), p.stdout, re.M) and
          len(called) > 250 and len(stubs) < 10, "every function of the description called", p.stdout[-2000:])
    recs = only_file(p)
    summary = recs[-1]
    check(summary["event"] == "summary" and summary["dropped"] == 0, "the summary record is the last, none dropped",
          repr([r["event"] for r in recs[-5:]]), p.stderr[-3000:])
    listed = {f["fn"]: f for f in summary["functions"]}
    check(all(fn in listed and listed[fn]["calls"] >= 1 for fn in called), "each function listed",
          repr(sorted(set(called) - set(listed))))
    check({a["api"] for a in events(p.records, "algo")} == {"legacy", "graph"} and
          len(events(p.records, "heuristics")) == 1, "the algo and heuristics records before it",
          repr([r["event"] for r in recs]))
    path = list(p.records)[0]
    lines = [l for l in p.stderr.splitlines() if " | after " in l]
    check(len(lines) > 20, "failure lines on stderr", p.stderr[-3000:])
    for l in lines:
        m = re.match(r"cudnnspy: (\w+)\(", l)
        check(m and l.endswith(path) and " | record in " in l, "a whole failure line, ending with the record file",
              l)
        # The call just before it is listed last: a long list loses its oldest calls, never its newest.
        prev = called[called.index(m.group(1)) - 1] if m.group(1) in called[1:] else None
        check(prev is None or re.search(r"[ ,]%s(=\d+)? \| record in " % prev, l), "the newest recent call kept",
              l)


def desc_id(arg):
    """The id of a descriptor argument or out-value: "tensor#3"."""
    if isinstance(arg, dict):
        return arg.get("id") or arg.get("value")
    return arg


@scenario
def destroy_ids():
    """A traced Destroy names the object it destroys (the id its Create gave it, with its type for a backend
    descriptor), never a fresh id; and a later Create gets a new id."""
    trace = {"CUDNNSPY_TRACE": "cudnnCreate* cudnnDestroy* cudnnBackendCreateDescriptor cudnnBackendDestroyDescriptor"}
    for name in ("conv-legacy", "conv-graph"):
        env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
        env.update(trace)
        p = run([prog(name)], env)
        calls = [r for r in events(p.records, "call")]
        created, destroyed, types = [], [], {}
        for r in calls:
            if r["fn"].startswith("cudnnCreate") or r["fn"] == "cudnnBackendCreateDescriptor":
                out = [v for k, v in r["args"].items() if isinstance(v, dict) and "value" in v]
                created += [desc_id(v) for v in out]
                if r["fn"] == "cudnnBackendCreateDescriptor":
                    types[desc_id(out[0])] = r["args"]["descriptorType"]
            elif r["fn"].startswith("cudnnDestroy") or r["fn"] == "cudnnBackendDestroyDescriptor":
                arg = list(r["args"].values())[0]
                destroyed.append(desc_id(arg))
                # Variant packs are not kept (docs/output-format.md): only their id.
                want = types.get(desc_id(arg))
                check(r["fn"] != "cudnnBackendDestroyDescriptor" or want == "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR"
                      or arg.get("type") == want, "the destroyed descriptor's type", repr(r), want)
        check(destroyed and len(created) >= len(destroyed), "%s: creates and destroys traced" % name,
              repr(created), repr(destroyed))
        check(all(d in created for d in destroyed) and len(set(destroyed)) == len(destroyed),
              "%s: each destroy names an object created before" % name, repr(created), repr(destroyed))


def cudnn_log(path):
    """cuDNN's own API log (CUDNN_LOGLEVEL_DBG=3) as [(fn, {param: value})], in call order. A value is the text
    after `val=`; a descriptor's value is a dict of its fields. cuDNN logs each call at entry (and, for some,
    a second block with its status)."""
    calls, stack = [], None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"I! CuDNN \(v\d+ \d+\) function (\w+)\(\) called:", line)
            if m:
                args = {}
                calls.append((m.group(1), args))
                stack = [args]
                continue
            m = re.match(r"i!( +)([^:]+): type=([^;:]*)(?:; val=(.*);|:)$", line)
            if not m or stack is None:
                continue
            depth = (len(m.group(1)) - 5) // 4
            del stack[depth + 1:]
            if len(stack) <= depth:
                continue
            if m.group(4) is None:
                stack[depth][m.group(2)] = {}
                stack.append(stack[depth][m.group(2)])
            else:
                stack[depth][m.group(2)] = m.group(4)
    return calls


def log_agrees(spy, log):
    """Whether one value the spy recorded says what cuDNN's log says: names or numbers of enums
    ("CUDNN_DATA_FLOAT (0)"), lists ("[1,2]"), NULL_PTR, numbers, booleans."""
    m = re.match(r"^(.*) \((-?(?:0x)?[0-9a-fA-F]+)\)$", log)
    if m:
        return spy == m.group(1) or (isinstance(spy, int) and spy == int(m.group(2), 0))
    if log.startswith("["):
        vals = [v for v in log.strip("[]").split(",") if v]
        return isinstance(spy, list) and len(spy) == len(vals) and all(log_agrees(a, b) for a, b in zip(spy, vals))
    if log == "NULL_PTR":
        return spy is None
    if log in ("true", "false"):
        return spy == (log == "true")
    try:
        return isinstance(spy, (int, float)) and not isinstance(spy, bool) and float(spy) == float(log)
    except ValueError:
        return spy == log


def odd_run(extra=None):
    """decode-odd on the real cuDNN, traced by the spy and logged by cuDNN in the same process:
    (the run, {fn: [failure records]}, cuDNN's log)."""
    need_real()
    d = tempfile.mkdtemp(prefix="cudnnspy-cudnnlog-")
    try:
        env = {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_STDERR": "none",
               "CUDNN_LOGLEVEL_DBG": "3", "CUDNN_LOGDEST_DBG": os.path.join(d, "cudnn.log")}
        env.update(extra or {})
        p = run([prog("decode-odd")], env)
        log = cudnn_log(os.path.join(d, "cudnn.log"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    plain = run([prog("decode-odd")], {"LD_LIBRARY_PATH": REAL})
    check(plain.stdout == p.stdout and p.stdout.endswith("done\n"), "the program's output unchanged", plain.stdout,
          p.stdout)
    fails = {}
    for f in events(p.records, "failure"):
        fails.setdefault(f["fn"], []).append(f)
    return p, fails, log


def status_block(log, i):
    """Whether block i is the status cuDNN logs after a call's entry block."""
    name, args = log[i]
    return (i > 0 and log[i - 1][0] == name and list(args) == ["status"] and
            args["status"].startswith("CUDNN_STATUS_") and not status_block(log, i - 1))


def logged(log, fn):
    """cuDNN's entry blocks of one function."""
    return [a for i, (name, a) in enumerate(log) if name == fn and not status_block(log, i)]


@scenario
def attn_params_real():
    """cudnnSetAttnDescriptor's 20 parameters are all remembered, as cuDNN's own log shows the descriptor."""
    p, fails, log = odd_run()
    f = only(fails.get("cudnnGetMultiHeadAttnBuffers", []), "failure of cudnnGetMultiHeadAttnBuffers")
    kept = f["args"]["attnDesc"]["set"]["args"]
    fields = only(logged(log, "cudnnGetMultiHeadAttnBuffers"), "logged call")["attnDesc"]
    # cuDNN's log names computePrec mathPrec.
    names = {"mathPrec": "computePrec"}
    check(len(fields) == 19 and len(kept) == 20, "every field in both", repr(fields), repr(kept))
    for k, v in fields.items():
        check(log_agrees(kept.get(names.get(k, k)), v), "attnDesc %s: cuDNN says %s" % (k, v), repr(kept))


# How cuDNN's log names a backend tensor's attributes.
LOG_TENSOR_ATTRS = {"type": "CUDNN_ATTR_TENSOR_DATA_TYPE", "dimA": "CUDNN_ATTR_TENSOR_DIMENSIONS",
                    "strideA": "CUDNN_ATTR_TENSOR_STRIDES", "uid": "CUDNN_ATTR_TENSOR_UNIQUE_ID",
                    "alignmentInBytes": "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT"}


@scenario
def partial_read_back_real():
    """cudnnBackendGetAttribute asking for fewer values than were set (2 of 4 strides) leaves the remembered
    attribute whole: the descriptor shows what cuDNN's own log shows."""
    p, fails, log = odd_run()
    check("strides read: count 2, 60 20 0 0" in p.stdout, "cuDNN gave two strides", p.stdout)
    f = only(fails.get("cudnnBackendSetAttribute", []), "failure of cudnnBackendSetAttribute")
    attrs = f["args"]["descriptor"]["attrs"]
    fields = logged(log, "cudnnBackendSetAttribute")[-1]["descriptor"]
    for k, name in LOG_TENSOR_ATTRS.items():
        check(log_agrees(attrs.get(name), fields[k]), "%s: cuDNN says %s" % (name, fields[k]), repr(attrs))


@scenario
def transform_real():
    """cudnnSetTensorTransformDescriptor: foldA has nbDims-2 elements (read no further, at the Set and in the
    out-values of the Get), and the direction is remembered as cuDNN keeps it (any value but FOLD is UNFOLD)."""
    p, fails, log = odd_run({"CUDNNSPY_TRACE": "cudnn*TensorTransformDescriptor"})
    check("fold 2 3 9 9 direction 1" in p.stdout, "cuDNN wrote two fold values and kept direction 1", p.stdout)
    f = only(fails.get("cudnnTransformTensorEx", []), "failure of cudnnTransformTensorEx")
    kept = f["args"]["transDesc"]["set"]["args"]
    fields = only(logged(log, "cudnnTransformTensorEx"), "logged call")["transDesc"]
    nb = kept["nbDims"]
    check(kept["foldA"] == [2, 3] and kept["padBeforeA"] == [0, 1, 2, 3], "the arrays as passed", repr(kept))
    directions = {"CUDNN_TRANSFORM_FOLD": "0", "CUDNN_TRANSFORM_UNFOLD": "1"}
    check(directions.get(kept["direction"]) == fields["direction"], "direction: cuDNN says %s" % fields["direction"],
          repr(kept))
    check(log_agrees(kept["destFormat"], fields["destFormat"]), "destFormat", repr(kept), repr(fields))
    # cuDNN keeps 8 pads and 6 folds whatever nbDims, the rest zero.
    for k, n in (("padBeforeA", nb), ("padAfterA", nb), ("foldA", nb - 2)):
        vals = fields[k].strip("[]").split(",")
        check(log_agrees(kept[k], "[%s]" % ",".join(vals[:n])) and set(vals[n:]) <= {"0"},
              "%s: cuDNN says %s" % (k, fields[k]), repr(kept))
    get = only(events(p.records, "call", "cudnnGetTensorTransformDescriptor"), "traced Get")
    check(get["args"]["foldA"]["values"] == [2, 3] and get["args"]["padBeforeA"]["values"] == [0, 1, 2, 3] and
          get["args"]["direction"]["value"] == "CUDNN_TRANSFORM_UNFOLD", "the Get's out-values", repr(get["args"]))
    sets = only(events(p.records, "call", "cudnnSetTensorTransformDescriptor"), "traced Set")
    check(sets["args"]["direction"] == 2 and sets["args"]["foldA"]["values"] == [2, 3],
          "the Set's arguments as passed", repr(sets["args"]))


@scenario
def failed_set_real():
    """A Set that fails after cuDNN changed the descriptor anyway (9.19 writes the data type of a refused
    cudnnSetTensor4dDescriptorEx) leaves no stale state: the spy no longer claims the earlier Set, says which Set
    failed, and does not contradict cuDNN's own Get; a successful Set is remembered again."""
    p, fails, log = odd_run({"CUDNNSPY_TRACE": "cudnnGetTensor4dDescriptor"})
    check("set 4d ex: 2000" in p.stdout and "tensor read: 2 1x2x3x4" in p.stdout,
          "cuDNN refused the Set and kept its data type (half) anyway", p.stdout)
    f = [r for r in fails.get("cudnnAddTensor", []) if r["args"]["aDesc"]["id"] == "tensor#1"]
    a = only(f, "failure of cudnnAddTensor on tensor#1")["args"]["aDesc"]
    check("desc" not in a and "set" not in a and a.get("set_failed") == "cudnnSetTensor4dDescriptorEx",
          "no stale state, and the failed Set named", repr(a))
    get = only(events(p.records, "call", "cudnnGetTensor4dDescriptor"), "traced Get")
    check(get["args"]["dataType"]["value"] == "CUDNN_DATA_HALF", "cuDNN's Get says half", repr(get["args"]))
    logged_desc = logged(log, "cudnnAddTensor")[0]["biasDesc"]
    check(logged_desc["dataType"].startswith("CUDNN_DATA_HALF"), "and so does cuDNN's log", repr(logged_desc))
    t = only([r for r in fails.get("cudnnActivationForward", []) if r["args"]["xDesc"]["id"] == "tensor#1"],
             "failure after a good Set")["args"]["xDesc"]
    check(t.get("desc") == "float NCHW 1x2x3x4" and "set_failed" not in t, "a successful Set remembered again",
          repr(t))


@scenario
def negative_enum_real():
    """Enums are signed: (cudnnStatus_t)-1 and (cudnnTensorFormat_t)-1 are recorded as -1, as cuDNN logs them."""
    p, fails, log = odd_run({"CUDNNSPY_TRACE": "cudnnGetErrorString"})
    call = only(events(p.records, "call", "cudnnGetErrorString"), "traced cudnnGetErrorString")
    logged_status = only(logged(log, "cudnnGetErrorString"), "logged call")["status"]
    check(call["args"]["status"] == -1 and log_agrees(call["args"]["status"], logged_status),
          "status -1: cuDNN says %s" % logged_status, repr(call))
    f = only(fails.get("cudnnSetTensor4dDescriptor", []), "failure of cudnnSetTensor4dDescriptor")
    check(f["args"]["format"] == -1, "format -1", repr(f["args"]))


@scenario
def last_error_kept_real():
    """A failure that leaves no message of cuDNN's own keeps the earlier, unread one for the program, as cuDNN
    does without the spy (the spy reads the message at each failure and hands it on)."""
    p, fails, log = odd_run()
    f = only(fails.get("cudnnSetTensor4dDescriptor", []), "failure without a message")
    check(f["message"] is None, "no message recorded for it", repr(f))
    before = [r["message"] for r in events(p.records, "failure") if r["t_ns"] < f["t_ns"] and r["message"]]
    check(before and "last error: [%s]\n" % before[-1] in p.stdout, "the message of the last failure that had one",
          p.stdout, repr(before[-1:]))


@scenario
def last_error_string_real():
    """The message the program reads with cudnnGetLastErrorString is recorded as a string, as the program got it."""
    p, fails, log = odd_run({"CUDNNSPY_TRACE": "cudnnGetLastErrorString"})
    m = re.search(r"^last error: \[(.*)\]$", p.stdout, re.M)
    check(m and m.group(1) and m.group(1) != "untouched", "cuDNN gave a message", p.stdout)
    call = only(events(p.records, "call", "cudnnGetLastErrorString"), "traced call")
    check(call["args"]["message"].get("string") == m.group(1) and call["args"]["max_size"] == 256,
          "the message as a string", repr(call["args"]), m.group(1))


@scenario
def failure_inputs_real():
    """A failed call's input arrays are in its record (read with a copy that cannot fault), as cuDNN logs them;
    its outputs are not read."""
    p, fails, log = odd_run()
    f = [r for r in fails.get("cudnnSetTensorNdDescriptor", []) if r["args"]["dataType"] == "CUDNN_DATA_FLOAT"]
    f = only(f, "failure of cudnnSetTensorNdDescriptor")
    entry = [a for a in logged(log, "cudnnSetTensorNdDescriptor") if a.get("dimA") == "[2,0,4]"]
    entry = only(entry, "logged call")
    for k in ("dimA", "strideA"):
        check(isinstance(f["args"][k], dict) and log_agrees(f["args"][k].get("values"), entry[k]),
              "%s: cuDNN says %s" % (k, entry[k]), repr(f["args"]))
    b = only(fails.get("cudnnBackendSetAttribute", []), "failure of cudnnBackendSetAttribute")
    elements = only([a for a in logged(log, "cudnnBackendSetAttribute") if "UNIQUE_ID" in a["attributeName"]][-1:],
                    "logged call")
    check(isinstance(b["args"]["arrayOfElements"], dict) and b["args"]["arrayOfElements"].get("values") == [7]
          and log_agrees(7, elements["[0]"]),
          "the elements of a refused cudnnBackendSetAttribute, as cuDNN logs them", repr(b["args"]), repr(elements))
    g = only(fails.get("cudnnGetMultiHeadAttnBuffers", []), "failure with outputs")
    check(isinstance(g["args"]["weightSizeInBytes"], str), "outputs of a failed call not read", repr(g["args"]))


@scenario
def scaling_real():
    """alpha and beta are decoded as cuDNN reads them: double for a double output tensor, float otherwise, and
    agree with cuDNN's own log; in failure records too."""
    p, fails, log = odd_run()
    adds = [f for f in fails.get("cudnnAddTensor", []) if f["args"]["alpha"] is not None]
    entries = [a for a in logged(log, "cudnnAddTensor") if a.get("alpha") != "NULL_PTR"]
    check(len(adds) == 2 and len(entries) == 2, "two calls with scaling factors", repr(adds), repr(entries))
    for f, e, want in zip(adds, entries, ((1.5, 0.25), (2.5, -0.125))):
        got = tuple(f["args"][k].get("value") if isinstance(f["args"][k], dict) else None for k in ("alpha", "beta"))
        check(got == want, "the values passed", repr(f["args"]), repr(want))
        for k in ("alpha", "beta"):
            check(log_agrees(f["args"][k]["value"], e[k]), "%s: cuDNN says %s" % (k, e[k]), repr(f["args"]))


@scenario
def oracle_real():
    """cuDNN's own API log as the oracle: programs that call the host-side API of the real cuDNN (every legacy
    descriptor kind set and read back, odd values, failing calls, the graph API up to plans) run traced by the spy and
    logged by cuDNN in one process; every argument, array element, status and descriptor field both show
    agrees, apart from cuDNN's documented quirks (oracle.py); every descriptor field cuDNN shows, the spy shows
    too or says why it has no value (never set, a failed Set, written by cuDNN); each program's output is the same
    without either."""
    need_real()
    oracle.load_api(os.path.join(HERE, "..", "..", "shim", "api", "cudnn.api"))
    res = oracle.Result()
    for name in ("decode-all", "decode-odd", "folded-conv", "conv-legacy", "conv-graph", "host-sweep", "call-every"):
        plain = run([prog(name)], {"LD_LIBRARY_PATH": REAL})
        d = tempfile.mkdtemp(prefix="cudnnspy-oracle-")
        try:
            p = run([prog(name)], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_STDERR": "none",
                                   "CUDNNSPY_TRACE": "*", "CUDNN_LOGLEVEL_DBG": "3",
                                   "CUDNN_LOGDEST_DBG": os.path.join(d, "cudnn.log")})
            log = oracle.read_log(os.path.join(d, "cudnn.log"))
        finally:
            shutil.rmtree(d, ignore_errors=True)
        check(p.stdout == plain.stdout, "%s: the output unchanged" % name, plain.stdout, p.stdout)
        recs = [r for r in only_file(p) if r["event"] in ("call", "failure")]
        before = len(res.mismatches)
        oracle.compare(recs, log, res)
        check(len(res.mismatches) == before, "%s: the spy and cuDNN's log agree" % name, *res.mismatches[before:30])
    print(res.summary())
    print("left aside: %s" % ", ".join("%s %d" % kv for kv in sorted(res.skipped.items())))
    print("descriptor fields without a value: %s" % ", ".join("%s %d" % kv for kv in sorted(res.fields_unknown.items())))
    # Every descriptor field cuDNN's log shows, the spy shows too (or says why it has no value: never set, a
    # failed Set, written by cuDNN, or one of oracle.FIELD_QUIRKS).
    check(not res.unshown, "every descriptor field cuDNN shows, the spy shows: %d do not"
          % sum(res.unshown.values()), *res.unshown_list())
    check(res.calls >= 700 and len(res.functions) >= 200 and res.args >= 2500 and res.fields >= 2900,
          "as much compared as before", res.summary())


def traced_args(name, trace="*"):
    """{fn: [args of each call or failure record]} of a program run traced on the fake cuDNN."""
    p = run([prog(name)], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_STDERR": "none",
                           "CUDNNSPY_TRACE": trace})
    out = {}
    for r in only_file(p):
        if r["event"] in ("call", "failure"):
            out.setdefault(r["fn"], []).append(r["args"])
    return out


@scenario
def descriptor_state():
    """What traced calls show of a descriptor beside its shape (the fields cuDNN's own log shows): a descriptor
    created and never set says so; a convolution's settings never made show cuDNN's defaults, an RNN's clip
    its reset; an RNN data descriptor's padding fill by value; backend descriptors with their attributes, and
    variant packs with their pointers when their creation is traced (otherwise only their id)."""
    calls = traced_args("host-sweep")
    conv = calls["cudnnGetConvolutionNdDescriptor"][0]["convDesc"]
    check(conv.get("mathType") == "CUDNN_DEFAULT_MATH" and conv.get("groupCount") == 1 and
          conv.get("reorderType") == "CUDNN_DEFAULT_REORDER", "a convolution's settings never made: defaults",
          repr(conv))
    conv = calls["cudnnGetConvolutionGroupCount"][0]["convDesc"]
    check(conv.get("groupCount") == 2 and conv.get("mathType") == "CUDNN_FMA_MATH", "the settings made", repr(conv))
    bn = calls["cudnnDeriveBNTensorDescriptor"][0]["derivedBnDesc"]
    check(bn.get("unset") is True and "desc" not in bn, "a tensor created and never set says so", repr(bn))
    data = calls["cudnnGetRNNDataDescriptor"][0]["rnnDataDesc"]
    check(data["set"]["args"].get("paddingFill") == 0.5, "the padding fill kept by value", repr(data))
    rnn = calls["cudnnGetRNNDescriptor_v8"][0]["rnnDesc"]
    check(rnn.get("clipMode") == "CUDNN_RNN_CLIP_NONE" and rnn.get("lclip") == 0, "no clip before SetClip",
          repr(rnn))
    fin = [a["descriptor"] for a in calls["cudnnBackendFinalize"] if a["descriptor"].get("attrs")]
    check(fin and all(a.get("type") for a in fin), "traced backend calls show the attributes",
          repr(calls["cudnnBackendFinalize"][:3]))
    graph = traced_args("conv-graph")
    packs = [a["variantPack"] for a in graph["cudnnBackendExecute"]]
    check(packs and all(p.get("attrs", {}).get("CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS") == ["0x1000", "0x2000",
                                                                                            "0x3000"]
                        for p in packs), "a variant pack's pointers", repr(packs))
    graph = traced_args("conv-graph", "cudnnBackendExecute")
    packs = [a["variantPack"] for a in graph["cudnnBackendExecute"]]
    check(packs and all(set(p) == {"id"} for p in packs), "not kept when its creation is not traced", repr(packs))


@scenario
def derived_real():
    """A descriptor cuDNN writes itself (cudnnDeriveBNTensorDescriptor) keeps no stale state: the spy no longer
    claims the shape the program set before, and says which call wrote it."""
    p, fails, log = odd_run()
    f = [r for r in fails.get("cudnnActivationForward", []) if r["args"]["xDesc"].get("filled_by")]
    x = only(f, "failure on the derived descriptor")["args"]["xDesc"]
    check("desc" not in x and "set" not in x and x["filled_by"] == "cudnnDeriveBNTensorDescriptor",
          "no stale state, and the call that wrote it", repr(x))
    entry = [a for a in logged(log, "cudnnActivationForward") if a.get("srcDesc", {}).get("dimA") == "[1,6,1,1]"]
    check(len(entry) == 1, "cuDNN's own log shows the derived shape", repr(logged(log, "cudnnActivationForward")))


@scenario
def rnn_clip_real():
    """An RNN descriptor's clip settings (cudnnRNNSetClip_v8) are kept beside its shape, and forgotten when a
    shape Set resets them (back to CUDNN_RNN_CLIP_NONE), as cuDNN's own log shows the descriptor."""
    p, fails, log = odd_run()
    recs = fails.get("cudnnGetRNNWeightSpaceSize", [])
    entries = logged(log, "cudnnGetRNNWeightSpaceSize")
    check(len(recs) == 2 and len(entries) == 2, "two failing calls on the RNN descriptor", repr(recs), repr(entries))
    first, second = (r["args"]["rnnDesc"] for r in recs)
    check(entries[0]["rnnDesc"]["clipMode"].startswith("CUDNN_RNN_CLIP_NONE") and
          first.get("clipMode") == "CUDNN_RNN_CLIP_NONE" and first.get("lclip") == 0 and
          first["set"]["fn"] == "cudnnSetRNNDescriptor_v8", "no clip after the shape's Set, as cuDNN resets it",
          repr(first))
    fields = entries[1]["rnnDesc"]
    for k in ("clipMode", "clipNanOpt", "lclip", "rclip"):
        check(log_agrees(second.get(k), fields[k]), "%s: cuDNN says %s" % (k, fields[k]), repr(second))
    check(second["set"]["fn"] == "cudnnSetRNNDescriptor_v8", "the shape kept", repr(second))


FRONTEND_SIG = ("fwd x=float:8x16x32x32:NCHW w=float:32x16x3x3:NCHW y=float:8x32x32x32:NCHW pad=1x1 stride=1x1 "
                "dilation=1x1 mode=cross_correlation compute=float groups=1 +pointwise(relu_fwd)")


@scenario
def graph_frontend():
    """The graph API as cudnn-frontend drives it: parts destroyed early, every config of a 30-config query kept,
    engines read with no count pointer, plans finalized until one works. The plan names its engine (rank 21) and
    knobs, the signature is whole, and the NOT_SUPPORTED probing is counted without a failure line."""
    unsupported = ",".join(str(e) for e in [12, 0, 7] + list(range(103, 121)))
    env = {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_HEUR_COUNT": "30", "FAKECUDNN_UNSUPPORTED_ENGINES": unsupported}
    plain = run([prog("graph-frontend"), "40"], env)
    check("config 21 engine 121 shared-memory 3000 plan 0" in plain.stdout, "rank 21 works", plain.stdout)
    p = run([prog("graph-frontend"), "40"], dict(env, LD_PRELOAD=PRELOAD))
    same_output(plain, p, "under preload")
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == FRONTEND_SIG, "the signature whole, though its parts were destroyed early", repr(g))
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(len(h["configs"]) == 30 and h["engines"][:22] == [12, 0, 7] + list(range(103, 122)),
          "every config of the query, and the engines the program read", repr(h))
    plan = only([r for r in events(p.records, "plan")], "one plan finalized")
    check(plan["engine"] == 121 and plan["knobs"] == [] and plan["heuristics"]["rank"] == 21 and
          plan["signature"] == FRONTEND_SIG, "the plan names its engine, knobs and graph", repr(plan))
    algo = only([a for a in events(p.records, "algo") if a["api"] == "graph"], "the executed choice")
    check(algo["engine"] == 121 and algo["calls"] == 3 and algo["signature"] == FRONTEND_SIG, "executions",
          repr(algo))
    probes = [r for r in events(p.records, "failure") if r.get("probing")]
    check(len(probes) == 43 and not [r for r in events(p.records, "failure") if not r.get("probing")],
          "21 plans and 22 shared-memory questions: probing, all of it", repr(len(probes)))
    check(not [l for l in p.stderr.splitlines() if l.startswith("cudnnspy: cudnnBackend")],
          "no failure line for the probing", p.stderr)
    check(summary_total(p.stderr) == (385, 43, 0) and "(43 of them probing)" in p.stderr, "counted, said apart",
          p.stderr)
    summary = only_file(p)[-1]
    check(summary["probing"] == 43, "in the summary record", repr(summary)[:300])
    loud = run([prog("graph-frontend"), "40"], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_STDERR="all"))
    check(len([l for l in loud.stderr.splitlines() if l.startswith("cudnnspy: cudnnBackendFinalize(")]) == 10,
          "asked for: the probing lines (rate-limited)", loud.stderr)
    # Rank 0 works: the program never reads its knobs, the spy does, through cuDNN's own functions.
    q = run([prog("graph-frontend"), "40"], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
    plan = only(events(q.records, "plan"), "the plan")
    check(plan["engine"] == 12 and plan["knobs"] == [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 1},
                                                      {"type": "CUDNN_KNOB_TYPE_TILE_SIZE", "value": 3}],
          "engine and knobs read by the spy itself", repr(plan))
    check(summary_row(q.stderr, "cudnnBackendGetAttribute")[0] == 68 - 21 * 3, "the spy's own reads not counted",
          q.stderr)


@scenario
def graph_frontend_real():
    """The real 9.19: an operation's tensors and convolution destroyed once it is finalized, the operations once
    the graph is: the graph's signature is whole."""
    need_real()
    plain = run([prog("graph-frontend"), "8"], {"LD_LIBRARY_PATH": REAL})
    p = run([prog("graph-frontend"), "8"], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD})
    same_output(plain, p, "under preload")
    check("graph finalize 0" in p.stdout, "the graph finalizes", p.stdout)
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == FRONTEND_SIG, "whole", repr(g))
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(h["signature"] == FRONTEND_SIG, "the query knows it too", repr(h))


@scenario
def graph_tuning_findings():
    """untuned-graph when every signature ran the heuristics' first plan and no sweep was seen, not when a sweep
    was; replanning when one graph is planned again and again; fallback-engine when only the fallback heuristics
    offered what ran; the run's other findings stay as they were."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
    first = run([prog("graph-frontend"), "40", "first"], env)
    f = findings(first)
    check(set(f) == {"untuned-graph"} and f["untuned-graph"]["message"].startswith("1 graph signature ran the plan")
          and "torch.backends.cudnn.benchmark = True" in f["untuned-graph"]["fix"], "untuned, with the setting",
          repr(f))
    check(len([l for l in first.stderr.splitlines() if "info untuned-graph:" in l]) == 1, "said once", first.stderr)
    sweep = run([prog("graph-frontend"), "40", "sweep"], env)
    check("sweep 1 0" in sweep.stdout and not findings(sweep), "a sweep seen: nothing to say", repr(findings(sweep)))
    replan = run([prog("graph-frontend"), "40", "replan"], env)
    f = findings(replan)
    check("replanning" in f and (FRONTEND_SIG + ": 21 plans finalized (") in f["replanning"]["message"],
          "replanning, with the count", repr(f))
    skipped = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_UNSUPPORTED_ENGINES="12"))
    check(not findings(skipped), "rank 1 after rank 0 failed: not the heuristics' first, no finding",
          repr(findings(skipped)))
    fallback = run([prog("graph-frontend"), "40", "fallback"], env)
    f = findings(fallback)
    check(set(f) == {"fallback-engine"} and f["fallback-engine"]["severity"] == "warning" and
          f["fallback-engine"]["message"] == FRONTEND_SIG + ": ran engine 12 that only the fallback heuristics "
          "(CUDNN_HEUR_MODE_FALLBACK) offered: the slow engines that always work, not the fast kernels" and
          "support matrix" in f["fallback-engine"]["fix"], "fallback-engine alone: not untuned-graph too", repr(f))
    h = only(events(fallback.records, "heuristics"), "heuristics record")
    check(h["mode"] == "CUDNN_HEUR_MODE_FALLBACK", "the query's mode recorded", repr(h))


ATTN = "b=2 h=8 s_q=128 s_kv=128 d=64 q=half:2x8x128x64:bshd k=half:2x8x128x64:bshd v=half:2x8x128x64:bshd " \
       "o=half:2x8x128x64:bshd"
ATTN_CASES = [
    ([], "attention-fwd " + ATTN),
    (["causal", "dropout", "stats"], "attention-fwd " + ATTN + " stats causal dropout"),
    (["gqa", "causal"], "attention-fwd b=2 h=8 h_kv=2 s_q=128 s_kv=128 d=64 q=half:2x8x128x64:bshd "
     "k=half:2x2x128x64:bshd v=half:2x2x128x64:bshd o=half:2x8x128x64:bshd causal"),
    (["bwd"], "attention-bwd b=2 h=8 s_q=128 s_kv=128 d=64 q=half:2x8x128x64:bshd k=half:2x8x128x64:bshd"),
    (["sdpa-op"], "attention-fwd " + ATTN + " stats")]


@scenario
def attention_graph():
    """A scaled dot-product attention graph built from operations as cudnn-frontend builds it (its tensors and
    sub-descriptors destroyed early): named attention-fwd with its shapes, layout, data types, causal mask and
    dropout, in the graph, heuristics, plan and algo records alike; 17 operations kept whole."""
    env = {"LD_LIBRARY_PATH": FAKE9}
    for args, sig in ATTN_CASES:
        plain = run([prog("attention-graph")] + args, env)
        p = run([prog("attention-graph")] + args, dict(env, LD_PRELOAD=PRELOAD))
        same_output(plain, p, "under preload " + " ".join(args))
        g = only(events(p.records, "graph"), "graph record")
        check(g["signature"] == sig and g["op"] == "graph", "the graph named as attention " + " ".join(args),
              repr(g["signature"]))
        plan = only(events(p.records, "plan"), "plan record")
        h = only(events(p.records, "heuristics"), "heuristics record")
        a = [x for x in events(p.records, "algo") if x["api"] == "graph"]
        check(plan["signature"] == sig and h["signature"] == sig and [x["signature"] for x in a] == [sig] and
              a[0]["calls"] == 2 and plan["engine"] == 12, "the same text in every record", repr(plan), repr(a))
    plain = run([prog("attention-graph"), "no-softmax"], dict(env, LD_PRELOAD=PRELOAD))
    sig = only(events(plain.records, "graph"), "graph record")["signature"]
    check(sig.startswith("graph matmul adesc=half:2x8x128x64:strides=65536x64x512x1 bdesc=half:2x8x64x128:") and
          " ; pointwise(mul) xdesc=float:2x8x128x128:NCHW bdesc=float:1x1x1x1:NCHW ydesc=" in sig and
          not sig.endswith("..."), "not attention without a softmax: each operation with its tensors, as documented",
          sig)
    long = run([prog("attention-graph"), "no-softmax", "causal"], dict(env, LD_PRELOAD=PRELOAD))
    sig = only(events(long.records, "graph"), "graph record")["signature"]
    check(len(sig) == 447 and sig.endswith("...") and
          only(events(long.records, "plan"), "plan record")["signature"] == sig,
          "a signature too long for the spy's 448 bytes says it was cut", sig)
    for args, sig in ATTN_CASES:
        if "stats" in args:
            p = run([prog("attention-graph")] + args, dict(env, LD_PRELOAD=PRELOAD))
            g = only(events(p.records, "graph"), "graph record")
            check("operations 17" in p.stdout and len(g["ops"]) == 17 and
                  g["ops"][16]["type"] == "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR",
                  "past 16 operations: all kept, the last matmul among them", repr(len(g["ops"])))


@scenario
def attention_graph_real():
    """The real 9.19 finalizes every attention graph without a GPU (the composite ones forward and backward, and
    its own SDPA operation): the spy names each as with the fake."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    for args, sig in ATTN_CASES:
        plain = run([prog("attention-graph")] + args, env)
        p = run([prog("attention-graph")] + args, dict(env, LD_PRELOAD=PRELOAD))
        same_output(plain, p, "under preload " + " ".join(args))
        check("graph finalize 0" in p.stdout, "the real cuDNN finalizes it " + " ".join(args), p.stdout)
        g = only(events(p.records, "graph"), "graph record")
        check(g["signature"] == sig, "named as attention " + " ".join(args), repr(g["signature"]))


@scenario
def graph_sweep_timing():
    """A tuning sweep over engines that take different times (the fake's FAKECUDNN_ENGINE_US): each engine's
    calls and host time in its own algo record and summary line, so the table shows which engine is fastest;
    a sweep, so no untuned-graph."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "FAKECUDNN_ENGINE_US": "12=20000,0=300,7=600"}
    p = run([prog("graph-frontend"), "40", "sweep"], env)
    a = {x["engine"]: x for x in events(p.records, "algo") if x["api"] == "graph"}
    check(sorted(a) == [0, 7, 12] and [a[e]["calls"] for e in (12, 0, 7)] == [3, 2, 2] and
          all(a[e]["timed"] == a[e]["calls"] for e in a), "each engine the sweep ran, counted and timed", repr(a))
    per = {e: a[e]["host_ns"] / a[e]["calls"] for e in a}
    # Lower bounds only (a sleep takes at least its time); the kept engine is many times slower than the others.
    check(per[12] >= 20000e3 and per[7] >= 600e3 and per[0] >= 300e3 and per[12] > 4 * max(per[0], per[7]),
          "each engine's time per call as it took", repr(per))
    check(re.search(r"graph engine 0 knobs swizzle=2 +2 calls, 0 failed, host [0-9.]+ us$", p.stderr, re.M) and
          re.search(r"graph engine 12 knobs split_k=1,tile_size=3 +3 calls, 0 failed, host [0-9.]+ ms, workspace "
                    r"4096$", p.stderr, re.M), "the summary section, engine by engine", p.stderr)
    check(not findings(p), "a sweep seen: no untuned-graph", repr(findings(p)))


@scenario
def nondeterministic_engine():
    """nondeterministic-engine: a graph plan whose engine cuDNN notes as non-deterministic (the spy reads the notes
    itself), or a legacy algorithm the program's own search marked so; information, a warning when the job asked
    for deterministic results; nothing when the engine has no such note."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
    said = ": ran engine 12, which cuDNN notes as non-deterministic (CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC): its " \
           "results can differ from run to run"
    p = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_NONDET_ENGINES="12"))
    f = findings(p)
    check(set(f) == {"untuned-graph", "nondeterministic-engine"} and
          f["nondeterministic-engine"]["severity"] == "info" and
          f["nondeterministic-engine"]["message"] == FRONTEND_SIG + said and
          "torch.use_deterministic_algorithms(True)" in f["nondeterministic-engine"]["fix"],
          "information, with the framework switches", repr(f))
    plan = only(events(p.records, "plan"), "the plan")
    check(plan["nondeterministic"] is True and plan["engine"] == 12, "the plan record says it", repr(plan))
    check(re.search(r"graph engine 12 knobs .*workspace 4096, non-deterministic$", p.stderr, re.M),
          "the summary section marks it", p.stderr)
    check(summary_row(p.stderr, "cudnnBackendGetAttribute")[0] == 5, "the spy's own reads not counted", p.stderr)
    asked = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_NONDET_ENGINES="12",
                                                     XLA_FLAGS="--xla_gpu_deterministic_ops=true"))
    f = findings(asked)
    check(f["nondeterministic-engine"]["severity"] == "warning" and f["nondeterministic-engine"]["message"] ==
          FRONTEND_SIG + said + ", though the job asked for deterministic results (XLA_FLAGS)",
          "a warning when determinism was asked", repr(f))
    other = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_NONDET_ENGINES="0,7",
                                                     TF_DETERMINISTIC_OPS="1"))
    check(set(findings(other)) == {"untuned-graph"} and
          only(events(other.records, "plan"), "the plan")["nondeterministic"] is False,
          "an engine without the note: nothing", repr(findings(other)))
    legacy = run([prog("conv-legacy"), "-", "nondet"], dict(env, CUBLAS_WORKSPACE_CONFIG=":4096:8"))
    f = findings(legacy)
    check(f.get("nondeterministic-engine", {}).get("severity") == "warning" and
          f["nondeterministic-engine"]["message"].startswith("bwd-filter " + SIG_LEGACY +
                                                             ": ran CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, which cuDNN "
                                                             "notes as non-deterministic (CUDNN_NON_DETERMINISTIC)")
          and f["nondeterministic-engine"]["message"].endswith("(CUBLAS_WORKSPACE_CONFIG)"),
          "legacy: from the search's determinism field", repr(f))
    a = algos(legacy)
    check(a[("legacy", "bwd-filter " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1")]["nondeterministic"] is True
          and a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM")]["nondeterministic"] is False and
          a[("legacy", SIG_3D, FWD + "IMPLICIT_GEMM")]["nondeterministic"] is None,
          "per algo record: true, false, or null when never searched", repr(a))
    plain = run([prog("conv-legacy")], env)
    check("nondeterministic-engine" not in findings(plain), "the deterministic one: nothing", repr(findings(plain)))


@scenario
def load_failure_text():
    """A cuDNN library opened by name that does not load: its load record carries the loader's text (the same
    the program's dlerror gave, for a name found nowhere), or what the file found instead is."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "libcudnn_bad.so.9"), "w") as f:
            f.write("not a library\n")
        code = ("import ctypes, sys\n"
                "for n in sys.argv[1:]:\n"
                "    try:\n"
                "        ctypes.CDLL(n)\n"
                "        print(n, 'loaded')\n"
                "    except OSError as e:\n"
                "        print(e)\n"
                "print(ctypes.CDLL(sys.argv[-1]).cudnnGetVersion())\n")
        # A copy that loads and answers last: the spy's records, with the load records, are written at exit.
        argv = [sys.executable, "-c", code, "libcudnn_nothere.so.9", "libcudnn_bad.so.9",
                os.path.join(FAKE9, "libcudnn.so.9")]
        plain = run(argv, {"LD_LIBRARY_PATH": d})
        p = run(argv, {"LD_LIBRARY_PATH": d, "LD_PRELOAD": PRELOAD})
        same_output(plain, p, "under preload")
        loads = {l["name"]: l for l in events(p.records, "load")}
        missing = loads["libcudnn_nothere.so.9"]
        check(missing["result"] == "failed" and missing["error"] + "\n" == plain.stdout.splitlines(True)[0] and
              "cannot open shared object file: No such file or directory" in missing["error"],
              "found nowhere: the loader's own text, as the program got it", repr(missing), plain.stdout)
        bad = loads["libcudnn_bad.so.9"]
        check(bad["result"] == "failed" and bad["path"] == os.path.join(d, "libcudnn_bad.so.9") and
              bad["error"].startswith(os.path.join(d, "libcudnn_bad.so.9") + ": "), "found, and what it is",
              repr(bad), plain.stdout)


def registry(table):
    """A decorator that files a scenario in `table` under its name with dashes (the files of other areas)."""
    def add(fn):
        table[fn.__name__.replace("_", "-")] = fn
        return fn
    return add


def main_of(table, argv=None):
    """Runs the scenario argv[1] names: 0 pass, 1 fail, 2 usage (every scenario file's main)."""
    argv = argv or sys.argv
    if len(argv) != 2 or argv[1] not in table:
        print("usage: %s {%s}" % (os.path.basename(argv[0]), ",".join(sorted(table))))
        return 2
    try:
        table[argv[1]]()
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    print("ok")
    return 0


def main():
    return main_of(SCENARIOS)


# ---- What programs do to fds, limits, signals and their process (issue 15) ----

def hostile(mode, extra=None, args=(), complete=True, check_rc=True, lib=None):
    """The hostile program without and with the spy: (plain, spied)."""
    lib = lib or FAKE9
    base = {"LD_LIBRARY_PATH": lib, "FAKECUDNN_STATUS": "cudnnCreate=1001"}
    base.update(extra or {})
    plain = run([prog("hostile"), mode] + list(args), base, check_rc=check_rc, complete=complete,
                signal_ok=not check_rc)
    spied = run([prog("hostile"), mode] + list(args), dict(base, LD_PRELOAD=PRELOAD), check_rc=check_rc,
                complete=complete, signal_ok=not check_rc)
    check(plain.returncode == spied.returncode and plain.stdout == spied.stdout,
          "%s: the program ends the same way (%d, %d)" % (mode, plain.returncode, spied.returncode),
          plain.stdout, spied.stdout, spied.stderr)
    return plain, spied


def whole_lines(directory):
    """Every file in the directory ends with a whole record: no torn last line (format 2: no frame cut)."""
    for name in os.listdir(directory):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        if schema.is_binary(data):
            try:
                schema.frames(data)
            except ValueError as e:
                check(False, "%s: a torn last record (%s)" % (name, e))
            continue
        check(not data or data.endswith(b"\n"), "%s: a torn last line" % name, repr(data[-200:]))


@scenario
def file_size_limit():
    """ulimit -f below what the records need: SIGXFSZ never reaches the program; one warning, whole lines,
    the drops counted, and the program's exit status and stdout are its own."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "300"], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*"}), preexec=limit,
                check_rc=False, signal_ok=True)
        check(p.returncode == 0 and "threads 8 calls 300 fails 0" in p.stdout, "the program ran to its end "
              "(exit %d)" % p.returncode, p.stdout, p.stderr)
        check(p.stderr.count("file-size limit") == 1, "one warning", p.stderr)
        m = re.search(r"^cudnnspy: (\d+) records could not be written", p.stderr, re.M)
        check(m and int(m.group(1)) > 1000, "dropped records counted", p.stderr)
        names = os.listdir(d)
        check(len(names) == 1 and os.path.getsize(os.path.join(d, names[0])) <= 1500, "under the limit",
              repr(names))
        whole_lines(d)


@scenario
def record_file_room():
    """The room reserved ahead for whole lines is given back at exit: a file takes the disk it holds."""
    for argv, env in (([prog("host-calls")], {}), ([prog("threads"), "3000"], {"CUDNNSPY_TRACE": "*"})):
        with tempfile.TemporaryDirectory() as d:
            run(argv, spied_env(dict(env, CUDNNSPY_OUTPUT=d)))
            for name in os.listdir(d):
                st = os.stat(os.path.join(d, name))
                check(st.st_blocks * 512 <= st.st_size + 65536, "%s: %d bytes take %d on disk" %
                      (name, st.st_size, st.st_blocks * 512))


@scenario
def fds_low_closed():
    """The record file never takes fd 0, 1 or 2: with stdout closed the program's write still fails as it
    would; with stderr closed the spy's lines never land in its records."""
    with tempfile.TemporaryDirectory() as d:
        plain, spied = hostile("stdout-closed", {"CUDNNSPY_OUTPUT": d}, check_rc=False)
        check(spied.returncode == 7, "the program's write to its closed stdout fails (exit %d)" % spied.returncode,
              spied.stderr)
        recs = records_in(d)
        check(len(recs) == 1 and len(events(recs, "failure")) == 1, "the records, whole", repr(recs))
    with tempfile.TemporaryDirectory() as d:
        hostile("stderr-closed", {"CUDNNSPY_OUTPUT": d})
        recs = records_in(d)
        check(len(recs) == 1 and len(events(recs, "failure")) == 2, "only records in the file", repr(recs))


@scenario
def fds_first_free():
    """After failures (a stack taken for each, the record file open) the program's next open() gets the
    number it gets without the spy: the spy holds no descriptor below 512 (libunwind kept a pipe at 3 and 4,
    and closed those numbers again once the program had closed and reused them)."""
    with tempfile.TemporaryDirectory() as d:
        plain, spied = hostile("first-fd", {"CUDNNSPY_OUTPUT": d})
        check("first free fd 3" in spied.stdout, "fd 3", spied.stdout)


@scenario
def fds_closed_reused():
    """The program closes every fd above 2 and opens a file of its own, which gets the record file's number:
    the spy never writes into it, and its records go on in its own file."""
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as mine:
        plain, spied = hostile("closefrom", {"CUDNNSPY_OUTPUT": d}, args=[os.path.join(mine, "own")])
        check("own holds [mine\n]" in spied.stdout, "the program's file holds what it wrote", spied.stdout)
        recs = records_in(d)
        check(len(recs) == 1 and len(events(recs, "failure")) == 3, "every failure in the record file",
              repr(recs))


@scenario
def fork_child_own_file():
    """A forked child closes what it inherited and opens its own file with the parent's record file number:
    the spy neither closes it nor writes into it."""
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as mine:
        # The child ends with _exit(): its file has no summary.
        plain, spied = hostile("fork-own-file", {"CUDNNSPY_OUTPUT": d}, args=[os.path.join(mine, "own")],
                               complete=False)
        check("own holds [child\n]" in spied.stdout and "child 0" in spied.stdout, "the child's file is its own",
              spied.stdout)
        recs = records_in(d, complete=False)
        check(len(recs) == 2, "a file each", repr(list(recs)))
        check(sorted(len([r for r in v if r["event"] == "failure"]) for v in recs.values()) == [1, 2],
              "each one's failures in its own file", repr(recs))


@scenario
def rank_numbers():
    """Numbers from the environment are written as the numbers they mean: RANK=007 is rank 7."""
    for value, want in (("007", 7), ("0", 0), ("000", 0), ("42", 42)):
        with tempfile.TemporaryDirectory() as d:
            run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d, "RANK": value}))
            recs = records_in(d)
            check(len(recs) == 1 and list(recs.values())[0][0]["rank"] == want, "RANK=%s: rank %d" % (value, want),
                  repr(recs))
            check(list(recs)[0].endswith(".r%d%s" % (want, RECORD_EXT)), "the file name has the rank", repr(recs))


@scenario
def exec_without_exit():
    """exec without exit(): the spy runs no code at an exec (it may export no exec), yet every record is in the
    file, with cudnnspy_flush() before the exec or without: a record is the file's when its call returns (issue 28;
    before it, the 51 traced calls were lost without the flush)."""
    for flush in (False, True):
        with tempfile.TemporaryDirectory() as d:
            env = {"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "cudnnGetVersion"}
            if flush:
                env["HOSTILE_FLUSH"] = "1"
            plain, spied = hostile("exec", env, args=["/bin/true"], complete=False)
            recs = records_in(d, complete=False)
            check(len(recs) == 1, "one file", repr(list(recs)))
            check(len(events(recs, "failure", "cudnnCreate")) == 1, "the failure survives the exec", repr(recs))
            calls = len(events(recs, "call", "cudnnGetVersion"))
            check(calls == 51, "flush %s: %d of 51 traced calls in the file" % (flush, calls))
            # Nothing runs at an exec: the summary, in format 2, is the one the counters in the file give.
            s = events(recs, "summary")
            check(not s if TEST_FORMAT == "json" else len(s) == 1 and s[0].get("exited") is False,
                  "no summary of the exit: nothing runs at an exec", repr(s)[:400])


@scenario
def stderr_none_silent():
    """CUDNNSPY_STDERR=none: not a single line, whatever goes wrong (bad settings, an unwritable output,
    a crash)."""
    env = {"CUDNNSPY_STDERR": "none", "CUDNNSPY_OUTPUT": "/dev/full", "CUDNNSPY_RATE_LIMIT": "bogus",
           "CUDNNSPY_TRACE": "cudnnNoSuchFunction", "CUDNNSPY_CRASH": "1"}
    p = run([prog("host-calls")], spied_env(env))
    check(p.stderr == "", "nothing on stderr", p.stderr)
    q = run([prog("endings"), "segv"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9,
                                        sanitizer.DELIBERATE_SIGNALS: "1", **env}, check_rc=False, signal_ok=True)
    # A sanitizer build's runtime reports the deliberate fault itself: only the spy must say nothing.
    said = q.stderr if not sanitizer.RUNTIME else "\n".join(l for l in q.stderr.splitlines() if "cudnnspy" in l)
    check(q.returncode == -signal.SIGSEGV and said == "", "a crash, silent", q.stderr)


@contextlib.contextmanager
def small_disk(size):
    """A directory on a tmpfs of SIZE ("64k"), mounted for the test and gone after (root only: exit 77 without)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        print("needs root to mount a small tmpfs: skipped")
        sys.exit(77)
    d = tempfile.mkdtemp(prefix="cudnnspy-full-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", d]).returncode != 0:
        os.rmdir(d)
        print("cannot mount a tmpfs: skipped")
        sys.exit(77)
    try:
        yield d
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


@scenario
def full_disk_whole_lines():
    """A disk that fills up (a 64 KiB tmpfs; needs root): every line in the file is whole, the drops are
    counted, and the program runs to its end."""
    with small_disk("64k") as d:
        # Format 2 packs these calls into a seventeenth of the bytes: ten times the calls fill the disk as well.
        for calls in (("300", "2000") if TEST_FORMAT == "json" else ("3000", "20000")):
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            p = run([prog("threads"), calls], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*"}))
            check("threads 8 calls %s fails 0" % calls in p.stdout, "the program ran to its end", p.stdout)
            check(p.stderr.count("cannot write") == 1, "one warning", p.stderr)
            m = re.search(r"^cudnnspy: (\d+) records could not be written", p.stderr, re.M)
            check(m and int(m.group(1)) > 100, "dropped records counted", p.stderr)
            whole_lines(d)


@scenario
def crash_handler_chaining():
    """CUDNNSPY_CRASH=1 with the program's own handlers: each runs as the kernel would run it (its sa_mask,
    SA_NODEFER); a program that recovers (siglongjmp) or ignores the signal gets no crash record and one
    summary; no handler goes over SIG_IGN."""
    crash = {"CUDNNSPY_CRASH": "1", sanitizer.DELIBERATE_SIGNALS: "1"}
    plain, spied = hostile("sa-mask", crash, check_rc=False, complete=False)
    check(spied.returncode == 5 and "SIGUSR1 blocked 1, SIGSEGV blocked 1" in spied.stdout,
          "the handler's sa_mask and its own signal are blocked in it", spied.stdout)
    plain, spied = hostile("nodefer", crash, check_rc=False, complete=False)
    check(spied.returncode == 6 and "nested" in spied.stdout, "SA_NODEFER: the nested signal reaches the handler",
          spied.stdout, spied.stderr)
    for mode, out in (("segv-recover", "recovered 2"), ("abort-ignored", "survived")):
        with tempfile.TemporaryDirectory() as d:
            plain, spied = hostile(mode, dict(crash, CUDNNSPY_OUTPUT=d, CUDNNSPY_TRACE="*"))
            check(out in spied.stdout, "%s: ran on" % mode, spied.stdout)
            check("fatal signal" not in spied.stderr, "%s: no crash said" % mode, spied.stderr)
            recs = records_in(d)
            check(not events(recs, "crash") and len(events(recs, "summary")) == 1, "%s: no crash record, one "
                  "summary" % mode, repr(recs))
            check(len(events(recs, "call", "cudnnGetVersion")) == 2, "%s: the calls after it recorded" % mode)


@scenario
def exit_while_calling():
    """exit() while 4 other threads keep calling, every call traced (10 runs): the summary is the one last line,
    no line is torn, and the file holds no more calls than the summary counts."""
    for i in range(10):
        with tempfile.TemporaryDirectory() as d:
            p = run([prog("hostile"), "exit-race"], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*",
                                                               "CUDNNSPY_STDERR": "none"}))
            check(p.stdout == "exiting\n", "the program's output", p.stdout)
            recs = records_in(d)    # the summary last, every line whole
            check(len(recs) == 1, "one file", repr(list(recs)))
            s = events(recs, "summary")
            calls = len(events(recs, "call", "cudnnGetVersion"))
            counted = [f["calls"] for f in s[0]["functions"] if f["fn"] == "cudnnGetVersion"]
            check(len(s) == 1 and counted and calls <= counted[0], "run %d: one summary, counting at least the "
                  "calls recorded (%d recorded, %r counted)" % (i, calls, counted))


@scenario
def thread_exit_destructor():
    """800 threads (8 at a time) that call cuDNN from a thread-exit destructor running after the spy's,
    400 traced calls each: a thread's block is handed on only once it can no longer call, so every record is
    whole and there, once, and the counts are exact."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("hostile"), "exit-destructor"], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_STDERR": "summary",
                                                                 "CUDNNSPY_TRACE": "cudnnSetTensor4dDescriptor"}))
        check(p.stdout == "800 threads\n", "ran", p.stdout)
        recs = records_in(d)
        calls = events(recs, "call", "cudnnSetTensor4dDescriptor")
        check(len(calls) == 320000, "every call recorded once", str(len(calls)))
        check(summary_row(p.stderr, "cudnnSetTensor4dDescriptor")[:2] == (320000, 0), "counted", p.stderr)
        check(summary_row(p.stderr, "cudnnCreateTensorDescriptor")[:2] == (800, 0), "counted", p.stderr)


@scenario
def output_others_dirs():
    """Run as root: no records in another user's directory (its owner could rename or delete them), none
    through another user's symlink to a directory (in a sticky directory, like /tmp); one's own link is
    followed. Needs root (77 otherwise)."""
    if os.geteuid() != 0:
        print("needs root: skipped")
        sys.exit(77)
    plain = run([prog("host-calls")], {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"})
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o1777)
        theirs = os.path.join(d, "theirs")
        os.mkdir(theirs, 0o755)
        os.chown(theirs, 65534, 65534)
        mine = os.path.join(d, "mine")
        os.mkdir(mine, 0o700)
        link = os.path.join(d, "link")
        os.symlink(mine, link)
        os.lchown(link, 65534, 65534)
        for target, words in ((theirs, "belongs to another user"), (theirs + "/x-%p.jsonl", "belongs to another user"),
                              (link, "symbolic link of another user"),
                              (link + "/x-%p.jsonl", "symbolic link of another user")):
            p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": target}))
            check(p.stdout == plain.stdout, "stdout unchanged", p.stdout)
            check(p.stderr.count("cannot create a record file") == 1 and words in p.stderr, "%s: refused (%s)" %
                  (target, words), p.stderr)
            check(not os.listdir(theirs) and not os.listdir(mine), "%s: nothing written" % target,
                  repr(os.listdir(theirs) + os.listdir(mine)))
        own = os.path.join(d, "own-link")
        os.symlink(mine, own)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": own}))
        check(len(os.listdir(mine)) == 1, "one's own link is followed", p.stderr)


@scenario
def errno_kept():
    """errno is what it is without the spy after every kind of call the spy handles on its own paths (a new Set,
    the same Set again, another, a failing one, a Get, a Destroy), and after the first call of all, where cuDNN's
    one-time initialization sets errno (9.19: to 0; the fake does the same): the spy's own first question ran it,
    and hands what it left to the program's first call (issue 15, item 21). Default settings, every call
    recorded, both formats, preload and drop-in; the fake cuDNN and the real cuDNN 9.19 (host-side calls)."""
    libs = [FAKE9] + ([REAL] if REAL and os.path.isdir(REAL) else [])
    for lib in libs:
        plain = run([prog("hostile"), "errno-kept"], {"LD_LIBRARY_PATH": lib})
        check("errno 72" in plain.stdout and "errno 77" in plain.stdout, "the program ran", plain.stdout)
        for extra in ({}, {"CUDNNSPY_TRACE": "*"}, {"CUDNNSPY_TRACE": "*", "CUDNNSPY_FORMAT": "json"}):
            spied = run([prog("hostile"), "errno-kept"], dict(extra, LD_LIBRARY_PATH=lib, LD_PRELOAD=PRELOAD))
            drop = run([prog("hostile"), "errno-kept"], dict(extra, LD_LIBRARY_PATH=DROPIN9,
                                                             CUDNNSPY_LIBRARY=os.path.join(lib, "libcudnn.so.9")))
            check(plain.stdout == spied.stdout == drop.stdout, "%s, %r: the same statuses and errno, preload and "
                  "drop-in" % (lib, extra), plain.stdout, spied.stdout, drop.stdout)
        # Through dlopen and dlsym (ctypes, as JAX and TensorFlow reach cuDNN): the spy resolves in its dlsym, before
        # any call, and the program's first call must still start from what cuDNN's first call leaves.
        probe = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "gpu",
                                              "errno_first_call.py"), os.path.join(lib, "libcudnn.so.9")]
        plain = run(probe, {"LD_LIBRARY_PATH": lib})
        spied = run(probe, {"LD_LIBRARY_PATH": lib, "LD_PRELOAD": PRELOAD})
        check("errno cudnnCreate: 71 before" in plain.stdout and plain.stdout == spied.stdout,
              "%s through ctypes: the same errno" % lib, plain.stdout, spied.stdout)


@scenario
def errno_first_call_real():
    """errno after the program's first cuDNN call is what it is without the spy (preload and drop-in, default
    settings and every call recorded)."""
    need_real()
    for extra in ({}, {"CUDNNSPY_TRACE": "*", "CUDNNSPY_CRASH": "1"}):
        plain = run([prog("hostile"), "errno"], {"LD_LIBRARY_PATH": REAL})
        pre = run([prog("hostile"), "errno"], dict(extra, LD_LIBRARY_PATH=REAL, LD_PRELOAD=PRELOAD))
        drop = run([prog("hostile"), "errno"], dict(extra, LD_LIBRARY_PATH=DROPIN9,
                                                     CUDNNSPY_LIBRARY=os.path.join(REAL, "libcudnn.so.9")))
        check(plain.stdout == pre.stdout == drop.stdout, "the same errno", plain.stdout, pre.stdout, drop.stdout)


def driver_stub_dir(d):
    """Without a driver, the real cuDNN's heuristics offer nothing (every engine: libcuda == nullptr). The CUDA
    toolkit's stub libcuda (it answers CUDA_ERROR_STUB_LIBRARY to everything) is enough for them to rank engine
    configs; finalizing a plan then fails (cuLibraryLoadData). A directory holding the stub as libcuda.so.1, or
    None when a real driver loads or no stub is installed."""
    # Asked in a child without the test's LD_LIBRARY_PATH (meson's holds the fake driver), as run() starts them.
    env = {k: v for k, v in E.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    if subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('libcuda.so.1')"], env=env,
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        return None
    for stub in (os.path.join(REAL, "stubs", "libcuda.so"),
                 os.path.join(os.path.dirname(REAL.rstrip("/")), "lib64", "stubs", "libcuda.so")):
        if os.path.exists(stub):
            os.symlink(stub, os.path.join(d, "libcuda.so.1"))
            return d
    return None


@scenario
def real_graph_deviceless():
    """cudnn-frontend's deviceless planning with the real cuDNN: device properties from JSON, no handle; conv+relu,
    matmul and an expanded attention graph, heuristics in modes A and fallback, every config planned, each part
    destroyed once used. Under the spy, every call recorded: the same output; every plan the program finalized
    (a plan record; a failure record where finalizing failed) names the engine and the knobs that the program
    read from its config; every signature is whole (no '?', every operation of the graph in it)."""
    need_real()
    with tempfile.TemporaryDirectory(prefix="cudnnspy-driver-") as d:
        stub = driver_stub_dir(d)
        env = {"LD_LIBRARY_PATH": (stub + ":" if stub else "") + REAL}
        plain = run([prog("real-graph")], env)
        spied = run([prog("real-graph")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_TRACE="*", CUDNNSPY_STDERR="none"))
    check(plain.stdout == spied.stdout and plain.returncode == spied.returncode == 0,
          "the program's output and exit unchanged under the spy", plain.stdout, spied.stdout, spied.stderr)
    check("deviceprop finalize=0" in plain.stdout and all("graph=%s ops=%d finalize=0" % g in plain.stdout for g in
                                                           (("conv", 2), ("matmul", 1), ("sdpa", 14))),
          "the device properties and the three graphs finalized without a handle", plain.stdout)
    # What the program read: per (graph, mode, rank) the engine, the knob values and the plan's status.
    read = {}
    for m in re.finditer(r"^graph=(\w+) mode=(\w+) rank=(\d+) engine=(-?\d+) knobs=(\S+) status=(\d+)", plain.stdout,
                         re.M):
        knobs = [] if m.group(5) == "-" else [int(k.split(":")[1]) for k in m.group(5).split(",")]
        read[(m.group(1), m.group(2), int(m.group(3)))] = (int(m.group(4)), knobs, int(m.group(6)))
    if stub:
        check(read, "with the driver stub, the heuristics rank engine configs", plain.stdout)
    recs = spied.records
    problems = []
    graphs = events(recs, "graph")
    check(len(graphs) == 3, "a graph record per graph", repr(graphs))
    names = dict(zip((g["id"] for g in graphs), ("conv", "matmul", "sdpa")))
    for g in graphs:
        sig = g["signature"] or ""
        parts = sig[len("graph "):].split(" ; ") if sig.startswith("graph ") else [sig]
        if "?" in sig:
            problems.append("graph %s (%s): '?' in its signature: %s" % (g["id"], names[g["id"]], sig))
        if names[g["id"]] == "sdpa" and not sig.startswith("attention-fwd b=2 h=4 s_q=128 s_kv=128 d=64 "):
            problems.append("graph %s (sdpa): not named as attention: %s" % (g["id"], sig))
        if g["ops"] is not None and not sig.startswith(("fwd ", "attention-")) and len(parts) != len(g["ops"]):
            problems.append("graph %s (%s): the signature names %d of its %d operations (%d characters, ends %r)" %
                            (g["id"], names[g["id"]], len(parts), len(g["ops"]), len(sig), sig[-40:]))
    heur = {}
    for h in events(recs, "heuristics"):
        mode = {"CUDNN_HEUR_MODE_A": "a", "CUDNN_HEUR_MODE_FALLBACK": "fallback"}.get(h["mode"])
        name = names.get(h["graph"])
        heur[h["id"]] = (name, mode)
        want = [read[(name, mode, r)][0] for r in range(h["returned"]) if (name, mode, r) in read]
        if h["engines"][:len(want)] != want[:16]:
            problems.append("heuristics %s (%s, mode %s): engines %r, the program read %r" %
                            (h["id"], name, mode, h["engines"], want))
        if h["signature"] is None or "?" in h["signature"]:
            problems.append("heuristics %s: signature %r" % (h["id"], h["signature"]))
    # Plans: a plan record for each one finalized, a failure record for each that failed.
    plans = [("plan record", r) for r in events(recs, "plan")]
    plans += [("failed finalize", f["args"]["descriptor"]) for f in events(recs, "failure", "cudnnBackendFinalize")
              if f["args"]["descriptor"].get("type") == "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR"]
    check(len(plans) == len(read), "one plan or failure record per plan the program finalized (%d)" % len(read),
          repr(plans))
    for what, r in plans:
        h = r.get("heuristics")
        key = heur.get(h["id"], (None, None)) + (h["rank"],) if h else None
        if key not in read:
            problems.append("%s %s: no heuristics rank that the program planned: %r" % (what, r["id"], h))
            continue
        engine, knobs, _ = read[key]
        where = "%s %s (graph %s, mode %s, rank %d)" % ((what, r["id"]) + key)
        if r.get("engine") != engine:
            problems.append("%s: engine %r, the program read engine %d" % (where, r.get("engine"), engine))
        got = None if r.get("knobs") is None else [k["value"] for k in r["knobs"]]
        if got != knobs:
            problems.append("%s: knobs %r, the program read the knob values %r from its config" %
                            (where, r.get("knobs"), knobs))
        if r.get("signature") is None or "?" in r["signature"]:
            problems.append("%s: signature %r" % (where, r.get("signature")))
    statuses = [v[2] for v in read.values()]
    check(len(events(recs, "plan")) == statuses.count(0), "a plan record for each plan finalized", repr(statuses))
    check(not problems, "%d wrong plan or signature fields:\n" % len(problems) + "\n".join(problems))



# Fields that differ between two runs of one program, whatever the format: times, ids of the process and
# its threads, addresses.
RUN_FIELDS = {"t_ns", "dur_ns", "tid", "pid", "ppid", "start_unix_ns", "start_mono_ns", "host_ns", "gpu_ns",
              "total_ns", "first_ns", "steady_ns", "min_ns", "max_ns", "p50_ns", "p99_ns", "argv"}


def run_neutral(v):
    if isinstance(v, dict):
        return {k: run_neutral(x) for k, x in v.items() if k not in RUN_FIELDS}
    if isinstance(v, list):
        return [run_neutral(x) for x in v]
    if isinstance(v, str) and re.match(r"^0x[0-9a-f]+$", v):
        return "0x"
    return v


def both_formats(argv, env):
    """Runs argv writing format 1 and then format 2; returns ((records, bytes) of each) from the files."""
    out = []
    for fmt in ("json", "binary"):
        with tempfile.TemporaryDirectory() as d:
            p = run(argv, dict(env, CUDNNSPY_OUTPUT=d, CUDNNSPY_FORMAT=fmt, CUDNNSPY_TRACE="*"))
            names = os.listdir(d)
            check(len(names) == 1 and names[0].endswith(".cudnnspy.jsonl" if fmt == "json" else ".cudnnspy.rec"),
                  "%s: one file, named for its format" % fmt, repr(names))
            path = os.path.join(d, names[0])
            with open(path, "rb") as f:
                data = f.read()
            recs = records_in(d)[names[0]]
            out.append((recs, data, p))
    return out


def same_records(label, argv, env, ordered=True):
    (jrecs, jdata, jp), (brecs, bdata, bp) = both_formats(argv, env)
    check(jp.stdout == bp.stdout, "%s: the program's output is the same in both formats" % label, jp.stdout,
          bp.stdout)
    j = [json.dumps(run_neutral(r), sort_keys=True) for r in jrecs]
    b = [json.dumps(run_neutral(r), sort_keys=True) for r in brecs]
    if not ordered:
        # Threads interleave differently from run to run, and number their descriptors in the order they
        # create them; each record is still the same.
        j = sorted(re.sub(r"#\d+", "#", x) for x in j)
        b = sorted(re.sub(r"#\d+", "#", x) for x in b)
    bad = [(x, y) for x, y in zip(j, b) if x != y]
    check(len(j) == len(b) and not bad, "%s: %d format 1 records, %d read back from format 2, %d differ" %
          (label, len(j), len(b), len(bad)), *["%s\n    %s" % xy for xy in bad[:5]])
    fr = schema.frames(bdata)
    calls = sum(1 for t, _, _ in fr if t == schema.TAG_CALL)
    check(fr[0][0] == schema.TAG_FILE and fr[0][1][:8] == b"cudnnspy", "%s: format 2 begins with its file frame" %
          label)
    return jrecs, jdata, bdata, calls


def cudnnspy_run(args, env):
    """cudnnspy run ARGS in a clean environment plus env."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("CUDNNSPY_") and k not in
            ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    full.update(env)
    return subprocess.run([E["CUDNNSPY_EXE"], "run"] + args, env=full, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)


def after_lines(stderr):
    """What cudnnspy run said after the program, from its records: the block from its first line on."""
    lines = stderr.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith("cudnnspy: after the program, from the records of")]
    return lines[at[0]:] if at else []


@scenario
def run_after():
    """cudnnspy run, after the program, reads the records its processes wrote (their paths from the run's
    markers) and says the job in a few lines: each process, copies that differ between processes, the job's
    failures once with a stack named offline, and the processes that ended without a summary. One process
    that said its own summary gets nothing more. Checked against cudnnspy report --json over the same files."""
    fails = {"FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000"}
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "recs")
        # Two processes, each with the copy its LD_LIBRARY_PATH finds: the fake 9.19 and the bundled fake 9.3.
        script = 'LD_LIBRARY_PATH="$1" "$3" >/dev/null; LD_LIBRARY_PATH="$2" "$3" >/dev/null'
        p = cudnnspy_run(["--output", out, "--", "sh", "-c", script, "sh", FAKE9, BUNDLED9, prog("failures")],
                         fails)
        got = after_lines(p.stderr)
        check(p.returncode == 0 and got, "two processes: the job said after the program", p.stderr)
        model = json.loads(subprocess.run([E["CUDNNSPY_EXE"], "report", "--json", out], stdout=subprocess.PIPE,
                                          universal_newlines=True, timeout=60).stdout)
        pids = sorted(str(x["pid"]) for x in model["processes"])
        text = "\n".join(got)
        check(got[0] == "cudnnspy: after the program, from the records of 2 processes:" and
              all(("pid %s (failures): cuDNN" % x) in text for x in pids),
              "each process, by the pid the records give", text, repr(pids))
        check("DIFFERENT cuDNN builds across processes" in text and "cuDNN 9.19.0 (91900)" in text and
              "cuDNN 9.3.0 (90300)" in text, "the two copies, said different", text)
        total = model["failures"]["total"]
        check(total == 2 and ("failures: %d in 1 group" % total) in text and
              "2x cudnnSetTensor4dDescriptor: CUDNN_STATUS_BAD_PARAM (2000)" in text,
              "the job's failures once, as the report counts them", text)
        check(re.search(r"^cudnnspy:       at main \(failures\+0x[0-9a-f]+\) < ", text, re.M),
              "the failure's stack, named offline", text)
        check(got[-1] == "cudnnspy:   the whole report: cudnnspy report %s" % out and
              "cudnnspy: records of 2 processes in" not in p.stderr, "where the whole report is, said once", text)

        # One process that ended normally said it all itself: nothing after it.
        one = os.path.join(d, "one")
        p = cudnnspy_run(["--output", one, "--", prog("failures")], dict(fails, LD_LIBRARY_PATH=FAKE9))
        check(p.returncode == 0 and not after_lines(p.stderr) and "cudnnspy: summary (pid" in p.stderr,
              "one process with its summary: nothing after the program", p.stderr)
        # One that ended in _exit() said no summary: what its records and counters hold is said for it (format 2
        # keeps the counters in the file, issue 28; format 1, records only).
        ended = os.path.join(d, "ended")
        p = cudnnspy_run(["--output", ended, "--", prog("endings"), "_exit"],
                         {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"})
        got = after_lines(p.stderr)
        # The file's format is run's (format 2 unless the environment says otherwise): records and counters.
        note = ", ended without exit (its summary from the counters it left)"
        check(p.returncode == 0 and "cudnnspy: summary (pid" not in p.stderr and got and
              "(1 ended without exit: killed, _exit, or replaced by exec)" in got[0] and
              any(l.endswith(note) for l in got) and
              any("1x cudnnCreate: CUDNN_STATUS_NOT_INITIALIZED (1001)" in l for l in got),
              "_exit: the process, its failure, and that it ended without exit", p.stderr)
        # --stderr without the summary: not a word of it.
        quiet = os.path.join(d, "quiet")
        p = cudnnspy_run(["--output", quiet, "--stderr", "failures", "--", prog("endings"), "_exit"],
                         {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"})
        check(p.returncode == 0 and not after_lines(p.stderr), "--stderr failures: no summary after the program",
              p.stderr)
        # A marker (the program can write in the run's directory) naming a FIFO and a device: not read, no hang.
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        script = ('printf %s "$1" > "$CUDNNSPY_RUN_DIR/999999.records"; printf /dev/zero > '
                  '"$CUDNNSPY_RUN_DIR/999998.records"; "$2" >/dev/null; "$2" >/dev/null')
        hostile = os.path.join(d, "hostile")
        p = cudnnspy_run(["--output", hostile, "--", "sh", "-c", script, "sh", fifo, prog("failures")],
                         dict(fails, LD_LIBRARY_PATH=FAKE9))
        got = after_lines(p.stderr)
        check(p.returncode == 0 and got and got[0].endswith("from the records of 2 processes:") and
              got[-1].endswith("cudnnspy report %s" % hostile),
              "markers naming a FIFO and /dev/zero: skipped, the two processes said", p.stderr)
        # Records that are not this run's, in the same directory, are not this run's job.
        p = cudnnspy_run(["--output", out, "--", prog("endings"), "_exit"],
                         {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"})
        got = after_lines(p.stderr)
        check(got and got[0].startswith("cudnnspy: after the program, from the records of 1 process "),
              "an earlier run's files beside them: only this run's process", p.stderr)


@scenario
def binary_records():
    """CUDNNSPY_FORMAT=binary (record format 2): read back through cudnnspy dump, the records are those that
    format 1 writes for the same program, field for field; traced calls are packed frames, a fraction of the
    bytes. Each program runs once in each format, every call traced."""
    recs, _, _, calls = same_records("decode-all", [prog("decode-all")], {"LD_PRELOAD": PRELOAD,
                                                                         "LD_LIBRARY_PATH": FAKE9})
    traced = len(events({"": recs}, "call"))
    # Its Set calls without arrays; Create (an out-value), arrays and scaling factors stay JSON for now.
    check(calls >= 11, "decode-all: %d of its %d traced calls packed" % (calls, traced))
    recs, jdata, bdata, calls = same_records("threads", [prog("threads"), "2000"],
                                             {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9}, ordered=False)
    check(calls >= 16000, "threads: each of the 16,000 calls of cudnnSetTensor4dDescriptor packed (%d)" % calls)
    per_call = len(bdata) / 16000.0
    check(per_call <= 64, "threads: %.1f bytes a traced cudnnSetTensor4dDescriptor (format 1: %.0f)" %
          (per_call, len(jdata) / 16000.0))
    # Failures with cuDNN's message, the spy's why, the recent calls and the stack, and an injected status: packed,
    # every one, in failure frames.
    recs, _, bdata, _ = same_records("failures", [prog("failures")], {
        "LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_INJECT": "cudnnSetConvolution2dDescriptor=3",
        "FAKECUDNN_STATUS": "cudnnCreate=1001,cudnnSetTensor4dDescriptor=2000,cudnnSetFilter4dDescriptor=2000"})
    fails = events({"": recs}, "failure")
    packed = sum(1 for t, _, _ in schema.frames(bdata) if t == schema.TAG_FAILURE)
    check(len(fails) == 4 and packed == 4 and fails[0].get("why") and fails[-1].get("injected") and
          all(f["message"] and f["stack"] for f in fails) and all(f["recent"] for f in fails[1:]),
          "failures: each of the %d failures packed (%d), with its message, stack and recent calls, a why and an "
          "injected one among them" % (len(fails), packed), repr(fails[:2]))
    # Failed calls of other shapes: input arrays (read through a copy that cannot fault), descriptors with all that
    # was set on them, scaling factors. (cudnnCreate's out-value, not read after a failure, is in the case above; a
    # failed Create here would leave the program using an uninitialized descriptor, whose garbage differs by run.)
    failing = ["cudnnSetTensorNdDescriptor", "cudnnSetFilterNdDescriptor", "cudnnSetConvolutionNdDescriptor",
               "cudnnConvolutionForward", "cudnnPoolingForward", "cudnnOpTensor"]
    recs, _, bdata, _ = same_records("decode-all, failing", [prog("decode-all")], {
        "LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9,
        "FAKECUDNN_STATUS": ",".join("%s=2000" % f for f in failing)})
    fails = events({"": recs}, "failure")
    packed = sum(1 for t, _, _ in schema.frames(bdata) if t == schema.TAG_FAILURE)
    check(sorted(set(f["fn"]for f in fails)) == sorted(failing) and packed == len(fails),
          "decode-all: its failures packed (%d of %d)" % (packed, len(fails)), repr([f["fn"] for f in fails]))
    nd = only([f for f in fails if f["fn"] == "cudnnSetTensorNdDescriptor"], "the failed SetTensorNd")
    check(isinstance(nd["args"]["dimA"], dict) and nd["args"]["dimA"].get("values"),
          "a failed call's input array shown with its values", repr(nd["args"]))
    # GPU times (CUDNNSPY_GPU_TIME, the fake CUDA runtime): packed, each one, in the buffer of the thread that read
    # it, with the calling thread's id.
    recs, _, bdata, _ = same_records("gpu times", [prog("gpu-calls"), "5", cudart()], gpu_env(
        {"CUDNNSPY_GPU_TIME": "1", "FAKECUDA_NOT_READY": "2"}))
    gpus = events({"": recs}, "gpu")
    packed = sum(1 for t, _, _ in schema.frames(bdata) if t == schema.TAG_GPU)
    check(len(gpus) >= 5 and packed == len(gpus), "gpu times: each of the %d packed (%d)" % (len(gpus), packed))
    # Two copies, each with its own numbering of enums and its own copy id.
    same_records("two copies", [prog("load-copies"), os.path.join(FAKE9, "libcudnn.so.9"),
                                os.path.join(FAKE8, "libcudnn.so.8")], {"LD_PRELOAD": PRELOAD})
    # The graph API: every successful traced call packed; a SetAttribute's descriptor text written once and then
    # changed attribute by attribute, a plan's kept while nothing it runs changes, and a text that names other
    # descriptors written again once one of those may have been destroyed (cudnn-frontend destroys the configs a
    # heuristics query returned and creates others at their addresses): a graph, an attention graph, and
    # cudnn-frontend's way with its plan cache.
    # cudnn-frontend finalizing plans until one works: its NOT_SUPPORTED probing is packed too.
    unsupported = ",".join(str(e) for e in [12, 0, 7] + list(range(103, 121)))
    for label, argv, more in (("conv-graph", [prog("conv-graph")], {}),
                              ("attention-graph", [prog("attention-graph")], {}),
                              ("graph-frontend", [prog("graph-frontend"), "40"], {}),
                              ("graph-frontend, probing", [prog("graph-frontend"), "40"],
                               {"FAKECUDNN_HEUR_COUNT": "30", "FAKECUDNN_UNSUPPORTED_ENGINES": unsupported})):
        recs, jdata, bdata, calls = same_records(label, argv, dict(more, LD_PRELOAD=PRELOAD, LD_LIBRARY_PATH=FAKE9))
        fails = events({"": recs}, "failure")
        probes = [r for r in fails if r.get("probing")]
        packed = sum(1 for t, _, _ in schema.frames(bdata) if t == schema.TAG_FAILURE)
        check(packed == len(fails) and (not more or len(probes) == 43),
              "%s: %d failures (%d probing), %d packed" % (label, len(fails), len(probes), packed))
        backend = [r for r in events({"": recs}, "call") if r["fn"].startswith("cudnnBackend")]
        left = [f for t, f, _ in schema.frames(bdata) if t == "json" and b'"fn":"cudnnBackend' in f and
                b'"event":"call"' in f]
        check(backend and not left, "%s: each of the %d traced backend calls packed (%d left JSON)"
              % (label, len(backend), len(left)), *[f[:300] for f in left[:3]])
        # Blocks' unused ends (a thread's last block; holes on disk after a clean exit) are no records' bytes.
        packed_bytes = len(bdata) - schema.unused_bytes(bdata)
        check(packed_bytes * 2 < len(jdata), "%s: %d bytes of records in format 2 (%d in the file), %d in format 1"
              % (label, packed_bytes, len(bdata), len(jdata)))


@scenario
def binary_stacks():
    """Traced calls with their stacks (CUDNNSPY_BACKTRACE) in format 2 are packed: the return addresses as
    module texts and offsets, named by the command from each module's symbol table (offline). Read back, each
    stack is format 1's, frame for frame (module, offset, symbol): a static function of the program, a library
    opened late, and the program started by a relative path (its frames read through the file it was)."""
    lib = os.path.join(os.path.dirname(prog("stack-names")), "libstacklate.so")
    for label, argv, cwd in (("by its path", [prog("stack-names"), lib], None),
                             ("by a relative path", ["./stack-names", lib], os.path.dirname(prog("stack-names")))):
        got = []
        for fmt in ("json", "binary"):
            with tempfile.TemporaryDirectory() as d:
                env = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d, "CUDNNSPY_FORMAT": fmt,
                       "CUDNNSPY_TRACE": "*", "CUDNNSPY_BACKTRACE": "*"}
                p = run(argv, env, preexec=(lambda c=cwd: os.chdir(c)) if cwd else None)
                check("library status 0" in p.stdout, "%s: the program ran" % label, p.stdout, p.stderr)
                names = os.listdir(d)
                with open(os.path.join(d, names[0]), "rb") as f:
                    data = f.read()
                got.append(([r for r in records_in(d)[names[0]] if r["event"] == "call"], data))
        (jcalls, _), (bcalls, bdata) = got
        check(len(jcalls) == len(bcalls) >= 4, "%s: the same traced calls (%d, %d)" % (label, len(jcalls), len(bcalls)))
        for j, b in zip(jcalls, bcalls):
            check(j["fn"] == b["fn"] and j.get("stack") and j["stack"] == b.get("stack"),
                  "%s: %s: format 2's stack is format 1's" % (label, j["fn"]), repr(j.get("stack")), repr(b.get("stack")))
        sets = [r["stack"] for r in bcalls if r["fn"] == "cudnnSetTensor4dDescriptor"]
        check(len(sets) == 2 and [f["symbol"] for f in sets[0][:2]] == ["layer_forward", "main"] and
              [f["symbol"] for f in sets[1][:3]] == ["lib_layer", "stack_lib_call", "main"] and
              sets[1][0]["module"] == lib, "%s: the static function and the late library named" % label, repr(sets))
        packed = sum(1 for t, _, _ in schema.frames(bdata) if t == schema.TAG_CALL)
        check(packed == len(bcalls), "%s: each traced call packed with its stack (%d of %d)" % (label, packed,
                                                                                             len(bcalls)))
    # The library rebuilt after the run (another file, another build-id, at its path): its frames get no name
    # rather than names from the new build; the rest of the stack keeps its names.
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "libstacklate.so")
        shutil.copy(lib, copy)
        out = os.path.join(d, "out")
        os.mkdir(out)
        run([prog("stack-names"), copy], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": out,
                                          "CUDNNSPY_FORMAT": "binary", "CUDNNSPY_TRACE": "*", "CUDNNSPY_BACKTRACE": "*"})
        shutil.copy(os.path.join(os.path.dirname(prog("stack-names")), "libprobe1.so"), copy)
        calls = [r for r in records_in(out)[os.listdir(out)[0]] if r["event"] == "call"]
        late = [r["stack"] for r in calls if r["fn"] == "cudnnSetTensor4dDescriptor"][1]
        check([f["symbol"] for f in late if f["module"] == copy] == [None, None] and
              [f["symbol"] for f in late if f["module"] != copy][:1] == ["main"],
              "another build at the library's path: its frames unnamed, the program's named", repr(late))


@scenario
def binary_records_real():
    """The same against the real cuDNN 9.19: its host-side calls (every legacy descriptor kind, odd values,
    folded convolutions, a graph up to its plans, and every function of the API description called once),
    each record of format 2 read back as format 1 writes it."""
    need_real()
    env = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": REAL}
    for name in ("host-sweep", "conv-legacy", "decode-odd", "folded-conv", "conv-graph", "call-every"):
        same_records(name, [prog(name)], env)
    # A descriptor's text names another, which is destroyed and whose address cuDNN hands out again: format 2
    # writes the first one's text again, with the new number format 1 shows (it kept the old one).
    same_records("reused-address", [prog("reused-address")], env)
    p = run([prog("reused-address")], env)
    # AddressSanitizer keeps freed memory in quarantine: there the records are compared all the same, without the
    # reused address that this case is about.
    check("address reused: yes" in p.stdout or sanitizer.RUNTIME, "cuDNN 9.19 gave the address back (else this "
          "checks nothing)", p.stdout)


@scenario
def binary_cut_and_damaged():
    """cudnnspy dump tells a file an ending cut short (exit 0, the last record named, every whole one printed)
    from a damaged one (exit 1, the place named, reading goes on at the next chunk or JSON line)."""
    with tempfile.TemporaryDirectory() as d:
        run([prog("threads"), "300"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                       "CUDNNSPY_FORMAT": "binary", "CUDNNSPY_TRACE": "*"})
        path = os.path.join(d, os.listdir(d)[0])
        with open(path, "rb") as f:
            data = f.read()
        exe = E["CUDNNSPY_EXE"]
        whole = subprocess.run([exe, "dump", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(whole.returncode == 0 and not whole.stderr, "a whole file dumps cleanly", whole.stderr)
        lines = whole.stdout.splitlines()
        # Frame offsets, from the format's description.
        calls = [at for tag, _, at in schema.frames(data) if tag == schema.TAG_CALL]
        check(len(calls) > 100, "packed calls to cut into (%d)" % len(calls))
        # Cut inside a packed call: an ending, not damage.
        at = calls[len(calls) // 2] + 2
        cut = os.path.join(d, "cut.cudnnspy.rec")
        with open(cut, "wb") as f:
            f.write(data[:at])
        p = subprocess.run([exe, "dump", cut], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 0 and b"cut short" in p.stderr and b"damaged" not in p.stderr,
              "cut inside a frame: exit 0, said to be cut short", p.returncode, p.stderr)
        got = p.stdout.splitlines()
        check(got == lines[:len(got)] and len(got) > 100, "every whole record before the cut (%d)" % len(got))
        # A tag byte overwritten in the middle: damage, and the records after it are read again.
        bad = bytearray(data)
        at = calls[len(calls) // 3]
        bad[at] = 0x7F
        dmg = os.path.join(d, "damaged.cudnnspy.rec")
        with open(dmg, "wb") as f:
            f.write(bytes(bad))
        p = subprocess.run([exe, "dump", dmg], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 1 and b"damaged" in p.stderr and (b"at byte %d" % at) in p.stderr,
              "damage: exit 1, its place named", p.returncode, p.stderr)
        got = p.stdout.splitlines()
        made_up = [g for g in got if g not in lines and b'"text_missing"' not in g]
        check(not made_up, "nothing made up: every record printed is one of the file's, or one whose argument "
              "text was in the damaged part and says so", *[m.decode() for m in made_up[:3]])
        check(len(got) >= len(lines) - 2 * 300 and got[-1] == lines[-1],
              "reading went on after the damage, to the summary (%d of %d records)" % (len(got), len(lines)))
        # Not a record file at all, and one of another function table.
        junk = os.path.join(d, "junk.cudnnspy.rec")
        with open(junk, "wb") as f:
            f.write(data[:2] + b"cudnnspy" + data[10:12] + b"\xff\xff\xff\xff" + data[16:])
        p = subprocess.run([exe, "dump", junk], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 1 and b"another function table" in p.stderr, "another table: said, exit 1",
              p.returncode, p.stderr)
        check(b'"event":"call","fn":"cudnnSetTensor4dDescriptor"' not in p.stdout and b'"event":"summary"' in p.stdout,
              "its packed calls are not guessed at; its JSON records still print")
        # The same function names packed by another layout (a parameter's kind changed in another API
        # description): the layout hash of version 5 tells, and the calls are not parsed by this one's.
        check(data[0] == schema.TAG_FILE and data[1] == 22 and data[10] == 7, "a version 7 file frame of 22 bytes",
              repr(data[:24]))
        layout = os.path.join(d, "layout.cudnnspy.rec")
        with open(layout, "wb") as f:
            f.write(data[:20] + bytes([data[20] ^ 1]) + data[21:])
        p = subprocess.run([exe, "dump", layout], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 1 and b"another function table" in p.stderr and
              b'"event":"call","fn":"cudnnSetTensor4dDescriptor"' not in p.stdout, "another layout: said, exit 1, "
              "no packed call shown", p.returncode, p.stderr)
        # Version 4's file frame had no layout hash: still read, by the names alone.
        v4 = os.path.join(d, "v4.cudnnspy.rec")
        with open(v4, "wb") as f:
            f.write(bytes([schema.TAG_FILE, 18]) + data[2:10] + bytes([4, 0]) + data[12:20] + data[24:])
        p = subprocess.run([exe, "dump", v4], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 0 and p.stdout.splitlines() == lines, "a version 4 file: read as before",
              p.returncode, p.stderr)
        p = subprocess.run([exe, "dump", os.path.join(d, "missing.rec")], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        check(p.returncode == 1 and b"No such file" in p.stderr, "a missing file: said, exit 1", p.stderr)
        p = subprocess.run([exe, "dump", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 1 and p.stdout.count(b'"event":"header"') == 6, "a directory: each file in it",
              p.returncode, p.stderr)



@scenario
def binary_report():
    """cudnnspy report and repro read format 2 files directly: the same report, in text and JSON, as for the
    format 1 file of the same run (times, pids and file names aside); and for a process that ended with _exit,
    the same calls and failures per function, which format 1 has from its records and format 2 from the counters
    the process left (issue 28: a summary with `exited` false, which format 1 cannot hold)."""
    exe = E["CUDNNSPY_EXE"]

    def reports(d):
        text = subprocess.run([exe, "report", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        js = subprocess.run([exe, "report", "--json", "--full", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
        check(text.returncode == 0 and js.returncode == 0, "report reads it", text.stderr, js.stderr)
        neutral = re.sub(r"\b\d+(\.\d+)? ?(ns|us|ms|s)\b", "T", text.stdout)
        neutral = re.sub(r"pid \d+|tid \d+|0x[0-9a-f]+|\S+\.cudnnspy\.(jsonl|rec)|\d+ lines", "X", neutral)
        # Functions ordered by their time, which differs from run to run: the lines, not their order.
        neutral = "\n".join(sorted(" ".join(l.split()) for l in neutral.splitlines()))
        return neutral, run_neutral(json.loads(js.stdout))

    for argv, env, kill in (([prog("failures")], {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"},
                             False),
                            ([prog("endings"), "_exit"], {"LD_LIBRARY_PATH": FAKE9,
                                                          "FAKECUDNN_STATUS": "cudnnCreate=1001"}, True)):
        got = []
        for fmt in ("json", "binary"):
            with tempfile.TemporaryDirectory() as d:
                run(argv, dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_OUTPUT=d, CUDNNSPY_FORMAT=fmt,
                               CUDNNSPY_TRACE="*"), complete=not kill)
                got.append(reports(d))
                if fmt == "binary" and not kill:
                    p = subprocess.run([exe, "repro", "--list", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       universal_newlines=True)
                    check(p.returncode == 0 and "cudnn" in p.stdout, "repro lists the calls of format 2",
                          p.stdout, p.stderr)
        if kill:
            one, two = got[0][1], got[1][1]
            counts = lambda j: sorted((f["fn"], f["calls"], f.get("failures")) for f in j["functions"] if f["calls"])
            check(counts(one) == counts(two), "_exit: the same calls and failures per function", counts(one),
                  counts(two))
            p1, p2 = one["processes"][0], two["processes"][0]
            check(not p1["summary"] and p2["summary"] and not p2["exited"] and
                  (p1["calls"], p1["failures"]) == (p2["calls"], p2["failures"]),
                  "_exit: format 2's summary from the counters, the same totals", repr(p1), repr(p2))
            continue
        check(got[0][0] == got[1][0], "%s: the same text report" % argv[-1], got[0][0], got[1][0])
        def unordered(v):
            # Lists ordered by time (top functions) may differ in order between runs, not in what they hold.
            if isinstance(v, dict):
                return {k: unordered(x) for k, x in v.items()}
            if isinstance(v, list):
                return sorted((unordered(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
            return v
        j0, j1 = (re.sub(r"pid \d+|0x[0-9a-f]+|/tmp/\S+\.cudnnspy\.(jsonl|rec)", "X",
                         json.dumps(unordered(g[1]), sort_keys=True, indent=1)) for g in got)
        check(j0 == j1, "%s: the same JSON report" % argv[-1],
              "\n".join(l for l in difflib.unified_diff(j0.splitlines(), j1.splitlines(), lineterm=""))[:3000])



def whole_dump(exe, path):
    return subprocess.run([exe, "dump", path], stdout=subprocess.PIPE).stdout


@scenario
def binary_from_pipe():
    """dump and report read format 2 from a pipe (cudnnspy dump /dev/stdin < FILE, a FIFO) as from the file itself:
    the same lines, the same report; a pipe cannot go back, so the first bytes read to tell the format are kept."""
    exe = E["CUDNNSPY_EXE"]
    with tempfile.TemporaryDirectory() as d:
        run([prog("threads"), "3"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                     "CUDNNSPY_FORMAT": "binary", "CUDNNSPY_TRACE": "*"})
        names = os.listdir(d)
        check(len(names) == 1 and names[0].endswith(".cudnnspy.rec"), "one format 2 file", repr(names))
        path = os.path.join(d, names[0])
        for cmd in (["dump"], ["report"], ["report", "--json", "--full"]):
            whole = subprocess.run([exe] + cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            with open(path, "rb") as f:
                data = f.read()
            piped = subprocess.run([exe] + cmd + ["/dev/stdin"], input=data, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
            check(whole.returncode == 0 and whole.stdout, "%s reads the file" % cmd[0], whole.stderr)
            same = piped.stdout.replace(b"/dev/stdin", path.encode()).replace(b'"stdin"', b'"%s"' % names[0].encode())
            check(piped.returncode == 0 and not piped.stderr, "%s reads the pipe" % " ".join(cmd), piped.stderr)
            check(same == whole.stdout, "%s: the same from a pipe" % " ".join(cmd),
                  "\n".join(difflib.unified_diff(whole.stdout.decode().splitlines(), same.decode().splitlines(),
                                                  lineterm=""))[:3000])
        dash = subprocess.run([exe, "dump", "-"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(dash.returncode == 0 and dash.stdout == whole_dump(exe, path), "dump - reads standard input", dash.stderr)
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        with subprocess.Popen(["sh", "-c", 'cat "$0" > "$1"', path, fifo]) as writer:
            got = subprocess.run([exe, "dump", fifo], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(got.returncode == 0 and got.stdout == subprocess.run([exe, "dump", path], stdout=subprocess.PIPE).stdout,
              "dump reads a FIFO", got.stderr)


@scenario
def record_times():
    """The times in the records are CLOCK_MONOTONIC's, in both formats, also once the spy reads the TSC
    (x86-64 with a trusted TSC: after its rate is measured) and across a re-anchoring: each call's t_ns and
    t_ns + dur_ns lie between the program's own clock readings around it, within a microsecond."""
    for fmt in ("json", "binary"):
        with tempfile.TemporaryDirectory() as d:
            p = run([prog("clock-check"), "1000"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9,
                                                   "CUDNNSPY_OUTPUT": d, "CUDNNSPY_FORMAT": fmt,
                                                   "CUDNNSPY_TRACE": "cudnnGetVersion"})
            pairs = [tuple(int(x) for x in l.split()) for l in p.stdout.splitlines()[1:]]
            check(len(pairs) == 1000, "%s: the program's readings" % fmt, p.stdout[-500:])
            calls = events(records_in(d), "call", "cudnnGetVersion")[-1000:]
            head = [r for recs in records_in(d).values() for r in recs if r["event"] == "header"][0]
            bad = []
            for (before, after), r in zip(pairs, calls):
                if not (before - 1000 <= r["t_ns"] and r["t_ns"] + r["dur_ns"] <= after + 1000):
                    bad.append("%d..%d: t_ns %d dur_ns %d" % (before, after, r["t_ns"], r["dur_ns"]))
            check(not bad, "%s: %d of 1000 calls outside the program's own readings" % (fmt, len(bad)), *bad[:5])
            check(head["start_mono_ns"] <= calls[0]["t_ns"], "%s: after the header's start" % fmt)


if __name__ == "__main__":
    sys.exit(main())
