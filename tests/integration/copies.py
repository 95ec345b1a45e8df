#!/usr/bin/env python3
"""How the spy comes in and which copy of cuDNN answers: preloaded or as a drop-in, linked, opened with dlopen or
ctypes; sub-libraries calling each other; the 8.x drop-in; a library that cannot be used; several copies in one
process (issue 13), each call answered by the copy the program reached; the drop-in following the copy its
requester would load (its RUNPATH, RPATH or dlopen).

usage: copies.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import os
import re
import shutil
import sys
import tempfile

import spytest
from spytest import (BUNDLED9, DROPIN8, DROPIN9, FAKE8, FAKE9, HERE, PRELOAD, PROGS, REAL, banner_path, check,
                     copy_calls, events, fake_copy, findings, libraries, need_real, only_file, prog, run, same_file,
                     same_output, summary_row, summary_total)

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


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
    fails = [r for recs in p.records.values() for r in recs if r.get("event") == "failure"]
    check(len(fails) == 2 and all(r["fn"] == "cudnnGraphVersionCheck" and r.get("no_function") is True and
                                  not r.get("injected") for r in fails),
          "the failures say the spy answered them, the copy having no such function", repr(fails)[:1500])


def unusable(value, expect):
    env = {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": value}
    p = run([prog("host-calls")], env)
    check("version 0" in p.stdout, "cudnnGetVersion gives 0 without a library", p.stdout)
    check("create tensor: 1001" in p.stdout and "create handle: 1001" in p.stdout,
          "calls return NOT_INITIALIZED", p.stdout)
    check("error string 2000: CUDNN_STATUS_BAD_PARAM" in p.stdout, "cudnnGetErrorString still answers", p.stdout)
    check(expect in p.stderr and "not trying any other copy" in p.stderr, "one clear message", p.stderr)
    check(p.stderr.count("\n") < 20, "no flood of messages", p.stderr)
    fails = [r for recs in p.records.values() for r in recs if r.get("event") == "failure"]
    check(fails and all(r.get("no_function") is True for r in fails), "each failure the spy's answer, no copy",
          repr(fails)[:1500])


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
def jump_stubs():
    """The undeclared exports pass through the jump stubs with every argument intact."""
    plain = run([prog("stub-call")], {"LD_LIBRARY_PATH": FAKE9})
    check(plain.stdout.count("\n") == 8 and "1000096.50" in plain.stdout, "the fake answers", plain.stdout)
    spied = run([prog("stub-call")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
    check(plain.stdout == spied.stdout, "preload stubs change nothing", plain.stdout, spied.stdout)
    dropin = run([prog("stub-call")], {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": FAKE9})
    check(plain.stdout == dropin.stdout, "drop-in stubs change nothing", plain.stdout, dropin.stdout)


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


def normalized(text, paths):
    for name, path in paths.items():
        text = text.replace(os.path.realpath(path), name).replace(path, name)
    return re.sub(r"pid \d+", "pid N", text)


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


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
