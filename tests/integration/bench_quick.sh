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
# --latency-target: the run says in its header that it held the PM QoS
# request (root can; CI runs as root).
"$top/scripts/bench" --quick --latency-target --only cond-perf --bin "$build/rt-bench" --lib "$lib" \
	--out "$out/target" >"$out/target.txt" 2>&1 || { cat "$out/target.txt"; echo "FAIL: --latency-target run"; exit 1; }
held=$(grep -h '^# latency_target:' "$out/target/runs.csv")
case "$held" in
"# latency_target: 0 us"*) ;;
*"refused"*)
	if [ "$(id -u)" -eq 0 ] || [ "${CI:-}" = true ]; then
		echo "FAIL: --latency-target refused: $held"
		exit 1
	fi
	echo "SKIP: --latency-target refused (not root): $held" ;;
*)
	echo "FAIL: --latency-target not in the header: '$held'"
	exit 1 ;;
esac
if ! grep -q '^# latency_target: none' "$out/runs.csv"; then
	echo "FAIL: a run without --latency-target does not say so"
	exit 1
fi
echo "PASS: every rt-bench workload ran under NPTL and rtpthread; --latency-target is held and named"
