#!/usr/bin/env python3
"""What the integration tests share: the paths meson passes in the environment, running a program with and
without the spy (its records read back and checked against the schema), reading records and the exit summary,
and the registry and main of every scenario file here.

Not a test itself: the files that import it are (NAME.py runs the scenario NAME, main_of: 0 pass, 1 fail,
2 usage; need_real exits 77, skip, when the real cuDNN is absent).
"""
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

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


class Failed(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def need_real():
    if not REAL or not os.path.exists(os.path.join(REAL, "libcudnn.so.9")):
        print("no real cuDNN found (CUDNN_ROOT, CUDA_HOME, /usr/local/cuda): skipped")
        sys.exit(77)


# The spy's settings a repro of the run's failures runs under again: its injections, its copy (drop-in), what it
# traced (the state of a descriptor as the records show it) and whether it synchronized after each call.
KEPT_SETTINGS = ("CUDNNSPY_INJECT", "CUDNNSPY_LIBRARY", "CUDNNSPY_TRACE", "CUDNNSPY_SYNC")


def _keep_dir(src, to):
    """A copy of library directory SRC at TO: links as links to where they lead, a file too big to copy (a real
    cuDNN's) as a link to it."""
    os.makedirs(to)
    for name in os.listdir(src):
        x = os.path.join(src, name)
        if os.path.islink(x) or (os.path.isfile(x) and os.path.getsize(x) > (64 << 20)):
            os.symlink(os.path.realpath(x), os.path.join(to, name))
        elif os.path.isfile(x):
            shutil.copy(x, to)
    return to


def keep_records(directory, argv, env, since):
    """SPYTEST_KEEP_RECORDS=DIR: a copy of each run's record files there, with the libraries, the fake's settings
    and the spy's (KEPT_SETTINGS) it ran with (env.json), for tests/repro/scenario-census.py: repro of every scenario's failures."""
    keep = E.get("SPYTEST_KEEP_RECORDS")
    if not keep or not directory or not os.path.isdir(directory):
        return
    files = [f for f in os.listdir(directory) if f.endswith((".jsonl", ".rec")) and
             os.path.getmtime(os.path.join(directory, f)) >= since]
    if not files:
        return
    os.makedirs(keep, exist_ok=True)
    d = tempfile.mkdtemp(prefix=os.path.basename(argv[0])[:40] + "-", dir=keep)
    for f in files:
        shutil.copy(os.path.join(directory, f), d)
    kept = {k: v for k, v in env.items() if k in ("LD_LIBRARY_PATH", "LD_PRELOAD") or k in KEPT_SETTINGS or
            k.startswith(("FAKECUDNN_", "FAKECUDA_"))}
    # A library directory the scenario made for the run (a driver stub, a copy of cuDNN) is gone when the census
    # replays: kept too, links as links, and a file too big to copy as a link to where it was.
    dirs = []
    for i, x in enumerate(kept.get("LD_LIBRARY_PATH", "").split(":")):
        if x and os.path.isdir(x) and os.path.basename(x).startswith("cudnnspy-") and \
                os.path.dirname(os.path.realpath(x)) == os.path.realpath(tempfile.gettempdir()):
            x = _keep_dir(x, os.path.join(d, "libs-%d" % i))
        dirs.append(x)
    if "LD_LIBRARY_PATH" in kept:
        kept["LD_LIBRARY_PATH"] = ":".join(dirs)
    # A cuDNN the program opened by a path of its own in a temporary directory (a copy of the fake): that
    # directory too, and where it went ("moved"), for the copy a failure's record names.
    moved = {}
    for i, a in enumerate(argv):
        x = os.path.dirname(a) if isinstance(a, str) and os.path.isfile(a) and ".so" in a else ""
        if x and x not in moved and os.path.realpath(x).startswith(os.path.realpath(tempfile.gettempdir()) + "/"):
            moved[x] = _keep_dir(x, os.path.join(d, "argv-%d" % i))
    with open(os.path.join(d, "env.json"), "w") as f:
        json.dump({"argv": list(argv), "env": kept, "moved": moved}, f)


def child_env(extra=None):
    """The environment of a run: the test's own CUDNNSPY_, preload and library path settings only, the format
    the suite runs in unless the test chose one, and in sanitizer builds the runtime first in LD_PRELOAD."""
    env = {k: v for k, v in E.items() if not k.startswith("CUDNNSPY_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    env.update(extra or {})
    if TEST_FORMAT and "CUDNNSPY_FORMAT" not in env:
        env["CUDNNSPY_FORMAT"] = TEST_FORMAT
    return sanitizer.child_env(env)


def run(argv, env=None, check_rc=True, complete=True, preexec=None, signal_ok=False):
    """Runs a program; unless the test chose CUDNNSPY_OUTPUT, its records go to a temporary
    directory and every line of every file is checked against the schema (p.records)."""
    base = child_env(env)
    tmp = None
    if "CUDNNSPY_OUTPUT" not in base:
        tmp = tempfile.mkdtemp(prefix="cudnnspy-records-")
        base["CUDNNSPY_OUTPUT"] = tmp
    started = time.time() - 1
    try:
        p = subprocess.run(argv, env=base, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120, preexec_fn=preexec)
        # Sanitizer builds: any report fails the test, whatever the test checks (known bugs: sanitizer.py).
        check(not sanitizer.unknown_reports(p.stderr), "%s: a sanitizer report" % argv[0], p.stderr)
        p.records = records_in(tmp, complete) if tmp else {}
        keep_records(tmp or base.get("CUDNNSPY_OUTPUT"), argv, base, started)
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


# ---- Helpers the scenarios of more than one file use ----

def only_file(p):
    check(len(p.records) == 1, "one record file per process", repr(list(p.records)), p.stderr)
    return list(p.records.values())[0]


def spied_env(extra=None):
    env = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"}
    env.update(extra or {})
    return env


def findings(p):
    return {f["id"]: f for f in events(p.records, "finding")}


def libraries(p):
    return events(p.records, "library")


def gpu_env(extra=None):
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
    env.update(extra or {})
    return env


def cudart():
    return os.path.join(FAKE_CUDART, "libcudart.so.12")


def only(records, what):
    check(len(records) == 1, "exactly one %s" % what, repr(records))
    return records[0]


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


def same_output(plain, spied, what):
    check(plain.stdout == spied.stdout, "stdout changed %s" % what, plain.stdout, spied.stdout)
    check(plain.returncode == spied.returncode, "exit status changed %s" % what)


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
