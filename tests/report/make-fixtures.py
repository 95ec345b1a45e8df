#!/usr/bin/env python3
"""Writes the hand-made record sets under tests/report/fixtures/ (committed).

usage: make-fixtures.py [DIR]      (default: fixtures/ next to this script)

Each set is what the spy would write for a small, made-up job, in the field
order the library uses (docs/output-format.md), with round numbers for times
and ids so that the golden reports are easy to check by eye:

  single/      one process: traced convolutions on two threads, failures of two kinds
  ranks-lib/   four ranks on two hosts; rank 2 loaded another cuDNN (path and version)
  ranks-fail/  four ranks, one cuDNN; a failure on rank 1 only, one on every rank
  run-8907/, run-91900/   the same job under cuDNN 8.9.7 and 9.19.0, for --compare
  gpu/         summary and call records with gpu_ns
  no-summary/  a process killed before its summary: counts come from the records
  algo/        a run with "algo" records (the hook for the signature table)
  broken/      garbage, wrong types, a cut last line, schema 2
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def line(obj):
    return json.dumps(obj, separators=(",", ":")) + "\n"


def header(program, pid, host, rank, lib_path, version, start_mono=1_000_000_000_000, schema=1,
           start_unix=1_700_000_000_000_000_000):
    cudart = 12080 if version >= 90000 else 11080
    return {"event": "header", "schema": schema, "spy": "0.1.0", "mode": "preload", "program": program,
            "argv": [program, "--epochs", "1"], "pid": pid, "ppid": pid - 1, "host": host, "rank": rank,
            "start_unix_ns": start_unix, "start_mono_ns": start_mono,
            "library": None if lib_path is None else
            {"path": lib_path, "version": version, "cudart": cudart, "how": "loaded by the program"}}


def call(fn, tid, t, dur, args, status=0, status_name="CUDNN_STATUS_SUCCESS", **extra):
    rec = {"event": "call", "fn": fn, "status": status, "status_name": status_name, "tid": tid, "t_ns": t,
           "dur_ns": dur, "args": args}
    rec.update(extra)
    return rec


def failure(fn, tid, t, dur, args, status, status_name, message, recent, module="/opt/app/bin/train"):
    rec = call(fn, tid, t, dur, args, status, status_name)
    rec["event"] = "failure"
    rec["message"] = message
    rec["recent"] = [{"fn": f, "status": s} for f, s in recent]
    rec["stack"] = [
        {"module": module, "offset": "0x11b8", "symbol": "run_layer"},
        {"module": "/usr/lib/libtorch_cuda.so", "offset": "0x2a4f10", "symbol": None},
        {"module": "/lib/x86_64-linux-gnu/libc.so.6", "offset": "0x27305", "symbol": "__libc_start_main"},
    ]
    return rec


def summary(fns, calls=None, failures=None, internal=0, dropped=0):
    """fns: (fn, calls, failures, total_ns, p50, p99[, gpu_ns])"""
    out = []
    for f in fns:
        d = {"fn": f[0], "calls": f[1], "failures": f[2], "internal": 0, "timed": f[1], "total_ns": f[3],
             "min_ns": f[4] // 2, "max_ns": f[5] * 2, "p50_ns": f[4], "p99_ns": f[5]}
        if len(f) > 6:
            d["gpu_ns"] = f[6]
        out.append(d)
    return {"event": "summary", "calls": calls if calls is not None else sum(f[1] for f in fns),
            "failures": failures if failures is not None else sum(f[2] for f in fns),
            "internal": internal, "dropped": dropped, "functions": out}


X = {"id": "tensor#1", "desc": "float NCHW 32x64x56x56"}
W = {"id": "filter#1", "desc": "float NCHW 64x64x3x3"}
CONV = {"id": "convolution#1", "desc": "pad 1x1 stride 1x1 dilation 1x1 cross-correlation float"}


def conv_args(bad=False):
    return {"handle": "handle#1", "alpha": {"ptr": "0x7ffd0010", "value": 1}, "xDesc": X, "x": "0x7f0000000000",
            "wDesc": W, "w": "0x7f0000100000", "convDesc": CONV,
            "algo": "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM" if not bad else 99,
            "workSpace": None, "workSpaceSizeInBytes": 0, "beta": {"ptr": "0x7ffd0018", "value": 0},
            "yDesc": {"id": "tensor#2", "desc": "float NCHW 32x64x56x56"}, "y": "0x7f0000200000"}


def job(pid, host, rank, lib_path, version, fail_rank_only=False, common_failure=False, conv_ns=250_000,
        start_mono=1_000_000_000_000, program="train"):
    """One rank of a small training job; returns the lines."""
    t = start_mono + 1_000
    recs = [header(program, pid, host, rank, lib_path, version, start_mono=start_mono)]
    tids = [pid, pid + 7]
    n_conv = 0
    for step in range(4):
        tid = tids[step % 2]
        recs.append(call("cudnnConvolutionForward", tid, t, conv_ns + 1_000 * step, conv_args()))
        n_conv += 1
        t += 400_000
    fails = []
    if common_failure:
        recs.append(failure("cudnnGetConvolutionForwardWorkspaceSize", pid, t, 3_000,
                            {"handle": "handle#1", "xDesc": X, "wDesc": W, "convDesc": CONV,
                             "yDesc": {"id": "tensor#2", "desc": "float NCHW 32x64x56x56"},
                             "algo": "CUDNN_CONVOLUTION_FWD_ALGO_FFT", "sizeInBytes": {"ptr": "0x7ffd0020"}},
                            3000, "CUDNN_STATUS_NOT_SUPPORTED", "FFT needs a 2D convolution with stride 1",
                            [("cudnnConvolutionForward", 0)] * 2))
        fails.append(("cudnnGetConvolutionForwardWorkspaceSize", 3_000))
        t += 10_000
    if fail_rank_only:
        for k in range(3):
            recs.append(failure("cudnnConvolutionForward", tids[1], t, 5_000 + k, conv_args(bad=True),
                                2000, "CUDNN_STATUS_BAD_PARAM", "algo is not a valid cudnnConvolutionFwdAlgo_t",
                                [("cudnnConvolutionForward", 0), ("cudnnGetConvolutionForwardWorkspaceSize", 0)]))
            fails.append(("cudnnConvolutionForward", 5_000 + k))
            t += 10_000
    conv_fail = sum(1 for f in fails if f[0] == "cudnnConvolutionForward")
    ws_fail = sum(1 for f in fails if f[0] != "cudnnConvolutionForward")
    fns = [("cudnnConvolutionForward", n_conv + conv_fail, conv_fail,
            sum(conv_ns + 1_000 * s for s in range(4)) + sum(d for f, d in fails if f == "cudnnConvolutionForward"),
            conv_ns + 1_024, conv_ns + 3_072),
           ("cudnnSetTensor4dDescriptor", 2, 0, 1_600, 768, 1_024),
           ("cudnnCreate", 1, 0, 150_000_000, 150_000_000, 150_000_000)]
    if ws_fail:
        fns.append(("cudnnGetConvolutionForwardWorkspaceSize", ws_fail, ws_fail, 3_000, 3_000, 3_000))
    recs.append(summary(fns))
    return recs


def write(path, recs, raw_tail=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in recs:
            f.write(r if isinstance(r, str) else line(r))
        f.write(raw_tail)


def name(program, host, pid, rank):
    return "%s.%s.%d%s.cudnnspy.jsonl" % (program, host, pid, "" if rank is None else ".r%d" % rank)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "fixtures")
    lib9 = "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"

    # single: one process, failures of two kinds (one twice) on two threads.
    recs = [header("train", 4242, "node01", None, lib9, 91900)]
    t = 1_000_000_001_000
    recs.append(failure("cudnnCreate", 4242, t - 5_000, 150_000_000, {"handle": {"ptr": "0x7ffd0000"}}, 1001,
                        "CUDNN_STATUS_NOT_INITIALIZED", "cudaGetDeviceCount(&count) != cudaSuccess", []))
    recs.append(call("cudnnCreate", 4242, t + 200_000_000, 90_000_000, {"handle": {"ptr": "0x7ffd0000",
                                                                                    "value": "handle#1"}}))
    recs.append(call("cudnnSetTensor4dDescriptor", 4242, t + 300_000_000, 900,
                     {"tensorDesc": X, "format": "CUDNN_TENSOR_NCHW", "dataType": "CUDNN_DATA_FLOAT",
                      "n": 32, "c": 64, "h": 56, "w": 56}))
    for k in range(3):
        recs.append(call("cudnnConvolutionForward", 4242 + k % 2 * 7, t + 400_000_000 + k * 1_000_000,
                         250_000 + k * 1_000, conv_args()))
    for k in range(2):
        recs.append(failure("cudnnConvolutionForward", 4249, t + 500_000_000 + k * 1_000_000, 6_000,
                            conv_args(bad=True), 2000, "CUDNN_STATUS_BAD_PARAM",
                            "algo is not a valid cudnnConvolutionFwdAlgo_t",
                            [("cudnnCreate", 1001), ("cudnnCreate", 0), ("cudnnSetTensor4dDescriptor", 0)] +
                            [("cudnnConvolutionForward", 0)] * (3 + k)))
    recs.append(summary([("cudnnCreate", 2, 1, 240_000_000, 90_177_536, 150_994_944),
                         ("cudnnConvolutionForward", 5, 2, 765_000, 251_904, 253_952),
                         ("cudnnSetTensor4dDescriptor", 1, 0, 900, 896, 896)]))
    write(os.path.join(out, "single", name("train", "node01", 4242, None)), recs)

    # ranks-lib: rank 2 loaded another cuDNN.
    for rank in range(4):
        host = "node01" if rank < 2 else "node02"
        pid = 100 + rank
        lib, ver = (lib9, 91900) if rank != 2 else ("/opt/cudnn-9.1/lib/libcudnn.so.9", 90100)
        write(os.path.join(out, "ranks-lib", name("train", host, pid, rank)),
              job(pid, host, rank, lib, ver, conv_ns=250_000 if rank != 2 else 400_000))

    # ranks-fail: rank 1 fails three times, every rank fails once the same way.
    for rank in range(4):
        host = "node01" if rank < 2 else "node02"
        pid = 200 + rank
        write(os.path.join(out, "ranks-fail", name("train", host, pid, rank)),
              job(pid, host, rank, lib9, 91900, fail_rank_only=rank == 1, common_failure=True))

    # compare: the same job on cuDNN 8.9.7 and 9.19.0, two ranks each.
    for ver, lib, conv in ((8907, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", 400_000), (91900, lib9, 250_000)):
        for rank in range(2):
            pid = 300 + rank if ver == 8907 else 400 + rank
            recs = job(pid, "node01", rank, lib, ver, conv_ns=conv)
            if ver == 91900:
                # A function the 8.9.7 run never called.
                s = recs[-1]
                s["functions"].append({"fn": "cudnnBackendExecute", "calls": 4, "failures": 0, "internal": 0,
                                       "timed": 4, "total_ns": 40_000, "min_ns": 9_000, "max_ns": 11_000,
                                       "p50_ns": 10_240, "p99_ns": 11_264})
                s["calls"] += 4
            write(os.path.join(out, "run-%d" % ver, name("train", "node01", pid, rank)), recs)

    # gpu: gpu_ns in the summary for one function, in call records for another.
    recs = [header("infer", 500, "node03", 0, lib9, 91900)]
    t = 1_000_000_002_000
    for k in range(3):
        recs.append(call("cudnnConvolutionForward", 500, t + k * 1_000_000, 20_000, conv_args()))
        recs.append(call("cudnnBackendExecute", 500, t + k * 1_000_000 + 30_000, 15_000,
                         {"handle": "handle#1", "executionPlan": "0x55500000", "variantPack": "0x55500100"},
                         gpu_ns=700_000))
    recs.append(summary([("cudnnConvolutionForward", 3, 0, 60_000, 20_480, 20_480, 1_500_000),
                         ("cudnnBackendExecute", 3, 0, 45_000, 15_360, 15_360)]))
    write(os.path.join(out, "gpu", name("infer", "node03", 500, 0)), recs)

    # no-summary: killed after five traced calls and a failure; the last line is whole.
    recs = [header("train", 600, "node01", 3, lib9, 91900)]
    t = 1_000_000_003_000
    for k, d in enumerate((1_000, 2_000, 4_000, 8_000, 100_000)):
        recs.append(call("cudnnConvolutionForward", 600, t + k * 200_000, d, conv_args()))
    recs.append(failure("cudnnConvolutionForward", 600, t + 2_000_000, 3_000, conv_args(bad=True), 2000,
                        "CUDNN_STATUS_BAD_PARAM", "algo is not a valid cudnnConvolutionFwdAlgo_t",
                        [("cudnnConvolutionForward", 0)] * 5))
    write(os.path.join(out, "no-summary", name("train", "node01", 600, 3)), recs)

    # algo: a run with "algo" records (docs/output-format.md), one of a shape the reader only counts.
    sig = ("fwd x=float:32x64x56x56:NCHW w=float:64x64x3x3:NCHW y=float:32x64x56x56:NCHW pad=1x1 stride=1x1 "
           "dilation=1x1 mode=cross_correlation compute=float groups=1 math=default_math")
    for ver, lib in ((91900, lib9),):
        recs = job(700, "node01", 0, lib, ver)
        recs.insert(3, {"event": "algo", "fn": "cudnnFindConvolutionForwardAlgorithm",
                        "signature": {"x": "float NCHW 32x64x56x56"}, "algo": "CUDNN_CONVOLUTION_FWD_ALGO_FFT",
                        "time_ms": 0.25})
        recs.insert(-1, {"event": "algo", "api": "legacy", "op": "fwd", "signature": sig,
                         "algo": "CUDNN_CONVOLUTION_FWD_ALGO_FFT", "engine": None, "knobs": None, "calls": 4,
                         "failures": 0, "timed": 4, "host_ns": 1006000, "gpu_timed": 0, "gpu_ns": 0,
                         "workspace": {"min": 4096, "max": 4096}, "workspace_needed": 4096, "search": None,
                         "plan": None, "config": None, "graph": None, "heuristics": None})
        write(os.path.join(out, "algo", name("train", "node01", 700, 0)), recs)

    # broken: everything a reader must survive, in two files.
    recs = job(800, "node01", 0, lib9, 91900)
    good = [line(r) for r in recs]
    bad = [good[0], good[1],
           "this is not JSON at all\n",
           "{\"event\":\"call\",\"fn\":\"cudnnConvolutionForward\",\"status\":0,\"tid\":1,\"t_ns\":\n",
           "[1,2,3]\n",
           "{\"no_event\":true}\n",
           "{\"event\":\"call\",\"fn\":42,\"status\":\"zero\",\"tid\":\"x\",\"t_ns\":null,\"dur_ns\":-5,\"args\":[]}\n",
           "{\"event\":\"failure\",\"fn\":\"cudnnX\",\"status\":\"bad\"}\n",
           "\n",
           "{\"event\":\"summary\",\"functions\":\"none\"}\n"] + good[2:] + \
          ["{\"event\":\"call\",\"fn\":\"cudnnConvolutionForward\",\"status\":0,\"status_name\":\"CUDNN_STA"]
    write(os.path.join(out, "broken", name("train", "node01", 800, 0)), bad)
    recs = job(801, "node01", 1, lib9, 91900)
    recs[0]["schema"] = 2
    recs[0]["new_field"] = {"what": "a later version's field"}
    recs.insert(1, {"event": "kernel", "name": "implicit_convolve_sgemm", "gpu_ns": 1000})
    write(os.path.join(out, "broken", name("train", "node01", 801, 1)), recs)
    make_corpus(os.path.join(HERE, "corpus") if len(sys.argv) <= 2 else sys.argv[2], out)


def make_corpus(out, fixtures):
    """Seeds for fuzz-report (tests/report/corpus/): small, each a way to go wrong."""
    os.makedirs(out, exist_ok=True)
    lib9 = "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
    hdr = line(header("train", 4242, "node01", 0, lib9, 91900))
    good_call = line(call("cudnnConvolutionForward", 4242, 1_000_000_001_000, 250_000, conv_args()))
    good_fail = line(failure("cudnnConvolutionForward", 4242, 1_000_000_002_000, 6_000, conv_args(bad=True), 2000,
                             "CUDNN_STATUS_BAD_PARAM", "algo is not valid", [("cudnnCreate", 0)]))
    summ = line(summary([("cudnnConvolutionForward", 2, 1, 256_000, 250_000, 250_000)]))
    seeds = {}
    with open(os.path.join(fixtures, "single", name("train", "node01", 4242, None)), "rb") as f:
        seeds["valid-single"] = f.read()
    with open(os.path.join(fixtures, "ranks-fail", name("train", "node01", 201, 1)), "rb") as f:
        seeds["valid-rank-failures"] = f.read()
    with open(os.path.join(fixtures, "gpu", name("infer", "node03", 500, 0)), "rb") as f:
        seeds["valid-gpu"] = f.read()
    with open(os.path.join(fixtures, "algo", name("train", "node01", 700, 0)), "rb") as f:
        seeds["valid-algo"] = f.read()
    seeds["valid-small"] = (hdr + good_call + good_fail + summ).encode()
    seeds["no-summary"] = (hdr + good_call + good_call + good_fail).encode()
    seeds["truncated-last-line"] = (hdr + good_call + good_fail[:100]).encode()
    seeds["truncated-mid-string"] = (hdr + good_call[:37]).encode()
    seeds["garbage"] = b"hello\n\x00\x01\x02\n}{\n{{{{\n,,,\n" + hdr.encode() + b"\x7fELF\x02\x01\n"
    seeds["empty"] = b""
    seeds["only-newlines"] = b"\n\n\r\n  \n\t\n"
    seeds["crlf"] = (hdr + good_call + summ).replace("\n", "\r\n").encode()
    seeds["no-header"] = (good_call + good_fail + summ).encode()
    seeds["two-headers"] = (hdr + hdr.replace("4242", "4243") + good_call + summ).encode()
    seeds["schema-2"] = (hdr.replace('"schema":1', '"schema":2') + good_call + summ).encode()
    seeds["wrong-types"] = "".join([
        '{"event":"header","schema":"1","pid":"x","rank":[],"host":5,"library":{"path":7,"version":"9"}}\n',
        '{"event":"header","schema":1,"pid":-1,"rank":-5,"host":"h","start_unix_ns":"x","library":[]}\n',
        '{"event":"call","fn":5,"status":0}\n',
        '{"event":"call","fn":"","status":0}\n',
        '{"event":"call","fn":"cudnnA","status":0.5,"tid":"t","t_ns":[],"dur_ns":{},"args":7}\n',
        '{"event":"call","fn":"cudnnA","status":0,"tid":1,"t_ns":5,"dur_ns":-9,"args":[1,2]}\n',
        '{"event":"failure","fn":"cudnnB","status":3,"message":7,"stack":"no","recent":{"fn":"x"}}\n',
        '{"event":"failure","fn":"cudnnB","status":3,"message":null,"stack":[1,null,{"module":5}],'
        '"recent":[1,{"fn":2},{"fn":"x","status":"y"}]}\n',
        '{"event":"summary","calls":"many","functions":[1,{"fn":3},{"fn":"f","calls":-1},'
        '{"fn":"g","calls":2,"total_ns":"big","p50_ns":-4}]}\n',
        '{"event":5}\n', '{"event":null}\n', '[]\n', '"string"\n', '42\n', 'null\n', 'true\n',
    ]).encode()
    # The graph API's records, whether or not anything ran: good ones, and every field of the wrong type.
    sig = "fwd x=float:8x16x32x32:NCHW w=float:32x16x3x3:NCHW"
    seeds["wrong-types-graphs"] = "".join([
        hdr,
        '{"event":"graph","id":"backend#1","op":"fwd","signature":"%s","ops":null}\n' % sig,
        '{"event":"graph","id":5,"op":[],"signature":"%s"}\n' % sig,
        '{"event":"graph","op":"graph","signature":{"x":1}}\n',
        '{"event":"heuristics","id":"backend#2","graph":"backend#1","op":"fwd","signature":"%s",'
        '"mode":"CUDNN_HEUR_MODE_A","requested":40,"returned":3,"configs":["backend#3","backend#4","backend#5"],'
        '"engines":[12,0,null]}\n' % sig,
        '{"event":"heuristics","signature":"%s","returned":9223372036854775807,"configs":7,"engines":"x"}\n' % sig,
        '{"event":"heuristics","signature":"%s","returned":9223372036854775807}\n' % sig,
        '{"event":"plan","id":"backend#6","config":"backend#3","engine":12,"knobs":[{"type":"CUDNN_KNOB_TYPE_SPLIT_K",'
        '"value":1}],"graph":"backend#1","signature":"%s","heuristics":{"id":"backend#2","rank":0}}\n' % sig,
        '{"event":"plan","config":"backend#4","engine":"0","knobs":"none","signature":"%s","heuristics":[]}\n' % sig,
        '{"event":"plan","config":7,"engine":null,"knobs":[null,1,{"type":2,"value":"v"}],"signature":"%s"}\n' % sig,
        '{"event":"plan","engine":3,"signature":null}\n',
        '{"event":"algo","api":"graph","op":"fwd","signature":"%s","engine":12,"knobs":[{"type":'
        '"CUDNN_KNOB_TYPE_SPLIT_K","value":1}],"calls":2}\n' % sig,
    ]).encode() + b'{"event":"plan","config":"c","signature":"fwd \xff\xfe"}\n' + summ.encode()
    seeds["deep-nesting-arrays"] = (hdr + '{"event":"call","fn":"f","status":0,"args":{"a":' + "[" * 5000 +
                                    "]" * 5000 + "}}\n").encode()
    seeds["deep-nesting-args"] = (hdr + '{"event":"failure","fn":"f","status":1,"args":{"a":' +
                                  '{"x":' * 200 + "1" + "}" * 200 + ',"b":' + "[" * 200 + "]" * 200 +
                                  "}}\n").encode()
    big = "9" * 400
    seeds["huge-numbers"] = "".join([
        '{"event":"header","schema":1,"pid":9223372036854775807,"rank":-9223372036854775808,'
        '"start_unix_ns":-9223372036854775808,"start_mono_ns":9223372036854775807,"host":"h","program":"p"}\n',
        '{"event":"call","fn":"cudnnA","status":0,"tid":1,"t_ns":-9223372036854775808,'
        '"dur_ns":9223372036854775807,"args":{"n":1e400,"m":-1e400}}\n',
        '{"event":"call","fn":"cudnnA","status":0,"tid":1,"t_ns":9223372036854775807,'
        '"dur_ns":9223372036854775807,"args":{}}\n',
        '{"event":"call","fn":"cudnnA","status":0,"tid":1,"t_ns":' + big + ',"dur_ns":1,"args":{}}\n',
        '{"event":"failure","fn":"cudnnA","status":-9223372036854775808,"tid":-1,"t_ns":0,"dur_ns":0,'
        '"message":"m","args":{"x":1.5e308,"y":-0.0,"z":"nan"}}\n',
        '{"event":"summary","calls":9223372036854775807,"failures":9223372036854775807,"functions":['
        '{"fn":"cudnnA","calls":9223372036854775807,"total_ns":9223372036854775807,"gpu_ns":9223372036854775807},'
        '{"fn":"cudnnB","calls":9223372036854775807,"total_ns":9223372036854775807,"gpu_ns":9223372036854775807}]}\n',
    ]).encode()
    seeds["invalid-utf8"] = (hdr.encode() +
                             b'{"event":"failure","fn":"cudnn\xff\xfe","status":2000,"message":"bad \xc0\xaf '
                             b'\xed\xa0\x80 \xf4\x90\x80\x80","args":{}}\n' +
                             b'{"event":"call","fn":"ok","status":0,"args":{"k\xe2\x82":"\xe2\x82"}}\n' + summ.encode())
    seeds["unicode-escapes"] = (hdr + '{"event":"failure","fn":"cudnn\\u00e9\\ud83d\\ude00","status":2000,'
                                '"message":"lone \\ud800 surrogate","args":{"s":"\\u0000nul"}}\n'
                                '{"event":"failure","fn":"cudnn\\u00e9","status":2000,"message":"\\u001b[31mred'
                                '\\u001b[0m \\t tab","args":{"s":"\\u2028"}}\n').encode()
    seeds["nul-bytes"] = hdr.encode() + b'{"event":"call","fn":"a\x00b","status":0}\n\x00\x00\x00\n' + summ.encode()
    seeds["long-strings"] = (hdr + '{"event":"failure","fn":"' + "F" * 5000 + '","status":1,"message":"' +
                             "m" * 20000 + '","status_name":"' + "S" * 3000 + '","args":{"' + "k" * 3000 +
                             '":"' + "v" * 3000 + '"},"stack":[{"module":"/' + "d/" * 1000 + 'x.so",'
                             '"offset":"0x' + "f" * 500 + '","symbol":"' + "s" * 2000 + '"}]}\n').encode()
    seeds["many-groups"] = (hdr + "".join('{"event":"failure","fn":"cudnnF","status":%d,"message":"m%d"}\n'
                                          % (2000 + i % 3, i) for i in range(1100))).encode()
    seeds["many-functions"] = (hdr + "".join('{"event":"call","fn":"f%d","status":0,"dur_ns":%d}\n' % (i, i)
                                             for i in range(1100)) + summ).encode()
    seeds["many-threads"] = (hdr + "".join('{"event":"call","fn":"f","status":0,"tid":%d,"t_ns":%d,"dur_ns":1}\n'
                                           % (i, 1_000_000_000_000 + i) for i in range(300))).encode()
    seeds["chrome-clock-overflow"] = (
        '{"event":"header","schema":1,"pid":1,"start_unix_ns":9223372036854775807,'
        '"start_mono_ns":-9223372036854775807}\n'
        '{"event":"call","fn":"f","status":0,"tid":1,"t_ns":9223372036854775807,"dur_ns":5}\n'
        '{"event":"failure","fn":"f","status":1,"tid":1,"t_ns":-9223372036854775808,"dur_ns":null}\n').encode()
    seeds["descriptor-shapes"] = (hdr + '{"event":"failure","fn":"cudnnSet","status":2000,"message":"x","args":'
                                  '{"a":{"id":5},"b":{"id":"t#1","set":{"fn":7}},"c":{"id":"t#2","set":{"fn":"cudnnS",'
                                  '"args":{"n":1}}},"d":{"ptr":5},"e":{"ptr":"0x1","values":[' +
                                  ",".join(str(i) for i in range(40)) + ']},"f":{"ptr":"0x2","value":{"id":"h#1"}},'
                                  '"g":{"other":{"deep":{"deeper":[1]}}},"h":[[[[1]]]],"i":true,"j":false,'
                                  '"k":1.25}}\n').encode()
    # Two raw keys that clean to one group ("?" for each control character): one process, counted once.
    seeds["same-after-cleaning"] = (hdr + '{"event":"failure","fn":"cudnnF","status":1,"message":"a\\u0001"}\n'
                                    '{"event":"failure","fn":"cudnnF","status":1,"message":"a\\u0002"}\n'
                                    '{"event":"failure","fn":"cudnn\\u0001","status":1,"message":null}\n'
                                    '{"event":"failure","fn":"cudnn\\u0002","status":1,"message":null}\n').encode()
    seeds["duplicate-keys"] = (hdr + '{"event":"call","event":"failure","fn":"a","fn":"b","status":0,"status":1}\n'
                               ).encode()
    seeds["unknown-events"] = (hdr + '{"event":"library","kind":"cudnn","path":"/x"}\n{"event":"kernel"}\n'
                               '{"event":"algo","fn":"f"}\n' + summ).encode()
    seeds["line-without-newline"] = good_call.rstrip("\n").encode()
    seeds["gzip-magic"] = b"\x1f\x8b\x08\x00" + b"\x00" * 20
    for i, (k, v) in enumerate(sorted(seeds.items()), 1):
        with open(os.path.join(out, "%02d-%s.jsonl" % (i, k)), "wb") as f:
            f.write(v)


if __name__ == "__main__":
    main()
