#!/bin/bash
# The version has one source, the VERSION file at the top: the Makefile
# reads it into the library (rtpthread_version()), the wrapper, the
# pkg-config file and the installed manual pages.  debian/changelog cannot
# read a file, so it repeats it: its newest entry must be VERSION (the
# package is native: no Debian revision).  And no source file keeps a copy.
# Env: BUILD_DIR, RTPTHREAD_LIB.  Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:?BUILD_DIR not set}
lib=${RTPTHREAD_LIB:?RTPTHREAD_LIB not set}
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -f "$root/VERSION" ] || { echo "FAIL: no VERSION file"; exit 1; }
version=$(cat "$root/VERSION")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || bad "VERSION '$version' is not MAJOR.MINOR.PATCH"

changelog=$(sed -n '1s/^rtpthread (\([^)]*\)).*/\1/p' "$root/debian/changelog")
[ "$changelog" = "$version" ] || bad "debian/changelog's newest entry is '$changelog', VERSION is '$version'"

printf '#include <rtpthread.h>\n#include <stdio.h>\nint main(void) { puts(rtpthread_version()); return 0; }\n' >"$tmp/v.c"
if cc -I"$root/include" -o "$tmp/v" "$tmp/v.c" "$lib" -Wl,-rpath,"$(dirname "$lib")"; then
	[ "$("$tmp/v")" = "$version" ] || bad "rtpthread_version() is '$("$tmp/v")', VERSION is '$version'"
else
	bad "cannot build a program that calls rtpthread_version()"
fi

[ "$("$build/rtpthread" --version)" = "rtpthread $version" ] || bad "the wrapper's --version is not 'rtpthread $version'"

# A literal copy would drift at the next release (NEWS, README.md and the
# Debian files name released versions on purpose).
copies=$(cd "$root" && grep -rlF -- "$version" Makefile src preload include man tools 2>/dev/null)
[ -z "$copies" ] || bad "the version is written out in: $(echo $copies)"

[ "$fail" -eq 0 ] && echo "PASS: VERSION ($version) is the library's, the wrapper's and debian/changelog's"
exit "$fail"
