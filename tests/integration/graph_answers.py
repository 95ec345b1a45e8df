#!/usr/bin/env python3
"""True answers about graphs (issue 30): normalization graphs named by what they compute (item 5), and tuning
told from replanning (item 2).

usage: graph_answers.py NAME     (meson passes the paths in the environment)
"""
import os
import sys
import tempfile

import spytest
from spytest import FAKE9, PRELOAD, REAL, check, events, need_real, prog, records_in, run

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)

X = "float:4096x128x1x1:NCHW"
ONE = "float:1x128x1x1:NCHW"
ROWS = "float:4096x1x1x1:NCHW"
EXPECT = {
    "layernorm": "graph norm_forward(layer_norm,training) xdesc=%s scale_desc=%s bias_desc=%s "
                 "epsilon_desc=float:1x1x1x1:NCHW ydesc=%s mean_desc=%s inv_variance_desc=%s" % (X, ONE, ONE, X, ROWS,
                                                                                                 ROWS),
    "rmsnorm": "graph norm_forward(rms_norm,inference) xdesc=%s scale_desc=%s epsilon_desc=float:1x1x1x1:NCHW "
               "ydesc=%s" % (X, ONE, X),
}


@scenario
def graph_norm_names_real():
    """A layer norm and an RMS norm, built as cudnn-frontend's samples build them against the real cuDNN
    (host-only, through a device-properties descriptor), read `norm_forward(MODE,PHASE)` with each tensor named by
    its attribute without the prefix the operation's attributes share (`xdesc`, not `norm_fwd_xdesc`). Each norm
    graph's records (graph, heuristics) carry its signature with mode and phase; the program's output
    and exit status are its own."""
    need_real()
    for name, want in EXPECT.items():
        with tempfile.TemporaryDirectory() as d:
            argv = [prog("real-graph"), "-", name]
            plain = run(argv, {"LD_LIBRARY_PATH": REAL}, check_rc=False)
            spied = run(argv, {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": d,
                               "CUDNNSPY_TRACE": "cudnnBackend*"}, check_rc=False)
            check(plain.stdout == spied.stdout and plain.returncode == spied.returncode == 0,
                  "%s: the program's own output, every graph finalized" % name, plain.stdout, spied.stdout)
            recs = records_in(d)
            sigs = {r.get("signature") for r in events(recs, "graph") + events(recs, "heuristics")}
            check(sigs == {want}, "%s: the signature" % name, repr(sigs), want)
            check("norm_fwd_" not in spied.stderr and all("norm_fwd_" not in (s or "") for s in sigs),
                  "%s: no attribute keeps the operation's prefix" % name, repr(sigs))


def findings(p):
    return {f["id"]: f for f in events(p.records, "finding")}


@scenario
def graph_tuning_not_replanning():
    """One heuristics query whose 40 configs are each built once, then one executed (cudnn-frontend's
    BuildPlanPolicy_t::ALL, what autotuning asks for) is tuning: neither `replanning` nor `untuned-graph`. Plans
    built after the graph ran, or one config built again and again, are replanning, with both counts."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "FAKECUDNN_HEUR_COUNT": "40"}
    argv = [prog("graph-frontend"), "40", "all"]
    plain = run(argv, {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_HEUR_COUNT": "40"})
    tuned = run(argv, env)
    check(plain.stdout == tuned.stdout and tuned.stdout.count(" plan 0\n") == 40, "40 plans built, the program's "
          "own output", tuned.stdout)
    check(not findings(tuned) and "replanning" not in tuned.stderr, "tuning: no finding", repr(findings(tuned)),
          tuned.stderr)
    after = run([prog("graph-frontend"), "40", "after"], env)
    f = findings(after)
    check(after.stdout.count("after 0\n") == 39 and "replanning" in f and
          ": 40 plans finalized (" in f["replanning"]["message"] and
          ", 39 of them for a config already built or after the graph ran" in f["replanning"]["message"],
          "plans built after the graph ran: replanning", repr(f), after.stdout[-300:])
    again = run([prog("graph-frontend"), "40", "replan"], env)
    f = findings(again)
    check("replanning" in f and ": 21 plans finalized (" in f["replanning"]["message"] and
          ", 20 of them for a config already built" in f["replanning"]["message"], "one config built 21 times",
          repr(f))


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
