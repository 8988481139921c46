#!/bin/bash
# Default mutexes used as semaphores keep working under a configured
# protocol, without rt-tests: the unit tests of mutex semantics
# (test_mutex's "semantics" case: unlocks by a thread that does not hold
# the mutex, with a locker asleep on it or not, ptsematest's pattern in
# miniature) pass preloaded under RTPTHREAD_PROTOCOL=inherit and protect
# as they do on glibc, and each mutex that turns plain is named once on
# stderr with the call site.  (integration/ptsematest runs the real
# program when it is installed.)
# Env: BUILD_DIR, RTPTHREAD_LIB.  Exit 0 pass, 1 fail.
set -u
build=${BUILD_DIR:?BUILD_DIR not set}
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
prog=$build/tests/plain/test_mutex
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail=0

for protocol in inherit protect; do
	out=$(CK_RUN_CASE=semantics CK_FORK=yes RTPTHREAD_PROTOCOL=$protocol RTPTHREAD_CONF='' LD_PRELOAD="$lib" \
		timeout -k 5 120 "$prog" 2>"$err")
	rc=$?
	named=$(grep -c "^rtpthread: mutex 0x[0-9a-f]* ($protocol from the configuration) unlocked by thread [0-9]*, which does not hold it, at .*test_mutex+0x[0-9a-f]*: it is now the plain mutex the program asked for, as glibc allows\$" "$err")
	other=$(grep -vc '^rtpthread: mutex .* it is now the plain mutex' "$err")
	if [ "$rc" -ne 0 ] || [ "$named" -lt 3 ] || [ "$other" -ne 0 ]; then
		echo "FAIL: RTPTHREAD_PROTOCOL=$protocol: exit $rc, $named mutexes named as turned plain, $other other lines on stderr:"
		echo "$out" | tail -n 20
		head -n 20 "$err"
		fail=1
	else
		echo "ok: RTPTHREAD_PROTOCOL=$protocol: $(echo "$out" | grep -o 'Checks: [0-9]*, Failures: 0, Errors: 0'), $named mutexes named as turned plain"
	fi
done

[ "$fail" -eq 0 ] && echo "PASS: mutexes used as semaphores work under protocol inherit and protect"
exit "$fail"
