"""The record schema of docs/output-format.md, as checks: used on every file any test writes."""
import json
import os
import subprocess

INT = (int,)
NUM = (int, float)
STR = (str,)


def _is(v, types, nullable=False):
    if v is None:
        return nullable
    if isinstance(v, bool):
        return bool in types
    return isinstance(v, types)


def _fields(obj, spec, where, errors):
    for name, types, nullable in spec:
        if name not in obj:
            errors.append("%s: no field %r" % (where, name))
        elif not _is(obj[name], types, nullable):
            errors.append("%s: %r is %r, not %s%s" % (where, name, obj[name], types, " or null" if nullable else ""))


HEADER = [("schema", INT, False), ("spy", STR, False), ("mode", STR, False), ("program", STR, False),
          ("argv", (list,), False), ("pid", INT, False), ("ppid", INT, False), ("host", STR, False),
          ("rank", INT, True), ("start_unix_ns", INT, False), ("start_mono_ns", INT, False),
          ("library", (dict,), True)]
CALL = [("fn", STR, False), ("status", INT, False), ("status_name", STR, True), ("copy", INT, False), ("tid", INT, False),
        ("t_ns", INT, False), ("dur_ns", INT, True), ("args", (dict,), False)]
FAILURE = CALL + [("message", STR, True), ("stack", (list,), False), ("recent", (list,), False)]
SUMMARY = [("calls", INT, False), ("failures", INT, False), ("internal", INT, False), ("dropped", INT, False),
           ("functions", (list,), False)]
LIBRARY = [("kind", STR, False), ("path", STR, False), ("real_path", STR, False), ("soname", STR, True),
           ("build_id", STR, True), ("size", INT, False), ("mtime", INT, False), ("version", INT, True),
           ("version_check", INT, True), ("answers", (bool,), False), ("copy", INT, True)]
COPY = [("copy", INT, False), ("path", STR, True), ("version", INT, True), ("how", STR, True), ("by", STR, True),
        ("callers", (list,), False), ("closed", (bool,), False), ("calls", INT, False), ("failures", INT, False), ("internal", INT, False),
        ("functions", (list,), False)]
FINDING = [("id", STR, False), ("severity", STR, False), ("message", STR, False), ("fix", STR, True),
           ("paths", (list,), False)]
MARK = [("label", STR, False), ("tid", INT, False), ("t_ns", INT, False)]
# Convolution algorithms and engines (issue 5).
SEARCH = [("fn", STR, False), ("tid", INT, False), ("t_ns", INT, False), ("op", STR, False),
          ("signature", STR, False), ("requested", INT, False), ("returned", INT, False), ("results", (list,), False)]
PERF = [("algo", (str, int), False), ("status", (str, int), False), ("time", NUM, False), ("memory", INT, False),
        ("determinism", (str, int), False), ("mathType", (str, int), False)]
ALGO = [("api", STR, False), ("op", STR, False), ("signature", STR, False), ("algo", STR, True),
        ("engine", INT, True), ("knobs", (list,), True), ("calls", INT, False), ("failures", INT, False),
        ("timed", INT, False), ("host_ns", INT, False), ("gpu_timed", INT, False), ("gpu_ns", INT, False),
        ("workspace", (dict,), True), ("workspace_needed", INT, True), ("search", (dict,), True),
        ("nondeterministic", (bool,), True), ("plan", STR, True), ("config", STR, True), ("graph", STR, True), ("heuristics", (dict,), True)]
GRAPH = [("tid", INT, False), ("t_ns", INT, False), ("id", STR, False), ("op", STR, False),
         ("signature", STR, False), ("handle", STR, True), ("ops", (list,), True)]
PLAN = [("tid", INT, False), ("t_ns", INT, False), ("id", STR, False), ("config", STR, True), ("engine", INT, True),
        ("knobs", (list,), True), ("graph", STR, True), ("signature", STR, True), ("heuristics", (dict,), True),
        ("workspace", INT, True), ("nondeterministic", (bool,), True), ("json", STR, True), ("json_size", INT, True)]
HEURISTICS = [("tid", INT, False), ("t_ns", INT, False), ("id", STR, False), ("graph", STR, True),
              ("op", STR, False), ("signature", STR, True), ("mode", STR, True), ("requested", INT, False),
              ("returned", INT, False), ("configs", (list,), False), ("engines", (list,), False)]
OPS = ("fwd", "bwd-data", "bwd-filter", "bias-act", "graph")


def _backend_id(v):
    return isinstance(v, str) and v.startswith("backend#")


def _knobs(knobs, where, errors):
    for k in knobs or []:
        _fields(k, [("type", (str, int), False), ("value", INT, False)], where + " knob", errors)


def _backend_desc(d, where, errors):
    """A backend descriptor in a graph record: id, type, finalized, attrs (nested descriptors alike)."""
    _fields(d, [("id", STR, False), ("type", STR, True), ("finalized", (bool,), False), ("attrs", (dict,), False)],
            where, errors)
    for name, v in (d.get("attrs") or {}).items():
        if not name.startswith("CUDNN_ATTR_") and not name.isdigit():
            errors.append("%s: attribute %r" % (where, name))
        for x in (v.get("values") if isinstance(v, dict) and "count" in v else v if isinstance(v, list) else [v]):
            if isinstance(x, dict):
                _backend_desc(x, where + " " + name, errors)


def _convolution_records(obj, ev, where, errors):
    if ev == "search":
        _fields(obj, SEARCH, where, errors)
        for r in obj.get("results") or []:
            _fields(r, PERF, where + " result", errors)
    elif ev == "algo":
        _fields(obj, ALGO, where, errors)
        if obj.get("api") not in ("legacy", "graph"):
            errors.append("%s: api %r" % (where, obj.get("api")))
        if obj.get("api") == "legacy" and not isinstance(obj.get("algo"), str):
            errors.append("%s: a legacy choice without its algorithm" % where)
        if obj.get("api") == "graph" and obj.get("algo") is not None:
            errors.append("%s: a graph choice with a legacy algorithm" % where)
        _knobs(obj.get("knobs"), where, errors)
        if isinstance(obj.get("workspace"), dict):
            _fields(obj["workspace"], [("min", INT, False), ("max", INT, False)], where + " workspace", errors)
        if isinstance(obj.get("search"), dict):
            _fields(obj["search"], [("fn", STR, False), ("returned", INT, False), ("rank", INT, True),
                                    ("first", STR, True)], where + " search", errors)
        if isinstance(obj.get("heuristics"), dict):
            _fields(obj["heuristics"], [("id", STR, False), ("rank", INT, False)], where + " heuristics", errors)
        if obj.get("failures", 0) > obj.get("calls", 0) or obj.get("timed", 0) > obj.get("calls", 0):
            errors.append("%s: more failures or timed calls than calls" % where)
    elif ev == "graph":
        _fields(obj, GRAPH, where, errors)
        for o in obj.get("ops") or []:
            if o is not None:
                _backend_desc(o, where + " op", errors)
    elif ev == "plan":
        _fields(obj, PLAN, where, errors)
        _knobs(obj.get("knobs"), where, errors)
        for k in ("id", "config", "graph"):
            if obj.get(k) is not None and not _backend_id(obj[k]):
                errors.append("%s: %s is %r" % (where, k, obj[k]))
    elif ev == "heuristics":
        _fields(obj, HEURISTICS, where, errors)
        if len(obj.get("configs") or []) != len(obj.get("engines") or []):
            errors.append("%s: configs and engines differ in length" % where)
        if not all(_backend_id(c) or c is None for c in obj.get("configs") or []):
            errors.append("%s: configs %r" % (where, obj.get("configs")))
    if ev in ("search", "algo", "graph", "heuristics") and obj.get("op") not in OPS:
        errors.append("%s: op %r" % (where, obj.get("op")))


FUNCTION = [("fn", STR, False), ("calls", INT, False), ("failures", INT, False), ("internal", INT, False),
            ("timed", INT, False), ("total_ns", INT, False), ("min_ns", INT, False), ("max_ns", INT, False),
            ("p50_ns", INT, False), ("p99_ns", INT, False), ("gpu_timed", INT, False), ("gpu_total_ns", INT, False)]


def _arg(v, where, errors):
    """An argument: number, string, null, or one of the documented objects."""
    if v is None or _is(v, NUM) or _is(v, STR):
        if isinstance(v, str) and v.startswith("0x"):
            int(v, 16)
        return
    if isinstance(v, list):
        for x in v:
            _arg(x, where, errors)
        return
    if not isinstance(v, dict):
        errors.append("%s: argument %r has no documented form" % (where, v))
        return
    if "id" in v:
        if not (isinstance(v["id"], str) and "#" in v["id"]):
            errors.append("%s: bad id %r" % (where, v["id"]))
        if "set" in v:
            s = v["set"]
            if not (isinstance(s, dict) and _is(s.get("fn"), STR) and isinstance(s.get("args"), dict)):
                errors.append("%s: bad set %r" % (where, s))
        return
    if "ptr" in v:
        if not (isinstance(v["ptr"], str) and v["ptr"].startswith("0x")):
            errors.append("%s: bad ptr %r" % (where, v["ptr"]))
        if "values" in v and not isinstance(v["values"], list):
            errors.append("%s: values is not a list" % where)
        return
    errors.append("%s: argument object %r has no documented form" % (where, v))


def check_record(obj, where):
    errors = []
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
        return ["%s: not an object with an event" % where]
    ev = obj["event"]
    if ev == "header":
        _fields(obj, HEADER, where, errors)
        lib = obj.get("library")
        if isinstance(lib, dict):
            _fields(lib, [("path", STR, False), ("version", INT, False), ("cudart", INT, False),
                          ("how", STR, False)], where + " library", errors)
    elif ev in ("call", "failure"):
        _fields(obj, FAILURE if ev == "failure" else CALL, where, errors)
        for k, v in (obj.get("args") or {}).items():
            _arg(v, "%s arg %s" % (where, k), errors)
        for f in obj.get("stack") or []:
            _fields(f, [("module", STR, True), ("offset", STR, False), ("symbol", STR, True)], where + " frame",
                    errors)
        for r in obj.get("recent") or []:
            _fields(r, [("fn", STR, False), ("status", INT, False)], where + " recent", errors)
        # The calling thread's Python frames (issue 29): present only when it ran Python, never empty.
        if "python" in obj:
            if not isinstance(obj["python"], list) or not obj["python"] or len(obj["python"]) > 8:
                errors.append("%s: python is %r" % (where, obj["python"]))
            for f in obj["python"] if isinstance(obj["python"], list) else []:
                _fields(f, [("file", STR, False), ("line", INT, False), ("function", STR, False)],
                        where + " python frame", errors)
        if ev == "failure" and obj.get("status") == 0 and not _is(obj.get("cuda_error"), INT):
            errors.append("%s: a failure with status 0 and no CUDA error" % where)
        if "injected" in obj and obj["injected"] is not True:
            errors.append("%s: injected is %r" % (where, obj["injected"]))
        if "no_function" in obj and obj["no_function"] is not True:
            errors.append("%s: no_function is %r" % (where, obj["no_function"]))
    elif ev == "gpu":
        _fields(obj, [("fn", STR, False), ("copy", INT, False), ("tid", INT, False), ("t_ns", INT, False),
                      ("gpu_ns", INT, False)], where,
                errors)
    elif ev == "load":
        _fields(obj, [("name", STR, False), ("caller", STR, True), ("flags", INT, False), ("count", INT, False),
                      ("result", STR, False),
                      ("path", STR, True), ("error", STR, True)], where, errors)
        if obj.get("result") not in ("loaded", "failed", "not loaded"):
            errors.append("%s: result %r" % (where, obj.get("result")))
    elif ev == "library":
        _fields(obj, LIBRARY, where, errors)
        if obj.get("copy") is not None:
            _fields(obj, [("how", STR, False), ("loaded_by", STR, True)], where, errors)
    elif ev == "finding":
        _fields(obj, FINDING, where, errors)
        if obj.get("severity") not in ("error", "warning", "info"):
            errors.append("%s: severity %r" % (where, obj.get("severity")))
    elif ev == "mark":
        _fields(obj, MARK, where, errors)
    elif ev in ("search", "algo", "graph", "plan", "heuristics"):
        _convolution_records(obj, ev, where, errors)
    elif ev == "summary":
        _fields(obj, SUMMARY, where, errors)
        for f in obj.get("functions") or []:
            _fields(f, FUNCTION, where + " function", errors)
        if "crashed" not in obj:
            _fields(obj, [("copies", (list,), False)], where, errors)
        if "exited" in obj and obj["exited"] is not False:
            errors.append("%s: exited %r (only false, in a summary read from the counters)" % (where, obj["exited"]))
        for c in obj.get("copies") or []:
            _fields(c, COPY, where + " copy", errors)
            for f in c.get("functions") or []:
                _fields(f, [("fn", STR, False), ("calls", INT, False), ("failures", INT, False),
                            ("internal", INT, False)], where + " copy function", errors)
        if obj.get("copies") and sum(c["calls"] for c in obj["copies"]) != obj.get("calls"):
            errors.append("%s: the copies' calls do not add up to the total" % where)
    return errors


def is_binary(data):
    """Record format 2 (docs/record-format.md) begins with its file frame."""
    return data[:1] == b"\x01" and data[2:10] == b"cudnnspy"


def dumped(path, exe=None):
    """A record file of either format through `cudnnspy dump`, the reader the tests go through (issue 17): (JSON Lines
    bytes, errors). Format 1 comes out byte for byte; format 2 as the records format 1 would have held."""
    exe = exe or os.environ.get("CUDNNSPY_EXE", "")
    if not exe:
        return b"", ["%s: no CUDNNSPY_EXE to read it with (cudnnspy dump)" % path]
    p = subprocess.run([exe, "dump", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    errors = []
    if p.returncode != 0 or p.stderr:
        errors.append("%s: cudnnspy dump exited %d: %s" % (path, p.returncode, p.stderr.decode(errors="replace")))
    if b"cut short" in p.stderr:
        errors.append("%s: last line is cut" % path)
    return p.stdout, errors


def through_dump(path, exe=None):
    """(JSON Lines bytes, errors) of a record file, read by `cudnnspy dump`; a format 1 file must come out as it is."""
    with open(path, "rb") as f:
        raw = f.read()
    data, errors = dumped(path, exe)
    if not is_binary(raw) and data != raw:
        errors.append("%s: cudnnspy dump changed a format 1 file (%d bytes in, %d out)" % (path, len(raw), len(data)))
    return data, errors


TAG_FILE, TAG_CHUNK, TAG_TEXT, TAG_CALL, TAG_FAILURE, TAG_GPU, TAG_BLOCK, TAG_STATE = 1, 2, 3, 4, 5, 6, 7, 8
BLOCK_HEAD = 16


def uvarint(data, pos):
    """(value, next position) of the varint at pos; ValueError when it is cut."""
    v = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("cut varint")
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def frames(data, unused=None):
    """The frames of a format 2 file, read as docs/record-format.md describes them, apart from the library's
    reader: [(tag or "json", payload bytes, offset)]; ValueError at anything else. UNUSED, a list, gets the
    lengths of what holds no frame (zeros, blocks' unused ends)."""
    skip = unused.append if unused is not None else (lambda n: None)
    out, pos, block = [], 0, None
    while pos < len(data):
        if block and pos >= block[0]:
            # A block's bytes past its committed frames are none (version 6).
            if pos != block[0]:
                raise ValueError("a frame runs past its block's committed end at byte %d" % block[0])
            skip(block[1] - pos)
            pos, block = block[1], None
            continue
        if not block and data[pos] == 0:
            skip(1)
            pos += 1  # zeros between frames: an extent the process did not fill
            continue
        if data[pos] == TAG_BLOCK and not block:
            head = data[pos:pos + BLOCK_HEAD]
            if len(head) < BLOCK_HEAD or head[1] != BLOCK_HEAD - 2:
                raise ValueError("a block's frame cut or of another length at byte %d" % pos)
            committed = int.from_bytes(head[4:8], "little")
            capacity = int.from_bytes(head[8:12], "little")
            if committed > capacity:
                raise ValueError("a block commits more than it holds at byte %d" % pos)
            block = (pos + BLOCK_HEAD + committed, pos + BLOCK_HEAD + capacity)
            pos += BLOCK_HEAD
            continue
        if data[pos] == ord("{"):
            end = data.index(b"\n", pos)
            out.append(("json", data[pos:end], pos))
            pos = end + 1
            continue
        tag = data[pos]
        if tag not in (TAG_FILE, TAG_CHUNK, TAG_TEXT, TAG_CALL, TAG_FAILURE, TAG_GPU, TAG_STATE):
            raise ValueError("unknown tag %d at byte %d" % (tag, pos))
        n, at = uvarint(data, pos + 1)
        if at + n > len(data):
            raise ValueError("frame at byte %d runs past the end" % pos)
        out.append((tag, data[at:at + n], pos))
        pos = at + n
    return out


def unused_bytes(data):
    """The bytes of a format 2 file that hold no frame: zeros between frames and the unused ends of blocks."""
    unused = []
    frames(data, unused)
    return sum(unused)


def record_lines(path, exe=None):
    """A record file's JSON lines, whichever format, through cudnnspy dump."""
    data, _ = through_dump(path, exe)
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


def read_file(path, complete=True, exe=None):
    """Parse and check a record file of either format, read through cudnnspy dump; returns (records, errors)."""
    records = []
    data, errors = through_dump(path, exe)
    if data and not data.endswith(b"\n"):
        errors.append("%s: last line is cut" % path)
    for n, raw in enumerate(data.split(b"\n")[:-1], 1):
        where = "%s:%d" % (path, n)
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            errors.append("%s: not JSON (%s): %r" % (where, e, raw[:200]))
            continue
        errors += check_record(obj, where)
        records.append(obj)
    if not records or records[0].get("event") != "header":
        errors.append("%s: the first line is not a header" % path)
    if complete and records and records[-1].get("event") != "summary":
        errors.append("%s: the last line is not a summary" % path)
    return records, errors
