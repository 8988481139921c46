#!/bin/bash
# Bad input, NPTL against rtpthread, row by row.  tests/helpers/bad_input
# calls every exported function with the bad inputs POSIX lets an
# implementation detect, one forked child per row; it runs once on plain
# glibc and once under LD_PRELOAD, and the outcomes are joined by row.
# For every row, under the library:
#   - no crash, no hang, no object left corrupt, no fixture that failed;
#   - the same outcome as NPTL, or
#   - NPTL crashed or hung and we returned an error code, or
#   - the function is the library's own (glibc has none), or
#   - a deliberate difference listed in bad_input.differences (ROW-ID, our
#     outcome, NPTL's outcome, reason), where both outcomes must be exactly
#     what the run shows: a listed difference that no longer occurs fails.
# Every name the version script exports must have at least one row.
# Env: RTPTHREAD_LIB, HELPERS_DIR, BUILD_DIR (its librtpthread.map, the
# preprocessed version script).  Exit 0 pass, 1 fail.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/bad_input
here=$(cd "$(dirname "$0")" && pwd)
differences=$here/bad_input.differences
map=${BUILD_DIR:?BUILD_DIR not set}/librtpthread.map
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
[ -e "$lib" ] || { echo "FAIL: $lib missing"; exit 1; }
[ -r "$differences" ] || { echo "FAIL: $differences missing"; exit 1; }
[ -r "$map" ] || { echo "FAIL: $map missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# The helper's row table lives until exit by design: in the sanitize
# build LeakSanitizer would call that a leak, and leaks are not what this
# test looks for (ASan's other checks stay on).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# Both runs together take about 25 s; a run past 150 s is itself a hang.
timeout -k 5 150 "$helper" >"$tmp/nptl" 2>"$tmp/nptl.err"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: helper on glibc exited with $rc"; cat "$tmp/nptl.err"; exit 1; }
timeout -k 5 150 env LD_PRELOAD="$lib" "$helper" >"$tmp/ours" 2>"$tmp/ours.err"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: helper under LD_PRELOAD exited with $rc"; cat "$tmp/ours.err"; exit 1; }

# The preload really is in the second run, and only there.
if [ "$(head -n1 "$tmp/nptl")" != "# library: glibc (NPTL)" ] ||
	! head -n1 "$tmp/ours" | grep -q '^# library: rtpthread '; then
	echo "FAIL: wrong libraries: '$(head -n1 "$tmp/nptl")' and '$(head -n1 "$tmp/ours")'"
	exit 1
fi
tail -n +2 "$tmp/nptl" >"$tmp/nptl.rows"
tail -n +2 "$tmp/ours" >"$tmp/ours.rows"
if ! diff <(cut -f1-3 "$tmp/nptl.rows") <(cut -f1-3 "$tmp/ours.rows") >/dev/null; then
	echo "FAIL: the two runs have different rows"
	exit 1
fi

# Every exported name has a row.
sed -n '/global:/,/^}/p' "$map" | sed 's/global://; s/local:.*//; s/}.*//' | tr -s ' \t;' '\n' |
	grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | sort -u >"$tmp/exported"
cut -f2 "$tmp/ours.rows" | sort -u >"$tmp/covered"
missing=$(comm -23 "$tmp/exported" "$tmp/covered")
if [ -n "$missing" ]; then
	echo "FAIL: exported functions without a row: $(tr '\n' ' ' <<<"$missing")"
	fail=1
fi

# ID, function, NPTL, ours; the detail of a corrupt state is kept for the
# log but not compared.
paste <(cut -f1,2,4 "$tmp/nptl.rows") <(cut -f4 "$tmp/ours.rows") >"$tmp/joined"
printf '%-48s %-32s %-44s %s\n' ROW-ID function NPTL rtpthread
awk -F'\t' '{ printf "%-48s %-32s %-44s %s\n", $1, $2, $3, $4 }' "$tmp/joined"
echo

awk -F'\t' -v differences="$differences" '
	function norm(s) { sub(/state corrupt \(.*\)$/, "state corrupt", s); return s }
	function primary(s) { sub(/;.*/, "", s); return s }
	function bad(msg) { print "FAIL: " msg; failed = 1 }
	BEGIN {
		while ((getline line < differences) > 0) {
			if (line ~ /^#/ || line ~ /^[ \t]*$/)
				continue
			n = split(line, f, "\t")
			if (n < 4 || f[4] == "") {
				bad("malformed line in bad_input.differences: " line)
				continue
			}
			if (f[1] in listed_ours)
				bad(f[1] ": listed twice in bad_input.differences")
			listed_ours[f[1]] = f[2]
			listed_nptl[f[1]] = f[3]
		}
	}
	{
		id = $1; nptl = norm($3); ours = norm($4); rows++
		seen[id] = 1
		if (ours ~ /^(HANG|CRASH|EXIT|SETUP)/ || ours ~ /state corrupt/) {
			bad(id ": rtpthread " $4 " (NPTL: " $3 ")")
			next
		}
		if (nptl == "absent") {
			if (id in listed_ours)
				bad(id ": listed, but glibc has no such function")
			own++
			next
		}
		if (nptl ~ /^SETUP/) {
			if (id in listed_ours)
				bad(id ": listed, but NPTL cannot build the object (" $3 ")")
			unbuildable++
			next
		}
		if (ours == nptl) {
			if (id in listed_ours)
				bad(id ": listed as a difference, but both give " ours)
			else if (ours == "n/a")
				nothing++
			else if (ours == "SKIP")
				skipped++
			else
				identical++
			next
		}
		if (id in listed_ours) {
			# The signal of a crash depends on the build: ASan turns SIGSEGV
			# into SIGABRT.
			if (listed_ours[id] == ours &&
			    (listed_nptl[id] == nptl || (listed_nptl[id] ~ /^CRASH/ && nptl ~ /^CRASH/)))
				deliberate++
			else
				bad(id ": listed as \"" listed_ours[id] "\" vs NPTL \"" listed_nptl[id] "\", now \"" ours "\" vs \"" nptl "\"")
			next
		}
		p = primary(ours)
		if (nptl ~ /^(HANG|CRASH)/ && p !~ /^(0|void|n\/a|SERIAL|thrd_success|SKIP)$/) {
			nptl_broke++
			next
		}
		bad(id ": unlisted difference: rtpthread \"" ours "\", NPTL \"" nptl "\"")
	}
	END {
		for (id in listed_ours)
			if (!(id in seen))
				bad(id ": listed in bad_input.differences but no such row")
		printf "rows tried %d, identical to NPTL %d, NPTL crashed/hung and we returned an error %d, deliberate differences %d, NPTL cannot build the object (robust PP) %d, no bad input detectable %d, rtpthread only %d, skipped (SCHED_FIFO refused) %d\n",
			rows, identical, nptl_broke, deliberate, unbuildable, nothing, own, skipped
		exit failed
	}' "$tmp/joined" || fail=1

if [ "$fail" -eq 0 ]; then
	echo "PASS: every row matches NPTL, improves on its crash or hang, or is a listed difference"
fi
exit "$fail"
