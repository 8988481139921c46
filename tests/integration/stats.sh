#!/bin/bash
# The contention statistics of a known pattern
# (tests/helpers/stats_workload.c), read through rtpthread_mutex_stats and
# from the report printed at exit, to stderr or to a file; each row named
# by the code that first waited (object+offset, or symbol+offset where the
# program exports it); nothing at all without stats.
# Env: RTPTHREAD_LIB, HELPERS_DIR.  Exit 0 pass, 1 fail, 77 skip.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/stats_workload
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

RTPTHREAD_STATS=1 LD_PRELOAD="$lib" "$helper" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
if [ "$rc" -eq 77 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: skipped under CI=true: $(cat "$tmp/out")"; exit 1; }
	exit 77
fi
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc: $(cat "$tmp/err")"; exit 1; }

# field NAME KEY: the value of KEY= on NAME's line
field() { sed -n "s/^$1 .*\\b$2=\\([0-9]*\\).*/\\1/p" "$tmp/out"; }
expect() { # NAME KEY TEST VALUE
	local v
	v=$(field "$1" "$2")
	if [ -n "$v" ] && [ "$v" "$3" "$4" ]; then
		echo "ok: $1 $2=$v ($3 $4)"
	else
		echo "FAIL: $1 $2=${v:-?}, expected $3 $4"
		fail=1
	fi
}
expect held contended -eq 3
expect held maxms -ge 50
expect free contended -eq 0
expect pi contended -eq 1
expect pi boosts -eq 1
expect pi top -eq 30
expect plain contended -eq 1
expect plain boosts -eq 0
expect plain top -eq 30
expect robust died -eq 1
expect robust contended -eq 0
expect cond requeued -eq 3

# The report at exit: a header, one row per listed mutex (the five above,
# not the free one), the legend.
rows=$(grep -c '^rtpthread: *0x' "$tmp/err")
if ! grep -q '^rtpthread: contention report: 5 mutexes contended' "$tmp/err" || [ "$rows" -ne 5 ]; then
	echo "FAIL: report at exit:"
	cat "$tmp/err"
	fail=1
else
	echo "ok: report at exit with $rows rows"
fi
# The PI row: 1 boost, top priority 30, flag I.
if ! grep -Eq '^rtpthread: +0x[0-9a-f]+ +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +30 +[0-9.]+ +1 +0 +0 --I-' "$tmp/err"; then
	echo "FAIL: no PI row with contended 1, top priority 30, 1 boost"
	fail=1
fi

# Each row names the code that first waited (object+offset: the helper
# exports no symbols), and a histogram of the waits follows: the 100 ms
# and 50 ms waits are in the buckets from 32 ms and 65 ms (powers of two
# of microseconds).
if ! grep -Eq '^rtpthread: +0x[0-9a-f]+ +3 .* stats_workload\+0x[0-9a-f]+$' "$tmp/err" ||
	! grep -q '^rtpthread: wait histogram' "$tmp/err" ||
	! grep -Eq '^rtpthread: +65ms +131ms +3 #+$' "$tmp/err"; then
	echo "FAIL: no row named stats_workload+0x..., or no histogram with 3 waits from 65 ms:"
	cat "$tmp/err"
	fail=1
else
	echo "ok: rows named by their code, histogram of the waits"
fi

# A program that exports the function that waited (-rdynamic): the row
# names it as symbol+offset, and the object after it.
if command -v cc >/dev/null; then
	cat >"$tmp/symbols.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t waiter_tid;
__attribute__((noinline)) void contend_here(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
}
static void *waiter(void *arg)
{
	(void)arg;
	waiter_tid = (pid_t)syscall(SYS_gettid);
	contend_here();
	return NULL;
}
int main(void)
{
	pthread_t t;
	char path[64], stat[256];
	pthread_mutex_lock(&m);
	pthread_create(&t, NULL, waiter, NULL);
	/* Unlock once the waiter sleeps (state S), within 10 s. */
	for (int i = 0; i < 10000; i++) {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		if (!waiter_tid)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)waiter_tid);
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
		if (f)
			fclose(f);
		stat[n] = '\0';
		char *state = strrchr(stat, ')');
		if (state && state[1] == ' ' && state[2] == 'S')
			break;
	}
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return 0;
}
C
	if ! cc -O2 -rdynamic -pthread -o "$tmp/stats_symbols" "$tmp/symbols.c"; then
		echo "FAIL: cc could not build the exported-symbol program"
		fail=1
	else
		RTPTHREAD_STATS=1 LD_PRELOAD="$lib" "$tmp/stats_symbols" 2>"$tmp/symbols.err"
		if grep -Eq '^rtpthread: +0x[0-9a-f]+ +1 .* contend_here\+0x[0-9a-f]+ \(stats_symbols\)$' "$tmp/symbols.err"; then
			echo "ok: a row names an exported function as symbol+offset (object)"
		else
			echo "FAIL: no row named contend_here+0x... (stats_symbols):"
			cat "$tmp/symbols.err"
			fail=1
		fi
	fi
else
	echo "skip: no cc to build the exported-symbol program"
fi

# A program that closes its stderr before it exits (coreutils' env, as xz
# does): the report still reaches the stderr it was started with.
RTPTHREAD_STATS=1 LD_PRELOAD="$lib" env >/dev/null 2>"$tmp/closed"
if ! grep -q '^rtpthread: contention report' "$tmp/closed"; then
	echo "FAIL: no report from a program that closed its stderr: $(cat "$tmp/closed")"
	fail=1
else
	echo "ok: the report survives a program that closes stderr before it exits"
fi

# A program started with stderr closed, whose first open (a data file)
# gets fd 2 and stays open until exit: no report into its data.
if command -v cc >/dev/null; then
	printf '%s\n' '#include <fcntl.h>' '#include <unistd.h>' \
		'int main(int argc, char **argv) { (void)argc; int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);' \
		'return fd == 2 && write(fd, "data\n", 5) == 5 ? 0 : 1; }' >"$tmp/fd2.c"
	if ! cc -o "$tmp/fd2" "$tmp/fd2.c"; then
		echo "FAIL: cc could not build the program that opens a file as fd 2"
		fail=1
	else
		(exec 2>&-; RTPTHREAD_STATS=1 LD_PRELOAD="$lib" "$tmp/fd2" "$tmp/data")
		rc=$?
		if [ "$rc" -ne 0 ] || [ "$(cat "$tmp/data")" != data ]; then
			echo "FAIL: a program started with stderr closed: exit $rc, its data file holds:"
			cat "$tmp/data"
			fail=1
		else
			echo "ok: no report into the file a program started with stderr closed opened as fd 2"
		fi
	fi
fi

# To a file.
RTPTHREAD_CONF="stats:$tmp/report" LD_PRELOAD="$lib" "$helper" >/dev/null 2>"$tmp/err2"
if ! grep -q '^rtpthread: contention report: 5 mutexes' "$tmp/report" || [ -s "$tmp/err2" ]; then
	echo "FAIL: stats:PATH: file: $(cat "$tmp/report" 2>&1); stderr: $(cat "$tmp/err2")"
	fail=1
else
	echo "ok: stats:PATH writes the report to the file, nothing to stderr"
fi

# On a signal too: one report when it arrives, one at exit.
RTPTHREAD_CONF="stats:$tmp/signalled,stats_signal:USR1" LD_PRELOAD="$lib" sleep 2 &
sleeper=$!
sleep 0.5
kill -USR1 "$sleeper"
sleep 0.3
on_signal=$(grep -c '^rtpthread: contention report' "$tmp/signalled" 2>/dev/null)
wait "$sleeper"
sleeper_rc=$?
at_exit=$(grep -c '^rtpthread: contention report' "$tmp/signalled" 2>/dev/null)
if [ "${on_signal:-0}" -eq 1 ] && [ "${at_exit:-0}" -eq 2 ] && [ "$sleeper_rc" -eq 0 ]; then
	echo "ok: stats_signal:USR1 prints a report when the signal arrives, and the program goes on"
else
	echo "FAIL: stats_signal: $on_signal report(s) after the signal, $at_exit at exit, exit $sleeper_rc"
	fail=1
fi

# protocol=report: statistics on, no protocol changed; the default mutex
# held by FIFO 10 while FIFO 30 waits counts the wait inheritance would
# have bounded, and its row is flagged i.
RTPTHREAD_PROTOCOL=report LD_PRELOAD="$lib" "$helper" >"$tmp/out" 2>"$tmp/err4"
expect plain boosts -eq 1
expect pi boosts -eq 1
expect held boosts -eq 0
if ! grep -Eq '^rtpthread: +0x[0-9a-f]+ +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +30 +[0-9.]+ +1 +0 +0 --i-' "$tmp/err4" ||
	! grep -q 'i: no protocol of its own' "$tmp/err4"; then
	echo "FAIL: protocol=report: no row flagged i with 1 wait inheritance would have bounded:"
	cat "$tmp/err4"
	fail=1
else
	echo "ok: protocol=report lists the default mutex whose wait inheritance would have bounded"
fi

# Off: the API reports nothing, and nothing is printed.
LD_PRELOAD="$lib" "$helper" >"$tmp/off" 2>"$tmp/err3"
if grep -qv 'contended=0 boosts=0 top=0 requeued=0 died=0' "$tmp/off" || [ -s "$tmp/err3" ]; then
	echo "FAIL: without stats: $(cat "$tmp/off" "$tmp/err3")"
	fail=1
else
	echo "ok: without stats nothing is counted or printed"
fi
[ "$fail" -eq 0 ] && echo "PASS: the statistics of a known pattern are exact"
exit "$fail"
