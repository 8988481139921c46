#!/bin/bash
# rt-tests' ptsematest under LD_PRELOAD: default mutexes used as
# semaphores (unlocked by non-owners, relocked by their owner).  It must
# finish its cycles for every thread pair and exit 0, as it does on glibc,
# with no protocol configured and under RTPTHREAD_PROTOCOL=inherit and
# protect, where each such mutex turns plain at its first foreign unlock
# and says so once on stderr.
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail, 77 skip.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
loops=${PTSEMATEST_LOOPS:-2000}
bin=$(command -v ptsematest) || { echo "SKIP: ptsematest (rt-tests) not installed"; exit 77; }
chrt -f 1 true 2>/dev/null || { echo "SKIP: SCHED_FIFO refused"; exit 77; }

# The preload really is loaded into it.
if ! LD_PRELOAD="$lib" LD_TRACE_LOADED_OBJECTS=1 "$bin" | grep -q 'librtpthread\.so\.1'; then
	echo "FAIL: $bin does not load $lib under LD_PRELOAD"
	exit 1
fi

out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
pairs=$(getconf _NPROCESSORS_CONF)

for protocol in none inherit protect; do
echo "== RTPTHREAD_PROTOCOL=$protocol"
timeout -k 5 30 env LD_PRELOAD="$lib" RTPTHREAD_PROTOCOL=$protocol "$bin" -a -t -p99 -i100 -d25 -l "$loops" -q >"$out" 2>"$err"
rc=$?
cat "$out" "$err"
if [ "$rc" -ne 0 ]; then
	[ "$rc" -eq 124 ] && echo "FAIL: ptsematest hung (killed after 30 s)" || echo "FAIL: ptsematest exited with $rc"
	exit 1
fi

# -t: one pair per configured CPU.  Each pair prints
#   #0: ID.., P99, CPU0, I100; #1: ID.., P99, CPU0, Cycles N
#   #1 -> #0, Min .., Cur .., Avg .., Max ..
# The first pair to finish its loops stops them all, so the others (with
# longer intervals) may be a little short: each must have made progress.
cycles=$(sed -n 's/.*; #[0-9]*: ID[0-9]*, P[0-9]*, CPU[0-9]*, Cycles \([0-9]*\)$/\1/p' "$out")
results=$(grep -cE '^#[0-9]+ -> #[0-9]+, Min +[0-9]+, Cur +[0-9]+, Avg +[0-9]+, Max +[0-9]+' "$out")
full=0 short=0
for n in $cycles; do
	[ "$n" -ge "$loops" ] && full=$((full + 1))
	[ "$n" -lt $((loops / 2)) ] && short=$((short + 1))
done
if [ "$(echo "$cycles" | wc -w)" -ne "$pairs" ] || [ "$results" -ne "$pairs" ] || [ "$full" -lt 1 ] || [ "$short" -gt 0 ]; then
	echo "FAIL: expected $pairs pairs with results, one at $loops cycles and none below $((loops / 2)); cycles:" $cycles "results: $results"
	exit 1
fi
# Two mutexes per pair, each named once when it turns plain.
warned=$(grep -c "^rtpthread: mutex .* ($protocol from the configuration) unlocked by thread [0-9]*, which does not hold it, at .*ptsematest" "$err")
expected=$((2 * pairs))
[ "$protocol" = none ] && expected=0
if [ "$warned" -ne "$expected" ] || [ "$(wc -l <"$err")" -ne "$expected" ]; then
	echo "FAIL: RTPTHREAD_PROTOCOL=$protocol: expected $expected lines on stderr naming a mutex turned plain, got $warned of $(wc -l <"$err")"
	exit 1
fi
echo "ok: RTPTHREAD_PROTOCOL=$protocol: $pairs thread pairs, cycles:" $cycles
done
echo "PASS: ptsematest with no protocol, inherit and protect"
