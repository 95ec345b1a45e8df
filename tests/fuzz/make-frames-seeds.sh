#!/bin/sh
# The seeds of fuzz-frames (tests/fuzz/corpus/frames): record files of format 2 that the spy writes for a few
# of the test programs against the fake cuDNN, traced, and pieces of them cut short or damaged. Each seed's
# first byte is fuzz-frames' buffer-size selector. Run by hand after the format changes:
#   tests/fuzz/make-frames-seeds.sh [BUILD_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
out="$here/corpus/frames"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
# Inputs the fuzzer found (found-*) stay: they are what it once broke on.
find "$out" -type f ! -name 'found-*' -delete
n=0
record() {
	name=$1
	shift
	mkdir "$tmp/$name"
	CUDNNSPY_FORMAT=binary CUDNNSPY_TRACE='*' CUDNNSPY_OUTPUT="$tmp/$name" CUDNNSPY_STDERR=none \
		LD_LIBRARY_PATH="$build/tests/fake/fake9" LD_PRELOAD="$build/shim/libcudnnspy.so" "$@" >/dev/null 2>&1 || true
	f=$(ls "$tmp/$name"/* | head -n 1)
	n=$((n + 1))
	# The selector byte, then the file; a whole one, one cut inside a frame, one with a byte changed.
	{ printf "\\$(printf '%03o' $((n * 7 % 64)))"; head -c 60000 "$f"; } >"$out/$name"
	{ printf '\003'; head -c $(($(wc -c <"$f") * 2 / 3)) "$f" | head -c 40000; } >"$out/$name-cut"
	python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[len(d) // 2] ^= 0x5a; open(sys.argv[2], "wb").write(b"\x11" + bytes(d[:40000]))' "$f" "$out/$name-damaged"
}
record decode-all "$build/tests/decode-all"
record threads "$build/tests/threads" 100
# A process that ends without exit() leaves its file mapped: blocks, zeros and state frames (version 6).
record exit-blocks "$build/tests/kill-count" _exit=3000 2
record conv-legacy "$build/tests/conv-legacy"
record decode-odd "$build/tests/decode-odd"
record conv-graph "$build/tests/conv-graph"
FAKECUDNN_STATUS=cudnnCreate=1001,cudnnSetTensor4dDescriptor=2000 CUDNNSPY_INJECT=cudnnSetConvolution2dDescriptor=3 \
	record failures "$build/examples/failures"
FAKECUDNN_STATUS=cudnnSetTensorNdDescriptor=2000,cudnnConvolutionForward=2000 \
	record decode-failing "$build/tests/decode-all"
CUDNNSPY_BACKTRACE='*' record stacks "$build/tests/stack-names" "$build/tests/libstacklate.so"
CUDNNSPY_GPU_TIME=1 FAKECUDA_NOT_READY=2 record gpu-times "$build/tests/gpu-calls" 5 "$build/tests/fake/cudart/libcudart.so.12"
ls -l "$out"
