#!/bin/bash
# PI (or PP) by default for a legacy program that never asks for a
# protocol: tests/helpers/legacy_boost makes mutexes each way a program
# does (static initializer, init with NULL attributes, a recursive
# attribute, C11 mtx_init; and one that asks for PTHREAD_PRIO_NONE) and
# prints whether a FIFO 10 owner ran at 30 while a FIFO 30 thread waited,
# read from /proc.  Boosted only with protocol=inherit, only in the
# programs the scoping names; a bad value is reported and ignored, and
# fatal with abort_conf.
# Env: RTPTHREAD_LIB, HELPERS_DIR.  Exit 0 pass, 1 fail, 77 skip.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/legacy_boost
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
fail=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# expect "WHAT" KIND PATTERN [ENV=VALUE...]: run the helper under the
# library with the environment given and match its line.
expect() {
	local what=$1 kind=$2 pattern=$3
	shift 3
	local out rc
	out=$(env "$@" LD_PRELOAD="$lib" "$helper" "$kind" 2>"$err")
	rc=$?
	if [ "$rc" -eq 77 ]; then
		[ "${CI:-}" = true ] && { echo "FAIL: SCHED_FIFO refused under CI=true"; exit 1; }
		echo "SKIP: SCHED_FIFO refused"
		exit 77
	fi
	if [ "$rc" -ne 0 ] || ! [[ $out =~ $pattern ]]; then
		echo "FAIL: $what: '$out' (exit $rc), expected /$pattern/; stderr: $(cat "$err")"
		fail=1
	else
		echo "ok: $what: $out"
	fi
}

for kind in static init-null recursive c11 none; do
	expect "no configuration, $kind" "$kind" "boosted=0 cond=ok"
done
for kind in static init-null recursive c11; do
	expect "RTPTHREAD_PROTOCOL=inherit, $kind" "$kind" "boosted=1 cond=ok" RTPTHREAD_PROTOCOL=inherit
done
expect "inherit, but the program asked for PRIO_NONE" none "boosted=0 cond=ok" RTPTHREAD_PROTOCOL=inherit
expect "RTPTHREAD_CONF protocol:inherit" static "boosted=1 cond=ok" RTPTHREAD_CONF=protocol:inherit
expect "protocol:protect, ceiling:40: the owner runs at the ceiling" static "cond=ok prio=40" \
	RTPTHREAD_CONF=protocol:protect,ceiling:40

# Scoping, by program name.
expect "ONLY_CMDS without this program" static "boosted=0" RTPTHREAD_PROTOCOL=inherit RTPTHREAD_ONLY_CMDS=foo,bar
expect "ONLY_CMDS with this program" static "boosted=1" RTPTHREAD_PROTOCOL=inherit RTPTHREAD_ONLY_CMDS=foo,legacy_boost
expect "SKIP_CMDS with this program" static "boosted=0" RTPTHREAD_PROTOCOL=inherit RTPTHREAD_SKIP_CMDS=legacy_boost
expect "SKIP_CMDS without this program" static "boosted=1" RTPTHREAD_PROTOCOL=inherit RTPTHREAD_SKIP_CMDS=foo
expect "only_cmds in RTPTHREAD_CONF" static "boosted=1" RTPTHREAD_CONF=protocol:inherit,only_cmds:foo:legacy_boost
expect "skip_cmds in RTPTHREAD_CONF" static "boosted=0" RTPTHREAD_CONF=protocol:inherit,skip_cmds:legacy_boost

# A bad value: one line on stderr, ignored.
expect "bad value ignored" static "boosted=0 cond=ok" RTPTHREAD_PROTOCOL=inheritt
if [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q '^rtpthread: RTPTHREAD_PROTOCOL: bad value "inheritt" (accepted: inherit, protect, report, none)$' "$err"; then
	echo "FAIL: bad value report: $(cat "$err")"
	fail=1
fi
# ... and fatal with abort_conf, before the program runs.
out=$(env RTPTHREAD_CONF=abort_conf:true,protocol:inherit,colour:blue LD_PRELOAD="$lib" "$helper" static 2>"$err")
rc=$?
if [ "$rc" -ne 134 ] || [ -n "$out" ] || ! grep -q '^rtpthread: RTPTHREAD_CONF: unknown key "colour"' "$err"; then
	echo "FAIL: abort_conf: exit $rc, output '$out', stderr: $(cat "$err")"
	fail=1
else
	echo "ok: abort_conf: the unknown key is fatal (SIGABRT) and named"
fi

# Without the library the same variable does nothing: the boost is ours.
out=$(RTPTHREAD_PROTOCOL=inherit "$helper" static)
[[ $out =~ boosted=0 ]] || { echo "FAIL: NPTL boosted: $out"; fail=1; }

# A misspelt variable is reported, not silently ignored.
RTPTHREAD_PROTOCOLL=inherit LD_PRELOAD="$lib" /bin/true 2>"$err"
if ! grep -q '^rtpthread: environment: unknown variable "RTPTHREAD_PROTOCOLL" (accepted: RTPTHREAD_CONF, ' "$err"; then
	echo "FAIL: RTPTHREAD_PROTOCOLL not reported: $(cat "$err")"
	fail=1
else
	echo "ok: an unknown RTPTHREAD_ variable is reported"
fi

[ "$fail" -eq 0 ] && echo "PASS: the default protocol applies where configured, and only there"
exit "$fail"
