#!/usr/bin/env python3
"""Issue 17's dependency rules for one part (the library, the command): no circle of files, and no call or include
from a layer into a layer above it.

usage: check-depends.py [--generated FILE=LAYER]... [--beneath DIR]... NAME:SOURCES:LAYERS:OBJECTS...

SOURCES is the part's source folder; LAYERS its folders top to bottom, comma-separated ("." for the files directly
in SOURCES); OBJECTS static libraries (.a) and directories of object files (.o), comma-separated. File A depends on
file B when A uses a global symbol that B defines (nm), or includes B's header. The rules:
- a circle is a set of two or more files each reachable from the others (calls);
- a file calls no file of a layer above its own, and includes no header from one;
- every C or assembly file of SOURCES lies in one of its layers;
- a header from outside the part is one of a --beneath folder (the command includes the library's common layer,
  nothing else of it), or generated (found nowhere in the tree: the API description's g_ headers).
--generated names the layer of a generated source (its object is named for the file, not its folder).
Exit 1 on any breach, with the files and what each calls or includes.
"""
import collections
import glob
import os
import re
import subprocess
import sys


def members(objects):
    """{file name: [nm lines]} of static libraries (.a) and directories of object files, comma-separated."""
    out = collections.defaultdict(list)
    for one in objects.split(","):
        for f, lines in member_lines(one).items():
            out[f] += lines
    return out


def member_lines(objects):
    out = collections.defaultdict(list)
    if os.path.isdir(objects):
        paths = sorted(glob.glob(os.path.join(objects, "*.o")))
        if not paths:
            sys.exit("check-depends: %s: no object files" % objects)
        for p in paths:
            text = subprocess.run(["nm", p], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
            out[clean(p)] = text.splitlines()
        return out
    text = subprocess.run(["nm", "-A", objects], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    for line in text.splitlines():
        # "lib.a:member.o:0000000000000460 T name" or "lib.a:member.o:                 U name"
        at = line.find(".o:")
        if at < 0:
            continue
        out[clean(line[:at + 2].split(":")[-1])].append(line[at + 3:])
    return out


def clean(path):
    """"entry_init.c.o" -> "entry/init.c" (meson names an object for its source's path under the target's folder);
    generated files keep their own name ("meson-generated_.._g_api.c.o" -> "g_api.c")."""
    name = os.path.basename(path)
    if name.endswith(".o"):
        name = name[:-2]
    name = name.split("_.._")[-1]
    if name.startswith("g_"):
        return name
    return name.replace("_", "/")


def circles(files):
    defs, uses = {}, collections.defaultdict(set)
    for f, lines in files.items():
        for line in lines:
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRVWGS":
                defs.setdefault(parts[2], f)
            elif len(parts) == 2 and parts[0] == "U":
                uses[f].add(parts[1])
    edges = {f: sorted({defs[u] for u in uses[f] if u in defs and defs[u] != f}) for f in files}
    # Tarjan's strongly connected components, iteratively (no recursion limit to meet).
    index, low, on, stack, found, n = {}, {}, set(), [], [], 0
    for root in sorted(files):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = n
                n += 1
                stack.append(v)
                on.add(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            for parent, _ in work[-1:]:
                low[parent] = min(low[parent], low[v])
    return found, edges


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


PLATFORMS = ("win/",)


def layer_of(path, layers):
    """The layer of a file named relative to its part's folder, or None. A platform's folder (shim/win/) holds
    its own files of the same layers: win/core/loader.c is of core."""
    for p in PLATFORMS:
        if path.startswith(p):
            path = path[len(p):]
    top = path.split("/")[0] if "/" in path else "."
    return top if top in layers else None


def source_files(root):
    """The part's C, header and assembly files, relative to root."""
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith((".c", ".h", ".S")):
                out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def headers_by_name(top):
    """{header file name: [paths]} over the project's source tree."""
    out = collections.defaultdict(list)
    for d, dirs, names in os.walk(top):
        dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
        for n in names:
            if n.endswith(".h"):
                out[n].append(os.path.realpath(os.path.join(d, n)))
    return out


def check_part(spec, generated, beneath, headers):
    name, root, layers, objects = spec.split(":", 3)
    layers = layers.split(",")
    rank = {l: i for i, l in enumerate(layers)}
    problems = []
    files = members(objects)
    found, edges = circles(files)
    for comp in found:
        problems.append("a circle of %d files:" % len(comp))
        problems += ["  %s -> %s" % (f, " ".join(x for x in edges[f] if x in comp)) for f in comp]

    def rank_of(f):
        return rank.get(generated.get(f) or layer_of(f, rank), None)

    for f in sorted(edges):
        if rank_of(f) is None:
            problems.append("%s: an object in no layer (%s)" % (f, ", ".join(layers)))
            continue
        up = [x for x in edges[f] if rank_of(x) is not None and rank_of(x) < rank_of(f)]
        if up:
            problems.append("%s calls a layer above its own: %s" % (f, " ".join(up)))
    root = os.path.realpath(root)
    allowed = [os.path.realpath(d) + os.sep for d in beneath]
    for f in source_files(root):
        mine = layer_of(f, rank)
        if mine is None:
            problems.append("%s: in no layer (%s)" % (f, ", ".join(layers)))
            continue
        with open(os.path.join(root, f), errors="replace") as text:
            wanted = INCLUDE.findall(text.read())
        for h in wanted:
            here = os.path.realpath(os.path.join(root, os.path.dirname(f), h))
            paths = [here] if os.path.exists(here) else headers.get(os.path.basename(h), [])
            if not paths:
                continue  # generated (g_api.h ...)
            p = paths[0]
            if p.startswith(root + os.sep):
                theirs = layer_of(os.path.relpath(p, root), rank)
                if theirs is not None and rank[theirs] < rank[mine]:
                    problems.append("%s includes %s, from the layer above its own (%s)" % (f, h, theirs))
            elif not any(p.startswith(a) for a in allowed):
                problems.append("%s includes %s, from outside the part: %s" % (f, h, p))
    if problems:
        print("%s: %d breaches of the dependency rules:" % (name, len(problems)))
        print("\n".join("  " + x for x in problems))
        return 1
    print("%s: no circle among its %d files; %s: nothing calls or includes upward" % (name, len(files), " > ".join(layers)))
    return 0


def main(argv):
    generated, beneath, parts = {}, [], []
    it = iter(argv)
    for arg in it:
        if arg == "--generated":
            f, _, layer = next(it).partition("=")
            generated[f] = layer
        elif arg == "--beneath":
            beneath.append(next(it))
        else:
            parts.append(arg)
    top = os.path.commonpath([os.path.realpath(p.split(":")[1]) for p in parts])
    headers = headers_by_name(top)
    return max([check_part(p, generated, beneath, headers) for p in parts] or [0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
