# Sourced by tests/realworld/*.sh.  Those scripts run real, unmodified
# programs from Debian packages under LD_PRELOAD=$RTPTHREAD_LIB and check
# what they compute, not only their exit status.
#
# Every preloaded run is traced with LD_DEBUG=bindings, so a script can
# show that the library really was in the process and that the program's
# pthread_mutex_*, pthread_cond_* and pthread_barrier_* calls went to it
# (rw_probe before the work, rw_bound after it).
#
# Output conventions (tests/run): a line "SKIP: ..." for a part that could
# not run here, "PASS: ..." at the end; "FAIL: ..." and exit 1 on failure;
# exit 77 (skip) only when a program is not installed, and never under
# CI=true, where scripts/deps has installed it.

lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
case $lib in
/*) ;;
*) lib=$(pwd)/$lib ;;
esac
[ -e "$lib" ] || {
	echo "FAIL: $lib missing"
	exit 1
}

rw_tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtpthread-realworld.XXXXXX")
trap 'rm -rf "$rw_tmp"' EXIT
trap 'exit 143' TERM HUP INT

# The names the library interposes (those bindings.sh checks).
rw_pattern='^(pthread_(mutex|cond|barrier)[a-z_]*|mtx_[a-z]+|cnd_[a-z]+)$'

# rw_words: standard input's lines as one line of words.
rw_words() {
	tr '\n' ' ' | sed 's/ *$//'
}

# rw_fail MESSAGE: report and stop.
rw_fail() {
	echo "FAIL: $*"
	exit 1
}

# rw_need PROGRAM PACKAGE: skip the script (exit 77) if PROGRAM is not on
# PATH, or fail if CI=true.
rw_need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [ "${CI:-}" = true ]; then
		rw_fail "$1 is not installed (Debian package $2; scripts/deps installs it)"
	fi
	echo "SKIP: $1 is not installed (Debian package $2)"
	exit 77
}

# rw_elapsed START: seconds since START (from date +%s.%N), one decimal.
rw_elapsed() {
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

# rw_preload TAG SECONDS CMD...: run CMD under LD_PRELOAD=$lib, killed
# after SECONDS (status 124), its dynamic-linker bindings written to
# $rw_tmp/ld.TAG.<pid> (one file per process, children included).
rw_preload() {
	local tag=$1 secs=$2
	shift 2
	timeout -k 5 "$secs" env LD_PRELOAD="$lib" LD_DEBUG=bindings \
		LD_DEBUG_OUTPUT="$rw_tmp/ld.$tag" "$@"
}

# rw_plain SECONDS CMD...: the same without the library.
rw_plain() {
	local secs=$1
	shift
	timeout -k 5 "$secs" env -u LD_PRELOAD "$@"
}

# rw_table TAG: "from<TAB>to<TAB>symbol" for every interposable symbol in
# the bindings recorded under TAG.
rw_table() {
	cat "$rw_tmp"/ld."$1".* 2>/dev/null | awk -v p="$rw_pattern" '
		/binding file / {
			from = $0; sub(/.*binding file /, "", from); sub(/ \[.*/, "", from)
			to = $0; sub(/.* to /, "", to); sub(/ \[.*/, "", to)
			name = $0; sub(/.*symbol `/, "", name); sub(/'"'"'.*/, "", name)
			if (name ~ p)
				print from "\t" to "\t" name
		}' | sort -u
}

# rw_bound TAG [SYMBOL...]: the processes traced under TAG had the library
# loaded: at least one interposable symbol bound to it, every SYMBOL named
# bound to it (with lazy binding: called), and none bound to libc.
rw_bound() {
	local tag=$1 table ours sym
	shift
	ls "$rw_tmp"/ld."$tag".* >/dev/null 2>&1 || rw_fail "$tag: no LD_DEBUG output: did the program run?"
	table=$(rw_table "$tag")
	ours=$(printf '%s\n' "$table" | awk -F'\t' -v l="$lib" '$2 == l { print $3 }' | sort -u)
	[ -n "$ours" ] || rw_fail "$tag: no pthread mutex/cond/barrier symbol bound to $lib: the library is not in the process"
	for sym in "$@"; do
		printf '%s\n' "$ours" | grep -qx "$sym" ||
			rw_fail "$tag: $sym was not bound to $lib (bound: $(rw_words <<<"$ours"); $sym: $(printf '%s\n' "$table" | awk -F'\t' -v s="$sym" '$3 == s { print $1 " -> " $2 }' | tr '\n' ' ')never called?)"
	done
	local libc
	libc=$(printf '%s\n' "$table" | awk -F'\t' '$2 ~ /\/libc\.so\.6$/ { print $1 " -> " $3 }')
	[ -z "$libc" ] || rw_fail "$tag: bound to libc.so.6 instead: $(rw_words <<<"$libc")"
	echo "preload: $tag: bound to $lib: $(rw_words <<<"$ours")"
	rm -f "$rw_tmp"/ld."$tag".*
}

# rw_probe TAG CMD...: before the real work, a short run of CMD (a
# --version or the like) with LD_BIND_NOW=1, so that every reference of the
# program and of the libraries it links is bound at start-up: all of them
# must bind to the library.  Also fails if the library is not loaded.
rw_probe() {
	local tag=$1
	shift
	LD_BIND_NOW=1 rw_preload "probe-$tag" 30 "$@" >/dev/null 2>&1 || true
	rw_bound "probe-$tag"
}
