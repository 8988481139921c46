#!/bin/bash
# gdb shows the owner of a locked mutex of every kind: `p m` on a live
# process (tests/helpers/gdb_owner, stopped by SIGTRAP with the library
# preloaded) names the holder's TID in __owner, as glibc keeps it, or as
# "Owner ID" where glibc's pretty printers are installed (Debian ships
# none, so gdb prints the fields).
# Env: RTPTHREAD_LIB, HELPERS_DIR.  Exit 0 pass, 1 fail, 77 skip.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/gdb_owner
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
if ! command -v gdb >/dev/null; then
	echo "SKIP: gdb is not installed"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
mutexes="m_normal m_recursive m_errorcheck m_pi m_robust m_shared m_static"
args=(-batch -nx -ex "set environment LD_PRELOAD=$lib" -ex run)
for m in $mutexes; do
	args+=(-ex "p $m")
done
out=$(timeout 60 gdb "${args[@]}" "$helper" 2>&1)
tid=$(printf '%s\n' "$out" | sed -n 's/^tid \([0-9]*\)$/\1/p')
if [ -z "$tid" ]; then
	echo "FAIL: the helper did not run under gdb:"
	printf '%s\n' "$out" | tail -n 20
	exit 1
fi
fail=0
n=0
for m in $mutexes; do
	n=$((n + 1)) # gdb numbers the values it prints: $1 is the first
	line=$(printf '%s\n' "$out" | grep "^\\\$$n = ")
	if [[ $line =~ (__owner\ =\ |Owner\ ID\ =\ )$tid[^0-9] ]]; then
		echo "ok: $m names owner $tid"
	else
		echo "FAIL: $m does not name owner $tid: $line"
		fail=1
	fi
done
[ "$fail" -eq 0 ] && echo "PASS: gdb shows the owner of every kind"
exit "$fail"
