#!/usr/bin/env python3
"""sublib-version-mismatch as one finding per conflict (issue 30, item 4): a dispatcher running the
sub-libraries of another directory is one line naming both directories and the versions; of the same version it
is a warning, of another version (or a failed version check) an error.

usage: audit_sublibs.py NAME     (meson passes the paths in the environment)
"""
import os
import shutil
import sys
import tempfile

import spytest
from spytest import FAKE9, PRELOAD, REAL, check, events, need_real, prog, run

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)
ID = "sublib-version-mismatch"


def lines(p):
    return [ln for ln in p.stderr.splitlines() if " %s: " % ID in ln]


def recorded(p):
    return [f for f in events(p.records, "finding") if f["id"] == ID]


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
        got = lines(spied)
        real = os.path.dirname(os.path.realpath(os.path.join(REAL, "libcudnn.so.9")))
        check(len(got) == 1 and got[0].startswith("cudnnspy: warning %s: " % ID), "one warning line", spied.stderr)
        check("libcudnn.so.9 (cuDNN 9.19.0) in %s runs sub-libraries from %s, of the same version: " % (
            os.path.realpath(conda), real) in got[0] and "libcudnn_graph.so.9" in got[0],
              "both directories and the version", got[0])
        recs = recorded(spied)
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
            got = lines(p)
            check(len(got) == 1 and got[0].startswith("cudnnspy: %s %s: " % (severity, ID)),
                  "%s: one %s line" % (version, severity), p.stderr)
            check(("runs sub-libraries from %s" % os.path.realpath(d)) in got[0] and words in got[0] and
                  "libcudnn_graph.so.9, libcudnn_ops.so.9" in got[0], "%s: the directory, the version, the files"
                  % version, got[0])
            recs = recorded(p)
            check(len(recs) == 1 and recs[0]["severity"] == severity and
                  {os.path.realpath(s) for s in subs} <= set(recs[0]["paths"]), "%s: one record" % version,
                  repr(recs))


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
