#!/usr/bin/env python3
"""Record files from strangers (issue 27, items 3 to 5): `cudnnspy dump` prints only JSON Lines whatever the
bytes, refuses a file whose first frame is cut or damaged instead of passing it through, and the reader that
dump, report and repro share does work bounded by the file's size.

usage: hostile_records.py NAME     (meson passes the paths in the environment)
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import schema
import spytest
from spytest import EXAMPLES, FAKE9, PRELOAD, check, run

SCENARIOS = {}
EXE = os.environ.get("CUDNNSPY_EXE", "")
# A guard, not a benchmark: the machines that run the tests are slow and shared.
LIMIT_S = 5


scenario = spytest.registry(SCENARIOS)


def spy_file(d, fmt):
    """The records of examples/host-calls under the spy (every call traced), in the format asked for: bytes."""
    out = os.path.join(d, fmt)
    os.mkdir(out)
    run([os.path.join(EXAMPLES, "host-calls")], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9,
                                                 "CUDNNSPY_OUTPUT": out, "CUDNNSPY_FORMAT": fmt,
                                                 "CUDNNSPY_TRACE": "*"}, check_rc=False)
    names = os.listdir(out)
    check(len(names) == 1, "one record file from host-calls (%s)" % fmt, repr(names))
    with open(os.path.join(out, names[0]), "rb") as f:
        return f.read()


def dump(path, timeout=60):
    return subprocess.run([EXE, "dump", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def no_constants(name):
    raise ValueError("not JSON: %s" % name)


def bad_lines(out):
    """The lines of dump's output that are not a JSON object (strict UTF-8, no NaN or Infinity)."""
    bad = []
    if out and not out.endswith(b"\n"):
        bad.append(out[out.rfind(b"\n") + 1:])
    for line in out.split(b"\n")[:-1]:
        try:
            obj = json.loads(line.decode("utf-8"), parse_constant=no_constants)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
        except ValueError:
            bad.append(line)
    return bad


def write(d, name, data):
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


@scenario
def dump_valid_json():
    """Two bit flips at each byte of a small real file, each a file of its own: every line dump prints is a JSON
    object, and a file dump says anything about on stderr has the byte offset said. The files go to dump 64 at a
    time (a sanitizer build starts slowly); stderr names each file it speaks of."""
    with tempfile.TemporaryDirectory() as d:
        data = spy_file(d, "binary")
        whole = dump(write(d, "whole.cudnnspy.rec", data))
        check(whole.returncode == 0 and not whole.stderr and not bad_lines(whole.stdout),
              "the file as the spy wrote it dumps cleanly", whole.stderr)
        runs = []
        for at in range(len(data)):
            for bit in (at % 8, (at + 3) % 8):
                bad = bytearray(data)
                bad[at] ^= 1 << bit
                runs.append((at, bit, bytes(bad)))
        batches = [list(enumerate(runs))[k:k + 64] for k in range(0, len(runs), 64)]

        def one(batch):
            paths = {}
            for i, (at, bit, bad) in batch:
                paths[write(d, "flip%d.cudnnspy.rec" % i, bad)] = "byte %d bit %d" % (at, bit)
            try:
                p = subprocess.run([EXE, "dump"] + list(paths), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   timeout=120)
            finally:
                for path in paths:
                    os.unlink(path)
            problems = []
            lines = bad_lines(p.stdout)
            if lines:
                problems.append("%s..%s: %d lines not JSON, the first %r" % (
                    paths[min(paths)], paths[max(paths)], len(lines), lines[0][:160]))
            if p.returncode < 0:
                problems.append("%s..: killed by signal %d" % (paths[min(paths)], -p.returncode))
            said = {}
            for line in p.stderr.decode(errors="replace").splitlines():
                m = re.match(r"cudnnspy: dump: (\S+): ", line)
                if not m or m.group(1) not in paths:
                    problems.append("a line on stderr that names no file: %r" % line)
                    continue
                said.setdefault(m.group(1), []).append(line)
            for path, told in said.items():
                if not any(re.search(r"byte \d+", t) for t in told):
                    problems.append("%s: said without the offset: %r" % (paths[path], told))
            if said and p.returncode == 0 and any("damaged" in t for ts in said.values() for t in ts):
                problems.append("%s..: damage said, exit 0" % paths[min(paths)])
            return problems

        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            failed = [m for ms in pool.map(one, batches) for m in ms]
        check(not failed, "%d of %d batches of flipped files printed a line that is not JSON, or did not say where"
              % (len(failed), len(batches)), *failed[:10])
        print("%d files, every line JSON" % len(runs))


@scenario
def dump_cut_first_frame():
    """A format 2 file cut inside its first frame (the file frame), or with a bit of its tag or magic flipped, is
    refused: nonzero exit, one line on stderr, nothing on stdout. A format 1 file cut anywhere in its first
    lines is still an ending: exit 0, and only whole JSON lines printed."""
    with tempfile.TemporaryDirectory() as d:
        data = spy_file(d, "binary")
        first = schema.frames(data)[1][2]
        check(data[0] == schema.TAG_FILE and data[2:10] == b"cudnnspy" and first >= 20,
              "a format 2 file that begins with its file frame", repr(data[:32]))
        cases = [("cut to %d bytes" % n, data[:n]) for n in range(1, first)]
        for at in range(0, 10):
            if at == 1:
                continue    # the length: damage elsewhere, not a refusal (below)
            for bit in range(8):
                bad = bytearray(data)
                bad[at] ^= 1 << bit
                cases.append(("byte %d bit %d flipped" % (at, bit), bytes(bad)))
        failed = []
        for what, bad in cases:
            p = dump(write(d, "bad.cudnnspy.rec", bad))
            err = p.stderr.decode(errors="replace")
            if p.returncode <= 0 or p.stdout or err.count("\n") != 1 or "dump:" not in err:
                failed.append("%s: exit %d, %d bytes on stdout (%r), stderr %r" %
                              (what, p.returncode, len(p.stdout), p.stdout[:40], err))
        # report and repro refuse the same files, with the reader's reason, where report read them as lines of
        # garbage (exit 0) and repro --list said nothing (exit 0).
        for what, bad in cases[::7]:
            path = write(d, "bad.cudnnspy.rec", bad)
            for argv in ([EXE, "report", path], [EXE, "repro", "--list", path]):
                p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
                err = p.stderr.decode(errors="replace")
                if p.returncode == 0 or not any(w in err for w in ("not a record file", "cut short", "damaged")):
                    failed.append("%s %s: exit %d, stderr %r" % (argv[1], what, p.returncode, err[:200]))
        # The length byte of the file frame: whatever it reads as, nothing that is not JSON comes out.
        for bit in range(8):
            bad = bytearray(data)
            bad[1] ^= 1 << bit
            p = dump(write(d, "bad.cudnnspy.rec", bytes(bad)))
            if p.returncode == 0 or bad_lines(p.stdout):
                failed.append("length byte bit %d flipped: exit %d, lines %r" % (bit, p.returncode,
                                                                                  bad_lines(p.stdout)[:1]))
        # Format 1: as it is when whole; cut short anywhere in its first two lines, an ending (exit 0).
        json1 = spy_file(d, "json")
        p = dump(write(d, "whole.jsonl", json1))
        check(p.returncode == 0 and not p.stderr and p.stdout == json1, "a format 1 file comes out as it is",
              p.returncode, p.stderr)
        lines = json1.split(b"\n")
        ends = len(lines[0]) + len(lines[1]) + 2
        for n in list(range(1, ends + 1)) + [len(json1) - 1]:
            p = dump(write(d, "cut.jsonl", json1[:n]))
            whole = json1[:json1.rfind(b"\n", 0, n) + 1]
            if p.returncode != 0 or p.stdout != whole:
                failed.append("format 1 cut to %d bytes: exit %d, %d bytes out of %d whole, stderr %r" %
                              (n, p.returncode, len(p.stdout), len(whole), p.stderr[:200]))
        check(not failed, "%d of %d cases were not refused or not read as an ending" %
              (len(failed), len(cases) + 8 + ends + 1), *failed[:12])


def uvarint_bytes(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def frame(tag, payload):
    return bytes([tag]) + uvarint_bytes(len(payload)) + payload


def amplifier(data, refs=2000, size=(1 << 20) - 4096):
    """A real file's start, then one text of `size` bytes (each call that names it a line just under the 1 MiB
    that report reads whole) and `refs` packed calls that name it."""
    fr = schema.frames(data)
    calls = [i for i, (tag, pl, at) in enumerate(fr) if tag == schema.TAG_CALL]
    # The first call right after the text it names, in a chunk (cudnnCreateTensorDescriptor's tensor): the text
    # keeps its id, and now says more.
    pick = next(i for i in calls if fr[i - 1][0] == schema.TAG_TEXT and
                any(fr[k][0] == schema.TAG_CHUNK for k in range(i)))
    chunk = max(k for k in range(pick) if fr[k][0] == schema.TAG_CHUNK)
    _, body = schema.uvarint(fr[pick - 1][1], 0)
    head = fr[pick - 1][1][:body]
    desc = b'{"id":"tensor#1","desc":"'
    text = head + desc + b"A" * (size - len(head) - len(desc) - 2) + b'"}'
    call = data[fr[pick][2]:fr[pick + 1][2]]
    # The file frame, the header and what follows up to the chunk, the chunk frame, the text, the calls.
    return data[:fr[chunk + 1][2]] + frame(schema.TAG_TEXT, text) + call * refs


def many_damages(data, places=3000):
    """A real file's JSON records, a text of the highest id a reader takes (2^22), then `places` damaged bytes,
    each followed by a chunk and a call where reading goes on: each damage forgets every text (21 KB)."""
    fr = schema.frames(data)
    first_chunk = next(at for tag, _, at in fr if tag == schema.TAG_CHUNK)
    again = bytes([0x7F]) + frame(schema.TAG_CHUNK, b"\x00\x00") + frame(schema.TAG_CALL, b"")
    return data[:first_chunk] + frame(schema.TAG_TEXT, uvarint_bytes(1 << 22) + b"1") + again * places


def bounded(argv, bound, what):
    """Runs a command over a crafted file: (problems, exit status, stdout as far as the bound, stderr), its
    output read as it comes and not kept past `bound` bytes, and the command killed after LIMIT_S."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    timer = threading.Timer(LIMIT_S, p.kill)
    timer.start()
    out, size = bytearray(), 0
    while True:
        part = p.stdout.read(1 << 20)
        if not part:
            break
        size += len(part)
        if size > bound:
            p.kill()
            break
        out += part
    err = p.stderr.read()
    rc = p.wait()
    timer.cancel()
    took = time.monotonic() - t0
    print("%s %s: exit %d in %.2f s, %d bytes out" % (what, argv[1], rc, took, size))
    problems = []
    if took >= LIMIT_S:
        problems.append("%s %s: still running after %d s" % (what, argv[1], LIMIT_S))
    elif size > bound:
        problems.append("%s %s: more than %d bytes out" % (what, argv[1], bound))
    elif rc < 0:
        problems.append("%s %s: killed by signal %d" % (what, argv[1], -rc))
    return problems, rc, bytes(out), err


@scenario
def records_amplification():
    """One text of just under 1 MiB named by 2,000 packed calls of a few bytes (1.08 MB): dump writes at most four
    times the file's size, and dump, report and repro --list each end within seconds. The same for 3,000 damaged
    places after a text of a high id (21 KB): damage costs what was read, not the ids seen."""
    with tempfile.TemporaryDirectory() as d:
        data = spy_file(d, "binary")
        failed = []
        for what, crafted in (("one text named 2,000 times", amplifier(data)),
                              ("3,000 damaged places after a high text id", many_damages(data))):
            path = write(d, "crafted.cudnnspy.rec", crafted)
            # dump's output is read as it comes and not kept past the bound: before the fix it was 2.1 GB.
            problems, rc, out, err = bounded([EXE, "dump", path], 4 * len(crafted), what)
            if not problems:
                if bad_lines(out):
                    problems.append("%s: dump printed lines that are not JSON" % what)
                if rc == 0:
                    problems.append("%s: dump exited 0 for a file no spy writes" % what)
                elif not re.search(rb"byte \d+", err):
                    problems.append("%s: dump exited %d without the offset on stderr: %r" % (what, rc, err[:300]))
            failed += problems
            for argv in ([EXE, "report", path], [EXE, "repro", "--list", path]):
                failed += bounded(argv, 1 << 20, what)[0]
        check(not failed, "work not bounded by the file's size", *failed)


def main():
    if not EXE:
        print("FAIL: no CUDNNSPY_EXE")
        return 1
    return spytest.main_of(SCENARIOS)


if __name__ == "__main__":
    sys.exit(main())
