#!/bin/bash
# scripts/tail-trace works, and leaves tracefs as it found it: a short run
# with the library prints the cause table, whose rows add up to the slow
# pairs it reports, and the trace clock, the buffer size and every event
# it enabled are back afterwards.  Asserts nothing about speed.
# Needs x86_64, root and tracefs: without them it skips, and under
# CI=true fails.
# Env: RTPTHREAD_LIB, BUILD_DIR.  Exit 0 pass, 1 fail, 77 skip.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
build=${BUILD_DIR:?BUILD_DIR not set}
top=$(cd "$(dirname "$0")/../.." && pwd)
tracefs=/sys/kernel/tracing

. "$(dirname "$0")/lib.sh"
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: x86_64 only"; exit 77; }
[ -w "$tracefs/trace_clock" ] || skip "no writable tracefs at $tracefs"
grep -q x86-tsc "$tracefs/trace_clock" || skip "tracefs has no x86-tsc clock"
make -s -C "$top" BUILD="$build" rt-bench >/dev/null || { echo "FAIL: building rt-bench"; exit 1; }

clock_before=$(cat "$tracefs/trace_clock")
# The size in use: "7 (expanded: 1408)" before tracing first runs is 1408.
# The kernel rounds a size written to whole pages of its own (1408 reads
# back as 1410): a restored size may differ by that much.
buffer_size() { sed -E 's/.*expanded: ([0-9]+).*/\1/' "$tracefs/buffer_size_kb"; }
size_before=$(buffer_size)
out=$("$top/scripts/tail-trace" --bin "$build/rt-bench" --lib "$lib" -i 20 -d 0.3 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: scripts/tail-trace exited $rc"; exit 1; }
slow=$(echo "$out" | sed -n 's/.* timed pairs, \([0-9]*\) over 4 us.*/\1/p')
[ -n "$slow" ] || { echo "FAIL: no summary line"; exit 1; }
echo "$out" | grep -q '^| cause | pairs |' || { echo "FAIL: no cause table"; exit 1; }
rows=$(echo "$out" | awk -F'|' '/^\| [a-z]/ && $2 !~ /cause/ { n += $3 } END { print n + 0 }')
[ "$rows" -eq "$slow" ] || { echo "FAIL: the rows count $rows pairs, the summary $slow"; exit 1; }

[ "$(cat "$tracefs/trace_clock")" = "$clock_before" ] || { echo "FAIL: trace_clock not restored"; exit 1; }
size_after=$(buffer_size)
[ "$size_after" -ge "$size_before" ] && [ "$size_after" -le $((size_before + 8)) ] ||
	{ echo "FAIL: buffer_size_kb not restored ($size_before before, $size_after after)"; exit 1; }
left=$(grep -l '^1' "$tracefs"/events/{irq,irq_vectors,nmi,exceptions,sched}/*/enable \
	"$tracefs/events/syscalls/sys_enter_futex/enable" 2>/dev/null)
[ -z "$left" ] || { echo "FAIL: events left enabled: $left"; exit 1; }
echo "PASS: tail-trace table adds up to $slow slow pairs; tracefs restored"
