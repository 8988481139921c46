#!/bin/bash
# USDT probes: the library carries glibc's probe names and the real-time
# ones under provider rtpthread (read from .note.stapsdt), and a tracer
# sees them fire with the counts of a known workload
# (tests/helpers/probe_workload.c): bpftrace attached to the library.
# Env: RTPTHREAD_LIB, HELPERS_DIR.  Exit 0 pass, 1 fail, 77 skip (never
# under CI=true, where scripts/deps installed bpftrace and root may trace).
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/probe_workload
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }

. "$(dirname "$0")/lib.sh"

command -v readelf >/dev/null || skip "readelf (binutils) not installed"
names=$(readelf -n "$lib" | awk '/Provider: rtpthread/ { p = 1; next } p && /Name:/ { print $2; p = 0 }' | sort -u)
fail=0
for want in mutex_init mutex_destroy mutex_entry mutex_acquired mutex_timedlock_entry \
	mutex_timedlock_acquired mutex_release cond_init cond_destroy cond_wait cond_timedwait \
	cond_signal cond_broadcast mutex_contended pi_boost mutex_owner_died cond_requeue barrier_wait; do
	grep -qx "$want" <<<"$names" || { echo "FAIL: no probe rtpthread:$want in $lib"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "ok: all $(wc -l <<<"$names") probe names in .note.stapsdt"

command -v bpftrace >/dev/null || skip "bpftrace not installed (the notes above are checked)"
tmp=$(mktemp -d)
trap 'kill "$tracer" 2>/dev/null; rm -rf "$tmp"' EXIT
probe() { echo "usdt:$lib:rtpthread:$1 /pid == \$1/ { @$1 = count(); }"; }
script="$(probe mutex_entry) $(probe mutex_contended) $(probe barrier_wait) $(probe cond_signal) $(probe cond_wait)"

# The workload waits on a FIFO so that the tracer can attach to its pid.
mkfifo "$tmp/go"
LD_PRELOAD="$lib" "$helper" <"$tmp/go" >"$tmp/workload" 2>&1 &
workload=$!
exec 3>"$tmp/go"
bpftrace -e "$script" "$workload" >"$tmp/trace" 2>&1 &
tracer=$!
for _ in $(seq 100); do
	grep -q '^Attaching' "$tmp/trace" && break
	kill -0 "$tracer" 2>/dev/null || break
	sleep 0.1
done
sleep 1 # attaching is reported before the uprobes are in place
if ! kill -0 "$tracer" 2>/dev/null; then
	echo x >&3
	wait "$workload"
	skip "bpftrace cannot trace here: $(grep -m1 -v RLIMIT_MEMLOCK "$tmp/trace")"
fi
echo go >&3
exec 3>&-
wait "$workload"
rc=$?
kill -INT "$tracer"
wait "$tracer"
cat "$tmp/workload"
[ "$rc" -eq 0 ] || { echo "FAIL: the workload failed (exit $rc)"; exit 1; }

count() { sed -n "s/^@$1: \([0-9]*\)$/\1/p" "$tmp/trace"; }
check() { # NAME TEST VALUE
	local n
	n=$(count "$1")
	if [ -n "$n" ] && [ "$n" "$2" "$3" ]; then
		echo "ok: rtpthread:$1 fired $n times ($2 $3)"
	else
		echo "FAIL: rtpthread:$1 fired ${n:-0} times, expected $2 $3"
		fail=1
	fi
}
check mutex_entry -ge 2200
check barrier_wait -eq 200
check cond_signal -eq 100
check cond_wait -ge 1
check mutex_contended -gt 0
[ "$fail" -eq 0 ] && echo "PASS: bpftrace sees the probes with the workload's counts"
exit "$fail"
