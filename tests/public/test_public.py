#!/usr/bin/env python3
"""The optional API of include/cudnnspy.h, used by a program that runs with and without the spy.

usage: test_public.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip. Every record file is checked against tests/integration/schema.py.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

E = os.environ
PUBLIC_API = E.get("PUBLIC_API", "")
HEADER_C99 = E.get("HEADER_C99", "")
HEADER_CXX11 = E.get("HEADER_CXX11", "")
PRELOAD = E.get("SPY_PRELOAD", "")
DROPIN9 = E.get("SPY_DROPIN9_DIR", "")
FAKE9 = E.get("FAKE9_DIR", "")
sys.path.insert(0, E.get("SCHEMA_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                         "integration"))
import schema  # noqa: E402

SCENARIOS = {}
TMPDIRS = []

# What public-api marks on its main thread, in this order (see public-api.c).
MAIN_MARKS = ["start", "step 1", "step 2", "quote \" backslash \\ newline \n tab \t end",
              "a" * 256, "x" * 255, "y" * 254, ""]


def scenario(fn):
    SCENARIOS[fn.__name__.replace("_", "-")] = fn
    return fn


class Failed(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def tmpdir():
    d = tempfile.mkdtemp(prefix="cudnnspy-public-")
    TMPDIRS.append(d)
    return d


def run(argv, env=None, cwd=None):
    base = {k: v for k, v in E.items() if not k.startswith("CUDNNSPY_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    base.update(env or {})
    return subprocess.run(argv, env=base, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)


def record_files(directory, complete=True):
    """{name: records} of every record file there, each checked against the schema."""
    out = {}
    for name in sorted(os.listdir(directory)):
        recs, errors = schema.read_file(os.path.join(directory, name), complete)
        check(not errors, "%s breaks the documented schema" % name, *errors[:10])
        out[name] = recs
    return out


def one_file(directory, complete=True):
    files = record_files(directory, complete)
    check(len(files) == 1, "one record file, not %d" % len(files), " ".join(files))
    return list(files.values())[0]


def marks(records):
    return [r for r in records if r["event"] == "mark"]


def check_main_thread(records, pid, traced, last=None):
    """The main thread's marks, in order, between its traced calls, with its tid and rising times."""
    mine = [r for r in records if r["event"] in ("mark", "call") and r["tid"] == pid]
    want = MAIN_MARKS + ([last] if last is not None else [])
    got = [r["label"] for r in mine if r["event"] == "mark"]
    check(got == want, "the main thread's labels in order", got, want)
    if traced:
        seq = [r["label"] if r["event"] == "mark" else r["fn"] for r in mine][:5]
        want_seq = ["start", "cudnnGetVersion", "step 1", "cudnnGetVersion", "step 2"]
        check(seq == want_seq, "marks in order with the thread's calls", seq, want_seq)
    times = [r["t_ns"] for r in mine]
    check(times == sorted(times), "t_ns never goes back on one thread", times)


def check_worker(records, pid):
    workers = [r for r in marks(records) if r["label"] == "worker"]
    check(len(workers) == 1, "one worker mark", workers)
    check(workers[0]["tid"] != pid, "the worker's mark carries its own thread id", workers)


def preload_env(out, **extra):
    env = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": out,
           "CUDNNSPY_TRACE": "cudnnGetVersion"}
    env.update(extra)
    return env


@scenario
def without_spy():
    """Built with the header, run without the spy: it runs, the weak symbols are NULL, nothing is written."""
    cwd = tmpdir()
    p = run([PUBLIC_API, "exit"], {"LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": cwd}, cwd=cwd)
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stdout, p.stderr)
    check("loaded 0\n" in p.stdout and "mark absent\n" in p.stdout, "is_loaded is NULL", p.stdout)
    check("done\n" in p.stdout and "errno kept 1" in p.stdout, "ran to the end", p.stdout)
    check("cudnnspy" not in p.stderr, "no spy on stderr", p.stderr)
    check(os.listdir(cwd) == [], "no file written", os.listdir(cwd))


@scenario
def preload():
    """Under LD_PRELOAD: mark records in order, with their labels, escaped and cut; the worker's too."""
    out = tmpdir()
    p = run([PUBLIC_API, "exit"], preload_env(out))
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stdout, p.stderr)
    check("loaded 1\n" in p.stdout and "mark present\n" in p.stdout, "is_loaded is there and says 1", p.stdout)
    check("errno kept 1" in p.stdout, "cudnnspy_mark leaves errno alone", p.stdout)
    recs = one_file(out)
    pid = recs[0]["pid"]
    check(recs[0]["library"] is not None, "the header names the library (cuDNN was called first)", recs[0])
    check_main_thread(recs, pid, traced=True, last="end")
    check_worker(recs, pid)
    check(len(marks(recs)) == len(MAIN_MARKS) + 2, "no other marks", marks(recs))
    for m in marks(recs):
        check(set(m) == {"event", "label", "tid", "t_ns"}, "a mark has exactly the documented fields", m)


@scenario
def flush_kill():
    """Killed at once after cudnnspy_flush and one more mark: the file has every mark, the one after the flush too
    (the record file is mapped: what a thread wrote is the file's when its call returns, issue 28)."""
    out = tmpdir()
    p = run([PUBLIC_API, "flush-kill"], preload_env(out))
    check(p.returncode == -signal.SIGKILL, "killed by SIGKILL, not %d" % p.returncode, p.stdout, p.stderr)
    check("flushed\n" in p.stdout, "the program got past the flush", p.stdout)
    recs = one_file(out, complete=False)
    pid = recs[0]["pid"]
    check(not any(r["event"] == "summary" and r.get("exited") is not False for r in recs),
          "no summary of the exit: the exit handlers never ran")
    check_main_thread(recs, pid, traced=True, last="after flush")
    # The worker is still alive, blocked.
    check_worker(recs, pid)


@scenario
def no_flush_kill():
    """Killed without a flush: every mark is in the file all the same, the blocked worker's too (issue 28; before
    it, none was)."""
    out = tmpdir()
    p = run([PUBLIC_API, "kill"], preload_env(out))
    check(p.returncode == -signal.SIGKILL, "killed by SIGKILL, not %d" % p.returncode, p.stdout, p.stderr)
    recs = one_file(out, complete=False)
    check(not any(r["event"] == "summary" and r.get("exited") is not False for r in recs),
          "no summary of the exit: the exit handlers never ran")
    check_main_thread(recs, recs[0]["pid"], traced=True)
    check_worker(recs, recs[0]["pid"])


@scenario
def no_output():
    """Preloaded without CUDNNSPY_OUTPUT: is_loaded says 1, marks and flushes are silent, no file anywhere."""
    cwd = tmpdir()
    p = run([PUBLIC_API, "exit"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9}, cwd=cwd)
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stdout, p.stderr)
    check("loaded 1\n" in p.stdout, "is_loaded says 1", p.stdout)
    check("cudnnspy: preload:" in p.stderr, "the banner, as usual", p.stderr)
    check(os.listdir(cwd) == [], "no file written", os.listdir(cwd))
    p = run([PUBLIC_API, "flush-kill"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9}, cwd=cwd)
    check(p.returncode == -signal.SIGKILL and "flushed\n" in p.stdout, "flush without output", p.stdout, p.stderr)
    check(os.listdir(cwd) == [], "no file written by the flush", os.listdir(cwd))


@scenario
def drop_in():
    """The drop-in libcudnn.so.9 defines the API too: a program linked to cuDNN binds it."""
    out = tmpdir()
    p = run([PUBLIC_API, "exit"], {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": FAKE9, "CUDNNSPY_OUTPUT": out,
                                   "CUDNNSPY_TRACE": "cudnnGetVersion"})
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stdout, p.stderr)
    check("loaded 1\n" in p.stdout, "is_loaded through the drop-in", p.stdout, p.stderr)
    recs = one_file(out)
    check(recs[0]["mode"] == "drop-in", "written by the drop-in", recs[0])
    check_main_thread(recs, recs[0]["pid"], traced=True, last="end")


# The helper of examples/*_conv.py and docs/usage.md, then one mark; with "load", Python first opens
# cuDNN privately, the way frameworks do.
CTYPES_CODE = """
import ctypes, os, sys
if sys.argv[1:] == ["load"]:
    ctypes.CDLL("libcudnn.so.9")
def spy_marker():
    for name in (None, "libcudnn.so.9", "libcudnn.so.8"):
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD) if name else ctypes.CDLL(None)
        except OSError:
            continue
        mark = getattr(lib, "cudnnspy_mark", None)
        if mark is not None:
            mark.argtypes = [ctypes.c_char_p]
            mark.restype = None
            return lambda label: mark(label.encode())
    return None
mark = spy_marker()
print("mark", "present" if mark else "absent")
if mark:
    mark("from python")
"""


@scenario
def ctypes():
    """Python reaches the API with ctypes, as docs/usage.md shows: preloaded, or through a drop-in that it
    loaded privately; without the spy, the helper finds nothing."""
    py = [sys.executable, "-c", CTYPES_CODE]
    p = run(py + ["load"], {"LD_LIBRARY_PATH": FAKE9})
    check(p.returncode == 0 and "mark absent" in p.stdout, "without the spy: absent", p.stdout, p.stderr)
    out = tmpdir()
    p = run(py, {"LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": out})
    check(p.returncode == 0 and "mark present" in p.stdout, "preloaded: present", p.stdout, p.stderr)
    recs = one_file(out)
    check([m["label"] for m in marks(recs)] == ["from python"], "the mark from Python", marks(recs))
    # Python never called cuDNN, and a mark does not load it.
    check(recs[0]["library"] is None, "no cuDNN resolved for a mark", recs[0])
    out = tmpdir()
    p = run(py + ["load"], {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": FAKE9, "CUDNNSPY_OUTPUT": out})
    check(p.returncode == 0 and "mark present" in p.stdout, "drop-in loaded privately: present", p.stdout,
          p.stderr)
    recs = one_file(out)
    check(recs[0]["mode"] == "drop-in" and [m["label"] for m in marks(recs)] == ["from python"],
          "the mark through the drop-in", recs)


@scenario
def strict_builds():
    """The strict C99 and C++11 builds of the header bind to the spy at run time."""
    progs = [HEADER_C99] + ([HEADER_CXX11] if HEADER_CXX11 else [])
    for prog in progs:
        p = run([prog])
        check(p.returncode == 0 and "loaded 0" in p.stdout and "mark absent" in p.stdout,
              "%s without the spy" % os.path.basename(prog), p.stdout, p.stderr)
        out = tmpdir()
        p = run([prog], {"LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": out})
        check(p.returncode == 0 and "loaded 1" in p.stdout and "mark present" in p.stdout,
              "%s under the spy" % os.path.basename(prog), p.stdout, p.stderr)
        want = "c99" if prog == HEADER_C99 else "c++11"
        check([m["label"] for m in marks(one_file(out))] == [want], "its mark", os.listdir(out))


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print("usage: test_public.py {%s}" % ",".join(sorted(SCENARIOS)))
        return 2
    if not PUBLIC_API:
        print("PUBLIC_API is not set: run through meson test")
        return 2
    try:
        SCENARIOS[sys.argv[1]]()
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        for d in TMPDIRS:
            shutil.rmtree(d, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
