# Sourced by the integration scripts (tests/run does not run it).
#
# skip REASON: the machine lacks what the test needs.  Exit 77 (skip),
# but under CI=true exit 1: CI has the privileges and tools, so a skip
# there would hide a bug.
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $* (under CI=true a skip is a failure: the machine has what this needs)"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
