#!/usr/bin/env python3
"""cudnnspy repro (docs/repro.md): the spy checks its own repro.

usage: test_repro.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (no cuDNN headers to build against, or no real cuDNN).

round-trip-legacy: conv-legacy runs against the fake cuDNN under the spy, traced, and again with some
convolutions made to fail and nothing traced. For every call repro can replay, the repro is written,
built with -Wall -Werror, and run against the fake cuDNN and the fake CUDA runtime, traced under the spy;
its records must show the same call with the same decoded arguments and status (pointers compared by
their offset from a 256-byte boundary and which of them alias), and the same search before it.
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "integration"))
import sanitizer  # noqa: E402  (sanitizer builds: the runtime first in LD_PRELOAD, its reports fail the test)

E = os.environ
CLI = E.get("CLI_EXE", "")
PRELOAD = E.get("SPY_PRELOAD", "")
FAKE9 = E.get("FAKE9_DIR", "")
FAKE_CUDART = E.get("FAKE_CUDART_DIR", "")
REAL = E.get("REAL_CUDNN_DIR", "")
PROGS = E.get("PROGRAMS_DIR", "")
CC = shlex.split(E.get("CC_CMD", "cc"))

# Failures made by the fake cuDNN for the untraced run: their records carry the descriptors' Set calls.
FAIL = "cudnnConvolutionBackwardFilter=5000,cudnnConvolutionBiasActivationForward=3000,cudnnConvolutionForward=2000"


class Failed(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def include_dir():
    for d in [os.path.join(REAL, "..", "include"), os.path.join(REAL, "include"), "/usr/include"]:
        if REAL and os.path.exists(os.path.join(d, "cudnn.h")):
            return os.path.realpath(d)
    print("no cudnn.h to build the repros against: skipped")
    sys.exit(77)


def clean_env(extra):
    env = {k: v for k, v in E.items() if not k.startswith(("CUDNNSPY_", "FAKECUDNN_")) and k != "LD_PRELOAD"}
    env.pop("LD_LIBRARY_PATH", None)
    env.update(extra)
    return env


def run(argv, env=None, check_rc=True):
    env = clean_env(env or {})
    if "LD_PRELOAD" in env:
        sanitizer.child_env(env)
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    check(not sanitizer.unknown_reports(p.stderr), "%s: a sanitizer report" % argv[0], p.stderr)
    check(p.returncode >= 0, "%s was killed by signal %d" % (argv[0], -p.returncode), p.stdout, p.stderr)
    if check_rc:
        check(p.returncode == 0, "%s exited %d" % (" ".join(argv), p.returncode), p.stdout, p.stderr)
    return p


def dumped(path):
    """A record file of either format as JSON Lines text, through cudnnspy dump."""
    return run([CLI, "dump", path]).stdout


def edit(directory, name, text):
    """Puts the edited JSON Lines text of a record file in the place of the file (format 2 goes in as format 1)."""
    os.unlink(os.path.join(directory, name))
    with open(os.path.join(directory, "edited.cudnnspy.jsonl"), "w") as f:
        f.write(text)


def records(directory):
    out = []
    for name in sorted(os.listdir(directory)):
        if os.path.isdir(os.path.join(directory, name)):
            continue    # the libraries a kept scenario ran with (tests/integration/spytest.py)
        out += [json.loads(line) for line in dumped(os.path.join(directory, name)).splitlines() if line.strip()]
    return out


def spied(argv, outdir, extra=None):
    os.makedirs(outdir, exist_ok=True)
    env = {"LD_LIBRARY_PATH": FAKE9 + ":" + FAKE_CUDART, "LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": outdir,
           "CUDNNSPY_STDERR": "none"}
    env.update(extra or {})
    return run(argv, env, check_rc=False)


def need_real():
    """The real cuDNN 9.19, or the test is skipped (exit 77)."""
    if not REAL or not os.path.exists(os.path.join(REAL, "libcudnn.so.9")):
        print("no real cuDNN: skipped")
        sys.exit(77)


def spied_real(argv, outdir, extra=None, check_rc=True):
    """ARGV against the real cuDNN under the spy, its records in OUTDIR (made)."""
    os.makedirs(outdir, exist_ok=True)
    env = {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": outdir, "CUDNNSPY_STDERR": "none"}
    env.update(extra or {})
    return run(argv, env, check_rc=check_rc)


def calls(recs):
    """The call and failure records, numbered as repro numbers them (from 1)."""
    return [r for r in recs if r["event"] in ("call", "failure")]


def shape_sets(recs, upto):
    """{descriptor id: [(fn, args without the id)]} from the traced Set calls before record `upto`."""
    out = {}
    for r in recs[:upto]:
        if r["event"] == "call" and r["status"] == 0 and r["fn"].startswith("cudnnSet") and r["fn"] != "cudnnSetStream":
            first = next(iter(r["args"]))
            did = r["args"][first]["id"]
            args = {k: (v["values"] if isinstance(v, dict) and "values" in v else v)
                    for k, v in list(r["args"].items())[1:]}
            lst = [e for e in out.get(did, []) if e[0] != r["fn"] and not (
                "Descriptor" in e[0] and "Descriptor" in r["fn"] and r["fn"] != "cudnnSetActivationDescriptorSwishBeta")]
            out[did] = lst + [(r["fn"], args)]
    return out


def _without_ids(o):
    """O with the spy's descriptor ids left out: a repro numbers its descriptors its own way."""
    if isinstance(o, dict):
        return {k: _without_ids(x) for k, x in o.items()
                if k != "id" and not (isinstance(x, str) and re.match(r"[a-z]+#\d+$", x))}
    if isinstance(o, list):
        return [_without_ids(x) for x in o]
    return o


def normalize(rec, all_recs, index, shapes=True):
    """What must replay the same: every argument, with ids replaced by what was set on them, and pointers by
    their offset from a 256-byte boundary and the first argument at the same address."""
    sets = shape_sets(all_recs, index)
    seen = {}
    out = {}
    for k, v in rec["args"].items():
        if isinstance(v, dict) and "id" in v:
            if "filled_by" in v:
                # Filled by cuDNN (cudnnDeriveBNTensorDescriptor): from what, whatever Set came before it.
                shape = [("filled_by", v["filled_by"], _without_ids((v.get("filled") or {}).get("args")))]
            elif "set" in v:
                s = dict(v["set"]["args"])
                s.pop(next(iter(s)))
                shape = [(v["set"]["fn"], s)] + sorted((x, v[x]) for x in v if x not in ("id", "desc", "set"))
            else:
                shape = sets.get(v["id"])
            if not shapes:
                # The original's Set calls were not traced: its summary and the values beside it.
                shape = sorted((x, v[x]) for x in v if x not in ("id", "desc", "set"))
            out[k] = (v.get("desc"), json.dumps(shape, sort_keys=True))
        elif k in ("alpha", "beta", "alpha1", "alpha2"):
            out[k] = "host scale"
        elif isinstance(v, str) and v.startswith("0x"):
            addr = int(v, 16)
            out[k] = ("ptr", addr % 256, seen.setdefault(addr, k))
        elif isinstance(v, dict) and "ptr" in v:
            value = v.get("value")
            if isinstance(value, str) and re.match(r"[a-z]+#\d+$", value):
                # A descriptor the call made: its kind, not its number (the repro makes fewer before it).
                value = value.split("#")[0]
            out[k] = ("out", value, json.dumps(v.get("values"), sort_keys=True))
        elif isinstance(v, str) and v.startswith("handle#"):
            out[k] = "handle"
        else:
            out[k] = v
    return {"event": rec["event"], "fn": rec["fn"], "status": rec["status"], "args": out}


def write_repro(records_dir, n, path, extra=()):
    p = run([CLI, "repro", "--call", str(n), "-o", path] + list(extra) + [records_dir])
    cmd = p.stdout.strip()
    check(cmd.startswith("cc -Wall -Werror -o ") and path in cmd and re.search(r" -l(:libcudnn\.so\.\d+|cudnn)( |$)", cmd)
          and re.search(r" -l(:libcudart\.so\.\d+|cudart)( |$)", cmd),
          "repro prints the one command that builds it", p.stdout, p.stderr)
    return cmd


def build(src, exe, inc, libdirs):
    argv = CC + ["-Wall", "-Werror", "-o", exe, src, "-I" + inc]
    for d in libdirs:
        argv += ["-L" + d]
    # The first directory with a cuDNN: by its versioned name where it has no libcudnn.so (a copy of one file).
    first = next((d for d in libdirs if glob.glob(os.path.join(d, "libcudnn.so*"))), None)
    lib = "-lcudnn"
    if first and not os.path.exists(os.path.join(first, "libcudnn.so")):
        lib = "-l:" + os.path.basename(sorted(glob.glob(os.path.join(first, "libcudnn.so.*")))[0])
    run(argv + [lib, "-lcudart"])


def round_trip(tmp, records_dir, extra_env, inc, label, shapes=True):
    recs = records(records_dir)
    numbered = calls(recs)
    listed = run([CLI, "repro", "--list", records_dir]).stdout.splitlines()
    check(listed and listed[0].endswith(")") and "(pid " in listed[0], "--list names each file first", listed[:1])
    nums = [int(line.split()[0]) for line in listed[1:]]
    check(nums, "repro --list names the calls it can replay", "\n".join(listed))
    done = 0
    for n in nums:
        orig = numbered[n - 1]
        if orig["fn"] == "cudnnCreate":
            continue
        src = os.path.join(tmp, "%s-%d.c" % (label, n))
        exe = src[:-2]
        write_repro(records_dir, n, src)
        text = open(src).read()
        check("cudnnspy" not in re.sub(r"/\*.*?\*/", "", text, flags=re.S),
              "no spy code in the repro, only in its comments", text)
        check("/* recorded: %s(" % orig["fn"] in text, "a comment names the recorded call it replays", text)
        check("not its data" in text, "the opening comment says the data is not in the records", text)
        build(src, exe, inc, [FAKE9, FAKE_CUDART])
        out = os.path.join(tmp, "%s-%d.records" % (label, n))
        p = spied([exe], out, dict(extra_env, CUDNNSPY_TRACE="*"))
        check(p.returncode == 0, "%s: the repro returns the recorded status (exit 0)" % label, text[:3000],
              p.stdout, p.stderr)
        again = records(out)
        replayed = [i for i, r in enumerate(again) if r["event"] in ("call", "failure") and r["fn"] == orig["fn"]]
        # A Set on a descriptor set before replays those earlier Sets first (issue 30): the call is the last.
        check(len(replayed) == 1 or (orig["fn"].startswith("cudnnSet") and len(replayed) <= 3),
              "%s: the repro makes the call once" % label, p.stdout)
        i = replayed[-1]
        a = normalize(orig, recs, recs.index(orig), shapes)
        b = normalize(again[i], again, i, shapes)
        if "The records hold every argument of this call" in text:
            # A call outside the table, replayed from the API description (issue 30). The fake writes no outputs
            # but the table's: the program's own initial values were recorded, the repro's zeros come back.
            for x in (a, b):
                x["args"] = {k: ("out", None, None) if isinstance(v, tuple) and v and v[0] == "out" and
                             not isinstance(v[1], str) else v for k, v in x["args"].items()}
        # A failure record carries what was set; a traced call of the repro has the Set records before it.
        if orig["event"] == "failure":
            b["args"] = {k: (v if not (isinstance(v, tuple) and len(v) == 2) else
                             (v[0], a["args"][k][1] if v[0] == a["args"][k][0] else v[1]))
                         for k, v in b["args"].items()}
            b["event"] = "failure" if again[i]["status"] else "call"
        check(a == b, "%s: call %d (%s) replays with the same arguments and status" % (label, n, orig["fn"]),
              json.dumps(a, indent=1, sort_keys=True), json.dumps(b, indent=1, sort_keys=True), p.stdout)
        if orig["event"] == "failure":
            # The Set calls the failure record carried were replayed as they were.
            sets = shape_sets(again, i)
            for k, v in orig["args"].items():
                if isinstance(v, dict) and "set" in v:
                    did = again[i]["args"][k]["id"]
                    s = dict(v["set"]["args"])
                    s.pop(next(iter(s)))
                    check(sets.get(did, [(None,)])[0] == (v["set"]["fn"], s),
                          "%s: %s recreated with the recorded Set call" % (label, k), repr(sets.get(did)), repr(v))
        # A search the program made before with the same descriptors runs before the call.
        if "run_search();" in text:
            fn = re.search(r"status = (cudnn\w+)\(", text[text.index("run_search(void)"):]).group(1)
            before = [r for r in again[:i] if r["event"] == "call" and r["fn"] == fn]
            origs = [r["args"]["perfResults"]["values"] for r in recs[:recs.index(orig)]
                     if r["event"] == "call" and r["fn"] == fn]
            if "itself was not traced" in text:
                # Not traced: the spy's search record of the same problem.
                origs = [r["results"] for r in recs[:recs.index(orig)] if r["event"] == "search" and r["fn"] == fn]
            check(before and origs and before[-1]["args"]["perfResults"]["values"] == origs[-1] and
                  before[-1]["status"] == 0,
                  "%s: the search replays before the call, with the same results" % label, p.stdout)
        done += 1
    return done


def test_round_trip_legacy():
    inc = include_dir()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        traced = os.path.join(tmp, "traced")
        p = spied([os.path.join(PROGS, "conv-legacy")], traced, {"CUDNNSPY_TRACE": "*"})
        check(p.returncode == 0, "conv-legacy under the spy", p.stdout, p.stderr)
        n = round_trip(tmp, traced, {}, inc, "traced")
        check(n >= 15, "every traced convolution-like call of conv-legacy (%d)" % n)
        failing = os.path.join(tmp, "failing")
        p = spied([os.path.join(PROGS, "conv-legacy")], failing, {"FAKECUDNN_STATUS": FAIL})
        fails = [r for r in records(failing) if r["event"] == "failure"]
        check(len(fails) == 10, "conv-legacy's convolutions fail as the fake was told", repr(fails)[:2000])
        n = round_trip(tmp, failing, {"FAKECUDNN_STATUS": FAIL}, inc, "failing")
        check(n == 10, "every failing call of conv-legacy (%d)" % n)
        # Traced as the scenarios trace them, without the Set calls: the descriptors rebuilt from their summaries.
        for trace, want in (("cudnnFind* cudnnGet*_v7", 4), ("cudnnConvolution*", 12)):
            d = os.path.join(tmp, "only-" + trace.split("*")[0])
            spied([os.path.join(PROGS, "conv-legacy")], d, {"CUDNNSPY_TRACE": trace})
            n = round_trip(tmp, d, {}, inc, "only-" + trace.split("*")[0], shapes=False)
            check(n == want, "every call traced with %s (%d)" % (trace, n))
        # The other scenario programs' replayable calls: cudnnAddTensor between GPU work (gpu-calls), and
        # convolutions and an activation of half, bfloat16, double and int8 data, NHWC and strided (decode-all);
        # and since issue 30 every other traced call whose arguments the records hold whole (the Create, Set, Get
        # and Destroy calls around them).
        for name, args, want in (("gpu-calls", ["3", os.path.join(FAKE_CUDART, "libcudart.so.12")], 9),
                                 ("decode-all", [], 39)):
            d = os.path.join(tmp, name)
            p = spied([os.path.join(PROGS, name)] + args, d, {"CUDNNSPY_TRACE": "*"})
            n = round_trip(tmp, d, {}, inc, name)
            check(n == want, "every replayable call of %s (%d)" % (name, n), p.stdout, p.stderr)
        # The default pick is the first failure; --fill and --time reach the program.
        src = os.path.join(tmp, "default.c")
        run([CLI, "repro", "-o", src, "--fill", "nan", "--time", failing])
        text = open(src).read()
        check("enum fill fill = FILL_NAN;" in text and "int timing = 1, cuda_same = 1;" in text and
              "cudnnConvolutionForward(" in text, "the first failure, with the fill and timing asked for", text)
        # The alignment offset of a pointer is reproduced.
        rec = os.path.join(tmp, "offset")
        os.makedirs(rec)
        lines = dumped(os.path.join(failing, os.listdir(failing)[0])).replace('"x":"0x1000"', '"x":"0x1040"')
        open(os.path.join(rec, "a.jsonl"), "w").write(lines)
        run([CLI, "repro", "-o", src, rec])
        build(src, src[:-2], inc, [FAKE9, FAKE_CUDART])
        out = os.path.join(tmp, "offset-records")
        spied([src[:-2]], out, {"FAKECUDNN_STATUS": FAIL, "CUDNNSPY_TRACE": "cudnnConvolutionForward"})
        x = [r for r in records(out) if r.get("fn") == "cudnnConvolutionForward"][0]["args"]
        check(int(x["x"], 16) % 256 == 0x40 and int(x["w"], 16) % 256 == 0, "x at 64 bytes past a boundary",
              repr(x))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_real_no_gpu():
    """Against the real cuDNN without a GPU: the repro builds with the printed command and stops at cudnnCreate."""
    need_real()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        traced = os.path.join(tmp, "traced")
        spied([os.path.join(PROGS, "conv-legacy")], traced, {"CUDNNSPY_TRACE": "*"})
        n = [r["fn"] for r in calls(records(traced))].index("cudnnConvolutionForward") + 1
        src = os.path.join(tmp, "fwd.c")
        cmd = write_repro(traced, n, src, ["--cudnn", REAL])
        check(" -L%s " % REAL in cmd or " -L%s " % os.path.realpath(REAL) in cmd, "built against --cudnn", cmd)
        run(shlex.split(cmd), {})
        p = run([os.path.join(tmp, "fwd")], {}, check_rc=False)
        check(p.returncode == 2 and "cudnnCreate: CUDNN_STATUS_NOT_INITIALIZED (1001)" in p.stderr and
              "is there a GPU" in p.stderr and "the same status" not in p.stdout,
              "stops at cudnnCreate with a clear message", p.stdout, p.stderr)
        # A wheel's layout (lib/libcudnn.so.9 without libcudnn.so, include/ beside lib/): the command still builds.
        inc = include_dir()
        wheel = os.path.join(tmp, "wheel")
        os.makedirs(os.path.join(wheel, "lib"))
        os.makedirs(os.path.join(wheel, "include"))
        os.symlink(os.path.join(REAL, "libcudnn.so.9"), os.path.join(wheel, "lib", "libcudnn.so.9"))
        for h in os.listdir(inc):
            if h.startswith("cudnn"):
                os.symlink(os.path.join(inc, h), os.path.join(wheel, "include", h))
        src = os.path.join(tmp, "from-wheel.c")
        cmd = write_repro(traced, n, src, ["--cudnn", os.path.join(wheel, "lib")])
        check("-l:libcudnn.so.9" in cmd and "-I" + os.path.join(wheel, "include") in cmd, "the wheel's files", cmd)
        run(shlex.split(cmd), {})
        # The real cuDNN's own failure records (NULL handle: its cudnnCreate failed) make repros that build.
        real = os.path.join(tmp, "real")
        spied_real([os.path.join(PROGS, "conv-legacy")], real)
        fails = [r for r in records(real) if r["event"] == "failure"]
        check(len(fails) > 10, "the real cuDNN's failures", repr(fails)[:1000])
        for k in range(1, len(fails) + 1):
            src = os.path.join(tmp, "f%d.c" % k)
            run(shlex.split(write_repro(real, [i + 1 for i, r in enumerate(calls(records(real)))
                                               if r["event"] == "failure"][k - 1], src)), {})
        text = open(os.path.join(tmp, "f2.c")).read()
        check("The program passed a NULL handle" in text, "a NULL handle replayed as NULL", text)
        p = run([os.path.join(tmp, "f1")], {}, check_rc=False)
        check(p.returncode == 0 and "the same status as recorded" in p.stdout, "cudnnCreate's own failure replays",
              p.stdout, p.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_usage():
    """Bad input gets a clear message and a nonzero status, never a crash or a file that would not build."""
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        def fails(args, want, rc=None):
            p = run([CLI, "repro"] + args, check_rc=False)
            check(p.returncode in ((rc,) if rc else (1, 2)) and want in p.stderr and not p.stdout.strip(),
                  "repro %s: says %r" % (" ".join(args), want), p.stdout, p.stderr)
        fails([], "no RECORDS", 2)
        fails([os.path.join(tmp, "nothing")], "No such file", 2)
        fails(["--call", "0", tmp], "--call takes a number from 1", 2)
        fails(["--call", "1", "--failure", "1", tmp], "give one", 2)
        fails(["--fill", "ones", tmp], "--fill takes", 2)
        fails([tmp], "no record files", 2)
        traced = os.path.join(tmp, "traced")
        p = spied([os.path.join(PROGS, "conv-legacy")], traced, {"CUDNNSPY_TRACE": "cudnnConvolution*"})
        fails([traced], "no failure of a call that repro can replay")
        fails(["--call", "1000", traced], "no call 1000")
        n = run([CLI, "repro", "--list", traced]).stdout.splitlines()[1].split()[0]
        # Without the Set calls the summaries stand in; without those too, it says what to trace.
        run([CLI, "repro", "--call", n, "-o", os.path.join(tmp, "summary.c"), traced])
        check("rebuilt from the spy's summary" in open(os.path.join(tmp, "summary.c")).read(), "from the summary")
        name = os.listdir(traced)[0]
        edit(traced, name, re.sub(r',"desc":"[^"]*"', "", dumped(os.path.join(traced, name))))
        fails(["--call", n, traced], "the records hold neither a successful Set call of it before this call nor a"
              " summary repro reads (trace the cudnnSet* functions too)")
        graph = os.path.join(tmp, "graph")
        spied([os.path.join(PROGS, "conv-graph")], graph, {"FAKECUDNN_STATUS": "cudnnBackendExecute=3000"})
        # Untraced, it is rebuilt from the graph record; without that record there is nothing to build it from.
        run([CLI, "repro", "-o", os.path.join(tmp, "g.c"), graph])
        name = os.listdir(graph)[0]
        kept = [line for line in dumped(os.path.join(graph, name)).splitlines(True) if '"event":"graph"' not in line]
        edit(graph, name, "".join(kept))
        fails([graph], "the records hold neither the backend calls (trace cudnnBackend*) nor the plan's engine")
        # Garbage lines are skipped; a hostile enum name never reaches the C file.
        failing = os.path.join(tmp, "failing")
        spied([os.path.join(PROGS, "conv-legacy")], failing, {"FAKECUDNN_STATUS": FAIL})
        name = os.listdir(failing)[0]
        text = dumped(os.path.join(failing, name))
        bad = os.path.join(tmp, "bad")
        os.makedirs(bad)
        # After the header: a file that does not begin as records is refused whole (issue 27).
        first, rest = text.split("\n", 1)
        open(os.path.join(bad, "x.jsonl"), "w").write(first + "\n\x00garbage\n{\n" + rest.replace(
            '"CUDNN_CROSS_CORRELATION"', '"CUDNN_CROSS_CORRELATION); system(\\"rm\\"); ("'))
        fails([bad], "is not what cuDNN takes there")
        odd = os.path.join(tmp, "odd")
        os.makedirs(odd)
        open(os.path.join(odd, "x.jsonl"), "w").write(text.replace('"n":8,', '"n":"8",').replace(
            '"program":"conv-legacy"', '"program":"a */ b \\u0001"'))
        fails([odd], "without all its arguments")
        # A status no cudnnStatus_t has (found by mutating records: it made a file that did not build).
        open(os.path.join(odd, "x.jsonl"), "w").write(text.replace('"status":2000,', '"status":-9223372036854775808,'))
        fails([odd], "a status that is not a cudnnStatus_t")
        src = os.path.join(tmp, "odd.c")
        open(os.path.join(odd, "x.jsonl"), "w").write(text.replace('"program":"conv-legacy"',
                                                                  '"program":"a */ b \\u0001 %s"'))
        run([CLI, "repro", "-o", src, odd])
        check("a * / b ? %s" in open(src).read(), "text from the records cannot end a comment",
              open(src).read()[:800])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def graph_calls(recs, upto, keep=None):
    """The backend calls before record `upto` (and it) as what must replay the same: descriptor ids numbered by
    first appearance, pointers by offset from a 256-byte boundary and alias, out-pointers by their value."""
    ids, seen = {}, {}

    def norm(v, key=None):
        if isinstance(v, str) and v.startswith("backend#"):
            return "d%d" % ids.setdefault(v, len(ids))
        if isinstance(v, str) and v.startswith("handle#"):
            return "handle"
        if isinstance(v, str) and v.startswith("0x"):
            addr = int(v, 16)
            return ("ptr", addr % 256, seen.setdefault(addr, len(seen)))
        if isinstance(v, dict):
            return {k: norm(x, k) for k, x in v.items() if k != "ptr"}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v
    out = []
    for i, r in enumerate(recs[:upto + 1]):
        if r["event"] not in ("call", "failure") or not r["fn"].startswith("cudnnBackend") or \
                r["fn"] in ("cudnnBackendCreateDescriptor", "cudnnBackendDestroyDescriptor") or \
                (r["fn"] == "cudnnBackendExecute" and i != upto):
            continue
        d = r["args"].get("descriptor", {}).get("id") if r["fn"] != "cudnnBackendExecute" else None
        if keep is not None and d is not None and d not in keep:
            continue
        out.append((r["fn"], r["status"], json.dumps(norm(r["args"]), sort_keys=True)))
    return out


def test_round_trip_graph():
    """conv-graph traced (cudnnBackend*), and again with its executions made to fail: every execution's repro
    replays the same backend calls on the descriptors it needs, in the same order, with the same attributes,
    and the execution with the same plan (engine, knobs, workspace) and status."""
    inc = include_dir()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        done = 0
        for label, extra in (("traced", {}), ("failing", {"FAKECUDNN_STATUS": "cudnnBackendExecute=3000"})):
            rec_dir = os.path.join(tmp, label)
            spied([os.path.join(PROGS, "conv-graph")], rec_dir, dict(extra, CUDNNSPY_TRACE="cudnnBackend*"))
            recs = records(rec_dir)
            numbered = calls(recs)
            nums = [int(line.split()[0]) for line in run([CLI, "repro", "--list", rec_dir]).stdout.splitlines()[1:]
                    if "cudnnBackendExecute" in line]
            check(len(nums) == 5, "%s: the five executions are listed" % label, repr(nums))
            for n in nums:
                orig = numbered[n - 1]
                src = os.path.join(tmp, "%s-%d.c" % (label, n))
                write_repro(rec_dir, n, src)
                text = open(src).read()
                check("cudnnspy" not in re.sub(r"/\*.*?\*/", "", text, flags=re.S), "no spy code", text[:2000])
                build(src, src[:-2], inc, [FAKE9, FAKE_CUDART])
                out = os.path.join(tmp, "%s-%d.records" % (label, n))
                p = spied([src[:-2]], out, dict(extra, CUDNNSPY_TRACE="cudnnBackend*"))
                check(p.returncode == 0, "%s: the repro of call %d returns the recorded status" % (label, n),
                      p.stdout, p.stderr)
                again = records(out)
                ex = [i for i, r in enumerate(again) if r.get("fn") == "cudnnBackendExecute"]
                check(len(ex) == 1, "%s: one execution" % label, p.stdout)
                mine = graph_calls(again, ex[0])
                # The original's calls on the descriptors the repro recreated (named in its declarations).
                needed = set()
                for line in re.findall(r"backend_(\d+);\t/\*", text):
                    needed.add("backend#" + line)
                theirs = graph_calls(recs, recs.index(orig), keep=needed)
                check(mine[-1] == theirs[-1], "%s: call %d: the execution replays with the same plan and status"
                      % (label, n), repr(mine[-1]), repr(theirs[-1]))
                diff = next((k for k in range(max(len(mine), len(theirs))) if mine[k:k + 1] != theirs[k:k + 1]), None)
                check(mine == theirs, "%s: call %d: the same backend calls, attributes and order (first difference at %s)" % (label, n, diff),
                      repr(mine[diff:diff + 2]) if diff is not None else "", repr(theirs[diff:diff + 2]) if diff is not None else "",
                      "\n".join(map(repr, mine)), "\n".join(map(repr, theirs)))
                done += 1
        check(done == 10, "every execution")
        # A descriptor that cuDNN would not finalize (every Finalize failing, traced): the calls before it on what
        # it names, then the Finalize, with the same status.
        extra = {"FAKECUDNN_STATUS": "cudnnBackendFinalize=3000"}
        rec_dir = os.path.join(tmp, "finalize")
        spied([os.path.join(PROGS, "conv-graph")], rec_dir, dict(extra, CUDNNSPY_TRACE="cudnnBackend*"))
        recs = records(rec_dir)
        numbered = calls(recs)
        listed = run([CLI, "repro", "--list", rec_dir]).stdout.splitlines()[1:]
        nums = [int(line.split()[0]) for line in listed if "cudnnBackendFinalize" in line]
        check(len(nums) >= 10 and all(": backend#" in line for line in listed if "Finalize" in line),
              "the failed Finalize calls, each with its descriptor", "\n".join(listed))
        for n in nums:
            orig = numbered[n - 1]
            src = os.path.join(tmp, "finalize-%d.c" % n)
            write_repro(rec_dir, n, src)
            text = open(src).read()
            build(src, src[:-2], inc, [FAKE9, FAKE_CUDART])
            out = os.path.join(tmp, "finalize-%d.records" % n)
            p = spied([src[:-2]], out, dict(extra, CUDNNSPY_TRACE="cudnnBackend*"))
            check(p.returncode == 0, "finalize %d: the recorded status" % n, p.stdout, p.stderr)
            again = records(out)
            last = max(i for i, r in enumerate(again) if r.get("fn") == "cudnnBackendFinalize")
            needed = {"backend#" + x for x in re.findall(r"backend_(\d+);\t/\*", text)}
            mine = graph_calls(again, last)
            theirs = graph_calls(recs, recs.index(orig), keep=needed)
            check(mine == theirs, "finalize %d: the same backend calls before it, and the Finalize" % n,
                  "\n".join(map(repr, mine)), "\n".join(map(repr, theirs)))
        # Not traced: each failed execution rebuilt from its failure record (engine, knobs) and the graph record;
        # and traced as conv-graph-fake traces it (Finalize and Execute only), from the call records.
        for label, extra, trace in (("untraced", {"FAKECUDNN_STATUS": "cudnnBackendExecute=3000"}, None),
                                    ("scenario", {}, "cudnnBackendFinalize cudnnBackendExecute")):
            rec_dir = os.path.join(tmp, label)
            spied([os.path.join(PROGS, "conv-graph")], rec_dir, dict(extra, **({"CUDNNSPY_TRACE": trace} if trace
                                                                              else {})))
            recs = calls(records(rec_dir))
            nums = [int(line.split()[0]) for line in run([CLI, "repro", "--list", rec_dir]).stdout.splitlines()[1:]
                    if "cudnnBackendExecute" in line]
            check(len(nums) == 5, "%s: five executions" % label, repr(nums))
            for n in nums:
                orig = recs[n - 1]
                src = os.path.join(tmp, "%s-%d.c" % (label, n))
                run([CLI, "repro", "--call", str(n), "-o", src, rec_dir])
                text = open(src).read()
                check("were not traced" in text, "%s: the file says what was made up" % label, text[:3000])
                build(src, src[:-2], inc, [FAKE9, FAKE_CUDART])
                out = os.path.join(tmp, "%s-%d.records" % (label, n))
                p = spied([src[:-2]], out, dict(extra, CUDNNSPY_TRACE="cudnnBackendExecute"))
                check(p.returncode == 0 and "EXECUTION_PLAN_WORKSPACE_SIZE of" in p.stdout,
                      "%s %d: the recorded status" % (label, n), p.stdout, p.stderr)
                again = [r for r in records(out) if r.get("fn") == "cudnnBackendExecute"]
                check(len(again) == 1, "%s %d: one execution" % (label, n), p.stdout)
                keys = ("engine", "knobs", "signature", "workspace")
                want = {x: orig["args"]["executionPlan"].get(x) for x in keys}
                got = {x: again[0]["args"]["executionPlan"].get(x) for x in keys}
                check(want == got and again[0]["status"] == orig["status"],
                      "%s %d: the same engine, knobs, problem, workspace and status" % (label, n), repr(want),
                      repr(got))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_signature():
    """--signature picks a call by the signature the spy wrote (search, algo and plan records), and the file
    names it: for every signature of conv-legacy, decode-all and conv-graph, traced and with failures."""
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        cases = [("conv-legacy", [], {"CUDNNSPY_TRACE": "*"}), ("conv-legacy", [], {"FAKECUDNN_STATUS": FAIL}),
                 ("decode-all", [], {"CUDNNSPY_TRACE": "*"}),
                 ("conv-graph", [], {"CUDNNSPY_TRACE": "cudnnBackend*"})]
        seen = 0
        for k, (name, args, env) in enumerate(cases):
            d = os.path.join(tmp, "%s-%d" % (name, k))
            spied([os.path.join(PROGS, name)] + args, d, env)
            recs = records(d)
            sigs = sorted({r["signature"] for r in recs if r["event"] in ("algo", "search", "plan")})
            check(sigs, "%s: signatures in the records" % name)
            for sig in sigs:
                src = os.path.join(tmp, "sig.c")
                if "CUDNNSPY_TRACE" not in env and sig.startswith("bwd-data"):
                    # Untraced, and its calls did not fail: there is no call of it in the records.
                    p = run([CLI, "repro", "--signature", sig, "-o", src, d], check_rc=False)
                    check(p.returncode == 1 and "no call with the signature" in p.stderr, "said so", p.stderr)
                    continue
                run([CLI, "repro", "--signature", sig, "-o", src, d])
                text = open(src).read()
                check(" * Signature: %s\n" % sig in text, "%s: --signature %s picks a call with it" % (name, sig),
                      text[:1500])
                seen += 1
        check(seen >= 10, "signatures tried (%d)" % seen)
        # The shortened form of the stderr summary, with "...", picks the convolution, not the search before it.
        d = os.path.join(tmp, "conv-legacy-0")
        src = os.path.join(tmp, "short.c")
        run([CLI, "repro", "--signature", "fwd x=float:8x16x32x32:NCHW w=float:32x16x3x3:NCHW "
             "y=float:8x32x32x32:NCHW pad=1x1 ... math=tensor_op_math", "-o", src, d])
        check("return cudnnConvolutionForward(" in open(src).read(), "the convolution itself", open(src).read()[:800])
        # With failures, the first failure of that signature.
        d = os.path.join(tmp, "conv-legacy-1")
        run([CLI, "repro", "--signature", "bwd-filter x=... groups=1 math=tensor_op_math", "-o", src, d])
        text = open(src).read()
        check("cudnnConvolutionBackwardFilter,\n * which returned CUDNN_STATUS_EXECUTION_FAILED" in text or
              "(5000) in the recorded program" in text, "the failure of that signature", text[:800])
        p = run([CLI, "repro", "--signature", "fwd x=nothing", d], check_rc=False)
        check(p.returncode == 1 and "no call with the signature 'fwd x=nothing'" in p.stderr, "no such signature",
              p.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def code_of(text):
    """The C text without its comments, string and character literals: what the compiler runs."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] in "\"'":
            q, i = text[i], i + 1
            while i < n and text[i] != q:
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def hostile_repro(tmp, rec_dir, label, mutate, extra=()):
    """repro over the records as `mutate` edited them: (exit status, stderr, the C file or None, the command)."""
    src_dir = os.path.join(tmp, label)
    shutil.copytree(rec_dir, src_dir)
    for name in os.listdir(src_dir):
        text = mutate(dumped(os.path.join(src_dir, name)))
        edit(src_dir, name, text)
    out = os.path.join(tmp, label + "-repro.c")
    p = run([CLI, "repro", "-o", out] + list(extra) + [src_dir], check_rc=False)
    return p, open(out).read() if p.returncode == 0 and os.path.exists(out) else None


def test_hostile():
    """Records are input from strangers (issue 27): nothing read from them becomes code or an option. A crafted
    descriptor id, attribute name or descriptor type, a library directory with commas, a program name with a
    newline: each is refused with a clear message, or comes out escaped where it goes."""
    inc = include_dir()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-hostile-")
    try:
        legacy = os.path.join(tmp, "legacy")
        spied([os.path.join(PROGS, "conv-legacy")], legacy, {"FAKECUDNN_STATUS": FAIL, "CUDNNSPY_FORMAT": "json"})
        graph = os.path.join(tmp, "graph")
        spied([os.path.join(PROGS, "conv-graph")], graph, {"FAKECUDNN_STATUS": "cudnnBackendExecute=3000",
                                                           "CUDNNSPY_TRACE": "cudnnBackend*"})
        bad_ids = ['tensor#1");system("sh x");puts("', "tensor#1*/ system(0); /*", "tensor#1\nx", "tensor#-1",
                   "tensor#1 ", "tensor#99999999999999999999"]
        for k, bad in enumerate(bad_ids):
            p, text = hostile_repro(tmp, legacy, "id-%d" % k, lambda t: t.replace('"tensor#1"', json.dumps(bad)))
            check(p.returncode != 0 and "repro:" in p.stderr and "Traceback" not in p.stderr,
                  "a descriptor id the spy never writes is refused: %r" % bad, p.stdout, p.stderr,
                  (text or "")[:3000])
        # Words that become C tokens: an attribute's name, an enum element, a descriptor's type (each reached the
        # program's code before the fix).
        for k, (old, bad) in enumerate((('"attributeName":"CUDNN_ATTR_CONVOLUTION_COMP_TYPE"', "system"),
                                        ('"CUDNN_CROSS_CORRELATION"', "exit"),
                                        ('"descriptorType":"CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR"', "abort"))):
            check(old in dumped(os.path.join(graph, os.listdir(graph)[0])), "the graph records hold %s" % old)
            new = old.rsplit('"', 2)[0] + '"%s"' % bad
            p, text = hostile_repro(tmp, graph, "word-%d" % k, lambda t: t.replace(old, new), ["--failure", "1"])
            check(p.returncode != 0 or (text is not None and not re.search(r"\b%s\b" % bad, code_of(text))),
                  "a word that is no cuDNN name never becomes code: %r" % bad, p.stderr, (text or "")[:3000])
        for k, fn in enumerate(('cudnnBackendFinalize");system("x', "system")):
            p, text = hostile_repro(tmp, graph, "fn-%d" % k, lambda t: t.replace(
                '"fn":"cudnnBackendFinalize"', '"fn":%s' % json.dumps(fn)), ["--failure", "1"])
            check(p.returncode != 0 or "system" not in code_of(text), "a function name from the records (%r)" % fn,
                  p.stderr, (text or "")[:3000])
        # The library's directory with commas: the printed command must not pass any of it to the linker as options.
        victim = os.path.join(tmp, "victim")
        libdir = os.path.join(tmp, "lib,-o,%s,-e,0" % victim)
        p, text = hostile_repro(tmp, legacy, "commas", lambda t: t.replace(
            json.dumps(os.path.join(os.path.realpath(FAKE9), "libcudnn.so.9"))[1:-1],
            os.path.join(libdir, "libcudnn.so.9")))
        check(p.returncode == 0 and text, "repro over records naming a directory with commas", p.stderr)
        shutil.copytree(os.path.realpath(FAKE9), libdir)
        b = subprocess.run(["sh", "-c", p.stdout.strip()], cwd=tmp, capture_output=True, text=True, timeout=120)
        check(not os.path.exists(victim), "the build command gave the linker options from the records",
              p.stdout, b.stderr)
        check(b.returncode == 0 and "-Wl," not in p.stdout, "the build command builds, paths given literally",
              p.stdout, b.stderr)
        # A program name with a newline, and other bytes: --list keeps to one line a record, the file to comments.
        p, text = hostile_repro(tmp, legacy, "name", lambda t: t.replace('"program":"conv-legacy"',
                                                                       '"program":"conv\\nlegacy */ x"'))
        check(p.returncode == 0 and "conv\nlegacy" not in text and "legacy */ x" not in text,
              "the program's name kept inside a comment", text[:1500])
        # Python frames (issue 29) that try to end the comment: they stay in it, one line each.
        frames = json.dumps([{"file": "m.py */ system(0); /*", "line": 7, "function": "f\n*/ int x; /*"},
                             {"file": 5, "line": "x", "function": None}])
        p, text = hostile_repro(tmp, legacy, "python", lambda t: t.replace('"event":"failure",',
                                                                         '"event":"failure","python":%s,' % frames))
        check(p.returncode == 0 and text and "Called from Python" in text and "system" not in code_of(text) and
              "int x" not in code_of(text) and "\n*/ int x" not in text,
              "Python frames from the records kept inside the comment", p.stderr, (text or "")[:1500])
        q = run([CLI, "repro", "--list", os.path.join(tmp, "name")])
        check(all(not l.startswith("legacy") for l in q.stdout.splitlines()), "--list: one line for the program",
              q.stdout[:500])
        # The spy itself, in a program named so: its record file's name and its stderr lines keep to one line.
        named = os.path.join(tmp, "conv\nlegacy")
        shutil.copy(os.path.join(PROGS, "conv-legacy"), named)
        out = os.path.join(tmp, "named")
        p = spied([named], out, {"FAKECUDNN_STATUS": FAIL, "CUDNNSPY_STDERR": "banner,failures,summary"})
        check(all("\n" not in f for f in os.listdir(out)), "no newline in the record file's name", repr(os.listdir(out)))
        check(not any(l.startswith("legacy") for l in p.stderr.splitlines()), "the spy's lines keep to one line",
              p.stderr[-1500:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# Through ctypes, against the real cuDNN: a tensor derived for batch normalization from x, used in a failing
# call (NULL handle); x set to another shape; the same call again.
DERIVE_PROGRAM = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
x, d = ctypes.c_void_p(), ctypes.c_void_p()
assert lib.cudnnCreateTensorDescriptor(ctypes.byref(x)) == 0
assert lib.cudnnCreateTensorDescriptor(ctypes.byref(d)) == 0
assert lib.cudnnSetTensor4dDescriptor(x, 0, 0, 2, 8, 4, 4) == 0
assert lib.cudnnDeriveBNTensorDescriptor(d, x, 1) == 0
print(lib.cudnnActivationForward(None, None, None, d, None, None, d, None))
assert lib.cudnnSetTensor4dDescriptor(x, 0, 0, 2, 16, 4, 4) == 0
print(lib.cudnnActivationForward(None, None, None, d, None, None, d, None))
"""


def host_round_trip(tmp, rec_dir, n, label, libdirs, env, preload=True, recs=None, replays=None, reached=None):
    """Failure N of REC_DIR: its repro built against LIBDIR and run under the spy (PRELOAD false: LIBDIRS hold its
    drop-in). Its last call of the failed function must be the failure again: same status, same arguments (ids by
    what was set on them). Returns the repro's text. RECS: REC_DIR's records, when the caller has them. REPLAYS:
    a dict the caller keeps across calls, so that a repro whose code (comments aside), libraries and settings are
    those of one already run is not built and run again: the same program gives the same records, and this
    failure is compared with them (scenario-census.py --all: thousands of failures, far fewer programs).
    REACHED: the directory of the copy the call reached, linked first (the run searches LIBDIRS)."""
    recs = records(rec_dir) if recs is None else recs
    index = [i for i, r in enumerate(recs) if r["event"] == "failure"][n - 1]
    orig = recs[index]
    src = os.path.join(tmp, "%s-%d.c" % (label, n))
    p = run([CLI, "repro", "--failure", str(n), "-o", src, rec_dir])
    text = open(src).read()
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    check("cudnnspy" not in code, "%s %d: no spy code" % (label, n), text)
    check(p.stdout.startswith("cc -Wall -Werror -o "), "%s %d: the build command" % (label, n), p.stdout)
    if not any(glob.glob(os.path.join(x, "libcudnn.so*")) for x in libdirs):
        # The program found its cuDNN by a path of its own (Python's ctypes, a library's rpath): the copy
        # the call reached, as the repro's build command names it.
        libdirs = [x for x in re.findall(r" -L(\S+)", p.stdout) if glob.glob(os.path.join(x, "libcudnn.so*"))] + \
            list(libdirs)
    # An injected status: under the rule the file names for its call (the program's may pick its Nth or a share).
    rule = re.search(r"call: CUDNNSPY_INJECT='([^']*)'", text)
    if orig.get("injected"):
        check(rule, "%s %d: an injected status names the rule for the repro's call" % (label, n), text[:2500])
        env = dict(env, CUDNNSPY_INJECT=rule.group(1))
    key = (code, tuple(libdirs), tuple(sorted(env.items())), preload, reached)
    if replays is not None and key in replays:
        again, status_ok, said = replays[key]
    else:
        build(src, src[:-2], include_dir(), ([reached] if reached else []) + list(libdirs))
        out = os.path.join(tmp, "%s-%d.records" % (label, n))
        os.makedirs(out)
        q = run([src[:-2]], dict(env, CUDNNSPY_OUTPUT=out, CUDNNSPY_STDERR="none",
                                 LD_LIBRARY_PATH=":".join(libdirs), **({"LD_PRELOAD": PRELOAD} if preload else {})),
                check_rc=False)
        again, status_ok, said = records(out), q.returncode == 0 and "the same status as recorded" in q.stdout, \
            (q.stdout, q.stderr)
        if replays is not None:
            replays[key] = (again, status_ok, said)
            shutil.rmtree(out, ignore_errors=True)
            for f in (src, src[:-2]):
                os.unlink(f) if os.path.exists(f) else None
    check(status_ok, "%s %d (%s): the repro returns the recorded status" % (label, n, orig["fn"]), text[:2500],
          *said)
    mine = [i for i, r in enumerate(again) if r["event"] in ("call", "failure") and r["fn"] == orig["fn"]]
    a = normalize(orig, recs, index)
    b = normalize(again[mine[-1]], again, mine[-1])
    for x in (a, b):
        # Host memory the call writes: the program's stack or the repro's arrays, at no address in particular.
        x["args"] = {k: ("ptr", v[2]) if isinstance(v, tuple) and v and v[0] == "ptr" else v
                     for k, v in x["args"].items()}
    check(a == b, "%s %d (%s): the same call, arguments and status" % (label, n, orig["fn"]),
          json.dumps(a, indent=1, sort_keys=True), json.dumps(b, indent=1, sort_keys=True))
    return text


def test_host_failures():
    """repro for any failure (issue 30, item 1): Set, Get and query calls outside its table, replayed from the
    API description. The demo's cudnnSetTensor4dDescriptor(n=-1) is the default without a GPU, and says so; every
    failure of decode-odd against the real cuDNN 9.19 is listed, and each that repro replays round-trips under
    the spy (those it cannot, listed with why), a failed cudnnBackendSetAttribute among them, from its record and
    from the traced backend calls; a query whose descriptor's only Set failed replays that Set."""
    need_real()
    include_dir()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        demo = os.path.join(tmp, "demo")
        host_calls = os.path.join(PROGS, os.pardir, "examples", "host-calls")
        spied_real([host_calls], demo, check_rc=False)
        listed = run([CLI, "repro", "--list", demo]).stdout
        check("cudnnSetTensor4dDescriptor -> CUDNN_STATUS_BAD_PARAM (--failure 1)" in listed and
              "cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED (--failure 2)" in listed, "--list: both failures", listed)
        src = os.path.join(tmp, "bug.c")
        p = run([CLI, "repro", "-o", src, demo])
        check(p.stderr == "cudnnspy: repro: failure 1, cudnnSetTensor4dDescriptor -> CUDNN_STATUS_BAD_PARAM: the "
              "first failure that replays without a GPU, which this machine lacks (--failure N for another, --list "
              "for all)\n", "the default: which failure, and why", p.stderr)
        text = host_round_trip(tmp, demo, 1, "demo", [REAL], {})
        check("/* recorded: cudnnSetTensor4dDescriptor(tensor#1, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 224, "
              "224) */" in text and "It needs no handle, so it runs where there is no GPU." in text,
              "the call as recorded, and no handle", text)
        # decode-odd's failures against the real cuDNN (NULL handles, odd values, failed Sets).
        odd = os.path.join(tmp, "odd")
        spied_real([os.path.join(PROGS, "decode-odd")], odd)
        fails = [r for r in records(odd) if r["event"] == "failure"]
        lines = [l for l in run([CLI, "repro", "--list", odd]).stdout.splitlines() if "(--failure " in l]
        check(len(lines) == len(fails) == 13, "--list: every failure", "\n".join(lines), len(fails))
        refused = [l for l in lines if "repro cannot replay it: " in l]
        replayed = 0
        for l in lines:
            n = int(re.search(r"\(--failure (\d+)\)", l).group(1))
            q = run([CLI, "repro", "--failure", str(n), "-o", os.path.join(tmp, "x.c"), odd], check_rc=False)
            if q.returncode != 0:
                check(l in refused or "filled by" in q.stderr or "hold neither" in q.stderr,
                      "failure %d: refused with why" % n, l, q.stderr)
                continue
            host_round_trip(tmp, odd, n, "odd", [REAL], {})
            replayed += 1
        check(replayed == 13, "decode-odd: the failures repro replays (%d of 13)" % replayed, "\n".join(lines))
        # The failed cudnnBackendSetAttribute (failure 2, a unique id set on a finalized tensor): rebuilt from its
        # failure record above; here from the program's own backend calls, traced.
        traced = os.path.join(tmp, "odd-traced")
        spied_real([os.path.join(PROGS, "decode-odd")], traced, {"CUDNNSPY_TRACE": "cudnnBackend*"})
        check([r["fn"] for r in records(traced) if r["event"] == "failure"][1] == "cudnnBackendSetAttribute",
              "decode-odd's failure 2 is the backend SetAttribute", json.dumps(records(traced)[:5]))
        text = host_round_trip(tmp, traced, 2, "odd-traced", [REAL], {})
        check("in the program's order" in text and "None of the calls below takes a handle." in text,
              "SetAttribute from the traced calls, without a handle", text[:3000])
        text = host_round_trip(tmp, odd, 2, "odd-rebuilt", [REAL], {})
        check("the descriptor: its type and attributes as the failure record holds them" in text and
              text.count("status = cudnnBackendFinalize(backend_1);") == 1, "SetAttribute rebuilt from the record",
              text[:3000])
        # A descriptor cuDNN filled (decode-odd's failure 12, cudnnDeriveBNTensorDescriptor) replays through its
        # filling call above; once the descriptor it was filled from changed, the record says only who filled it.
        derive = os.path.join(tmp, "derive.py")
        with open(derive, "w") as f:
            f.write(DERIVE_PROGRAM)
        changed = os.path.join(tmp, "derive")
        os.makedirs(changed)
        run([sys.executable, derive, os.path.join(REAL, "libcudnn.so.9")],
            {"LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": changed, "CUDNNSPY_STDERR": "none"})
        got = [r["args"]["xDesc"] for r in records(changed) if r["event"] == "failure"]
        check(len(got) == 2 and got[0].get("filled", {}).get("fn") == "cudnnDeriveBNTensorDescriptor" and
              "filled" not in got[1] and got[1].get("filled_by") == "cudnnDeriveBNTensorDescriptor",
              "the filling call kept while its source stays as it was, and only then", json.dumps(got))
        host_round_trip(tmp, changed, 1, "derive", [REAL], {})
        q = run([CLI, "repro", "--failure", "2", "-o", os.path.join(tmp, "x.c"), changed], check_rc=False)
        listed = run([CLI, "repro", "--list", changed]).stdout
        check(q.returncode != 0 and "failure 2 cannot be replayed: " in q.stderr and
              "from descriptors that changed since" in q.stderr and "from descriptors that changed since" in listed,
              "a descriptor filled from one that changed since: refused, with why", q.stderr, listed)
        # A query whose descriptor's only Set failed: the failed Set is replayed, then the query.
        failing = os.path.join(tmp, "failed-set")
        bad = "cudnnSetTensor4dDescriptor=2000,cudnnGetConvolution2dForwardOutputDim=2000"
        spied([os.path.join(PROGS, "conv-legacy")], failing, {"FAKECUDNN_STATUS": bad})
        n = [r["fn"] for r in records(failing) if r["event"] == "failure"].index(
            "cudnnGetConvolution2dForwardOutputDim") + 1
        text = host_round_trip(tmp, failing, n, "failed-set", [FAKE9, FAKE_CUDART], {"FAKECUDNN_STATUS": bad})
        check("the Set calls the program made on it, the failed one last" in text and
              "check_recorded(cudnnSetTensor4dDescriptor(" in text, "the failed Set replayed before the query", text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# Through ctypes, against the fake cuDNN and CUDA runtime: calls outside repro's table on device data, a softmax in
# place (x and y at one address, 64 bytes past an allocation) and a max pooling.
DEVICE_PROGRAM = r"""
import ctypes, sys
from ctypes import byref, c_void_p, c_float
lib, rt = ctypes.CDLL(sys.argv[1]), ctypes.CDLL(sys.argv[2])
h, x, y, p, xd, yd = (c_void_p() for _ in range(6))
assert lib.cudnnCreate(byref(h)) == 0
for d in (x, y):
    assert lib.cudnnCreateTensorDescriptor(byref(d)) == 0
assert lib.cudnnSetTensor4dDescriptor(x, 0, 0, 2, 3, 4, 5) == 0
assert lib.cudnnSetTensor4dDescriptor(y, 0, 0, 2, 3, 2, 2) == 0
assert lib.cudnnCreatePoolingDescriptor(byref(p)) == 0
assert lib.cudnnSetPooling2dDescriptor(p, 0, 0, 2, 2, 0, 0, 2, 2) == 0
assert rt.cudaMalloc(byref(xd), 480 + 64) == 0 and rt.cudaMalloc(byref(yd), 96) == 0
xd = c_void_p(xd.value + 64)
one, zero = c_float(1), c_float(0.25)
print(lib.cudnnSoftmaxForward(h, 0, 1, byref(one), x, xd, byref(zero), x, xd))
print(lib.cudnnPoolingForward(h, p, byref(one), x, xd, byref(zero), y, yd))
"""


def test_host_device():
    """repro for a failing call outside its table on device data (issue 30): each address the program gave gets a
    buffer, sized by the descriptor named after the parameter (x: xDesc), at the recorded offset from a 256-byte
    boundary, one for the addresses that aliased; the repro round-trips under the spy against the fake cuDNN."""
    include_dir()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        prog = os.path.join(tmp, "device.py")
        with open(prog, "w") as f:
            f.write(DEVICE_PROGRAM)
        out = os.path.join(tmp, "device")
        os.makedirs(out)
        env = {"FAKECUDNN_STATUS": "cudnnSoftmaxForward=2000,cudnnPoolingForward=3000"}
        cudart = sorted(glob.glob(os.path.join(FAKE_CUDART, "libcudart.so.*[0-9]")))[0]
        run([sys.executable, prog, os.path.join(FAKE9, "libcudnn.so.9"), cudart],
            dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_OUTPUT=out, CUDNNSPY_STDERR="none"))
        listed = run([CLI, "repro", "--list", out]).stdout
        check(listed.count("(--failure ") == 2 and "cannot replay" not in listed, "--list: both replayed", listed)
        text = host_round_trip(tmp, out, 1, "softmax", [FAKE9, FAKE_CUDART], env)
        check(text.count("static void *dev_") == 1 and "(char *)dev_x_base + 64;" in text and
              "480 bytes */" in text, "the softmax in place: one buffer, 480 bytes, 64 past a boundary", text[:3000])
        text = host_round_trip(tmp, out, 2, "pooling", [FAKE9, FAKE_CUDART], env)
        check(text.count("static void *dev_") == 2 and "96 bytes */" in text, "the pooling: x and y", text[:3000])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_host_census():
    """Every failure of the programs that call cuDNN's host side against the real 9.19 (call-every, every
    function of the API description once; decode-all; host-sweep): each that --list says it replays round-trips
    under the spy; the rest are listed with why, and the test prints how many of each."""
    need_real()
    include_dir()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        for name in ("call-every", "decode-all", "host-sweep"):
            out = os.path.join(tmp, name)
            spied_real([os.path.join(PROGS, name)], out, check_rc=False)
            lines = [l for l in run([CLI, "repro", "--list", out]).stdout.splitlines() if "(--failure " in l]
            fails = [r for r in records(out) if r["event"] == "failure"]
            check(len(lines) == len(fails), "%s: --list names every failure" % name, len(lines), len(fails))
            refused = {}
            replayed = on_gpu = 0
            for l in lines:
                n = int(re.search(r"\(--failure (\d+)\)", l).group(1))
                if "repro cannot replay it: " in l:
                    why = re.sub(r"^cudnn\w+: ", "", l.split("repro cannot replay it: ", 1)[1])
                    refused[why] = refused.get(why, 0) + 1
                    continue
                if "[needs a GPU: " in l:
                    # Its replay allocates device memory (issue 30: devSeqLengths, filled with what cuDNN requires it
                    # to hold): no GPU here, so against the fake cuDNN told to fail as the real one did, with the
                    # fake CUDA runtime's memory. The real one without a GPU says so and exits 2.
                    fn = re.search(r"failure\s+(cudnn\w+) ", l).group(1)
                    status = [r for r in records(out) if r["event"] == "failure"][n - 1]["status"]
                    text = host_round_trip(tmp, out, n, name + "-fake", [FAKE9, FAKE_CUDART],
                                           {"FAKECUDNN_STATUS": "%s=%d" % (fn, status)})
                    # call-every sets its RNN data descriptor with lengths {2, 1}, and no sequence data descriptor.
                    want = "_init[] = { 0 }" if "MultiHeadAttn" in fn else "_init[] = { 2, 1 }"
                    check(fn == "cudnnCTCLoss_v8" or ("cudaMemcpy(dev_devSeqLengths" in text and want in text),
                          "%s %d: the sequence lengths copied to the device as the data descriptor was set" % (
                              name, n), text)
                    # Its labels and lengths in GPU memory: one buffer for the address they shared, as large as
                    # the lengths (probsDesc's batch dimension, 3), zeroed.
                    check(fn != "cudnnCTCLoss_v8" or "dev_labels, dev_labels, dev_labels" in text and
                          "in the program, 12 bytes" in text, "%s %d: CTC's device arrays" % (name, n), text)
                    on_gpu += 1
                    continue
                host_round_trip(tmp, out, n, name, [REAL], {})
                replayed += 1
            print("%s: %d failures, %d replayed and round-tripped, %d of them against the fake (device memory), "
                  "%d not replayed" % (name, len(lines), replayed + on_gpu, on_gpu, len(lines) - replayed - on_gpu))
            # Every one of them (issue 30).
            least = len(lines)
            replayed += on_gpu
            check(replayed >= least, "%s: at least %d of %d failures replayed" % (name, least, len(lines)),
                  "\n".join(lines))
            for why, k in sorted(refused.items(), key=lambda x: -x[1]):
                print("   %3d  %s" % (k, why))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# The calls call-every makes that leave the objects the others need: these succeed, every other fails.
FAKE_CENSUS_KEEP = ("cudnnCreate", "cudnnSet", "cudnnDestroy", "cudnnBackendCreateDescriptor",
                    "cudnnBackendSetAttribute", "cudnnBackendDestroyDescriptor", "cudnnBackendFinalize",
                    "cudnnRNNSetClip", "cudnnGetVersion", "cudnnGetErrorString", "cudnnGetLastErrorString",
                    "cudnnGetProperty", "cudnnGetCudartVersion", "cudnnGetMaxDeviceVersion")


def test_fake_census():
    """Every failure against the fake (issue 30: repro for any failure): call-every, every function of the API
    description once, with each call but those that make and set objects told to fail (BAD_PARAM): each failure
    --list names must replay, and round-trip under the spy against the fake told the same."""
    api = open(os.path.join(HERE, "..", "..", "shim", "api", "cudnn.api")).read()
    names = re.findall(r"^function \S+ (cudnn\w+) ", api, re.M)
    fail = ",".join("%s=2000" % n for n in names if not n.startswith(FAKE_CENSUS_KEEP) and
                    not n.endswith("VersionCheck"))
    env = {"FAKECUDNN_STATUS": fail}
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        out = os.path.join(tmp, "call-every")
        p = spied([os.path.join(PROGS, "call-every")], out, env)
        check(p.returncode == 0, "call-every against the fake", p.stdout, p.stderr)
        lines = [l for l in run([CLI, "repro", "--list", out]).stdout.splitlines() if "(--failure " in l]
        fails = [r for r in records(out) if r["event"] == "failure"]
        check(len(lines) == len(fails) >= 120, "--list names every failure (%d)" % len(fails), len(lines))
        refused = [l for l in lines if "repro cannot replay it: " in l]
        check(not refused, "every failure replays", "\n".join(refused))
        for l in lines:
            n = int(re.search(r"\(--failure (\d+)\)", l).group(1))
            host_round_trip(tmp, out, n, "fake", [FAKE9, FAKE_CUDART], env)
        print("call-every against the fake: %d failures, every one replayed and round-tripped" % len(lines))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_all_functions():
    """all-functions against the fake, every function of the API description, cuDNN 8's too (issue 30: repro for
    any failure): every failure replays and round-trips under the spy, including calls of functions only cuDNN 8
    has, which the fake 9 lacks and the spy answers with NOT_INITIALIZED (the repro declares them, from the API
    description, weak: it builds against cuDNN 9's headers and links against a cuDNN without them), and
    cudnnCreate(NULL), replayed with the NULL the program passed."""
    api = open(os.path.join(HERE, "..", "..", "shim", "api", "cudnn.api")).read()
    only8 = set(re.findall(r"^function \S+ (cudnn\w+) @8(?! @9)", api, re.M))
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        out = os.path.join(tmp, "all-functions")
        p = spied([os.path.join(PROGS, "all-functions")], out)
        check(p.returncode == 0, "all-functions against the fake", p.stdout, p.stderr)
        lines = [l for l in run([CLI, "repro", "--list", out]).stdout.splitlines() if "(--failure " in l]
        fails = [r for r in records(out) if r["event"] == "failure"]
        check(len(lines) == len(fails) and len([r for r in fails if r["fn"] in only8]) >= 50,
              "--list names every failure, cuDNN 8's functions among them (%d)" % len(fails), "\n".join(lines))
        refused = [l for l in lines if "repro cannot replay it: " in l]
        check(not refused, "every failure replays", "\n".join(refused))
        for l in lines:
            if l in refused:
                continue
            n = int(re.search(r"\(--failure (\d+)\)", l).group(1))
            text = host_round_trip(tmp, out, n, "all", [FAKE9, FAKE_CUDART], {})
            if fails[n - 1]["fn"] in only8:
                # The spy's own answer, recorded as such: the fake 9 has no such function.
                check("#pragma weak %s\n" % fails[n - 1]["fn"] in text and fails[n - 1].get("no_function") and
                      "[the spy's answer: its cuDNN has no such function]" in l and
                      "Its status was the spy's: the cuDNN the call reached had no such function" in text,
                      "%s: declared weak, its status the spy's" % fails[n - 1]["fn"], l, text[:3000])
        print("all-functions against the fake: %d failures (%d of cuDNN 8's functions), %d replayed and round-tripped,"
              " %d refused: %s" % (len(lines), len([r for r in fails if r["fn"] in only8]), len(lines) - len(refused),
                                   len(refused), "; ".join(refused) or "none"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_frontend_probes():
    """The graph API as cudnn-frontend drives it (graph-frontend against the fake: 30 configs from one heuristics
    query, the first 21 engines unsupported): each of the 43 probing failures, 22 shared-memory questions to engine
    configs cuDNN filled and 21 plans that did not finalize, replays and round-trips under the spy (issue 30),
    rebuilt from the records though the program traced nothing and destroyed each operation's tensors early: the
    graph record holds them whole, the heuristics record each config's engine, a plan record its knobs."""
    unsupported = ",".join(str(e) for e in [12, 0, 7] + list(range(103, 121)))
    env = {"FAKECUDNN_HEUR_COUNT": "30", "FAKECUDNN_UNSUPPORTED_ENGINES": unsupported}
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        out = os.path.join(tmp, "frontend")
        p = spied([os.path.join(PROGS, "graph-frontend"), "40"], out, env)
        check(p.returncode == 0, "graph-frontend against the fake", p.stdout, p.stderr)
        lines = [l for l in run([CLI, "repro", "--list", out]).stdout.splitlines() if "(--failure " in l]
        fails = [r for r in records(out) if r["event"] == "failure"]
        check(len(lines) == len(fails) == 43, "--list names every failure", "\n".join(lines))
        refused = [l for l in lines if "repro cannot replay it: " in l]
        check(not refused, "every failure replays", "\n".join(refused))
        for l in lines:
            n = int(re.search(r"\(--failure (\d+)\)", l).group(1))
            host_round_trip(tmp, out, n, "frontend", [FAKE9, FAKE_CUDART], env)
        print("graph-frontend's probing: %d failures, every one replayed and round-tripped" % len(lines))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_injected():
    """A status CUDNNSPY_INJECT made is no cuDNN failure (issue 30: true answers): --list marks it, the default
    pick takes a failure cuDNN gave first and an injected one only when there is none, saying so, and the file says
    cuDNN never saw the call and which rule made its status; under the spy with the same rule it round-trips."""
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    rule = {"CUDNNSPY_INJECT": "cudnnSetTensor4dDescriptor=EXECUTION_FAILED"}
    host_calls = os.path.join(PROGS, os.pardir, "examples", "host-calls")
    try:
        out = os.path.join(tmp, "injected")
        spied([host_calls], out, rule)
        listed = [l for l in run([CLI, "repro", "--list", out]).stdout.splitlines() if "(--failure " in l]
        check(len(listed) == 2 and all("[injected by CUDNNSPY_INJECT: cuDNN never saw it]" in l for l in listed),
              "--list marks both", "\n".join(listed))
        src = os.path.join(tmp, "bug.c")
        p = run([CLI, "repro", "-o", src, out])
        check("failure 1, cudnnSetTensor4dDescriptor -> CUDNN_STATUS_EXECUTION_FAILED: the first failure whose "
              "status the spy made (injected" in p.stderr, "the default says why", p.stderr)
        text = host_round_trip(tmp, out, 1, "injected", [FAKE9, FAKE_CUDART], rule)
        check("Its status was injected by cudnnspy (CUDNNSPY_INJECT): cuDNN never saw the call" in text and
              "rule 'cudnnSetTensor4dDescriptor=EXECUTION_FAILED'" in text and " * cuDNN's message: " not in text,
              "the file says so", text[:2500])
        # The first Set injected, the second refused by the fake itself: the second is the default.
        both = os.path.join(tmp, "both")
        spied([host_calls], both, {"CUDNNSPY_INJECT": "cudnnSetTensor4dDescriptor=EXECUTION_FAILED@1",
                                   "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000"})
        p = run([CLI, "repro", "-o", src, both], check_rc=False)
        fails = [r for r in records(both) if r["event"] == "failure"]
        check([r.get("injected", False) for r in fails[:2]] == [True, False] and
              p.stderr.startswith("cudnnspy: repro: failure 2, cudnnSetTensor4dDescriptor -> CUDNN_STATUS_BAD_PARAM"),
              "a failure cuDNN gave first", p.stderr, json.dumps(fails)[:2000])
        # A rule for a share of the calls (%P) or the Nth (@N): the file names the rule for its own call.
        for extra in ("cudnnSetTensor4dDescriptor=EXECUTION_FAILED%10", "cudnnSet*=EXECUTION_FAILED@7"):
            share = os.path.join(tmp, "share-%d" % len(extra))
            spied([host_calls, "100"], share, {"CUDNNSPY_INJECT": extra})
            got = [r for r in records(share) if r["event"] == "failure" and r.get("injected")]
            check(got, "%s: injected" % extra)
            text = host_round_trip(tmp, share, 1, "share-%d" % len(extra), [FAKE9, FAKE_CUDART],
                                   {"CUDNNSPY_INJECT": extra})
            check("call: CUDNNSPY_INJECT='%s=%d@" % (got[0]["fn"], got[0]["status"]) in text, "%s: the rule" % extra,
                  text[:2500])
        print("injected: marked, picked last, said, round-tripped under the rule (every call, %P, @N)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_default_settings():
    """A descriptor the program created and never set shows cuDNN's defaults beside its shape (math type, group
    count, reorder type, as cuDNN's log does): its replayed Set, failed, must not be preceded by Set calls of those
    defaults, which the program never made (issue 30: same calls; decode-all's and failures' convolution Sets in
    the census)."""
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    env = {"FAKECUDNN_STATUS": "cudnnSetConvolutionNdDescriptor=2000", "CUDNNSPY_TRACE": "*"}
    try:
        out = os.path.join(tmp, "decode-all")
        spied([os.path.join(PROGS, "decode-all")], out, env)
        fails = [r for r in records(out) if r["event"] == "failure"]
        n = next(i for i, r in enumerate(fails, 1) if r["fn"] == "cudnnSetConvolutionNdDescriptor")
        conv = fails[n - 1]["args"]["convDesc"]
        check(conv.get("unset") and conv.get("mathType") == "CUDNN_DEFAULT_MATH" and conv.get("groupCount") == 1,
              "the record shows the defaults beside an unset descriptor", json.dumps(conv))
        text = host_round_trip(tmp, out, n, "defaults", [FAKE9, FAKE_CUDART], env)
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        check("cudnnSetConvolutionMathType" not in code and "cudnnSetConvolutionGroupCount" not in code,
              "no Set of a default", text[:3000])
        print("defaults beside an unset convolution: not set again, the failed Set round-trips")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_graph_untraced():
    """conv-graph against the real cuDNN 9.19 without a GPU and nothing traced (the default mode): the engine
    config it built by hand fails to finalize, then the plan on it, then a query of the plan (issue 30). Each of
    those replays and round-trips, made again from the records alone: the config's engine and knobs from the
    plan's failure record, the graph from its record, with no handle where the graph had none (its record's
    `handle`), and the config left unfinalized under the plan, as it was."""
    need_real()
    include_dir()
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    try:
        out = os.path.join(tmp, "conv-graph")
        spied_real([os.path.join(PROGS, "conv-graph")], out, check_rc=False)
        graphs = [r for r in records(out) if r["event"] == "graph"]
        check(len(graphs) == 1 and "handle" in graphs[0] and graphs[0]["handle"] is None,
              "the graph record says it had no handle", json.dumps(graphs)[:1500])
        lines = [l for l in run([CLI, "repro", "--list", out]).stdout.splitlines() if "(--failure " in l]
        fails = [r for r in records(out) if r["event"] == "failure"]
        want = [(f["fn"], f["args"].get("descriptor", {}).get("type")) for f in fails]
        check(("cudnnBackendFinalize", "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR") in want and
              ("cudnnBackendFinalize", "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR") in want,
              "the config's and the plan's failed Finalize are recorded", "\n".join(lines))
        refused = [l for l in lines if "repro cannot replay it: " in l]
        check(not refused, "every failure replays", "\n".join(refused))
        tripped = 0
        for l in lines:
            n = int(re.search(r"\(--failure (\d+)\)", l).group(1))
            if fails[n - 1]["fn"] == "cudnnBackendExecute":
                continue    # needs a GPU: repro-round-trip-graph replays executions against the fake
            host_round_trip(tmp, out, n, "graph", [REAL], {})
            tripped += 1
        check(tripped >= 4, "the host-side failures round-trip (%d)" % tripped, "\n".join(lines))
        print("conv-graph untraced against the real cuDNN: %d host-side failures round-tripped" % tripped)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_cuda_error_after():
    """A call that returned SUCCESS while the GPU faulted (CUDNNSPY_SYNC blames it: cudaErrorIllegalAddress after
    gpu-calls' third cudnnAddTensor): its repro replays the call and compares the GPU's error after it with the
    recorded one, the status and the error both; against the fake CUDA runtime told to fault at the repro's one
    launch, it round-trips (issue 30: every failure, the census's last one counted apart)."""
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    env = {"FAKECUDA_ASYNC_ERROR_AT": "3", "CUDNNSPY_SYNC": "cudnnAddTensor"}
    try:
        out = os.path.join(tmp, "gpu-calls")
        spied([os.path.join(PROGS, "gpu-calls"), "5", os.path.join(FAKE_CUDART, "libcudart.so.12")], out, env)
        fails = [r for r in records(out) if r["event"] == "failure"]
        check(len(fails) == 1 and fails[0]["status"] == 0 and fails[0]["cuda_error"] == 700,
              "one failure: SUCCESS, then the GPU's 700", json.dumps(fails)[:2000])
        text = host_round_trip(tmp, out, 1, "cuda-after", [FAKE9, FAKE_CUDART], dict(env, FAKECUDA_ASYNC_ERROR_AT="1"))
        check("the same CUDA error as recorded" in text, "the program compares the CUDA error", text[-3000:])
        print("a CUDA error after SUCCESS: replayed and compared, round-tripped")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_two_majors():
    """two-majors: a library linked to cuDNN 8 and one linked to cuDNN 9 in one process, each failing a traced
    Set (issue 30: every failure, whichever copy answered it). Each failure's repro builds against the cuDNN its
    call reached, as its build command says (cuDNN 9's headers, cuDNN 8's library: cudnnGetLastErrorString
    is weak), and round-trips there; and a failed shape Set leaves the shape Set before it in what a later
    call's repro replays (decode-odd traced whole against the real cuDNN: a failed cudnnSetTensor4dDescriptorEx
    after a cudnnSetTensor4dDescriptor, then cudnnAddTensor on it)."""
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    env = {"FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=3", "CUDNNSPY_TRACE": "*"}
    try:
        out = os.path.join(tmp, "two-majors")
        spied([os.path.join(PROGS, "two-majors"), os.path.join(PROGS, "libmajor8.so"),
               os.path.join(PROGS, "libmajor9.so")], out, env)
        fails = [r for r in records(out) if r["event"] == "failure"]
        check({f["copy"] for f in fails} == {0, 1}, "failures of both copies", json.dumps(fails)[:2000])
        for n in range(1, len(fails) + 1):
            text = host_round_trip(tmp, out, n, "majors", [FAKE_CUDART], env)
            check("#pragma weak cudnnGetLastErrorString" in text, "cuDNN 9's own, weak", text[:3000])
            # Built against the copy the call reached: the records' library of its copy.
            want = os.path.join(PROGS, "fake", "fake8" if fails[n - 1]["copy"] == 0 else "fake9")
            check(" -L%s " % os.path.realpath(want) in text or " -L%s " % want in text,
                  "failure %d (copy %d): built against %s" % (n, fails[n - 1]["copy"], want), text[:3000])
        print("two-majors: %d failures of both copies, each built against its own and round-tripped" % len(fails))
        if REAL and os.path.exists(os.path.join(REAL, "libcudnn.so.9")):
            odd = os.path.join(tmp, "odd")
            spied_real([os.path.join(PROGS, "decode-odd")], odd, {"CUDNNSPY_TRACE": "*"})
            odd_fails = [r for r in records(odd) if r["event"] == "failure"]
            for n in range(1, len(odd_fails) + 1):
                host_round_trip(tmp, odd, n, "odd", [REAL], {"CUDNNSPY_TRACE": "*"})
            print("decode-odd traced whole: %d failures round-tripped" % len(odd_fails))
        else:
            print("no real cuDNN: decode-odd traced whole not run")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_lost_failed_set():
    """A failed Set on a descriptor whose last Set failed too, when that earlier failure is not in the records
    (python/failing.py daemon-exit: daemon threads failing the same Set while the interpreter ends, one
    thread's record written before another's, or cut at the exit): the Set's own arguments are whole, and it
    replays on a new descriptor (issue 30: it was refused). And a function only cuDNN 9 has, answered by the spy
    for a cuDNN 8 behind the drop-in (missing-function's cudnnGraphVersionCheck): its repro declares it weak, links
    against that cuDNN 8, and returns the spy's status in 8's numbering."""
    tmp = tempfile.mkdtemp(prefix="cudnnspy-repro-")
    env = {"FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000", "CUDNNSPY_FORMAT": "json"}
    try:
        out = os.path.join(tmp, "host-calls")
        spied([os.path.join(PROGS, os.pardir, "examples", "host-calls"), "3"], out, env)
        name = [f for f in os.listdir(out) if f.endswith(".jsonl")][0]
        lines = open(os.path.join(out, name)).read().splitlines(True)
        first = next(i for i, l in enumerate(lines) if '"event":"failure"' in l)
        edit(out, name, "".join(lines[:first] + lines[first + 1:]))
        fails = [r for r in records(out) if r["event"] == "failure"]
        check(fails[0]["args"]["tensorDesc"].get("set_failed") == "cudnnSetTensor4dDescriptor",
              "the first failure left names a failed Set the records lost", json.dumps(fails[0])[:1500])
        listed = run([CLI, "repro", "--list", out]).stdout
        check("repro cannot replay it" not in listed, "every failure replays", listed)
        host_round_trip(tmp, out, 1, "lost", [FAKE9, FAKE_CUDART], env)
        # cuDNN 9's own function against a cuDNN 8 behind the drop-in.
        mf = os.path.join(tmp, "missing")
        fake8 = os.path.join(PROGS, "fake", "fake8", "libcudnn.so.8")
        dropin9 = os.path.join(os.path.dirname(PRELOAD), "dropin9")
        os.makedirs(mf)
        run([os.path.join(PROGS, "missing-function")], {"LD_LIBRARY_PATH": dropin9, "CUDNNSPY_LIBRARY": fake8,
                                                        "CUDNNSPY_OUTPUT": mf, "CUDNNSPY_STDERR": "none"},
            check_rc=False)
        got = [r for r in records(mf) if r["event"] == "failure" and r["fn"] == "cudnnGraphVersionCheck"]
        check(got and got[0].get("no_function"), "the spy answered cudnnGraphVersionCheck", json.dumps(got)[:1000])
        n = [r for r in records(mf) if r["event"] == "failure"].index(got[0]) + 1
        src = os.path.join(tmp, "gv.c")
        run([CLI, "repro", "--failure", str(n), "-o", src, mf])
        text = open(src).read()
        check("#pragma weak cudnnGraphVersionCheck" in text, "declared weak", text[:3000])
        build(src, src[:-2], include_dir(), [os.path.dirname(fake8), FAKE_CUDART])
        q = run([src[:-2]], {"LD_LIBRARY_PATH": os.path.dirname(fake8) + ":" + FAKE_CUDART}, check_rc=False)
        check(q.returncode == 0 and "the same status as recorded" in q.stdout, "its status against cuDNN 8",
              q.stdout, q.stderr)
        print("a failed Set after a lost one: replayed; cudnnGraphVersionCheck against cuDNN 8: weak, the same status")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


TESTS = {
    "lost-failed-set": test_lost_failed_set,
    "two-majors": test_two_majors,
    "cuda-error-after": test_cuda_error_after,
    "graph-untraced": test_graph_untraced,
    "default-settings": test_default_settings,
    "injected": test_injected,
    "frontend-probes": test_frontend_probes,
    "all-functions": test_all_functions,
    "fake-census": test_fake_census,
    "host-device": test_host_device,
    "host-census": test_host_census,
    "host-failures": test_host_failures,
    "hostile": test_hostile,
    "round-trip-legacy": test_round_trip_legacy,
    "signature": test_signature,
    "round-trip-graph": test_round_trip_graph,
    "real-no-gpu": test_real_no_gpu,
    "usage": test_usage,
}

if __name__ == "__main__":
    try:
        TESTS[sys.argv[1]]()
    except Failed as e:
        print("FAIL:", e)
        sys.exit(1)
    print("ok")
