#!/usr/bin/env python3
"""Threads calling cuDNN at once: exact counts through the fake and the real cuDNN, every call recorded once,
no torn lines, under stress.

usage: threads.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import json
import os
import sys
import tempfile

import schema
import spytest
from spytest import FAKE9, PRELOAD, REAL, check, events, need_real, prog, records_in, run, summary_row

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


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
def threads_records():
    """8 threads traced at once: every call recorded once, no torn lines."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "2000"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                            "CUDNNSPY_TRACE": "cudnnSetTensor4dDescriptor"})
        recs = records_in(d)
        calls = events(recs, "call", "cudnnSetTensor4dDescriptor")
        check(len(calls) == 16000, "16000 records", str(len(calls)))
        per_tid = {}
        for c in calls:
            per_tid[c["tid"]] = per_tid.get(c["tid"], 0) + 1
        check(sorted(per_tid.values()) == [2000] * 8, "2000 per thread", repr(per_tid))


@scenario
def threads_stress():
    """8 threads x 200,000 calls, every call traced: exact counts, every record present and whole."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "200000"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                              "CUDNNSPY_TRACE": "cudnnSetTensor4dDescriptor"})
        check("threads 8 calls 200000 fails 0" in p.stdout, "ran", p.stdout)
        per_tid, total = {}, 0
        for name in os.listdir(d):
            for line in schema.record_lines(os.path.join(d, name)):
                if b'"event":"call"' not in line:
                    continue
                r = json.loads(line)
                per_tid[r["tid"]] = per_tid.get(r["tid"], 0) + 1
                total += 1
        check(total == 1600000 and sorted(per_tid.values()) == [200000] * 8, "every call, once",
              "%d %r" % (total, per_tid))
        check(summary_row(p.stderr, "cudnnSetTensor4dDescriptor")[:2] == (1600000, 0), "counts", p.stderr)


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
