#!/bin/sh
# One entry point for a fresh Debian machine:
#   ./dev.sh demo   install what is missing, build, run the demo under the spy
#   ./dev.sh test   install what is missing, build, run the whole test suite
# Packages that cannot be installed (a machine without the archive) are
# reported and skipped: meson then says which optional parts it left out.
set -eu
cd "$(dirname "$0")"
build=${BUILD_DIR:-build}
packages="meson ninja-build gcc g++ pkg-config python3 binutils check libunwind-dev libjansson-dev"

install_missing() {
	missing=""
	for p in $packages; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "== installing:$missing" >&2
	if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq $missing; } >&2; then
		echo "== could not install$missing; building with what is there" >&2
	fi
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

case "${1:-}" in
demo)
	install_missing
	configure
	exec examples/run-demo.sh "$build"
	;;
test)
	install_missing
	configure -Dwerror=true
	exec meson test -C "$build" --print-errorlogs
	;;
*)
	echo "usage: $0 demo|test" >&2
	exit 2
	;;
esac
