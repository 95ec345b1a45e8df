#!/bin/sh
# The seeds of fuzz-repro (tests/fuzz/corpus/repro): record files the spy writes for the programs whose calls
# repro replays, against the fake cuDNN, in both formats, with and without failures. Each seed's first byte
# picks the call (fuzz-repro.c: repro's default, --call 1 to 3, --failure 1 or 2). Run by hand after the format
# or repro changes:
#   tests/fuzz/make-repro-seeds.sh [BUILD_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
out="$here/corpus/repro"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
# Inputs the fuzzer found (found-*) stay: they are what it once broke on.
find "$out" -type f ! -name 'found-*' ! -name 'crafted-*' -delete
record() {
	name=$1 format=$2 pick=$3
	shift 3
	mkdir "$tmp/$name"
	CUDNNSPY_FORMAT=$format CUDNNSPY_OUTPUT="$tmp/$name" CUDNNSPY_STDERR=none \
		LD_LIBRARY_PATH="$build/tests/fake/fake9:$build/tests/fake/cudart" LD_PRELOAD="$build/shim/libcudnnspy.so" \
		"$@" >/dev/null 2>&1 || true
	f=$(ls "$tmp/$name"/* | head -n 1)
	{ printf "\\$(printf '%03o' "$pick")"; head -c 60000 "$f"; } >"$out/$name"
}
FAKECUDNN_STATUS=cudnnConvolutionForward=2000,cudnnConvolutionBackwardFilter=5000 \
	record legacy-failing-json json 0 "$build/tests/conv-legacy"
FAKECUDNN_STATUS=cudnnConvolutionForward=2000,cudnnConvolutionBackwardFilter=5000 \
	record legacy-failing binary 4 "$build/tests/conv-legacy"
CUDNNSPY_TRACE='cudnnConvolution* cudnnGet* cudnnFind*' record legacy-traced binary 2 "$build/tests/conv-legacy"
FAKECUDNN_STATUS=cudnnBackendExecute=3000 CUDNNSPY_TRACE='cudnnBackend*' \
	record graph-failing binary 4 "$build/tests/conv-graph"
FAKECUDNN_STATUS=cudnnBackendExecute=3000 CUDNNSPY_TRACE='cudnnBackend*' \
	record graph-failing-json json 5 "$build/tests/conv-graph"
FAKECUDNN_STATUS=cudnnCreate=1001,cudnnSetTensor4dDescriptor=2000 record failures json 0 "$build/examples/failures"
# Calls outside repro's table, replayed from the API description (issue 30): Set, Get and query failures,
# a descriptor whose last Set failed, and every traced call of a program.
FAKECUDNN_STATUS=cudnnSetTensor4dDescriptor=2000,cudnnGetTensorSizeInBytes=2000 \
	record host-failing json 0 "$build/examples/host-calls"
CUDNNSPY_TRACE='*' record host-traced binary 3 "$build/tests/decode-odd"
# A failed cudnnBackendSetAttribute: its descriptor rebuilt from the failure record, or from the traced calls.
FAKECUDNN_STATUS=cudnnBackendSetAttribute=2000 record backend-set-failing json 4 "$build/tests/decode-odd"
FAKECUDNN_STATUS=cudnnBackendSetAttribute=2000 CUDNNSPY_TRACE='cudnnBackend*' \
	record backend-set-traced binary 4 "$build/tests/decode-odd"
ls -l "$out"
