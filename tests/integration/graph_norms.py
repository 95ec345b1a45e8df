#!/usr/bin/env python3
"""Normalization graphs named by what they compute (issue 30, item 5): a layer norm and an RMS norm, built as
cudnn-frontend's samples build them against the real cuDNN (host-only, through a device-properties descriptor),
read `norm_forward(MODE,PHASE)` with each tensor named by its attribute without the prefix the operation's
attributes share (`xdesc`, not `norm_fwd_xdesc`).

usage: graph_norms.py NAME     (meson passes the paths in the environment)
"""
import os
import sys
import tempfile

import scenarios
from scenarios import PRELOAD, REAL, check, events, need_real, prog, records_in, run

SCENARIOS = {}
scenario = scenarios.registry(SCENARIOS)

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
    """Each norm graph's records (graph, heuristics) carry its signature with mode and phase; the program's output
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


if __name__ == "__main__":
    sys.exit(scenarios.main_of(SCENARIOS))
