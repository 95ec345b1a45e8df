#!/bin/sh
# Runs the demo program under the spy: against the real cuDNN when one is
# found (CUDNN_ROOT, CUDA_HOME, /usr/local/cuda), otherwise against the fake.
# usage: examples/run-demo.sh [BUILD_DIR]
set -eu
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
# Absolute from here on: the build directory may be given either way.
build=$(cd "$build" && pwd)
real=$(python3 "$top/tests/find-real-cudnn.py" || true)
demo="$build/examples/host-calls"
if [ -n "$real" ]; then
	echo "== demo: host-side cuDNN calls, real cuDNN in $real, preloaded spy" >&2
	libs=$real
else
	echo "== demo: no real cuDNN found (CUDNN_ROOT, CUDA_HOME, /usr/local/cuda): using the fake one" >&2
	libs="$build/tests/fake/fake9"
fi
LD_LIBRARY_PATH=$libs LD_PRELOAD="$build/shim/libcudnnspy.so" "$demo"
echo "== the same program with the drop-in libcudnn.so.9 first on the library path" >&2
# The drop-in forwards to what the program would load without it: the directory after it on the path.
LD_LIBRARY_PATH="$build/shim/dropin9:$libs" "$demo" >/dev/null
