#!/usr/bin/env python3
"""cudnnspy scan, against fixture trees made here from copies of the fake cuDNN.

usage: test_scan.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip.

Fixture copies: the fake libcudnn.so.9 (or .8) copied under versioned names
(libcudnn.so.9.1.0) with the SONAME links beside them, and copied again under
the sub-library names. The --for scenarios compile small programs and compare
what the scan says with what the loader really does (dladdr() in the program).
"""
import atexit
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

E = os.environ
CLI = E.get("CLI_EXE", "")
FAKE9 = os.path.join(E.get("FAKE9_DIR", ""), "libcudnn.so.9")
FAKE8 = os.path.join(E.get("FAKE8_DIR", ""), "libcudnn.so.8")
REAL_DIR = E.get("REAL_CUDNN_DIR", "")
CC = shlex.split(E.get("SCAN_CC", "") or "cc")

SUBS9 = ["graph", "ops", "cnn", "adv", "engines_precompiled", "engines_runtime_compiled", "heuristic"]
SUBS8 = ["ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"]

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


def clean_env(extra=None):
    env = {k: v for k, v in E.items()
           if not k.startswith("CUDNNSPY_") and k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "FAKECUDNN_VERSION")}
    env.update(extra or {})
    return env


def tmpdir():
    d = os.path.realpath(tempfile.mkdtemp(prefix="cudnnspy-scan-"))

    def cleanup():
        # Modes set by a scenario must not stop the clean-up (when not root).
        for root, dirs, files in os.walk(d):
            for n in dirs:
                p = os.path.join(root, n)
                if not os.path.islink(p):
                    os.chmod(p, 0o755)
        shutil.rmtree(d, True)
    atexit.register(cleanup)
    return d


def run_scan(args, env=None, timeout=60):
    argv = [CLI, "scan"] + list(args)
    t0 = time.monotonic()
    p = subprocess.run(argv, env=clean_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    took = time.monotonic() - t0
    print("$ cudnnspy scan %s -> %d (%.1f s)" % (" ".join(a if isinstance(a, str) else repr(a) for a in args),
                                                 p.returncode, took))
    return p, took


def scan_json(args, env=None, timeout=60):
    p, _ = run_scan(["--json"] + list(args), env, timeout)
    check(p.returncode == 0, "scan --json exits 0, not %d" % p.returncode, p.stderr.decode(errors="replace"))
    try:
        text = p.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failed("the JSON is not valid UTF-8: %s" % e)
    try:
        return json.loads(text)
    except ValueError as e:
        raise Failed("the output is not one JSON document: %s" % e, text[:2000])


def scan_human(args, env=None):
    p, _ = run_scan(args, env)
    check(p.returncode == 0, "scan exits 0, not %d" % p.returncode, p.stderr.decode(errors="replace"))
    return p.stdout.decode("utf-8", errors="replace")


def copy_file(src, dst, mode=0o755):
    shutil.copyfile(src, dst)
    os.chmod(dst, mode)


def make_copy(d, version="9.1.0", subs=None, sub_versions=None, major=None, versioned=True, dev_link=True,
              src=None):
    """A cuDNN copy in d: dispatcher, its links, sub-libraries (each a copy of the fake)."""
    major = major or int(version.split(".")[0])
    src = src or (FAKE9 if major >= 9 else FAKE8)
    subs = (SUBS9 if major >= 9 else SUBS8) if subs is None else subs
    sub_versions = sub_versions or {}
    os.makedirs(d, exist_ok=True)
    soname = "libcudnn.so.%d" % major
    if versioned:
        copy_file(src, os.path.join(d, "libcudnn.so." + version))
        os.symlink("libcudnn.so." + version, os.path.join(d, soname))
    else:
        copy_file(src, os.path.join(d, soname))
    if dev_link:
        os.symlink(soname, os.path.join(d, "libcudnn.so"))
    for s in subs:
        v = sub_versions.get(s, version)
        name = "libcudnn_%s.so.%d" % (s, major)
        if versioned:
            copy_file(src, os.path.join(d, "libcudnn_%s.so.%s" % (s, v)))
            os.symlink("libcudnn_%s.so.%s" % (s, v), os.path.join(d, name))
        else:
            copy_file(src, os.path.join(d, name))
    return d


def findings(doc, fid=None):
    return [f for f in doc["findings"] if fid is None or f["id"] == fid]


def the_copy(doc, d, major=None):
    got = [c for c in doc["copies"] if c["directory"] == os.path.realpath(d) and (major is None or c["major"] == major)]
    check(len(got) == 1, "one copy listed for %s (major %s)" % (d, major), json.dumps(doc["copies"], indent=1)[:3000])
    return got[0]


def file_of(copy, name):
    for f in copy["files"]:
        if f["name"] == name:
            return f
    raise Failed("%s listed in %s" % (name, copy["directory"]))


def dump(doc):
    return json.dumps(doc["findings"], indent=1)


# ---- scenarios: what is on disk ----

@scenario
def clean():
    """One complete copy: its version, SONAME, links and sub-libraries, and not a single finding."""
    root = tmpdir()
    d = make_copy(os.path.join(root, "cuda", "lib"), "9.1.0")
    doc = scan_json(["--root", root])
    check(doc["mode"] == "roots" and doc["roots"] == [root], "root mode", doc["mode"], doc["roots"])
    check(len(doc["copies"]) == 1, "one copy", json.dumps(doc["copies"])[:2000])
    c = the_copy(doc, d, 9)
    check(c["version"] == "9.1.0" and c["version_number"] == 90100 and c["version_from"] == "file name",
          "version from the file name", c["version"], c["version_number"], c["version_from"])
    check(c["dispatcher"] == "libcudnn.so.9" and c["complete"], "complete, with its dispatcher", c)
    check([s["name"] for s in c["sublibraries"]] == SUBS9 and all(s["present"] and s["version"] == "9.1.0"
                                                                    for s in c["sublibraries"]),
          "all seven sub-libraries, 9.1.0", c["sublibraries"])
    dev = file_of(c, "libcudnn.so")
    check(dev["chain"] == ["libcudnn.so.9", "libcudnn.so.9.1.0"] and dev["link"] == "ok",
          "libcudnn.so -> libcudnn.so.9 -> libcudnn.so.9.1.0", dev)
    real = file_of(c, "libcudnn.so.9.1.0")
    check(real["soname"] == "libcudnn.so.9" and real["elf"] == "ok", "SONAME read from the ELF", real)
    check(real["size"] == os.path.getsize(FAKE9) and real["mode"] == "0755", "size and mode", real)
    check(doc["findings"] == [], "no finding for a clean copy", dump(doc))
    check(doc["for"] is None and doc["default_resolution"] is None, "nothing else in root mode")

    out = scan_human(["--root", root])
    check("Findings: none" in out and d in out and "9.1.0" in out, "the table names it, no findings", out)
    check("libcudnn.so -> libcudnn.so.9 -> libcudnn.so.9.1.0" in out, "the chain in the table", out)


@scenario
def versions():
    """Copies of different versions; the same version twice; versions read by the helper for 8 and 9."""
    root = tmpdir()
    a = make_copy(os.path.join(root, "a"), "9.1.0")
    b = make_copy(os.path.join(root, "b"), "9.19.0")
    doc = scan_json(["--root", root])
    m = findings(doc, "multiple-copies")
    check(len(m) == 1 and m[0]["severity"] == "warning", "one multiple-copies warning", dump(doc))
    check(sorted(m[0]["paths"]) == sorted([a, b]) and "9.1.0" in m[0]["message"] and "9.19.0" in m[0]["message"],
          "it names both copies and versions", m[0])
    check(len(doc["findings"]) == 1, "nothing else", dump(doc))

    # The same version twice is only worth knowing.
    root2 = tmpdir()
    make_copy(os.path.join(root2, "x"), "9.1.0")
    make_copy(os.path.join(root2, "y"), "9.1.0")
    doc = scan_json(["--root", root2])
    m = findings(doc, "multiple-copies")
    check(len(m) == 1 and m[0]["severity"] == "info", "same version: info", dump(doc))

    # One directory reached twice (a symlink to it) is one copy.
    root3 = tmpdir()
    make_copy(os.path.join(root3, "cuda-9", "lib"), "9.1.0")
    os.symlink("cuda-9", os.path.join(root3, "cuda"))
    doc = scan_json(["--root", root3, "--root", os.path.join(root3, "cuda", "lib")])
    check(len(doc["copies"]) == 1 and not findings(doc), "a second spelling is not a second copy",
          json.dumps(doc["copies"])[:1000], dump(doc))
    check(doc["copies"][0]["also"] == [os.path.join(root3, "cuda", "lib")], "the other spelling is listed",
          doc["copies"][0]["also"])

    # No version in the names (pip wheels, the CUDA toolkit): the helper asks cudnnGetVersion().
    root4 = tmpdir()
    p9 = make_copy(os.path.join(root4, "site-packages", "nvidia", "cudnn", "lib"), "9.0.0", versioned=False)
    p8 = make_copy(os.path.join(root4, "conda", "lib"), "8.0.0", versioned=False)
    doc = scan_json(["--root", root4])
    c9, c8 = the_copy(doc, p9, 9), the_copy(doc, p8, 8)
    check(c9["version"] == "9.19.0" and c9["version_number"] == 91900 and c9["version_from"] == "cudnnGetVersion",
          "9.x decoded from cudnnGetVersion (MAJOR*10000+MINOR*100+PATCH)", c9)
    check(c8["version"] == "8.9.7" and c8["version_number"] == 8907 and c8["version_from"] == "cudnnGetVersion",
          "8.x decoded from cudnnGetVersion (MAJOR*1000+MINOR*100+PATCH)", c8)
    doc = scan_json(["--root", p9], env={"FAKECUDNN_VERSION": "90300"})
    c = doc["copies"][0]
    check(c["version"] == "9.3.0" and c["version_number"] == 90300, "what the library says, not a guess", c)
    doc = scan_json(["--root", p9, "--no-probe"])
    c = doc["copies"][0]
    check(c["version"] is None and "--no-probe" in c["version_error"], "--no-probe loads nothing", c)
    check([f["id"] for f in doc["findings"]] == ["version-unknown"], "and says the version is unknown", dump(doc))


@scenario
def dangling_link():
    """A link to a version that is gone, and a loop."""
    root = tmpdir()
    d = make_copy(os.path.join(root, "lib"), "9.1.0", dev_link=False)
    os.symlink("libcudnn.so.9.0.0", os.path.join(d, "libcudnn.so"))
    os.symlink("libcudnn_foo.so.9", os.path.join(d, "libcudnn_bar.so.9"))
    os.symlink("libcudnn_bar.so.9", os.path.join(d, "libcudnn_foo.so.9"))
    doc = scan_json(["--root", root])
    dl = findings(doc, "dangling-link")
    check(len(dl) == 3, "three bad links", dump(doc))
    msgs = " | ".join(f["message"] for f in dl)
    check(os.path.join(d, "libcudnn.so") + " -> libcudnn.so.9.0.0 is a dangling symlink" in msgs,
          "the dangling one, with its target", msgs)
    check(os.path.join(d, "libcudnn_bar.so.9") in msgs and "loop" in msgs, "the loop", msgs)
    c = the_copy(doc, d, 9)
    check(file_of(c, "libcudnn.so")["link"] == "dangling", "link state in JSON", c)
    check({f["id"] for f in doc["findings"]} == {"dangling-link"}, "nothing else", dump(doc))


@scenario
def unreadable():
    """Modes that keep other users out: judged from the bits, since tests may run as root."""
    root = tmpdir()
    d = make_copy(os.path.join(root, "a"), "9.1.0")
    os.chmod(os.path.join(d, "libcudnn.so.9.1.0"), 0)
    os.chmod(os.path.join(d, "libcudnn_ops.so.9.1.0"), 0o750)
    e = make_copy(os.path.join(root, "b", "lib"), "9.1.0")
    os.chmod(e, 0o700)
    try:
        doc = scan_json(["--root", root])
    finally:
        os.chmod(e, 0o755)
    u = findings(doc, "unreadable")
    msgs = " | ".join(f["message"] for f in u)
    check(any(os.path.join(d, "libcudnn.so.9.1.0") in f["paths"] for f in u), "the mode-0 file", msgs)
    check(any(os.path.join(d, "libcudnn_ops.so.9.1.0") in f["paths"] and "0750" in f["message"] for f in u),
          "the 0750 file, with its mode", msgs)
    check(any(f["paths"] == [e] and "0700" in f["message"] for f in u), "the 0700 directory", msgs)
    if os.geteuid() == 0:
        check(any("mode 0000" in f["message"] for f in u), "root still reports mode 0000", msgs)
        check(len(u) == 3, "one finding per file, whichever links reach it", msgs)
    check({f["id"] for f in doc["findings"]} <= {"unreadable", "multiple-copies", "version-unknown"},
          "nothing unrelated", dump(doc))


@scenario
def sublib_mismatch():
    """A sub-library of another version than its dispatcher; a leftover file of an older version."""
    root = tmpdir()
    d = make_copy(os.path.join(root, "lib"), "9.1.0", sub_versions={"ops": "9.2.0"})
    copy_file(FAKE9, os.path.join(d, "libcudnn_cnn.so.9.0.5"))
    doc = scan_json(["--root", root])
    m = findings(doc, "sublib-version-mismatch")
    check(len(m) == 1 and m[0]["severity"] == "error", "one mismatch error", dump(doc))
    check(m[0]["message"] == "%s: libcudnn.so.9 is 9.1.0 but its sub-libraries are libcudnn_ops.so.9 9.2.0"
          " (libcudnn_ops.so.9.2.0)" % d, "names the files and both versions", m[0])
    check(m[0]["paths"] == [os.path.join(d, "libcudnn_ops.so.9")], "and the path", m[0])
    s = findings(doc, "stale-files")
    check(len(s) == 1 and s[0]["severity"] == "info" and s[0]["paths"] == [os.path.join(d, "libcudnn_cnn.so.9.0.5")],
          "the unused 9.0.5 file", dump(doc))
    check(len(doc["findings"]) == 2, "nothing else", dump(doc))
    out = scan_human(["--root", root])
    check("sublib-version-mismatch" in out and "error" in out, "in the table too", out)

    # No dispatcher: sub-libraries that disagree among themselves.
    root2 = tmpdir()
    d2 = make_copy(os.path.join(root2, "lib"), "9.1.0", sub_versions={"adv": "9.3.0"})
    for n in ("libcudnn.so", "libcudnn.so.9", "libcudnn.so.9.1.0"):
        os.unlink(os.path.join(d2, n))
    doc = scan_json(["--root", root2])
    m = findings(doc, "sublib-version-mismatch")
    check(len(m) == 1 and "different versions" in m[0]["message"] and "9.3.0" in m[0]["message"],
          "sub-libraries of two versions", dump(doc))
    check(len(findings(doc, "no-dispatcher")) == 1, "and no dispatcher", dump(doc))


@scenario
def incomplete():
    """A missing sub-library; a versioned file without its SONAME link; a dispatcher alone; orphans."""
    root = tmpdir()
    d = make_copy(os.path.join(root, "a"), "9.1.0", subs=[s for s in SUBS9 if s != "heuristic"])
    # Another version than the dispatcher asks for (it asks for 9.1.0, 9.1, 9): not found by it.
    copy_file(FAKE9, os.path.join(d, "libcudnn_heuristic.so.9.0.7"))
    os.unlink(os.path.join(d, "libcudnn_graph.so.9"))
    os.unlink(os.path.join(d, "libcudnn_graph.so.9.1.0"))
    doc = scan_json(["--root", d])
    i = findings(doc, "incomplete-copy")
    check(len(i) == 1 and i[0]["severity"] == "error", "one incomplete-copy", dump(doc))
    check("2 of its 7" in i[0]["message"] and "only libcudnn_heuristic.so.9.0.7 is there, no libcudnn_heuristic.so.9 link"
          in i[0]["message"] and "libcudnn_graph.so.9" in i[0]["message"], "names what is missing and why", i[0])
    c = the_copy(doc, d, 9)
    check(not c["complete"] and [s["name"] for s in c["sublibraries"] if not s["present"]] == ["graph", "heuristic"],
          "JSON: not complete, graph and heuristic absent", c["sublibraries"])

    # The stale-files rule has its say on the odd version; nothing else.
    check({f["id"] for f in doc["findings"]} <= {"incomplete-copy", "stale-files"}, "nothing else", dump(doc))

    b = make_copy(os.path.join(root, "b"), "9.1.0", subs=[])
    doc = scan_json(["--root", b])
    check([f["id"] for f in doc["findings"]] == ["no-sublibraries"], "a dispatcher alone", dump(doc))

    c8 = make_copy(os.path.join(root, "c"), "8.9.7", subs=SUBS8[:3], dev_link=False)
    for n in ("libcudnn.so.8", "libcudnn.so.8.9.7"):
        os.unlink(os.path.join(c8, n))
    doc = scan_json(["--root", c8])
    check([f["id"] for f in doc["findings"]] == ["no-dispatcher"] and "3 cuDNN 8 sub-libraries" in
          doc["findings"][0]["message"], "sub-libraries alone", dump(doc))
    check(doc["copies"][0]["version"] == "8.9.7" and doc["copies"][0]["version_from"] == "sub-library file names",
          "their version from their names", doc["copies"][0])


@scenario
def mixed_majors():
    """cuDNN 8 and 9 in one directory; then on one search path (LD_LIBRARY_PATH)."""
    root = tmpdir()
    d = make_copy(os.path.join(root, "lib"), "9.1.0")
    make_copy(d, "8.9.7", dev_link=False)
    doc = scan_json(["--root", root])
    m = findings(doc, "mixed-majors")
    check(len(m) == 1 and m[0]["paths"] == [d] and "cuDNN 8 (8.9.7)" in m[0]["message"] and
          "cuDNN 9 (9.1.0)" in m[0]["message"], "one directory, both majors", dump(doc))
    check(the_copy(doc, d, 8)["complete"] and the_copy(doc, d, 9)["complete"], "both complete by themselves")

    # On a search path, without --root: LD_LIBRARY_PATH holds an 8 and a 9 in different directories.
    a8 = make_copy(os.path.join(root, "p8"), "8.9.7")
    b9 = make_copy(os.path.join(root, "p9"), "9.1.0")
    doc = scan_json([], env={"LD_LIBRARY_PATH": a8 + ":" + b9})
    check(doc["mode"] == "machine", "machine mode")
    for x in (a8, b9):
        check("LD_LIBRARY_PATH" in the_copy(doc, x)["sources"], "%s found through LD_LIBRARY_PATH" % x)
    m = [f for f in findings(doc, "mixed-majors") if "search path" in f["message"]]
    check(len(m) == 1 and os.path.join(a8, "libcudnn.so.8") in m[0]["paths"] and
          os.path.join(b9, "libcudnn.so.9") in m[0]["paths"], "the search path gives both majors", dump(doc))
    res = {r["name"]: r for r in doc["default_resolution"]}
    check(res["libcudnn.so.9"]["path"] == os.path.join(b9, "libcudnn.so.9") and
          res["libcudnn.so.9"]["rule"] == "LD_LIBRARY_PATH", "a plain program gets the 9 from LD_LIBRARY_PATH",
          res["libcudnn.so.9"])


@scenario
def soname_mismatch():
    """A dispatcher whose SONAME is not its name."""
    root = tmpdir()
    d = make_copy(os.path.join(root, "lib"), "9.1.0", src=FAKE8)
    doc = scan_json(["--root", root])
    s = findings(doc, "soname-mismatch")
    check(len(s) == 1 and "SONAME libcudnn.so.8" in s[0]["message"] and s[0]["paths"] == [os.path.join(d, "libcudnn.so.9")],
          "the fake 8 renamed libcudnn.so.9", dump(doc))


@scenario
def hostile():
    """Truncated ELF, garbage, FIFO, directory, loops, a huge file, odd names, libraries that crash or hang."""
    root = tmpdir()
    h = os.path.join(root, "h")
    os.makedirs(h)
    with open(FAKE9, "rb") as f:
        head = f.read(300)
    with open(os.path.join(h, "libcudnn.so.9"), "wb") as f:
        f.write(head)
    with open(os.path.join(h, "libcudnn_graph.so.9"), "wb") as f:
        f.write(b"\x7fELF" + b"\x09" * 64 + b"garbage" * 100)
    os.mkfifo(os.path.join(h, "libcudnn_ops.so.9"))
    os.mkdir(os.path.join(h, "libcudnn_cnn.so.9"))
    os.symlink("libcudnn_adv.so.9", os.path.join(h, "libcudnn_adv.so.9"))
    os.symlink("x", os.path.join(h, "libcudnn_heuristic.so.9"))
    os.symlink("libcudnn_heuristic.so.9", os.path.join(h, "x"))
    open(os.path.join(h, "libcudnn_engines_runtime_compiled.so.9"), "wb").close()
    huge = os.path.join(h, "libcudnn_engines_precompiled.so.9")
    shutil.copyfile(FAKE9, huge)
    try:
        os.truncate(huge, 64 << 30)     # sparse: 64 GiB that take no room
    except OSError:
        pass
    # An ELF for another machine: passed over by the loader, a warning here.
    with open(FAKE9, "rb") as f:
        data = bytearray(f.read())
    data[18:20] = (183 if os.uname().machine != "aarch64" else 62).to_bytes(2, "little")
    os.makedirs(os.path.join(root, "foreign"))
    with open(os.path.join(root, "foreign", "libcudnn.so.9"), "wb") as f:
        f.write(data)
    # A directory loop below the root, and a name no terminal should see raw.
    os.symlink("..", os.path.join(h, "up"))
    odd = os.path.join(root.encode(), b"odd\x1b[31m\nname\xff")
    make_copy(odd.decode("utf-8", "surrogateescape"), "9.1.0")

    # Real libraries that misbehave when loaded: only the helper process suffers.
    src = os.path.join(root, "h.c")
    with open(src, "w") as f:
        f.write("#include <signal.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <unistd.h>\n"
                "#ifdef HANG\n__attribute__((constructor)) static void hang(void) { for (;;) pause(); }\n#endif\n"
                "#ifdef NOISY\n__attribute__((constructor)) static void noisy(void)"
                " { puts(\"{not json\"); fflush(stdout); }\n#endif\n"
                "size_t cudnnGetVersion(void) {\n#ifdef CRASH\n raise(SIGSEGV);\n#endif\n"
                "#ifdef WHOAMI\n return geteuid() == 0 ? 90000 : 90001;\n#endif\n return 90500; }\n")
    for kind in ("CRASH", "HANG", "NOISY", "WHOAMI"):
        d = os.path.join(root, kind.lower())
        os.makedirs(d)
        compile_c(src, os.path.join(d, "libcudnn.so.9"), ["-shared", "-fPIC", "-D" + kind,
                                                          "-Wl,-soname,libcudnn.so.9"])

    # Run as root, the helper loads another user's library as that user, never as root.
    if os.geteuid() == 0:
        os.chmod(root, 0o755)
        os.chown(os.path.join(root, "whoami", "libcudnn.so.9"), 65534, 65534)

    p, took = run_scan(["--json", "--root", root], timeout=60)
    check(p.returncode == 0, "no crash: exit 0, not %d" % p.returncode, p.stderr.decode(errors="replace"))
    check(took < 30, "no hang: %.1f s" % took)
    try:
        doc = json.loads(p.stdout.decode("utf-8"))
    except ValueError as e:
        raise Failed("valid UTF-8 JSON whatever the names and libraries do: %s" % e, p.stdout[:3000])
    na = {os.path.basename(f["paths"][0]): f for f in findings(doc, "not-a-library")}
    for name, words in (("libcudnn.so.9", "truncated"), ("libcudnn_graph.so.9", "not a usable library"),
                        ("libcudnn_ops.so.9", "FIFO"), ("libcudnn_cnn.so.9", "a directory"),
                        ("libcudnn_engines_runtime_compiled.so.9", "too short")):
        check(name in na and words in na[name]["message"] and na[name]["severity"] == "error",
              "%s: not-a-library (%s)" % (name, words), dump(doc))
    fo = [f for f in findings(doc, "not-a-library") if f["paths"][0] == os.path.join(root, "foreign", "libcudnn.so.9")]
    check(len(fo) == 1 and fo[0]["severity"] == "warning" and "passes over it" in fo[0]["message"],
          "an ELF for another machine: a warning", dump(doc))
    loops = [f for f in findings(doc, "dangling-link") if "loop" in f["message"]]
    check(len(loops) == 2, "both loops reported", dump(doc))
    c = the_copy(doc, h, 9)
    check(c["sublibraries"][SUBS9.index("engines_precompiled")]["present"], "the huge sparse file was read, bounded",
          c["sublibraries"])
    odd_copy = [x for x in doc["copies"] if x["directory"].endswith("odd\x1b[31m\nname\xff")]
    check(len(odd_copy) == 1 and odd_copy[0]["complete"], "the oddly named directory, escaped in JSON",
          [x["directory"] for x in doc["copies"]])
    errs = {x["directory"].rsplit("/", 1)[1]: x for x in doc["copies"]}
    check(errs["crash"]["version"] is None and "crashed" in errs["crash"]["version_error"],
          "a crash in the helper is a finding", errs["crash"])
    check(errs["hang"]["version"] is None and "killed" in errs["hang"]["version_error"],
          "a hang in the helper is killed", errs["hang"])
    check(errs["noisy"]["version"] == "9.5.0", "what a constructor prints stays out of the output", errs["noisy"])
    if os.geteuid() == 0:
        check(errs["whoami"]["version"] == "9.0.1", "the helper ran as the file's owner, not root", errs["whoami"])
    vu = [f["paths"][0] for f in findings(doc, "version-unknown")]
    check(sorted(vu) == sorted(os.path.join(root, k, "libcudnn.so.9") for k in ("crash", "hang")),
          "version-unknown for both", dump(doc))

    # The table: no raw escape or newline from a file name.
    p, _ = run_scan(["--root", root, "--no-probe"])
    check(p.returncode == 0 and b"\x1b" not in p.stdout and b"odd\\x1b[31m\\x0aname\\xff" in p.stdout,
          "the table escapes control bytes", p.stdout[:3000])


WHOAMI_C = ("#include <stddef.h>\n#include <unistd.h>\n"
            "size_t cudnnGetVersion(void) { return geteuid() == 0 ? 90000 : 90001; }\n")


@scenario
def root_never_runs_others_files():
    """Run as root, the version helper loads nothing that anyone but root (or the file's owner, as that
    owner) could have changed: the file and every directory above it."""
    if os.geteuid() != 0:
        raise Skip("needs root")
    root = tmpdir()
    os.chmod(root, 0o755)
    src = os.path.join(root, "whoami.c")
    with open(src, "w") as f:
        f.write(WHOAMI_C)
    cases = {}

    def lib(name, file_mode=0o755, owner=(0, 0), dir_mode=0o755, dir_owner=(0, 0)):
        d = os.path.join(root, name)
        os.makedirs(d)
        path = os.path.join(d, "libcudnn.so.9")
        compile_c(src, path, ["-shared", "-fPIC", "-Wl,-soname,libcudnn.so.9"])
        os.chown(path, *owner)
        os.chmod(path, file_mode)
        os.chown(d, *dir_owner)
        os.chmod(d, dir_mode)
        cases[name] = path

    lib("root-only")
    lib("other-owner", owner=(65534, 65534))
    lib("group-writable", file_mode=0o664, owner=(0, 65534))
    lib("world-writable", file_mode=0o666)
    lib("dir-group-writable", dir_mode=0o775, dir_owner=(0, 65534))
    lib("dir-of-another", dir_owner=(65534, 65534))
    lib("sticky-dir", dir_mode=0o1777)
    doc = scan_json(["--root", root])
    got = {x["directory"].rsplit("/", 1)[1]: x for x in doc["copies"]}
    check(got["root-only"]["version"] == "9.0.0", "root's own file, loaded as root", got["root-only"])
    check(got["sticky-dir"]["version"] == "9.0.0", "in a sticky directory too", got["sticky-dir"])
    check(got["other-owner"]["version"] == "9.0.1", "another user's file, loaded as that user", got["other-owner"])
    for name, words in (("group-writable", "is writable by its group"), ("world-writable", "writable by everyone"),
                        ("dir-group-writable", "is writable by its group"),
                        ("dir-of-another", "belongs to another user")):
        c = got[name]
        check(c["version"] is None and "not read" in c["version_error"] and words in c["version_error"],
              "%s: not loaded (%s)" % (name, words), c)


@scenario
def no_process_left():
    """A library whose constructor leaves its session (setsid) and forks, twice over: nothing it started is
    still running once the scan has ended."""
    root = tmpdir()
    os.chmod(root, 0o755)
    d = os.path.join(root, "escape")
    os.makedirs(d)
    pids = os.path.join(root, "pids")
    src = os.path.join(root, "escape.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include <stddef.h>\n#include <unistd.h>\n'
                'static void note(void) { FILE *f = fopen("%s", "a"); if (f) { fprintf(f, "%%d\\n", (int)getpid());'
                ' fclose(f); } }\n'
                '__attribute__((constructor)) static void escape(void) {\n'
                ' if (fork() == 0) { setsid(); if (fork() == 0) { note(); if (fork() == 0) note();'
                ' for (int i = 0; i < 600; i++) sleep(1); } _exit(0); }\n'
                ' usleep(200000); }\n'
                'size_t cudnnGetVersion(void) { return 90500; }\n' % pids)
    compile_c(src, os.path.join(d, "libcudnn.so.9"), ["-shared", "-fPIC", "-Wl,-soname,libcudnn.so.9"])
    doc = scan_json(["--root", root])
    c = the_copy(doc, d, 9)
    check(c["version"] == "9.5.0", "the version read", c)
    time.sleep(0.3)
    with open(pids) as f:
        started = [int(x) for x in f.read().split()]
    check(len(started) == 2, "the library started two processes", started)
    alive = []
    for pid in started:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except OSError:
            pass
    for pid in alive:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    check(not alive, "nothing left running", alive)


# ---- --for: compared with what the loader does ----

WHERE_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
int
main(int argc, char **argv)
{
	Dl_info info;
	char real[PATH_MAX];
	void *fn, *h = RTLD_DEFAULT;

	if (argc > 1 && !(h = dlopen(argv[1], RTLD_NOW))) {
		printf("error %s\n", dlerror());
		return 3;
	}
	fn = dlsym(h, "cudnnGetVersion");
	if (!fn || !dladdr(fn, &info) || !realpath(info.dli_fname, real)) {
		printf("error no cudnnGetVersion\n");
		return 4;
	}
	printf("%s\n%s\n", info.dli_fname, real);
	return 0;
}
"""


def compile_c(src, out, args):
    p = subprocess.run(CC + [src, "-o", out] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if p.returncode != 0:
        raise Failed("cannot compile %s: %s" % (out, " ".join(args)), p.stdout)


def loader_says(prog, env, arg=None):
    """(path as loaded, real path) from the program itself, or (None, error text)."""
    p = subprocess.run([prog] + ([arg] if arg else []), env=clean_env(env), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
    lines = p.stdout.splitlines()
    if p.returncode == 0 and len(lines) == 2:
        return lines[0], lines[1]
    return None, (p.stdout + p.stderr).strip()


def compare(doc, name, loaded, what):
    res = [r for r in doc["for"]["resolutions"] if r["name"] == name]
    check(len(res) == 1, "%s: one resolution for %s" % (what, name), json.dumps(doc["for"])[:2000])
    r = res[0]
    if loaded[0] is None:
        check(r["path"] is None, "%s: the loader failed (%s); the scan must not claim %s" % (what, loaded[1], r["path"]),
              json.dumps(r)[:2000])
        return r
    check(r["path"] is not None and os.path.realpath(r["path"]) == loaded[1],
          "%s: the scan says %s, the loader took %s" % (what, r["path"], loaded[1]), json.dumps(r)[:2000])
    return r


@scenario
def for_loader():
    """--for follows DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, $ORIGIN, the cache, like the loader does."""
    root = tmpdir()
    # An empty LD_LIBRARY_PATH entry is the current directory: one with no cuDNN in it.
    os.chdir(root)
    a = make_copy(os.path.join(root, "a"), "9.1.0")
    b = make_copy(os.path.join(root, "b"), "9.19.0")
    src = os.path.join(root, "where.c")
    with open(src, "w") as f:
        f.write(WHERE_C)
    link = ["-Wl,--no-as-needed", FAKE9, "-ldl"]
    plain = os.path.join(root, "plain")
    compile_c(src, plain, link)
    rpath = os.path.join(root, "rpath")
    compile_c(src, rpath, ["-Wl,--disable-new-dtags", "-Wl,-rpath," + b] + link)
    runpath = os.path.join(root, "runpath")
    compile_c(src, runpath, ["-Wl,--enable-new-dtags", "-Wl,-rpath," + b] + link)
    os.makedirs(os.path.join(root, "app"))
    make_copy(os.path.join(root, "app", "lib"), "9.2.0")
    origin = os.path.join(root, "app", "prog")
    compile_c(src, origin, ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"] + link)

    cases = [
        # (what, program, LD_LIBRARY_PATH, expected rule or None to only compare)
        ("no paths: the cache or the default directories", plain, None, None),
        ("LD_LIBRARY_PATH shadows the cache", plain, a, "LD_LIBRARY_PATH"),
        ("DT_RPATH comes before LD_LIBRARY_PATH", rpath, a, "DT_RPATH"),
        ("LD_LIBRARY_PATH comes before DT_RUNPATH", runpath, a, "LD_LIBRARY_PATH"),
        ("DT_RUNPATH without LD_LIBRARY_PATH", runpath, None, "DT_RUNPATH"),
        ("$ORIGIN is the program's directory", origin, None, "DT_RUNPATH"),
        ("an empty entry in LD_LIBRARY_PATH", runpath, ":" + a, "LD_LIBRARY_PATH"),
    ]
    for what, prog, llp, rule in cases:
        env = {"LD_LIBRARY_PATH": llp} if llp else {}
        doc = scan_json(["--root", root, "--for", prog], env=env)
        check(doc["for"]["kind"] == "program" and doc["for"]["links_cudnn"], "%s: a program linking cuDNN" % what)
        r = compare(doc, "libcudnn.so.9", loader_says(prog, env), what)
        if rule:
            check(r["rule"] == rule, "%s: found by %s, not %s" % (what, rule, r["rule"]), json.dumps(r)[:1500])
        if r["path"] and r["path"].startswith(root + "/"):
            check(r["copy"] is not None, "%s: tied to a scanned copy" % what, r)
    # The explanation, in words.
    out = scan_human(["--root", root, "--for", plain], env={"LD_LIBRARY_PATH": a})
    check("libcudnn.so.9 -> %s/libcudnn.so.9" % a in out and "found by LD_LIBRARY_PATH" in out,
          "the table says which file and which rule", out)

    # Passed over: loops, dangling links, another machine's ELF. Stopped: a file that is not ELF.
    skip = os.path.join(root, "skip")
    os.makedirs(skip)
    os.symlink("libcudnn.so.9", os.path.join(skip, "libcudnn.so.9"))
    dang = os.path.join(root, "dang")
    os.makedirs(dang)
    os.symlink("gone", os.path.join(dang, "libcudnn.so.9"))
    foreign = os.path.join(root, "foreign")
    os.makedirs(foreign)
    with open(FAKE9, "rb") as f:
        data = bytearray(f.read())
    data[18:20] = (183 if os.uname().machine != "aarch64" else 62).to_bytes(2, "little")
    with open(os.path.join(foreign, "libcudnn.so.9"), "wb") as f:
        f.write(data)
    env = {"LD_LIBRARY_PATH": ":".join([dang, foreign, a])}
    doc = scan_json(["--root", a, "--for", plain], env=env)
    r = compare(doc, "libcudnn.so.9", loader_says(plain, env), "dangling links and foreign ELF are passed over")
    outcomes = [s["outcome"] for s in r["steps"]]
    check(outcomes == ["skipped: a dangling symlink",
                       "skipped: an ELF for another machine (e_machine %d)" % int.from_bytes(data[18:20], "little"),
                       "found"], "each step says why", outcomes)
    check(r["path"] == os.path.join(a, "libcudnn.so.9"), "then a", r["path"])
    # A symlink loop is another matter: glibc gives up on the rest of LD_LIBRARY_PATH there.
    env = {"LD_LIBRARY_PATH": ":".join([skip, a])}
    doc = scan_json(["--root", a, "--for", plain], env=env)
    r = compare(doc, "libcudnn.so.9", loader_says(plain, env), "a symlink loop ends the LD_LIBRARY_PATH search")
    check(r["path"] != os.path.join(a, "libcudnn.so.9") and "gives up on the rest of LD_LIBRARY_PATH" in
          r["steps"][0]["outcome"], "a is never reached", r)
    bad = os.path.join(root, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "libcudnn.so.9"), "wb") as f:
        f.write(b"not a library\n")
    env = {"LD_LIBRARY_PATH": bad + ":" + a}
    doc = scan_json(["--root", a, "--for", plain], env=env)
    loaded = loader_says(plain, env)
    r = compare(doc, "libcudnn.so.9", loaded, "a garbage file first on the path")
    check(r["error"] and bad in r["error"] and loaded[0] is None, "both stop at the garbage file", r, loaded)
    m = [f for f in findings(doc, "not-a-library") if f["message"].startswith("for " + plain)]
    check(len(m) == 1 and m[0]["severity"] == "error" and "stops the load" in m[0]["message"],
          "an error finding for the program", dump(doc))

    # The hwcap subdirectories of a directory come before it: glibc-hwcaps/x86-64-v2 (glibc 2.33 on), and
    # the legacy tls/ and x86_64/ (up to glibc 2.36).
    if os.uname().machine == "x86_64":
        import ctypes
        libc_version = ctypes.CDLL(None).gnu_get_libc_version
        libc_version.restype = ctypes.c_char_p
        major, minor = (int(x) for x in libc_version().decode().split(".")[:2])
        cases = []
        if (major, minor) >= (2, 33):
            cases.append("glibc-hwcaps/x86-64-v2")
        if (major, minor) < (2, 37):
            cases += ["tls", "x86_64"]
        for sub in cases:
            hw = os.path.join(root, "hw-" + sub.replace("/", "-"))
            make_copy(hw, "9.1.0")
            make_copy(os.path.join(hw, sub), "9.4.0")
            env = {"LD_LIBRARY_PATH": hw}
            doc = scan_json(["--root", hw, "--for", plain], env=env)
            r = compare(doc, "libcudnn.so.9", loader_says(plain, env), "a %s subdirectory" % sub)
            check(r["path"] == os.path.join(hw, sub, "libcudnn.so.9"), "%s first" % sub, r)

    # A library with its own RUNPATH ($ORIGIN of the library), loaded with dlopen() by a program.
    libdir = os.path.join(root, "pkg", "lib")
    os.makedirs(libdir)
    make_copy(os.path.join(root, "pkg", "cudnn"), "9.3.0")
    usrc = os.path.join(root, "user.c")
    with open(usrc, "w") as f:
        f.write("int user_entry(void) { return 1; }\n")
    lib = os.path.join(libdir, "libuser.so")
    compile_c(usrc, lib, ["-shared", "-fPIC", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../cudnn",
                          "-Wl,--no-as-needed", FAKE9])
    # The program that dlopen()s it has no cuDNN and no paths of its own.
    dl0 = os.path.join(root, "dl0")
    compile_c(src, dl0, ["-ldl"])
    for llp in (None, a):
        env = {"LD_LIBRARY_PATH": llp} if llp else {}
        doc = scan_json(["--root", root, "--for", lib], env=env)
        check(doc["for"]["kind"] == "library", "a library", doc["for"])
        r = compare(doc, "libcudnn.so.9", loader_says(dl0, env, lib), "a library's RUNPATH (LD_LIBRARY_PATH %s)" % llp)
        check(r["version"] == ("9.1.0" if llp else "9.3.0"), "with the version of what it loads", r)

    # A program that does not link cuDNN but dlopen()s it: its RUNPATH counts for the dlopen.
    dl = os.path.join(root, "dl")
    compile_c(src, dl, ["-Wl,--enable-new-dtags", "-Wl,-rpath," + b, "-ldl"])
    doc = scan_json(["--root", root, "--for", dl])
    check(not doc["for"]["links_cudnn"], "it does not link cuDNN", doc["for"])
    r = compare(doc, "libcudnn.so.9", loader_says(dl, {}, "libcudnn.so.9"), "dlopen() from a program")
    check(r["rule"] == "DT_RUNPATH", "found by its RUNPATH", r)
    out = scan_human(["--root", root, "--for", dl])
    check("does not link cuDNN" in out, "the table says it does not link cuDNN", out)

    # A dispatcher without DT_RUNPATH (the fake) searches the program's DT_RPATH for its sub-libraries
    # before LD_LIBRARY_PATH, as glibc's dlopen() does: b's dispatcher takes b's own.
    doc = scan_json(["--root", root, "--for", rpath], env={"LD_LIBRARY_PATH": a})
    check(not findings(doc, "sublib-version-mismatch"), "b's dispatcher gets b's sub-libraries", dump(doc))
    subs = doc["for"]["resolutions"][0]["sublibraries"]
    check(len(subs) == 7 and all(s["path"].startswith(b + "/") and s["rule"] == "DT_RPATH" for s in subs),
          "each sub-library, from b, by the program's DT_RPATH", subs)
    # Sub-libraries the dispatcher would take from elsewhere: DT_RPATH to a dispatcher alone, LD_LIBRARY_PATH to a.
    alone = make_copy(os.path.join(root, "alone"), "9.19.0", subs=[])
    rpath2 = os.path.join(root, "rpath2")
    compile_c(src, rpath2, ["-Wl,--disable-new-dtags", "-Wl,-rpath," + alone] + link)
    doc = scan_json(["--root", root, "--for", rpath2], env={"LD_LIBRARY_PATH": a})
    m = findings(doc, "sublib-version-mismatch")
    check(len(m) == 1 and "9.19.0" in m[0]["message"] and "9.1.0, by LD_LIBRARY_PATH" in m[0]["message"],
          "the lone dispatcher would load a's sub-libraries", dump(doc))
    subs = doc["for"]["resolutions"][0]["sublibraries"]
    check(len(subs) == 7 and all(s["mismatch"] and s["path"].startswith(a + "/") for s in subs),
          "each sub-library, from a", subs)


@scenario
def machine():
    """No --root: this machine's places. The real cuDNN under the CUDA toolkit, read by the helper."""
    expected = "/usr/local/cuda-13.0/lib"
    if not os.path.exists(os.path.join(expected, "libcudnn.so.9")):
        raise Skip("no cuDNN in %s" % expected)
    doc = scan_json([])
    check(doc["mode"] == "machine" and doc["loader_cache"]["read"], "machine mode, the cache read", doc["loader_cache"])
    real = [c for c in doc["copies"] if c["directory"] == expected and c["major"] == 9]
    check(len(real) == 1, "the copy in %s" % expected, [c["directory"] for c in doc["copies"]])
    c = real[0]
    check(c["version_number"] == 91900 and c["version"] == "9.19.0" and c["version_from"] == "cudnnGetVersion",
          "version 91900 from cudnnGetVersion()", c)
    check(c["complete"] and "ld.so.cache" in c["sources"], "complete, known to the loader cache", c)
    if os.path.islink("/usr/local/cuda") and os.path.realpath("/usr/local/cuda/lib64") == expected:
        check("/usr/local/cuda/lib64" in c["also"], "reached as /usr/local/cuda/lib64 too", c["also"])
    res = {r["name"]: r for r in doc["default_resolution"]}
    check(res["libcudnn.so.9"]["path"] == os.path.join(expected, "libcudnn.so.9") and
          res["libcudnn.so.9"]["rule"] == "ld.so.cache", "a plain program gets it from the cache",
          res["libcudnn.so.9"])
    out = scan_human([])
    check(expected in out and "9.19.0" in out, "the table shows it", out)

    # Sub-libraries alone on LD_LIBRARY_PATH: the real dispatcher (found in the cache) takes them
    # before its own; checked against the real loader with a call that needs libcudnn_ops.
    root = tmpdir()
    s = make_copy(os.path.join(root, "subs"), "9.1.0")
    for n in ("libcudnn.so", "libcudnn.so.9", "libcudnn.so.9.1.0"):
        os.unlink(os.path.join(s, n))
    env = {"LD_LIBRARY_PATH": s}
    doc = scan_json([], env=env)
    nd = findings(doc, "no-dispatcher")
    check(len(nd) == 1 and "LD_LIBRARY_PATH" in nd[0]["message"], "orphan sub-libraries on LD_LIBRARY_PATH", dump(doc))
    m = [f for f in findings(doc, "sublib-version-mismatch") if "search path" in f["message"]]
    check(len(m) == 1 and os.path.join(s, "libcudnn_ops.so.9") in m[0]["paths"],
          "the real 9.19.0 dispatcher would load the 9.1.0 sub-libraries", dump(doc))
    probe = ("import ctypes\n"
             "l = ctypes.CDLL(%r)\n"
             "p = ctypes.c_void_p()\n"
             "l.cudnnCreateTensorDescriptor(ctypes.byref(p))\n"
             "print([x.split()[-1] for x in open('/proc/self/maps') if 'libcudnn_ops' in x][:1])\n"
             % os.path.join(expected, "libcudnn.so.9"))
    p = subprocess.run([sys.executable, "-c", probe], env=clean_env(env), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    check(p.returncode == 0 and os.path.join(s, "libcudnn_ops.so.9.1.0") in p.stdout,
          "and the real loader does load them", p.stdout, p.stderr)

    # A program that dlopen()s cuDNN: python itself.
    doc = scan_json(["--root", root, "--for", sys.executable])
    check(doc["for"]["kind"] == "program" and not doc["for"]["links_cudnn"], "python does not link cuDNN", doc["for"])


@scenario
def machine_places():
    """Without --root: conda environments, wheels, pyenv, venv, CUDA_HOME, TENSORRT_ROOT are all looked at."""
    root = tmpdir()
    home = os.path.join(root, "home")
    places = {
        "pip-nvidia-cudnn": os.path.join(home, ".local/lib/python3.11/site-packages/nvidia/cudnn/lib"),
        "conda": os.path.join(home, "miniconda3/envs/tf/lib"),
        "pip-torch": os.path.join(home, "miniconda3/envs/tf/lib/python3.10/site-packages/torch/lib"),
        "pyenv": os.path.join(home, ".pyenv/versions/3.11.7/lib/python3.11/dist-packages/nvidia/cudnn/lib"),
        "CONDA_PREFIX": os.path.join(root, "env/lib"),
        "CUDA_HOME": os.path.join(root, "cuda/lib64"),
        "TENSORRT_ROOT": os.path.join(root, "trt/lib"),
        "VIRTUAL_ENV": os.path.join(root, "venv/lib/python3.12/site-packages/torch/lib"),
    }
    for i, d in enumerate(places.values()):
        make_copy(d, "9.%d.0" % i)
    env = {"HOME": home, "CONDA_PREFIX": os.path.join(root, "env"), "CUDA_HOME": os.path.join(root, "cuda"),
           "TENSORRT_ROOT": os.path.join(root, "trt"), "VIRTUAL_ENV": os.path.join(root, "venv")}
    doc = scan_json([], env=env)
    want = {"pip-nvidia-cudnn": "pip-nvidia-cudnn", "conda": "conda", "pip-torch": "pip-torch",
            "pyenv": "pip-nvidia-cudnn", "CONDA_PREFIX": "conda", "CUDA_HOME": "CUDA_HOME",
            "TENSORRT_ROOT": "TENSORRT_ROOT", "VIRTUAL_ENV": "pip-torch"}
    for place, d in places.items():
        c = the_copy(doc, d, 9)
        check(want[place] in c["sources"], "%s: found as %s" % (place, want[place]), c["sources"])
    m = findings(doc, "multiple-copies")
    check(len(m) == 1 and all(d in m[0]["paths"] for d in places.values()), "all of them named", dump(doc))


@scenario
def conflicts_doc():
    """Every id the scan can report (cli/scan/scan-findings.c holds every add_finding) has its section in docs/conflicts.md, and a test here that triggers it."""
    import re
    with open(E["SCAN_FINDINGS_C"]) as f:
        ids = set(re.findall(r'add_finding\(r, "([a-z-]+)"', f.read()))
    check(len(ids) >= 12, "the ids found in scan-findings.c", sorted(ids))
    with open(E["CONFLICTS_MD"]) as f:
        doc = f.read()
    sections = dict(re.findall(r"^### `([a-z-]+)`\n(.*?)(?=^###? |\Z)", doc, re.M | re.S))
    ondisk, runtime = doc.split("## Reported by the library at run time")
    for i in ids:
        check(i in sections and "### `%s`" % i in ondisk, "docs/conflicts.md has a section for %s" % i)
        check("```sh" in sections[i] or "`rm " in sections[i] or "Fix" in sections[i], "%s says how to fix it" % i)
    for i in ("runtime-multiple-copies", "runtime-mixed-majors", "sublib-load-failed", "version-check-failed",
              "cuda-major-mismatch", "driver-older-than-runtime", "gpu-too-new", "library-not-requested",
              "dropin-bypassed"):
        check(i in sections and "### `%s`" % i in runtime and "Reported by the library at run time" in sections[i],
              "%s: a section marked as reported at run time" % i)
    with open(__file__) as f:
        me = f.read()
    for i in ids:
        check('"%s"' % i in me, "a scenario asserts %s" % i)


@scenario
def usage():
    """Usage errors exit 2 with a message; --help exits 0."""
    for args, words in ((["--bogus"], "unknown option"), (["--root"], "--root needs"),
                        (["--root", "/nonexistent/dir"], "No such file"), (["--root", FAKE9], "not a directory"),
                        (["--for", "/nonexistent/prog"], "not a program or library"), (["extra"], "unexpected"),
                        (["--user", "nobody"], "--user needs --for"), (["--for", FAKE9, "--user"], "--user needs a")):
        p, _ = run_scan(args)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and err.startswith("cudnnspy: ") and words in err and p.stdout == b"",
              "%s: exit 2 and '%s'" % (args, words), p.returncode, err)
    p, _ = run_scan(["--help"])
    check(p.returncode == 0 and b"--for" in p.stdout and b"--root" in p.stdout and b"--user NAME" in p.stdout,
          "--help", p.stdout)
    p = subprocess.run([CLI, "--help"], stdout=subprocess.PIPE, universal_newlines=True)
    check(p.returncode == 0 and "cudnnspy scan" in p.stdout, "cudnnspy --help mentions scan", p.stdout)


@scenario
def full_version_names():
    """Sub-libraries named by full version only (no .so.9 links): the dispatcher finds them, no false error."""
    root = tmpdir()
    d = os.path.join(root, "full")
    os.makedirs(d)
    copy_file(FAKE9, os.path.join(d, "libcudnn.so.9.19.0"))
    os.symlink("libcudnn.so.9.19.0", os.path.join(d, "libcudnn.so.9"))
    for s in SUBS9:
        copy_file(FAKE9, os.path.join(d, "libcudnn_%s.so.9.19.0" % s))
    doc = scan_json(["--root", d])
    c = the_copy(doc, d, 9)
    check(c["complete"] and all(s["present"] and s["file"] == "libcudnn_%s.so.9.19.0" % s["name"]
                                for s in c["sublibraries"]),
          "complete, each sub-library by its full-version name", c["sublibraries"])
    check(not findings(doc, "incomplete-copy") and not findings(doc, "no-sublibraries"), "no false error", dump(doc))
    # The middle name (major.minor) is the dispatcher's second choice.
    for s in SUBS9:
        os.rename(os.path.join(d, "libcudnn_%s.so.9.19.0" % s), os.path.join(d, "libcudnn_%s.so.9.19" % s))
    doc = scan_json(["--root", d])
    check(the_copy(doc, d, 9)["complete"] and not findings(doc, "incomplete-copy"), "major.minor names too", dump(doc))

    if not REAL_DIR:
        raise Skip("the fake part passed; no real cuDNN for the loader's own answer")
    # The real dispatcher, through a directory of links named by full version only: LD_DEBUG=libs says
    # which name it asks for first, and that it takes the file the scan counts.
    farm = os.path.join(root, "farm")
    os.makedirs(farm)
    os.symlink(os.path.join(REAL_DIR, "libcudnn.so.9"), os.path.join(farm, "libcudnn.so.9"))
    doc = scan_json(["--root", REAL_DIR])
    version = the_copy(doc, REAL_DIR, 9)["version"]
    check(version and version.count(".") == 2, "the real copy's version is known", doc["copies"])
    for s in SUBS9:
        os.symlink(os.path.join(REAL_DIR, "libcudnn_%s.so.9" % s), os.path.join(farm, "libcudnn_%s.so.%s" % (s, version)))
    src = os.path.join(root, "create.c")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\nint cudnnCreate(void **);\n"
                "int main(void) { void *h; printf(\"%d\\n\", cudnnCreate(&h)); return 0; }\n")
    prog = os.path.join(root, "create")
    compile_c(src, prog, ["-Wl,--enable-new-dtags", "-Wl,-rpath," + farm, os.path.join(farm, "libcudnn.so.9")])
    p = subprocess.run([prog], env=clean_env({"LD_DEBUG": "libs"}), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    found = loader_found(p.stderr)
    asked = [n for n, _ in found if n.startswith("libcudnn_graph")]
    check(asked and asked[0] == "libcudnn_graph.so.%s" % version, "the dispatcher asks for the full version first",
          asked, p.stderr[-3000:])
    got = dict(found)
    check(got.get("libcudnn_graph.so.%s" % version) == os.path.join(farm, "libcudnn_graph.so.%s" % version),
          "and takes it from its own directory", found)
    doc = scan_json(["--root", farm])
    c = the_copy(doc, farm, 9)
    check(c["complete"] and not findings(doc, "incomplete-copy"), "the scan agrees: the copy is complete", dump(doc))
    # And --for names the same files as the loader, the sub-library the dispatcher opened included.
    doc = scan_json(["--root", farm, "--for", prog])
    agrees(doc, found, "the real dispatcher through a farm", p.stderr)
    subs = doc["for"]["resolutions"][0]["sublibraries"]
    check(subs[0]["name"] == "libcudnn_graph.so.%s" % version and subs[0]["path"].startswith(farm + "/"),
          "--for: graph by its full-version name, from the farm", subs[0])


def loader_found(debug):
    """[(name, file found or None)] from LD_DEBUG=libs output, in the loader's order: the last file
    tried for each name, unless the loader then failed on that name."""
    out = []
    cur = None
    cur_late = False
    tried = []
    failed = set()
    inits = set()
    for line in debug.splitlines():
        if "error while loading shared libraries: " in line:
            failed.add(line.split("error while loading shared libraries: ", 1)[1].split(":")[0])
        text = line.split(":", 1)[1].strip() if ":" in line else ""
        if text.startswith("calling init: "):
            inits.add(text[len("calling init: "):])
    started = False
    for line in debug.splitlines() + ["0: find library=END"]:
        text = line.split(":", 1)[1].strip() if ":" in line else ""
        if text.startswith("find library="):
            if cur is not None:
                # Started: what was found got its init called. Failed at start: all but the failed name.
                ok = tried and (tried[-1] in inits if not failed else cur not in failed)
                # After the start, only a dispatcher's dlopen() of its sub-libraries is the scan's business
                # (not what those sub-libraries need in turn).
                if not cur_late or cur.startswith("libcudnn_"):
                    out.append((cur, tried[-1] if ok else None))
            cur = text[len("find library="):].split(" ")[0]
            cur_late = started
            tried = []
        elif text.startswith("transferring control: "):
            started = True
        elif text.startswith("trying file="):
            tried.append(text[len("trying file="):])
    return out


def run_debug(prog, env=None, user=None):
    """The program run with LD_DEBUG=libs (as user, a pwd entry): (exit status, what the loader found)."""
    pre = None
    if user is not None:
        def pre():
            os.setgid(user.pw_gid)
            os.setgroups([])
            os.setuid(user.pw_uid)
    e = dict(env or {})
    e["LD_DEBUG"] = "libs"
    p = subprocess.run([prog], env=clean_env(e), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60, preexec_fn=pre)
    return p.returncode, loader_found(p.stderr), p.stderr


def agrees(doc, found, what, debug=""):
    """Each name the loader searched for: the scan found the same file (or none, where the loader found none)."""
    objs = doc["for"]["objects"]
    missing = {m["name"] for m in doc["for"]["not_found"]}
    subs = {}
    for r in doc["for"]["resolutions"]:
        for sl in r.get("sublibraries", []):
            subs[sl["name"]] = sl
    check(found, "%s: the loader searched for something" % what, debug[-2000:])
    for name, path in found:
        if name.startswith("libcudnn_"):
            # A dispatcher's dlopen(): the name it found is the scan's answer for that sub-library.
            if path is not None:
                check(name in subs and os.path.realpath(subs[name]["path"] or "") == os.path.realpath(path),
                      "%s: the dispatcher took %s for %s, the scan says %s" % (what, path, name, subs.get(name)),
                      debug[-2000:])
            continue
        got = [o for o in objs if name in o["names"]]
        if path is None:
            check(not got and name in missing, "%s: the loader found no %s; the scan must say so" % (what, name),
                  json.dumps(doc["for"], indent=1)[:3000])
            continue
        check(len(got) == 1 and os.path.realpath(got[0]["path"]) == os.path.realpath(path),
              "%s: the loader took %s for %s, the scan says %s" % (what, path, name, [o["path"] for o in got]),
              json.dumps(objs, indent=1)[:3000], debug[-2000:])
    # The other way round, when the program started: each object the scan searched for, the loader did too
    # (a name already loaded, by SONAME, is no search for either).
    if all(path for name, path in found if not name.startswith("libcudnn_")):
        searched = {name for name, _ in found}
        for o in objs[1:]:
            if o["rule"] and o["needed_by"] and o["rule"] != "a path":
                check(o["names"][0] in searched, "%s: the scan searched for %s, the loader did not" % (what, o["names"][0]),
                      json.dumps(objs, indent=1)[:3000], debug[-2000:])


PLUGIN_C = "unsigned long cudnnGetVersion(void);\nunsigned long plugin_version(void) { return cudnnGetVersion(); }\n"
MAIN_C = ("#include <stdio.h>\nunsigned long plugin_version(void);\n"
          "int main(void) { printf(\"%lu\\n\", plugin_version()); return 0; }\n")


def build_plugin_app(root, plugin_paths, prog_paths, cudnn_dir=None):
    """root/app/prog needs libplugin.so (in root/app/lib), which needs libcudnn.so.9: each with the link
    options given (-rpath and the dtags)."""
    lib = os.path.join(root, "app", "lib")
    os.makedirs(lib, exist_ok=True)
    for name, text in (("plugin.c", PLUGIN_C), ("main.c", MAIN_C)):
        with open(os.path.join(root, name), "w") as f:
            f.write(text)
    compile_c(os.path.join(root, "plugin.c"), os.path.join(lib, "libplugin.so"),
              ["-shared", "-fPIC", "-Wl,-soname,libplugin.so"] + plugin_paths +
              ["-Wl,--no-as-needed", "-L" + (cudnn_dir or os.path.dirname(FAKE9)), "-l:libcudnn.so.9"])
    prog = os.path.join(root, "app", "prog")
    compile_c(os.path.join(root, "main.c"), prog, prog_paths + ["-L" + lib, "-lplugin"])
    return prog


@scenario
def for_plugin():
    """--for follows the whole tree: a plugin with its own RUNPATH to a bundled copy, as LD_DEBUG=libs says."""
    root = tmpdir()
    bundled = make_copy(os.path.join(root, "app", "bundled"), "9.3.0")
    other = make_copy(os.path.join(root, "other"), "9.1.0")
    prog = build_plugin_app(root, ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../bundled"],
                            ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"])
    for llp in (None, other):
        env = {"LD_LIBRARY_PATH": llp} if llp else {}
        what = "a plugin's RUNPATH (LD_LIBRARY_PATH %s)" % llp
        rc, found, debug = run_debug(prog, env)
        check(rc == 0, "%s: the program runs" % what, debug[-2000:])
        doc = scan_json(["--root", root, "--for", prog], env=env)
        agrees(doc, found, what, debug)
        check(not doc["for"]["links_cudnn"] and doc["for"]["loads_cudnn"], "%s: loads cuDNN, not linked" % what,
              doc["for"])
        r = compare(doc, "libcudnn.so.9", (None, None) if False else ("x", os.path.realpath(dict(found)["libcudnn.so.9"])),
                    what)
        check(r["needed_by"] == os.path.join(root, "app", "lib", "libplugin.so"), "%s: needed by the plugin" % what, r)
        check(r["version"] == ("9.1.0" if llp else "9.3.0") and r["copy"] is not None,
              "%s: the copy and its version" % what, r)
    out = scan_human(["--root", root, "--for", prog])
    check("loads libcudnn.so.9 through %s/app/lib/libplugin.so" % root in out and "does not link" not in out,
          "the table says cuDNN comes in through the plugin", out)
    check("libcudnn.so.9 -> %s/app/lib/../bundled/libcudnn.so.9, needed by %s/app/lib/libplugin.so, found by DT_RUNPATH"
          % (root, root) in out, "which file and why", out)


@scenario
def for_rpath():
    """DT_RPATH is inherited: a plugin without paths searches the program's DT_RPATH first; a RUNPATH stops that."""
    root = tmpdir()
    mine = make_copy(os.path.join(root, "mine"), "9.2.0")
    other = make_copy(os.path.join(root, "other"), "9.1.0")
    for plugin_paths, rule in (([], "DT_RPATH"),
                               (["-Wl,--enable-new-dtags", "-Wl,-rpath," + os.path.join(root, "nowhere")],
                                "LD_LIBRARY_PATH")):
        sub = tempfile.mkdtemp(dir=root)
        prog = build_plugin_app(sub, plugin_paths, ["-Wl,--disable-new-dtags",
                                                    "-Wl,-rpath,$ORIGIN/lib:" + mine])
        env = {"LD_LIBRARY_PATH": other}
        what = "program DT_RPATH, plugin %s" % (plugin_paths or "without paths")
        rc, found, debug = run_debug(prog, env)
        check(rc == 0, "%s: the program runs" % what, debug[-2000:])
        doc = scan_json(["--root", root, "--for", prog], env=env)
        agrees(doc, found, what, debug)
        r = [x for x in doc["for"]["resolutions"] if x["name"] == "libcudnn.so.9"][0]
        check(r["rule"] == rule, "%s: found by %s, not %s" % (what, rule, r["rule"]), r)
        if rule == "DT_RPATH":
            check(r["path"].startswith(mine + "/") and "the DT_RPATH of %s" % prog in r["steps"][-1]["outcome"],
                  "%s: the program's DT_RPATH, inherited, said so" % what, r)


@scenario
def for_missing():
    """A needed libcudnn.so.8 found nowhere is an error finding with its fix, never "Findings: none"."""
    root = tmpdir()
    d8 = make_copy(os.path.join(root, "gone8"), "8.9.7")
    src = os.path.join(root, "main.c")
    with open(src, "w") as f:
        f.write("unsigned long cudnnGetVersion(void);\nint main(void) { return cudnnGetVersion() ? 0 : 1; }\n")
    prog = os.path.join(root, "prog8")
    compile_c(src, prog, ["-L" + d8, "-l:libcudnn.so.8"])
    shutil.rmtree(d8)
    empty = os.path.join(root, "empty")
    os.makedirs(empty)
    rc, found, debug = run_debug(prog)
    check(rc != 0 and ("libcudnn.so.8", None) in found, "the loader finds no libcudnn.so.8", found, debug[-2000:])
    doc = scan_json(["--root", empty, "--for", prog])
    agrees(doc, found, "libcudnn.so.8 missing", debug)
    m = findings(doc, "missing-library")
    check(len(m) == 1 and m[0]["severity"] == "error" and "libcudnn.so.8" in m[0]["message"] and
          "cannot open shared object file" in m[0]["message"], "one missing-library error", dump(doc))
    out = scan_human(["--root", empty, "--for", prog])
    check("Findings: none" not in out and "missing-library" in out and "libcudnn.so.8, needed by %s: NOT FOUND" % prog
          in out, "the table says so", out)

    # The dispatcher is there, its sub-libraries are nowhere: incomplete for this program.
    alone = make_copy(os.path.join(root, "alone8"), "8.9.7", subs=[])
    prog2 = os.path.join(root, "prog8b")
    compile_c(src, prog2, ["-Wl,--enable-new-dtags", "-Wl,-rpath," + alone, "-L" + alone, "-l:libcudnn.so.8"])
    doc = scan_json(["--root", empty, "--for", prog2])
    subs = doc["for"]["resolutions"][0]["sublibraries"]
    if any(x["path"] for x in subs):
        raise Skip("this machine has cuDNN 8 sub-libraries on the search path")
    m = [f for f in findings(doc, "incomplete-copy") if f["message"].startswith("for " + prog2)]
    check(len(m) == 1 and "finds 6 of its 6 sub-libraries nowhere" in m[0]["message"] and
          "libcudnn_ops_infer.so.8" in m[0]["message"], "an incomplete-copy error for this program", dump(doc))


@scenario
def for_unreadable():
    """A resolved copy the user cannot read: the loader passes over it; --user checks for that user."""
    import pwd
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        raise Skip("no user nobody")
    root = tmpdir()
    os.chmod(root, 0o755)
    bundled = make_copy(os.path.join(root, "app", "bundled"), "9.3.0")
    prog = build_plugin_app(root, ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../bundled"],
                            ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"])
    os.chmod(os.path.join(bundled, "libcudnn.so.9.3.0"), 0)
    doc = scan_json(["--root", root, "--for", prog])
    check(not [f for f in findings(doc, "unreadable") if f["severity"] == "error"] or os.getuid() != 0,
          "root reads it: no error for root", dump(doc))
    rc, found, debug = run_debug(prog, user=nobody)
    doc = scan_json(["--root", root, "--for", prog, "--user", "nobody"])
    agrees(doc, found, "run by nobody", debug)
    r = [x for x in doc["for"]["resolutions"] if x["name"] == "libcudnn.so.9"][0]
    check(r["unreadable"] == [os.path.join(root, "app", "lib", "..", "bundled", "libcudnn.so.9")] and
          any(s["outcome"].startswith("skipped: user nobody cannot read it (mode 0000)") for s in r["steps"]),
          "passed over, and why", r)
    u = [f for f in findings(doc, "unreadable") if f["severity"] == "error"]
    check(len(u) == 1 and "user nobody cannot read" in u[0]["message"] and "passes over it" in u[0]["message"],
          "one unreadable error for the copy the program would get", dump(doc))
    check(doc["for"]["user"] == "nobody", "the user named", doc["for"]["user"])
    doc = scan_json(["--root", root, "--for", prog, "--user", str(nobody.pw_uid)])
    check(doc["for"]["user"] == "nobody" and findings(doc, "unreadable"), "or the user's id", doc["for"]["user"])
    # A set-uid program run by nobody: the kernel sets AT_SECURE, the loader ignores LD_LIBRARY_PATH.
    if os.getuid() == 0:
        a = make_copy(os.path.join(root, "a"), "9.1.0")
        b = make_copy(os.path.join(root, "b"), "9.2.0")
        src = os.path.join(root, "where.c")
        with open(src, "w") as f:
            f.write(WHERE_C)
        suid = os.path.join(root, "suid")
        compile_c(src, suid, ["-Wl,--enable-new-dtags", "-Wl,-rpath," + b, "-Wl,--no-as-needed", FAKE9, "-ldl"])
        os.chmod(suid, 0o4755)

        def as_nobody():
            os.setgid(nobody.pw_gid)
            os.setgroups([])
            os.setuid(nobody.pw_uid)
        q = subprocess.run([suid], env=clean_env({"LD_LIBRARY_PATH": a}), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=30, preexec_fn=as_nobody)
        lines = q.stdout.splitlines()
        loaded = (lines[0], lines[1]) if q.returncode == 0 and len(lines) == 2 else (None, q.stdout + q.stderr)
        doc = scan_json(["--root", root, "--for", suid, "--user", "nobody"], env={"LD_LIBRARY_PATH": a})
        check(doc["for"]["secure"], "set-uid root, run by nobody: secure", doc["for"])
        r = compare(doc, "libcudnn.so.9", loaded, "a set-uid program run by nobody")
        check(r["rule"] == "DT_RUNPATH" and loaded[1].startswith(b + "/"), "LD_LIBRARY_PATH ignored", r, loaded)
        doc = scan_json(["--root", root, "--for", suid], env={"LD_LIBRARY_PATH": a})
        check(not doc["for"]["secure"], "run by its owner: not secure", doc["for"])
        # Its $ORIGIN outside the system directories is ignored then.
        suid2 = os.path.join(root, "suid2")
        compile_c(src, suid2, ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/b", "-Wl,--no-as-needed", FAKE9, "-ldl"])
        os.chmod(suid2, 0o4755)
        q = subprocess.run([suid2], env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=30, preexec_fn=as_nobody)
        lines = q.stdout.splitlines()
        loaded = (lines[0], lines[1]) if q.returncode == 0 and len(lines) == 2 else (None, q.stdout + q.stderr)
        doc = scan_json(["--root", root, "--for", suid2, "--user", "nobody"])
        r = compare(doc, "libcudnn.so.9", loaded, "a set-uid program's $ORIGIN, run by nobody")
        check(r["steps"][0]["outcome"].startswith("skipped: the program is set-uid") and
              not (loaded[1] or "").startswith(b + "/"), "$ORIGIN ignored, and said so", r, loaded)
        doc = scan_json(["--root", root, "--for", suid2])
        r = compare(doc, "libcudnn.so.9", loader_says(suid2, {}), "the same program run by its owner")
        check(r["path"].startswith(b + "/"), "then $ORIGIN counts", r)
    p, _ = run_scan(["--for", prog, "--user", "no-such-user-here"])
    check(p.returncode == 2 and b"no such user" in p.stderr, "an unknown user is a usage error", p.stderr)


@scenario
def for_symbols():
    """The cudnn* functions the program imports against what the copy it gets exports."""
    root = tmpdir()
    a = make_copy(os.path.join(root, "a"), "9.1.0")
    # Built against a cuDNN that has one more function than the copy it gets.
    stub = os.path.join(root, "newer")
    os.makedirs(stub)
    with open(os.path.join(root, "stub.c"), "w") as f:
        f.write("unsigned long cudnnGetVersion(void) { return 0; }\nint cudnnNoSuchFunctionAnywhere(void) { return 0; }\n")
    compile_c(os.path.join(root, "stub.c"), os.path.join(stub, "libcudnn.so.9"),
              ["-shared", "-fPIC", "-Wl,-soname,libcudnn.so.9"])
    src = os.path.join(root, "main.c")
    with open(src, "w") as f:
        f.write("unsigned long cudnnGetVersion(void);\nint cudnnNoSuchFunctionAnywhere(void);\n"
                "int main(int argc, char **argv) { if (argc > 5) cudnnNoSuchFunctionAnywhere(); "
                "return cudnnGetVersion() ? 0 : 1; }\n")
    prog = os.path.join(root, "prog")
    compile_c(src, prog, ["-Wl,-z,now", "-Wl,--enable-new-dtags", "-Wl,-rpath," + a, "-L" + stub, "-l:libcudnn.so.9"])
    p = subprocess.run([prog], env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=30)
    check(p.returncode != 0 and "undefined symbol: cudnnNoSuchFunctionAnywhere" in p.stderr,
          "the loader stops on the missing function", p.stderr)
    doc = scan_json(["--root", root, "--for", prog])
    check(sorted(doc["for"]["imports"]) == ["cudnnGetVersion", "cudnnNoSuchFunctionAnywhere"], "the imports",
          doc["for"]["imports"])
    m = findings(doc, "missing-symbols")
    check(len(m) == 1 and "cudnnNoSuchFunctionAnywhere" in m[0]["message"] and "cudnnGetVersion" not in
          m[0]["message"], "one missing-symbols error naming it", dump(doc))


@scenario
def symlink_farm():
    """A directory of links into another copy is that copy, not a second one."""
    root = tmpdir()
    real = make_copy(os.path.join(root, "real"), "9.1.0")
    farm = os.path.join(root, "farm")
    os.makedirs(farm)
    for n in os.listdir(real):
        os.symlink(os.path.join("..", "real", n), os.path.join(farm, n))
    other = make_copy(os.path.join(root, "other"), "9.1.0")
    doc = scan_json(["--root", farm])
    c = the_copy(doc, farm, 9)
    r = the_copy(doc, real, 9)
    check(c["links_into"] == real and c["same_as"] == r["id"], "the farm is the copy it links into", c)
    check("symlink farm target" in r["sources"], "whose directory is scanned too", r)
    check(not findings(doc, "multiple-copies"), "one copy, not two", dump(doc))
    doc = scan_json(["--root", root])
    m = findings(doc, "multiple-copies")
    check(len(m) == 1 and m[0]["message"].startswith("2 different") and farm not in m[0]["paths"],
          "real and other are two; the farm is not a third", dump(doc))
    out = scan_human(["--root", farm])
    check("links into:  %s [copy %d]" % (real, r["id"]) in out, "the table says so", out)


@scenario
def toolkits():
    """Where /usr/local/cuda, CUDA_HOME and CUDA_PATH point, and which toolkit version is there."""
    root = tmpdir()
    a = os.path.join(root, "cuda-12.4")
    make_copy(os.path.join(a, "lib64"), "9.1.0")
    with open(os.path.join(a, "version.json"), "w") as f:
        json.dump({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"version": "12.4.127"}}, f)
    os.symlink("cuda-12.4", os.path.join(root, "cuda"))
    b = os.path.join(root, "cuda-13.0")
    os.makedirs(os.path.join(b, "dist-info", "nvidia_cuda_runtime-13.0.96.dist-info"))
    doc = scan_json(["--root", root], env={"CUDA_HOME": os.path.join(root, "cuda"), "CUDA_PATH": b})
    t = {x["what"]: x for x in doc["cuda_toolkits"]}
    check(t["CUDA_HOME"]["real_path"] == a and t["CUDA_HOME"]["version"] == "12.4.1" and
          t["CUDA_HOME"]["version_from"] == os.path.join(root, "cuda", "version.json"),
          "CUDA_HOME: where it points, version.json", t)
    check(t["CUDA_HOME"]["copy"] == the_copy(doc, os.path.join(a, "lib64"), 9)["id"], "and its cuDNN copy", t)
    check(t["CUDA_PATH"]["version"] == "13.0.96" and "nvidia_cuda_runtime" in t["CUDA_PATH"]["version_from"],
          "CUDA_PATH: the runtime's dist-info", t)
    if os.path.lexists("/usr/local/cuda"):
        u = t.get("/usr/local/cuda")
        check(u and u["real_path"] == os.path.realpath("/usr/local/cuda"), "/usr/local/cuda and where it points", t)
        if os.path.isdir("/usr/local/cuda/dist-info") or os.path.exists("/usr/local/cuda/version.json"):
            check(u["version"], "with its version", u)
    d = findings(doc, "toolkits-differ")
    check(d and any("CUDA_HOME is %s (CUDA 12.4.1) but CUDA_PATH is %s (CUDA 13.0.96)" % (a, b) in f["message"]
                    for f in d), "two toolkits named: a toolkits-differ warning", dump(doc))
    doc = scan_json(["--root", root], env={"CUDA_HOME": b, "CUDA_PATH": b + "/"})
    check(not [f for f in findings(doc, "toolkits-differ") if "/usr/local/cuda " not in f["message"]],
          "one toolkit by two spellings: no warning between them", dump(doc))
    out = scan_human(["--root", root], env={"CUDA_HOME": os.path.join(root, "cuda")})
    check("CUDA_HOME        %s/cuda -> %s: CUDA 12.4.1" % (root, a) in out, "the table says so", out)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print("usage: test_scan.py {%s}" % ",".join(sorted(SCENARIOS)))
        return 2
    if not CLI:
        print("CLI_EXE is not set: run through meson test")
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
