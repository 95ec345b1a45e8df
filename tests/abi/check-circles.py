#!/usr/bin/env python3
"""No file calls into a file that calls back into it (issue 17's dependency rule), from the object files.

usage: check-circles.py NAME=OBJECTS [NAME=OBJECTS ...]

OBJECTS is static libraries (.a) and directories of object files (.o), separated by commas; each NAME is one part (the library,
the command) checked on its own. File A depends on file B when A uses a global symbol that B defines
(nm). A circle is a set of two or more files each reachable from the others. Exit 1 when a part has a
circle, with the files and which of them each calls.
"""
import collections
import glob
import os
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
            sys.exit("check-circles: %s: no object files" % objects)
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
    """"shim_algo.c.o" -> "algo.c"; generated files keep their own name."""
    name = os.path.basename(path)
    if name.endswith(".o"):
        name = name[:-2]
    return name.split("_.._")[-1].replace("shim_", "", 1)


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


def main(argv):
    bad = 0
    for arg in argv:
        name, _, objects = arg.partition("=")
        found, edges = circles(members(objects))
        if not found:
            print("%s: no circle among its files" % name)
            continue
        bad = 1
        for comp in found:
            print("%s: a circle of %d files:" % (name, len(comp)))
            for f in comp:
                print("  %s -> %s" % (f, " ".join(x for x in edges[f] if x in comp)))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
