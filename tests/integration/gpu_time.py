#!/usr/bin/env python3
"""GPU time and the synchronizing mode (issue 6): GPU time from CUDA events attached to the right calls, the event
pool running dry, stream capture, no CUDA runtime, CUDNNSPY_SYNC blaming the call that caused a fault.

usage: gpu_time.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import re
import sys

import spytest
from spytest import FAKE9, check, cudart, events, gpu_env, prog, run, summary_row

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


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


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
