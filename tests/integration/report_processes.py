#!/usr/bin/env python3
"""cudnnspy report reads each process as a process, and in memory that does not grow with the number of files
(issue 27, items 6 and 7).

usage: report_processes.py NAME     (meson passes the paths in the environment)

report-concatenated: the files of three processes (one killed before its summary) concatenated into one file,
in each record format, make the same report as the three files, text and JSON: a header in the middle of a file
begins another process. Before the fix they were one process and some counts were halved.

report-memory-many-files: the peak memory of `cudnnspy report` over 1,000 and 10,000 copies of one small real
file: the 10,000 within 4 MiB of the 1,000 (about 17 KB a file before the fix: 19 and 170 MiB; 2.7 and 4.5
MiB after, the 10,000 rows of the table of processes). Skipped (77) in sanitizer builds.
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
import spytest
from spytest import E, FAKE9, PRELOAD, check, prog, run

SCENARIOS = {}
GNU_TIME = "/usr/bin/time"


scenario = spytest.registry(SCENARIOS)


def exe():
    return E["CUDNNSPY_EXE"]


def record_runs(d, fmt):
    """Three processes' files in D, in record format FMT ("json" or "binary"): rank 0 with convolutions (algo
    records, a finding) and a failure, rank 1 with a failure, rank 2 ended by _exit (no summary). Returns their
    paths in the order they ran."""
    base = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d, "CUDNNSPY_FORMAT": fmt,
            "CUDNNSPY_TRACE": "*", "FAKECUDNN_STATUS": "cudnnCreate=1001"}
    paths = []
    for rank, argv, complete in (("0", [prog("conv-legacy")], True), ("1", [prog("failures")], True),
                                 ("2", [prog("endings"), "_exit"], False)):
        before = set(os.listdir(d))
        run(argv, dict(base, RANK=rank), complete=complete)
        new = sorted(set(os.listdir(d)) - before)
        check(len(new) == 1, "one record file for rank %s" % rank, repr(new))
        paths.append(os.path.join(d, new[0]))
    return paths


def report(args):
    p = subprocess.run([exe(), "report"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    check(p.returncode == 0, "cudnnspy report %s exited %d" % (" ".join(args), p.returncode), p.stdout, p.stderr)
    return p.stdout


def first_lines(model):
    """(process label, file, line) of each failure group's first occurrence."""
    return [(g["first"]["process"], g["first"]["file"], g["first"]["line"]) for g in model["failures"]["groups"]]


def diff(a, b):
    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm=""))[:6000]


@scenario
def report_concatenated():
    """Two or more processes in one file (cat a.rec b.rec > ab.rec): each is a process of its own, and the report is
    the one of the separate files, but for the file's name and the line numbers in it, in both formats."""
    for fmt in ("json", "binary"):
        with tempfile.TemporaryDirectory() as d:
            runs = os.path.join(d, "runs")
            os.mkdir(runs)
            paths = record_runs(runs, fmt)
            if fmt == "json":
                for path in paths:
                    with open(path, "rb") as f:
                        check(f.read().endswith(b"\n"), "%s ends with a whole line" % path)
            # The killed process first, then the two others: the first needs the second pass, the others not.
            order = [paths[2], paths[0], paths[1]]
            cat = os.path.join(d, "all" + (".cudnnspy.jsonl" if fmt == "json" else ".cudnnspy.rec"))
            with open(cat, "wb") as out:
                for path in order:
                    with open(path, "rb") as f:
                        out.write(f.read())
            for extra in ([], ["--full"]):
                sep_model = json.loads(report(["--json"] + extra + order))
                cat_model = json.loads(report(["--json"] + extra + [cat]))
                check(len(cat_model["processes"]) == 3, "format %s%s: three processes in the one file, not %d" %
                      (fmt, " --full" if extra else "", len(cat_model["processes"])),
                      json.dumps(cat_model["processes"], indent=1)[:4000])
                # Where each process's lines begin in the one file.
                lines = {p["file"]: p["records"]["lines"] for p in sep_model["processes"]}
                offset, at = 0, {}
                for path in order:
                    at[path] = offset
                    offset += lines[path]

                def neutral(model, one):
                    m = json.loads(json.dumps(model))
                    for p in m["processes"]:
                        p["file"] = "FILE"
                    for g in m["failures"]["groups"]:
                        if not one:
                            g["first"]["line"] += at[g["first"]["file"]]
                        g["first"]["file"] = "FILE"
                    return json.dumps(m, indent=1, sort_keys=True)

                a, b = neutral(sep_model, False), neutral(cat_model, True)
                check(a == b, "format %s%s: the same JSON report for the one file as for the three" %
                      (fmt, " --full" if extra else ""), diff(a, b))
                check(all(f == cat for _, f, _ in first_lines(cat_model)), "the first occurrences are in the one file",
                      repr(first_lines(cat_model)))

                # The text, with each file's name and its line numbers turned into the one file's.
                sep_text = report(extra + order)
                cat_text = report(extra + [cat])
                for path in order:
                    sep_text = re.sub(r"\(%s:(\d+)\)" % re.escape(path),
                                      lambda m: "(%s:%d)" % (cat, int(m.group(1)) + at[path]), sep_text)
                    sep_text = sep_text.replace(path + ": ", cat + ": ")
                check(sep_text == cat_text, "format %s%s: the same text report for the one file as for the three" %
                      (fmt, " --full" if extra else ""), diff(sep_text, cat_text))
            # A whole file read twice is read as its processes twice (as the same file under two names is).
            twice = os.path.join(d, "twice" + os.path.splitext(cat)[1])
            with open(twice, "wb") as out, open(cat, "rb") as f:
                data = f.read()
                out.write(data + data)
            m = json.loads(report(["--json", twice]))
            check(len(m["processes"]) == 6 and m["failures"]["total"] == 2 * cat_model["failures"]["total"],
                  "format %s: the file twice, six processes and twice the failures" % fmt,
                  len(m["processes"]), m["failures"]["total"])


def peak_kib(argv):
    """The peak RSS of ARGV in KiB: from GNU time when it is there (a child forked from this Python counts the
    Python's pages too, since ru_maxrss survives exec), else from wait4, an upper bound."""
    rss_file = None
    if os.access(GNU_TIME, os.X_OK):
        fd, rss_file = tempfile.mkstemp(prefix="cudnnspy-report-rss.")
        os.close(fd)
        argv = [GNU_TIME, "-f", "%M", "-o", rss_file] + argv
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    rss = ru.ru_maxrss
    if rss_file:
        try:
            with open(rss_file) as f:
                rss = int(f.read().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
        os.unlink(rss_file)
    check(code == 0, "%s exited %d" % (" ".join(argv[-3:]), code), err.decode("utf-8", "replace")[-2000:])
    return rss


@scenario
def report_memory_many_files():
    """The peak memory of the report does not grow with the number of files: 1,000 and 10,000 copies of one small
    real file (a process with a failure, every call traced), in text, --json and --chrome."""
    if sanitizer.RUNTIME:
        # AddressSanitizer keeps what is freed in its quarantine: the peak there says nothing of the report's.
        print("a sanitizer build: memory is the sanitizer's, skipped")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        runs = os.path.join(d, "runs")
        os.mkdir(runs)
        run([prog("failures")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": runs,
                                 "CUDNNSPY_FORMAT": "binary", "CUDNNSPY_TRACE": "*",
                                 "FAKECUDNN_STATUS": "cudnnCreate=1001", "RANK": "0"})
        names = os.listdir(runs)
        check(len(names) == 1, "one record file", repr(names))
        with open(os.path.join(runs, names[0]), "rb") as f:
            data = f.read()
        check(len(data) < 16384, "a small file (%d bytes)" % len(data))
        rss = {}
        for n in (1000, 10000):
            sub = os.path.join(d, "n%d" % n)
            os.mkdir(sub)
            for i in range(n):
                with open(os.path.join(sub, "failures.node%05d.%d.r0.cudnnspy.rec" % (i, 1000 + i)), "wb") as f:
                    f.write(data)
            for mode in ((), ("--json",), ("--chrome", os.devnull)):
                rss[(n, mode)] = peak_kib([exe(), "report"] + list(mode) + [sub])
            shutil.rmtree(sub)
        print("peak RSS (KiB):", {"%d %s" % (n, " ".join(m) or "text"): v for (n, m), v in sorted(rss.items())})
        for mode in ((), ("--json",), ("--chrome", os.devnull)):
            grow = rss[(10000, mode)] - rss[(1000, mode)]
            check(grow < 4096, "%s: 9,000 more files, less than 4 MiB more memory (%d KiB more)" %
                  (" ".join(mode) or "text", grow), repr(rss))


def main():
    return spytest.main_of(SCENARIOS)


if __name__ == "__main__":
    sys.exit(main())
