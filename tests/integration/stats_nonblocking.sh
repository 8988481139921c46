#!/bin/bash
# The contention report never blocks the program: a FIFO nobody reads, a
# FIFO (or stderr) that is a full pipe, an unwritable path; at exit and
# from the stats_signal handler alike.  Each run is bounded by `timeout`:
# a report that blocks fails the test instead of hanging it.
# Env: RTPTHREAD_LIB, HELPERS_DIR.  Exit 0 pass, 1 fail.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/stats_output
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
tmp=$(mktemp -d)
trap 'exec 3>&-; rm -rf "$tmp"' EXIT
fail=0
limit=${REPORT_LIMIT:-20} # seconds: a report that gives up takes well under one

# check NAME EXPECTED_STDOUT CONF [ARG] [STDERR]: the helper under CONF
# ends within the limit, exit 0, with EXPECTED_STDOUT.
check() {
	local name=$1 expected=$2 conf=$3 arg=${4:-} err=${5:-$tmp/err}
	local out rc
	out=$(timeout -k 2 "$limit" env RTPTHREAD_CONF="$conf" LD_PRELOAD="$lib" "$helper" $arg 2>"$err")
	rc=$?
	out=$(echo $out)
	if [ "$rc" -eq 0 ] && [ "$out" = "$expected" ]; then
		echo "ok: $name"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "FAIL: $name: still blocked after ${limit}s (stdout: $out)"
		fail=1
	else
		echo "FAIL: $name: exit $rc, stdout '$out', expected '$expected'"
		fail=1
	fi
}

mkfifo "$tmp/fifo"
# A FIFO nobody reads: opening it for writing would wait for a reader.
check "report at exit to a FIFO nobody reads" "done" "stats:$tmp/fifo"
check "report on stats_signal to a FIFO nobody reads" "raised done" \
	"stats:$tmp/fifo,stats_signal:USR1" signal

# A FIFO with a reader that never reads, already full: every write would
# wait.  (fd 3 keeps it open for reading; dd fills it without blocking.)
exec 3<>"$tmp/fifo"
dd if=/dev/zero of="$tmp/fifo" bs=4096 count=1024 oflag=nonblock 2>/dev/null
check "report at exit to a full FIFO" "done" "stats:$tmp/fifo"
check "report on stats_signal to a full FIFO" "raised done" "stats:$tmp/fifo,stats_signal:USR1" signal
# stderr that is a full pipe (the blocking descriptor the program was given).
check "report at exit to stderr, a full pipe" "done" "stats:1" "" "$tmp/fifo"
check "report on stats_signal to stderr, a full pipe" "raised done" "stats:1,stats_signal:USR1" signal "$tmp/fifo"
exec 3>&-

# A path that cannot be opened.
check "report to an unwritable path" "raised done" "stats:$tmp/no/such/dir/report,stats_signal:USR1" signal

# And the report still arrives where it can: a regular file gets both.
check "report to a file" "raised done" "stats:$tmp/report,stats_signal:USR1" signal
reports=$(grep -c '^rtpthread: contention report: 1 mutexes contended' "$tmp/report" 2>/dev/null)
if [ "${reports:-0}" -eq 2 ]; then
	echo "ok: a regular file gets the report from the handler and at exit"
else
	echo "FAIL: a regular file got ${reports:-0} reports, expected 2: $(cat "$tmp/report" 2>&1)"
	fail=1
fi

[ "$fail" -eq 0 ] && echo "PASS: the contention report never blocks the program"
exit "$fail"
