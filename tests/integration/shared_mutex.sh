#!/bin/bash
# A C++ program using std::shared_mutex and std::shared_timed_mutex,
# built by g++ as any program is (no rtpthread header), under LD_PRELOAD:
# its pthread_rwlock_* references (GLIBC_2.34, the clock variants for
# steady_clock deadlines) must bind to the library, and readers and
# writers must exclude each other (shared_mutex.cc checks it).
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail, 77 skip (no g++).
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
here=$(cd "$(dirname "$0")" && pwd)
command -v g++ >/dev/null || { echo "SKIP: g++ not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++17 -pthread -o "$tmp/shared_mutex" "$here/shared_mutex.cc" -ldl || { echo "FAIL: g++"; exit 1; }

"$tmp/shared_mutex" || { echo "FAIL: the program fails on plain glibc"; exit 1; }
timeout -k 5 60 env LD_PRELOAD="$lib" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$tmp/bind" "$tmp/shared_mutex" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc under LD_PRELOAD"; exit 1; }
grep -q "preloaded: yes" "$tmp/out" || { echo "FAIL: the library is not in the process"; exit 1; }
fail=0
# Threads that bind symbols at once interleave their LD_DEBUG lines (the
# loader writes one in pieces): the object a symbol went to is the one
# named just before it.
for f in pthread_rwlock_rdlock pthread_rwlock_wrlock pthread_rwlock_unlock pthread_rwlock_clockrdlock \
	pthread_rwlock_clockwrlock; do
	if ! cat "$tmp"/bind* | grep -q "to [^ ]*librtpthread[^ ]* \[[0-9]*\]: normal symbol \`$f'"; then
		echo "FAIL: $f did not bind to the library"
		fail=1
	fi
	if cat "$tmp"/bind* | grep -q "to [^ ]*/libc\.so[^ ]* \[[0-9]*\]: normal symbol \`$f'"; then
		echo "FAIL: $f bound to glibc"
		fail=1
	fi
done
[ "$fail" -eq 0 ] && echo "PASS: std::shared_mutex and std::shared_timed_mutex run on the library"
exit "$fail"
