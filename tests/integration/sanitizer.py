"""Sanitizer builds (docs/reliability.md, "Sanitizers and fuzzing"): what a program run by the scenarios
needs when the spy is built with -fsanitize=address,undefined or -fsanitize=thread, and how its reports
are read.

meson sets SPY_SANITIZER_RUNTIME (tests/sanitize/meson.build) to the sanitizer's shared runtime in those
builds only; everywhere else this module changes nothing. Then:
  - child_env() puts the runtime first in LD_PRELOAD, before the spy: the instrumented spy goes into
    programs that are not instrumented (Python, /bin/sh, /bin/true), and the runtime must be loaded
    before anything else or it refuses to start (AddressSanitizer) or crashes (ThreadSanitizer);
  - it sets ASAN_OPTIONS, UBSAN_OPTIONS and TSAN_OPTIONS for that program (below, each option with why);
  - reports() reads the program's stderr: every report fails the test, even where the test does not look
    at the exit status, unless SPY_SANITIZER_KNOWN_BUGS names it (see below).

SPY_SANITIZER_KNOWN_BUGS: function names, separated by spaces or commas. A run whose reports each name one
of them (the function of the summary line, or the innermost frame of one of the report's stacks) hit a
known bug of the spy: the scenario stops there and passes, printing "EXPECTED FAILURE" and the report.
./dev.sh sanitize sets it to the bugs listed in docs/reliability.md, for the sanitizer runs only; a normal
run never sets it, and without a sanitizer build it means nothing.

Command line:
  sanitizer.py meson-env       the options as NAME=VALUE lines, for the other tests of a sanitizer build
                               (tests/sanitize/meson.build puts them in the default test setup there)
  sanitizer.py run CMD [ARG..] runs an instrumented test program and judges its stderr as above (exit 0,
                               1, or 0 with EXPECTED FAILURE); outside sanitizer builds, only its status
"""
import os
import re
import subprocess
import sys

RUNTIME = os.environ.get("SPY_SANITIZER_RUNTIME", "")
KNOWN_BUGS = os.environ.get("SPY_SANITIZER_KNOWN_BUGS", "").replace(",", " ").split()
SUPPRESSIONS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "sanitize"))


def _join(options):
    return ":".join("%s=%s" % kv for kv in options)


def options(for_scenarios=True):
    """{variable: value} for the sanitizer runtimes; for_scenarios=False gives the other tests' variant."""
    asan = [
        # Python, the fake and the real cuDNN and the test programs all leak what they allocate once, and
        # a leak report at exit would fail every run; the parsers are leak-checked by libFuzzer
        # (./dev.sh fuzz) and the unit tests by the valgrind setup.
        ("detect_leaks", "0"),
        # A report ends the program with SIGABRT: never mistaken for the program's own exit status.
        ("abort_on_error", "1"),
        ("print_summary", "1"),
        # tests/sanitize/asan.supp: one deliberate ODR violation of a test program.
        ("suppressions", os.path.join(SUPPRESSIONS, "asan.supp")),
    ]
    if not for_scenarios:
        # Harnesses other than the scenarios (tests/cli, tests/public, ...) and the cudnnspy command put the
        # spy first in LD_PRELOAD, ahead of any runtime. The runtime then loads as the spy's dependency: for
        # an instrumented program still before libc, as the program's own; for an uninstrumented one (env,
        # sh) after libc, where it checks the spy's own accesses but not the heap. Either way it starts; the
        # spy's dlsym, which it calls while it starts, is built without instrumentation (shim/meson.build).
        asan.append(("verify_asan_link_order", "0"))
    ubsan = [
        ("print_stacktrace", "1"),
        ("print_summary", "1"),
        # Scenarios read every report from stderr (reports()), so the program runs on and all are seen;
        # elsewhere the first one must end the test.
        ("halt_on_error", "0" if for_scenarios else "1"),
    ]
    tsan = [
        ("halt_on_error", "0" if for_scenarios else "1"),
        ("second_deadlock_stack", "1"),
        ("print_summary", "1"),
        # tests/sanitize/tsan.supp: reports from code that is not ours (none so far).
        ("suppressions", os.path.join(SUPPRESSIONS, "tsan.supp")),
    ]
    return {"ASAN_OPTIONS": _join(asan), "UBSAN_OPTIONS": _join(ubsan), "TSAN_OPTIONS": _join(tsan)}


# A scenario whose program takes fatal signals on purpose sets this in the program's environment: the
# runtime then leaves those signals alone (handle_segv=0, ...), since a handler of the runtime's is one of
# the program's to the spy's crash handler, which hands such signals on without a word.
DELIBERATE_SIGNALS = "SPY_SANITIZER_DELIBERATE_SIGNALS"


def child_env(env):
    """In a sanitizer build, the runtime first in LD_PRELOAD and the options, in env (changed and returned)."""
    deliberate = env.pop(DELIBERATE_SIGNALS, None)
    if not RUNTIME:
        return env
    rest = [p for p in re.split(r"[: ]+", env.get("LD_PRELOAD", "")) if p and p != RUNTIME]
    env["LD_PRELOAD"] = ":".join([RUNTIME] + rest)
    env.update(options(True))
    if deliberate:
        for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
            env[var] += ":handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0"
    return env


_START = re.compile(r"^(==\d+==ERROR: \w+Sanitizer|WARNING: ThreadSanitizer|\S+: runtime error: )", re.M)
_SUMMARY = re.compile(r"^SUMMARY: \w+Sanitizer: .*$", re.M)
_SUMMARY_FUNCTION = re.compile(r" in (\S+)\s*$")
_FRAME0 = re.compile(r"^\s*#0 0x[0-9a-f]+ in (\S+)", re.M)
# Reports that a test program causes on purpose, never a finding: the crash-handler scenarios make
# tests/programs/endings.c and hostile.c store to an invalid address (UBSan: misaligned store; ASan: its SEGV report,
# from the handler that the spy's crash handler chains to, as it would to any earlier handler).
_DELIBERATE = re.compile(r"^SUMMARY: \w+Sanitizer: (SEGV|undefined-behavior) \S*\b(endings|hostile)\.c:\d+")


def reports(stderr):
    """The sanitizer reports in a program's stderr, as (summary line, known) pairs; [] when clean.
    Leaves the scenario with exit status 0 and an EXPECTED FAILURE line when every report is a known bug."""
    if not RUNTIME or not _START.search(stderr):
        return []
    summaries = list(_SUMMARY.finditer(stderr))
    if not summaries:
        # A report without its summary line (cut short): unknown.
        return [(_START.search(stderr).group(0), False)]
    found = []
    start = 0
    for m in summaries:
        block = stderr[start:m.start()]
        start = m.end()
        if _DELIBERATE.match(m.group(0)):
            continue
        fn = _SUMMARY_FUNCTION.search(m.group(0))
        functions = set(_FRAME0.findall(block)) | ({fn.group(1)} if fn else set())
        found.append((m.group(0), bool(functions & set(KNOWN_BUGS))))
    if found and all(known for _, known in found):
        print("EXPECTED FAILURE (known bug, SPY_SANITIZER_KNOWN_BUGS=%s):" % ",".join(KNOWN_BUGS))
        for line, _ in found:
            print("  " + line)
        print(stderr[-6000:])
        sys.stdout.flush()
        sys.exit(0)
    return found


def unknown_reports(stderr):
    """The summary lines of the reports that are no known bug, as one string; "" when there is none."""
    return "\n".join(line for line, known in reports(stderr) if not known)


def main(argv):
    if argv[:1] == ["meson-env"] and len(argv) == 1:
        for k, v in sorted(options(False).items()):
            print("%s=%s" % (k, v))
        return 0
    if argv[:1] == ["run"] and len(argv) > 1:
        p = subprocess.run(argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        bad = unknown_reports(p.stderr)
        if bad:
            print("FAIL: a sanitizer report:\n" + bad)
            return 1
        return 0 if p.returncode == 0 else 1
    print("usage: sanitizer.py meson-env | run CMD [ARG...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
