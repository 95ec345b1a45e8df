#!/usr/bin/env python3
"""The progress line of report and dump: on a terminal stderr only, never on a pipe or with --quiet, wiped at
the end, and the same stdout either way. CUDNNSPY_TEST_PROGRESS_AFTER=0 (the tests' knob, docs/cudnnspy.md)
draws it from the first file on, so that no test has to read for a second, and nothing here depends on timing.

usage: test_progress.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip.
"""
import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading

from clitest import Skip, check, main, registry

E = os.environ
CLI = E.get("CLI_EXE", "")
FIXTURES = E.get("REPORT_FIXTURES", "")

LINE = re.compile(r"cudnnspy: (report|dump): (\d+) of (\d+) files, [\d.]+ [kMGT]?B of [\d.]+ [kMGT]?B, "
                  r"[\d.]+ [kMGT]?B/s, (\d+ s|[\d:]+|\?) left")

SCENARIOS = {}
scenario = registry(SCENARIOS)


def env(knob=True):
    e = {k: v for k, v in E.items() if not k.startswith("CUDNNSPY_")}
    if knob:
        e["CUDNNSPY_TEST_PROGRESS_AFTER"] = "0"
    return e


def on_tty(argv, knob=True):
    """stdout (a pipe) and what reached the terminal that stderr was, as bytes."""
    master, slave = os.openpty()
    # Wide, so that no line is cut to the terminal's width.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    got = []

    def drain():
        while True:
            try:
                d = os.read(master, 65536)
            except OSError:
                return
            if not d:
                return
            got.append(d)

    t = threading.Thread(target=drain)
    t.start()
    p = subprocess.Popen([CLI] + argv, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                         env=env(knob))
    os.close(slave)
    out = p.stdout.read()
    p.wait(timeout=120)
    t.join(timeout=30)
    os.close(master)
    tty = b"".join(got).decode("utf-8", "replace")
    print("$ cudnnspy %s (stderr a terminal) -> %d, %d bytes on the terminal" % (" ".join(argv), p.returncode,
                                                                              len(tty)))
    return p.returncode, out, tty


def on_pipe(argv, knob=True):
    p = subprocess.run([CLI] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                       env=env(knob), timeout=120)
    print("$ cudnnspy %s (pipes) -> %d" % (" ".join(argv), p.returncode))
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def without_progress(tty):
    """The terminal's text less the progress lines and the spaces that wiped them; the terminal's \\r\\n as \\n."""
    text = tty.replace("\r\n", "\n")
    return re.sub(r"\r(cudnnspy: (report|dump): [^\r\n]*| *)(?=\r)|\r", "", text)


def record_files(top):
    """What report and dump read of TOP: its record files and those of its subdirectories."""
    n = 0
    for root, dirs, files in os.walk(top):
        if root != top:
            dirs[:] = []
        n += sum(1 for f in files if ".jsonl" in f or ".cudnnspy.rec" in f)
    return n


def progress_case(cmd, argv, nfiles):
    rc_pipe, out_pipe, err_pipe = on_pipe([cmd] + argv, knob=False)
    rc, out, tty = on_tty([cmd] + argv)
    lines = [m for m in LINE.finditer(tty)]
    check(lines, "%s: a progress line on the terminal" % cmd, repr(tty[:2000]))
    check(all(m.group(1) == cmd and int(m.group(3)) == nfiles for m in lines),
          "%s: each line counts the %d files" % (cmd, nfiles), repr(tty[:2000]))
    done = [int(m.group(2)) for m in lines]
    check(done == sorted(done) and done[-1] <= nfiles, "%s: files done go up to N at most" % cmd, repr(done))
    check(all(tty[m.start() - 1] == "\r" for m in lines), "%s: each line is drawn from the start of the line" % cmd)
    check(re.search(r"\r +\r$", tty), "%s: the last line is wiped at the end" % cmd, repr(tty[-300:]))
    check("\n" not in tty[lines[-1].start():], "%s: no line break after the progress line" % cmd,
          repr(tty[lines[-1].start():]))
    check(rc == rc_pipe, "%s: the same exit status" % cmd)
    check(out == out_pipe and out, "%s: stdout byte for byte the same with the progress line" % cmd)
    check(without_progress(tty) == err_pipe, "%s: the messages the same, each on a line of its own" % cmd,
          repr(without_progress(tty)[:1500]), err_pipe[:1500])
    # stderr a pipe: nothing but the messages, the knob set or not.
    rc2, out2, err2 = on_pipe([cmd] + argv)
    check(err2 == err_pipe and out2 == out_pipe and rc2 == rc_pipe, "%s: nothing more on a pipe" % cmd,
          err2[:1500])
    # --quiet: the terminal gets the messages alone.
    for q in ("--quiet", "-q"):
        rc3, out3, tty3 = on_tty([cmd, q] + argv)
        check(not LINE.search(tty3) and "files," not in tty3, "%s %s: no progress line" % (cmd, q), repr(tty3[:1500]))
        check(tty3.replace("\r\n", "\n") == err_pipe and out3 == out_pipe and rc3 == rc_pipe,
              "%s %s: the same messages and stdout" % (cmd, q), repr(tty3[:1500]))
    # Without the knob, a run this short (under a second) shows none: the first second is quiet.
    rc4, out4, tty4 = on_tty([cmd] + argv, knob=False)
    check(out4 == out_pipe, "%s: stdout the same without the knob" % cmd)


@scenario
def progress_report():
    if on_pipe(["report", "--help"])[0] != 0:
        raise Skip("report is not in this build (no jansson)")
    progress_case("report", [FIXTURES], record_files(FIXTURES))
    # --compare counts both runs' files together.
    a, b = os.path.join(FIXTURES, "run-8907"), os.path.join(FIXTURES, "run-91900")
    rc, out, tty = on_tty(["report", "--compare", a, b])
    lines = list(LINE.finditer(tty))
    n = record_files(a) + record_files(b)
    check(lines and all(int(m.group(3)) == n for m in lines), "report --compare: lines count %d files" % n,
          repr(tty[:1500]))
    check(out == on_pipe(["report", "--compare", a, b])[1], "report --compare: the same stdout")


@scenario
def progress_dump():
    progress_case("dump", [os.path.join(FIXTURES, d) for d in sorted(os.listdir(FIXTURES))],
                  sum(record_files(os.path.join(FIXTURES, d)) for d in os.listdir(FIXTURES)))
    # stdout a terminal too: the records scroll past there, and no line is drawn among them.
    master, slave = os.openpty()
    p = subprocess.run([CLI, "dump", os.path.join(FIXTURES, "single")], stdout=slave, stderr=slave,
                       stdin=subprocess.DEVNULL, env=env(), timeout=60)
    os.close(slave)
    tty = b""
    while True:
        try:
            d = os.read(master, 65536)
        except OSError:
            break
        if not d:
            break
        tty += d
    os.close(master)
    check(p.returncode == 0 and b"{" in tty and b"files," not in tty, "dump to a terminal: no progress line",
          repr(tty[:500]))


if __name__ == "__main__":
    sys.exit(main(SCENARIOS))
