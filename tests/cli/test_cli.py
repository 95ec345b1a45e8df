#!/usr/bin/env python3
"""The cudnnspy command, run as a user would.

usage: test_cli.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip.
"""
import atexit
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

E = os.environ
CLI = E.get("CLI_EXE", "")
VERSION = E.get("CLI_VERSION", "")
BINDIR = E.get("CLI_BINDIR", "bin")
LIBDIR_FROM_BINDIR = E.get("CLI_LIBDIR_FROM_BINDIR", "")
PRELOAD = E.get("SPY_PRELOAD", "")
DROPIN9 = E.get("SPY_DROPIN9_DIR", "")
DROPIN8 = E.get("SPY_DROPIN8_DIR", "")
FAKE9 = E.get("FAKE9_DIR", "")
FAKE8 = E.get("FAKE8_DIR", "")
HOST_CALLS = E.get("HOST_CALLS", "")
CONFIG_C = E.get("CONFIG_C", "")
DEMO_SH = E.get("DEMO_SH", "")
BUILD_ROOT = E.get("BUILD_ROOT", "")

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__.replace("_", "-")] = fn
    return fn


class Failed(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def clean_env(extra=None):
    """The test's environment without anything that the command sets."""
    env = {k: v for k, v in E.items()
           if not k.startswith("CUDNNSPY_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    env.update(extra or {})
    return env


def default_signals():
    # Whatever the test runner left ignored, the command starts from a shell's defaults.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def run(argv, env=None, cwd=None, exe=None, preexec=default_signals):
    p = subprocess.run([exe or CLI] + argv, env=clean_env(env), cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=60, preexec_fn=preexec)
    print("$ cudnnspy %s -> %d" % (" ".join(argv), p.returncode))
    return p


def own_lines(stderr):
    """stderr without run's closing line about the spy's markers (a program like env calls no cuDNN)."""
    return "".join(l for l in stderr.splitlines(True)
                   if not re.match(r"cudnnspy: the (spy was loaded in \d+ process|drop-in libcudnn\.so\.\d was not "
                                   r"loaded|preloaded spy was not loaded)", l))


def env_of(p):
    """The variables printed by env(1), one per line."""
    check(p.returncode == 0, "env exited %d" % p.returncode, p.stdout, p.stderr)
    out = {}
    for line in p.stdout.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            out[k] = v
    return out


def same_file(a, b):
    return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)


def tmpdir():
    # Real path: the command anchors relative paths to getcwd(), which has no symlinks.
    d = os.path.realpath(tempfile.mkdtemp(prefix="cudnnspy-cli-"))
    atexit.register(shutil.rmtree, d, True)
    return d


def preload_parts(env):
    value = env.get("LD_PRELOAD")
    check(value is not None, "LD_PRELOAD is set", repr(env))
    return value.split(":")


@scenario
def env():
    """Options become absolute CUDNNSPY_* values; the spy goes first in LD_PRELOAD."""
    d = tmpdir()
    os.mkdir(os.path.join(d, "recs"))
    p = run(["run", "--output", "recs", "--trace", "*", "--stderr", "none",
             "--", "env"], {"LD_PRELOAD": "libm.so.6"}, cwd=d)
    got = env_of(p)
    check(got.get("CUDNNSPY_OUTPUT") == os.path.join(d, "recs"), "--output made absolute", repr(got))
    check("CUDNNSPY_LIBRARY" not in got, "no --library, no CUDNNSPY_LIBRARY", repr(got))
    check(got.get("CUDNNSPY_TRACE") == "*", "--trace passed as is", repr(got))
    check(got.get("CUDNNSPY_STDERR") == "none", "--stderr passed as is", repr(got))
    parts = preload_parts(got)
    check(os.path.isabs(parts[0]) and same_file(parts[0], PRELOAD),
          "LD_PRELOAD starts with the absolute path of libcudnnspy.so", got["LD_PRELOAD"], PRELOAD)
    check(parts[1:] == ["libm.so.6"], "the previous LD_PRELOAD is kept after it", got["LD_PRELOAD"])
    check("LD_LIBRARY_PATH" not in got, "preload mode leaves LD_LIBRARY_PATH alone", repr(got))
    check(p.stderr.splitlines() == ["cudnnspy: the spy was loaded in 1 process of env, and none called cuDNN"],
          "env calls no cuDNN: said, and no claim of records", p.stderr)

    # --opt=value forms, "./" prefixes, a pattern, no previous LD_PRELOAD (--library: cli-library).
    p = run(["run", "--output=./out/%p.%r.jsonl", "--trace=cudnnConv*",
             "--", "env"], cwd=d)
    got = env_of(p)
    check(got.get("CUDNNSPY_OUTPUT") == os.path.join(d, "out/%p.%r.jsonl"), "pattern made absolute",
          repr(got))
    check(got.get("CUDNNSPY_TRACE") == "cudnnConv*", "--trace=", repr(got))
    check("CUDNNSPY_STDERR" not in got, "no --stderr, no CUDNNSPY_STDERR", repr(got))
    check("CUDNNSPY_FORMAT" not in got, "no --format, no CUDNNSPY_FORMAT", repr(got))
    q = run(["run", "--format", "binary", "--", "env"], cwd=d)
    check(env_of(q).get("CUDNNSPY_FORMAT") == "binary", "--format binary", q.stdout)
    q = run(["run", "--format=xml", "--", "env"], cwd=d)
    check(q.returncode == 2 and "--format takes json or binary, not 'xml'" in q.stderr and q.stdout == "",
          "--format xml: a usage error, nothing run", q.stderr)
    # --stderr is checked against the option table's words as --format is: the library would only warn, inside
    # the program, and keep its default (issue 30).
    for bad in ("bogus", "failures,bogus", ""):
        q = run(["run", "--stderr=" + bad, "--", "env"], cwd=d)
        check(q.returncode == 2 and q.stdout == "" and
              ("--stderr takes none, all or a comma-separated list of banner,failures,summary,probing, not '%s'"
               % bad) in q.stderr, "--stderr=%s: a usage error, nothing run" % bad, q.stderr)
    for good in ("none", "all", "failures,summary", "probing"):
        q = run(["run", "--stderr", good, "--", "env"], cwd=d)
        check(q.returncode == 0 and env_of(q).get("CUDNNSPY_STDERR") == good, "--stderr %s is passed on" % good,
              q.stderr)
    check(same_file(got.get("LD_PRELOAD", ""), PRELOAD), "LD_PRELOAD is the spy alone", repr(got))
    check("records in" not in p.stderr and "none called cuDNN" in p.stderr,
          "env made no call: no file, and no claim of one", p.stderr)

    # run itself writes nothing to stdout.
    p = run(["run", "--output", "recs", "--", "true"], cwd=d)
    check(p.returncode == 0 and p.stdout == "", "nothing on stdout", p.stdout)

    # Without --output, not a word.
    p = run(["run", "--", "env"], cwd=d)
    env_of(p)
    check(p.stderr == "cudnnspy: the spy was loaded in 1 process of env, and none called cuDNN\n",
          "only the line that says env called no cuDNN, without --output", p.stderr)


@scenario
def keep_env():
    """Options not given leave the CUDNNSPY_* variables as they were."""
    before = {"CUDNNSPY_OUTPUT": "/somewhere/out", "CUDNNSPY_TRACE": "cudnnCreate",
              "CUDNNSPY_LIBRARY": "not/absolute", "CUDNNSPY_STDERR": "summary",
              "LD_LIBRARY_PATH": "/a:/b"}
    got = env_of(run(["run", "--", "env"], before))
    for k, v in before.items():
        check(got.get(k) == v, "%s kept as %s" % (k, v), repr(got.get(k)))
    # Only the one given changes.
    got = env_of(run(["run", "--trace", "cudnnDestroy", "--", "env"], before))
    check(got.get("CUDNNSPY_TRACE") == "cudnnDestroy", "--trace replaces the old value", repr(got))
    check(got.get("CUDNNSPY_OUTPUT") == "/somewhere/out", "the others stay", repr(got))


@scenario
def drop_in():
    """--drop-in puts the drop-in directory first on LD_LIBRARY_PATH and leaves LD_PRELOAD alone."""
    got = env_of(run(["run", "--drop-in", "--", "env"], {"LD_PRELOAD": "libm.so.6",
                                                         "LD_LIBRARY_PATH": "/some/where:/else"}))
    parts = got.get("LD_LIBRARY_PATH", "").split(":")
    check(os.path.isabs(parts[0]) and same_file(parts[0], DROPIN9), "the 9 drop-in comes first",
          got.get("LD_LIBRARY_PATH"), DROPIN9)
    check(parts[1:] == ["/some/where", "/else"], "the previous path is kept after it", got["LD_LIBRARY_PATH"])
    check(got.get("LD_PRELOAD") == "libm.so.6", "LD_PRELOAD untouched", repr(got.get("LD_PRELOAD")))

    got = env_of(run(["run", "--drop-in=9", "--", "env"]))
    check(same_file(got.get("LD_LIBRARY_PATH", ""), DROPIN9), "--drop-in=9, no previous path: the dir alone",
          repr(got.get("LD_LIBRARY_PATH")))
    check("LD_PRELOAD" not in got, "no LD_PRELOAD appears in drop-in mode", repr(got))

    # An empty entry would put the current directory on the path.
    got = env_of(run(["run", "--drop-in=8", "--", "env"], {"LD_LIBRARY_PATH": ""}))
    value = got.get("LD_LIBRARY_PATH", "")
    check(":" not in value and same_file(value, DROPIN8), "--drop-in=8: the 8 drop-in, no empty entry",
          repr(value), DROPIN8)


def banner(stderr, flavor):
    return re.search(r"^cudnnspy: %s: cuDNN [0-9.]+ \(\d+\) from (\S+) \[([^]]+)\]" % flavor, stderr, re.M)


@scenario
def host_calls():
    """The demo program under `cudnnspy run --`: same output, the preload banner on stderr."""
    plain = subprocess.run([HOST_CALLS], env=clean_env({"LD_LIBRARY_PATH": FAKE9}), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    p = run(["run", "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9})
    check(p.returncode == 0, "host-calls exits 0 under cudnnspy", p.stdout, p.stderr)
    check(re.search(r"^cudnnspy: preload:", p.stderr, re.M), "a line starting `cudnnspy: preload:`", p.stderr)
    check(p.stdout == plain.stdout, "the program's stdout is untouched", plain.stdout, p.stdout)
    check(re.search(r"^cudnnspy: summary \(pid \d+\)", p.stderr, re.M), "the spy's summary at exit", p.stderr)


@scenario
def host_calls_drop_in():
    """--drop-in with a relative --library: the library gets an absolute path it accepts."""
    d = tmpdir()
    rel = os.path.relpath(os.path.join(FAKE9, "libcudnn.so.9"), d)
    check(not os.path.isabs(rel), "relative path to the fake", rel)
    p = run(["run", "--drop-in", "--library", rel, "--", HOST_CALLS], cwd=d)
    check(p.returncode == 0, "host-calls exits 0 through the drop-in", p.stdout, p.stderr)
    m = banner(p.stderr, "drop-in")
    check(m, "the drop-in banner", p.stderr)
    check(same_file(m.group(1), os.path.join(FAKE9, "libcudnn.so.9")) and m.group(2) == "CUDNNSPY_LIBRARY",
          "the fake named by --library answers", p.stderr)
    check("not an absolute path" not in p.stderr, "the library did not refuse the path", p.stderr)


@scenario
def records():
    """A relative --output still names the same place after the command changes directory."""
    if '"CUDNNSPY_OUTPUT"' not in open(CONFIG_C).read():
        print("the library has no CUDNNSPY_OUTPUT yet: skipped")
        sys.exit(77)
    d = tmpdir()
    os.mkdir(os.path.join(d, "recs"))
    p = run(["run", "--output", "recs", "--trace", "*", "--", "sh", "-c", 'cd / && exec "$0"', HOST_CALLS],
            {"LD_LIBRARY_PATH": FAKE9}, cwd=d)
    check(p.returncode == 0, "host-calls exits 0", p.stdout, p.stderr)
    files = [f for f in os.listdir(os.path.join(d, "recs")) if f.endswith(".cudnnspy.rec")]
    check(len(files) == 1 and files[0].startswith("host-calls."), "one record file in DIR/recs", repr(files),
          p.stderr)
    dumped = run(["dump", os.path.join(d, "recs", files[0])])
    check(dumped.returncode == 0, "cudnnspy dump reads it", dumped.stderr)
    events = [json.loads(line) for line in dumped.stdout.splitlines() if line.strip()]
    check(events and events[0].get("event") == "header", "a header first", repr(events[:1]))
    check(any(e.get("event") == "call" and e.get("fn") == "cudnnCreate" for e in events),
          "--trace '*' recorded cudnnCreate", repr(events))
    check(p.stderr.splitlines()[-1] == "cudnnspy: records in %s" % os.path.join(d, "recs", files[0]),
          "the last stderr line says where, once: the process's own line names its file", p.stderr)
    check(p.stderr.count("records in") == 1, "said once", p.stderr)


@scenario
def exit_status():
    """The command's exit status, and 128 + signal like a shell."""
    for script, want in [("exit 3", 3), ("exit 0", 0), ("exit 255", 255), ("kill -TERM $$", 143),
                         ("kill -KILL $$", 137)]:
        p = run(["run", "--", "sh", "-c", script])
        check(p.returncode == want, "sh -c '%s' gives %d, not %d" % (script, want, p.returncode), p.stderr)
        check(p.stdout == "", "nothing on stdout", p.stdout)
    # A command that was killed still ran: the records line follows.
    d = tmpdir()
    p = run(["run", "--output", d, "--", "sh", "-c", "kill -TERM $$"])
    check(p.returncode == 143 and "none called cuDNN" in p.stderr and "records in" not in p.stderr,
          "a killed command that made no call: no claim of records",
          p.stderr)


@scenario
def signals():
    """SIGINT/SIGQUIT are ignored by cudnnspy while it waits, not by the command."""
    for sig in ("INT", "QUIT"):
        p = run(["run", "--", "sh", "-c", "kill -%s $PPID; sleep 0.2; exit 5" % sig])
        check(p.returncode == 5, "cudnnspy survives SIG%s and returns the command's 5 (got %d)" %
              (sig, p.returncode), p.stderr)
    p = run(["run", "--", "sh", "-c", "kill -INT $$; exit 4"])
    check(p.returncode == 130, "the command gets SIGINT's default action: 130, not %d" % p.returncode,
          p.stderr)

    # Started with SIGINT ignored (nohup, a background job): the command keeps it ignored.
    def ignored():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    p = run(["run", "--", "sh", "-c", "kill -INT $$; exit 4"], preexec=ignored)
    check(p.returncode == 4, "an inherited SIG_IGN is passed on: 4, not %d" % p.returncode, p.stderr)


@scenario
def missing_command():
    """A command that does not exist: 127 and one message; no records line."""
    d = tmpdir()
    p = run(["run", "--output", d, "--", "no-such-command-cudnnspy"])
    check(p.returncode == 127, "127 for a missing command, not %d" % p.returncode, p.stderr)
    check(p.stderr.startswith("cudnnspy: no-such-command-cudnnspy: command not found"), "says so", p.stderr)
    check("records in" not in p.stderr, "no records line when nothing ran", p.stderr)
    check(p.stdout == "", "nothing on stdout", p.stdout)
    p = run(["run", "--", os.path.join(d, "nothing-here")])
    check(p.returncode == 127 and "No such file" in p.stderr, "127 for a missing path", p.stderr)


@scenario
def not_executable():
    """A file that cannot be executed: 126."""
    d = tmpdir()
    f = os.path.join(d, "script")
    with open(f, "w") as fh:
        fh.write("#!/bin/sh\nexit 0\n")
    os.chmod(f, stat.S_IRUSR | stat.S_IWUSR)
    if os.access(f, os.X_OK):
        print("running as a user who may execute anything: skipped")
        sys.exit(77)
    p = run(["run", "--", f])
    check(p.returncode == 126, "126 for a file without x, not %d" % p.returncode, p.stderr)
    check(p.stderr.startswith("cudnnspy: %s: Permission denied" % f), "says why", p.stderr)
    p = run(["run", "--", d])
    check(p.returncode == 126, "126 for a directory, not %d" % p.returncode, p.stderr)


@scenario
def usage():
    """Bad command lines: exit 2, a message on stderr, nothing run, nothing on stdout."""
    d = tmpdir()
    marker = os.path.join(d, "ran")
    cmd = ["touch", marker]
    cases = [
        ([], "no command given"),
        (["--bogus"], "unknown option '--bogus'"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["run"] + cmd, "put '--' before the command"),
        (["run"], "no '--' and command"),
        (["run", "--output", d], "no '--' and command"),
        (["run", "--"], "no command after '--'"),
        (["run", "--bogus", "--"] + cmd, "unknown option '--bogus'"),
        (["run", "-x", "--"] + cmd, "unknown option '-x'"),
        (["run", "--drop-in=7", "--"] + cmd, "--drop-in takes 8 or 9"),
        (["run", "--drop-in", "9", "--"] + cmd, "put '--' before the command"),
        (["run", "--output"], "--output needs a value"),
        (["run", "--trace", "--"] + cmd, "--trace needs a value"),
        (["run", "--output=", "--"] + cmd, "--output needs a non-empty value"),
        (["run", "--library", "", "--"] + cmd, "--library needs a non-empty value"),
        (["scan", "--bogus"], "unknown option '--bogus'"),
        (["report", "x.jsonl"], "cannot read x.jsonl"),
    ]
    for argv, msg in cases:
        p = run(argv, cwd=d)
        check(p.returncode == 2, "%r: exit 2, not %d" % (argv, p.returncode), p.stderr)
        check(msg in p.stderr, "%r: says %r" % (argv, msg), p.stderr)
        check(all(line.startswith("cudnnspy: ") for line in p.stderr.splitlines()),
              "%r: every stderr line starts with `cudnnspy: `" % argv, p.stderr)
        check(p.stdout == "", "%r: nothing on stdout" % argv, p.stdout)
        check(not os.path.exists(marker), "%r: the command did not run" % argv)


@scenario
def help():
    """--help and --version on stdout, exit 0."""
    for argv in (["--help"], ["-h"], ["run", "--help"]):
        p = run(argv)
        check(p.returncode == 0 and p.stderr == "", "%r: exit 0, quiet stderr" % argv, p.stderr)
        check("usage: cudnnspy run [OPTIONS] -- COMMAND" in p.stdout, "%r: usage text" % argv, p.stdout)
        for opt in ("--output", "--trace", "--library", "--drop-in", "--stderr", "--help-env", "--version"):
            check(opt in p.stdout, "%r: the usage mentions %s" % (argv, opt), p.stdout)
    p = run(["--version"])
    check(p.returncode == 0 and p.stdout == "cudnnspy %s\n" % VERSION, "the project's version", p.stdout)


def c_strings(text):
    """The value of a run of adjacent C string literals (simple escapes only)."""
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', text))


@scenario
def help_env():
    """--help-env lists every row of the option table in shim/common/options.c."""
    src = open(CONFIG_C).read()
    m = re.search(r"spy_options\[\]\s*=\s*\{(.*?)\n\};", src, re.S)
    check(m, "the option table in %s" % CONFIG_C)
    table = m.group(1)
    names = re.findall(r'\{\s*"(CUDNNSPY_[A-Z0-9_]+)"', table)
    check(len(names) >= 2, "options found in the table", table)
    p = run(["--help-env"])
    check(p.returncode == 0 and p.stderr == "", "exit 0, quiet stderr", p.stderr)
    lines = p.stdout.splitlines()
    for name in names:
        check(name in lines, "%s has a line of its own" % name, p.stdout)
    check(len([line for line in lines if line.startswith("CUDNNSPY_")]) == len(names),
          "one entry per row, no more", p.stdout)
    # Each row's default and the start of its help, when the row is plain literals.
    rows = re.findall(r'\{\s*"(CUDNNSPY_[A-Z0-9_]+)",\s*\w+,\s*"([^"]*)",\s*(?:NULL|"[^"]*"),\s*'
                      r'((?:"(?:[^"\\]|\\.)*"\s*)+)', table)
    check(rows, "rows parsed", table)
    for name, default, help_src in rows:
        start = lines.index(name)
        block = []
        for line in lines[start + 1:]:
            if line.startswith("CUDNNSPY_"):
                break
            block.append(line.strip())
        block = " ".join(" ".join(block).split())
        # An empty list of globs selects nothing ("none"); any other empty value is not set ("unset").
        globs = re.search(r'"%s",\s*SPY_OPT_GLOBS' % name, table)
        want = "default: %s" % (default or ("none" if globs else "unset"))
        check(want in block, "%s: %r" % (name, want), block)
        words = " ".join(c_strings(help_src).split()[:6])
        check(words in block, "%s: its help (%r)" % (name, words), block)


def install_tree(root, with_lib=True, with_dropin9=False):
    """A copy of the installed layout: <root>/<bindir>/cudnnspy and <root>/<libdir>/..."""
    bindir = os.path.join(root, BINDIR)
    libdir = os.path.normpath(os.path.join(bindir, LIBDIR_FROM_BINDIR))
    os.makedirs(bindir)
    exe = os.path.join(bindir, "cudnnspy")
    shutil.copy2(CLI, exe)
    if with_lib:
        os.makedirs(libdir)
        shutil.copy2(PRELOAD, os.path.join(libdir, "libcudnnspy.so"))
    if with_dropin9:
        os.makedirs(os.path.join(libdir, "cudnnspy", "dropin9"))
        shutil.copy2(os.path.join(DROPIN9, "libcudnn.so.9"), os.path.join(libdir, "cudnnspy", "dropin9"))
    return exe, libdir


@scenario
def installed():
    """An installed copy finds the library under <prefix>/<libdir>, not in the build tree."""
    if os.path.isabs(LIBDIR_FROM_BINDIR):
        print("libdir %s is outside the prefix: the installed layout cannot move: skipped" %
              LIBDIR_FROM_BINDIR)
        sys.exit(77)
    root = tmpdir()
    exe, libdir = install_tree(root, with_dropin9=True)
    lib = os.path.join(libdir, "libcudnnspy.so")
    got = env_of(run(["run", "--", "env"], {"LD_PRELOAD": "libm.so.6"}, exe=exe))
    check(preload_parts(got) == [lib, "libm.so.6"], "LD_PRELOAD starts with the installed library",
          got.get("LD_PRELOAD"), lib)
    got = env_of(run(["run", "--drop-in", "--", "env"], exe=exe))
    check(got.get("LD_LIBRARY_PATH") == os.path.join(libdir, "cudnnspy", "dropin9"),
          "the installed drop-in directory", got.get("LD_LIBRARY_PATH"))
    # The copied library really is the one that runs.
    p = run(["run", "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9}, exe=exe)
    check(p.returncode == 0 and re.search(r"^cudnnspy: preload:", p.stderr, re.M),
          "host-calls under the installed copy", p.stderr)
    # No 8 drop-in installed here: a clear error naming where it looked, exit 2.
    p = run(["run", "--drop-in=8", "--", "true"], exe=exe)
    want = os.path.join(libdir, "cudnnspy", "dropin8", "libcudnn.so.8")
    check(p.returncode == 2 and "cannot find libcudnn.so.8" in p.stderr, "missing drop-in: exit 2", p.stderr)
    check(want in os.path.normpath(p.stderr.split("looked for ")[-1].strip()), "names %s" % want, p.stderr)
    # Called through a symlink, it still finds the libraries next to the real file.
    link = os.path.join(tmpdir(), "cudnnspy")
    os.symlink(CLI, link)
    got = env_of(run(["run", "--", "env"], exe=link))
    check(same_file(preload_parts(got)[0], PRELOAD), "a symlink to the build tree's cudnnspy",
          got.get("LD_PRELOAD"))


@scenario
def library_not_found():
    """With no library next to it: exit 2, the paths it looked for, the command not run."""
    root = tmpdir()
    exe, libdir = install_tree(root, with_lib=False)
    marker = os.path.join(root, "ran")
    p = run(["run", "--", "touch", marker], exe=exe)
    check(p.returncode == 2, "exit 2, not %d" % p.returncode, p.stderr)
    check("cannot find libcudnnspy.so" in p.stderr, "names the library", p.stderr)
    if not os.path.isabs(LIBDIR_FROM_BINDIR):
        check(os.path.join(libdir, "libcudnnspy.so") in os.path.normpath(p.stderr.split("looked for ")[-1]),
              "names where it looked", p.stderr)
    check(not os.path.exists(marker), "the command did not run")
    # In a cli/ directory it looks in the build tree's shim/ first, and says both.
    cli = os.path.join(root, "cli")
    os.mkdir(cli)
    shutil.copy2(CLI, cli)
    p = run(["run", "--", "touch", marker], exe=os.path.join(cli, "cudnnspy"))
    check(p.returncode == 2 and "%s/../shim/libcudnnspy.so and " % cli in p.stderr,
          "the build-tree place comes first", p.stderr)
    check(not os.path.exists(marker), "the command did not run")


@scenario
def library():
    """--library X is checked before the program starts: what is not a usable cuDNN gets one line and exit 2,
    and the program never runs; a usable X runs the program through the drop-in, said in one line."""
    d = tmpdir()
    marker = os.path.join(d, "ran")
    cmd = ["touch", marker]
    os.mkdir(os.path.join(d, "empty"))
    with open(os.path.join(d, "text.so"), "w") as f:
        f.write("not a library\n")
    with open(os.path.join(d, "truncated.so"), "wb") as f:
        with open(os.path.join(FAKE9, "libcudnn.so.9"), "rb") as g:
            f.write(g.read(100))
    os.mkfifo(os.path.join(d, "fifo"))
    os.mkdir(os.path.join(d, "fifo-dir"))
    os.mkfifo(os.path.join(d, "fifo-dir", "libcudnn.so.9"))
    os.symlink(os.path.join(d, "nowhere"), os.path.join(d, "dangling.so"))
    cases = [
        ("missing.so", "--library %s/missing.so: No such file or directory" % d),
        ("empty", "--library %s/empty: a directory without libcudnn.so.9, libcudnn.so.8 or libcudnn.so" % d),
        ("text.so", "--library %s/text.so: not an ELF shared library" % d),
        ("truncated.so", "--library %s/truncated.so: not an ELF shared library" % d),
        ("fifo", "--library %s/fifo: a FIFO, not a library" % d),
        ("fifo-dir", "--library %s/fifo-dir: %s/fifo-dir/libcudnn.so.9: a FIFO, not a library" % (d, d)),
        ("dangling.so", "--library %s/dangling.so: No such file or directory" % d),
        (os.path.realpath(shutil.which("true")), "not a cuDNN dispatcher: it defines no cudnnGetVersion"),
        (os.path.join(DROPIN9, "libcudnn.so.9"), "that is cudnnspy's own library, not a real cuDNN"),
        (PRELOAD, "that is cudnnspy's own library, not a real cuDNN"),
    ]
    libc = [l.split()[-1] for l in open("/proc/self/maps") if re.search(r"/libc\.so\.6$|/libc-[0-9.]+\.so$", l)]
    if libc:
        cases.append((libc[0], "not a cuDNN dispatcher: it defines no cudnnGetVersion; its SONAME is libc.so.6"))
    for value, msg in cases:
        for extra in ([], ["--drop-in"]):
            p = run(["run"] + extra + ["--library", value, "--"] + cmd, cwd=d)
            check(p.returncode == 2, "%s: exit 2, not %d" % (value, p.returncode), p.stderr)
            lines = p.stderr.splitlines()
            check(len(lines) == 1 and lines[0].startswith("cudnnspy: ") and msg in lines[0],
                  "%s: one line that says %r" % (value, msg), p.stderr)
            check(p.stdout == "", "nothing on stdout", p.stdout)
            check(not os.path.exists(marker), "%s: the program did not run" % value)

    # Usable: a file by a relative path, a directory, the 8.x copy; the drop-in of its major, said in one line.
    rel = os.path.relpath(os.path.join(FAKE9, "libcudnn.so.9"), d)
    for argv, drop, major, lib, named in (
            (["--library", rel], DROPIN9, 9, os.path.join(d, rel), None),
            (["--library=" + FAKE9], DROPIN9, 9, FAKE9, os.path.join(FAKE9, "libcudnn.so.9")),
            (["--library", os.path.join(FAKE8, "libcudnn.so.8")], DROPIN8, 8, os.path.join(FAKE8, "libcudnn.so.8"),
             None)):
        named = named or lib
        p = run(["run"] + argv + ["--", "env"], {"LD_LIBRARY_PATH": "/some/where"}, cwd=d)
        got = env_of(p)
        check(got.get("CUDNNSPY_LIBRARY") == lib, "%r: CUDNNSPY_LIBRARY absolute" % argv, repr(got))
        parts = got.get("LD_LIBRARY_PATH", "").split(":")
        check(same_file(parts[0], drop) and parts[1:] == ["/some/where"], "%r: the drop-in first" % argv,
              repr(parts))
        check("LD_PRELOAD" not in got, "%r: not preloaded" % argv, repr(got))
        check(p.stderr.splitlines()[0] == "cudnnspy: --library: using the drop-in libcudnn.so.%d, so that the "
              "program gets only %s" % (major, named), "%r: one line says so" % argv, p.stderr)
    # --drop-in given: that one, and nothing said.
    p = run(["run", "--drop-in=8", "--library", rel, "--", "env"], cwd=d)
    got = env_of(p)
    check(same_file(got.get("LD_LIBRARY_PATH", ""), DROPIN8) and own_lines(p.stderr) == "", "--drop-in=8 kept, silent",
          repr(got.get("LD_LIBRARY_PATH")), p.stderr)
    # The program itself: the copy named answers through the drop-in, its output unchanged.
    plain = subprocess.run([HOST_CALLS], env=clean_env({"LD_LIBRARY_PATH": FAKE9}), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    p = run(["run", "--library", FAKE9, "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9})
    check(p.returncode == 0 and p.stdout == plain.stdout, "same output", plain.stdout, p.stdout, p.stderr)
    m = banner(p.stderr, "drop-in")
    check(m and same_file(m.group(1), os.path.join(FAKE9, "libcudnn.so.9")) and m.group(2) == "CUDNNSPY_LIBRARY",
          "the drop-in forwards to the copy named", p.stderr)


@scenario
def demo():
    """examples/run-demo.sh (the README's first command runs it) with the build directory given absolute and
    relative: both runs of the demo, preload and drop-in, with their banners."""
    for build, cwd in ((BUILD_ROOT, "/"), (os.path.basename(BUILD_ROOT), os.path.dirname(BUILD_ROOT))):
        p = subprocess.run(["sh", DEMO_SH, build], cwd=cwd, env=clean_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        check(p.returncode == 0, "%s: exit %d" % (build, p.returncode), p.stderr)
        check("cudnnspy: preload: cuDNN " in p.stderr and "cudnnspy: drop-in: cuDNN " in p.stderr,
              "%s: both banners" % build, p.stderr)


def build_c(d, name, source, *args):
    src = os.path.join(d, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    exe = os.path.join(d, name)
    p = subprocess.run(["cc", "-o", exe, src] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    check(p.returncode == 0, "cc %s" % name, p.stderr)
    return exe


@scenario
def never_silent():
    """run says, after the program, when the spy never got in and why: a static program, a program whose own
    DT_RPATH finds cuDNN before the drop-in, or a program that made no cuDNN call."""
    d = tempfile.mkdtemp(prefix="cudnnspy-cli-")
    try:
        static = build_c(d, "static", "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 3; }\n", "-static")
        p = run(["run", "--", static])
        check(p.returncode == 3 and p.stdout == "hi\n", "the program ran as before", p.stdout)
        check(p.stderr == "cudnnspy: the preloaded spy was never loaded: %s is statically linked, so no dynamic "
              "loader runs in it and neither LD_PRELOAD nor the drop-in can reach it\n" % static, "static", p.stderr)
        bundled = os.path.join(d, "bundled")
        os.makedirs(bundled)
        shutil.copy(os.path.join(FAKE9, "libcudnn.so.9"), bundled)
        prog = build_c(d, "rpath", "#include <stdio.h>\n#include <stddef.h>\nsize_t cudnnGetVersion(void);\n"
                       "int main(void) { printf(\"%zu\\n\", cudnnGetVersion()); return 0; }\n",
                       "-L" + FAKE9, "-l:libcudnn.so.9", "-Wl,--disable-new-dtags,-rpath," + bundled)
        p = run(["run", "--drop-in", "--", prog])
        check(p.returncode == 0 and p.stdout == "91900\n", "the RPATH copy answers", p.stdout, p.stderr)
        check(p.stderr == "cudnnspy: the drop-in was never loaded: the DT_RPATH of %s finds %s/libcudnn.so.9 before "
              "LD_LIBRARY_PATH; run without --drop-in (the preload works there), or remove the RPATH (patchelf "
              "--remove-rpath)\n" % (prog, bundled), "the RPATH named", p.stderr)
        p = run(["run", "--", prog])
        check(p.returncode == 0 and "the spy was" not in p.stderr and "cudnnspy: preload: cuDNN" in p.stderr,
              "the preload gets in, and nothing more is said", p.stderr)
        p = run(["run", "--", "true"])
        check(p.stderr == "cudnnspy: the spy was loaded in 1 process of true, and none called cuDNN\n",
              "no cuDNN call", p.stderr)
        # In a TMPDIR of its own, so that other tests' runs at the same time do not count.
        own = os.path.join(d, "tmp")
        os.makedirs(own)
        p = run(["run", "--", "true"], {"TMPDIR": own})
        check(p.returncode == 0 and os.listdir(own) == [], "the run directory is removed", repr(os.listdir(own)))
    finally:
        shutil.rmtree(d, ignore_errors=True)


@scenario
def output_dir():
    """--output DIR that does not exist yet is made, parents too, and gets one file per process; with several
    processes the closing line counts them; a file that could not be created is never claimed."""
    d = tempfile.mkdtemp(prefix="cudnnspy-cli-")
    try:
        out = os.path.join(d, "new", "records")
        p = run(["run", "--output", out, "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9})
        files = os.listdir(out) if os.path.isdir(out) else []
        check(p.returncode == 0 and len(files) == 1, "a directory made, one file in it", repr(files), p.stderr)
        check(p.stderr.count("records in") == 1, "said once", p.stderr)
        two = os.path.join(d, "two")
        p = run(["run", "--output", two, "--", "sh", "-c", "%s; %s" % (HOST_CALLS, HOST_CALLS)],
                {"LD_LIBRARY_PATH": FAKE9})
        # The job said after the program (integration's run-after) ends by where its records are; with the
        # summary left out of stderr, one line counts them.
        check(len(os.listdir(two)) == 2 and "cudnnspy: after the program, from the records of 2 processes:" in
              p.stderr and p.stderr.splitlines()[-1] == "cudnnspy:   the whole report: cudnnspy report %s" % two,
              "two processes said at the end", p.stderr)
        p = run(["run", "--output", two, "--stderr", "banner,failures", "--", "sh", "-c",
                 "%s; %s" % (HOST_CALLS, HOST_CALLS)], {"LD_LIBRARY_PATH": FAKE9})
        check(len(os.listdir(two)) == 4 and p.stderr.splitlines()[-1] == "cudnnspy: records of 2 processes in %s" % two,
              "two processes counted at the end", p.stderr)
        blocked = os.path.join(d, "file")
        with open(blocked, "w") as f:
            f.write("x")
        p = run(["run", "--output", os.path.join(blocked, "%p.jsonl"), "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9})
        check(p.stderr.splitlines()[-1] == "cudnnspy: no record file was written (see the lines above)" and
              "cannot create a record file" in p.stderr, "no claim of records that are not there", p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@scenario
def abort_at_load():
    """cuDNN aborting at its first call ("Invalid handle. Cannot load symbol ...", a dispatcher without its
    sub-libraries; the fake plays it): run says where it died and what to check; the crash handler says it too."""
    p = run(["run", "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_ABORT": "1"})
    check(p.returncode == 134, "the program's own end: SIGABRT, 134", p.returncode)
    lines = [l for l in p.stderr.splitlines() if l.startswith("cudnnspy: ")]
    check(lines == ["cudnnspy: %s ended by SIGABRT inside its first cuDNN call, while cuDNN loaded: a dispatcher "
                    "that cannot load its sub-libraries aborts so (\"Invalid handle. Cannot load symbol ...\"); "
                    "cudnnspy scan --for %s shows what it loads" % (HOST_CALLS, HOST_CALLS)], "one true line",
          p.stderr)
    q = run(["run", "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_ABORT": "1", "CUDNNSPY_CRASH": "on"})
    check("fatal signal 6 (SIGABRT)" in q.stderr and "while the spy asked cuDNN its version" in q.stderr and
          q.returncode == 134, "the crash handler names the moment", q.stderr)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print("usage: test_cli.py {%s}" % ",".join(sorted(SCENARIOS)))
        return 2
    if not CLI:
        print("CLI_EXE is not set: run through meson test")
        return 2
    try:
        SCENARIOS[sys.argv[1]]()
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
