#!/usr/bin/env python3
"""End-to-end scenarios: real programs run with and without the spy.

usage: scenarios.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import os
import re
import subprocess
import sys
import tempfile

E = os.environ
PRELOAD = E.get("SPY_PRELOAD", "")
DROPIN9 = E.get("SPY_DROPIN9_DIR", "")
DROPIN8 = E.get("SPY_DROPIN8_DIR", "")
FAKE9 = E.get("FAKE9_DIR", "")
FAKE8 = E.get("FAKE8_DIR", "")
REAL = E.get("REAL_CUDNN_DIR", "")
PROGS = E.get("PROGRAMS_DIR", "")
EXAMPLES = E.get("EXAMPLES_DIR", "")
HERE = os.path.dirname(os.path.abspath(__file__))

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


def run(argv, env=None, check_rc=True):
    base = {k: v for k, v in E.items() if not k.startswith("CUDNNSPY_") and k not in ("LD_PRELOAD",)}
    base.pop("LD_LIBRARY_PATH", None)
    base.update(env or {})
    p = subprocess.run(argv, env=base, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    if check_rc:
        check(p.returncode == 0, "%s exited %d" % (argv[0], p.returncode), p.stdout, p.stderr)
    return p


def prog(name):
    if name == "host-calls":
        return os.path.join(EXAMPLES, name)
    return os.path.join(PROGS, name)


def summary_row(stderr, fn):
    """(calls, failed, internal) of one function in the exit summary, or None."""
    m = re.search(r"^cudnnspy:\s+%s\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+$" % re.escape(fn), stderr, re.M)
    return tuple(int(x) for x in m.groups()) if m else None


def summary_total(stderr):
    m = re.search(r"summary \(pid \d+\): (\d+) calls, (\d+) failed, (\d+) internal", stderr)
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
    """The same program with only the drop-in directory first on the library path."""
    need_real()
    plain = run([prog("host-calls")], {"LD_LIBRARY_PATH": REAL})
    spied = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN9})
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


@scenario
def no_cudnn_calls():
    """A program that never calls cuDNN gets nothing from the spy."""
    p = run(["/bin/true"], {"LD_PRELOAD": PRELOAD})
    check(p.stderr == "" and p.stdout == "", "silent", p.stderr)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print("usage: scenarios.py {%s}" % ",".join(sorted(SCENARIOS)))
        return 2
    try:
        SCENARIOS[sys.argv[1]]()
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
