#!/bin/bash
# Process-shared mutexes between a process with the library and one
# without, both ways, and the library's refusal of glibc's process-shared
# conditions and barriers (see tests/helpers/pshared_pair.c and
# docs/pshared.md).
# Env: RTPTHREAD_LIB, HELPERS_DIR.  Exit 0 pass, 1 fail, 77 skip.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/pshared_pair
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
LD_PRELOAD=$lib "$helper"
rc=$?
if [ "$rc" -eq 77 ] && [ "${CI:-}" = true ]; then
	echo "FAIL: skipped under CI=true"
	exit 1
fi
exit "$rc"
