#!/usr/bin/env python3
"""Failures name the Python line behind them (issue 29): each record and stderr line of a failed call made from
Python carries the calling thread's innermost Python frames, as Python itself names them.

usage: python_frames.py NAME     (meson passes the paths in the environment)

The program is tests/python/failing.py with the real cuDNN 9.19: before each call it prints the frames Python
says the call is made from (`expect`), so the oracle is the interpreter, not the spy. Every run is made twice,
without and with the spy: stdout and the exit status must be the same. NAME is a case of failing.py run with
Debian's python3 (/usr/bin/python3, an interpreter linked statically that exports its symbols), or `versions`:
every case with every other CPython 3.8 to 3.13 installed (pyenv's, with a shared libpython), or one of the
cases about settings and programs without Python.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import spytest
from spytest import E, PRELOAD, REAL, check, events, need_real, run

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)
HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "..", "python", "failing.py")
EXTENSION = os.path.join(HERE, "..", "python", "spyext.c")
FN = "cudnnSetTensor4dDescriptor"
CASES = ["cdll", "pydll", "ext", "ext-nogil", "worker", "cthread", "finalized", "c-exit", "daemon-finalized", "atexit",
         "fork", "unicode", "deep",
         "generator",
         "conv"]
NEEDS_EXTENSION = ("ext", "ext-nogil", "cthread", "finalized", "c-exit", "daemon-finalized")


def debian_python():
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def version_of(python):
    p = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    return p.stdout.strip() if p.returncode == 0 else None


def other_interpreters():
    """Every CPython 3.8 to 3.13 found besides Debian's: on PATH as python3.N, and pyenv's versions."""
    found, seen = [], {os.path.realpath(debian_python())}
    roots = [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")]
    for minor in range(8, 14):
        cands = [shutil.which("python3.%d" % minor) or ""]
        for root in roots:
            cands += sorted(glob.glob(os.path.join(root, "versions", "3.%d.*" % minor, "bin", "python3.%d" % minor)))
        for c in cands:
            if c and os.path.exists(c) and os.path.realpath(c) not in seen and version_of(c) == "3.%d" % minor:
                seen.add(os.path.realpath(c))
                found.append(c)
    return found


def build_extension(python, directory):
    """spyext, built against the interpreter's own headers; False when they are not installed."""
    code = "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))"
    p = subprocess.run([python, "-c", code], stdout=subprocess.PIPE, universal_newlines=True, check=True)
    include, suffix = p.stdout.split()
    if not os.path.exists(os.path.join(include, "Python.h")):
        return False
    out = os.path.join(directory, "spyext" + suffix)
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-I" + include, EXTENSION, "-o", out,
                    "-lpthread"], check=True)
    return True


def expected(stdout):
    return [json.loads(l[len("expect "):]) for l in stdout.splitlines() if l.startswith("expect ")]


def in_order(records, event, fn=None):
    return sorted(events(records, event, fn), key=lambda r: r["t_ns"])


def text_of(frames):
    return " < ".join("%s (%s:%d)" % (f["function"], f["file"], f["line"]) for f in frames)


def run_case(python, case, extdir, extra=None):
    """The case without and with the spy: (the spied run, the frames Python expected for each call)."""
    argv = [python, PROGRAM, case, os.path.join(REAL, "libcudnn.so.9"), extdir]
    plain = run(argv, {"PYTHONIOENCODING": "utf-8"})
    env = {"LD_PRELOAD": PRELOAD, "PYTHONIOENCODING": "utf-8"}
    env.update(extra or {})
    # The forked child ends with os._exit: format 1, which keeps no counters, writes it no summary.
    spied = run(argv, env, complete=not (case == "fork" and spytest.TEST_FORMAT == "json"))
    check(plain.stdout == spied.stdout and plain.returncode == spied.returncode,
          "%s %s: the same stdout and exit status as without the spy" % (python, case), plain.stdout, spied.stdout,
          spied.stderr)
    return spied, expected(spied.stdout)


def check_failures(python, case, spied, want):
    what = "%s %s" % (python, case)
    got = in_order(spied.records, "failure")
    check(len(got) == len(want), "%s: a failure record per failed call" % what, repr(got), repr(want))
    lines = [l for l in spied.stderr.splitlines() if re.match(r"cudnnspy: cudnn\w+\(.*\) = CUDNN_STATUS_", l)]
    check(len(lines) == len(want), "%s: a failure line per failed call" % what, spied.stderr)
    for rec, frames, line in zip(got, want, lines):
        check(rec.get("python", []) == frames, "%s: the record names the frames Python names" % what,
              json.dumps(rec.get("python")), json.dumps(frames))
        if frames:
            check(" | python " + text_of(frames) in line, "%s: the stderr line names them" % what, line,
                  text_of(frames))
        else:
            check(" | python " not in line, "%s: a thread without Python shows none" % what, line)


def one_case(case, python=None):
    need_real()
    python = python or debian_python()
    extdir = tempfile.mkdtemp(prefix="cudnnspy-pyext-")
    try:
        if case in NEEDS_EXTENSION and not build_extension(python, extdir):
            print("%s has no headers (python3-dev): skipped" % python)
            sys.exit(77)
        spied, want = run_case(python, case, extdir)
        check(want, "%s %s: the program said where its calls were" % (python, case), spied.stdout)
        check_failures(python, case, spied, want)
    finally:
        shutil.rmtree(extdir, ignore_errors=True)


for _case in CASES:
    SCENARIOS["python-" + _case] = (lambda c: lambda: one_case(c))(_case)


@scenario
def python_versions():
    """Every case, with every other CPython 3.8 to 3.13 installed (a shared libpython each, under pyenv)."""
    need_real()
    pythons = other_interpreters()
    if not pythons:
        print("no other CPython 3.8 to 3.13 installed: skipped")
        sys.exit(77)
    for python in pythons:
        extdir = tempfile.mkdtemp(prefix="cudnnspy-pyext-")
        try:
            has_ext = build_extension(python, extdir)
            for case in CASES:
                if case in NEEDS_EXTENSION and not has_ext:
                    continue
                spied, want = run_case(python, case, extdir)
                check_failures(python, case, spied, want)
        finally:
            shutil.rmtree(extdir, ignore_errors=True)
    print("checked with", ", ".join(pythons))


def daemon_exit_runs(python, runs):
    """daemon-exit, RUNS times: each run as without the spy, and every failure names the loop's frames or none
    (a call the spy saw after the interpreter began to finalize); never frames read from a freed thread state."""
    named = 0
    for _ in range(runs):
        spied, want = run_case(python, "daemon-exit", "", {"CUDNNSPY_STDERR": "none"})
        check(len(want) == 1, "%s daemon-exit: the loop said its frames once" % python, spied.stdout)
        failures = events(spied.records, "failure", FN)
        check(failures, "%s daemon-exit: failures recorded" % python, spied.stderr)
        for rec in failures:
            check(rec.get("python", []) in ([], want[0]), "%s daemon-exit: the loop's frames or none" % python,
                  json.dumps(rec.get("python")), json.dumps(want[0]))
            named += rec.get("python", []) == want[0]
    check(named, "%s daemon-exit: some failures name the loop's frames" % python)


@scenario
def python_daemon_exit():
    """Daemon threads failing in a loop while the main thread ends, 10 runs with Debian's python3 and 3 with each
    other CPython installed: the interpreter frees their states as some of them sit in the spy."""
    need_real()
    daemon_exit_runs(debian_python(), 10)
    for python in other_interpreters():
        daemon_exit_runs(python, 3)


@scenario
def python_traced():
    """CUDNNSPY_PYTHON=traced: traced calls name their frames too, written once per distinct stack."""
    need_real()
    python = debian_python()
    spied, want = run_case(python, "traced", "", {"CUDNNSPY_PYTHON": "traced", "CUDNNSPY_TRACE": FN})
    calls = in_order(spied.records, "call", FN)
    check(len(calls) == 3 and [c.get("python") for c in calls] == want[:3],
          "each traced call names the frames Python names", repr(calls), repr(want))
    check_failures(python, "traced", spied, want[3:])


@scenario
def python_traced_default():
    """The default (failures): traced calls carry no frames, failures do."""
    need_real()
    python = debian_python()
    spied, want = run_case(python, "traced", "", {"CUDNNSPY_TRACE": FN})
    calls = in_order(spied.records, "call", FN)
    check(len(calls) == 3 and all("python" not in c for c in calls), "no frames on traced calls", repr(calls))
    check_failures(python, "traced", spied, want[3:])


@scenario
def python_off():
    """CUDNNSPY_PYTHON=off: no record or line names a Python frame."""
    need_real()
    spied, want = run_case(debian_python(), "cdll", "", {"CUDNNSPY_PYTHON": "off"})
    check_failures(debian_python(), "cdll", spied, [[] for _ in want])


@scenario
def python_report_repro():
    """report groups failures by their Python frames and shows them; repro names them in its opening comment."""
    need_real()
    python = debian_python()
    out = tempfile.mkdtemp(prefix="cudnnspy-records-")
    try:
        want = {}
        for case in ("cdll", "worker", "conv"):
            _, frames = run_case(python, case, "", {"CUDNNSPY_OUTPUT": out, "CUDNNSPY_STDERR": "none"})
            want[case] = frames[0]
        exe = E["CUDNNSPY_EXE"]
        p = subprocess.run([exe, "report", "--json", out], stdout=subprocess.PIPE, universal_newlines=True)
        check(p.returncode == 0, "report --json", p.stdout)
        groups = json.loads(p.stdout)["failures"]["groups"]
        got = sorted(g["python"] for g in groups)
        check(got == sorted(text_of(f) for f in want.values()),
              "a failure group per Python stack, named by it", json.dumps(groups, indent=1))
        for g in groups:
            check(g["count"] == 1 and [text_of(g["first"]["python"])] == [g["python"]],
                  "each group's first failure keeps its frames", json.dumps(g, indent=1))
        p = subprocess.run([exe, "report", out], stdout=subprocess.PIPE, universal_newlines=True)
        for frames in want.values():
            check("       python: " + text_of(frames[:6]) in p.stdout, "the text report shows the frames",
                  p.stdout, text_of(frames))
        # Each failure's repro (the convolution's, and the host-side calls', issue 30) names its Python lines.
        src = os.path.join(out, "bug.c")
        listed = subprocess.run([exe, "repro", "--list", out], stdout=subprocess.PIPE,
                                universal_newlines=True).stdout
        named = set()
        for n in re.findall(r"\(--failure (\d+)\)", listed):
            p = subprocess.run([exe, "repro", "--failure", n, "-o", src, out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            check(p.returncode == 0, "repro of failure %s" % n, listed, p.stdout, p.stderr)
            head = open(src).read().split("*/")[0]
            for case, frames in want.items():
                lines = ["%s (%s:%d)" % (f["function"], f["file"], f["line"]) for f in frames]
                if (" * Called from Python: " + lines[0] + "\n" in head and
                        all(" *         %s\n" % l in head for l in lines[1:])):
                    named.add(case)
        check(named == set(want), "repro's opening comment names the Python lines of each failure", listed,
              repr(named))
    finally:
        shutil.rmtree(out, ignore_errors=True)


@scenario
def python_traced_signature():
    """CUDNNSPY_PYTHON=traced: a convolution signature's algo record and report's row name its first call's
    frames; by default they name none."""
    need_real()
    python = debian_python()
    for mode in ("traced", "failures"):
        out = tempfile.mkdtemp(prefix="cudnnspy-records-")
        try:
            _, want = run_case(python, "conv-run", "", {"CUDNNSPY_OUTPUT": out, "CUDNNSPY_PYTHON": mode})
            recs = spytest.records_in(out)
            algo = [r for rs in recs.values() for r in rs if r["event"] == "algo"]
            check(len(algo) == 1 and algo[0]["calls"] == 2, "one algo record of two calls", repr(algo))
            p = subprocess.run([E["CUDNNSPY_EXE"], "report", "--json", out], stdout=subprocess.PIPE,
                               universal_newlines=True)
            sigs = json.loads(p.stdout)["signatures"]
            if mode == "traced":
                check(algo[0].get("python") == want[0], "the signature's first call's frames", json.dumps(algo[0]),
                      json.dumps(want[0]))
                check(len(sigs) == 1 and sigs[0]["python"] == text_of(want[0]), "report's row names them",
                      json.dumps(sigs))
            else:
                check("python" not in algo[0] and sigs[0]["python"] is None, "none by default", json.dumps(algo[0]))
        finally:
            shutil.rmtree(out, ignore_errors=True)


@scenario
def python_c_program():
    """A C program, every call traced with CUDNNSPY_PYTHON=traced: no record names Python."""
    need_real()
    p = run([spytest.prog("host-calls")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD,
                                             "CUDNNSPY_TRACE": "*", "CUDNNSPY_PYTHON": "traced"})
    recs = [r for rs in p.records.values() for r in rs]
    check(any(r["event"] == "failure" for r in recs) and any(r["event"] == "call" for r in recs),
          "the program's calls and failures were recorded", repr(recs)[:2000])
    check(not any("python" in r for r in recs), "no Python frames in a C program", repr(recs)[:2000])
    check(" | python " not in p.stderr, "no Python frames on its lines", p.stderr)


def main():
    return spytest.main_of(SCENARIOS)


if __name__ == "__main__":
    sys.exit(main())
