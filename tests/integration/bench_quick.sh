#!/bin/bash
# rt-bench smoke: every workload runs once, briefly, with and without the
# library (scripts/bench --quick).  Proves the benchmarks work; asserts
# nothing about speed.  A FAIL cell (a crash or hang under either
# library) fails this test.
# Env: RTPTHREAD_LIB, BUILD_DIR.  Exit 0 pass, 1 fail.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
build=${BUILD_DIR:?BUILD_DIR not set}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The programs of this build directory (make BUILD=...), not build/'s.
make -s -C "$top" BUILD="$build" rt-bench >/dev/null || { echo "FAIL: building rt-bench"; exit 1; }
"$top/scripts/bench" --quick --bin "$build/rt-bench" --lib "$lib" --out "$out" >"$out/table.txt" 2>&1
rc=$?
cat "$out/table.txt"
if [ "$rc" -ne 0 ]; then
	echo "FAIL: scripts/bench --quick exited with $rc"
	exit 1
fi
if grep -E '^\|' "$out/table.txt" | grep -q 'FAIL'; then
	echo "FAIL: a workload failed under one of the libraries"
	exit 1
fi
echo "PASS: every rt-bench workload ran under NPTL and rtpthread"
