#!/usr/bin/env python3
"""Record format 2 (CUDNNSPY_FORMAT=binary) and the commands that read records back: cudnnspy dump (whole files, cut
or damaged ones, pipes), report and repro over format 2, and cudnnspy run saying the job after the program.

usage: formats.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import sanitizer
import schema
import spytest
from spytest import (BUNDLED9, E, FAKE8, FAKE9, PRELOAD, REAL, check, cudart, events, gpu_env, need_real, only, prog,
                     records_in, run)

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


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
def binary_texts_kept():
    """Alike calls write a descriptor's text once: the same Nd shape set again from arrays elsewhere each time,
    and a Set refused again and again on one descriptor (each refusal forgets the same thing), 40 of each,
    traced, against the fake and the real cuDNN. Format 1 and format 2 still read the same."""
    for label, env in (("fake", {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000"}),
                       ("real", {"LD_LIBRARY_PATH": REAL} if REAL else None)):
        if env is None:
            continue
        recs, _, bdata, _ = same_records("same-sets, " + label, [prog("same-sets"), "40"],
                                         dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_STDERR="none"))
        check(any(r.get("fn") == "cudnnSetTensorNdDescriptor" for r in recs) and
              len(events({"": recs}, "failure", "cudnnSetTensor4dDescriptor")) == 40,
              "%s: 40 calls and 40 failures recorded" % label)
        texts = [f for t, f, _ in schema.frames(bdata) if t == schema.TAG_TEXT]
        check(len(texts) <= 8, "%s: %d texts for 80 alike calls on two descriptors" % (label, len(texts)),
              *[repr(f[:80]) for f in texts[:6]])
    # Each failure's recent calls are mostly the last one's, kept packed: the same as format 1's whatever the
    # recorder's length, a whole one (256, whose oldest entry the call overwrote) included.
    for flight in ("1", "3", "255", "256"):
        recs, _, _, _ = same_records("same-sets, CUDNNSPY_FLIGHT=" + flight, [prog("same-sets"), "300"],
                                     {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000",
                                      "LD_PRELOAD": PRELOAD, "CUDNNSPY_STDERR": "none", "CUDNNSPY_FLIGHT": flight})
        last = events({"": recs}, "failure", "cudnnSetTensor4dDescriptor")[-1]
        check(len(last["recent"]) == int(flight), "CUDNNSPY_FLIGHT=%s: as many recent calls" % flight,
              repr(last["recent"][:4]))


@scenario
def binary_module_texts():
    """A failure's stack through six libraries (and the program, and libc), 30 times: each module's text is
    written once, not again at every failure (their page-aligned load addresses once all shared one place of
    the text cache, where each pushed the others out). Format 1 and format 2 read the same."""
    env = {"LD_LIBRARY_PATH": os.pathsep.join([FAKE9, os.path.dirname(prog("chain-call"))]),
           "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000", "LD_PRELOAD": PRELOAD, "CUDNNSPY_STDERR": "none"}
    recs, _, bdata, _ = same_records("chain-call", [prog("chain-call"), "30"], env)
    fails = events({"": recs}, "failure", "cudnnSetTensor4dDescriptor")
    check(len(fails) == 30 and all(["chain_%d" % k for k in range(6, 0, -1)] ==
                                   [f["symbol"] for f in r["stack"][:6]] for r in fails),
          "30 failures, each with the six links named", repr(fails[0]["stack"] if fails else None))
    texts = [f for t, f, _ in schema.frames(bdata) if t == schema.TAG_TEXT]
    modules = [f for f in texts if b"libchain" in f]
    check(len(modules) == 6, "each of the six libraries' texts written once (%d)" % len(modules),
          *[repr(f[:60]) for f in modules[:8]])
    check(len(texts) <= 12, "%d texts in all for 30 alike failures" % len(texts), *[repr(f[:60]) for f in texts])


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
        check(data[0] == schema.TAG_FILE and data[1] == 22 and data[10] == 8, "a version 8 file frame of 22 bytes",
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


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
