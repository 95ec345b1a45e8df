#!/bin/sh
# One entry point for a fresh Debian machine:
#   ./dev.sh demo   install what is missing, build, run the demo under the spy
#   ./dev.sh test   install what is missing, build, run the whole test suite, then
#                   the call-stack tests again in build-unwind (-Dlibunwind=enabled),
#                   and the scenarios again with records in format 2
#   ./dev.sh sanitize   the tests again in build-asan (AddressSanitizer+UBSan) and
#                   build-tsan (ThreadSanitizer: the thread tests)
#   ./dev.sh fuzz   install clang, run each fuzz target for a while (exit 77 without clang)
#   ./dev.sh deb    build the Debian packages in build-deb/ (debian/, docs/install.md), then
#                   install, use and remove them (tests/package/deb-test.py; needs root or sudo)
#   ./dev.sh windows   install mingw-w64 and Wine, then run the Windows tests that need them:
#                   scan --windows against windres, objdump and Wine's own loader (docs/scan.md)
# (sanitize and fuzz: docs/reliability.md, "Sanitizers and fuzzing")
# Packages that cannot be installed (a machine without the archive) are
# reported and skipped: meson then says which optional parts it left out.
set -eu
cd "$(dirname "$0")"
build=${BUILD_DIR:-build}
packages="meson ninja-build gcc g++ pkg-config python3 python3-dev binutils check libunwind-dev libjansson-dev"

apt_options=""

# install_missing [PACKAGE...]: those, or $packages.
install_missing() {
	missing=""
	for p in ${*:-$packages}; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "== installing:$missing" >&2
	if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq $apt_options $missing; } >&2; then
		echo "== could not install$missing; building with what is there" >&2
	fi
}

# report-viewer (tests/report/viewer.py) opens a trace in speedscope in headless Chromium; npm fetches speedscope.
viewer_tools() {
	apt_options=--no-install-recommends
	install_missing chromium
	command -v npm >/dev/null 2>&1 || install_missing npm
	apt_options=""
}

# Quiet when all is well; the whole output when a step fails.
quietly() {
	log=$(mktemp)
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		echo "== failed: $*" >&2
		exit 1
	fi
	rm -f "$log"
}

configure() {
	if [ -d "$build" ]; then
		quietly meson setup --reconfigure "$build" "$@"
	else
		quietly meson setup "$build" "$@"
	fi
	quietly meson compile -C "$build"
}

# libunwind is off by default (it holds two low file descriptors in the program,
# which fds-first-free catches: docs/reliability.md), so its stack path gets a
# build of its own: the unit tests and the tests that take stacks, when it is installed.
unwind_tests="unit stack-names crash-handler crash-handler-chaining exceptions-preload"

unwind() {
	if ! pkg-config --exists libunwind; then
		echo "== test: libunwind is not installed: the libunwind build left out" >&2
		return 0
	fi
	if [ -d build-unwind ]; then
		quietly meson setup --reconfigure build-unwind -Dlibunwind=enabled -Dwerror=true
	else
		quietly meson setup build-unwind -Dlibunwind=enabled -Dwerror=true
	fi
	quietly meson compile -C build-unwind
	meson test -C build-unwind --print-errorlogs $unwind_tests
}

# The scenarios again with every record in format 1 (CUDNNSPY_FORMAT=json, docs/record-format.md; the default
# is format 2), which each test reads through cudnnspy dump too: the records must be the same whatever the format.
json_format() {
	echo "== test: the integration and real-cudnn suites again, records in format 1 (JSON Lines), read through cudnnspy dump"
	SPY_TEST_FORMAT=json meson test -C "$build" --no-rebuild --print-errorlogs --suite integration --suite real-cudnn
}

# Sanitizer builds (docs/reliability.md): what runs under each sanitizer, in its own build
# directory, warnings as errors. A report fails the test; the spy's known bugs that a
# sanitizer reports are named here, and a test that hits only those passes as an expected
# failure and says so (tests/integration/sanitizer.py). Only in these runs.
asan_suites="unit integration real-cudnn abi cli fuzz repro"
asan_known_bugs=""
# Left out under AddressSanitizer, because they cannot mean the same there:
#   load-records, load-records-real: the runtime's dlopen interceptor comes before the spy's
#   dlopen, so the caller that the spy (and glibc) sees is libasan, not the program.
#   dropin-requester-opener: the same; glibc then searches as libasan, not with the caller's RUNPATH.
asan_left_out="load-records load-records-real dropin-requester-opener"
tsan_tests="unit threads-counts threads-records fork-records rate-limit exit-while-calling exit-while-calling-no-membarrier thread-exit-destructor file-size-limit binary-records summary-same-as-exit"
tsan_known_bugs=""

sanitize_setup() {
	dir=$1
	shift
	if [ -d "$dir" ]; then
		quietly meson setup --reconfigure "$dir" -Db_lundef=false -Dwerror=true "$@"
	else
		quietly meson setup "$dir" -Db_lundef=false -Dwerror=true "$@"
	fi
}

# The expected failures of a sanitizer run, from meson's log, so that they are never silent.
expected_failures() {
	python3 - "$1/meson-logs/testlog.json" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = t.get("stdout") or ""
    if "EXPECTED FAILURE" in out:
        summaries = sorted({l.strip() for l in out.splitlines() if l.strip().startswith("SUMMARY:")})
        print("== known bug (expected failure) in %s: %s" % (t["name"], "; ".join(summaries)))
EOF
}

sanitize() {
	rc=0
	sanitize_setup build-asan -Db_sanitize=address,undefined
	quietly meson compile -C build-asan
	suites=""
	for s in $asan_suites; do
		suites="$suites --suite $s"
	done
	# shellcheck disable=SC2086
	all=$(meson test -C build-asan --no-rebuild --list $suites 2>/dev/null | sed -n 's|^[^ ]* / ||p')
	tests=$(echo "$all" | awk -v out=" $asan_left_out " 'index(out, " " $0 " ") == 0')
	left=$(echo "$all" | awk -v out=" $asan_left_out " 'index(out, " " $0 " ") != 0')
	if [ -z "$tests" ]; then
		echo "== sanitize: meson test --list found no tests in build-asan" >&2
		return 1
	fi
	# shellcheck disable=SC2086
	SPY_SANITIZER_KNOWN_BUGS=$asan_known_bugs meson test -C build-asan --print-errorlogs $tests || rc=1
	if [ -n "$left" ]; then
		# Counted as skipped by .ci/run, like meson's own skips.
		echo "== sanitize: left out under AddressSanitizer (see dev.sh):" $left
		echo "Skipped:            $(echo "$left" | wc -l)"
	fi
	expected_failures build-asan || true
	# gcc says ThreadSanitizer does not model standalone fences (the seqlock of objects.c):
	# a warning, not an error. meson test builds only what the chosen tests need.
	sanitize_setup build-tsan -Db_sanitize=thread -Dc_args=-Wno-error=tsan
	# shellcheck disable=SC2086
	SPY_SANITIZER_KNOWN_BUGS=$tsan_known_bugs meson test -C build-tsan --print-errorlogs $tsan_tests || rc=1
	expected_failures build-tsan || true
	return $rc
}

# libFuzzer needs clang and its runtime (libclang-rt-N-dev on Debian 12), installed for this
# step only. Exit 77 (skipped) when no clang can build a fuzzer here.
fuzz() {
	apt_options=--no-install-recommends
	install_missing clang
	if command -v clang >/dev/null 2>&1; then
		install_missing "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
	fi
	apt_options=""
	install_missing
	configure -Dwerror=true
	frc=0
	tests/fuzz/build-and-run.sh "$build" || frc=$?
	# The report reader's libFuzzer run is a meson test (tests/report): run it now that clang is here.
	if meson test -C "$build" --list 2>/dev/null | grep -q 'fuzz-report-short$'; then
		meson test -C "$build" --print-errorlogs fuzz-report-short || frc=1
	fi
	return "$frc"
}

# The Debian packages, built with Debian's tools from a copy of the tree's files (tracked and not
# ignored) in build-deb/src, so that the tree gets no build output and the packages land in build-deb/
# (dpkg-buildpackage writes them next to the source). The test installs them with apt, runs lintian,
# the demo from the installed files, and removes them.
deb_packages="debhelper dpkg-dev lintian binutils man-db meson ninja-build pkg-config python3 libjansson-dev gcc"

deb() {
	apt_options=--no-install-recommends
	install_missing $deb_packages
	apt_options=""
	out=build-deb
	rm -rf "$out"
	mkdir -p "$out/src"
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z -c -o --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -x -C "$out/src"
	else
		tar --exclude='./build*' --exclude='./obj-*' -cf - . | tar -x -C "$out/src"
	fi
	echo "== deb: dpkg-buildpackage in $out/src" >&2
	(cd "$out/src" && quietly dpkg-buildpackage -us -uc -F)
	ls "$out"/*.deb >&2
	tests/package/deb-test.py "$out"
}

# What checks the Windows side against tools it did not write: mingw-w64's windres and objdump read the same
# version resources and exports as scan --windows, and Wine's loader picks the DLLs its search order says.
windows_packages="gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 wine64 wine"
# The scan tests that need the tools, and the whole windows suite, read from the build so that a new test is
# never left out (windows-wine-killed was, on a machine that had no Wine before this step).
windows_scan_tests="scan-windows-mingw scan-windows-wine scan-windows-wine-dlls"

windows() {
	install_missing $windows_packages
	install_missing
	configure -Dwerror=true
	if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || ! command -v wine >/dev/null 2>&1; then
		echo "== windows: mingw-w64 or Wine could not be installed: skipped" >&2
		return 77
	fi
	windows_tests=$(meson test -C "$build" --list 2>/dev/null | sed -n 's|^[^:]*:windows / ||p')
	if [ -z "$windows_tests" ]; then
		echo "== windows: meson lists no test in the windows suite" >&2
		return 1
	fi
	# shellcheck disable=SC2086
	meson test -C "$build" --print-errorlogs $windows_scan_tests $windows_tests
}

case "${1:-}" in
demo)
	install_missing
	configure
	exec examples/run-demo.sh "$build"
	;;
test)
	install_missing
	viewer_tools
	configure -Dwerror=true
	rc=0
	meson test -C "$build" --print-errorlogs || rc=1
	unwind || rc=1
	json_format || rc=1
	exit "$rc"
	;;
sanitize)
	install_missing
	sanitize
	;;
fuzz)
	fuzz
	;;
deb)
	deb
	;;
windows)
	windows
	;;
*)
	echo "usage: $0 demo|test|sanitize|fuzz|deb|windows" >&2
	exit 2
	;;
esac
