#!/usr/bin/env python3
"""The seed corpus of fuzz-records (tests/fuzz/fuzz-records.c), made from docs/output-format.md.

    tests/fuzz/make-records-seeds.py            write tests/fuzz/corpus/records/
    tests/fuzz/make-records-seeds.py --check    exit 1 when the corpus differs from what the page says

Every event of the page's field tables gets a seed file: a header, one record of that kind with
every field of its first documented type, one record per other documented type of each field (`int or null` gives a null), and then, for each
kind of hostile value, one record per field with that field replaced (numbers huge, negative and
fractional, strings with invalid UTF-8 and control characters, null, an array where an object is
expected and the reverse, deep nesting), and a summary. The fuzzer's mutator (fuzz-records.c)
goes on from there, one field at a time.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "output-format.md")
OUT = os.path.join(HERE, "corpus", "records")
RAW = "\u0001RAW%d\u0001"  # replaced by raw JSON text after json.dumps

# Values that are what the spy writes, for the fields whose documented type alone says too little.
EXAMPLES = {
    "header.library": {"path": "/usr/lib/libcudnn.so.9", "version": 91900, "cudart": 12080, "how": "CUDNNSPY_LIBRARY"},
    "header.argv": ["train", "--epochs", "1"],
    "header.mode": "preload",
    "library.kind": "cudnn",
    "library.answers": True,
    "library.how": "the program's DT_RUNPATH",
    "library.loaded_by": "/usr/lib/libtorch_cuda.so",
    "load.result": "loaded",
    "finding.id": "two-dispatchers",
    "finding.severity": "warning",
    "finding.paths": ["/a/libcudnn.so.9", "/b/libcudnn.so.9"],
    "call.fn": "cudnnConvolutionForward",
    "call.status_name": "CUDNN_STATUS_SUCCESS",
    "call.args": {
        "handle": "handle#1", "alpha": {"ptr": "0x7ffc10", "value": 1.0},
        "xDesc": {"id": "tensor#1", "desc": "float NCHW 8x16x32x32",
                  "set": {"fn": "cudnnSetTensor4dDescriptor", "args": {"n": 8, "format": "CUDNN_TENSOR_NCHW"}}},
        "x": "0x7f0000", "algo": "CUDNN_CONVOLUTION_FWD_ALGO_GEMM", "workSpace": None,
        "dims": {"ptr": "0x10", "values": [8, 16, 32, 32]},
        "perf": {"ptr": "0x20", "values": [{"algo": "CUDNN_CONVOLUTION_FWD_ALGO_GEMM", "status": "CUDNN_STATUS_SUCCESS",
                                            "time": 0.5, "memory": 0}]},
        "plan": {"id": "backend#3", "type": "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR", "finalized": True,
                 "engine": 12, "knobs": [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 1}]},
        "message": {"ptr": "0x30", "string": "bad", "cut": True}},
    "failure.stack": [{"module": "/usr/bin/train", "offset": "0x1234", "symbol": "main"},
                      {"module": "/lib/libc.so.6", "offset": "0x29d90", "symbol": None}],
    "failure.recent": [{"fn": "cudnnCreate", "status": 0}, {"fn": "cudnnSetStream", "status": 2000}],
    "failure.python": [{"file": "/work/model.py", "line": 42, "function": "Model.forward"},
                       {"file": "train.py", "line": 9, "function": "<module>"}],
    "algo.python": [{"file": "/work/model.py", "line": 42, "function": "Model.forward"}],
    "failure.status": 2000,
    "failure.status_name": "CUDNN_STATUS_BAD_PARAM",
    "failure.why": "no /dev/nvidia* nodes",
    "search.fn": "cudnnFindConvolutionForwardAlgorithm",
    "search.op": "fwd",
    "search.results": [{"algo": "CUDNN_CONVOLUTION_FWD_ALGO_GEMM", "status": "CUDNN_STATUS_SUCCESS", "time": 0.5,
                        "memory": 1024, "determinism": "CUDNN_DETERMINISTIC", "mathType": "CUDNN_DEFAULT_MATH"}],
    "algo.api": "legacy",
    "algo.op": "fwd",
    "algo.algo": "CUDNN_CONVOLUTION_FWD_ALGO_GEMM",
    "algo.knobs": [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 1}],
    "algo.workspace": {"min": 0, "max": 4096},
    "algo.search": {"fn": "cudnnFindConvolutionForwardAlgorithm", "returned": 3, "rank": 1,
                    "first": "CUDNN_CONVOLUTION_FWD_ALGO_GEMM"},
    "algo.heuristics": {"id": "backend#7", "rank": 0},
    "graph.ops": [{"id": "backend#2", "type": "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR",
                   "attrs": {"CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X": {"id": "backend#1"},
                             "CUDNN_ATTR_TENSOR_DIMENSIONS": [8, 16, 32, 32]}}],
    "plan.knobs": [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 1}],
    "plan.heuristics": {"id": "backend#7", "rank": 0},
    "plan.json": "{\"engineId\": 12}",
    "heuristics.mode": "CUDNN_HEUR_MODE_A",
    "heuristics.configs": ["backend#8", "backend#9"],
    "heuristics.engines": [12, None],
    "summary.functions": [{"fn": "cudnnCreate", "calls": 3, "failures": 1, "internal": 0, "timed": 3, "total_ns": 900,
                           "first_ns": 500, "steady_ns": 400, "min_ns": 100, "max_ns": 500, "p50_ns": 300,
                           "p99_ns": 500}],
    "summary.copies": [{"copy": 0, "path": "/usr/lib/libcudnn.so.9", "version": 91900, "calls": 3, "failures": 1,
                        "internal": 0, "functions": [{"fn": "cudnnCreate", "calls": 3, "failures": 1, "internal": 0}]},
                       {"copy": 1, "path": None, "version": None, "calls": 0, "failures": 0, "internal": 0,
                        "functions": []}],
    "gpu.fn": "cudnnConvolutionForward",
    "crash.signal_name": "SIGSEGV",
    "crash.recent": [{"fn": "cudnnConvolutionForward", "status": 0}],
}

def parse_doc(path):
    """{event: [(field, type text)]} from the `### `event`` sections' | field | type | meaning | tables."""
    events, order, cur, in_table = {}, [], None, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#{3,4} `(\w+)`", line)
            if m:
                cur, in_table = m.group(1), False
                continue
            if line.startswith("| field | type |"):
                in_table = cur is not None
                if in_table and cur not in events:
                    events[cur] = []
                    order.append(cur)
                continue
            if not line.startswith("|"):
                in_table = False
                continue
            if in_table and not line.startswith("| ---"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                for name in re.findall(r"`(\w+)`", cells[0]):
                    events[cur].append((name, cells[1]))
    # A failure has every field of a call, and its own.
    if "failure" in events and "call" in events:
        events["failure"] = events["call"] + events["failure"]
    return events, order


def types_of(text):
    """'int, array, or null' -> ['int', 'array', 'null']; 'array of strings' -> ['array of strings']."""
    out = []
    for t in re.split(r",\s*(?:or\s+)?|\s+or\s+", text):
        t = t.strip()
        if t:
            out.append(t)
    return out


def typed_value(kind, field, t):
    ex = EXAMPLES.get("%s.%s" % (kind, field))
    if t == "null":
        return None
    if t == "bool":
        return True if ex is None else ex
    if t == "int":
        return ex if isinstance(ex, int) and not isinstance(ex, bool) else 1234 + len(field)
    if t == "string":
        return ex if isinstance(ex, str) else "%s-%s" % (kind, field)
    if t == "array of strings":
        return ex if isinstance(ex, list) else ["a", "b"]
    if t == "array":
        return ex if isinstance(ex, list) else [1, 2]
    if t == "object":
        return ex if isinstance(ex, dict) else {"a": 1}
    raise SystemExit("%s: %s.%s: type '%s' not known to make-records-seeds.py" % (DOC, kind, field, t))


# The hostile kinds: (name, value or raw JSON text). Each replaces one field at a time.
HOSTILE = [
    ("huge", [RAW % 0, RAW % 1, 9223372036854775807, -9223372036854775808]),
    ("negative", [-1, -2147483649]),
    ("float", [0.5, 1e308, RAW % 2]),
    ("utf8", ["\udcff\udcfe", "caf\udcc3", "\udced\udca0\udc80"]),
    ("control", ["\u0000\u0001\u001b[2J\n\t\u007f", "a\u2028b"]),
    ("null", [None]),
    ("array", [[], [{"a": 1}]]),
    ("object", [{}, {"x": [1]}]),
    ("nesting", [RAW % 3] + [RAW % 4, RAW % 5] * 8),
    ("string", ["123", ""]),
]
# The deepest (past jansson's 2048 levels) once per file, the others 40 deep.
RAWTEXT = ["18446744073709551616", "-1e400", "1e-400", "[" * 2100 + "]" * 2100, '{"a":' * 40 + "1" + "}" * 40,
           "[" * 40 + "{}" + "]" * 40]


def dump(rec):
    text = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
    for i, raw in enumerate(RAWTEXT):
        text = text.replace(json.dumps(RAW % i, ensure_ascii=False), raw)
    # Lone surrogates stand for bytes that are not UTF-8: write those bytes.
    return text.encode("utf-8", "surrogateescape")


def header():
    return {"event": "header", "schema": 1, "spy": "0.1.0", "mode": "preload", "program": "train",
            "argv": ["train"], "pid": 4242, "ppid": 1, "host": "node01", "rank": 0,
            "start_unix_ns": 1700000000000000000, "start_mono_ns": 1000000000000, "library": None}


def summary():
    return {"event": "summary", "calls": 3, "failures": 1, "internal": 0, "dropped": 0,
            "functions": EXAMPLES["summary.functions"], "copies": EXAMPLES["summary.copies"]}


def seeds(events, order):
    files, seen = {}, set()
    for kind in order:
        fields = events[kind]
        base = {"event": kind}
        for name, t in fields:
            base[name] = typed_value(kind, name, types_of(t)[0])
            seen.add(types_of(t)[0])
        typed = [base]
        for name, t in fields:
            for alt in types_of(t)[1:]:
                rec = dict(base)
                rec[name] = typed_value(kind, name, alt)
                typed.append(rec)
                seen.add(alt)
        lead = [] if kind == "header" else [header()]
        tail = [] if kind == "summary" else [summary()]
        files["%s-typed.jsonl" % kind] = lead + typed + tail
        # A file without a summary, so that the reader's second pass (plain call lines) runs too.
        if kind == "call":
            files["call-no-summary.jsonl"] = lead + typed
        for hname, values in HOSTILE:
            recs = []
            for i, (name, _) in enumerate(fields):
                rec = dict(base)
                rec[name] = values[i % len(values)]
                recs.append(rec)
            files["%s-%s.jsonl" % (kind, hname)] = lead + recs + tail
    return files, seen


def main():
    check = sys.argv[1:] == ["--check"]
    events, order = parse_doc(DOC)
    want = {"header", "call", "failure", "summary", "library", "finding", "algo", "load", "gpu", "mark", "crash",
            "search", "graph", "plan", "heuristics"}
    missing = want - set(events)
    if missing:
        print("%s: no field table for %s" % (DOC, ", ".join(sorted(missing))))
        return 1
    files, seen = seeds(events, order)
    print("%d events, %d fields, types %s, %d seed files" % (
        len(events), sum(len(v) for v in events.values()), ", ".join(sorted(seen)), len(files)))
    stale = []
    if not check:
        os.makedirs(OUT, exist_ok=True)
    for name, recs in sorted(files.items()):
        data = b"".join(dump(r) + b"\n" for r in recs)
        path = os.path.join(OUT, name)
        if check:
            try:
                with open(path, "rb") as f:
                    if f.read() != data:
                        stale.append(name)
            except OSError:
                stale.append(name)
        else:
            with open(path, "wb") as f:
                f.write(data)
    if stale:
        print("stale or missing seeds (run tests/fuzz/make-records-seeds.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
