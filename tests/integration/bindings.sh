#!/bin/bash
# Every pthread_mutex*/pthread_cond*/pthread_barrier*/mtx_*/cnd_* reference
# of a plain glibc program binds to librtpthread under LD_PRELOAD (and
# none to libc.so.6), and dlvsym finds our versioned definitions.
# Env: RTPTHREAD_LIB (absolute path of librtpthread.so.1), HELPERS_DIR.
# Exit 0 pass, 1 fail, 77 skip.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
helper=${HELPERS_DIR:?HELPERS_DIR not set}/bindings
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
[ -e "$lib" ] || { echo "FAIL: $lib missing"; exit 1; }
command -v nm >/dev/null || { echo "SKIP: nm (binutils) not installed"; exit 77; }

pattern='^(pthread_(mutex|cond|barrier)[a-z_]*|mtx_[a-z]+|cnd_[a-z]+)$'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# The references the helper makes, as the linker recorded them.
nm -D --undefined-only "$helper" | awk '{ print $NF }' | sed 's/@.*//' | grep -E "$pattern" | sort -u >"$tmp/wanted"
count=$(wc -l <"$tmp/wanted")
if [ "$count" -lt 50 ]; then
	echo "FAIL: only $count interposable references in $helper"
	fail=1
fi

LD_DEBUG=bindings LD_DEBUG_OUTPUT="$tmp/ld" LD_BIND_NOW=1 LD_PRELOAD="$lib" "$helper" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
if [ "$rc" -ne 0 ]; then
	echo "FAIL: helper exited with $rc under LD_PRELOAD"
	fail=1
fi
cat "$tmp"/ld.* >"$tmp/bindings" 2>/dev/null
[ -s "$tmp/bindings" ] || { echo "FAIL: no LD_DEBUG output"; exit 1; }

# Lines: "binding file FROM [0] to TO [0]: normal symbol `NAME' [VERSION]"
awk -v helper="$helper" '
	/binding file/ {
		from = $0; sub(/.*binding file /, "", from); sub(/ \[.*/, "", from)
		to = $0; sub(/.* to /, "", to); sub(/ \[.*/, "", to)
		name = $0; sub(/.*symbol `/, "", name); sub(/'"'"'.*/, "", name)
		print from "\t" to "\t" name
	}' "$tmp/bindings" >"$tmp/table"

while read -r name; do
	if ! awk -F'\t' -v h="$helper" -v n="$name" '$1 == h && $3 == n && $2 ~ /librtpthread\.so\.1$/ { found = 1 } END { exit !found }' "$tmp/table"; then
		echo "FAIL: $name does not bind to librtpthread: $(awk -F'\t' -v n="$name" '$3 == n { print $1 " -> " $2 }' "$tmp/table" | head -3 | tr '\n' ';')"
		fail=1
	fi
done <"$tmp/wanted"

# No file at all binds any of these names to glibc.
awk -F'\t' -v p="$pattern" '$3 ~ p && $2 ~ /libc\.so\.6$/' "$tmp/table" >"$tmp/to_libc"
if [ -s "$tmp/to_libc" ]; then
	echo "FAIL: bound to libc.so.6:"
	sed 's/^/  /' "$tmp/to_libc"
	fail=1
fi

# dlvsym of the versioned names finds our definitions.
for want in pthread_mutex_trylock@GLIBC_2.2.5 pthread_mutex_trylock@GLIBC_2.34 pthread_cond_wait@GLIBC_2.3.2; do
	line=$(grep "^dlvsym $want " "$tmp/out")
	case $line in
	*librtpthread.so.1) ;;
	*)
		echo "FAIL: dlvsym $want: ${line:-no answer}"
		fail=1
		;;
	esac
done
if grep '^dlvsym ' "$tmp/out" | grep -v 'librtpthread\.so\.1$' >"$tmp/dlv_other"; then
	echo "FAIL: other dlvsym lookups not ours:"
	sed 's/^/  /' "$tmp/dlv_other"
	fail=1
fi

if [ "$fail" -eq 0 ]; then
	echo "PASS: $count references bound to $(basename "$lib"); dlvsym lookups resolve to it"
fi
exit "$fail"
