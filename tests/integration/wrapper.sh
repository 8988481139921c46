#!/bin/bash
# The rtpthread wrapper's command line, as faketime, eatmydata, chrt and
# taskset behave: options with their value as the next word or after '='
# (and short ones glued: -pinherit), exit 2 on a usage error with the
# message on stderr, 127 and 126 for a command that is missing or cannot
# be run (as env(1), one clear line, no shell noise), 125 when the library
# or the configuration is refused, the command's own status otherwise,
# --check with several PIDs (a process whose maps the caller may not read
# is said so, not "not mapped"), --version and --help on stdout.
# Env: BUILD_DIR, RTPTHREAD_LIB.  Exit 0 pass, 1 fail.
set -u
build=${BUILD_DIR:?BUILD_DIR not set}
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
wrapper=$build/rtpthread
[ -x "$wrapper" ] || { echo "FAIL: $wrapper not built"; exit 1; }
tmp=$(mktemp -d)
sleepers=
trap 'for p in $sleepers; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0

# run ARGS...: the wrapper's status, stdout and stderr in $rc, $out, $err
# (run as the user the command "as" names, if set).
as=
run() {
	$as "$wrapper" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# expect WHAT STATUS STDOUT-PATTERN STDERR-PATTERN: the last run's
# results (an empty pattern: that stream must be empty).
expect() {
	local what=$1 status=$2 out_pattern=$3 err_pattern=$4 ok=true
	[ "$rc" -eq "$status" ] || ok=false
	if [ -z "$out_pattern" ]; then [ -z "$out" ] || ok=false; else [[ $out =~ $out_pattern ]] || ok=false; fi
	if [ -z "$err_pattern" ]; then [ -z "$err" ] || ok=false; else [[ $err =~ $err_pattern ]] || ok=false; fi
	if $ok; then
		echo "ok: $what"
	else
		echo "FAIL: $what: exit $rc (expected $status); stdout: '$out'; stderr: '$err'"
		fail=1
	fi
}

# The command sees the settings and has the library mapped (grep reads
# its own maps).
show='echo "conf=$RTPTHREAD_CONF"; grep -c librtpthread /proc/self/maps'
for form in "--protocol inherit" "--protocol=inherit" "-p inherit" "-pinherit"; do
	# shellcheck disable=SC2086 # the form is two words or one on purpose
	run $form -- sh -c "$show"
	expect "$form" 0 $'^conf=protocol:inherit\n[1-9]' ''
done
run --ceiling 49 -c 50 --spin 5 -s6 --stats-signal USR1 --only sh,grep --skip make --stats=/tmp/x -- sh -c "$show"
expect "every option with a value, both forms" 0 \
	'^conf=ceiling:49,ceiling:50,spin:5,spin:6,stats_signal:USR1,only_cmds:sh:grep,skip_cmds:make,stats:/tmp/x' ''
run --lib "$lib" -- sh -c "$show"
expect "--lib PATH" 0 $'^conf=\n[1-9]' ''
run -l"$lib" --stats -- sh -c 'echo "conf=$RTPTHREAD_CONF"; exec true'
expect "-lPATH, --stats alone" 0 '^conf=stats:1$' '^rtpthread: contention report'
run -- sh -c 'exit 7'
expect "the command's own status" 7 '' ''
run sh -c 'echo "$0 $1"' a b
expect "the command's arguments, without --" 0 '^a b$' ''

# Usage errors: 2, one message and a pointer to --help on stderr.
run --protocoll inherit -- true
expect "an unknown option" 2 '' "^rtpthread: unknown option '--protocoll'"$'\n'"Try 'rtpthread --help'"
run -x true
expect "an unknown short option" 2 '' "unknown option '-x'"
run --protocol
expect "an option without its value" 2 '' 'option --protocol needs a value'
run --protocol inheritt -- true
expect "a bad protocol" 2 '' "bad protocol 'inheritt' \\(accepted: inherit, protect, report, none\\)"
run --spin 5
expect "no command" 2 '' 'no command given'
run --check
expect "--check without a PID" 2 '' '--check needs at least one PID'
run --check 12x
expect "--check with something else than a PID" 2 '' "'12x' is not a PID"

# A command that cannot be run: env(1)'s statuses and one clear line.
run -- rtpthread-no-such-command
expect "a command not in PATH" 127 '' '^rtpthread: rtpthread-no-such-command: command not found$'
run -- "$tmp/missing"
expect "a missing path" 127 '' "^rtpthread: $tmp/missing: No such file or directory\$"
printf '#!/bin/sh\ntrue\n' >"$tmp/script"
chmod 644 "$tmp/script"
run -- "$tmp/script"
expect "a file that is not executable" 126 '' "^rtpthread: $tmp/script: Permission denied\$"
run -- "$tmp"
expect "a directory" 126 '' "^rtpthread: $tmp: Is a directory\$"
mkdir "$tmp/bin"
cp "$tmp/script" "$tmp/bin/rtpthread-not-executable"
PATH="$tmp/bin:$PATH" run -- rtpthread-not-executable
expect "a command in PATH that is not executable" 126 '' 'rtpthread-not-executable: Permission denied$'

# Refusals of rtpthread itself: 125, with the library's own line.
run --ceiling 0 -- true
expect "a setting the library refuses" 125 '' 'RTPTHREAD_CONF: ceiling: bad value "0".*refusing to run true'
RTPTHREAD_PROTOCOLL=inherit run -- true
expect "an unknown RTPTHREAD_ variable in the environment" 125 '' 'unknown variable "RTPTHREAD_PROTOCOLL".*refusing'
RTPTHREAD_PROTOCOL=inheritt run -- true
expect "a bad value of an RTPTHREAD_ variable in the environment" 125 '' \
	'RTPTHREAD_PROTOCOL: bad value "inheritt".*refusing to run true'
RTPTHREAD_CONF=protocol:inherit,ceiling:100 run -- true
expect "a bad value in RTPTHREAD_CONF in the environment" 125 '' \
	'RTPTHREAD_CONF: ceiling: bad value "100".*refusing to run true'
run --lib /nonexistent/librtpthread.so.1 -- true
expect "a missing library" 125 '' '/nonexistent/librtpthread.so.1 is missing: refusing to run true'

# --version and --help: stdout, status 0.
run --version
expect "--version" 0 '^rtpthread [0-9]+\.[0-9]+\.[0-9]+$' ''
run -V
expect "-V" 0 '^rtpthread [0-9]' ''
run --help
expect "--help" 0 '^Usage: rtpthread' ''
run -h
expect "-h" 0 '^Usage: rtpthread' ''

# --check with several PIDs: each reported; 1 if any has no library.
"$wrapper" --protocol inherit -- sleep 30 &
with=$!
sleep 30 &
without=$!
sleepers="$with $without"
# Wait until the first one runs sleep (the wrapper execs it).
for _ in $(seq 100); do
	grep -q librtpthread "/proc/$with/maps" 2>/dev/null && break
	sleep 0.05
done
run --check "$with"
expect "--check PID with the library" 0 "^$with: librtpthread mapped from /.*"$'\n'"$with: settings: .*RTPTHREAD_CONF=protocol:inherit" ''
run --check "$with" "$without"
expect "--check PID PID, one without the library" 1 \
	"^$with: librtpthread mapped from .*"$'\n'".*"$'\n'"$without: librtpthread is not mapped" ''
run --check="$with" "$with"
expect "--check=PID PID" 0 "^$with: .*"$'\n'".*"$'\n'"$with: librtpthread mapped" ''
run --check 999999999
expect "--check of no process" 1 '' 'no process 999999999'
# A process whose maps the caller may not read (another user's, as an
# unprivileged caller): said so, not "not mapped".
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && $nobody test -r "$wrapper"; then
	as=$nobody run --check "$with"
	expect "--check of a process the caller may not read" 1 '' \
		"^rtpthread: $with: not allowed to read /proc/$with/maps"
else
	echo "skip: --check of a process the caller may not read (needs root, setpriv and a wrapper that user 65534 may read)"
fi

[ "$fail" -eq 0 ] && echo "PASS: the wrapper's command line behaves as its peers'"
exit "$fail"
