#!/usr/bin/env python3
"""Convolution algorithms and engines (issue 5): legacy convolutions and the graph API, searches and sweeps,
cudnn-frontend's way of building graphs, attention graphs, tuning findings, cudnn-frontend's deviceless
planning with the real cuDNN.

usage: graph.py NAME     (meson passes the paths in the environment)
Exit 0 pass, 1 fail, 77 skip (only when the real cuDNN is absent).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import spytest
from spytest import (E, FAKE9, PRELOAD, REAL, check, cudart, events, findings, need_real, only, only_file, prog,
                     records_in, run, same_output, summary_row, summary_total)

SCENARIOS = {}
scenario = spytest.registry(SCENARIOS)


SIG_2D = ("x=float:8x16x32x32:NCHW w=float:32x16x3x3:NCHW y=float:8x32x32x32:NCHW pad=1x1 stride=1x1 dilation=1x1 "
          "mode=cross_correlation compute=float groups=1")


SIG_LEGACY = SIG_2D + " math=tensor_op_math"


SIG_3D = ("fwd x=float:2x4x8x8x8:NCDHW w=float:8x4x3x3x3:NCDHW y=float:2x8x4x4x4:NCDHW pad=1x1x1 stride=2x2x2 "
          "dilation=1x1x1 mode=cross_correlation compute=float groups=1 math=default_math")


FWD = "CUDNN_CONVOLUTION_FWD_ALGO_"


def algos(p):
    """{(api, signature, algo or (engine, knobs)): algo record}."""
    out = {}
    for a in events(p.records, "algo"):
        key = a["algo"] if a["api"] == "legacy" else (a["engine"], tuple((k["type"], k["value"]) for k in
                                                                         a["knobs"] or []))
        check((a["api"], a["signature"], key) not in out, "one algo record per (signature, choice)", repr(a))
        out[(a["api"], a["signature"], key)] = a
    return out


@scenario
def conv_legacy_fake():
    """Legacy convolutions: ranked perf arrays decoded, searches remembered per signature, each (signature,
    algorithm) counted with its workspace, and the three findings, once each."""
    env = {"LD_LIBRARY_PATH": FAKE9}
    plain = run([prog("conv-legacy")], env)
    p = run([prog("conv-legacy")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_TRACE="cudnnFind* cudnnGet*_v7"))
    check(plain.stdout == p.stdout and "find fwd 0 returned 3" in p.stdout, "the program's results unchanged",
          plain.stdout, p.stdout)
    find = only(events(p.records, "call", "cudnnFindConvolutionForwardAlgorithm"), "traced Find")
    check(find["args"]["returnedAlgoCount"]["value"] == 3 and find["args"]["perfResults"]["values"] == [
        {"algo": FWD + "IMPLICIT_PRECOMP_GEMM", "status": "CUDNN_STATUS_SUCCESS", "time": 0.5, "memory": 0,
         "determinism": "CUDNN_DETERMINISTIC", "mathType": "CUDNN_DEFAULT_MATH"},
        {"algo": FWD + "IMPLICIT_GEMM", "status": "CUDNN_STATUS_SUCCESS", "time": 0.9, "memory": 1024,
         "determinism": "CUDNN_DETERMINISTIC", "mathType": "CUDNN_DEFAULT_MATH"},
        {"algo": FWD + "WINOGRAD", "status": "CUDNN_STATUS_SUCCESS", "time": 2.5, "memory": 2048,
         "determinism": "CUDNN_DETERMINISTIC", "mathType": "CUDNN_DEFAULT_MATH"}],
          "the ranked results decoded field by field", repr(find["args"]))
    bwd = only(events(p.records, "call", "cudnnFindConvolutionBackwardFilterAlgorithm"), "traced bwd-filter Find")
    check([r["algo"] for r in bwd["args"]["perfResults"]["values"]] == [
        "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3", "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1",
        "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0"] and bwd["args"]["perfResults"]["values"][1]["determinism"] ==
          "CUDNN_NON_DETERMINISTIC", "each perf struct by its own enum", repr(bwd["args"]))
    searches = events(p.records, "search")
    check([(s["fn"], s["op"], s["returned"]) for s in searches] == [
        ("cudnnFindConvolutionForwardAlgorithm", "fwd", 3), ("cudnnGetConvolutionForwardAlgorithm_v7", "fwd", 3),
        ("cudnnFindConvolutionBackwardDataAlgorithm", "bwd-data", 3),
        ("cudnnFindConvolutionBackwardFilterAlgorithm", "bwd-filter", 3)], "one search record each", repr(searches))
    check(searches[0]["signature"] == "fwd " + SIG_LEGACY and searches[0]["results"] ==
          find["args"]["perfResults"]["values"], "the search's signature and results", repr(searches[0]))
    a = algos(p)
    fast = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM")]
    check(fast["calls"] == 4 and fast["failures"] == 0 and fast["timed"] == 4 and fast["host_ns"] > 0 and
          fast["workspace"] == {"min": 0, "max": 0} and fast["workspace_needed"] == 0 and
          fast["search"]["rank"] == 0 and fast["search"]["fn"] == "cudnnGetConvolutionForwardAlgorithm_v7",
          "the fastest algorithm: counted, timed, ranked first by the last search", repr(fast))
    slow = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_GEMM")]
    check(slow["calls"] == 2 and slow["workspace"] == {"min": 512, "max": 512} and slow["workspace_needed"] == 1024
          and slow["search"]["rank"] == 1 and slow["search"]["first"] == FWD + "IMPLICIT_PRECOMP_GEMM",
          "the slower one, with what it needs", repr(slow))
    check(a[("legacy", "bwd-data " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_DATA_ALGO_1")]["calls"] == 2 and
          a[("legacy", "bwd-filter " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3")]["workspace_needed"] == 2048,
          "backward data and filter", repr(sorted(a)))
    bias = a[("legacy", "bias-act " + SIG_LEGACY + " act=relu", FWD + "IMPLICIT_PRECOMP_GEMM")]
    check(bias["calls"] == 1 and bias["search"]["rank"] == 0, "bias-activation, judged by the forward search",
          repr(bias))
    nd = a[("legacy", SIG_3D, FWD + "IMPLICIT_GEMM")]
    check(nd["calls"] == 1 and nd["search"] is None and nd["workspace_needed"] is None,
          "a 3-D convolution from Nd descriptors, never searched", repr(nd))
    check(len(a) == 6, "six (signature, choice) pairs", repr(sorted(a)))
    f = events(p.records, "finding")
    check(sorted((x["id"], x["severity"]) for x in f) == [("algo-changed", "info"), ("algo-not-fastest", "info"),
                                                         ("workspace-too-small", "warning")],
          "three findings, once each although the slow algorithm ran twice", repr(f))
    check(all(x["message"].startswith("fwd " + SIG_LEGACY + ": ") for x in f), "each names the signature", repr(f))
    byid = {x["id"]: x["message"] for x in f}
    check("needs 1024 bytes" in byid["workspace-too-small"] and "passes 512" in byid["workspace-too-small"] and
          "runs %sIMPLICIT_GEMM (0.900 ms" % FWD in byid["algo-not-fastest"] and
          "from %sIMPLICIT_PRECOMP_GEMM to %sIMPLICIT_GEMM" % (FWD, FWD) in byid["algo-changed"],
          "what each finding says", repr(byid))
    check(p.stderr.count("warning workspace-too-small:") == 1 and p.stderr.count("info algo-changed:") == 1,
          "once on stderr", p.stderr)
    check(re.search(r"^cudnnspy: convolutions and graphs: what ran for each signature", p.stderr, re.M) and
          re.search(r"^cudnnspy:   fwd %s$" % re.escape(SIG_LEGACY), p.stderr, re.M) and
          re.search(r"^cudnnspy:     %sIMPLICIT_PRECOMP_GEMM +4 calls, 0 failed, host .*, workspace 0 \(needs 0\)$"
                    % FWD, p.stderr, re.M) and
          re.search(r"^cudnnspy:     %sIMPLICIT_GEMM +2 calls, .*workspace 512 \(needs 1024\)$" % FWD, p.stderr,
                    re.M), "the summary section per signature", p.stderr)


@scenario
def conv_legacy_gpu_time():
    """CUDNNSPY_GPU_TIME: each convolution's GPU time lands in its (signature, algorithm) entry."""
    p = run([prog("conv-legacy"), cudart()], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD,
                                              "CUDNNSPY_GPU_TIME": "1"})
    a = algos(p)
    fast = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM")]
    slow = a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_GEMM")]
    check(fast["gpu_timed"] == 4 and fast["gpu_ns"] == 4 * 250000 and slow["gpu_timed"] == 2 and
          slow["gpu_ns"] == 2 * 250000, "250 us per call, to the right entry", repr(fast), repr(slow))
    check(sum(x["gpu_timed"] for x in a.values()) == 12, "every convolution call", repr(a))
    check(re.search(r"IMPLICIT_PRECOMP_GEMM +4 calls, 0 failed, host .*, gpu 1000.0 us \(4 timed\)", p.stderr),
          "GPU time in the summary section", p.stderr)


@scenario
def conv_legacy_real():
    """The real cuDNN without a GPU: legacy descriptors and output dimensions; the convolutions fail (no handle)
    but are counted under the signature their descriptors make."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    plain = run([prog("conv-legacy")], env)
    p = run([prog("conv-legacy")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_STDERR="summary"))
    check(plain.stdout == p.stdout and "y 8x32x32x32" in p.stdout and "y5 2x8x4x4x4" in p.stdout,
          "output dimensions from cuDNN", plain.stdout, p.stdout)
    a = algos(p)
    want = {("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM"): 4,
            ("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_GEMM"): 2,
            ("legacy", "bwd-data " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_DATA_ALGO_1"): 2,
            ("legacy", "bwd-filter " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3"): 2,
            ("legacy", "bias-act " + SIG_LEGACY + " act=relu", FWD + "IMPLICIT_PRECOMP_GEMM"): 1,
            ("legacy", SIG_3D, FWD + "IMPLICIT_GEMM"): 1}
    check(sorted(a) == sorted(want), "the expected signatures", repr(sorted(a)), repr(sorted(want)))
    for k, n in want.items():
        check(a[k]["calls"] == n and a[k]["failures"] == n, "%s: %d calls, all failed" % (k, n), repr(a[k]))
    check(len(events(p.records, "failure", "cudnnConvolutionForward")) == 7, "each failure recorded too")


def graph_run(lib, extra=None, args=()):
    env = {"LD_LIBRARY_PATH": lib, "LD_PRELOAD": PRELOAD}
    env.update(extra or {})
    return run([prog("conv-graph")] + list(args), env)


@scenario
def conv_graph_fake():
    """The graph API: the operation graph decoded into the same signature as the legacy call's; heuristics with
    their engines in rank order; plans with engine, knobs, workspace and JSON; executions counted per engine."""
    plain = run([prog("conv-graph")], {"LD_LIBRARY_PATH": FAKE9})
    p = graph_run(FAKE9, {"CUDNNSPY_TRACE": "cudnnBackendFinalize cudnnBackendExecute"})
    check(plain.stdout == p.stdout and "failed calls 0" in p.stdout and "config 0 engine 12" in p.stdout,
          "the program's results unchanged", plain.stdout, p.stdout)
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == "fwd " + SIG_2D and g["op"] == "fwd", "the graph's signature", repr(g))
    op = only(g["ops"], "operation")
    check(op["type"] == "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR" and op["finalized"],
          "the operation", repr(op))
    x = op["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X"]
    check(x["type"] == "CUDNN_BACKEND_TENSOR_DESCRIPTOR" and x["attrs"] == {
        "CUDNN_ATTR_TENSOR_DATA_TYPE": "CUDNN_DATA_FLOAT", "CUDNN_ATTR_TENSOR_DIMENSIONS": [8, 16, 32, 32],
        "CUDNN_ATTR_TENSOR_STRIDES": [16384, 1024, 32, 1], "CUDNN_ATTR_TENSOR_UNIQUE_ID": 1,
        "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT": 4}, "a tensor by its attributes", repr(x))
    conv = op["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC"]["attrs"]
    check(conv["CUDNN_ATTR_CONVOLUTION_CONV_MODE"] == "CUDNN_CROSS_CORRELATION" and
          conv["CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS"] == [1, 1] and conv["CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS"] == 2
          and op["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA"] == 1, "the convolution", repr(op))
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(h["returned"] == 3 and h["requested"] == 4 and h["engines"] == [12, 0, None] and len(h["configs"]) == 3
          and h["mode"] == "CUDNN_HEUR_MODE_A" and h["graph"] == g["id"] and h["signature"] == g["signature"],
          "three configs, the engines of the two the program read, in rank order", repr(h))
    plans = events(p.records, "plan")
    check(len(plans) == 2, "two plans", repr(plans))
    first, own = plans
    check(first["engine"] == 12 and first["knobs"] == [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 1},
                                                       {"type": "CUDNN_KNOB_TYPE_TILE_SIZE", "value": 3}] and
          first["config"] == h["configs"][0] and first["heuristics"] == {"id": h["id"], "rank": 0} and
          first["signature"] == g["signature"], "the plan from the first config", repr(first))
    check(json.loads(first["json"]) == {"fake": True, "engineId": 12, "note": 'plan "json"'} and
          first["json_size"] == len(first["json"]) + 1, "its JSON, asked of cuDNN after Finalize", repr(first))
    check(own["engine"] == 5 and own["knobs"] == [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 2}] and
          own["heuristics"] is None and own["graph"] == g["id"], "the plan the program built itself", repr(own))
    a = algos(p)
    ran = a[("graph", "fwd " + SIG_2D, (12, (("CUDNN_KNOB_TYPE_SPLIT_K", 1), ("CUDNN_KNOB_TYPE_TILE_SIZE", 3))))]
    check(ran["calls"] == 3 and ran["workspace_needed"] == 4096 and ran["plan"] == first["id"] and
          ran["heuristics"] == {"id": h["id"], "rank": 0} and ran["algo"] is None, "engine 12 ran 3 times", repr(ran))
    check(a[("graph", "fwd " + SIG_2D, (5, (("CUDNN_KNOB_TYPE_SPLIT_K", 2),)))]["calls"] == 2, "engine 5 twice",
          repr(a))
    ex = events(p.records, "call", "cudnnBackendExecute")
    check(len(ex) == 5 and ex[0]["args"]["executionPlan"]["engine"] == 12 and
          ex[0]["args"]["executionPlan"]["graph"] == g["id"] and ex[4]["args"]["executionPlan"]["knobs"] ==
          own["knobs"], "a traced Execute says which plan, engine and knobs ran for which graph", repr(ex[0]))
    check(re.search(r"^cudnnspy:     graph engine 12 knobs split_k=1,tile_size=3 +3 calls, 0 failed, host .*, "
                    r"workspace 4096$", p.stderr, re.M), "the summary section", p.stderr)
    q = graph_run(FAKE9)
    check(all(x["json"] is None for x in events(q.records, "plan")), "no JSON asked for unless Finalize is traced",
          repr(events(q.records, "plan")))
    r = graph_run(FAKE9, {"CUDNNSPY_GPU_TIME": "1"}, [cudart()])
    b = algos(r)
    check(b[("graph", "fwd " + SIG_2D, (12, (("CUDNN_KNOB_TYPE_SPLIT_K", 1), ("CUDNN_KNOB_TYPE_TILE_SIZE", 3))))][
        "gpu_ns"] == 3 * 250000, "GPU time per engine", repr(b))


@scenario
def conv_graph_real():
    """The real cuDNN without a GPU: tensors, convolution, operation and graph built and finalized, decoded into
    the signature; heuristics finalize and return nothing; the failing plan shows what it was built from."""
    need_real()
    plain = run([prog("conv-graph")], {"LD_LIBRARY_PATH": REAL})
    p = graph_run(REAL, {"CUDNNSPY_STDERR": "none"})
    check(plain.stdout == p.stdout and "graph finalize 0" in p.stdout and "heur finalize 0" in p.stdout and
          "heuristics returned 0" in p.stdout, "built and finalized", plain.stdout, p.stdout)
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == "fwd " + SIG_2D, "the same signature as the legacy API's", repr(g))
    w = g["ops"][0]["attrs"]["CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W"]["attrs"]
    check(w["CUDNN_ATTR_TENSOR_DIMENSIONS"] == [32, 16, 3, 3] and w["CUDNN_ATTR_TENSOR_UNIQUE_ID"] == 2,
          "the filter tensor", repr(w))
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(h["returned"] == 0 and h["configs"] == [] and h["signature"] == g["signature"], "no configs without a GPU",
          repr(h))
    fin = [f for f in events(p.records, "failure", "cudnnBackendFinalize")]
    cfg = [f for f in fin if f["args"]["descriptor"]["type"] == "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR"]
    check(len(cfg) == 1 and list(cfg[0]["args"]["descriptor"]["attrs"]) == [
        "CUDNN_ATTR_ENGINECFG_ENGINE", "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES"], "the failing config, decoded",
          repr(fin))
    plan = [f for f in fin if f["args"]["descriptor"]["type"] == "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR"]
    check(len(plan) == 1 and plan[0]["args"]["descriptor"]["engine"] == 5 and
          plan[0]["args"]["descriptor"]["signature"] == g["signature"], "the failing plan: engine and graph",
          repr(plan))
    a = only(events(p.records, "algo"), "algo record")
    check(a["api"] == "graph" and a["engine"] == 5 and a["calls"] == 2 and a["failures"] == 2, "executions counted",
          repr(a))


FRONTEND_SIG = ("fwd x=float:8x16x32x32:NCHW w=float:32x16x3x3:NCHW y=float:8x32x32x32:NCHW pad=1x1 stride=1x1 "
                "dilation=1x1 mode=cross_correlation compute=float groups=1 +pointwise(relu_fwd)")


@scenario
def graph_frontend():
    """The graph API as cudnn-frontend drives it: parts destroyed early, every config of a 30-config query kept,
    engines read with no count pointer, plans finalized until one works. The plan names its engine (rank 21) and
    knobs, the signature is whole, and the NOT_SUPPORTED probing is counted without a failure line."""
    unsupported = ",".join(str(e) for e in [12, 0, 7] + list(range(103, 121)))
    env = {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_HEUR_COUNT": "30", "FAKECUDNN_UNSUPPORTED_ENGINES": unsupported}
    plain = run([prog("graph-frontend"), "40"], env)
    check("config 21 engine 121 shared-memory 3000 plan 0" in plain.stdout, "rank 21 works", plain.stdout)
    p = run([prog("graph-frontend"), "40"], dict(env, LD_PRELOAD=PRELOAD))
    same_output(plain, p, "under preload")
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == FRONTEND_SIG, "the signature whole, though its parts were destroyed early", repr(g))
    x = g["ops"][0]["attrs"].get("CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X")
    check(isinstance(x, dict) and x["attrs"].get("CUDNN_ATTR_TENSOR_DIMENSIONS") == [8, 16, 32, 32],
          "its operations' tensors whole, though destroyed before the graph was finalized", repr(g)[:1500])
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(len(h["configs"]) == 30 and h["engines"][:22] == [12, 0, 7] + list(range(103, 122)),
          "every config of the query, and the engines the program read", repr(h))
    plan = only([r for r in events(p.records, "plan")], "one plan finalized")
    check(plan["engine"] == 121 and plan["knobs"] == [] and plan["heuristics"]["rank"] == 21 and
          plan["signature"] == FRONTEND_SIG, "the plan names its engine, knobs and graph", repr(plan))
    algo = only([a for a in events(p.records, "algo") if a["api"] == "graph"], "the executed choice")
    check(algo["engine"] == 121 and algo["calls"] == 3 and algo["signature"] == FRONTEND_SIG, "executions",
          repr(algo))
    probes = [r for r in events(p.records, "failure") if r.get("probing")]
    check(len(probes) == 43 and not [r for r in events(p.records, "failure") if not r.get("probing")],
          "21 plans and 22 shared-memory questions: probing, all of it", repr(len(probes)))
    check(not [l for l in p.stderr.splitlines() if l.startswith("cudnnspy: cudnnBackend")],
          "no failure line for the probing", p.stderr)
    check(summary_total(p.stderr) == (385, 43, 0) and "(43 of them probing)" in p.stderr, "counted, said apart",
          p.stderr)
    summary = only_file(p)[-1]
    check(summary["probing"] == 43, "in the summary record", repr(summary)[:300])
    loud = run([prog("graph-frontend"), "40"], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_STDERR="all"))
    check(len([l for l in loud.stderr.splitlines() if l.startswith("cudnnspy: cudnnBackendFinalize(")]) == 10,
          "asked for: the probing lines (rate-limited)", loud.stderr)
    # Rank 0 works: the program never reads its knobs, the spy does, through cuDNN's own functions.
    q = run([prog("graph-frontend"), "40"], {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD})
    plan = only(events(q.records, "plan"), "the plan")
    check(plan["engine"] == 12 and plan["knobs"] == [{"type": "CUDNN_KNOB_TYPE_SPLIT_K", "value": 1},
                                                      {"type": "CUDNN_KNOB_TYPE_TILE_SIZE", "value": 3}],
          "engine and knobs read by the spy itself", repr(plan))
    check(summary_row(q.stderr, "cudnnBackendGetAttribute")[0] == 68 - 21 * 3, "the spy's own reads not counted",
          q.stderr)


@scenario
def graph_frontend_real():
    """The real 9.19: an operation's tensors and convolution destroyed once it is finalized, the operations once
    the graph is: the graph's signature is whole."""
    need_real()
    plain = run([prog("graph-frontend"), "8"], {"LD_LIBRARY_PATH": REAL})
    p = run([prog("graph-frontend"), "8"], {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD})
    same_output(plain, p, "under preload")
    check("graph finalize 0" in p.stdout, "the graph finalizes", p.stdout)
    g = only(events(p.records, "graph"), "graph record")
    check(g["signature"] == FRONTEND_SIG, "whole", repr(g))
    h = only(events(p.records, "heuristics"), "heuristics record")
    check(h["signature"] == FRONTEND_SIG, "the query knows it too", repr(h))


@scenario
def graph_tuning_findings():
    """untuned-graph when every signature ran the heuristics' first plan and no sweep was seen, not when a sweep
    was; replanning when one graph is planned again and again; fallback-engine when only the fallback heuristics
    offered what ran; the run's other findings stay as they were."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
    first = run([prog("graph-frontend"), "40", "first"], env)
    f = findings(first)
    check(set(f) == {"untuned-graph"} and f["untuned-graph"]["message"].startswith("1 graph signature ran the plan")
          and "torch.backends.cudnn.benchmark = True" in f["untuned-graph"]["fix"], "untuned, with the setting",
          repr(f))
    check(len([l for l in first.stderr.splitlines() if "info untuned-graph:" in l]) == 1, "said once", first.stderr)
    sweep = run([prog("graph-frontend"), "40", "sweep"], env)
    check("sweep 1 0" in sweep.stdout and not findings(sweep), "a sweep seen: nothing to say", repr(findings(sweep)))
    replan = run([prog("graph-frontend"), "40", "replan"], env)
    f = findings(replan)
    check("replanning" in f and (FRONTEND_SIG + ": 21 plans finalized (") in f["replanning"]["message"],
          "replanning, with the count", repr(f))
    skipped = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_UNSUPPORTED_ENGINES="12"))
    check(not findings(skipped), "rank 1 after rank 0 failed: not the heuristics' first, no finding",
          repr(findings(skipped)))
    fallback = run([prog("graph-frontend"), "40", "fallback"], env)
    f = findings(fallback)
    check(set(f) == {"fallback-engine"} and f["fallback-engine"]["severity"] == "warning" and
          f["fallback-engine"]["message"] == FRONTEND_SIG + ": ran engine 12 that only the fallback heuristics "
          "(CUDNN_HEUR_MODE_FALLBACK) offered: the slow engines that always work, not the fast kernels" and
          "support matrix" in f["fallback-engine"]["fix"], "fallback-engine alone: not untuned-graph too", repr(f))
    h = only(events(fallback.records, "heuristics"), "heuristics record")
    check(h["mode"] == "CUDNN_HEUR_MODE_FALLBACK", "the query's mode recorded", repr(h))


ATTN = "b=2 h=8 s_q=128 s_kv=128 d=64 q=half:2x8x128x64:bshd k=half:2x8x128x64:bshd v=half:2x8x128x64:bshd " \
       "o=half:2x8x128x64:bshd"


ATTN_CASES = [
    ([], "attention-fwd " + ATTN),
    (["causal", "dropout", "stats"], "attention-fwd " + ATTN + " stats causal dropout"),
    (["gqa", "causal"], "attention-fwd b=2 h=8 h_kv=2 s_q=128 s_kv=128 d=64 q=half:2x8x128x64:bshd "
     "k=half:2x2x128x64:bshd v=half:2x2x128x64:bshd o=half:2x8x128x64:bshd causal"),
    (["bwd"], "attention-bwd b=2 h=8 s_q=128 s_kv=128 d=64 q=half:2x8x128x64:bshd k=half:2x8x128x64:bshd"),
    (["sdpa-op"], "attention-fwd " + ATTN + " stats")]


@scenario
def attention_graph():
    """A scaled dot-product attention graph built from operations as cudnn-frontend builds it (its tensors and
    sub-descriptors destroyed early): named attention-fwd with its shapes, layout, data types, causal mask and
    dropout, in the graph, heuristics, plan and algo records alike; 17 operations kept whole."""
    env = {"LD_LIBRARY_PATH": FAKE9}
    for args, sig in ATTN_CASES:
        plain = run([prog("attention-graph")] + args, env)
        p = run([prog("attention-graph")] + args, dict(env, LD_PRELOAD=PRELOAD))
        same_output(plain, p, "under preload " + " ".join(args))
        g = only(events(p.records, "graph"), "graph record")
        check(g["signature"] == sig and g["op"] == "graph", "the graph named as attention " + " ".join(args),
              repr(g["signature"]))
        plan = only(events(p.records, "plan"), "plan record")
        h = only(events(p.records, "heuristics"), "heuristics record")
        a = [x for x in events(p.records, "algo") if x["api"] == "graph"]
        check(plan["signature"] == sig and h["signature"] == sig and [x["signature"] for x in a] == [sig] and
              a[0]["calls"] == 2 and plan["engine"] == 12, "the same text in every record", repr(plan), repr(a))
    plain = run([prog("attention-graph"), "no-softmax"], dict(env, LD_PRELOAD=PRELOAD))
    sig = only(events(plain.records, "graph"), "graph record")["signature"]
    check(sig.startswith("graph matmul adesc=half:2x8x128x64:strides=65536x64x512x1 bdesc=half:2x8x64x128:") and
          " ; pointwise(mul) xdesc=float:2x8x128x128:NCHW bdesc=float:1x1x1x1:NCHW ydesc=" in sig and
          not sig.endswith("..."), "not attention without a softmax: each operation with its tensors, as documented",
          sig)
    long = run([prog("attention-graph"), "no-softmax", "causal"], dict(env, LD_PRELOAD=PRELOAD))
    sig = only(events(long.records, "graph"), "graph record")["signature"]
    check(len(sig) == 447 and sig.endswith("...") and
          only(events(long.records, "plan"), "plan record")["signature"] == sig,
          "a signature too long for the spy's 448 bytes says it was cut", sig)
    for args, sig in ATTN_CASES:
        if "stats" in args:
            p = run([prog("attention-graph")] + args, dict(env, LD_PRELOAD=PRELOAD))
            g = only(events(p.records, "graph"), "graph record")
            check("operations 17" in p.stdout and len(g["ops"]) == 17 and
                  g["ops"][16]["type"] == "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR",
                  "past 16 operations: all kept, the last matmul among them", repr(len(g["ops"])))


@scenario
def attention_graph_real():
    """The real 9.19 finalizes every attention graph without a GPU (the composite ones forward and backward, and
    its own SDPA operation): the spy names each as with the fake."""
    need_real()
    env = {"LD_LIBRARY_PATH": REAL}
    for args, sig in ATTN_CASES:
        plain = run([prog("attention-graph")] + args, env)
        p = run([prog("attention-graph")] + args, dict(env, LD_PRELOAD=PRELOAD))
        same_output(plain, p, "under preload " + " ".join(args))
        check("graph finalize 0" in p.stdout, "the real cuDNN finalizes it " + " ".join(args), p.stdout)
        g = only(events(p.records, "graph"), "graph record")
        check(g["signature"] == sig, "named as attention " + " ".join(args), repr(g["signature"]))


@scenario
def graph_sweep_timing():
    """A tuning sweep over engines that take different times (the fake's FAKECUDNN_ENGINE_US): each engine's
    calls and host time in its own algo record and summary line, so the table shows which engine is fastest;
    a sweep, so no untuned-graph."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "FAKECUDNN_ENGINE_US": "12=20000,0=300,7=600"}
    p = run([prog("graph-frontend"), "40", "sweep"], env)
    a = {x["engine"]: x for x in events(p.records, "algo") if x["api"] == "graph"}
    check(sorted(a) == [0, 7, 12] and [a[e]["calls"] for e in (12, 0, 7)] == [3, 2, 2] and
          all(a[e]["timed"] == a[e]["calls"] for e in a), "each engine the sweep ran, counted and timed", repr(a))
    per = {e: a[e]["host_ns"] / a[e]["calls"] for e in a}
    # Lower bounds only (a sleep takes at least its time); the kept engine is many times slower than the others.
    check(per[12] >= 20000e3 and per[7] >= 600e3 and per[0] >= 300e3 and per[12] > 4 * max(per[0], per[7]),
          "each engine's time per call as it took", repr(per))
    check(re.search(r"graph engine 0 knobs swizzle=2 +2 calls, 0 failed, host [0-9.]+ us$", p.stderr, re.M) and
          re.search(r"graph engine 12 knobs split_k=1,tile_size=3 +3 calls, 0 failed, host [0-9.]+ ms, workspace "
                    r"4096$", p.stderr, re.M), "the summary section, engine by engine", p.stderr)
    check(not findings(p), "a sweep seen: no untuned-graph", repr(findings(p)))


@scenario
def nondeterministic_engine():
    """nondeterministic-engine: a graph plan whose engine cuDNN notes as non-deterministic (the spy reads the notes
    itself), or a legacy algorithm the program's own search marked so; information, a warning when the job asked
    for deterministic results; nothing when the engine has no such note."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}
    said = ": ran engine 12, which cuDNN notes as non-deterministic (CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC): its " \
           "results can differ from run to run"
    p = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_NONDET_ENGINES="12"))
    f = findings(p)
    check(set(f) == {"untuned-graph", "nondeterministic-engine"} and
          f["nondeterministic-engine"]["severity"] == "info" and
          f["nondeterministic-engine"]["message"] == FRONTEND_SIG + said and
          "torch.use_deterministic_algorithms(True)" in f["nondeterministic-engine"]["fix"],
          "information, with the framework switches", repr(f))
    plan = only(events(p.records, "plan"), "the plan")
    check(plan["nondeterministic"] is True and plan["engine"] == 12, "the plan record says it", repr(plan))
    check(re.search(r"graph engine 12 knobs .*workspace 4096, non-deterministic$", p.stderr, re.M),
          "the summary section marks it", p.stderr)
    check(summary_row(p.stderr, "cudnnBackendGetAttribute")[0] == 5, "the spy's own reads not counted", p.stderr)
    asked = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_NONDET_ENGINES="12",
                                                     XLA_FLAGS="--xla_gpu_deterministic_ops=true"))
    f = findings(asked)
    check(f["nondeterministic-engine"]["severity"] == "warning" and f["nondeterministic-engine"]["message"] ==
          FRONTEND_SIG + said + ", though the job asked for deterministic results (XLA_FLAGS)",
          "a warning when determinism was asked", repr(f))
    other = run([prog("graph-frontend"), "40"], dict(env, FAKECUDNN_NONDET_ENGINES="0,7",
                                                     TF_DETERMINISTIC_OPS="1"))
    check(set(findings(other)) == {"untuned-graph"} and
          only(events(other.records, "plan"), "the plan")["nondeterministic"] is False,
          "an engine without the note: nothing", repr(findings(other)))
    legacy = run([prog("conv-legacy"), "-", "nondet"], dict(env, CUBLAS_WORKSPACE_CONFIG=":4096:8"))
    f = findings(legacy)
    check(f.get("nondeterministic-engine", {}).get("severity") == "warning" and
          f["nondeterministic-engine"]["message"].startswith("bwd-filter " + SIG_LEGACY +
                                                             ": ran CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, which cuDNN "
                                                             "notes as non-deterministic (CUDNN_NON_DETERMINISTIC)")
          and f["nondeterministic-engine"]["message"].endswith("(CUBLAS_WORKSPACE_CONFIG)"),
          "legacy: from the search's determinism field", repr(f))
    a = algos(legacy)
    check(a[("legacy", "bwd-filter " + SIG_LEGACY, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1")]["nondeterministic"] is True
          and a[("legacy", "fwd " + SIG_LEGACY, FWD + "IMPLICIT_PRECOMP_GEMM")]["nondeterministic"] is False and
          a[("legacy", SIG_3D, FWD + "IMPLICIT_GEMM")]["nondeterministic"] is None,
          "per algo record: true, false, or null when never searched", repr(a))
    plain = run([prog("conv-legacy")], env)
    check("nondeterministic-engine" not in findings(plain), "the deterministic one: nothing", repr(findings(plain)))


def driver_stub_dir(d):
    """Without a driver, the real cuDNN's heuristics offer nothing (every engine: libcuda == nullptr). The CUDA
    toolkit's stub libcuda (it answers CUDA_ERROR_STUB_LIBRARY to everything) is enough for them to rank engine
    configs; finalizing a plan then fails (cuLibraryLoadData). A directory holding the stub as libcuda.so.1, or
    None when a real driver loads or no stub is installed."""
    # Asked in a child without the test's LD_LIBRARY_PATH (meson's holds the fake driver), as run() starts them.
    env = {k: v for k, v in E.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    if subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('libcuda.so.1')"], env=env,
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        return None
    for stub in (os.path.join(REAL, "stubs", "libcuda.so"),
                 os.path.join(os.path.dirname(REAL.rstrip("/")), "lib64", "stubs", "libcuda.so")):
        if os.path.exists(stub):
            os.symlink(stub, os.path.join(d, "libcuda.so.1"))
            return d
    return None


@scenario
def real_graph_deviceless():
    """cudnn-frontend's deviceless planning with the real cuDNN: device properties from JSON, no handle; conv+relu,
    matmul and an expanded attention graph, heuristics in modes A and fallback, every config planned, each part
    destroyed once used. Under the spy, every call recorded: the same output; every plan the program finalized
    (a plan record; a failure record where finalizing failed) names the engine and the knobs that the program
    read from its config; every signature is whole (no '?', every operation of the graph in it)."""
    need_real()
    with tempfile.TemporaryDirectory(prefix="cudnnspy-driver-") as d:
        stub = driver_stub_dir(d)
        env = {"LD_LIBRARY_PATH": (stub + ":" if stub else "") + REAL}
        plain = run([prog("real-graph")], env)
        spied = run([prog("real-graph")], dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_TRACE="*", CUDNNSPY_STDERR="none"))
    check(plain.stdout == spied.stdout and plain.returncode == spied.returncode == 0,
          "the program's output and exit unchanged under the spy", plain.stdout, spied.stdout, spied.stderr)
    check("deviceprop finalize=0" in plain.stdout and all("graph=%s ops=%d finalize=0" % g in plain.stdout for g in
                                                           (("conv", 2), ("matmul", 1), ("sdpa", 14))),
          "the device properties and the three graphs finalized without a handle", plain.stdout)
    # What the program read: per (graph, mode, rank) the engine, the knob values and the plan's status.
    read = {}
    for m in re.finditer(r"^graph=(\w+) mode=(\w+) rank=(\d+) engine=(-?\d+) knobs=(\S+) status=(\d+)", plain.stdout,
                         re.M):
        knobs = [] if m.group(5) == "-" else [int(k.split(":")[1]) for k in m.group(5).split(",")]
        read[(m.group(1), m.group(2), int(m.group(3)))] = (int(m.group(4)), knobs, int(m.group(6)))
    if stub:
        check(read, "with the driver stub, the heuristics rank engine configs", plain.stdout)
    recs = spied.records
    problems = []
    graphs = events(recs, "graph")
    check(len(graphs) == 3, "a graph record per graph", repr(graphs))
    names = dict(zip((g["id"] for g in graphs), ("conv", "matmul", "sdpa")))
    for g in graphs:
        sig = g["signature"] or ""
        parts = sig[len("graph "):].split(" ; ") if sig.startswith("graph ") else [sig]
        if "?" in sig:
            problems.append("graph %s (%s): '?' in its signature: %s" % (g["id"], names[g["id"]], sig))
        if names[g["id"]] == "sdpa" and not sig.startswith("attention-fwd b=2 h=4 s_q=128 s_kv=128 d=64 "):
            problems.append("graph %s (sdpa): not named as attention: %s" % (g["id"], sig))
        if g["ops"] is not None and not sig.startswith(("fwd ", "attention-")) and len(parts) != len(g["ops"]):
            problems.append("graph %s (%s): the signature names %d of its %d operations (%d characters, ends %r)" %
                            (g["id"], names[g["id"]], len(parts), len(g["ops"]), len(sig), sig[-40:]))
    heur = {}
    for h in events(recs, "heuristics"):
        mode = {"CUDNN_HEUR_MODE_A": "a", "CUDNN_HEUR_MODE_FALLBACK": "fallback"}.get(h["mode"])
        name = names.get(h["graph"])
        heur[h["id"]] = (name, mode)
        want = [read[(name, mode, r)][0] for r in range(h["returned"]) if (name, mode, r) in read]
        if h["engines"][:len(want)] != want[:16]:
            problems.append("heuristics %s (%s, mode %s): engines %r, the program read %r" %
                            (h["id"], name, mode, h["engines"], want))
        if h["signature"] is None or "?" in h["signature"]:
            problems.append("heuristics %s: signature %r" % (h["id"], h["signature"]))
    # Plans: a plan record for each one finalized, a failure record for each that failed.
    plans = [("plan record", r) for r in events(recs, "plan")]
    plans += [("failed finalize", f["args"]["descriptor"]) for f in events(recs, "failure", "cudnnBackendFinalize")
              if f["args"]["descriptor"].get("type") == "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR"]
    check(len(plans) == len(read), "one plan or failure record per plan the program finalized (%d)" % len(read),
          repr(plans))
    for what, r in plans:
        h = r.get("heuristics")
        key = heur.get(h["id"], (None, None)) + (h["rank"],) if h else None
        if key not in read:
            problems.append("%s %s: no heuristics rank that the program planned: %r" % (what, r["id"], h))
            continue
        engine, knobs, _ = read[key]
        where = "%s %s (graph %s, mode %s, rank %d)" % ((what, r["id"]) + key)
        if r.get("engine") != engine:
            problems.append("%s: engine %r, the program read engine %d" % (where, r.get("engine"), engine))
        got = None if r.get("knobs") is None else [k["value"] for k in r["knobs"]]
        if got != knobs:
            problems.append("%s: knobs %r, the program read the knob values %r from its config" %
                            (where, r.get("knobs"), knobs))
        if r.get("signature") is None or "?" in r["signature"]:
            problems.append("%s: signature %r" % (where, r.get("signature")))
    statuses = [v[2] for v in read.values()]
    check(len(events(recs, "plan")) == statuses.count(0), "a plan record for each plan finalized", repr(statuses))
    check(not problems, "%d wrong plan or signature fields:\n" % len(problems) + "\n".join(problems))


# True answers about graphs (issue 30): normalization graphs named by what they compute, tuning told from
# replanning.

X = "float:4096x128x1x1:NCHW"
ONE = "float:1x128x1x1:NCHW"
ROWS = "float:4096x1x1x1:NCHW"
EXPECT = {
    "layernorm": "graph norm_forward(layer_norm,training) xdesc=%s scale_desc=%s bias_desc=%s "
                 "epsilon_desc=float:1x1x1x1:NCHW ydesc=%s mean_desc=%s inv_variance_desc=%s" % (X, ONE, ONE, X, ROWS,
                                                                                                 ROWS),
    "rmsnorm": "graph norm_forward(rms_norm,inference) xdesc=%s scale_desc=%s epsilon_desc=float:1x1x1x1:NCHW "
               "ydesc=%s" % (X, ONE, X),
}


@scenario
def graph_norm_names_real():
    """A layer norm and an RMS norm, built as cudnn-frontend's samples build them against the real cuDNN
    (host-only, through a device-properties descriptor), read `norm_forward(MODE,PHASE)` with each tensor named by
    its attribute without the prefix the operation's attributes share (`xdesc`, not `norm_fwd_xdesc`). Each norm
    graph's records (graph, heuristics) carry its signature with mode and phase; the program's output
    and exit status are its own."""
    need_real()
    for name, want in EXPECT.items():
        with tempfile.TemporaryDirectory() as d:
            argv = [prog("real-graph"), "-", name]
            plain = run(argv, {"LD_LIBRARY_PATH": REAL}, check_rc=False)
            spied = run(argv, {"LD_LIBRARY_PATH": REAL, "LD_PRELOAD": PRELOAD, "CUDNNSPY_OUTPUT": d,
                               "CUDNNSPY_TRACE": "cudnnBackend*"}, check_rc=False)
            check(plain.stdout == spied.stdout and plain.returncode == spied.returncode == 0,
                  "%s: the program's own output, every graph finalized" % name, plain.stdout, spied.stdout)
            recs = records_in(d)
            sigs = {r.get("signature") for r in events(recs, "graph") + events(recs, "heuristics")}
            check(sigs == {want}, "%s: the signature" % name, repr(sigs), want)
            check("norm_fwd_" not in spied.stderr and all("norm_fwd_" not in (s or "") for s in sigs),
                  "%s: no attribute keeps the operation's prefix" % name, repr(sigs))


@scenario
def graph_tuning_not_replanning():
    """One heuristics query whose 40 configs are each built once, then one executed (cudnn-frontend's
    BuildPlanPolicy_t::ALL, what autotuning asks for) is tuning: neither `replanning` nor `untuned-graph`. Plans
    built after the graph ran, or one config built again and again, are replanning, with both counts."""
    env = {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD, "FAKECUDNN_HEUR_COUNT": "40"}
    argv = [prog("graph-frontend"), "40", "all"]
    plain = run(argv, {"LD_LIBRARY_PATH": FAKE9, "FAKECUDNN_HEUR_COUNT": "40"})
    tuned = run(argv, env)
    check(plain.stdout == tuned.stdout and tuned.stdout.count(" plan 0\n") == 40, "40 plans built, the program's "
          "own output", tuned.stdout)
    check(not findings(tuned) and "replanning" not in tuned.stderr, "tuning: no finding", repr(findings(tuned)),
          tuned.stderr)
    after = run([prog("graph-frontend"), "40", "after"], env)
    f = findings(after)
    check(after.stdout.count("after 0\n") == 39 and "replanning" in f and
          ": 40 plans finalized (" in f["replanning"]["message"] and
          ", 39 of them for a config already built or after the graph ran" in f["replanning"]["message"],
          "plans built after the graph ran: replanning", repr(f), after.stdout[-300:])
    again = run([prog("graph-frontend"), "40", "replan"], env)
    f = findings(again)
    check("replanning" in f and ": 21 plans finalized (" in f["replanning"]["message"] and
          ", 20 of them for a config already built" in f["replanning"]["message"], "one config built 21 times",
          repr(f))



if __name__ == "__main__":
    sys.exit(spytest.main_of(SCENARIOS))
