#!/usr/bin/env python3
"""The records of every call a process completed survive however it ends: SIGKILL at any moment, _exit, exec,
abort (with and without the crash handler), SIGKILLed fork children, the OOM killer, a full disk, and a file
system that refuses writable shared mappings.

usage: endings_kill.py NAME     (meson passes the paths in the environment)

The program is tests/programs/kill-count.c: its threads call cudnnSetTensor4dDescriptor in batches of 50 and,
before each batch, write the calls they have completed into a count file (O_SYNC): whatever the spy had to
write for those calls must be in the record file when the process is gone.

- traced (CUDNNSPY_TRACE=cudnnSetTensor4dDescriptor): the file holds at least as many `call` records of the
  function as the program had completed, and `cudnnspy report` counts as many as `cudnnspy dump` shows;
- untraced: `cudnnspy report` counts at least the completed calls, and no more than one batch more per thread
  (the calls a thread makes after writing its count).
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import sanitizer
import schema
import spytest
from spytest import E, FAKE9, PRELOAD, PROGS, TEST_FORMAT, check, child_env, prog, run

SCENARIOS = {}
FN = "cudnnSetTensor4dDescriptor"
BATCH = 50                  # kill-count.c's batch
SLOW_RATE = 100             # kill-count.c's slow mode: calls a second
# The killed runs' rate per thread (forever=R): fast enough that the kill most often finds a thread inside cuDNN
# or the spy, slow enough that the files (up to 1.5 s of calls) take seconds, not minutes, to read back.
KILL_RATE = {1: 100000, 8: 20000}
NO_SHARED_MMAP = os.path.join(PROGS, "libno-shared-mmap.so")
NO_MEMBARRIER = os.path.join(PROGS, "libno-membarrier.so")


scenario = spytest.registry(SCENARIOS)


def exe():
    return E["CUDNNSPY_EXE"]


def spied(out, traced=True, extra=None):
    env = {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_OUTPUT": out}
    if traced:
        env["CUDNNSPY_TRACE"] = FN if traced is True else traced
    env.update(extra or {})
    return env


def completed(countfile):
    """The calls the program had completed: the sum of its threads' 32-byte slots (a missing file: none)."""
    try:
        with open(countfile, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return 0
    total = 0
    for i in range(0, len(data), 32):
        slot = data[i:i + 32].strip(b" \n\0")
        if slot:
            total += int(slot)
    return total


def record_files(d):
    return sorted(os.path.join(d, n) for n in os.listdir(d) if ".cudnnspy.rec" in n or ".jsonl" in n)


class Dumped:
    """One record file through `cudnnspy dump`: its records, exit status and stderr, and the schema errors.
    The call records (hundreds of thousands) are counted by their first bytes, as dump writes them, and a sample
    of them parsed and checked; every other record is parsed and checked."""
    CALL = b'{"event":"call","fn":"'

    def __init__(self, path):
        p = subprocess.run([exe(), "dump", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.path = path
        self.rc = p.returncode
        self.stderr = p.stderr.decode("utf-8", "replace")
        self.records, self.errors, self.fn_calls = [], [], {}
        lines = p.stdout.split(b"\n")[:-1]
        last = len(lines) - 200
        for n, raw in enumerate(lines, 1):
            if raw.startswith(self.CALL):
                end = raw.find(b'"', len(self.CALL))
                fn = raw[len(self.CALL):end].decode("utf-8", "replace")
                self.fn_calls[fn] = self.fn_calls.get(fn, 0) + 1
                if n % 997 and n < last:
                    continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                self.errors.append("%s:%d: not JSON (%s)" % (path, n, e))
                continue
            self.errors += schema.check_record(obj, "%s:%d" % (path, n))
            if obj.get("event") == "call" and not raw.startswith(self.CALL):
                self.fn_calls[obj.get("fn")] = self.fn_calls.get(obj.get("fn"), 0) + 1
            if not raw.startswith(self.CALL):
                self.records.append(obj)

    def calls(self, fn=FN):
        return self.fn_calls.get(fn, 0)

    def header(self):
        return self.records[0] if self.records and self.records[0].get("event") == "header" else {}

    def damage(self):
        """What the reader said of the file but that its last record is cut short (an ending, not damage)."""
        return [l for l in self.stderr.splitlines() if "cut short" not in l]

    def check_sound(self, what):
        said = self.damage()
        textless = [l for l in said if "have no text" in l]
        check(not textless, "%s: cudnnspy dump %s: calls were written without the texts they refer to" %
              (what, os.path.basename(self.path)), *textless)
        check(self.rc == 0 and not said, "%s: cudnnspy dump %s exited %d: the records are damaged" %
              (what, os.path.basename(self.path), self.rc), self.stderr[-3000:])
        check(not self.errors, "%s: records break the documented schema" % what, *self.errors[:10])


def report_calls(path, fn=FN):
    """`cudnnspy report --json PATH`'s count of calls of FN (0 when it lists no such function)."""
    p = subprocess.run([exe(), "report", "--json", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    check(p.returncode == 0, "cudnnspy report --json %s exited %d" % (path, p.returncode), p.stdout[-2000:],
          p.stderr[-2000:])
    model = json.loads(p.stdout)
    return sum(f.get("calls") or 0 for f in model.get("functions", []) if f.get("fn") == fn)


def the_file(d, what):
    """The one record file in D: None (and the test says so later, by its figures) when there is none."""
    files = record_files(d)
    check(len(files) <= 1, "%s: one record file, not %d" % (what, len(files)), repr(files))
    return files[0] if files else None


def figures(path):
    """(call records of FN in the file, report's count of FN, Dumped or None) of PATH, 0s when there is no file."""
    if path is None:
        return 0, 0, None
    dumped = Dumped(path)
    return dumped.calls(), report_calls(path), dumped


def start(argv, env, d):
    """ARGV started in the background, its stdout and stderr into files in D."""
    out = open(os.path.join(d, "stdout"), "w+")
    err = open(os.path.join(d, "stderr"), "w+")
    p = subprocess.Popen(argv, env=child_env(env), stdout=out, stderr=err)
    p.out, p.err = out, err
    return p


def output_of(p):
    p.out.seek(0)
    p.err.seek(0)
    text = p.out.read(), p.err.read()
    p.out.close()
    p.err.close()
    return text


def killed_after(p, delay, what):
    """SIGKILL to P DELAY seconds after it started: it must have been still running. Returns (stdout, stderr)."""
    time.sleep(delay)
    early = p.poll()
    p.kill()
    p.wait()
    out, err = output_of(p)
    check(early is None and p.returncode == -signal.SIGKILL, "%s: the program ended by itself before the "
          "SIGKILL (status %s)" % (what, early if early is not None else p.returncode), out, err[-3000:])
    return out, err


def say_figures(lines):
    """The figures of every run, printed before any check (meson's log keeps them)."""
    for l in lines:
        print(l)
    sys.stdout.flush()


# ---- SIGKILL at a random moment ----

def kill_runs(threads, traced, runs=3):
    if not traced and TEST_FORMAT == "json":
        # JSON Lines cannot be counters changed in place: format 1 holds records only (docs/record-format.md).
        print("format 1 keeps no counters in the file, so untraced calls of a killed process are not counted: "
              "skipped (format 2, the default, keeps them)")
        sys.exit(77)
    rows, results = [], []
    for i in range(runs):
        delay = random.uniform(0.3, 1.5)
        with tempfile.TemporaryDirectory(prefix="cudnnspy-kill-") as d:
            out = os.path.join(d, "recs")
            os.mkdir(out)
            count = os.path.join(d, "count")
            what = "run %d: %d thread%s, %s, SIGKILL after %.2f s" % (i + 1, threads, "s" if threads > 1 else "",
                                                                        "traced" if traced else "untraced", delay)
            p = start([prog("kill-count"), "forever=%d" % KILL_RATE[threads], str(threads), count],
                      spied(out, traced), d)
            _, err = killed_after(p, delay, what)
            done = completed(count)
            path = the_file(out, what)
            records, reported, dumped = figures(path)
            rows.append("%s: completed %d calls; %s call records %d; report counts %d%s" %
                        (what, done, FN, records, reported, "" if path else " (no record file)"))
            results.append((what, done, records, reported, dumped, err))
    say_figures(rows)
    for what, done, records, reported, dumped, err in results:
        check(done > 0, "%s: the program completed no call before the kill" % what, err[-2000:])
        if traced:
            check(records >= done, "%s: %d call records of %s in the file, but the program had completed %d "
                  "calls (%d completed calls' records lost)" % (what, records, FN, done, done - records), err[-2000:])
            check(reported == records, "%s: cudnnspy report counts %d calls of %s, cudnnspy dump shows %d call "
                  "records" % (what, reported, FN, records))
        else:
            check(done <= reported <= done + threads * BATCH, "%s: cudnnspy report counts %d calls of %s, the "
                  "program had completed %d (at most %d more may have been made after the count was written)" %
                  (what, reported, FN, done, threads * BATCH), err[-2000:])
        if dumped:
            dumped.check_sound(what)


@scenario
def kill_traced_1():
    """One thread calling, every call traced, SIGKILL at a random moment (3 runs): no completed call's record lost."""
    kill_runs(1, True)


@scenario
def kill_traced_8():
    """The same with 8 threads calling at once."""
    kill_runs(8, True)


@scenario
def kill_untraced_1():
    """One thread, not traced (the counts only), SIGKILL at a random moment: report counts every completed call."""
    kill_runs(1, False)


@scenario
def kill_untraced_8():
    """The same with 8 threads."""
    kill_runs(8, False)


def slow_kill(delay, extra_preload=None, lose=0, what="slow"):
    """The slow mode (100 calls a second, one thread, every call traced), SIGKILL after DELAY s: the file holds the
    records of the completed calls, less at most LOSE. Returns the program's stderr."""
    with tempfile.TemporaryDirectory(prefix="cudnnspy-slow-") as d:
        out = os.path.join(d, "recs")
        os.mkdir(out)
        count = os.path.join(d, "count")
        env = spied(out)
        if extra_preload:
            env["LD_PRELOAD"] = extra_preload + ":" + PRELOAD
        p = start([prog("kill-count"), "slow", "1", count], env, d)
        what = "%s, SIGKILL after %.1f s" % (what, delay)
        _, err = killed_after(p, delay, what)
        done = completed(count)
        path = the_file(out, what)
        records, reported, dumped = figures(path)
        say_figures(["%s: completed %d calls; %s call records %d; report counts %d%s" %
                     (what, done, FN, records, reported, "" if path else " (no record file)")])
        check(done >= delay * SLOW_RATE / 4, "%s: only %d calls completed (about %d a second expected)" %
              (what, done, SLOW_RATE), err[-2000:])
        check(records >= done - lose, "%s: %d call records of %s in the file, but the program had completed %d calls "
              "(%d records lost%s)" % (what, records, FN, done, done - records,
                                       ", %d allowed" % lose if lose else ""), err[-2000:])
        check(reported == records, "%s: cudnnspy report counts %d calls, cudnnspy dump shows %d call records" %
              (what, reported, records))
        if dumped:
            dumped.check_sound(what)
        return err


@scenario
def slow_killed():
    """A program that calls slowly (100 calls a second), killed after 2 s: nothing of its last seconds is lost."""
    slow_kill(2.0)


@scenario
def no_shared_mappings():
    """A file system without writable shared mappings (tests/programs/no-shared-mmap.c, preloaded before the spy,
    answers ENODEV): the spy falls back to writing, and a killed program loses at most about 1 s of records (the
    slow mode, 100 calls a second, killed after 3 s: at most 100 records fewer than completed calls)."""
    check(os.path.exists(NO_SHARED_MMAP), "the shim is built: %s" % NO_SHARED_MMAP)
    err = slow_kill(3.0, NO_SHARED_MMAP, lose=SLOW_RATE, what="no shared mappings, slow")
    # Not a condition: whether the spy asked for a shared mapping at all (the shim says its first refusal).
    print("the spy %s a writable shared mapping of its file" %
          ("asked for (and was refused)" if "no-shared-mmap: refused" in err else "did not ask for"))


@scenario
def exit_while_calling_no_membarrier():
    """exit() while 4 other threads keep calling, every call traced, on a kernel without membarrier
    (tests/programs/no-membarrier.c, preloaded before the spy, answers ENOSYS): a thread's frame in place is then
    ordered against the exit's seal by fences on both sides. 10 runs: one summary, the file's last record, and
    no more calls in the file than it counts (exit-while-calling's conditions)."""
    check(os.path.exists(NO_MEMBARRIER), "the shim is built: %s" % NO_MEMBARRIER)
    for i in range(10):
        with tempfile.TemporaryDirectory(prefix="cudnnspy-ending-") as d:
            p = run([prog("hostile"), "exit-race"], {"LD_PRELOAD": NO_MEMBARRIER + ":" + PRELOAD,
                                                     "LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_STATUS": "cudnnCreate=1001",
                                                     "CUDNNSPY_OUTPUT": d, "CUDNNSPY_TRACE": "*",
                                                     "CUDNNSPY_STDERR": "none"})
            check(p.stdout == "exiting\n", "the program's output", p.stdout)
            check("no-membarrier: refused" in p.stderr or TEST_FORMAT == "json",
                  "run %d: the spy asked for membarrier and was refused" % i, p.stderr)
            recs = spytest.records_in(d)
            check(len(recs) == 1, "one file", repr(list(recs)))
            s = spytest.events(recs, "summary")
            calls = len(spytest.events(recs, "call", "cudnnGetVersion"))
            counted = [f["calls"] for f in s[0]["functions"] if f["fn"] == "cudnnGetVersion"] if s else []
            check(len(s) == 1 and counted and 0 < calls <= counted[0], "run %d: one summary, counting at least the "
                  "calls recorded (%d recorded, %r counted)" % (i, calls, counted))


# ---- _exit, exec, abort after 5000 calls ----

def fixed_ending(mode, extra=None, calls=5000):
    """kill-count MODE=CALLS, one thread, every call traced, without and with the spy: the same exit status and
    stdout; exactly CALLS call records in the file and CALLS in the report."""
    argv_mode = "%s=%d" % (mode, calls)
    extra = dict(extra or {})
    with tempfile.TemporaryDirectory(prefix="cudnnspy-ending-") as d:
        out = os.path.join(d, "recs")
        os.mkdir(out)
        count = os.path.join(d, "count")
        plain = run([prog("kill-count"), argv_mode, "1", count], dict(extra, LD_LIBRARY_PATH=FAKE9,
                                                                      CUDNNSPY_OUTPUT=out),
                    check_rc=False, complete=False, signal_ok=True)
        check(not record_files(out), "no record file without the spy")
        check(completed(count) == calls, "%s without the spy: %d calls counted, not %d" % (mode, completed(count), calls))
        p = run([prog("kill-count"), argv_mode, "1", count], spied(out, True, extra), check_rc=False, complete=False,
                signal_ok=True)
        done = completed(count)
        what = "%s after %d calls%s" % (mode, calls, "".join(", %s=%s" % kv for kv in sorted(extra.items())
                                                              if kv[0].startswith("CUDNNSPY_")))
        path = the_file(out, what)
        records, reported, dumped = figures(path)
        say_figures(["%s: completed %d calls; %s call records %d; report counts %d; exit status %d (%d without the "
                     "spy)%s" % (what, done, FN, records, reported, p.returncode, plain.returncode,
                                 "" if path else " (no record file)")])
        check(p.returncode == plain.returncode and p.stdout == plain.stdout, "%s: the program ends as without the spy "
              "(exit status %d, %d without it)" % (what, p.returncode, plain.returncode), plain.stdout, p.stdout,
              p.stderr[-3000:])
        check(done == calls, "%s: the program counted %d calls" % (what, done))
        check(records == calls, "%s: %d call records of %s in the file, not %d (%d lost)" %
              (what, records, FN, calls, calls - records), p.stderr[-2000:])
        check(reported == calls, "%s: cudnnspy report counts %d calls of %s, not %d" % (what, reported, FN, calls))
        dumped.check_sound(what)
        return p


@scenario
def exit_underscore():
    """_exit(0) after 5000 calls, with the calling thread still alive: 5000 records, and report says 5000."""
    p = fixed_ending("_exit")
    check(p.returncode == 0 and p.stdout == "calls 5000\n", "_exit(0), stdout kept", p.stdout)


@scenario
def exec_ending():
    """execv(/bin/true) after 5000 calls: 5000 records, and report says 5000."""
    p = fixed_ending("exec")
    check(p.returncode == 0 and p.stdout == "calls 5000\n", "/bin/true's status, the program's stdout", p.stdout)


@scenario
def abort_ending():
    """abort() after 5000 calls, the crash handler off (the default): 5000 records, report 5000, SIGABRT."""
    p = fixed_ending("abort", {sanitizer.DELIBERATE_SIGNALS: "1"})
    check(p.returncode == -signal.SIGABRT, "killed by SIGABRT (%d)" % p.returncode)


@scenario
def abort_ending_crash():
    """The same with CUDNNSPY_CRASH=1 (the spy's handler runs, then the program dies of SIGABRT as before)."""
    p = fixed_ending("abort", {"CUDNNSPY_CRASH": "1", sanitizer.DELIBERATE_SIGNALS: "1"})
    check(p.returncode == -signal.SIGABRT, "killed by SIGABRT (%d)" % p.returncode)


# ---- fork children killed ----

@scenario
def fork_children_killed():
    """A parent makes 7 cudnnGetVersion calls, forks 3 children that call until the parent SIGKILLs them (0.8 s):
    each child's own file holds at least the calls it completed, and none of the parent's records."""
    with tempfile.TemporaryDirectory(prefix="cudnnspy-fork-") as d:
        out = os.path.join(d, "recs")
        os.mkdir(out)
        count = os.path.join(d, "count")
        p = run([prog("kill-count"), "fork", "1", count], spied(out, "*"), complete=False)
        children = {}
        for line in p.stdout.splitlines():
            w = line.split()
            if len(w) == 3 and w[0] == "child" and w[2].isdigit() and w[1].isdigit():
                children.setdefault(int(w[1]), int(w[2]))
        check(sorted(children) == [0, 1, 2], "the parent says its 3 children", p.stdout)
        check(all(("child %d signal 9" % k) in p.stdout for k in children), "each child killed by SIGKILL", p.stdout)
        by_pid = {}
        for path in record_files(out):
            dumped = Dumped(path)
            by_pid.setdefault(dumped.header().get("pid"), []).append(dumped)
        rows, results = [], []
        for k, pid in sorted(children.items()):
            done = completed("%s.child%d" % (count, k))
            files = by_pid.get(pid, [])
            dumped = files[0] if len(files) == 1 else None
            records = dumped.calls() if dumped else 0
            parents = dumped.calls("cudnnGetVersion") if dumped else 0
            reported = report_calls(dumped.path) if dumped else 0
            rows.append("child %d (pid %d): completed %d calls; %d record files; %s call records %d; report counts "
                        "%d; cudnnGetVersion call records (the parent's) %d" %
                        (k, pid, done, len(files), FN, records, reported, parents))
            results.append((k, pid, done, files, dumped, records, reported, parents))
        say_figures(rows)
        for k, pid, done, files, dumped, records, reported, parents in results:
            what = "child %d (pid %d), killed" % (k, pid)
            check(done > 0, "%s: completed no call" % what)
            check(len(files) == 1, "%s: one record file of its own, not %d" % (what, len(files)),
                  repr(sorted(os.listdir(out))))
            check(records >= done, "%s: %d call records of %s in its file, but it had completed %d calls (%d lost)" %
                  (what, records, FN, done, done - records))
            check(parents == 0, "%s: %d of the parent's cudnnGetVersion records in the child's file" % (what, parents))
            check(reported == records, "%s: cudnnspy report counts %d calls, cudnnspy dump shows %d call records" %
                  (what, reported, records))
            dumped.check_sound(what)
        parent = [f for pid, fs in by_pid.items() if pid not in children.values() for f in fs]
        check(len(parent) == 1 and parent[0].calls("cudnnGetVersion") == 7 and parent[0].calls() == 0,
              "the parent's file: its 7 cudnnGetVersion calls and nothing of its children",
              repr([(f.path, f.calls("cudnnGetVersion"), f.calls()) for f in parent]))


# ---- the OOM killer ----

@scenario
def summary_same_as_exit():
    """The summary `cudnnspy dump` makes from the counters a process left (killed, _exit, exec, the OOM killer) says
    what the same process's exit summary says: one process, stopped after its calls (SIGSTOP) while its record file
    is copied, then continued to its exit. Every function's counts and times and each copy's counts agree; only
    `exited` tells them apart. Traced and untraced, 1 and 8 threads."""
    if TEST_FORMAT == "json":
        # JSON Lines cannot be counters changed in place: format 1 holds no summary but the exit's.
        print("format 1 keeps no counters in the file: skipped (format 2, the default, keeps them)")
        sys.exit(77)
    for threads, traced in ((1, False), (8, False), (8, True)):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            os.mkdir(out)
            p = subprocess.Popen([prog("kill-count"), "stop=20000", str(threads), os.path.join(d, "count")],
                                 env=child_env(spied(out, traced)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            wait_stopped(p)
            path = the_file(out, "the stopped process")
            stopped = os.path.join(d, "stopped.cudnnspy.rec")
            shutil.copyfile(path, stopped)
            os.kill(p.pid, signal.SIGCONT)
            p.communicate(timeout=60)
            check(p.returncode == 0, "the program ran to its end (%d)" % p.returncode)
            left = summaries(stopped)
            ended = summaries(path)
            check(len(left) == 1 and left[0].get("exited") is False, "%d threads: the counters give one summary, "
                  "`exited` false" % threads, repr(left)[:600])
            check(len(ended) == 1 and "exited" not in ended[0], "the exit's own summary", repr(ended)[:600])
            a, b = left[0], ended[0]
            for key in ("calls", "failures", "internal", "probing", "functions"):
                check(a[key] == b[key], "%d threads, traced %s: %s the same from the counters and at exit"
                      % (threads, traced, key), json.dumps(a[key])[:800], json.dumps(b[key])[:800])
            strip = lambda cs: [{k: c[k] for k in ("copy", "calls", "failures", "internal", "functions")} for c in cs]
            check(strip(a["copies"]) == strip(b["copies"]), "each copy's counts the same", repr(a["copies"])[:600],
                  repr(b["copies"])[:600])
            print("%d threads, traced %s: %d calls, the same %d functions from the counters as at exit"
                  % (threads, traced, a["calls"], len(a["functions"])))


@scenario
def algo_records_kept():
    """What ran for each convolution and graph survives an ending without exit: the `algo` and `heuristics`
    records, and the findings the exit makes from them, that `cudnnspy dump` gives from the records the process
    kept in its mapped file are those its exit writes (conv-legacy: searches, a workspace query, choices changed
    and too small a workspace; graph-frontend: heuristics asked for 40 configs, their engines read, plans probed,
    and with replan the plan finalized 20 more times: `replanning`, `untuned-graph`), each stopped before its exit
    while its file is copied."""
    if TEST_FORMAT == "json":
        print("format 1 keeps no records in place: skipped")
        sys.exit(77)
    for argv in ([prog("conv-legacy"), "-", "stop"], [prog("graph-frontend"), "40", "stop"],
                 [prog("graph-frontend"), "40", "replan-stop"]):
        kept_same(argv)


def kept_same(argv):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        p = subprocess.Popen(argv, env=child_env(spied(out, traced=False)),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_stopped(p)
        path = the_file(out, "the stopped process")
        stopped = os.path.join(d, "stopped.cudnnspy.rec")
        shutil.copyfile(path, stopped)
        os.kill(p.pid, signal.SIGCONT)
        p.communicate(timeout=60)
        name = os.path.basename(argv[0])
        check(p.returncode == 0, "%s ran to its end (%d)" % (name, p.returncode))
        left, ended = algo_records(stopped), algo_records(path)
        check(ended, "%s: the exit writes algo records" % name, repr(ended)[:400])
        if "replan" in argv[-1]:
            check(any(r.get("id") == "replanning" for r in ended), "%s: the exit says replanning" % name)
        check(left == ended, "%s: the algo and heuristics records from the kept ones are the exit's: %d and %d"
              % (name, len(left), len(ended)), json.dumps(left, indent=1)[:3000], json.dumps(ended, indent=1)[:3000])
        print("%s: %d algo and heuristics records, the same from the mapped file as at exit" % (name, len(ended)))


def algo_records(path):
    p = subprocess.run([exe(), "dump", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0, "dump %s: exit %d" % (path, p.returncode), p.stderr.decode(errors="replace"))
    recs = [json.loads(l) for l in p.stdout.splitlines()
            if l.startswith(b'{"event":"algo"') or l.startswith(b'{"event":"heuristics"')]
    # The findings the exit makes from what ran (the others are written when found, in both files alike).
    exit_ids = ("untuned-graph", "nondeterministic-engine", "fallback-engine", "replanning")
    recs += [r for r in map(json.loads, (l for l in p.stdout.splitlines() if l.startswith(b'{"event":"finding"')))
             if r["id"] in exit_ids]
    return sorted(recs, key=lambda r: json.dumps(r, sort_keys=True))


def wait_stopped(p, timeout=30):
    """Until the process stopped itself (SIGSTOP)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open("/proc/%d/stat" % p.pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.01)
    check(False, "the program did not stop itself in %d s" % timeout)


def summaries(path):
    """The summary records `cudnnspy dump` gives for a file."""
    p = subprocess.run([exe(), "dump", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0, "dump %s: exit %d" % (path, p.returncode), p.stderr.decode(errors="replace"))
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith(b'{"event":"summary"')]


def mounts():
    with open("/proc/self/mounts") as f:
        return [l.split() for l in f]


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class MemoryCgroup:
    """A memory cgroup of its own with a limit (cgroup v2, or the v1 memory hierarchy when there is no v2 one with
    the memory controller): path, and oom_kills() from its counters. None where it cannot be made (why in .why)."""

    def __init__(self, limit):
        self.path, self.why, self.version = None, [], None
        name = "cudnnspy-oom-%d" % os.getpid()
        for fields in mounts():
            if len(fields) < 4:
                continue
            kind, where, opts = fields[2], fields[1], fields[3].split(",")
            if kind == "cgroup2" and self._v2(where, name, limit):
                return
        for fields in mounts():
            if len(fields) >= 4 and fields[2] == "cgroup" and "memory" in fields[3].split(","):
                if self._v1(fields[1], name, limit):
                    return

    def _v2(self, root, name, limit):
        if "memory" not in read(os.path.join(root, "cgroup.controllers")).split():
            self.why.append("%s: no memory controller (cgroup v2)" % root)
            return False
        try:
            if "memory" not in read(os.path.join(root, "cgroup.subtree_control")).split():
                write(os.path.join(root, "cgroup.subtree_control"), "+memory")
            path = os.path.join(root, name)
            os.mkdir(path)
        except OSError as e:
            self.why.append("%s: %s" % (root, e))
            return False
        try:
            write(os.path.join(path, "memory.max"), str(limit))
            if os.path.exists(os.path.join(path, "memory.swap.max")):
                write(os.path.join(path, "memory.swap.max"), "0")
        except OSError as e:
            self.why.append("%s: %s" % (path, e))
            os.rmdir(path)
            return False
        self.path, self.version = path, 2
        return True

    def _v1(self, root, name, limit):
        path = os.path.join(root, name)
        try:
            os.mkdir(path)
        except OSError as e:
            self.why.append("%s: %s" % (root, e))
            return False
        try:
            write(os.path.join(path, "memory.limit_in_bytes"), str(limit))
            if os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes")):
                write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(limit))
        except OSError as e:
            self.why.append("%s: %s" % (path, e))
            os.rmdir(path)
            return False
        self.path, self.version = path, 1
        return True

    def enter(self):
        """For preexec_fn: the child moves itself in before it execs."""
        write(os.path.join(self.path, "cgroup.procs"), str(os.getpid()))

    def oom_kills(self):
        text = read(os.path.join(self.path, "memory.events" if self.version == 2 else "memory.oom_control"))
        for line in text.splitlines():
            w = line.split()
            if len(w) == 2 and w[0] == "oom_kill":
                return int(w[1])
        return None

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


@scenario
def oom_kill():
    """A program in a memory cgroup of 64 MiB makes 20000 calls (every one traced), then allocates until the OOM
    killer ends it: the file holds the 20000 records, and report counts 20000. Needs root and a memory cgroup."""
    if sanitizer.RUNTIME:
        print("a sanitizer build: its shadow memory does not fit a small memory cgroup, skipped")
        sys.exit(77)
    if os.geteuid() != 0:
        print("needs root to make a memory cgroup: skipped")
        sys.exit(77)
    calls = 20000
    cg = MemoryCgroup(64 << 20)
    if not cg.path:
        print("no memory cgroup can be made here (cgroup v2 with the memory controller, or v1's memory "
              "hierarchy, writable): skipped\n" + "\n".join(cg.why))
        sys.exit(77)
    try:
        with tempfile.TemporaryDirectory(prefix="cudnnspy-oom-") as d:
            out = os.path.join(d, "recs")
            os.mkdir(out)
            count = os.path.join(d, "count")
            with open(os.path.join(d, "stdout"), "w+") as so, open(os.path.join(d, "stderr"), "w+") as se:
                p = subprocess.Popen([prog("kill-count"), "oom=%d" % calls, "1", count], env=child_env(spied(out)),
                                     stdout=so, stderr=se, preexec_fn=cg.enter)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                so.seek(0)
                se.seek(0)
                stdout, stderr = so.read(), se.read()
            kills = cg.oom_kills()
            done = completed(count)
            what = "OOM-killed after %d calls (cgroup v%d)" % (calls, cg.version)
            path = the_file(out, what)
            records, reported, dumped = figures(path)
            say_figures(["%s: exit status %d, oom_kill %s; completed %d calls; %s call records %d; report counts %d%s" %
                         (what, p.returncode, kills, done, FN, records, reported, "" if path else " (no record file)")])
            check(p.returncode == -signal.SIGKILL, "%s: the program was not killed by SIGKILL (status %d)" %
                  (what, p.returncode), stdout, stderr[-3000:])
            check(kills is None or kills > 0, "%s: the cgroup counts no OOM kill" % what)
            check(done == calls and stdout == "calls %d\n" % calls, "%s: the program completed its %d calls (%d)" %
                  (what, calls, done), stdout)
            check(records >= calls, "%s: %d call records of %s in the file, but the program had completed %d calls "
                  "(%d lost)" % (what, records, FN, calls, calls - records), stderr[-2000:])
            check(reported == records, "%s: cudnnspy report counts %d calls, cudnnspy dump shows %d call records" %
                  (what, reported, records))
            dumped.check_sound(what)
    finally:
        cg.remove()


# ---- a full disk ----

@scenario
def full_disk_mapped():
    """A disk that fills up (a 256 KiB tmpfs; needs root) under 8 threads' 160000 traced calls: the program runs to
    its end (no SIGBUS from a mapping past the end of the disk), the spy says "cannot write" once, and the
    records in the file read back without damage."""
    with spytest.small_disk("256k") as d:
        threads, calls = 8, 160000
        with tempfile.TemporaryDirectory(prefix="cudnnspy-full-count-") as c:
            count = os.path.join(c, "count")
            p = run([prog("kill-count"), "calls=%d" % calls, str(threads), count], spied(d), check_rc=False,
                    complete=False, signal_ok=True)
            done = completed(count)
        files = record_files(d)
        dumped = Dumped(files[0]) if len(files) == 1 else None
        records = dumped.calls() if dumped else 0
        said = p.stderr.count("cannot write")
        say_figures(["full disk (256 KiB): exit status %d; completed %d calls; %d record files; %s call records %d; "
                     "\"cannot write\" said %d times; dump exit status %s" %
                     (p.returncode, done, len(files), FN, records, said, dumped.rc if dumped else "-")])
        check(p.returncode == 0 and p.stdout == "calls %d\n" % calls, "the program ran to its end (exit status %d)" %
              p.returncode, p.stdout, p.stderr[-3000:])
        check(said == 1, "one warning \"cannot write\", not %d" % said, p.stderr[-3000:])
        check(len(files) == 1, "one record file, not %d" % len(files), repr(files))
        check(0 < records < calls, "the disk was full: %d of %d calls recorded" % (records, calls))
        dumped.check_sound("full disk")


def main():
    return spytest.main_of(SCENARIOS)


if __name__ == "__main__":
    sys.exit(main())
