#!/usr/bin/env python3
"""The Debian packages as an operator gets them: lintian, their contents, `apt-get install ./cudnnspy_*.deb`,
the installed command at work with no path given, then `apt-get remove --purge` and nothing left behind.

usage: tests/package/deb-test.py DIR     (DIR holds the .deb and .changes files: ./dev.sh deb builds them in build-deb)
Prints one line per check and a summary in meson's words (Ok:, Fail:, Skipped:) that .ci/run adds up.
Exit 0 when nothing failed, 1 when a check failed, 2 for a bad argument, 77 when it cannot run here (no dpkg or
apt-get, neither root nor password-less sudo, or cudnnspy installed already: it installs and removes its own).
The demo runs against the real cuDNN (CUDNN_ROOT, CUDA_HOME, /usr/local/cuda): without one those checks are skipped.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
PACKAGES = ("cudnnspy", "cudnnspy-dev")
# Outside the package's own paths, where a name with "cudnnspy" in it would be something it left behind.
WATCHED = ("/usr/bin", "/usr/include", "/usr/share/doc", "/usr/share/man", "/usr/share/bash-completion", "/usr/lib",
           "/etc", "/var/lib/dpkg/info")

results = {"ok": 0, "fail": 0, "skip": 0}


def report(kind, name, why=""):
    results[kind] += 1
    word = {"ok": "ok  ", "fail": "FAIL", "skip": "SKIP"}[kind]
    print("%s %s%s" % (word, name, (": " + why) if why else ""), flush=True)


def check(name, cond, why, *context):
    if cond:
        report("ok", name)
    else:
        report("fail", name, why + "".join("\n     | " + line for c in context for line in str(c).splitlines()))
    return cond


def run(argv, env=None, cwd=None, timeout=300):
    """argv with the environment of a user's shell: none of the spy's variables, no preload."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("CUDNNSPY_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    base["LC_ALL"] = "C"
    base.update(env or {})
    try:
        return subprocess.run(argv, env=base, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout)
    except OSError as e:
        return subprocess.CompletedProcess(argv, 127, "", "%s: %s" % (argv[0], e))


def as_root():
    return [] if os.geteuid() == 0 else ["sudo", "-n"]


def installed_version(pkg):
    p = run(["dpkg-query", "-W", "-f=${db:Status-Status} ${Version}", pkg])
    if p.returncode != 0:
        return None
    status, _, version = p.stdout.partition(" ")
    return version if status == "installed" else None


def multiarch():
    p = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"])
    if p.returncode == 0 and p.stdout.strip():
        return p.stdout.strip()
    return run(["gcc", "-print-multiarch"]).stdout.strip()


def watched_names():
    """Every path under WATCHED whose name holds "cudnnspy" (the package's, or anything made for it)."""
    found = set()
    for top in WATCHED:
        for d, dirs, files in os.walk(top):
            for n in dirs + files:
                if "cudnnspy" in n:
                    found.add(os.path.join(d, n))
    return found


def real_cudnn():
    p = run([sys.executable, os.path.join(TOP, "tests", "find-real-cudnn.py")])
    lib = p.stdout.strip()
    if not lib:
        return None, None
    # cudnn.h next to the library's directory: <root>/include for <root>/lib64, as the toolkit has it.
    for inc in (os.path.join(os.path.dirname(lib), "include"), os.path.join(lib, "..", "..", "include"),
                "/usr/include"):
        if os.path.exists(os.path.join(inc, "cudnn.h")):
            return lib, os.path.normpath(inc)
    return lib, None


def test_lintian(changes, debs):
    lintian = shutil.which("lintian")
    if not lintian:
        report("skip", "lintian", "lintian is not installed")
        return
    # Every tag, down to pedantic and experimental ones; what debian/*lintian-overrides explains is left out.
    p = run([lintian, "-I", "-E", "--pedantic", "--tag-display-limit", "0"] + ([changes] if changes else debs),
            timeout=600)
    tags = [line for line in p.stdout.splitlines() if re.match(r"^[EWIPX]: ", line)]
    check("lintian", p.returncode == 0 and not tags, "lintian has %d tags (exit %d)" % (len(tags), p.returncode),
          *(tags[:40] + ([p.stderr] if p.returncode else [])))


def deb_files(deb):
    listing = run(["dpkg-deb", "-c", deb])
    files = set()
    for line in listing.stdout.splitlines():
        # drwxr-xr-x root/root 0 2026-12-02 19:29 ./usr/bin/ [-> target]
        path = line.split(None, 5)[5].split(" -> ")[0]
        path = "/" + path[2:].rstrip("/") if path.startswith("./") else path
        if path != "/":
            files.add(path)
    return files


def test_contents(debs, ma):
    by_name = {}
    for deb in debs:
        name = run(["dpkg-deb", "-f", deb, "Package"]).stdout.strip()
        by_name[name] = deb
    if not check("packages", set(by_name) == set(PACKAGES), "expected %s" % ", ".join(PACKAGES), *sorted(by_name)):
        return by_name
    libdir = "/usr/lib/" + ma
    expect = {
        "cudnnspy": ["/usr/bin/cudnnspy", libdir + "/libcudnnspy.so",
                     libdir + "/cudnnspy/dropin9/libcudnn.so.9", libdir + "/cudnnspy/dropin8/libcudnn.so.8",
                     "/usr/share/man/man1/cudnnspy.1.gz", "/usr/share/bash-completion/completions/cudnnspy",
                     "/usr/share/doc/cudnnspy/copyright",
                     # uncompressed: the spy's lines point at conflicts.md#ID
                     "/usr/share/doc/cudnnspy/conflicts.md", "/usr/share/doc/cudnnspy/README.md",
                     "/usr/share/doc/cudnnspy/usage.md", "/usr/share/doc/cudnnspy/examples/host-calls.c",
                     "/usr/share/doc/cudnnspy/examples/pytorch_conv.py"],
        "cudnnspy-dev": ["/usr/include/cudnnspy.h", libdir + "/pkgconfig/cudnnspy.pc",
                         "/usr/share/man/man3/cudnnspy.3.gz"],
    }
    lists = {name: deb_files(deb) for name, deb in by_name.items()}
    for name in PACKAGES:
        missing = [f for f in expect[name] if f not in lists[name]]
        check("contents %s" % name, not missing, "missing from %s" % os.path.basename(by_name[name]), *missing)
    both = lists["cudnnspy"] & lists["cudnnspy-dev"]
    shared_dirs = {"/usr", "/usr/lib", libdir, "/usr/share", "/usr/share/doc", "/usr/share/man"}
    check("contents disjoint", not (both - shared_dirs), "files in both packages", *sorted(both - shared_dirs))
    local = sorted(f for l in lists.values() for f in l if f.startswith("/usr/local"))
    check("contents not in /usr/local", not local, "a package installs under /usr/local", *local)

    # cuDNN comes from the toolkit, wheels or conda: no package depends on one.
    deps = {name: run(["dpkg-deb", "-f", deb, "Depends"]).stdout.strip() for name, deb in by_name.items()}
    bad = ["%s: %s" % (n, d) for n, d in deps.items() if re.search(r"cudnn|cuda|nvidia", d.replace("cudnnspy", ""))]
    check("depends on no cuDNN", not bad, "a dependency names cuDNN or CUDA", *bad)
    ctl = tempfile.mkdtemp(prefix="cudnnspy-deb-ctl-")
    try:
        run(["dpkg-deb", "-e", by_name["cudnnspy"], ctl])
        shlibs = os.path.join(ctl, "shlibs")
        text = open(shlibs).read() if os.path.exists(shlibs) else ""
        check("provides no libcudnn", not re.search(r"^libcudnn\s", text, re.M),
              "the shlibs file offers the drop-ins as libcudnn to other packages", text)
    finally:
        shutil.rmtree(ctl, ignore_errors=True)
    return by_name


def test_installed(ma, work):
    libdir = "/usr/lib/" + ma
    lib = libdir + "/libcudnnspy.so"
    exe = shutil.which("cudnnspy")
    if not check("command on PATH", exe == "/usr/bin/cudnnspy", "cudnnspy on PATH is %r" % exe):
        return
    p = run([exe, "--version"])
    version = installed_version("cudnnspy")
    check("cudnnspy --version", p.returncode == 0 and p.stdout.strip() == "cudnnspy " + (version or "?"),
          "expected 'cudnnspy %s'" % version, p.stdout, p.stderr)
    missing = [f for f in (lib, libdir + "/cudnnspy/dropin9/libcudnn.so.9", libdir + "/cudnnspy/dropin8/libcudnn.so.8",
                           "/usr/include/cudnnspy.h", libdir + "/pkgconfig/cudnnspy.pc")
               if not os.path.exists(f)]
    check("installed files", not missing, "not on the disk after apt-get install", *missing)

    # The preload library needs libc alone.
    p = run(["readelf", "-d", lib])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", p.stdout)
    extra = [n for n in needed if not re.match(r"^(libc\.so\.6|ld-linux[-\w.]*\.so\.\d|libdl\.so\.2|libpthread\.so\.0)$",
                                               n)]
    check("library needs libc only", p.returncode == 0 and needed and not extra, "NEEDED: %s" % needed, p.stderr)

    # The ldconfig trigger cached the preload library (LD_PRELOAD=libcudnnspy.so finds it), never a drop-in:
    # a drop-in in the cache would put the spy under every program that loads cuDNN.
    p = run(["/sbin/ldconfig", "-p"])
    cached = [line.strip() for line in p.stdout.splitlines() if "cudnnspy" in line]
    # (/lib/<multiarch> on a merged-/usr system: the same file)
    check("ldconfig cache", any(os.path.realpath(line.split("=> ")[-1]) == os.path.realpath(lib) for line in cached)
          and not any("/dropin" in line for line in cached), "ldconfig -p, lines naming cudnnspy", *cached)

    man = shutil.which("man")
    for section, page in (("1", "/usr/share/man/man1/cudnnspy.1.gz"), ("3", "/usr/share/man/man3/cudnnspy.3.gz")):
        if man:
            p = run([man, "-w", section, "cudnnspy"])
            check("man -w %s cudnnspy" % section, p.returncode == 0 and p.stdout.strip() == page,
                  "expected %s" % page, p.stdout, p.stderr)
        else:
            check("man page %s" % section, os.path.exists(page), "%s is not there (and man-db is not installed)" % page)

    # bash-completion looks the completion up by the command's name, in its completions directory.
    completion = "/usr/share/bash-completion/completions/cudnnspy"
    p = run(["bash", "-c", 'source "$1" && complete -p cudnnspy', "bash", completion])
    check("bash completion", p.returncode == 0 and "-F" in p.stdout and p.stdout.split()[-1] == "cudnnspy",
          "complete -p cudnnspy after sourcing %s" % completion, p.stdout, p.stderr)

    pkg = shutil.which("pkg-config")
    if pkg:
        p = run([pkg, "--cflags", "--libs", "cudnnspy"])
        check("pkg-config --cflags --libs", p.returncode == 0 and not any(t.startswith("-l") for t in p.stdout.split()),
              "nothing to link (the API is weak references)", p.stdout, p.stderr)
        want = {"preload": lib, "cudnnspy": "/usr/bin/cudnnspy", "dropin9dir": libdir + "/cudnnspy/dropin9",
                "dropin8dir": libdir + "/cudnnspy/dropin8"}
        got = {v: run([pkg, "--variable=" + v, "cudnnspy"]).stdout.strip() for v in want}
        check("pkg-config variables", got == want, "cudnnspy.pc names other paths",
              *["%s=%s (want %s)" % (v, got[v], want[v]) for v in want if got[v] != want[v]])
    else:
        report("skip", "pkg-config", "pkg-config is not installed")

    # A program built against the installed header, with nothing but the system's paths.
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        report("skip", "installed header", "no C compiler")
    else:
        prog = os.path.join(work, "uses-api")
        p = run([cc, "-std=c99", "-pedantic", "-Wall", "-Werror", "-o", prog,
                 os.path.join(TOP, "tests", "public", "header-c99.c")])
        if check("installed header builds", p.returncode == 0, "cc -std=c99 with <cudnnspy.h>", p.stdout, p.stderr):
            a = run([prog])
            b = run(["cudnnspy", "run", "--", prog], cwd=work)
            check("installed header at work", a.returncode == 0 and "loaded 0" in a.stdout and b.returncode == 0
                  and "loaded 1" in b.stdout, "loaded 0 alone, loaded 1 under cudnnspy run",
                  a.stdout, a.stderr, b.stdout, b.stderr)

    # What the process maps: the installed library, and nothing of this source tree or its build directories.
    p = run(["cudnnspy", "run", "--", "cat", "/proc/self/maps"], cwd=work)
    maps = [line.split()[-1] for line in p.stdout.splitlines() if "/" in line]
    check("cudnnspy run loads the installed library", p.returncode == 0 and lib in maps
          and not any(m.startswith(TOP + "/") for m in maps), "the mapped cudnnspy files",
          *[m for m in maps if "cudnn" in m or m.startswith(TOP + "/")], p.stderr)

    test_demo(work, cc)


def test_demo(work, cc):
    real, inc = real_cudnn()
    if not real or not inc or not cc:
        why = "no real cuDNN found (CUDNN_ROOT, CUDA_HOME, /usr/local/cuda)" if not real else \
            "no cudnn.h beside %s" % real if not inc else "no C compiler"
        report("skip", "demo from the installed files", why)
        return
    src = "/usr/share/doc/cudnnspy/examples/host-calls.c"
    prog = os.path.join(work, "host-calls")
    # The example as a user builds it from the installed copy, against cuDNN's own header.
    p = run([cc, "-Wall", "-I" + inc, "-o", prog, src, "-L" + real, "-lcudnn", "-Wl,-rpath," + real])
    if not check("demo builds from %s" % src, p.returncode == 0, "cc failed", p.stdout, p.stderr):
        return
    plain = run([prog], cwd=work)
    if not check("demo runs without the spy", plain.returncode == 0 and plain.stdout.startswith("version "),
                 "exit %d" % plain.returncode, plain.stdout, plain.stderr):
        return
    real_lib = os.path.realpath(os.path.join(real, "libcudnn.so.9"))
    out = os.path.join(work, "records")
    spied = run(["cudnnspy", "run", "--output", out, "--", prog], cwd=work)
    m = re.search(r"^cudnnspy: preload: cuDNN [0-9.]+ \(\d+\) from (\S+) \[", spied.stderr, re.M)
    check("cudnnspy run -- demo: banner", spied.returncode == 0 and m and os.path.realpath(m.group(1)) == real_lib,
          "a banner naming %s" % real_lib, spied.stderr)
    check("cudnnspy run -- demo: failed call and summary",
          re.search(r"^cudnnspy: cudnnSetTensor4dDescriptor\(.*n=-1.*= CUDNN_STATUS_BAD_PARAM", spied.stderr, re.M)
          and re.search(r"^cudnnspy: summary \(pid \d+\): \d+ calls, [1-9]\d* failed", spied.stderr, re.M),
          "the BAD_PARAM line and the summary", spied.stderr)
    check("cudnnspy run -- demo: same stdout", spied.stdout == plain.stdout, "the program's output changed",
          "without: " + plain.stdout, "with: " + spied.stdout)
    dump = run(["cudnnspy", "dump", out])
    check("cudnnspy dump of the demo's records",
          dump.returncode == 0 and '"event":"failure"' in dump.stdout.replace(" ", ""),
          "a failure event in the JSON Lines", dump.stdout[-2000:], dump.stderr)
    rep = run(["cudnnspy", "report", out])
    check("cudnnspy report of the demo's records", rep.returncode == 0 and "cudnnSetTensor4dDescriptor" in rep.stdout,
          "exit %d" % rep.returncode, rep.stdout[-2000:], rep.stderr)
    dropin = run(["cudnnspy", "run", "--drop-in", "--", prog], cwd=work)
    check("cudnnspy run --drop-in -- demo", dropin.returncode == 0 and dropin.stdout == plain.stdout
          and re.search(r"^cudnnspy: drop-in: cuDNN ", dropin.stderr, re.M), "the installed drop-in answers",
          dropin.stdout, dropin.stderr)
    # The bare name works too: the library is in the multiarch directory, in the loader's cache.
    bare = run([prog], {"LD_PRELOAD": "libcudnnspy.so"}, cwd=work)
    check("LD_PRELOAD=libcudnnspy.so demo", bare.returncode == 0 and bare.stdout == plain.stdout
          and re.search(r"^cudnnspy: preload: cuDNN ", bare.stderr, re.M), "the spy's banner", bare.stderr)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: %s DIR   (the directory with cudnnspy_*.deb: ./dev.sh deb builds it)" % sys.argv[0])
        return 2
    folder = os.path.abspath(sys.argv[1])
    debs = sorted(f for f in glob.glob(os.path.join(folder, "cudnnspy*_*.deb")) if "-dbgsym_" not in f)
    if not debs:
        print("no cudnnspy_*.deb in %s: build them with ./dev.sh deb" % folder)
        return 2
    changes = sorted(glob.glob(os.path.join(folder, "cudnnspy_*.changes")))
    for tool in ("dpkg", "dpkg-deb", "apt-get"):
        if not shutil.which(tool):
            print("%s is not installed: this test needs a Debian system. Skipped" % tool)
            print("Skipped: 1")
            return 77
    if os.geteuid() != 0 and run(["sudo", "-n", "true"]).returncode != 0:
        print("apt-get install needs root: run as root or with password-less sudo. Skipped")
        print("Skipped: 1")
        return 77
    there = [p for p in PACKAGES if installed_version(p)]
    if there:
        print("%s installed already: this test installs and removes its own; remove it first with"
              " apt-get remove --purge %s. Skipped" % (", ".join(there), " ".join(PACKAGES)))
        print("Skipped: 1")
        return 77

    ma = multiarch()
    test_lintian(changes[-1] if changes else None, debs)
    by_name = test_contents(debs, ma)
    if set(by_name) != set(PACKAGES):
        return summary()

    before = watched_names()
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    work = tempfile.mkdtemp(prefix="cudnnspy-deb-test-")
    installed = False
    try:
        p = run(as_root() + ["apt-get", "install", "-y", "-q"] + [by_name[n] for n in PACKAGES], env, timeout=900)
        installed = any(installed_version(n) for n in PACKAGES)
        if check("apt-get install ./cudnnspy_*.deb", p.returncode == 0 and all(installed_version(n) for n in PACKAGES),
                 "exit %d" % p.returncode, p.stdout[-3000:], p.stderr[-3000:]):
            test_installed(ma, work)
        lists = {}
        for n in PACKAGES:
            listed = run(["dpkg-query", "-L", n])
            lists[n] = [os.path.normpath(f) for f in listed.stdout.splitlines()
                        if f.startswith("/") and os.path.normpath(f) != "/"] if listed.returncode == 0 else []
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if installed:
            p = run(as_root() + ["apt-get", "remove", "--purge", "-y", "-q"] + list(PACKAGES), env, timeout=900)
    if not installed:
        return summary()
    gone = not any(installed_version(n) or run(["dpkg-query", "-W", n]).returncode == 0 for n in PACKAGES)
    check("apt-get remove --purge", p.returncode == 0 and gone, "exit %d, the packages are still known to dpkg"
          % p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    # What the packages listed: gone, but for directories that other packages still own (/usr/bin, ...).
    left = []
    for f in sorted({f for l in lists.values() for f in l}):
        if not os.path.lexists(f):
            continue
        if os.path.isdir(f) and not os.path.islink(f) and run(["dpkg-query", "-S", f]).returncode == 0:
            continue
        left.append(f)
    check("nothing of the packages left", lists["cudnnspy"] and not left, "still on the disk", *left)
    after = watched_names()
    check("nothing else left", after <= before, "paths named cudnnspy that were not there before",
          *sorted(after - before))
    p = run(["/sbin/ldconfig", "-p"])
    check("ldconfig cache after removal", "cudnnspy" not in p.stdout, "ldconfig -p still names cudnnspy",
          *[line for line in p.stdout.splitlines() if "cudnnspy" in line])
    return summary()


def summary():
    print()
    print("Ok:                 %d" % results["ok"])
    print("Fail:               %d" % results["fail"])
    print("Skipped:            %d" % results["skip"])
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
