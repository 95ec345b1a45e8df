#!/bin/sh
# libFuzzer runs of the core's parsers, and of the report reader with records mutated as JSON (records)
# (docs/reliability.md, "Sanitizers and fuzzing").
#
#   tests/fuzz/build-and-run.sh [BUILD_DIR] [TARGET...]     (./dev.sh fuzz runs it)
#
# Builds one binary per target with clang -fsanitize=fuzzer,address,undefined from the shim sources
# and the generated tables in BUILD_DIR/shim (a configured meson build: default build), then runs
# each for FUZZ_SECONDS (default 15) over a scratch copy of its seed corpus, tests/fuzz/corpus/TARGET.
# New inputs the fuzzer finds stay in the scratch copy, never in the tree: copy the useful ones by hand.
#
# Exit: 0 when every target ran clean; 1 when one found something (the input that did it is kept
# under BUILD_DIR/fuzz/artifacts and named in the output); 77 when clang cannot build a fuzzer here.
# The last lines are a summary in meson's words (Ok:, Fail:, Skipped:), which .ci/run adds up.
#
# Environment: CLANG (default clang), FUZZ_SECONDS, FUZZ_JOBS (parallel compiles, default 2),
# FUZZ_SINK_MIN_SIZE (see fuzz-sink.c) can raise the smallest buffer fuzz-sink tries.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
case "$build" in /*) ;; *) build="$root/$build" ;; esac
targets=${*:-config globs inject sink records frames repro pe}
clang=${CLANG:-clang}
seconds=${FUZZ_SECONDS:-15}
jobs=${FUZZ_JOBS:-2}
work="$build/fuzz"

summary() {
	echo
	echo "Ok:                 $1"
	echo "Fail:               $2"
	echo "Skipped:            $3"
}

skip() {
	echo "== fuzz: skipped: $*" >&2
	# shellcheck disable=SC2086
	summary 0 0 $(echo $targets | wc -w)
	exit 77
}

command -v "$clang" >/dev/null 2>&1 || skip "no $clang (install clang and libclang-rt-dev)"
for g in g_api.c g_names.c g_api.h g_cudnn_types.h g_prototypes.h g_decl8.h; do
	[ -f "$build/shim/$g" ] || { echo "== fuzz: $build/shim/$g missing: configure and build $build first" >&2; exit 1; }
done
mkdir -p "$work/obj" "$work/artifacts"

# Can this clang link a libFuzzer target? (libFuzzer lives in libclang-rt-N-dev on Debian.)
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n; }\n' \
	>"$work/probe.c"
"$clang" -fsanitize=fuzzer,address,undefined "$work/probe.c" -o "$work/probe" >"$work/probe.log" 2>&1 ||
	skip "$clang cannot link -fsanitize=fuzzer ($(tail -n 1 "$work/probe.log"))"

# Coverage and the sanitizers for the shim's code; the libFuzzer driver itself only at link time.
cflags="-g -O1 -std=gnu11 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
	-fno-sanitize-recover=undefined -D_GNU_SOURCE -DSPY_VERSION=\"fuzz\" -DSPY_DOCDIR=\"/usr/local/share/doc/cudnnspy\"
	-I$root/shim/common -I$root/shim/core -I$root/shim/record -I$root/shim/watch
	-I$root/shim/entry -I$build/shim -I$here -w"

# Every core source goes into an archive: the linker takes only the members a target needs.
# dlsym.c and flavor.c belong to the libraries (a fuzz target is none), log.c is replaced by
# fuzz-common.c's quiet spy_log.
sources=""
for f in "$root"/shim/*/*.c "$build/shim/g_api.c" "$build/shim/g_names.c"; do
	case "$(basename "$f")" in
	dlsym.c | flavor.c | log.c) continue ;;
	esac
	sources="$sources $f"
done
start=$(date +%s)
rm -f "$work"/obj/*.o
FUZZ_CLANG=$clang FUZZ_CFLAGS=$cflags FUZZ_OBJ="$work/obj"
export FUZZ_CLANG FUZZ_CFLAGS FUZZ_OBJ
# shellcheck disable=SC2016,SC2086
printf '%s\n' $sources | xargs -P "$jobs" -n 1 sh -c '$FUZZ_CLANG $FUZZ_CFLAGS -c "$1" -o "$FUZZ_OBJ/$(basename "$1" .c).o"' sh
rm -f "$work/libcore-fuzz.a"
ar rcs "$work/libcore-fuzz.a" "$work"/obj/*.o
"$clang" $cflags -c "$here/fuzz-common.c" -o "$work/fuzz-common.o"
echo "== fuzz: core built with $("$clang" --version | head -n 1) in $(($(date +%s) - start)) s"

ok=0 failed=0 skipped=0
for t in $targets; do
	src="$here/fuzz-$t.c"
	corpus="$here/corpus/$t"
	# fuzz-pe's seeds are written, not kept: no Windows binary in the source (make-pe-seeds.py says why).
	if [ "$t" = pe ]; then
		corpus="$work/seeds-pe"
		rm -rf "$corpus"
		python3 "$here/make-pe-seeds.py" "$corpus"
	fi
	if [ ! -f "$src" ] || [ ! -d "$corpus" ]; then
		echo "== fuzz: no target '$t' (tests/fuzz/fuzz-$t.c and its corpus)" >&2
		failed=$((failed + 1))
		continue
	fi
	bin="$work/fuzz-$t"
	extra="" maxlen=8192 jansson=""
	# fuzz-records (the report's reader, cli/report) and fuzz-repro (cli/repro) need jansson, and read larger seeds.
	case $t in
	records | repro)
		if ! printf '#include <jansson.h>\n' | "$clang" -E -x c - >/dev/null 2>&1; then
			echo "== fuzz: $t skipped: no jansson.h (install libjansson-dev)" >&2
			skipped=$((skipped + 1))
			continue
		fi
		extra="-I$root/cli/decode -I$root/cli/util $root/cli/util/*.c"
		jansson=-ljansson maxlen=65536
		;;
	esac
	if [ "$t" = records ]; then
		extra="$extra -I$root/cli/report"
		for f in report report-read report-chrome report-model report-text report-compare report-render report-util; do
			extra="$extra $root/cli/report/$f.c"
		done
	fi
	# fuzz-repro runs cudnnspy repro over record files (with the reader) and lexes the program it writes.
	if [ "$t" = repro ]; then
		extra="$extra -I$root/cli/repro $root/cli/decode/records.c $root/cli/decode/rec-state.c"
		# Every file of repro's, by glob: a new one is not left out (repro-host.c was, once).
		for f in "$root"/cli/repro/*.c; do
			extra="$extra $f"
		done
	fi
	extra="$extra $jansson"
	# fuzz-frames reads record format 2 with the command's reader (cli/decode/records.c); its seeds are spy files.
	if [ "$t" = frames ]; then
		extra="-I$root/cli/decode -I$root/cli/util $root/cli/decode/records.c $root/cli/decode/rec-state.c $root/cli/util/*.c"
		maxlen=65536
	fi
	# fuzz-pe reads Windows DLLs with the scan's PE reader (cli/scan/scan-pe.c).
	if [ "$t" = pe ]; then
		extra="-I$root/cli/scan $root/cli/scan/scan-pe.c $root/cli/scan/scan-util.c"
		maxlen=16384
	fi
	# shellcheck disable=SC2086
	"$clang" $cflags -fsanitize=fuzzer "$src" "$work/fuzz-common.o" $extra "$work/libcore-fuzz.a" -ldl -lpthread -o "$bin"
	scratch="$work/corpus-$t"
	rm -rf "$scratch"
	mkdir -p "$scratch"
	cp "$corpus"/* "$scratch"/
	dict=""
	[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
	log="$work/fuzz-$t.log"
	echo "== fuzz: $t for ${seconds}s over $(ls "$corpus" | wc -l) seeds"
	# detect_leaks stays on: the parsers must not leak.
	# shellcheck disable=SC2086
	if ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$maxlen" -print_final_stats=1 \
		-artifact_prefix="$work/artifacts/$t-" $dict "$scratch" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
		echo "   ok: ${runs:-?} inputs, $cov, corpus $(ls "$scratch" | wc -l) files"
		ok=$((ok + 1))
	else
		echo "   FAILED: fuzz-$t found an input that breaks it; the report:"
		grep -v '^#[0-9]' "$log" | tail -n 60 | sed 's/^/   | /'
		ls "$work/artifacts/$t-"* 2>/dev/null | sed 's/^/   input kept: /'
		failed=$((failed + 1))
	fi
done
summary "$ok" "$failed" "$skipped"
[ "$failed" -eq 0 ]
