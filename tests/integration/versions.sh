#!/bin/bash
# The library exports glibc's own name@version pairs for the names it
# replaces, as the libc.so.6 of its architecture has them: every
# pthread_mutex*, pthread_cond*, pthread_barrier*, pthread_rwlock*,
# __pthread_mutex*, __pthread_rwlock*,
# mtx_*, cnd_*, pthread_setschedparam, pthread_setschedprio and
# pthread_getschedparam pair of
# libc, and pthread_once, __pthread_once and call_once, the default version (@@) where libc's is, and no other pair at a
# GLIBC_ version.  A missing pair leaves the references made to it bound to
# glibc; a wrong version (x86_64's GLIBC_2.2.5 where aarch64 has
# GLIBC_2.17) binds nothing.  One deliberate gap: x86_64's
# pthread_cond_*@GLIBC_2.2.5, the pre-2002 condition ABI (another object
# size).  Apart from glibc's, only RTPTHREAD_1 names are exported, and
# the __cxa_guard_* trio at libstdc++'s CXXABI_1.3 (compared with the
# host's libstdc++.so.6 where there is one).
# Env: RTPTHREAD_LIB; LIBC_SO, the libc.so.6 files to compare with
# (separated by spaces; default: the one the library loads, from ldd).
# `make test-aarch64` runs this for the aarch64 library against the arm64
# libcs.  Exit 0 pass, 1 fail.
set -u
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
[ -e "$lib" ] || { echo "FAIL: $lib missing"; exit 1; }
command -v readelf >/dev/null || { echo "FAIL: readelf (binutils) missing"; exit 1; }
libcs=${LIBC_SO:-$(ldd "$lib" | awk '$1 == "libc.so.6" { print $3 }')}
[ -n "$libcs" ] || { echo "FAIL: no libc.so.6 found for $lib (set LIBC_SO)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

family='^(__pthread_(mutex|rwlock)|pthread_(mutex|cond|barrier|rwlock)|mtx_|cnd_|pthread_(setsched(param|prio)|getschedparam)@|(__)?pthread_once@|call_once@)'

# exports FILE: the defined dynamic symbols, as name@version (name@@version
# for the default one); version definitions (ABS) and local ones left out.
exports() {
	readelf --dyn-syms -W "$1" | awk 'NR > 3 && $5 != "LOCAL" && $7 != "UND" && $7 != "ABS" { print $8 }' | sort -u
}

exports "$lib" >"$tmp/all"
grep '@@\?GLIBC_' "$tmp/all" >"$tmp/ours"
if grep -v '@@\?GLIBC_\|@@\?RTPTHREAD_1$\|^__cxa_guard_[a-z]*@@CXXABI_1\.3$' "$tmp/all" >"$tmp/other"; then
	echo "FAIL: exported at neither a glibc version nor RTPTHREAD_1:"
	sed 's/^/  /' "$tmp/other"
	fail=1
fi

for libc in $libcs; do
	[ -e "$libc" ] || { echo "FAIL: $libc missing"; fail=1; continue; }
	exports "$libc" | grep -E "$family" >"$tmp/libc"
	if [ "$(wc -l <"$tmp/libc")" -lt 100 ]; then
		echo "FAIL: only $(wc -l <"$tmp/libc") pairs of the replaced names in $libc"
		fail=1
	elif cmp -s "$tmp/libc" "$tmp/ours"; then
		echo "ok: the $(wc -l <"$tmp/ours") name@version pairs of $libc's replaced names"
	else
		echo "FAIL: exports differ from $libc's (< libc, > ours):"
		diff "$tmp/libc" "$tmp/ours" | grep '^[<>]' | sed 's/^/  /'
		fail=1
	fi
done

grep '^__cxa_guard_' "$tmp/all" >"$tmp/guards"
if [ "$(wc -l <"$tmp/guards")" -ne 3 ]; then
	echo "FAIL: the __cxa_guard_* exports are not the three at CXXABI_1.3:"
	sed 's/^/  /' "$tmp/guards"
	fail=1
fi
cxx=$(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libstdc++.so.6" && $NF ~ /^\// { print $NF; exit }')
if [ -z "${LIBC_SO:-}" ] && [ -n "$cxx" ] && [ -e "$cxx" ]; then
	if exports "$cxx" | grep '^__cxa_guard_' | cmp -s - "$tmp/guards"; then
		echo "ok: the __cxa_guard_* pairs of $cxx"
	else
		echo "FAIL: __cxa_guard_* exports differ from $cxx's"
		fail=1
	fi
fi

[ "$fail" -eq 0 ] && echo "PASS: $(basename "$lib") exports glibc's versions of every name it replaces"
exit "$fail"
