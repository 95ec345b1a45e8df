#!/usr/bin/env python3
"""Which cuDNN answers, at run time (issue 4): the library records and findings of one copy and of several, mixed
majors, CUDA versions, sub-library checks, a GPU too new, programs probing for cuDNN, and the load records of
every dlopen of a cuDNN library (loaded or not, with the loader's text).

usage: audit.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import os
import shutil
import sys
import tempfile

import spytest
from spytest import (FAKE8, FAKE9, FAKE_CUDA, FAKE_CUDART, PRELOAD, REAL, check, cudart, events, findings, gpu_env,
                     libraries, need_real, prog, run, same_output)

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


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


# sublib-version-mismatch as one finding per conflict (issue 30, item 4): a dispatcher running the
# sub-libraries of another directory is one line naming both directories and the versions; of the same version a
# warning, of another version (or a failed version check) an error.
SUBLIB_ID = "sublib-version-mismatch"


def sublib_lines(p):
    return [ln for ln in p.stderr.splitlines() if " %s: " % SUBLIB_ID in ln]


def sublib_recorded(p):
    return [f for f in events(p.records, "finding") if f["id"] == SUBLIB_ID]


@scenario
def sublibs_same_version_real():
    """A conda-like directory holding only the real libcudnn.so.9, first on LD_LIBRARY_PATH, beside the system's
    sub-libraries of the same 9.19.0: one warning line (not one error per sub-library) naming both directories
    and the version; the program's output and exit status are its own."""
    need_real()
    with tempfile.TemporaryDirectory() as d:
        conda = os.path.join(d, "conda", "lib")
        os.makedirs(conda)
        shutil.copy(os.path.join(REAL, "libcudnn.so.9"), conda)
        env = {"LD_LIBRARY_PATH": conda + ":" + REAL}
        argv = [prog("host-calls")]
        plain = run(argv, env, check_rc=False)
        spied = run(argv, dict(env, LD_PRELOAD=PRELOAD), check_rc=False)
        check(plain.stdout == spied.stdout and plain.returncode == spied.returncode, "the program's own output")
        got = sublib_lines(spied)
        real = os.path.dirname(os.path.realpath(os.path.join(REAL, "libcudnn.so.9")))
        check(len(got) == 1 and got[0].startswith("cudnnspy: warning %s: " % SUBLIB_ID), "one warning line", spied.stderr)
        check("libcudnn.so.9 (cuDNN 9.19.0) in %s runs sub-libraries from %s, of the same version: " % (
            os.path.realpath(conda), real) in got[0] and "libcudnn_graph.so.9" in got[0],
              "both directories and the version", got[0])
        recs = sublib_recorded(spied)
        check(len(recs) == 1 and recs[0]["severity"] == "warning" and
              os.path.realpath(os.path.join(conda, "libcudnn.so.9")) in recs[0]["paths"], "one warning record",
              repr(recs))


def fake_sublibs(d, version=None):
    """libcudnn_graph.so.9 and libcudnn_ops.so.9 in D, copies of the fake; VERSION: what they say they are."""
    for name in ("libcudnn_graph.so.9", "libcudnn_ops.so.9"):
        shutil.copy(os.path.join(FAKE9, "libcudnn.so.9"), os.path.join(d, name))
    if version:
        with open(os.path.join(d, "fakecudnn-version"), "w") as f:
            f.write(str(version))
    return [os.path.join(d, n) for n in ("libcudnn_graph.so.9", "libcudnn_ops.so.9")]


@scenario
def sublibs_versions_fake():
    """Two sub-libraries from one other directory: of the dispatcher's version, one warning naming both files; of
    another version, one error naming that version; a failed version check, an error that says so."""
    for version, severity, words in ((None, "warning", "of the same version: "),
                                     (90100, "error", "of cuDNN 9.1.0: "),
                                     ("check", "error", ", whose own version check fails: ")):
        with tempfile.TemporaryDirectory() as d:
            subs = fake_sublibs(d, version if version != "check" else None)
            env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
            if version == "check":
                env["FAKECUDNN_STATUS"] = "cudnnOpsVersionCheck=1002"
            p = run([prog("load-copies")] + subs, env)
            got = sublib_lines(p)
            check(len(got) == 1 and got[0].startswith("cudnnspy: %s %s: " % (severity, SUBLIB_ID)),
                  "%s: one %s line" % (version, severity), p.stderr)
            check(("runs sub-libraries from %s" % os.path.realpath(d)) in got[0] and words in got[0] and
                  "libcudnn_graph.so.9, libcudnn_ops.so.9" in got[0], "%s: the directory, the version, the files"
                  % version, got[0])
            recs = sublib_recorded(p)
            check(len(recs) == 1 and recs[0]["severity"] == severity and
                  {os.path.realpath(s) for s in subs} <= set(recs[0]["paths"]), "%s: one record" % version,
                  repr(recs))



if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
