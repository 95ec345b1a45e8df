#!/usr/bin/env python3
"""Where records go and what programs do to them (issues 3 and 15): CUDNNSPY_OUTPUT (unwritable, full, planted
links, patterns, other users' directories), CUDNNSPY_STDERR=none, rate limits, file-size limits and full
disks (whole lines), the fds the record file takes, numbers from the environment, the records' times.

usage: records.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time

import sanitizer
import schema
import spytest
from spytest import (FAKE9, PRELOAD, RECORD_EXT, TEST_FORMAT, check, child_env, events, hostile, prog,
                     records_in, run, small_disk, spied_env, summary_row, summary_total)

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


@scenario
def stderr_none():
    """CUDNNSPY_STDERR=none keeps stderr silent."""
    p = run([prog("host-calls")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_STDERR": "none"})
    check(p.stderr == "", "nothing on stderr", p.stderr)
    q = run([prog("host-calls")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_STDERR": "bogus"})
    check("CUDNNSPY_STDERR=bogus" in q.stderr and "summary" in q.stderr, "bad value: warning, default", q.stderr)


@scenario
def output_unwritable():
    """An output that cannot be created: one warning, the summary on stderr, the program unchanged."""
    plain = run([prog("host-calls")], {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"})
    for target in ("/proc/cudnnspy-no-such-dir/out.jsonl", "/proc/", "/dev/full", "/dev/null"):
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": target}))
        check(p.stdout == plain.stdout, "stdout unchanged", p.stdout)
        check(p.stderr.count("cannot create a record file") == 1, "one warning", p.stderr)
        check(summary_total(p.stderr) is not None, "the summary still on stderr", p.stderr)
    check(not os.path.exists("/dev/full.1") and not os.path.exists("/dev/null.1"), "nothing created beside a device")


@scenario
def output_disk_full():
    """Writes failing (a file-size limit stands in for a full disk): one warning, drops counted."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "300"], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*"}), preexec=limit)
        check("threads 8 calls 300 fails 0" in p.stdout, "the program ran to the end", p.stdout, p.stderr)
        check(p.stderr.count("cannot write") == 1, "one warning", p.stderr)
        m = re.search(r"^cudnnspy: (\d+) records could not be written", p.stderr, re.M)
        check(m and int(m.group(1)) > 1000, "dropped records counted", p.stderr)
        check(summary_row(p.stderr, "cudnnSetTensor4dDescriptor")[0] == 2400, "counting unaffected", p.stderr)


@scenario
def output_symlink_and_clash():
    """A planted symlink or an existing file is never written through; a clash gets a suffix;
    a world-writable directory without the sticky bit is refused."""
    with tempfile.TemporaryDirectory() as d:
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        pattern = os.path.join(d, "out.jsonl")
        os.symlink(victim, pattern)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": pattern}))
        check(open(victim).read() == "precious\n", "the link's target untouched")
        check(os.path.exists(pattern + ".1"), "written under a new name", repr(os.listdir(d)), p.stderr)
        recs = records_in(d)
        check(len(recs["out.jsonl.1"]) >= 2, "a complete file", repr(recs))
        check(oct(os.stat(pattern + ".1").st_mode & 0o777) == "0o600", "mode 0600")
        # Two processes at once with the same pattern: two files.
        base = child_env(spied_env({"CUDNNSPY_OUTPUT": os.path.join(d, "same.jsonl")}))
        procs = [subprocess.Popen([prog("host-calls")], env=base, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for _ in range(2)]
        for q in procs:
            q.wait()
        names = sorted(n for n in os.listdir(d) if n.startswith("same.jsonl"))
        check(names == ["same.jsonl", "same.jsonl.1"], "two files", repr(names))
        recs = records_in(d)
        check(recs["same.jsonl"][0]["pid"] != recs["same.jsonl.1"][0]["pid"], "one per process")
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d}))
        check("writable by everyone and not sticky" in p.stderr and not os.listdir(d), "refused", p.stderr)
        os.chmod(d, 0o1777)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d}))
        check(len(os.listdir(d)) == 1, "a sticky directory is fine", p.stderr)


@scenario
def output_pattern():
    """%p, %h, %r and %e in CUDNNSPY_OUTPUT; the rank from the launcher's variables."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": os.path.join(d, "%e-%r-%p-%h-%%.jsonl"),
                                                 "SLURM_PROCID": "3"}))
        names = os.listdir(d)
        check(len(names) == 1 and re.match(r"^host-calls-3-\d+-.+-%\.jsonl$", names[0]), "expanded", repr(names))
        check(records_in(d)[names[0]][0]["rank"] == 3, "rank in the header")
    with tempfile.TemporaryDirectory() as d:
        run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d, "RANK": "7"}))
        names = os.listdir(d)
        check(len(names) == 1 and re.match(r"^host-calls\..+\.\d+\.r7" + re.escape(RECORD_EXT) + "$", names[0]),
              "directory naming with the rank", repr(names))


@scenario
def rate_limit():
    """Many identical failures: N stderr lines, one 'suppressing' line, every failure in the records."""
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "50"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                                          "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=2000",
                                          "CUDNNSPY_RATE_LIMIT": "4"}, check_rc=False)
        check(p.returncode == 1, "the program ran to its end (it exits 1 when calls failed)", str(p.returncode))
        lines = [l for l in p.stderr.splitlines() if l.startswith("cudnnspy: cudnnSetTensor4dDescriptor(")]
        check(len(lines) == 4, "4 lines", p.stderr)
        check(p.stderr.count("suppressing") == 1, "one suppressing line", p.stderr)
        check(len(events(records_in(d), "failure", "cudnnSetTensor4dDescriptor")) == 400, "all 400 recorded")


def whole_lines(directory):
    """Every file in the directory ends with a whole record: no torn last line (format 2: no frame cut)."""
    for name in os.listdir(directory):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        if schema.is_binary(data):
            try:
                schema.frames(data)
            except ValueError as e:
                check(False, "%s: a torn last record (%s)" % (name, e))
            continue
        check(not data or data.endswith(b"\n"), "%s: a torn last line" % name, repr(data[-200:]))


@scenario
def file_size_limit():
    """ulimit -f below what the records need: SIGXFSZ never reaches the program; one warning, whole lines,
    the drops counted, and the program's exit status and stdout are its own."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))
    with tempfile.TemporaryDirectory() as d:
        p = run([prog("threads"), "300"], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*"}), preexec=limit,
                check_rc=False, signal_ok=True)
        check(p.returncode == 0 and "threads 8 calls 300 fails 0" in p.stdout, "the program ran to its end "
              "(exit %d)" % p.returncode, p.stdout, p.stderr)
        check(p.stderr.count("file-size limit") == 1, "one warning", p.stderr)
        m = re.search(r"^cudnnspy: (\d+) records could not be written", p.stderr, re.M)
        check(m and int(m.group(1)) > 1000, "dropped records counted", p.stderr)
        names = os.listdir(d)
        check(len(names) == 1 and os.path.getsize(os.path.join(d, names[0])) <= 1500, "under the limit",
              repr(names))
        whole_lines(d)


@scenario
def record_file_room():
    """The room reserved ahead for whole lines is given back at exit: a file takes the disk it holds."""
    for argv, env in (([prog("host-calls")], {}), ([prog("threads"), "3000"], {"CUDNNSPY_TRACE": "*"})):
        with tempfile.TemporaryDirectory() as d:
            run(argv, spied_env(dict(env, CUDNNSPY_OUTPUT=d)))
            for name in os.listdir(d):
                st = os.stat(os.path.join(d, name))
                check(st.st_blocks * 512 <= st.st_size + 65536, "%s: %d bytes take %d on disk" %
                      (name, st.st_size, st.st_blocks * 512))


@scenario
def fds_low_closed():
    """The record file never takes fd 0, 1 or 2: with stdout closed the program's write still fails as it
    would; with stderr closed the spy's lines never land in its records."""
    with tempfile.TemporaryDirectory() as d:
        plain, spied = hostile("stdout-closed", {"CUDNNSPY_OUTPUT": d}, check_rc=False)
        check(spied.returncode == 7, "the program's write to its closed stdout fails (exit %d)" % spied.returncode,
              spied.stderr)
        recs = records_in(d)
        check(len(recs) == 1 and len(events(recs, "failure")) == 1, "the records, whole", repr(recs))
    with tempfile.TemporaryDirectory() as d:
        hostile("stderr-closed", {"CUDNNSPY_OUTPUT": d})
        recs = records_in(d)
        check(len(recs) == 1 and len(events(recs, "failure")) == 2, "only records in the file", repr(recs))


@scenario
def fds_first_free():
    """After failures (a stack taken for each, the record file open) the program's next open() gets the
    number it gets without the spy: the spy holds no descriptor below 512 (libunwind kept a pipe at 3 and 4,
    and closed those numbers again once the program had closed and reused them)."""
    with tempfile.TemporaryDirectory() as d:
        plain, spied = hostile("first-fd", {"CUDNNSPY_OUTPUT": d})
        check("first free fd 3" in spied.stdout, "fd 3", spied.stdout)


@scenario
def fds_closed_reused():
    """The program closes every fd above 2 and opens a file of its own, which gets the record file's number:
    the spy never writes into it, and its records go on in its own file."""
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as mine:
        plain, spied = hostile("closefrom", {"CUDNNSPY_OUTPUT": d}, args=[os.path.join(mine, "own")])
        check("own holds [mine\n]" in spied.stdout, "the program's file holds what it wrote", spied.stdout)
        recs = records_in(d)
        check(len(recs) == 1 and len(events(recs, "failure")) == 3, "every failure in the record file",
              repr(recs))


@scenario
def rank_numbers():
    """Numbers from the environment are written as the numbers they mean: RANK=007 is rank 7."""
    for value, want in (("007", 7), ("0", 0), ("000", 0), ("42", 42)):
        with tempfile.TemporaryDirectory() as d:
            run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": d, "RANK": value}))
            recs = records_in(d)
            check(len(recs) == 1 and list(recs.values())[0][0]["rank"] == want, "RANK=%s: rank %d" % (value, want),
                  repr(recs))
            check(list(recs)[0].endswith(".r%d%s" % (want, RECORD_EXT)), "the file name has the rank", repr(recs))


@scenario
def stderr_none_silent():
    """CUDNNSPY_STDERR=none: not a single line, whatever goes wrong (bad settings, an unwritable output,
    a crash)."""
    env = {"CUDNNSPY_STDERR": "none", "CUDNNSPY_OUTPUT": "/dev/full", "CUDNNSPY_RATE_LIMIT": "bogus",
           "CUDNNSPY_TRACE": "cudnnNoSuchFunction", "CUDNNSPY_CRASH": "1"}
    p = run([prog("host-calls")], spied_env(env))
    check(p.stderr == "", "nothing on stderr", p.stderr)
    q = run([prog("endings"), "segv"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9,
                                        sanitizer.DELIBERATE_SIGNALS: "1", **env}, check_rc=False, signal_ok=True)
    # A sanitizer build's runtime reports the deliberate fault itself: only the spy must say nothing.
    said = q.stderr if not sanitizer.RUNTIME else "\n".join(l for l in q.stderr.splitlines() if "cudnnspy" in l)
    check(q.returncode == -signal.SIGSEGV and said == "", "a crash, silent", q.stderr)


@scenario
def full_disk_whole_lines():
    """A disk that fills up (a 64 KiB tmpfs; needs root): every line in the file is whole, the drops are
    counted, and the program runs to its end."""
    with small_disk("64k") as d:
        # Format 2 packs these calls into a seventeenth of the bytes: ten times the calls fill the disk as well.
        for calls in (("300", "2000") if TEST_FORMAT == "json" else ("3000", "20000")):
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            p = run([prog("threads"), calls], spied_env({"CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*"}))
            check("threads 8 calls %s fails 0" % calls in p.stdout, "the program ran to its end", p.stdout)
            check(p.stderr.count("cannot write") == 1, "one warning", p.stderr)
            m = re.search(r"^cudnnspy: (\d+) records could not be written", p.stderr, re.M)
            check(m and int(m.group(1)) > 100, "dropped records counted", p.stderr)
            whole_lines(d)


@scenario
def output_others_dirs():
    """Run as root: no records in another user's directory (its owner could rename or delete them), none
    through another user's symlink to a directory (in a sticky directory, like /tmp); one's own link is
    followed. Needs root (77 otherwise)."""
    if os.geteuid() != 0:
        print("needs root: skipped")
        sys.exit(77)
    plain = run([prog("host-calls")], {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001"})
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o1777)
        theirs = os.path.join(d, "theirs")
        os.mkdir(theirs, 0o755)
        os.chown(theirs, 65534, 65534)
        mine = os.path.join(d, "mine")
        os.mkdir(mine, 0o700)
        link = os.path.join(d, "link")
        os.symlink(mine, link)
        os.lchown(link, 65534, 65534)
        for target, words in ((theirs, "belongs to another user"), (theirs + "/x-%p.jsonl", "belongs to another user"),
                              (link, "symbolic link of another user"),
                              (link + "/x-%p.jsonl", "symbolic link of another user")):
            p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": target}))
            check(p.stdout == plain.stdout, "stdout unchanged", p.stdout)
            check(p.stderr.count("cannot create a record file") == 1 and words in p.stderr, "%s: refused (%s)" %
                  (target, words), p.stderr)
            check(not os.listdir(theirs) and not os.listdir(mine), "%s: nothing written" % target,
                  repr(os.listdir(theirs) + os.listdir(mine)))
        own = os.path.join(d, "own-link")
        os.symlink(mine, own)
        p = run([prog("host-calls")], spied_env({"CUDNNSPY_OUTPUT": own}))
        check(len(os.listdir(mine)) == 1, "one's own link is followed", p.stderr)


@scenario
def record_times():
    """The times in the records are CLOCK_MONOTONIC's, in both formats, also once the spy reads the TSC
    (x86-64 with a trusted TSC: after its rate is measured) and across a re-anchoring: each call's t_ns and
    t_ns + dur_ns lie between the program's own clock readings around it, within a microsecond."""
    for fmt in ("json", "binary"):
        with tempfile.TemporaryDirectory() as d:
            p = run([prog("clock-check"), "1000"], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9,
                                                   "CUDNNSPY_OUTPUT": d, "CUDNNSPY_FORMAT": fmt,
                                                   "CUDNNSPY_TRACE": "cudnnGetVersion"})
            pairs = [tuple(int(x) for x in l.split()) for l in p.stdout.splitlines()[1:]]
            check(len(pairs) == 1000, "%s: the program's readings" % fmt, p.stdout[-500:])
            calls = events(records_in(d), "call", "cudnnGetVersion")[-1000:]
            head = [r for recs in records_in(d).values() for r in recs if r["event"] == "header"][0]
            bad = []
            for (before, after), r in zip(pairs, calls):
                if not (before - 1000 <= r["t_ns"] and r["t_ns"] + r["dur_ns"] <= after + 1000):
                    bad.append("%d..%d: t_ns %d dur_ns %d" % (before, after, r["t_ns"], r["dur_ns"]))
            check(not bad, "%s: %d of 1000 calls outside the program's own readings" % (fmt, len(bad)), *bad[:5])
            check(head["start_mono_ns"] <= calls[0]["t_ns"], "%s: after the header's start" % fmt)


@scenario
def header_while_resolving():
    """A header written while another thread is still inside the spy's resolution names the library: the
    resolving thread is held in it (its banner written to a full stderr) while the main thread, which finds the
    functions already resolved, makes 5,000 traced calls whose records open the file. Both formats."""
    for fmt in ("json", "binary"):
        with tempfile.TemporaryDirectory() as d:
            env = child_env({"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": d,
                             "CUDNNSPY_FORMAT": fmt, "CUDNNSPY_TRACE": "*"})
            r, w = os.pipe()
            os.set_blocking(w, False)
            try:
                while True:
                    os.write(w, b"x" * 4096)
            except BlockingIOError:
                pass
            os.set_blocking(w, True)
            p = subprocess.Popen([prog("resolve-race"), "5000"], env=env, stdout=subprocess.PIPE, stderr=w)
            os.close(w)
            # The main thread's records reach the file while the first thread waits on stderr.
            deadline = time.time() + 10
            while time.time() < deadline and not any(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d)):
                time.sleep(0.05)
            time.sleep(0.2)
            drained = []
            drain = threading.Thread(target=lambda: drained.append(b"".join(iter(lambda: os.read(r, 65536), b""))))
            drain.start()
            out, _ = p.communicate(timeout=60)
            drain.join()
            os.close(r)
            check(p.returncode == 0 and out == b"ok\n", "%s: the program ran" % fmt, out, drained[0][-2000:])
            heads = [x for recs in records_in(d).values() for x in recs if x["event"] == "header"]
            check(len(heads) == 1 and heads[0]["library"] and
                  heads[0]["library"]["path"].endswith("/libcudnn.so.9"),
                  "%s: the header names the library" % fmt, repr(heads))
            calls = events(records_in(d), "call", "cudnnSetTensor4dDescriptor")
            check(len(calls) == 5000, "%s: every call recorded (%d)" % (fmt, len(calls)))


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
