#!/usr/bin/env python3
"""cudnnspy scan --windows, against Windows trees made here from PE32+ DLLs that pewriter.py writes.

usage: test_scan_windows.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip.

The seed's layout (issue 32): cuDNN 8.9.7 for CUDA 11.x copied into CUDA v11.8's bin and unpacked in a
directory on PATH, and conda's cuDNN 8.2.1 in the environment's Library\\bin, with torch installed there.
"""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pewriter  # noqa: E402

E = os.environ
CLI = E.get("CLI_EXE", "")
SUBS8 = ["ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"]
SUBS9 = ["graph", "ops", "cnn", "adv", "engines_precompiled", "engines_runtime_compiled", "heuristic"]
CUDA_BIN = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8\bin"
TOOLS_BIN = r"C:\tools\cudnn-windows-x86_64-8.9.7.29_cuda11-archive\bin"
ENV = r"C:\Users\me\miniconda3\envs\pt"
CONDA_BIN = ENV + r"\Library\bin"

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
    d = os.path.realpath(tempfile.mkdtemp(prefix="cudnnspy-winscan-"))
    atexit.register(shutil.rmtree, d, True)
    return d


def local(root, win):
    """Where a C:\\ path is in the tree at root."""
    return os.path.join(root, *win[3:].split("\\"))


def make_copy(d, version, major=None, subs=None, sub_versions=None, upper=False):
    major = major or version[0]
    subs = (SUBS9 if major >= 9 else SUBS8) if subs is None else subs
    sub_versions = sub_versions or {}
    os.makedirs(d, exist_ok=True)
    names = [("cudnn64_%d.dll" % major, version)]
    names += [("cudnn_%s64_%d.dll" % (s, major), sub_versions.get(s, version)) for s in subs]
    for name, v in names:
        pewriter.make_dll(os.path.join(d, name.upper() if upper else name), name,
                          ["cudnnCreate", "cudnnGetVersion", "cudnnDestroy"] if name.startswith("cudnn64") else
                          ["cudnnOpsInferVersionCheck"], v, "%d.%d.%d" % v[:3],
                          "NVIDIA CUDA Deep Neural Network library")


def seed_tree():
    """The seed's machine as drive C:."""
    root = tmpdir()
    make_copy(local(root, CUDA_BIN), (8, 9, 7, 29))
    make_copy(local(root, TOOLS_BIN), (8, 9, 7, 29))
    make_copy(local(root, CONDA_BIN), (8, 2, 1, 32))
    torch_lib = local(root, ENV + r"\Lib\site-packages\torch\lib")
    os.makedirs(torch_lib)
    pewriter.make_dll(os.path.join(torch_lib, "torch_cuda.dll"), "torch_cuda.dll", ["THCudaInit"], (0, 0, 0, 0),
                      imports=["c10_cuda.dll", "cudnn64_8.dll", "cublas64_11.dll", "KERNEL32.dll"])
    open(local(root, ENV + r"\python.exe"), "wb").close()
    os.makedirs(local(root, r"C:\Windows\System32"))
    os.makedirs(local(root, r"C:\app"))
    pewriter.make_dll(local(root, r"C:\app\train.exe"), "train.exe", [], (1, 0, 0, 0),
                      imports=["KERNEL32.dll", "cudnn64_8.dll"], exe=True)
    return root


def run_scan(args, timeout=60, cwd=None):
    p = subprocess.run([CLI, "scan"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       cwd=cwd)
    print("$ cudnnspy scan %s -> %d" % (" ".join(args), p.returncode))
    return p


def scan_json(args):
    p = run_scan(["--json"] + list(args))
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stderr.decode(errors="replace"))
    try:
        return json.loads(p.stdout.decode("utf-8"))
    except ValueError as e:
        raise Failed("not one JSON document: %s" % e, p.stdout[:3000])


def scan_human(args):
    p = run_scan(args)
    check(p.returncode == 0, "exit 0, not %d" % p.returncode, p.stderr.decode(errors="replace"))
    return p.stdout.decode("utf-8", errors="replace")


def findings(doc, fid):
    return [f for f in doc["findings"] if f["id"] == fid]


def copy_at(doc, win):
    got = [c for c in doc["copies"] if (c["windows_path"] or "").lower() == win.lower()]
    check(len(got) == 1, "one copy at %s" % win, json.dumps(doc["copies"], indent=1)[:3000])
    return got[0]


def load(doc, major=8):
    got = [l for l in doc["search"]["loads"] if l["major"] == major]
    check(len(got) == 1, "one load of cuDNN %d" % major, json.dumps(doc["search"], indent=1)[:3000])
    return got[0]


@scenario
def seed():
    """Three copies of two versions: each read whole, and the one finding that names them, with its fix."""
    root = seed_tree()
    doc = scan_json(["--windows", "C:=" + root])
    check(doc["mode"] == "windows" and len(doc["copies"]) == 3, "three copies", json.dumps(doc, indent=1)[:3000])
    cuda, tools, conda = copy_at(doc, CUDA_BIN), copy_at(doc, TOOLS_BIN), copy_at(doc, CONDA_BIN)
    for c, v in ((cuda, "8.9.7.29"), (tools, "8.9.7.29"), (conda, "8.2.1.32")):
        check(c["major"] == 8 and c["version"] == v and c["version_from"] == "FileVersion" and c["complete"],
              "%s: 8, %s, complete" % (c["windows_path"], v), c)
        check([s["name"] for s in c["sublibraries"]] == SUBS8 and all(s["version"] == v for s in c["sublibraries"]),
              "its six sub-libraries, of its version", c["sublibraries"])
        main = [f for f in c["files"] if f["name"] == "cudnn64_8.dll"][0]
        check(main["machine"] == "x64" and main["exports"] == ["cudnnCreate", "cudnnDestroy", "cudnnGetVersion"] and
              main["export_name"] == "cudnn64_8.dll" and main["product_version"] == v[:5] and
              main["description"] == "NVIDIA CUDA Deep Neural Network library", "the main DLL's PE data", main)
    check(cuda["kind"] == "CUDA toolkit" and conda["kind"] == "conda" and tools["kind"] is None, "the kinds")
    f = findings(doc, "windows-copies-conflict")
    check(len(f) == 1 and f[0]["severity"] == "error", "one windows-copies-conflict", doc["findings"])
    m = f[0]["message"]
    check(m.startswith("3 cuDNN 8 copies of 2 versions: ") and CUDA_BIN in m and TOOLS_BIN in m and CONDA_BIN in m and
          "8.2.1.32" in m and "8.9.7.29" in m, "it names the three copies and their versions", m)
    check(f[0]["fix"] and "os.add_dll_directory" in f[0]["fix"], "with its fix", f[0])
    check(not findings(doc, "multiple-copies") and not findings(doc, "incomplete-copy"), "nothing else", doc["findings"])
    # With the PATH, the finding says where each copy is on it.
    doc = scan_json(["--windows", "C:=" + root, "--program", r"C:\app\train.exe", "--path", CUDA_BIN + ";" + TOOLS_BIN])
    m = findings(doc, "windows-copies-conflict")[0]["message"]
    check("(CUDA toolkit, PATH entry 1, 8.9.7.29)" in m and "(PATH entry 2, 8.9.7.29)" in m and "(conda, 8.2.1.32)" in m,
          "PATH entries in the finding", m)
    out = scan_human(["--windows", "C:=" + root])
    check("windows-copies-conflict" in out and "fix: " in out and "  1  8      8.9.7.29" in out, "the table", out)


@scenario
def for_path():
    """A program gets the first copy on its PATH, whole; the order decides."""
    root = seed_tree()
    for path, want in ((TOOLS_BIN + ";" + CUDA_BIN, TOOLS_BIN), (CUDA_BIN + ";" + TOOLS_BIN, CUDA_BIN),
                       (r"C:\nowhere;" + CONDA_BIN + ";" + CUDA_BIN, CONDA_BIN)):
        doc = scan_json(["--windows", "C:=" + root, "--program", r"C:\app\train.exe", "--path", path])
        l = load(doc)
        c = copy_at(doc, want)
        check(l["main"]["copy"] == c["id"] and l["main"]["rule"] == "PATH" and not l["mixed"] and
              l["main"]["windows_path"].lower() == (want + r"\cudnn64_8.dll").lower(),
              "PATH %s: cudnn64_8.dll from %s" % (path, want), l["main"])
        check(all(s["copy"] == c["id"] and s["rule"] == "PATH" for s in l["sublibraries"]) and
              len(l["sublibraries"]) == 6, "and its six sub-libraries from there", l["sublibraries"])
        rules = [s["rule"] for s in l["main"]["steps"]]
        check(rules[:4] == ["application directory", "system directory", "16-bit system directory",
                            "Windows directory"], "the documented order before PATH", rules)
        check(not findings(doc, "windows-mixed-load"), "no mixed load", doc["findings"])
        others = {o["copy"]: o["shadowed_by_rule"] for o in l["others"]}
        check(len(others) == 2 and c["id"] not in others, "the two other copies", l["others"])
        for o in doc["copies"]:
            if o["id"] in others:
                on_path = (o["windows_path"] or "").lower() in path.lower().split(";")
                check(others[o["id"]] == ("PATH" if on_path else None), "%s: %s" % (
                    o["windows_path"], "shadowed, on PATH" if on_path else "not on this search"), l["others"])
        check(doc["search"]["imports"] == ["KERNEL32.dll", "cudnn64_8.dll"] and
              doc["search"]["imports_from"] == local(root, r"C:\app\train.exe"), "the program's imports", doc["search"])
    # A program that imports cudnn64_9.dll, on a machine with only cuDNN 8: that is what is searched, and not found.
    pewriter.make_dll(local(root, r"C:\app\train9.exe"), "train9.exe", [], (1, 0, 0, 0), imports=["cudnn64_9.dll"],
                      exe=True)
    doc = scan_json(["--windows", "C:=" + root, "--program", r"C:\app\train9.exe", "--path", CUDA_BIN])
    check([l["major"] for l in doc["search"]["loads"]] == [9] and load(doc, 9)["main"]["path"] is None,
          "cudnn64_9.dll searched, found nowhere", doc["search"])
    out = scan_human(["--windows", "C:=" + root, "--program", r"C:\app\train9.exe", "--path", CUDA_BIN])
    check("imports: cudnn64_9.dll, from the import table of C:\\app\\train9.exe" in out and
          "cudnn64_9.dll -> not found" in out, "the table says so", out)
    # Paths on this machine, relative ones too, are named as Windows names them when they are on a drive.
    p = run_scan(["--json", "--windows", "C:=" + root, "--program", "app/train.exe", "--path",
                  os.path.relpath(local(root, TOOLS_BIN), root)], cwd=root)
    l = load(json.loads(p.stdout.decode()))
    check(l["main"]["windows_path"] == TOOLS_BIN + r"\cudnn64_8.dll" and l["main"]["rule"] == "PATH",
          "relative local paths", l["main"])
    # The application's directory comes first; the current directory before PATH.
    make_copy(local(root, r"C:\app"), (8, 9, 7, 29))
    doc = scan_json(["--windows", "C:=" + root, "--program", r"C:\app\train.exe", "--path", CUDA_BIN])
    check(load(doc)["main"]["rule"] == "application directory", "the application's directory first", load(doc))
    doc = scan_json(["--windows", "C:=" + root, "--program", r"C:\other\x.exe", "--cwd", CONDA_BIN, "--path", CUDA_BIN])
    l = load(doc)
    check(l["main"]["rule"] == "current directory" and l["main"]["version"] == "8.2.1.32", "--cwd before PATH", l)
    check(l["main"]["steps"][0]["outcome"] == "no such directory", "a directory not there", l["main"])
    doc = scan_json(["--windows", root, "--program", r"D:\x.exe", "--path", os.path.dirname(local(root, CUDA_BIN + r"\x"))])
    l = load(doc)
    check(l["main"]["steps"][0]["outcome"].startswith("not in the scanned trees (drive D: is not one of the trees")
          and l["main"]["rule"] == "PATH" and l["main"]["path"].startswith(root), "a local path on --path; drive D:", l)
    # PATH as the registry may hold it: %SystemRoot% expanded, quotes taken off, empty entries skipped.
    make_copy(local(root, r"C:\Windows\System32"), (8, 1, 0, 77))
    doc = scan_json(["--windows", "C:=" + root, "--program", r"C:\other\x.exe",
                     "--path", ';"%s";;%%SystemRoot%%\System32' % CUDA_BIN])
    l = load(doc)
    check(l["main"]["rule"] == "system directory" and l["main"]["version"] == "8.1.0.77", "System32 before PATH", l)
    check([s["dir"] for s in l["main"]["steps"]] == [r"C:\other", r"C:\Windows\System32"], "found there", l["main"])
    f = findings(doc, "windows-copies-conflict")[0]["message"]
    check("(CUDA toolkit, PATH entry 1, 8.9.7.29)" in f and "C:\\Windows\\System32 (PATH entry 2, 8.1.0.77)" in f,
          "PATH entries counted as Windows has them", f)
    shutil.rmtree(local(root, r"C:\Windows\System32"))
    os.makedirs(local(root, r"C:\Windows\System32"))
    out = scan_human(["--windows", "C:=" + root, "--program", r"C:\app\train.exe", "--path", CUDA_BIN])
    check("=> one copy, whole" in out and "Limits of this answer:" in out and "SafeDllSearchMode" in out and
          "side-by-side manifests" in out, "the human answer names its limits", out)


@scenario
def mixed_load():
    """The seed's failure: a Python 3.8+ process with torch takes conda's cudnn64_8.dll through
    os.add_dll_directory, and the sub-libraries by name from PATH: CUDA's 8.9.7."""
    root = seed_tree()
    py = ENV + r"\python.exe"
    path = ENV + ";" + CUDA_BIN + ";" + TOOLS_BIN + r";C:\Windows\System32"
    doc = scan_json(["--windows", "C:=" + root, "--python", py, "--path", path])
    l = load(doc)
    conda, cuda = copy_at(doc, CONDA_BIN), copy_at(doc, CUDA_BIN)
    check(doc["search"]["imports_from"].endswith("/torch/lib/torch_cuda.dll") and "cudnn64_8.dll" in
          doc["search"]["imports"], "torch_cuda.dll's imports read", doc["search"])
    check(l["main"]["copy"] == conda["id"] and l["main"]["version"] == "8.2.1.32" and
          l["main"]["rule"] == "os.add_dll_directory (conda)", "cudnn64_8.dll from conda, not by PATH", l["main"])
    steps = [s["rule"] for s in l["main"]["steps"]]
    check("PATH" not in steps and steps[0] == "directory of torch_cuda.dll", "PATH is not searched for it", steps)
    check(all(s["copy"] == cuda["id"] and s["version"] == "8.9.7.29" for s in l["sublibraries"]) and l["mixed"],
          "its sub-libraries from CUDA's bin, a mixed set", l["sublibraries"])
    f = findings(doc, "windows-mixed-load")
    check(len(f) == 1 and f[0]["severity"] == "error" and "8.2.1.32" in f[0]["message"] and
          "but all 6 sub-libraries from %s [copy %d] (8.9.7.29)" % (CUDA_BIN, cuda["id"]) in f[0]["message"] and
          len(f[0]["paths"]) == 7, "windows-mixed-load names both", f)
    check(f[0]["fix"], "with a fix")
    out = scan_human(["--windows", "C:=" + root, "--python", py, "--path", path])
    check("=> a mixed set" in out and "windows-mixed-load" in out, "the table says so", out)
    check(re.search(r"others: \[copy %d\] .*CUDA.v11.8.bin \(8.9.7.29\): not on this search" % cuda["id"], out),
          "CUDA's copy is not on the extension's search", out)
    # conda's Library\bin first on PATH (as conda activate puts it): one copy, whole.
    doc = scan_json(["--windows", "C:=" + root, "--python", py, "--path", CONDA_BIN + ";" + path])
    check(not load(doc)["mixed"] and not findings(doc, "windows-mixed-load"), "Library\\bin first: not mixed", load(doc))
    # A torch\lib with its own cuDNN: torch loads it by path first; PATH no longer matters.
    make_copy(local(root, ENV + r"\Lib\site-packages\torch\lib"), (8, 7, 0, 84))
    doc = scan_json(["--windows", "C:=" + root, "--python", py, "--path", path])
    l = load(doc)
    check(l["main"]["version"] == "8.7.0.84" and l["main"]["rule"] == "torch\\lib, loaded by path" and not l["mixed"]
          and all(s["version"] == "8.7.0.84" for s in l["sublibraries"]), "torch\\lib wins, whole", l)
    # A venv (python.exe in Scripts\) with pip's torch, which ships its cuDNN in torch\lib.
    venv = r"C:\venvs\pt"
    os.makedirs(local(root, venv + r"\Scripts"))
    open(local(root, venv + r"\Scripts\python.exe"), "wb").close()
    make_copy(local(root, venv + r"\Lib\site-packages\torch\lib"), (9, 1, 0, 70))
    doc = scan_json(["--windows", "C:=" + root, "--python", venv + r"\Scripts\python.exe", "--path", path])
    l = load(doc, 9)
    check(l["main"]["rule"] == "torch\\lib, loaded by path" and not l["mixed"] and l["main"]["version"] == "9.1.0.70",
          "a venv's torch\\lib", l)
    # A venv without conda, a torch without cuDNN, and os.add_dll_directory(TOOLS_BIN) by the program: cudnn64_8.dll
    # from there, the sub-libraries by PATH from CUDA's copy, of the same version: split, not mixed.
    venv2 = r"C:\venvs\plain"
    os.makedirs(local(root, venv2 + r"\Scripts"))
    open(local(root, venv2 + r"\Scripts\python.exe"), "wb").close()
    os.makedirs(local(root, venv2 + r"\Lib\site-packages\torch\lib"))
    pewriter.make_dll(local(root, venv2 + r"\Lib\site-packages\torch\lib\torch_cuda.dll"), "torch_cuda.dll", ["x"],
                      (0, 0, 0, 0), imports=["cudnn64_8.dll"])
    doc = scan_json(["--windows", "C:=" + root, "--python", venv2 + r"\Scripts\python.exe", "--dll-dir", TOOLS_BIN,
                     "--path", path])
    l = load(doc)
    check(l["main"]["rule"] == "os.add_dll_directory" and l["main"]["copy"] == copy_at(doc, TOOLS_BIN)["id"] and
          all(s["copy"] == cuda["id"] for s in l["sublibraries"]) and l["split"] and not l["mixed"] and
          not findings(doc, "windows-mixed-load"), "--dll-dir; one version from two copies is split, not mixed", l)
    # A program whose directory holds one stray sub-library of another version.
    root = seed_tree()
    pewriter.make_dll(local(root, r"C:\app\cudnn_cnn_infer64_8.dll"), "cudnn_cnn_infer64_8.dll", ["x"], (8, 2, 1, 32))
    doc = scan_json(["--windows", "C:=" + root, "--program", r"C:\app\train.exe", "--path", CUDA_BIN])
    l = load(doc)
    stray = [s for s in l["sublibraries"] if s["name"] == "cudnn_cnn_infer64_8.dll"][0]
    check(l["mixed"] and stray["rule"] == "application directory" and stray["version"] == "8.2.1.32" and
          l["main"]["version"] == "8.9.7.29", "a stray sub-library in the application's directory", l)
    f = findings(doc, "windows-mixed-load")
    check(f and "but cudnn_cnn_infer64_8.dll from C:\\app [copy 3] (8.2.1.32)" in f[0]["message"] and
          findings(doc, "no-dispatcher"), "mixed load and no-dispatcher", doc["findings"])
    fix = findings(doc, "no-dispatcher")[0]["fix"]
    check("PATH" in fix and "LD_LIBRARY_PATH" not in fix and "application's directory" in fix,
          "the fix said for Windows (shim/common/rules.c's Windows fixes)", fix)


@scenario
def case_insensitive():
    """Names in any case, in the tree and in the paths given."""
    root = tmpdir()
    make_copy(os.path.join(root, "PROGRAM FILES", "nvidia gpu computing toolkit", "CUDA", "V11.8", "BIN"), (8, 9, 7, 29),
              upper=True)
    doc = scan_json(["--windows", "c:=" + root, "--program", r"C:\app\x.exe", "--path", CUDA_BIN])
    check(len(doc["copies"]) == 1, "one copy", doc["copies"])
    c = doc["copies"][0]
    check(c["main"] == "CUDNN64_8.DLL" and c["complete"] and c["version"] == "8.9.7.29" and c["kind"] == "CUDA toolkit",
          "CUDNN64_8.DLL and its sub-libraries", c)
    l = load(doc)
    check(l["main"]["copy"] == c["id"] and not l["mixed"], "found through PATH in another case", l)
    check(not findings(doc, "stale-files") and not findings(doc, "incomplete-copy"), "no finding", doc["findings"])


@scenario
def v9():
    """A cuDNN 9 copy: its seven sub-libraries; one missing, one of another version."""
    root = tmpdir()
    d = os.path.join(root, "cudnn9", "bin")
    make_copy(d, (9, 1, 0, 70))
    doc = scan_json(["--windows", root])
    c = doc["copies"][0]
    check(len(doc["copies"]) == 1 and c["major"] == 9 and c["version"] == "9.1.0.70" and c["complete"] and
          [s["name"] for s in c["sublibraries"]] == SUBS9 and c["windows_path"] is None, "9.1.0.70, 7 of 7", c)
    check(doc["findings"] == [], "no finding", doc["findings"])
    os.unlink(os.path.join(d, "cudnn_heuristic64_9.dll"))
    pewriter.make_dll(os.path.join(d, "cudnn_ops64_9.dll"), "cudnn_ops64_9.dll", ["x"], (9, 2, 0, 82))
    pewriter.make_dll(os.path.join(d, "cudnn_extra64_9.dll"), "cudnn_extra64_9.dll", ["x"], (9, 1, 0, 70))
    doc = scan_json(["--windows", root])
    f = findings(doc, "incomplete-copy")
    check(len(f) == 1 and "without 1 of its 7 sub-libraries: cudnn_heuristic64_9.dll" in f[0]["message"],
          "incomplete-copy", doc["findings"])
    f = findings(doc, "sublib-version-mismatch")
    check(len(f) == 1 and "cudnn64_9.dll is 9.1.0.70 but its sub-libraries are cudnn_ops64_9.dll 9.2.0.82" in
          f[0]["message"], "sublib-version-mismatch", doc["findings"])
    check(findings(doc, "stale-files") and "cudnn_extra64_9.dll" in findings(doc, "stale-files")[0]["message"],
          "a DLL cuDNN 9 does not load", doc["findings"])
    # A cuDNN 8 file renamed to a cuDNN 9 name.
    d2 = os.path.join(root, "renamed")
    os.makedirs(d2)
    pewriter.make_dll(os.path.join(d2, "cudnn64_9.dll"), "cudnn64_8.dll", ["x"], (8, 9, 7, 29))
    doc = scan_json(["--windows", d2])
    f = findings(doc, "soname-mismatch")
    check(len(f) == 1 and "has FileVersion 8.9.7.29: a cuDNN 8 file under a cuDNN 9 name" in f[0]["message"],
          "soname-mismatch for a renamed DLL", doc["findings"])
    shutil.rmtree(d2)
    # Two majors in one directory, and a main DLL without a version resource.
    pewriter.make_dll(os.path.join(d, "cudnn64_8.dll"), "cudnn64_8.dll", ["x"], with_version=False)
    doc = scan_json(["--windows", root])
    check(findings(doc, "mixed-majors"), "mixed-majors", doc["findings"])
    f = findings(doc, "version-unknown")
    check(f and "only its major (8) is known" in f[0]["message"], "version-unknown, the major from the name", f)
    c8 = [c for c in doc["copies"] if c["major"] == 8][0]
    check(c8["version"] is None and c8["version_from"] == "file name", "major 8 from the file name", c8)


@scenario
def hostile():
    """Damaged DLLs: a clear message each, exit 0, quickly, and the scan goes on."""
    root = tmpdir()
    want = {"truncated": "optional header cut short", "bogus-export-rva": "export directory outside the file",
            "resource-loop": "the resource tree loops", "huge-names": "export directory claims 268435455 names",
            "no-pe": "no PE signature", "huge-resource-count": "claims 65535 entries",
            "bogus-import-rva": "import directory outside the file (entry 1 at RVA 0x7fff0000)"}
    for dmg in pewriter.DAMAGES:
        pewriter.make_dll(os.path.join(root, dmg, "cudnn64_8.dll"), "cudnn64_8.dll", ["cudnnCreate"], damage=dmg) \
            if os.makedirs(os.path.join(root, dmg)) is None else None
    os.makedirs(os.path.join(root, "dir", "cudnn64_9.dll"))
    with open(os.path.join(root, "dir", "cudnn_ops64_9.dll"), "wb") as f:
        f.write(b"MZ")
    os.symlink("cudnn_loop64_9.dll", os.path.join(root, "dir", "cudnn_loop64_9.dll"))
    os.symlink("..", os.path.join(root, "dir", "up"))
    p = run_scan(["--json", "--windows", root], timeout=20)
    check(p.returncode == 0, "exit 0", p.stderr)
    doc = json.loads(p.stdout.decode())
    msgs = "\n".join(f["message"] for f in doc["findings"])
    for dmg, words in want.items():
        check(re.search(re.escape(os.path.join(root, dmg, "cudnn64_8.dll")) + r".*" + re.escape(words), msgs),
              "%s: '%s'" % (dmg, words), msgs)
    check("dir/cudnn64_9.dll is not a usable DLL (a directory)" in msgs and "dir/cudnn_ops64_9.dll is not a usable DLL"
          in msgs and "cudnn_loop64_9.dll is a dangling link or a loop" in msgs, "a directory, a stub, a link loop", msgs)
    check(all(f["id"] in ("not-a-library", "no-sublibraries", "no-dispatcher", "dangling-link",
                          "windows-copies-conflict", "multiple-copies", "incomplete-copy", "version-unknown", "stale-files")
               for f in doc["findings"]),
          "only those findings", msgs)
    # A DLL that cannot be opened (not for root, who opens everything).
    if os.geteuid() != 0:
        os.chmod(os.path.join(root, "no-pe", "cudnn64_8.dll"), 0)
        doc = scan_json(["--windows", root])
        check([f for f in findings(doc, "unreadable") if "cannot be opened" in f["message"]], "unreadable",
              doc["findings"])
        os.chmod(os.path.join(root, "no-pe", "cudnn64_8.dll"), 0o644)
    # The search over the damaged ones: the load fails there and says why.
    p = run_scan(["--windows", "C:=" + root, "--program", r"C:\x.exe", "--path", r"C:\no-pe"], timeout=20)
    out = p.stdout.decode()
    check(p.returncode == 0 and "cudnn64_8.dll -> fails: " in out and "no PE signature" in out, "the load fails", out)


@scenario
def usage():
    for args, words in ((["--program", r"C:\a.exe"], "need --windows"), (["--windows", "/nonexistent"], "No such file"),
                        (["--windows", "C:="], "needs a directory"), (["--windows", "/", "--root", "/"], "--root"),
                        (["--windows", "/", "--program", "a", "--python", "b"], "given once"),
                        (["--windows", "/", "--path"], "--path needs"),
                        (["--windows", "/", "--dll-dir", r"C:\x"], "--dll-dir needs --python")):
        p = run_scan(args)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 2 and err.startswith("cudnnspy: ") and words in err and p.stdout == b"",
              "%s: exit 2 and '%s'" % (args, words), p.returncode, err)
    p = run_scan(["--help"])
    check(b"--windows DIR" in p.stdout and b"--python PYTHON_EXE" in p.stdout, "--help", p.stdout)


@scenario
def conflicts_doc():
    """Every id scan-win-findings.c reports has its section in docs/conflicts.md, a fix in rules.c and a test here."""
    src = open(E["SCAN_WIN_C"]).read()
    ids = set(re.findall(r'add\(w, "([a-z-]+)"', src))
    check(len(ids) >= 10, "the ids in scan-win-findings.c", ids)
    doc = open(E["CONFLICTS_MD"]).read()
    rules = open(E["RULES_C"]).read()
    me = open(__file__).read()
    for i in ids:
        check("### `%s`" % i in doc, "docs/conflicts.md has %s" % i)
        check('{ "%s",' % i in rules, "shim/common/rules.c has a fix for %s" % i)
        check('"%s"' % i in me, "a scenario asserts %s" % i)


@scenario
def docs():
    """docs/scan.md's output for the seed's layout is what the scan prints today (the tree at /tmp/winc there)."""
    text = open(E["SCAN_MD"]).read()
    m = re.search(r"^\$ cudnnspy scan --windows C:=/tmp/winc (--python '([^']*)') \\\n    --path '([^']*)'\n(.*?)\n```",
                  text, re.M | re.S)
    check(m, "docs/scan.md shows the scan of the seed's layout")
    root = seed_tree()
    out = scan_human(["--windows", "C:=" + root, "--python", m.group(2), "--path", m.group(3)])
    out = out.replace(root, "/tmp/winc").rstrip("\n")
    check(out == m.group(4), "docs/scan.md's output is today's; run the command over the seed's tree and paste it",
          "\n".join(l for l in __import__("difflib").unified_diff(m.group(4).split("\n"), out.split("\n"), lineterm="")))


@scenario
def wine_dlls():
    """Oracles we did not write, over real PE files we did not make: Wine's own Windows DLLs. Each read as a
    cuDNN DLL (a link named cudnn64_9.dll) must give the FILEVERSION that windres decompiles from it and the
    export names objdump -p lists; as --program, the imported DLLs objdump -p lists."""
    windres, objdump = shutil.which("x86_64-w64-mingw32-windres"), shutil.which("x86_64-w64-mingw32-objdump")
    dirs = [d for d in (E.get("WINE_PE_DIR"), "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows",
                        "/usr/lib/wine/x86_64-windows", "/usr/lib64/wine/x86_64-windows") if d and os.path.isdir(d)]
    if not windres or not objdump or not dirs:
        raise Skip("needs x86_64-w64-mingw32-windres, -objdump and Wine's x86_64-windows DLLs")
    src = dirs[0]
    dlls = sorted(f for f in os.listdir(src) if f.endswith(".dll"))
    check(len(dlls) >= 50, "Wine's DLLs in %s" % src, len(dlls))
    root = tmpdir()
    where = {}
    for i, f in enumerate(dlls):
        d = os.path.join(root, "%04d" % i)
        os.makedirs(d)
        os.symlink(os.path.join(src, f), os.path.join(d, "cudnn64_9.dll"))
        where[d] = os.path.join(src, f)
    doc = scan_json(["--windows", root])
    check(len(doc["copies"]) == len(dlls), "one copy per DLL", len(doc["copies"]))
    versions = exports = 0
    for c in doc["copies"]:
        path, got = where[c["directory"]], c["files"][0]
        rc = subprocess.run([windres, "-i", path, "-O", "rc"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            universal_newlines=True).stdout
        m = re.search(r"FILEVERSION (\d+), (\d+), (\d+), (\d+)", rc)
        want = ".".join(m.groups()) if m else None
        check(got["pe"] == "ok" and got["problem"] is None and got["machine"] == "x64", "%s: read whole" % path, got)
        check(got["file_version"] == want, "%s: FileVersion %s, windres says %s" % (path, got["file_version"], want))
        listed = objdump_exports(objdump, path) if "[Ordinal/Name Pointer] Table" in subprocess.run(
            [objdump, "-p", path], stdout=subprocess.PIPE, universal_newlines=True).stdout else []
        check(got["exports"] == listed, "%s: the exports objdump -p lists" % path, got["exports"][:20], listed[:20])
        versions += want is not None
        exports += len(listed)
    print("%d DLLs, %d with a version resource, %d export names: all agree" % (len(dlls), versions, exports))
    check(versions >= 20, "enough of them carry a version resource", versions)
    for f in dlls[::25]:
        path = os.path.join(src, f)
        doc = scan_json(["--windows", root + "/0000", "--program", path])
        od = subprocess.run([objdump, "-p", path], stdout=subprocess.PIPE, universal_newlines=True).stdout
        check(doc["search"]["imports"] == re.findall(r"^\s*DLL Name: (\S+)$", od, re.M),
              "%s: the imports objdump -p lists" % path, doc["search"]["imports"])

def objdump_exports(objdump, dll):
    p = subprocess.run([objdump, "-p", dll], stdout=subprocess.PIPE, universal_newlines=True)
    text = p.stdout.split("[Ordinal/Name Pointer] Table", 1)
    check(p.returncode == 0 and len(text) == 2, "objdump -p lists the exports", p.stdout[-2000:])
    return re.findall(r"^\s*\[\s*\d+\] (\S+)$", text[1].split("\n\n")[0], re.M)


@scenario
def mingw():
    """An oracle not written here: a real DLL from mingw-w64 with a VERSIONINFO resource (windres)."""
    cc, windres = shutil.which("x86_64-w64-mingw32-gcc"), shutil.which("x86_64-w64-mingw32-windres")
    if not cc or not windres:
        raise Skip("no x86_64-w64-mingw32-gcc and -windres")
    d = tmpdir()
    with open(os.path.join(d, "c.c"), "w") as f:
        f.write("__declspec(dllexport) int cudnnCreate(void **h) { *h = 0; return 0; }\n"
                "__declspec(dllexport) unsigned long long cudnnGetVersion(void) { return 8907; }\n"
                "__declspec(dllexport) const char *cudnnGetErrorString(int s) { return s ? \"x\" : \"\"; }\n")
    with open(os.path.join(d, "v.rc"), "w") as f:
        f.write('1 VERSIONINFO\nFILEVERSION 8,9,7,29\nPRODUCTVERSION 8,9,7,29\nBEGIN\n'
                ' BLOCK "StringFileInfo"\n BEGIN\n  BLOCK "040904b0"\n  BEGIN\n'
                '   VALUE "FileDescription", "NVIDIA CUDA Deep Neural Network library"\n'
                '   VALUE "FileVersion", "8.9.7.29"\n   VALUE "ProductVersion", "8.9.7"\n  END\n END\n'
                ' BLOCK "VarFileInfo"\n BEGIN\n  VALUE "Translation", 0x409, 1200\n END\nEND\n')
    bindir = os.path.join(d, "bin")
    os.makedirs(bindir)
    dll = os.path.join(bindir, "cudnn64_8.dll")
    for argv in ([windres, os.path.join(d, "v.rc"), "-O", "coff", "-o", os.path.join(d, "v.o")],
                 [cc, "-shared", "-o", dll, os.path.join(d, "c.c"), os.path.join(d, "v.o")]):
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        check(p.returncode == 0, "%s builds" % argv[0], p.stdout)
    doc = scan_json(["--windows", d])
    main = [f for f in doc["copies"][0]["files"] if f["name"] == "cudnn64_8.dll"][0]
    check(main["file_version"] == "8.9.7.29" and main["product_version"] == "8.9.7" and main["machine"] == "x64" and
          main["description"] == "NVIDIA CUDA Deep Neural Network library", "the version windres wrote", main)
    check({"cudnnCreate", "cudnnGetVersion", "cudnnGetErrorString"} <= set(main["exports"]), "the exports", main)
    # A program linked against it: its imports, as the scan reads them, are what objdump says.
    with open(os.path.join(d, "app.c"), "w") as f:
        f.write("int cudnnCreate(void **h);\nint main(void) { void *h; return cudnnCreate(&h); }\n")
    exe = os.path.join(bindir, "app.exe")
    p = subprocess.run([cc, "-o", exe, os.path.join(d, "app.c"), dll], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    check(p.returncode == 0, "the program links", p.stdout)
    doc = scan_json(["--windows", d, "--program", exe])
    check("cudnn64_8.dll" in doc["search"]["imports"] and [l["major"] for l in doc["search"]["loads"]] == [8] and
          load(doc)["main"]["rule"] == "application directory", "the program imports cudnn64_8.dll", doc["search"])
    objdump = shutil.which("x86_64-w64-mingw32-objdump")
    if objdump:
        check(main["exports"] == objdump_exports(objdump, dll), "the exports objdump -p lists", main["exports"])
        p = subprocess.run([objdump, "-p", exe], stdout=subprocess.PIPE, universal_newlines=True)
        listed = re.findall(r"^\s*DLL Name: (\S+)$", p.stdout, re.M)
        check(listed and doc["search"]["imports"] == listed, "the imports objdump -p lists", listed,
              doc["search"]["imports"])


def mingw_tools():
    cc, windres = shutil.which("x86_64-w64-mingw32-gcc"), shutil.which("x86_64-w64-mingw32-windres")
    if not cc or not windres:
        raise Skip("no x86_64-w64-mingw32-gcc and -windres")
    return cc, windres


def build_versioned_dll(cc, windres, d, out, version):
    """A real DLL (mingw-w64) with a VERSIONINFO of that version."""
    rc = os.path.join(d, "v%s.rc" % "_".join(map(str, version)))
    with open(rc, "w") as f:
        f.write('1 VERSIONINFO\nFILEVERSION %d,%d,%d,%d\nBEGIN\n BLOCK "StringFileInfo"\n BEGIN\n'
                '  BLOCK "040904b0"\n  BEGIN\n   VALUE "ProductVersion", "%d.%d.%d"\n  END\n END\nEND\n'
                % (version + version[:3]))
    src = os.path.join(d, "dll.c")
    with open(src, "w") as f:
        f.write("__declspec(dllexport) int cudnnSpyTestDll(void) { return 1; }\n")
    for argv in ([windres, rc, "-O", "coff", "-o", rc + ".o"], [cc, "-shared", "-o", out, src, rc + ".o"]):
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        check(p.returncode == 0, "%s builds" % argv[0], p.stdout)


@scenario
def wine():
    """An oracle for the search order: Wine's loader (not Windows': Wine implements the same documented order)
    loads each name with LoadLibraryA from a program, with a PATH, and says which file it got."""
    cc, windres = mingw_tools()
    wine_exe = shutil.which("wine")
    if not wine_exe:
        raise Skip("no wine")
    root = tmpdir()
    build = os.path.join(root, "build")
    os.makedirs(build)
    new, old = os.path.join(build, "new.dll"), os.path.join(build, "old.dll")
    build_versioned_dll(cc, windres, build, new, (8, 9, 7, 29))
    build_versioned_dll(cc, windres, build, old, (8, 2, 1, 32))
    tree = os.path.join(root, "tree")
    a, b, app, cwd = (os.path.join(tree, n) for n in ("a", "b", "app", "cwd"))
    for n in (a, b, app, cwd):
        os.makedirs(n)
    names = ["cudnn64_8.dll"] + ["cudnn_%s64_8.dll" % s for s in SUBS8]
    # a: the main DLL and three sub-libraries of 8.9.7; b: a whole 8.2.1; the program's directory and the
    # current directory: one stray each.
    for n in names[:4]:
        shutil.copy(new, os.path.join(a, n))
    for n in names:
        shutil.copy(old, os.path.join(b, n))
    shutil.copy(old, os.path.join(app, names[6]))
    shutil.copy(new, os.path.join(cwd, names[4]))     # the current directory comes before PATH
    prog = os.path.join(app, "loader.exe")
    with open(os.path.join(build, "loader.c"), "w") as f:
        f.write("#include <windows.h>\n#include <stdio.h>\nint main(int argc, char **argv) {\n"
                " for (int i = 1; i < argc; i++) { HMODULE h = LoadLibraryA(argv[i]); char b[1024] = \"\";\n"
                "  if (h) GetModuleFileNameA(h, b, sizeof b); printf(\"%s=%s\\n\", argv[i], h ? b : \"-\"); }\n"
                " return 0; }\n")
    p = subprocess.run([cc, "-o", prog, os.path.join(build, "loader.c")], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    check(p.returncode == 0, "the loader builds", p.stdout)
    z = lambda d: "Z:" + d.replace("/", "\\")
    env = dict(os.environ, WINEPREFIX=os.path.join(root, "prefix"), WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=",
               WINEPATH=z(a) + ";" + z(b))
    try:
        p = subprocess.run([wine_exe, prog] + names, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=240)
    except subprocess.TimeoutExpired:
        raise Skip("wine did not start within 240 s")
    got = dict(l.strip().split("=", 1) for l in p.stdout.splitlines() if "=" in l)
    if len(got) != len(names):
        raise Skip("wine ran no Windows program here: %s" % (p.stderr[-500:],))
    print("wine: %r" % got)
    wine_paths = {n: os.path.realpath(v[2:].replace("\\", "/")) if v.lower().startswith("z:") else None
                  for n, v in got.items()}
    doc = scan_json(["--windows", tree, "--program", prog, "--cwd", cwd, "--path", a + ";" + b])
    l = load(doc)
    ours = {l["main"]["name"]: l["main"]["path"]}
    ours.update((s["name"], s["path"]) for s in l["sublibraries"])
    for n in names:
        check(ours.get(n) and os.path.realpath(ours[n]) == wine_paths[n], "%s: the scan says %s, Wine loaded %s"
              % (n, ours.get(n), got[n]), json.dumps(l, indent=1)[:3000])
    check(l["mixed"] and findings(doc, "windows-mixed-load"), "a mixed load, as Wine's answers show", l)
    check([s["rule"] for s in l["sublibraries"]] == ["PATH"] * 3 + ["current directory", "PATH",
                                                                   "application directory"], "by each rule", l)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print("usage: test_scan_windows.py {%s}" % ",".join(sorted(SCENARIOS)))
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
