#!/usr/bin/env python3
"""The Windows drop-in DLLs (docs/windows.md), cross-built with mingw-w64 and run under Wine.

usage: test_windows.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (no mingw-w64, or no Wine for the scenarios that run programs).

The cross build is made here, once for all scenarios (a lock serializes them), in BUILD_ROOT/windows-cross from
the source tree with win/mingw-w64-x86_64.txt: what `./dev.sh windows` and CI run. The program is
tests/windows/win-app.c, linked to the fake cudnn64_9.dll as a program is linked to NVIDIA's; the drop-in goes
first in the search order (the program's directory) and finds the fake by CUDNNSPY_LIBRARY or by the search
order without itself. Records are read back by the Linux command, `cudnnspy dump`.
"""
import atexit
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

E = os.environ
SRC = E.get("SOURCE_ROOT", "")
BUILD = E.get("BUILD_ROOT", "")
CLI = E.get("CLI_EXE", "")
CROSS = os.path.join(BUILD, "windows-cross")
OBJDUMP = "x86_64-w64-mingw32-objdump"
# What a DLL of Windows' own may import: the system's DLLs, nothing the program would have to ship.
SYSTEM_DLLS = {"kernel32.dll", "msvcrt.dll", "ntdll.dll", "advapi32.dll", "psapi.dll", "user32.dll"}
# The fake refuses this one call: the program's failure, with its stack.
FAIL_ENV = {"FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=3"}

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__.replace("_", "-")] = fn
    return fn


class Failed(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % (c,) for c in context))


def tmpdir():
    d = os.path.realpath(tempfile.mkdtemp(prefix="cudnnspy-win-"))
    atexit.register(shutil.rmtree, d, True)
    return d


def z(path):
    """A Linux path as Wine's programs see it: drive Z: is /."""
    return "Z:" + path.replace("/", "\\")


def cross_build():
    """The Windows build, made or brought up to date (ninja rebuilds what changed): its directory."""
    if not shutil.which("x86_64-w64-mingw32-gcc") or not shutil.which(OBJDUMP):
        raise Skip("no mingw-w64 (x86_64-w64-mingw32-gcc, -objdump)")
    os.makedirs(BUILD, exist_ok=True)
    with open(os.path.join(BUILD, "windows-cross.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(CROSS, "build.ninja")):
            p = subprocess.run(["meson", "setup", "--cross-file", os.path.join(SRC, "win", "mingw-w64-x86_64.txt"),
                                CROSS, SRC], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            check(p.returncode == 0, "meson setup of the Windows build failed", p.stdout[-3000:])
        p = subprocess.run(["meson", "compile", "-C", CROSS, "-j", "2"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        check(p.returncode == 0, "the Windows build failed", p.stdout[-3000:])
    return CROSS


def built(rel):
    path = os.path.join(cross_build(), *rel.split("/"))
    check(os.path.isfile(path), "not built: %s" % rel)
    return path


def objdump(path):
    p = subprocess.run([OBJDUMP, "-p", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "objdump -p %s" % path, p.stderr)
    return p.stdout


def exports(path):
    text = objdump(path)
    table = text.split("[Ordinal/Name Pointer] Table", 1)
    check(len(table) == 2, "%s exports nothing" % path)
    return re.findall(r"^\s*\[\s*\d+\]\s+(\S+)$", table[1].split("\n\n", 1)[0], re.M)


def imports(path):
    return [n.lower() for n in re.findall(r"^\s*DLL Name:\s*(\S+)", objdump(path), re.M)]


def api_names(major):
    sys.path.insert(0, os.path.join(SRC, "shim", "gen"))
    import apimodel
    api = apimodel.parse(os.path.join(SRC, "shim", "api", "cudnn.api"))
    return {f.name for f in api.functions if major in f.majors}


def check_dll(major):
    path = built("shim/win/cudnn64_%d.dll" % major)
    names = exports(path)
    want = api_names(major)
    ours = [n for n in names if not n.startswith("cudnnspy_")]
    check(set(ours) == want, "cudnn64_%d.dll exports the description's names: missing %s, extra %s" % (
        major, sorted(want - set(ours))[:10], sorted(set(ours) - want)[:10]))
    check(len(ours) == len(set(ours)), "each name once")
    spy = sorted(n for n in names if n.startswith("cudnnspy_"))
    check("cudnnspy_is_loaded" in spy, "the spy's public API is exported (what tells a spy from a cuDNN)", spy)
    check(not [n for n in names if not n.startswith("cudnn")], "nothing but cudnn* names",
          [n for n in names if not n.startswith("cudnn")])
    dlls = imports(path)
    check(set(dlls) <= SYSTEM_DLLS, "cudnn64_%d.dll imports only Windows' own DLLs" % major, dlls)
    print("cudnn64_%d.dll: %d cudnn* names exported, %s; imports %s" % (major, len(ours), ", ".join(spy), ", ".join(dlls)))


@scenario
def exports9():
    """cudnn64_9.dll exports every name of cuDNN 9 in the description, the spy's cudnnspy_*, nothing else
    (no DllMain, no libgcc or winpthreads names), and needs only Windows' own DLLs."""
    check_dll(9)


@scenario
def exports8():
    check_dll(8)


def wine_env(root, extra):
    if not shutil.which("wine"):
        raise Skip("no wine")
    env = dict(os.environ, WINEPREFIX=os.path.join(root, "prefix"), WINEDEBUG="-all",
               WINEDLLOVERRIDES="mscoree,mshtml=")
    for k in list(env):
        if k.startswith("CUDNNSPY_") or k.startswith("FAKECUDNN_"):
            del env[k]
    env.update(FAIL_ENV)
    env.update(extra)
    return env


def run_app(root, appdir, args, extra=None, exe="win-app.exe"):
    env = wine_env(root, extra or {})
    # Twice at most: a fresh prefix's first start now and then runs nothing and says nothing (a CI run, once).
    for attempt in range(2):
        try:
            p = subprocess.run(["wine", os.path.join(appdir, exe)] + args, cwd=appdir, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
        except subprocess.TimeoutExpired:
            raise Skip("wine did not finish within 240 s")
        if b"version " in p.stdout or b"cudnnSetBackdoor" in p.stdout:
            break
    else:
        raise Skip("wine ran no Windows program here: %r" % p.stderr[-500:])
    return p


def layout(root, major=9):
    """app/: the program and the drop-in, first in its search order; fake/: the fake cuDNN; base/: the program
    beside the fake, as it runs without the spy."""
    app, fake, base = (os.path.join(root, n) for n in ("app", "fake", "base"))
    exe = "tests/windows/win-app%s.exe" % ("" if major == 9 else major)
    dll = "cudnn64_%d.dll" % major
    for d in (app, fake, base):
        os.makedirs(d)
    shutil.copy(built(exe), app)
    shutil.copy(built("shim/win/" + dll), app)
    shutil.copy(built("tests/windows/fake%d/%s" % (major, dll)), fake)
    shutil.copy(built(exe), base)
    shutil.copy(built("tests/windows/fake%d/%s" % (major, dll)), base)
    return app, fake, base


def dump(rec):
    p = subprocess.run([CLI, "dump", rec], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "cudnnspy dump %s" % rec, p.stderr)
    return [json.loads(l) for l in p.stdout.splitlines()]


def records_of(recdir):
    files = [os.path.join(recdir, f) for f in os.listdir(recdir)]
    check(len(files) == 1, "one record file", files)
    return files[0], dump(files[0])


@scenario
def wine_dropin():
    """The drop-in first in the search order, the fake by CUDNNSPY_LIBRARY (a full Windows path): the program's
    stdout and exit status are those of a run without it; stderr has the banner, the failure line with its
    stack and the summary; the records, read by the Linux command, hold the header, the fake as the library
    that answers (its directory), the failure with its arguments, cuDNN's message and the stack, and a
    summary that counts every call."""
    root = tmpdir()
    app, fake, base = layout(root)
    reps = 3
    # A sub-library of another directory: the records say where each cudnn*64_*.dll came from.
    subdir = os.path.join(root, "sub")
    os.makedirs(subdir)
    sublib = os.path.join(subdir, "cudnn_ops64_9.dll")
    shutil.copy(built("tests/windows/fake8/cudnn64_8.dll"), sublib)
    plain = run_app(root, base, [str(reps)], {"APP_SUBLIB": z(sublib)})
    check(b"sub-library: loaded" in plain.stdout, "the program loads the sub-library", plain.stdout)
    check(plain.returncode == 3 and b"set tensor n=-1: 3 (last error 4343)" in plain.stdout, "the program fails one call without the spy",
          plain.stdout, plain.stderr[-1000:])
    check(b"cudnnspy:" not in plain.stderr, "no spy in the plain run", plain.stderr[-1000:])
    recdir = os.path.join(root, "rec")
    os.makedirs(recdir)
    lib = z(os.path.join(fake, "cudnn64_9.dll"))
    spied = run_app(root, app, [str(reps)], {"CUDNNSPY_LIBRARY": lib, "CUDNNSPY_OUTPUT": z(recdir) + "\\",
                                             "APP_SUBLIB": z(sublib)})
    err = spied.stderr.decode(errors="replace")
    check(spied.stdout == plain.stdout, "stdout unchanged by the drop-in", plain.stdout, spied.stdout, err)
    check(spied.returncode == plain.returncode, "exit status unchanged", spied.returncode, err)
    check(re.search(r"cudnnspy: drop-in: cuDNN 9\.19\.0 \(91900\) from %s \[CUDNNSPY_LIBRARY\]" % re.escape(lib), err),
          "the banner names the fake by its full path", err)
    fail_line = [l for l in err.splitlines() if "cudnnSetTensor4dDescriptor(" in l]
    check(len(fail_line) == 1 and "n=-1" in fail_line[0] and "CUDNN_STATUS_BAD_PARAM" in fail_line[0] and
          "fake: cudnnSetTensor4dDescriptor failed with status 3" in fail_line[0], "the failure line", err)
    check(re.search(r"\| at app_describe \(win-app\.exe\+0x[0-9a-f]+\)", fail_line[0]),
          "its stack starts in the program's exported app_describe", fail_line[0])
    calls = 8 + 2 * reps
    check(re.search(r"summary \(pid \d+\): %d calls, 1 failed" % calls, err), "the exit summary on stderr", err)
    rec, recs = records_of(recdir)
    check(re.match(r"win-app\.[^.]+\.\d+\.cudnnspy\.rec$", os.path.basename(rec)),
          "one file per process in the directory CUDNNSPY_OUTPUT names with a trailing backslash", rec)
    kinds = [r.get("event") for r in recs]
    check(kinds[0] == "header" and kinds[-1] == "summary", "header first, summary last", kinds)
    h = recs[0]
    check(h["mode"] == "drop-in" and h["program"] == "win-app" and h["argv"][-1] == str(reps) and
          h["library"]["path"] == lib and h["library"]["how"] == "CUDNNSPY_LIBRARY", "the header", h)
    libs = [r for r in recs if r.get("event") == "library"]
    answering = [r for r in libs if r["answers"]]
    check(len(answering) == 1 and answering[0]["path"] == lib and answering[0]["kind"] == "cudnn" and
          answering[0]["version"] == 91900, "the loaded modules: the fake answers, from its directory", libs)
    subs = [r for r in libs if r["kind"] == "cudnn-sublib"]
    check(len(subs) == 1 and subs[0]["path"] == z(sublib) and not subs[0]["answers"],
          "the sub-library, from its own directory", libs)
    check(not [r for r in libs if r["path"].lower().endswith("\\app\\cudnn64_9.dll")], "the drop-in is no library of cuDNN's", libs)
    fails = [r for r in recs if r.get("event") == "failure"]
    check(len(fails) == 1, "one failure record", kinds)
    f = fails[0]
    check(f["fn"] == "cudnnSetTensor4dDescriptor" and f["status"] == 3 and f["args"]["n"] == -1 and
          f["args"]["w"] == 224 and f["message"] == "fake: cudnnSetTensor4dDescriptor failed with status 3",
          "the failure's arguments and cuDNN's message", f)
    stack = f.get("stack") or []
    check(stack and stack[0]["symbol"] == "app_describe" and stack[0]["module"].lower().endswith("\\win-app.exe"),
          "the failure's stack, named from the program's exports", stack)
    check(not [s for s in stack if (s["module"] or "").lower().endswith("\\app\\cudnn64_9.dll")],
          "no frame of the drop-in itself", stack)
    s = recs[-1]
    check(s["calls"] == calls and s["failures"] == 1, "the summary record counts every call", s)
    by = {x["fn"]: x["calls"] for x in s["functions"]}
    check(by.get("cudnnCreateFilterDescriptor") == reps and by.get("cudnnGetVersion") == 1, "per function", by)
    print("wine: stdout identical (%d bytes), exit status %d; %d records dumped from %s; stack %s" % (
        len(plain.stdout), plain.returncode, len(recs), os.path.basename(rec),
        " < ".join("%s+%s" % (x["symbol"] or "?", x["offset"]) for x in stack)))


@scenario
def wine_search_order():
    """Without CUDNNSPY_LIBRARY: the drop-in finds the real DLL by the search order without itself (PATH here),
    never itself though it has the very name; with no other cudnn64_9.dll anywhere it says so once and every
    call answers CUDNN_STATUS_NOT_INITIALIZED (1001), the program running on."""
    root = tmpdir()
    app, fake, base = layout(root)
    p = run_app(root, app, ["1"], {"WINEPATH": z(fake)})
    err = p.stderr.decode(errors="replace")
    check(re.search(r"drop-in: cuDNN 9\.19\.0 \(91900\) from %s \[PATH\]" % re.escape(z(os.path.join(fake, "cudnn64_9.dll"))),
                    err), "found through PATH, past its own file in the program's directory", err)
    check(p.stdout == run_app(root, base, ["1"]).stdout, "stdout as without the spy", p.stdout)
    alone = run_app(root, app, ["1"])
    err = alone.stderr.decode(errors="replace")
    check("no real cuDNN found" in err and alone.returncode == 3, "alone: said, and the program runs on", err)
    check(b"create handle: 1001" in alone.stdout, "calls answer NOT_INITIALIZED", alone.stdout)


@scenario
def wine_stub():
    """An undeclared name (cudnnSetBackdoor, which the description lists without a prototype) called through the
    drop-in's jump stub before any other call, so that its first call resolves the real DLL in between: its
    four register and four stack arguments, and its double result, arrive as without the spy."""
    root = tmpdir()
    app, fake, base = layout(root)
    plain = run_app(root, base, ["stub"])
    check(b"2000091.3125" in plain.stdout, "the fake's answer without the spy", plain.stdout)
    spied = run_app(root, app, ["stub"], {"CUDNNSPY_LIBRARY": z(os.path.join(fake, "cudnn64_9.dll"))})
    err = spied.stderr.decode(errors="replace")
    check(spied.stdout == plain.stdout and spied.returncode == plain.returncode, "the same answers through the stub",
          plain.stdout, spied.stdout, err)
    check("drop-in: cuDNN 9.19.0" in err, "through the drop-in, which resolved at that first call", err)


@scenario
def wine_dropin8():
    """cudnn64_8.dll before the fake 8.x cudnn64_8.dll that the program is linked to: the same program's output
    unchanged, the banner says cuDNN 8, the summary counts the calls."""
    root = tmpdir()
    app, fake, base = layout(root, 8)
    plain = run_app(root, base, ["2"], exe="win-app8.exe")
    check(b"set tensor n=-1: 3 (last error 4343)" in plain.stdout, "the 8.x program without the spy", plain.stdout)
    lib = z(os.path.join(fake, "cudnn64_8.dll"))
    spied = run_app(root, app, ["2"], {"CUDNNSPY_LIBRARY": lib}, exe="win-app8.exe")
    err = spied.stderr.decode(errors="replace")
    check(spied.stdout == plain.stdout and spied.returncode == plain.returncode, "stdout and status unchanged",
          plain.stdout, spied.stdout, err)
    check(re.search(r"drop-in: cuDNN 8\.\d+\.\d+ \(8\d+\) from %s \[CUDNNSPY_LIBRARY\]" % re.escape(lib), err),
          "the 8.x banner", err)
    check(re.search(r"summary \(pid \d+\): 12 calls, 1 failed", err), "the summary", err)


@scenario
def wine_killed():
    """A traced program ended by TerminateProcess (no exit handler, no DLL detach: what a scheduler or Task
    Manager does) leaves every call it made in its records, and report counts them: the record file is mapped
    (a section of the file), as on Linux, so what a call wrote is the file's when the call returns. Without the
    mapping its records went out at least once a second, and a job killed lost its last second."""
    root = tmpdir()
    app, fake, base = layout(root)
    recdir = os.path.join(root, "rec")
    os.makedirs(recdir)
    n = 20000
    p = run_app(root, app, ["kill", str(n)], {"CUDNNSPY_LIBRARY": z(os.path.join(fake, "cudnn64_9.dll")),
                                              "CUDNNSPY_OUTPUT": z(recdir) + "\\", "CUDNNSPY_TRACE": "*",
                                              "FAKECUDNN_STATUS": ""})
    err = p.stderr.decode(errors="replace")
    check(("%d calls made" % n).encode() in p.stdout and p.returncode == 9, "the program made its calls and was "
          "terminated (status 9)", p.returncode, p.stdout[-300:], err[-1500:])
    rec, recs = records_of(recdir)
    sets = [r for r in recs if r.get("event") == "call" and r.get("fn") == "cudnnSetTensor4dDescriptor"]
    check(len(sets) == n, "every call of the terminated program recorded: %d of %d" % (len(sets), n))
    check([r["args"]["n"] for r in sets[-3:]] == [1 + (i % 64) for i in range(n - 3, n)], "the last calls whole",
          sets[-3:])
    rep = subprocess.run([CLI, "report", "--json", rec], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(rep.returncode == 0, "cudnnspy report of the terminated process's file", rep.stderr)
    by = {f["fn"]: f.get("calls") for f in json.loads(rep.stdout).get("functions", [])}
    check(by.get("cudnnSetTensor4dDescriptor") == n and by.get("cudnnGetVersion") == 1,
          "report counts every call of the terminated process", by, rep.stdout[:2000])
    check("cannot be mapped" not in err and "summary (pid" not in err, "the file mapped, and no exit summary (the "
          "process was terminated)", err[-1500:])
    print("wine: terminated after %d traced calls; %d call records, report counts %d" % (
        n, len(sets), by.get("cudnnSetTensor4dDescriptor")))


def normal(text, root):
    """A run's stderr and stdout as docs/windows.md shows them: its tree at /tmp/win-demo, the record file's
    host and pid, offsets and timings (which another compiler changes) left out of the comparison."""
    text = text.replace(z(root), "Z:\\tmp\\win-demo").replace(z(root).replace("\\", "/"), "Z:/tmp/win-demo")
    text = re.sub(r"win-app\.[^./\\]+\.\d+\.cudnnspy", "win-app.HOST.PID.cudnnspy", text)
    text = re.sub(r"\(pid \d+\)", "(pid PID)", text)
    return re.sub(r"\+0x[0-9a-f]+\)", "+0x...)", text).replace("\r\n", "\n")


@scenario
def docs():
    """docs/windows.md's Wine run is what the drop-in prints today: each line it shows (the summary's timing
    rows aside) is a line of a fresh run in the same layout."""
    text = open(os.path.join(SRC, "docs", "windows.md")).read()
    m = re.search(r"^\$ cd /tmp/win-demo/app && .*?wine win-app\.exe\n(.*?)\n```", text, re.M | re.S)
    check(m, "docs/windows.md shows the Wine run")
    root = tmpdir()
    app, cudnn, rec = (os.path.join(root, *n.split("/")) for n in ("app", "cudnn/bin", "rec"))
    for d in (app, cudnn, rec):
        os.makedirs(d)
    shutil.copy(built("tests/windows/win-app.exe"), app)
    shutil.copy(built("shim/win/cudnn64_9.dll"), app)
    shutil.copy(built("tests/windows/fake9/cudnn64_9.dll"), cudnn)
    p = run_app(root, app, [], {"CUDNNSPY_LIBRARY": z(os.path.join(cudnn, "cudnn64_9.dll")),
                                "CUDNNSPY_OUTPUT": z(rec) + "\\"})
    # One stream as a terminal shows them: the spy's lines are each one write, the program's are flushed at exit.
    got = normal(p.stderr.decode(errors="replace") + p.stdout.decode(errors="replace"), root).split("\n")
    want = [l for l in normal(m.group(1), "/tmp/win-demo").split("\n") if l != "..." and not l.startswith("cudnnspy:   ")]
    for line in want:
        check(line in got, "docs/windows.md's line is not in today's run: %r" % line, "\n".join(got))


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print("usage: test_windows.py {%s}" % ",".join(sorted(SCENARIOS)))
        return 2
    if not (SRC and BUILD and CLI):
        print("SOURCE_ROOT, BUILD_ROOT and CLI_EXE are not set: run through meson test")
        return 2
    try:
        SCENARIOS[sys.argv[1]]()
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
