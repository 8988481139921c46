#!/bin/bash
# rt-tests under LD_PRELOAD (pi_stress and ptsematest are in
# tests/integration):
#   cyclictest       2 threads, 2000 loops at 200 us, SCHED_OTHER and then
#                    SCHED_FIFO 80: both threads report, the first one all
#                    its loops, every max latency under $max_us
#   rt-migrate-test  SCHED_FIFO tasks released together by barriers, with
#                    its own check that a higher priority never ran after a
#                    lower one (-c): it must print "Passed!"
#   cyclicdeadline   2 SCHED_DEADLINE threads for 2 s: both report their
#                    cycles, max latency under $max_us
#   deadline_test    2 SCHED_DEADLINE threads for its fixed 10 s: both
#                    report their periods, none failed
# A part whose result is wrong under the library is run again on plain
# glibc: if that fails too the machine is too noisy to judge (a SKIP line),
# otherwise the part fails.  The SCHED_FIFO and SCHED_DEADLINE parts are
# skipped (a SKIP line) where the policy is refused.
# Env: RTPTHREAD_LIB.  Exit 0 pass, 1 fail, 77 skip (rt-tests missing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for p in cyclictest rt-migrate-test cyclicdeadline deadline_test; do
	rw_need "$p" rt-tests
done
max_us=${RT_MAX_LATENCY_US:-20000}
out=$rw_tmp/out
why=
ran=()

# run MODE TAG SECONDS CMD...: MODE "preload" (traced; the bindings are
# checked) or "plain".
run() {
	local mode=$1 tag=$2 secs=$3 rc=0
	shift 3
	if [ "$mode" = preload ]; then
		rw_preload "$tag" "$secs" "$@" >"$out" 2>&1 || rc=$?
	else
		rw_plain "$secs" "$@" >"$out" 2>&1 || rc=$?
	fi
	cat "$out"
	if [ "$rc" -ne 0 ]; then
		[ "$rc" -eq 124 ] && why="$1 hung (killed after $secs s)" || why="$1 exited with $rc"
		return 1
	fi
	[ "$mode" = plain ] || rw_bound "$tag" pthread_barrier_init pthread_barrier_wait
}

# judge NAME FUNCTION ARGS...: FUNCTION MODE ARGS... sets $why and
# returns 0 if the result is right.
judge() {
	local name=$1 ours
	shift
	echo "--- $name"
	if "$@" preload; then
		echo "ok: $name: $why"
		ran+=("$name")
		return 0
	fi
	ours=$why
	echo "$name failed under LD_PRELOAD ($ours); control run on plain glibc:"
	if "$@" plain; then
		rw_fail "$name under LD_PRELOAD: $ours (plain glibc passed: $why)"
	fi
	echo "SKIP: $name fails on plain glibc too ($why): machine too noisy to judge"
}

# T lines of cyclictest and cyclicdeadline, as "key:value" words:
#   T: 0 (17031) P:80 I:200 C:   2000 Min:      9 Act:   63 Avg:   66 Max:     300
tlines() {
	grep -E '^T: *[0-9]+ ' "$out" | sed -E 's/: +/:/g'
}

# field KEY LINE: the value of KEY: in LINE.
field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1:\([0-9]*\)\$/\1/p"
}

# thread_results CHECK: the two T lines of the last run, each with a
# readable C: and Max:, Max under the bound, and `CHECK N C LINE` true
# (it sets why when not); why ends as the cycles and maxima.
thread_results() {
	local check=$1 lines line n=0 c max cs='' maxes=''
	lines=$(tlines)
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		c=$(field C "$line") max=$(field Max "$line")
		if [ -z "$c" ] || [ -z "$max" ]; then
			why="unreadable result line: $line"
			return 1
		fi
		"$check" "$n" "$c" "$line" || return 1
		if [ "$max" -ge "$max_us" ]; then
			why="thread $n max latency $max us (bound $max_us us)"
			return 1
		fi
		cs="$cs $c" maxes="$maxes $max"
		n=$((n + 1))
	done <<<"$lines"
	if [ "$n" -ne 2 ]; then
		why="$n thread results, expected 2"
		return 1
	fi
	why="cycles$cs, max latency$maxes us"
}

# cyclictest: the priority asked for; the first thread (200 us) stops the
# run after its loops, the second (700 us) has made about 2/7 of them.
cyclictest_thread() {
	local n=$1 c=$2 p
	p=$(field P "$3")
	if [ "$p" != "$ct_prio" ]; then
		why="thread $n ran at priority ${p:-?}, not $ct_prio"
		return 1
	fi
	if { [ "$n" -eq 0 ] && [ "$c" -ne "$ct_loops" ]; } || [ "$c" -lt $((ct_loops / 7)) ]; then
		why="thread $n made $c cycles"
		return 1
	fi
}

cyclictest_part() {
	local mode=$2 args
	ct_prio=$1 ct_loops=2000
	args=(-t2 -l "$ct_loops" -i 200 -m -q)
	[ "$ct_prio" -eq 0 ] || args+=(-p "$ct_prio")
	run "$mode" cyclictest 60 cyclictest "${args[@]}" || return 1
	thread_results cyclictest_thread
}

migrate_part() {
	local mode=$1 loops=15 rows tasks
	run "$mode" rt-migrate-test 60 rt-migrate-test -c -l "$loops" -s 50 -q || return 1
	rows=$(grep -cE '^ +[0-9]+: +[0-9]' "$out" || true)
	tasks=$(grep -cE '^ Task [0-9]+ \(prio [0-9]+\)' "$out" || true)
	if grep -q 'Failed!' "$out" || ! grep -q '^ Passed!$' "$out"; then
		why="no 'Passed!' verdict"
		return 1
	fi
	if [ "$rows" -ne "$loops" ] || [ "$tasks" -lt 2 ]; then
		why="$rows of $loops iterations reported, $tasks tasks"
		return 1
	fi
	why="Passed! ($tasks tasks, $rows iterations)"
}

# cyclicdeadline: 10 ms and 10.5 ms periods, about 200 cycles each in 2 s.
cyclicdeadline_thread() {
	if [ "$2" -lt 100 ]; then
		why="thread $1 made $2 cycles in 2 s"
		return 1
	fi
}

cyclicdeadline_part() {
	local mode=$1
	run "$mode" cyclicdeadline 60 cyclicdeadline -D 2 -q -t 2 -i 10000 || return 1
	thread_results cyclicdeadline_thread
}

deadline_test_part() {
	local mode=$1 periods p
	run "$mode" deadline_test 60 deadline_test -t 2 -i 10000 -p 40 || return 1
	# ("Failed to perform task within runtime" is its calibration, which
	# then retries with more overhead.)
	if grep -qE '^(RT )?Thread [0-9]* ?failed' "$out"; then
		why="reported: $(grep -m1 -E '^(RT )?Thread [0-9]* ?failed' "$out")"
		return 1
	fi
	periods=$(sed -n 's/^nr_periods : *\([0-9]*\)$/\1/p' "$out")
	if [ "$(echo "$periods" | wc -w)" -ne 2 ]; then
		why="$(echo "$periods" | wc -w) thread reports, expected 2"
		return 1
	fi
	# 10 s at 10 ms and 10.5 ms periods: about 1000 and 950.
	for p in $periods; do
		if [ "$p" -lt 500 ]; then
			why="a thread ran only $p periods in 10 s"
			return 1
		fi
	done
	why="periods: $(rw_words <<<"$periods")"
}

for p in cyclictest rt-migrate-test cyclicdeadline deadline_test; do
	rw_probe "$p" "$p" --help
done
judge "cyclictest SCHED_OTHER" cyclictest_part 0

if chrt -f 1 true 2>/dev/null; then
	judge "cyclictest SCHED_FIFO 80" cyclictest_part 80
	judge "rt-migrate-test" migrate_part
else
	echo "SKIP: SCHED_FIFO refused here: cyclictest -p 80 and rt-migrate-test not run"
fi

if chrt --deadline --sched-runtime 1000000 --sched-deadline 10000000 --sched-period 10000000 0 true 2>/dev/null; then
	judge "cyclicdeadline" cyclicdeadline_part
	judge "deadline_test" deadline_test_part
else
	echo "SKIP: SCHED_DEADLINE refused here (chrt --deadline failed): cyclicdeadline and deadline_test not run"
fi

[ "${#ran[@]}" -gt 0 ] || rw_fail "no part could be judged"
echo "PASS: $(printf '%s, ' "${ran[@]}" | sed 's/, $//')"
