#!/bin/bash
# The prepared GPU check: run on a machine with an NVIDIA GPU, PyTorch, JAX and cuDNN 9 from the Python
# wheels (no libunwind headers, no check library needed). It builds only the library and the command,
# runs a few training steps and a JAX convolution with and without the spy, and prints what the records
# show and what the spy costs. About 2-4 minutes. usage: examples/gpu/run-gpu-check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
here=examples/gpu
fail=0
say() { printf '\n== %s\n' "$*"; }

say "build ($build): library and command only"
if [ ! -d "$build" ]; then
	meson setup "$build" -Dtests=disabled -Dlibunwind=disabled --buildtype=release >/tmp/gpu-setup.log 2>&1 \
		|| { cat /tmp/gpu-setup.log; exit 1; }
fi
ninja -C "$build" shim/libcudnnspy.so shim/dropin9/libcudnn.so.9 cli/cudnnspy >/tmp/gpu-build.log 2>&1 \
	|| { cat /tmp/gpu-build.log; exit 1; }
spy=$PWD/$build/shim/libcudnnspy.so
# check_records.py reads record format 2 through it.
export CUDNNSPY_CLI=$PWD/$build/cli/cudnnspy
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/  gpu: /'
wheel_cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
echo "  cuDNN wheel: ${wheel_cudnn:-not found}"

run_case() { # name, expect, [--check=ARGS], command...: plain run, then under the spy; compares outputs
	local name=$1 expect=$2 extra=""; shift 2
	case $1 in --check=*) extra=${1#--check=}; shift;; esac
	local rec=/tmp/gpu-check-$name
	rm -rf "$rec"; mkdir -p "$rec"
	say "$name"
	local plain spied rc1 rc2
	plain=$("$@" 2>/tmp/gpu-$name-plain.err); rc1=$?
	spied=$(CUDNNSPY_OUTPUT=$rec CUDNNSPY_GPU_TIME=1 LD_PRELOAD=$spy "$@" 2>/tmp/gpu-$name-spied.err); rc2=$?
	echo "  exit status: plain $rc1, under the spy $rc2"
	[ "$rc1" = "$rc2" ] || { echo "  PROBLEM: exit status changed"; fail=1; }
	local a b
	a=$(echo "$plain" | grep -E '^(losses|checksum)')
	b=$(echo "$spied" | grep -E '^(losses|checksum)')
	if [ "$a" = "$b" ]; then echo "  results identical"; else
		echo "  results differ:"; echo "    plain: $a"; echo "    spied: $b"
		[ "$expect" = exact ] && fail=1
	fi
	local t1 t2
	t1=$(echo "$plain" | awk '/^step_ms/ {print $2}')
	t2=$(echo "$spied" | awk '/^step_ms/ {print $2}')
	echo "  step time: plain ${t1} ms, under the spy (GPU timing on) ${t2} ms"
	grep -E '^cudnnspy: (preload|drop-in|error|warning)' /tmp/gpu-$name-spied.err | head -5 | sed 's/^/  /'
	# shellcheck disable=SC2086
	python3 $here/check_records.py "$rec" --expect-calls --expect-gpu-time $extra || fail=1
}

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	# Graph-API convolutions: untuned-graph when benchmark is off, gone when the sweep runs (issue 18).
	run_case torch-benchmark-off exact --check="--expect-finding untuned-graph" python3 $here/torch_steps.py 20 0
	run_case torch-benchmark-on close --check="--expect-no-finding untuned-graph" python3 $here/torch_steps.py 20 1
	run_case torch-sdpa close --check="--expect-graphs --expect-signature attention-fwd --expect-signature attention-bwd" \
		python3 $here/torch_sdpa.py 10
	if [ -n "$wheel_cudnn" ]; then
		say "torch, drop-in (LD_LIBRARY_PATH=dropin9, CUDNNSPY_LIBRARY=$wheel_cudnn)"
		rm -rf /tmp/gpu-check-dropin; mkdir -p /tmp/gpu-check-dropin
		LD_LIBRARY_PATH=$PWD/$build/shim/dropin9 CUDNNSPY_LIBRARY=$wheel_cudnn CUDNNSPY_OUTPUT=/tmp/gpu-check-dropin \
			python3 $here/torch_steps.py 10 0 2>&1 | grep -E '^(losses|cudnnspy: drop-in|cudnnspy: error)' | cut -c1-160
		python3 $here/check_records.py /tmp/gpu-check-dropin --expect-calls || echo "  (the drop-in is not in this torch's path: its RPATH wins)"
	fi
	say "repro: a PyTorch convolution's standalone repro gives the status and engine of the original"
	rm -rf /tmp/gpu-check-repro; mkdir -p /tmp/gpu-check-repro
	CUDNNSPY_OUTPUT=/tmp/gpu-check-repro CUDNNSPY_STDERR=none \
		CUDNNSPY_TRACE='cudnnBackend* cudnnSet*Descriptor* cudnnSetConvolution* cudnnConvolution* cudnnFind* cudnnGet*_v7' \
		LD_PRELOAD=$spy python3 $here/torch_steps.py 2 0 >/dev/null 2>&1
	python3 $here/check_repro.py "$PWD/$build/cli/cudnnspy" /tmp/gpu-check-repro || fail=1
	say "the Python line behind a failure (issue 29): an injected EXECUTION_FAILED in a convolution's execution"
	rm -rf /tmp/gpu-check-pyline; mkdir -p /tmp/gpu-check-pyline
	CUDNNSPY_OUTPUT=/tmp/gpu-check-pyline CUDNNSPY_INJECT='cudnnBackendExecute=EXECUTION_FAILED' LD_PRELOAD=$spy \
		python3 $here/torch_python_line.py /tmp/gpu-check-pyline --check "$PWD/$build/cli/cudnnspy" \
		2>/tmp/gpu-pyline.err | sed 's/^/  /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail=1
	grep -m2 ' | python ' /tmp/gpu-pyline.err | cut -c1-400 | sed 's/^/  line: /'
	say "overhead without GPU timing (default settings), 50 steps"
	p=$(python3 $here/torch_steps.py 50 0 | awk '/^step_ms/ {print $2}')
	s=$(LD_PRELOAD=$spy CUDNNSPY_STDERR=none python3 $here/torch_steps.py 50 0 | awk '/^step_ms/ {print $2}')
	echo "  step time: plain $p ms, preloaded $s ms"
else
	say "torch with CUDA not available: skipped"
fi
if [ -n "$wheel_cudnn" ]; then
	say "errno around the first cuDNN calls (issue 15, item 21): with and without the spy"
	a=$(python3 $here/errno_first_call.py "$wheel_cudnn/libcudnn.so.9" 2>&1)
	b=$(LD_PRELOAD=$spy CUDNNSPY_STDERR=none python3 $here/errno_first_call.py "$wheel_cudnn/libcudnn.so.9" 2>&1)
	echo "$a" | sed 's/^/  plain: /'
	echo "$b" | sed 's/^/  spied: /'
	[ "$a" = "$b" ] && echo "  the same errno" || { echo "  PROBLEM: errno differs"; fail=1; }
fi
if python3 -c 'import jax; assert jax.devices()[0].platform == "gpu"' 2>/dev/null; then
	run_case jax-conv close python3 $here/jax_conv.py 20
else
	say "jax with a GPU not available: skipped"
fi
say "done: $([ $fail = 0 ] && echo all checks passed || echo SOME CHECKS FAILED)"
exit $fail
