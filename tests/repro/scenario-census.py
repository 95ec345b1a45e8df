#!/usr/bin/env python3
"""repro over every failure of the integration scenarios (issue 30's "Done when"), by hand: too long for the
test run. First the scenarios, keeping each run's records (tests/integration/spytest.py's SPYTEST_KEEP_RECORDS):

  SPYTEST_KEEP_RECORDS=/tmp/kept meson test -C build --suite integration --suite real-cudnn
  tests/repro/scenario-census.py build /tmp/kept [--all [--no-twins]] [--shard=I/N]

Then this: every failure `cudnnspy repro --list` names in the kept records, counted as replayed or refused (with
why); and the first failure of each function and status is written, built, and run under the spy against the
libraries its scenario ran with (the fake's settings too), where it must make the same call with the same
arguments and status (test_repro.host_round_trip). --all round-trips every failure: each is written, and a program
whose code (comments aside), libraries and settings are those of one already run is compared with that one's
records rather than built and run again (the same program makes the same calls); a failure whose record is the
same as one already round-tripped in its run (as test_repro.normalize compares them: call, arguments, status,
descriptor states) is counted with that one, not written again (a loop's thousand identical failures).
Exit status: 0 when every replayed one round-tripped."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def copy_dir(recs, copy):
    """The directory of the cuDNN that answered COPY in RECS (its library record), else the header's."""
    for r in recs:
        if r.get("event") == "library" and r.get("kind") == "cudnn" and r.get("answers") and r.get("copy") == copy:
            return os.path.dirname(r["path"])
    lib = (recs[0].get("library") or {}) if recs and recs[0].get("event") == "header" else {}
    return os.path.dirname(lib["path"]) if lib.get("path") else None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, kept = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    every = "--all" in sys.argv[3:]
    # --no-twins: every failure written and compared with its own program's replay, the same records too.
    no_twins = "--no-twins" in sys.argv[3:]
    # --shard I/N: the I-th of N parts of the runs (0 from), for N processes side by side.
    shard = next((tuple(int(x) for x in a.split("=", 1)[1].split("/")) for a in sys.argv[3:]
                  if a.startswith("--shard=")), (0, 1))
    E = os.environ
    E.setdefault("CLI_EXE", os.path.join(build, "cli", "cudnnspy"))
    E.setdefault("SPY_PRELOAD", os.path.join(build, "shim", "libcudnnspy.so"))
    E.setdefault("FAKE9_DIR", os.path.join(build, "tests", "fake", "fake9"))
    E.setdefault("FAKE_CUDART_DIR", os.path.join(build, "tests", "fake", "cudart"))
    if "REAL_CUDNN_DIR" not in E:
        E["REAL_CUDNN_DIR"] = subprocess.run([sys.executable, os.path.join(HERE, "..", "find-real-cudnn.py")],
                                             stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    sys.path.insert(0, HERE)
    import test_repro as t

    refused, replayed, seen, tripped, broke, cuda_after = {}, 0, set(), 0, [], []
    replays, runs, twinned = {}, 0, 0
    tmp = tempfile.mkdtemp(prefix="cudnnspy-census-")
    for i, name in enumerate(sorted(os.listdir(kept))):
        if i % shard[1] != shard[0]:
            continue
        runs += 1
        d = os.path.join(kept, name)
        try:
            with open(os.path.join(d, "env.json")) as f:
                ran = json.load(f)
        except (OSError, ValueError):
            continue
        listed = subprocess.run([E["CLI_EXE"], "repro", "--list", d], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, universal_newlines=True).stdout.splitlines()
        recs = None
        for line in listed:
            m = re.search(r"^\s*\d+\s+failure\s+(\S+) -> (\S+) \(--failure (\d+)\)", line)
            if not m:
                continue
            if "repro cannot replay it: " in line:
                why = re.sub(r"(0x[0-9a-f]+|#\d+)", "#", line.split("repro cannot replay it: ", 1)[1])
                refused[why] = refused.get(why, 0) + 1
                continue
            replayed += 1
            key = (m.group(1), m.group(2))
            if key in seen and not every:
                continue
            seen.add(key)
            if recs is None:
                recs = t.records(d)
                fail_at = [i for i, r in enumerate(recs) if r["event"] == "failure"]
                fails = [recs[i] for i in fail_at]
                twins = set()
            env = dict(ran["env"])
            env.pop("LD_PRELOAD", None)
            libdirs = [x for x in env.pop("LD_LIBRARY_PATH", "").split(":") if x]
            # The copy the call reached, as the records name it (kept where the scenario's was temporary).
            fail = fails[int(m.group(3)) - 1]
            reached = copy_dir(recs, fail.get("copy"))
            reached = (ran.get("moved") or {}).get(reached, reached)
            # Through the spy's drop-in, as the scenario ran, with its CUDNNSPY_LIBRARY (or none: it found the
            # copy behind it by the search order without itself, the one the records name).
            dropin = any(os.path.basename(x).startswith("dropin") for x in libdirs)
            if reached and os.path.isdir(reached) and reached not in libdirs:
                libdirs.append(reached)
            # Without a GPU, a replay that allocates device memory runs against the fake told to fail the same.
            if "[needs a GPU: " in line and (E["REAL_CUDNN_DIR"] in libdirs or reached == E["REAL_CUDNN_DIR"]):
                libdirs, dropin = [E["FAKE9_DIR"]], False
                env["FAKECUDNN_STATUS"] = "%s=%d" % (m.group(1), fails[int(m.group(3)) - 1]["status"])
            # A repro links the CUDA runtime, which a scenario against the fake alone did not load.
            if not any(os.path.exists(os.path.join(x, "libcudart.so")) for x in libdirs):
                libdirs.append(E["FAKE_CUDART_DIR"])
            if fail.get("cuda_error") and not fail["status"]:
                # The call returned SUCCESS and the GPU an error after it: the state the program's GPU work left,
                # which a replay of the one call makes only where the GPU faults at it: the fake CUDA runtime told
                # to fault at the repro's first launch, which is the call (counted apart too).
                if E["FAKE_CUDART_DIR"] not in libdirs or "FAKECUDA_ASYNC_ERROR_AT" not in env:
                    cuda_after.append("%s (%s, failure %s): %s" % (name, m.group(1), m.group(3),
                                                                   fail.get("message")))
                    continue
                env["FAKECUDA_ASYNC_ERROR_AT"] = "1"
                cuda_after.append("%s (%s, failure %s): replayed against the fake CUDA runtime faulting at the call"
                                  % (name, m.group(1), m.group(3)))
            if every and not no_twins:
                # A record the same as one already round-tripped in this run (the same call, arguments as
                # compared, status, descriptor states and copy; a loop's thousand failing Sets): counted with it.
                k = int(m.group(3))
                twin = json.dumps([t.normalize(fail, recs, fail_at[k - 1]), sorted(env.items()), libdirs, dropin,
                                   reached] +
                                  [fail.get(x) for x in ("copy", "injected", "no_function", "cuda_error")],
                                  sort_keys=True, default=str)
                if twin in twins:
                    tripped += 1
                    twinned += 1
                    continue
            try:
                t.host_round_trip(tmp, d, int(m.group(3)), "%s-%s" % (name, m.group(3)), libdirs, env,
                                  preload=not dropin, recs=recs, replays=replays if every else None,
                                  reached=reached if reached in libdirs and not (dropin and "CUDNNSPY_LIBRARY" in env)
                                  else None)
                tripped += 1
                if every and not no_twins:
                    twins.add(twin)
            except (t.Failed, IndexError) as e:
                broke.append("%s (%s %s, failure %s): %s" % (name, m.group(1), m.group(2), m.group(3),
                                                            str(e).splitlines()[0]))
    total = replayed + sum(refused.values())
    print("%d failures in %d scenario runs: %d replayed, %d refused" % (total, runs, replayed,
                                                                        sum(refused.values())))
    for why, n in sorted(refused.items(), key=lambda x: -x[1]):
        print("  %5d  refused: %s" % (n, why))
    print("%d round-tripped of %d tried (%s), %d did not" % (tripped, tripped + len(broke),
          "every one: %d written by repro, %d programs built and run; %d the same record as one of those in "
          "their run, counted with it" % (tripped + len(broke) - twinned, len(replays), twinned) if every else
          "the first of each function and status", len(broke)))
    for b in broke:
        print("  " + b)
    print("%d a CUDA error after a call that returned SUCCESS (the GPU's state, not the call's)" % len(cuda_after))
    for c in cuda_after:
        print("  " + c)
    sys.exit(1 if broke else 0)


if __name__ == "__main__":
    main()
