#!/usr/bin/env python3
"""What the records say of each call: descriptors decoded as they were set (every kind, against the real 9.19 and
against cuDNN's own API log), backend names from the installed headers, enums, scalars, transforms, derived and
partly read-back descriptors, every function of the API description, the ids a Destroy names.

usage: decoding.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import oracle
import spytest
from spytest import (DROPIN9, FAKE8, FAKE9, HERE, PRELOAD, REAL, check, events, log_agrees, logged, need_real, odd_run,
                     only, only_file, prog, run)

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


EXPECTED_SETS = {
    "tensor#1": ("half NHWC 8x16x32x64", {"format": "CUDNN_TENSOR_NHWC", "dataType": "CUDNN_DATA_HALF", "n": 8}),
    "tensor#2": ("double 2x4x6x8 strides 192x48x8x1", {"dataType": "CUDNN_DATA_DOUBLE", "dimA": [2, 4, 6, 8],
                                                     "strideA": [192, 48, 8, 1]}),
    "filter#1": ("bfloat16 NCHW 32x16x5x5", {"dataType": "CUDNN_DATA_BFLOAT16", "k": 32}),
    "filter#2": ("int8 NHWC 16x4x3x3", {"format": "CUDNN_TENSOR_NHWC", "filterDimA": [16, 4, 3, 3]}),
    "convolution#1": ("pad 1x2 stride 3x4 dilation 1x1 convolution float", {"mode": "CUDNN_CONVOLUTION"}),
    "convolution#2": ("pad 1x2 stride 3x4 dilation 1x1 cross_correlation half", {"padA": [1, 2], "filterStrideA": [3, 4],
                                                                    "dilationA": [1, 1]}),
    "activation#1": ("clipped_relu coef 6 propagate_nan", {"reluNanOpt": "CUDNN_PROPAGATE_NAN", "coef": 6}),
    "pooling#1": ("max window 3x3 pad 1x1 stride 2x2 not_propagate_nan", {"maxpoolingNanOpt": "CUDNN_NOT_PROPAGATE_NAN"}),
    "pooling#2": (None, {"mode": "CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING", "windowDimA": [2, 2]}),
    "lrn#1": (None, {"lrnN": 5, "lrnAlpha": 0.0001, "lrnBeta": 0.75, "lrnK": 2}),
    "optensor#1": (None, {"opTensorOp": "CUDNN_OP_TENSOR_MUL", "opTensorNanOpt": "CUDNN_NOT_PROPAGATE_NAN"}),
    "reducetensor#1": (None, {"reduceTensorOp": "CUDNN_REDUCE_TENSOR_NORM2",
                              "reduceTensorIndices": "CUDNN_REDUCE_TENSOR_FLATTENED_INDICES",
                              "reduceTensorIndicesType": "CUDNN_32BIT_INDICES"}),
    "spatialtransformer#1": (None, {"samplerType": "CUDNN_SAMPLER_BILINEAR", "dimA": [1, 3, 5, 5]}),
}


@scenario
def decode_real():
    """Every descriptor kind the real 9.19 accepts without a GPU, decoded as it was set."""
    need_real()
    p = run([prog("decode-all")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD,
                                   "CUDNNSPY_TRACE": "cudnnSet*", "CUDNNSPY_STDERR": "none"})
    check(p.stdout == "done\n", "every Set call succeeded", p.stdout)
    seen = {}
    for f in events(p.records, "failure"):
        for v in f["args"].values():
            if isinstance(v, dict) and "id" in v:
                seen[v["id"]] = v
    for ident, (desc, fields) in EXPECTED_SETS.items():
        check(ident in seen, "%s appears in a record" % ident, repr(sorted(seen)))
        got = seen[ident]
        if desc:
            check(got.get("desc") == desc, "%s summary" % ident, repr(got))
        for k, v in fields.items():
            check(got["set"]["args"].get(k) == v, "%s: %s set to %r" % (ident, k, v), repr(got))
    conv = seen["convolution#1"]
    check(conv.get("mathType") == "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION" and conv.get("groupCount") == 4,
          "single-value Set calls kept beside the shape", repr(conv))
    sets = events(p.records, "call")
    check(len(sets) == 16 and all(c["fn"].startswith("cudnnSet") for c in sets), "traced Set calls recorded",
          repr([c["fn"] for c in sets]))
    nd = [c for c in sets if c["fn"] == "cudnnSetTensorNdDescriptor"][0]
    check(nd["args"]["dimA"]["values"] == [2, 4, 6, 8], "input arrays read after success", repr(nd["args"]))
    fwd = events(p.records, "failure", "cudnnConvolutionForward")[0]
    check(fwd["args"]["algo"] == "CUDNN_CONVOLUTION_FWD_ALGO_GEMM", "algorithm enum by name", repr(fwd["args"]))


@scenario
def trace_all_real():
    """CUDNNSPY_TRACE='*': every call of the program recorded, none of cuDNN's internal ones; out-values."""
    need_real()
    p = run([prog("folded-conv")], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_TRACE": "*"})
    calls = events(p.records, "call")
    check(len(calls) == 17, "the program's 17 calls", repr([c["fn"] for c in calls]))
    create = [c for c in calls if c["fn"] == "cudnnCreateTensorDescriptor"]
    check(create[0]["args"]["tensorDesc"]["value"] == "tensor#1", "the created id as the out-value",
          repr(create[0]))
    check(all(isinstance(c["dur_ns"], int) for c in calls), "traced calls are timed", repr(calls[:2]))
    folded = [c for c in calls if c["fn"] == "cudnnGetFoldedConvBackwardDataDescriptors"][0]
    check(folded["args"]["filterDesc"]["desc"] == "float NCHW 16x3x3x3", "descriptor summary", repr(folded))
    summ = list(p.records.values())[0][-1]
    check(summ["internal"] > 0 and summ["calls"] == 17, "internal calls counted apart", repr(summ))


@scenario
def status_numbering_8():
    """An 8.x library's failure: the 8.x status numbering decoded, no 9.x message asked for."""
    p = run([prog("host-calls")], {"LD_LIBRARY_PATH": DROPIN9, "CUDNNSPY_LIBRARY": FAKE8,
                                   "FAKECUDNN_STATUS": "cudnnSetTensor4dDescriptor=3"})
    fails = events(p.records, "failure", "cudnnSetTensor4dDescriptor")
    check(len(fails) == 2 and fails[0]["status"] == 3 and fails[0]["status_name"] == "CUDNN_STATUS_BAD_PARAM",
          "8.x BAD_PARAM", repr(fails))
    check(fails[0]["message"] is None, "8.x has no cudnnGetLastErrorString", repr(fails[0]))
    check(list(p.records.values())[0][0]["library"]["version"] == 8907, "header version", repr(p.records))


def cudnn_header():
    for d in (os.path.join(os.path.dirname(REAL.rstrip("/")), "include"), "/usr/local/cuda/include",
              "/usr/include"):
        if os.path.exists(os.path.join(d, "cudnn.h")):
            return d
    return None


def api_enums(names):
    """{enum: {value name: number}} for cuDNN 9 from the API description."""
    out, cur = {}, None
    with open(os.path.join(HERE, "..", "..", "shim", "api", "cudnn.api")) as f:
        for line in f:
            if line.startswith("enum "):
                cur = line.split()[1] if line.split()[1] in names else None
                if cur:
                    out[cur] = {}
            elif cur and line.startswith("\t"):
                m = re.match(r"\s+(\w+)\s*=\s*(-?\w+)((?:\s+@\d)*)", line)
                if m and ("@9" in m.group(3) or not m.group(3).strip()):
                    out[cur][m.group(1)] = int(m.group(2), 0)
            elif not line.startswith("\t"):
                cur = None
    return out


@scenario
def backend_names_real():
    """Attribute, type, descriptor and knob names as the installed cuDNN headers define them: the API description
    agrees value by value, and the spy decodes a program compiled against those headers with the same names."""
    need_real()
    inc, cc = cudnn_header(), shutil.which("cc") or shutil.which("gcc")
    if not inc or not cc:
        print("no cudnn.h or no C compiler: skipped")
        sys.exit(77)
    enums = ("cudnnBackendAttributeName_t", "cudnnBackendAttributeType_t", "cudnnBackendDescriptorType_t",
             "cudnnBackendKnobType_t", "cudnnBackendHeurMode_t", "cudnnDataType_t")
    text = ""
    for h in ("cudnn_graph.h", "cudnn_graph_v9.h"):
        if os.path.exists(os.path.join(inc, h)):
            with open(os.path.join(inc, h)) as f:
                text = f.read()
            break
    names = {}
    for body, name in re.findall(r"typedef enum\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        if name in enums:
            names[name] = re.findall(r"^\s*(CUDNN_\w+)", body, re.M)
    check(sorted(names) == sorted(enums) and len(names["cudnnBackendAttributeName_t"]) > 250,
          "the enums found in the header", repr({k: len(v) for k, v in names.items()}))
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "names.c")
        with open(src, "w") as f:
            f.write("#include <stdio.h>\n#include <stdint.h>\n#include <cudnn.h>\n"
                    "int main(int argc, char **argv) {\n")
            for e, vals in sorted(names.items()):
                for v in vals:
                    f.write('\tprintf("%s %s %%lld\\n", (long long)%s);\n' % (e, v, v))
            # The decoding check: a tensor described with the header's own constants, set through the spy.
            f.write("""
	if (argc > 1) {
		cudnnBackendDescriptor_t t = NULL;
		cudnnDataType_t dt = CUDNN_DATA_HALF;
		int64_t dims[4] = {2, 3, 4, 5}, strides[4] = {60, 20, 5, 1}, uid = 7, align = 16;
		_Bool virt = 1;
		cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
		cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
		printf("finalize %d\\n", (int)cudnnBackendFinalize(t));
	}
	return 0;
}
""")
        exe = os.path.join(d, "names")
        c = subprocess.run([cc, "-I", inc, src, "-o", exe, "-L", REAL, "-l:libcudnn.so.9"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        check(c.returncode == 0, "compiled against %s/cudnn.h" % inc, c.stdout)
        out = run([exe], {"LD_LIBRARY_PATH": REAL}).stdout
        header = {}
        for line in out.splitlines():
            e, n, v = line.split()
            header.setdefault(e, {})[n] = int(v)
        api = api_enums(enums)
        wrong = ["%s %s: header %d, description %r" % (e, n, v, api.get(e, {}).get(n))
                 for e in sorted(header) for n, v in sorted(header[e].items()) if api.get(e, {}).get(n) != v]
        check(not wrong, "every header value is in the API description, the same", *wrong[:20])
        p = run([exe, "decode"], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD,
                                  "CUDNNSPY_TRACE": "cudnnBackend*"})
        check("finalize 0" in p.stdout, "the tensor finalizes", p.stdout)
        sets = events(p.records, "call", "cudnnBackendSetAttribute")
        check([(s["args"]["attributeName"], s["args"]["attributeType"]) for s in sets] == [
            ("CUDNN_ATTR_TENSOR_DATA_TYPE", "CUDNN_TYPE_DATA_TYPE"), ("CUDNN_ATTR_TENSOR_DIMENSIONS", "CUDNN_TYPE_INT64"),
            ("CUDNN_ATTR_TENSOR_STRIDES", "CUDNN_TYPE_INT64"), ("CUDNN_ATTR_TENSOR_UNIQUE_ID", "CUDNN_TYPE_INT64"),
            ("CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT", "CUDNN_TYPE_INT64"),
            ("CUDNN_ATTR_TENSOR_IS_VIRTUAL", "CUDNN_TYPE_BOOLEAN")], "names decoded as the header spells them",
              repr([s["args"] for s in sets]))
        check([s["args"]["arrayOfElements"]["values"] for s in sets] == [
            ["CUDNN_DATA_HALF"], [2, 3, 4, 5], [60, 20, 5, 1], [7], [16], [True]], "values decoded by type",
              repr([s["args"]["arrayOfElements"] for s in sets]))
        create = only(events(p.records, "call", "cudnnBackendCreateDescriptor"), "create")
        check(create["args"]["descriptorType"] == "CUDNN_BACKEND_TENSOR_DESCRIPTOR", "descriptor type", repr(create))
        fin = only(events(p.records, "call", "cudnnBackendFinalize"), "finalize")
        check(fin["args"]["descriptor"]["type"] == "CUDNN_BACKEND_TENSOR_DESCRIPTOR" and
              fin["args"]["descriptor"]["finalized"] is True, "the descriptor's type remembered", repr(fin))


@scenario
def all_functions():
    """Every function of the API description called once, after a legacy and a graph convolution: the summary
    record lists each one, the algo and heuristics records before it are whole, nothing is dropped, and each
    failure line on stderr is whole, with the most recent calls and the record file at its end."""
    p = run([prog("all-functions")], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "CUDNNSPY_FLIGHT": "256"})
    called = re.findall(r"^called (\S+)$", p.stdout, re.M)
    stubs = re.findall(r"^stub (\S+)$", p.stdout, re.M)
    check(re.search(r"^%d functions called, 0 missing$" % (len(called) + len(stubs)), p.stdout, re.M) and
          len(called) > 250 and len(stubs) < 10, "every function of the description called", p.stdout[-2000:])
    recs = only_file(p)
    summary = recs[-1]
    check(summary["event"] == "summary" and summary["dropped"] == 0, "the summary record is the last, none dropped",
          repr([r["event"] for r in recs[-5:]]), p.stderr[-3000:])
    listed = {f["fn"]: f for f in summary["functions"]}
    check(all(fn in listed and listed[fn]["calls"] >= 1 for fn in called), "each function listed",
          repr(sorted(set(called) - set(listed))))
    check({a["api"] for a in events(p.records, "algo")} == {"legacy", "graph"} and
          len(events(p.records, "heuristics")) == 1, "the algo and heuristics records before it",
          repr([r["event"] for r in recs]))
    path = list(p.records)[0]
    lines = [l for l in p.stderr.splitlines() if " | after " in l]
    check(len(lines) > 20, "failure lines on stderr", p.stderr[-3000:])
    for l in lines:
        m = re.match(r"cudnnspy: (\w+)\(", l)
        check(m and l.endswith(path) and " | record in " in l, "a whole failure line, ending with the record file",
              l)
        # The call just before it is listed last: a long list loses its oldest calls, never its newest.
        prev = called[called.index(m.group(1)) - 1] if m.group(1) in called[1:] else None
        check(prev is None or re.search(r"[ ,]%s(=\d+)? \| record in " % prev, l), "the newest recent call kept",
              l)


def desc_id(arg):
    """The id of a descriptor argument or out-value: "tensor#3"."""
    if isinstance(arg, dict):
        return arg.get("id") or arg.get("value")
    return arg


@scenario
def destroy_ids():
    """A traced Destroy names the object it destroys (the id its Create gave it, with its type for a backend
    descriptor), never a fresh id; and a later Create gets a new id."""
    trace = {"CUDNNSPY_TRACE": "cudnnCreate* cudnnDestroy* cudnnBackendCreateDescriptor cudnnBackendDestroyDescriptor"}
    for name in ("conv-legacy", "conv-graph"):
        env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
        env.update(trace)
        p = run([prog(name)], env)
        calls = [r for r in events(p.records, "call")]
        created, destroyed, types = [], [], {}
        for r in calls:
            if r["fn"].startswith("cudnnCreate") or r["fn"] == "cudnnBackendCreateDescriptor":
                out = [v for k, v in r["args"].items() if isinstance(v, dict) and "value" in v]
                created += [desc_id(v) for v in out]
                if r["fn"] == "cudnnBackendCreateDescriptor":
                    types[desc_id(out[0])] = r["args"]["descriptorType"]
            elif r["fn"].startswith("cudnnDestroy") or r["fn"] == "cudnnBackendDestroyDescriptor":
                arg = list(r["args"].values())[0]
                destroyed.append(desc_id(arg))
                # Variant packs are not kept (docs/output-format.md): only their id.
                want = types.get(desc_id(arg))
                check(r["fn"] != "cudnnBackendDestroyDescriptor" or want == "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR"
                      or arg.get("type") == want, "the destroyed descriptor's type", repr(r), want)
        check(destroyed and len(created) >= len(destroyed), "%s: creates and destroys traced" % name,
              repr(created), repr(destroyed))
        check(all(d in created for d in destroyed) and len(set(destroyed)) == len(destroyed),
              "%s: each destroy names an object created before" % name, repr(created), repr(destroyed))


@scenario
def attn_params_real():
    """cudnnSetAttnDescriptor's 20 parameters are all remembered, as cuDNN's own log shows the descriptor."""
    p, fails, log = odd_run()
    f = only(fails.get("cudnnGetMultiHeadAttnBuffers", []), "failure of cudnnGetMultiHeadAttnBuffers")
    kept = f["args"]["attnDesc"]["set"]["args"]
    fields = only(logged(log, "cudnnGetMultiHeadAttnBuffers"), "logged call")["attnDesc"]
    # cuDNN's log names computePrec mathPrec.
    names = {"mathPrec": "computePrec"}
    check(len(fields) == 19 and len(kept) == 20, "every field in both", repr(fields), repr(kept))
    for k, v in fields.items():
        check(log_agrees(kept.get(names.get(k, k)), v), "attnDesc %s: cuDNN says %s" % (k, v), repr(kept))


# How cuDNN's log names a backend tensor's attributes.
LOG_TENSOR_ATTRS = {"type": "CUDNN_ATTR_TENSOR_DATA_TYPE", "dimA": "CUDNN_ATTR_TENSOR_DIMENSIONS",
                    "strideA": "CUDNN_ATTR_TENSOR_STRIDES", "uid": "CUDNN_ATTR_TENSOR_UNIQUE_ID",
                    "alignmentInBytes": "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT"}


@scenario
def partial_read_back_real():
    """cudnnBackendGetAttribute asking for fewer values than were set (2 of 4 strides) leaves the remembered
    attribute whole: the descriptor shows what cuDNN's own log shows."""
    p, fails, log = odd_run()
    check("strides read: count 2, 60 20 0 0" in p.stdout, "cuDNN gave two strides", p.stdout)
    f = only(fails.get("cudnnBackendSetAttribute", []), "failure of cudnnBackendSetAttribute")
    attrs = f["args"]["descriptor"]["attrs"]
    fields = logged(log, "cudnnBackendSetAttribute")[-1]["descriptor"]
    for k, name in LOG_TENSOR_ATTRS.items():
        check(log_agrees(attrs.get(name), fields[k]), "%s: cuDNN says %s" % (name, fields[k]), repr(attrs))


@scenario
def transform_real():
    """cudnnSetTensorTransformDescriptor: foldA has nbDims-2 elements (read no further, at the Set and in the
    out-values of the Get), and the direction is remembered as cuDNN keeps it (any value but FOLD is UNFOLD)."""
    p, fails, log = odd_run({"CUDNNSPY_TRACE": "cudnn*TensorTransformDescriptor"})
    check("fold 2 3 9 9 direction 1" in p.stdout, "cuDNN wrote two fold values and kept direction 1", p.stdout)
    f = only(fails.get("cudnnTransformTensorEx", []), "failure of cudnnTransformTensorEx")
    kept = f["args"]["transDesc"]["set"]["args"]
    fields = only(logged(log, "cudnnTransformTensorEx"), "logged call")["transDesc"]
    nb = kept["nbDims"]
    check(kept["foldA"] == [2, 3] and kept["padBeforeA"] == [0, 1, 2, 3], "the arrays as passed", repr(kept))
    directions = {"CUDNN_TRANSFORM_FOLD": "0", "CUDNN_TRANSFORM_UNFOLD": "1"}
    check(directions.get(kept["direction"]) == fields["direction"], "direction: cuDNN says %s" % fields["direction"],
          repr(kept))
    check(log_agrees(kept["destFormat"], fields["destFormat"]), "destFormat", repr(kept), repr(fields))
    # cuDNN keeps 8 pads and 6 folds whatever nbDims, the rest zero.
    for k, n in (("padBeforeA", nb), ("padAfterA", nb), ("foldA", nb - 2)):
        vals = fields[k].strip("[]").split(",")
        check(log_agrees(kept[k], "[%s]" % ",".join(vals[:n])) and set(vals[n:]) <= {"0"},
              "%s: cuDNN says %s" % (k, fields[k]), repr(kept))
    get = only(events(p.records, "call", "cudnnGetTensorTransformDescriptor"), "traced Get")
    check(get["args"]["foldA"]["values"] == [2, 3] and get["args"]["padBeforeA"]["values"] == [0, 1, 2, 3] and
          get["args"]["direction"]["value"] == "CUDNN_TRANSFORM_UNFOLD", "the Get's out-values", repr(get["args"]))
    sets = only(events(p.records, "call", "cudnnSetTensorTransformDescriptor"), "traced Set")
    check(sets["args"]["direction"] == 2 and sets["args"]["foldA"]["values"] == [2, 3],
          "the Set's arguments as passed", repr(sets["args"]))


@scenario
def negative_enum_real():
    """Enums are signed: (cudnnStatus_t)-1 and (cudnnTensorFormat_t)-1 are recorded as -1, as cuDNN logs them."""
    p, fails, log = odd_run({"CUDNNSPY_TRACE": "cudnnGetErrorString"})
    call = only(events(p.records, "call", "cudnnGetErrorString"), "traced cudnnGetErrorString")
    logged_status = only(logged(log, "cudnnGetErrorString"), "logged call")["status"]
    check(call["args"]["status"] == -1 and log_agrees(call["args"]["status"], logged_status),
          "status -1: cuDNN says %s" % logged_status, repr(call))
    f = only(fails.get("cudnnSetTensor4dDescriptor", []), "failure of cudnnSetTensor4dDescriptor")
    check(f["args"]["format"] == -1, "format -1", repr(f["args"]))


@scenario
def scaling_real():
    """alpha and beta are decoded as cuDNN reads them: double for a double output tensor, float otherwise, and
    agree with cuDNN's own log; in failure records too."""
    p, fails, log = odd_run()
    adds = [f for f in fails.get("cudnnAddTensor", []) if f["args"]["alpha"] is not None]
    entries = [a for a in logged(log, "cudnnAddTensor") if a.get("alpha") != "NULL_PTR"]
    check(len(adds) == 2 and len(entries) == 2, "two calls with scaling factors", repr(adds), repr(entries))
    for f, e, want in zip(adds, entries, ((1.5, 0.25), (2.5, -0.125))):
        got = tuple(f["args"][k].get("value") if isinstance(f["args"][k], dict) else None for k in ("alpha", "beta"))
        check(got == want, "the values passed", repr(f["args"]), repr(want))
        for k in ("alpha", "beta"):
            check(log_agrees(f["args"][k]["value"], e[k]), "%s: cuDNN says %s" % (k, e[k]), repr(f["args"]))


@scenario
def oracle_real():
    """cuDNN's own API log as the oracle: programs that call the host-side API of the real cuDNN (every legacy
    descriptor kind set and read back, odd values, failing calls, the graph API up to plans) run traced by the spy and
    logged by cuDNN in one process; every argument, array element, status and descriptor field both show
    agrees, apart from cuDNN's documented quirks (oracle.py); every descriptor field cuDNN shows, the spy shows
    too or says why it has no value (never set, a failed Set, written by cuDNN); each program's output is the same
    without either."""
    need_real()
    oracle.load_api(os.path.join(HERE, "..", "..", "shim", "api", "cudnn.api"))
    res = oracle.Result()
    for name in ("decode-all", "decode-odd", "folded-conv", "conv-legacy", "conv-graph", "host-sweep", "call-every"):
        plain = run([prog(name)], {"LD_LIBRARY_PATH": REAL})
        d = tempfile.mkdtemp(prefix="cudnnspy-oracle-")
        try:
            p = run([prog(name)], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_STDERR": "none",
                                   "CUDNNSPY_TRACE": "*", "CUDNN_LOGLEVEL_DBG": "3",
                                   "CUDNN_LOGDEST_DBG": os.path.join(d, "cudnn.log")})
            log = oracle.read_log(os.path.join(d, "cudnn.log"))
        finally:
            shutil.rmtree(d, ignore_errors=True)
        check(p.stdout == plain.stdout, "%s: the output unchanged" % name, plain.stdout, p.stdout)
        recs = [r for r in only_file(p) if r["event"] in ("call", "failure")]
        before = len(res.mismatches)
        oracle.compare(recs, log, res)
        check(len(res.mismatches) == before, "%s: the spy and cuDNN's log agree" % name, *res.mismatches[before:30])
    print(res.summary())
    print("left aside: %s" % ", ".join("%s %d" % kv for kv in sorted(res.skipped.items())))
    print("descriptor fields without a value: %s" % ", ".join("%s %d" % kv for kv in sorted(res.fields_unknown.items())))
    # Every descriptor field cuDNN's log shows, the spy shows too (or says why it has no value: never set, a
    # failed Set, written by cuDNN, or one of oracle.FIELD_QUIRKS).
    check(not res.unshown, "every descriptor field cuDNN shows, the spy shows: %d do not"
          % sum(res.unshown.values()), *res.unshown_list())
    check(res.calls >= 700 and len(res.functions) >= 200 and res.args >= 2500 and res.fields >= 2900,
          "as much compared as before", res.summary())


def traced_args(name, trace="*"):
    """{fn: [args of each call or failure record]} of a program run traced on the fake cuDNN."""
    p = run([prog(name)], {"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE9, "CUDNNSPY_STDERR": "none",
                           "CUDNNSPY_TRACE": trace})
    out = {}
    for r in only_file(p):
        if r["event"] in ("call", "failure"):
            out.setdefault(r["fn"], []).append(r["args"])
    return out


@scenario
def descriptor_state():
    """What traced calls show of a descriptor beside its shape (the fields cuDNN's own log shows): a descriptor
    created and never set says so; a convolution's settings never made show cuDNN's defaults, an RNN's clip
    its reset; an RNN data descriptor's padding fill by value; backend descriptors with their attributes, and
    variant packs with their pointers when their creation is traced (otherwise only their id)."""
    calls = traced_args("host-sweep")
    conv = calls["cudnnGetConvolutionNdDescriptor"][0]["convDesc"]
    check(conv.get("mathType") == "CUDNN_DEFAULT_MATH" and conv.get("groupCount") == 1 and
          conv.get("reorderType") == "CUDNN_DEFAULT_REORDER", "a convolution's settings never made: defaults",
          repr(conv))
    conv = calls["cudnnGetConvolutionGroupCount"][0]["convDesc"]
    check(conv.get("groupCount") == 2 and conv.get("mathType") == "CUDNN_FMA_MATH", "the settings made", repr(conv))
    bn = calls["cudnnDeriveBNTensorDescriptor"][0]["derivedBnDesc"]
    check(bn.get("unset") is True and "desc" not in bn, "a tensor created and never set says so", repr(bn))
    data = calls["cudnnGetRNNDataDescriptor"][0]["rnnDataDesc"]
    check(data["set"]["args"].get("paddingFill") == 0.5, "the padding fill kept by value", repr(data))
    rnn = calls["cudnnGetRNNDescriptor_v8"][0]["rnnDesc"]
    check(rnn.get("clipMode") == "CUDNN_RNN_CLIP_NONE" and rnn.get("lclip") == 0, "no clip before SetClip",
          repr(rnn))
    fin = [a["descriptor"] for a in calls["cudnnBackendFinalize"] if a["descriptor"].get("attrs")]
    check(fin and all(a.get("type") for a in fin), "traced backend calls show the attributes",
          repr(calls["cudnnBackendFinalize"][:3]))
    graph = traced_args("conv-graph")
    packs = [a["variantPack"] for a in graph["cudnnBackendExecute"]]
    check(packs and all(p.get("attrs", {}).get("CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS") == ["0x1000", "0x2000",
                                                                                            "0x3000"]
                        for p in packs), "a variant pack's pointers", repr(packs))
    graph = traced_args("conv-graph", "cudnnBackendExecute")
    packs = [a["variantPack"] for a in graph["cudnnBackendExecute"]]
    check(packs and all(set(p) == {"id"} for p in packs), "not kept when its creation is not traced", repr(packs))


@scenario
def derived_real():
    """A descriptor cuDNN writes itself (cudnnDeriveBNTensorDescriptor) keeps no stale state: the spy no longer
    claims the shape the program set before, and says which call wrote it."""
    p, fails, log = odd_run()
    f = [r for r in fails.get("cudnnActivationForward", []) if r["args"]["xDesc"].get("filled_by")]
    x = only(f, "failure on the derived descriptor")["args"]["xDesc"]
    check("desc" not in x and "set" not in x and x["filled_by"] == "cudnnDeriveBNTensorDescriptor",
          "no stale state, and the call that wrote it", repr(x))
    entry = [a for a in logged(log, "cudnnActivationForward") if a.get("srcDesc", {}).get("dimA") == "[1,6,1,1]"]
    check(len(entry) == 1, "cuDNN's own log shows the derived shape", repr(logged(log, "cudnnActivationForward")))


@scenario
def rnn_clip_real():
    """An RNN descriptor's clip settings (cudnnRNNSetClip_v8) are kept beside its shape, and forgotten when a
    shape Set resets them (back to CUDNN_RNN_CLIP_NONE), as cuDNN's own log shows the descriptor."""
    p, fails, log = odd_run()
    recs = fails.get("cudnnGetRNNWeightSpaceSize", [])
    entries = logged(log, "cudnnGetRNNWeightSpaceSize")
    check(len(recs) == 2 and len(entries) == 2, "two failing calls on the RNN descriptor", repr(recs), repr(entries))
    first, second = (r["args"]["rnnDesc"] for r in recs)
    check(entries[0]["rnnDesc"]["clipMode"].startswith("CUDNN_RNN_CLIP_NONE") and
          first.get("clipMode") == "CUDNN_RNN_CLIP_NONE" and first.get("lclip") == 0 and
          first["set"]["fn"] == "cudnnSetRNNDescriptor_v8", "no clip after the shape's Set, as cuDNN resets it",
          repr(first))
    fields = entries[1]["rnnDesc"]
    for k in ("clipMode", "clipNanOpt", "lclip", "rclip"):
        check(log_agrees(second.get(k), fields[k]), "%s: cuDNN says %s" % (k, fields[k]), repr(second))
    check(second["set"]["fn"] == "cudnnSetRNNDescriptor_v8", "the shape kept", repr(second))


if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
