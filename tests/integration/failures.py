#!/usr/bin/env python3
"""Failures and what is said of them: statuses returned unchanged and counted, failure records (decoded
arguments, cuDNN's message, stack, recent calls), cuDNN's last error string, a failed call's inputs, fault
injection (issue 6), NOT_INITIALIZED explained, static functions named, errno as the program would see it.

usage: failures.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import os
import re
import sys

import spytest
from spytest import (DROPIN9, FAKE8, FAKE9, FAKE_CUDA, FAKE_CUDART, PRELOAD, REAL, banner_path, check, events, gpu_env,
                     log_agrees, logged, need_real, odd_run, only, only_file, prog, run, same_file, same_output,
                     summary_row)

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


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
def stack_seen():
    """Failures from stacks alike to the spy's cache of stacks seen before: two paths through one call site,
    recursion of changing depth, frames that allocate so that the innermost stack pointer stays while an outer
    return address moves (a stale copy of the old one left where it was), and a signal handler. Each record's
    stack names the function the program says made the failure, in the order made."""
    env = {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000"}
    plain = run([prog("stack-seen")], env)
    p = run([prog("stack-seen")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_STDERR="none"))
    same_output(plain, p, "under preload")
    said = p.stdout.split()
    fails = events(p.records, "failure", "cudnnSetTensor4dDescriptor")
    check(len(fails) == len(said) == 22, "22 failures recorded", "%d records, %d said" % (len(fails), len(said)))
    depth = {"deep1": 1, "deep2": 2, "deep3": 3}
    for i, (who, rec) in enumerate(zip(said, sorted(fails, key=lambda r: r["t_ns"]))):
        names = [f["symbol"] for f in rec["stack"]]
        check(names[:1] == ["leaf"], "failure %d: made in leaf" % i, repr(names))
        if who in depth:
            want = ["leaf"] + ["deep"] * depth[who] + ["main"]
            check(names[:len(want)] == want, "failure %d: %s" % (i, who), repr(names))
        elif who.startswith("pad"):
            check(names[:4] == ["leaf", "mid", who, "main"], "failure %d: %s" % (i, who), repr(names))
        elif who == "on_alarm":
            check("on_alarm" in names[:3] and "main" in names, "failure %d: in the handler" % i, repr(names))
        else:
            check(names[:3] == ["leaf", who, "main"], "failure %d: %s" % (i, who), repr(names))


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


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
